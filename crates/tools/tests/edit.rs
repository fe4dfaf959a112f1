//! edit_file against real files: exact, replace_all, literal `$`, whitespace-tolerant
//! fallback, helpful failures, and all-or-nothing edit lists.

// Tests may unwrap: a panic is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use atto_tools::ToolError;
use common::Ws;
use serde_json::json;

const SRC: &str = "fn main() {\n    let total = 1;\n    println!(\"{total}\");\n}\n";

#[tokio::test]
async fn exact_edit_reports_a_diff() {
    let ws = Ws::new();
    ws.write("m.rs", SRC);
    let out = ws
        .call(
            "edit_file",
            json!({"path": "m.rs", "old_string": "let total = 1;", "new_string": "let total = 2;"}),
        )
        .await
        .unwrap();
    assert_eq!(ws.read("m.rs"), SRC.replace("= 1", "= 2"));
    assert_eq!(out.changed_paths, vec!["m.rs"]);
    assert!(
        out.content.starts_with("edited m.rs: 1 replacement\n"),
        "{}",
        out.content
    );
    assert!(
        out.content.contains("--- a/m.rs\n+++ b/m.rs\n@@"),
        "{}",
        out.content
    );
    assert!(
        out.content
            .contains("-    let total = 1;\n+    let total = 2;\n"),
        "{}",
        out.content
    );
}

#[tokio::test]
async fn replace_all_and_dollar_sequences_are_literal() {
    let ws = Ws::new();
    ws.write("t.txt", "a x a x a\n");
    let out = ws
        .ok("edit_file", json!({"path": "t.txt", "old_string": "a", "new_string": "$1$&$$", "replace_all": true}))
        .await;
    assert!(out.starts_with("edited t.txt: 3 replacements"), "{out}");
    assert_eq!(ws.read("t.txt"), "$1$&$$ x $1$&$$ x $1$&$$\n");
}

#[tokio::test]
async fn multiple_matches_list_their_lines() {
    let ws = Ws::new();
    ws.write("t.txt", "foo\nbar\nfoo\nbaz\nfoo\n");
    let e = ws
        .err(
            "edit_file",
            json!({"path": "t.txt", "old_string": "foo", "new_string": "qux"}),
        )
        .await;
    assert!(matches!(e, ToolError::EditFailed { .. }), "{e}");
    let msg = e.to_string();
    assert!(msg.contains("matches 3 places (lines 1, 3, 5)"), "{msg}");
    assert!(msg.contains("replace_all"), "{msg}");
    assert!(msg.contains("was not changed"), "{msg}");
    assert_eq!(ws.read("t.txt"), "foo\nbar\nfoo\nbaz\nfoo\n");
}

#[tokio::test]
async fn whitespace_tolerant_fallback_applies_only_when_unique() {
    let ws = Ws::new();
    ws.write("m.rs", SRC);
    // Wrong indentation and spacing, but only one place matches.
    let out = ws
        .ok(
            "edit_file",
            json!({"path": "m.rs", "old_string": "let  total = 1;\nprintln!(\"{total}\");", "new_string": "let total = 3;\nprintln!(\"{total}!\");"}),
        )
        .await;
    assert!(
        out.contains("matched lines 2-3 ignoring whitespace"),
        "{out}"
    );
    assert_eq!(
        ws.read("m.rs"),
        "fn main() {\n    let total = 3;\n    println!(\"{total}!\");\n}\n"
    );

    ws.write("two.rs", "  a = 1\nb\n    a  = 1\n");
    let e = ws
        .err(
            "edit_file",
            json!({"path": "two.rs", "old_string": "a = 1 ", "new_string": "a = 2"}),
        )
        .await;
    let msg = e.to_string();
    assert!(
        msg.contains("ignoring whitespace it matches 2 places (lines 1, 3)"),
        "{msg}"
    );
    assert_eq!(ws.read("two.rs"), "  a = 1\nb\n    a  = 1\n");
}

#[tokio::test]
async fn blank_lines_at_the_edges_of_old_string_are_optional_but_never_ambiguous() {
    let ws = Ws::new();
    // A trailing blank line the file does not have there, given in both strings.
    ws.write("t.rs", "fn a() {\n    x();\n}\n");
    ws.ok(
        "edit_file",
        json!({"path": "t.rs", "old_string": "    x();\n\n", "new_string": "    y();\n\n"}),
    )
    .await;
    assert_eq!(ws.read("t.rs"), "fn a() {\n    y();\n}\n");
    // A leading blank line holding spaces in old_string, none in new_string: blank is
    // blank whatever whitespace it holds.
    ws.write("l.rs", "a\n    foo();\nb\n");
    ws.ok(
        "edit_file",
        json!({"path": "l.rs", "old_string": "    \n    foo();", "new_string": "\n    bar();"}),
    )
    .await;
    assert_eq!(ws.read("l.rs"), "a\n    bar();\nb\n");
    // Without its edge blank lines old_string matches twice: refused, nothing changed.
    let two = "fn a() {\n    x();\n}\nfn b() {\n    x();\n}\n";
    ws.write("two.rs", two);
    let msg = ws
        .err(
            "edit_file",
            json!({"path": "two.rs", "old_string": "\n    x();\n\n", "new_string": "\n    y();\n\n"}),
        )
        .await
        .to_string();
    assert!(msg.contains("matches 2 places (lines 2, 5)"), "{msg}");
    assert_eq!(ws.read("two.rs"), two);
}

#[tokio::test]
async fn not_found_shows_the_nearest_candidate() {
    let ws = Ws::new();
    ws.write("m.rs", SRC);
    let e = ws
        .err("edit_file", json!({"path": "m.rs", "old_string": "let totl = 1;\nprintln!(\"{totl}\");", "new_string": "x"}))
        .await;
    let msg = e.to_string();
    assert!(msg.contains("not found"), "{msg}");
    assert!(msg.contains("closest match is lines 2-3"), "{msg}");
    assert!(msg.contains("     2\t    let total = 1;"), "{msg}");
    assert_eq!(ws.read("m.rs"), SRC);
}

#[tokio::test]
async fn edits_list_is_all_or_nothing() {
    let ws = Ws::new();
    ws.write("m.rs", SRC);
    let e = ws
        .err(
            "edit_file",
            json!({"path": "m.rs", "edits": [
                {"old_string": "fn main()", "new_string": "fn start()"},
                {"old_string": "no such text", "new_string": "y"}
            ]}),
        )
        .await;
    let msg = e.to_string();
    assert!(
        msg.contains("edit 2 of 2 failed, so none were applied"),
        "{msg}"
    );
    assert_eq!(ws.read("m.rs"), SRC);

    // Edits apply in order: the second sees the first's result.
    let out = ws
        .ok(
            "edit_file",
            json!({"path": "m.rs", "edits": [
                {"old_string": "fn main()", "new_string": "fn start()"},
                {"old_string": "fn start() {", "new_string": "pub fn start() {"},
                {"old_string": "total", "new_string": "sum", "replace_all": true}
            ]}),
        )
        .await;
    assert!(out.starts_with("edited m.rs: 4 replacements"), "{out}");
    assert_eq!(
        ws.read("m.rs"),
        "pub fn start() {\n    let sum = 1;\n    println!(\"{sum}\");\n}\n"
    );
}

#[tokio::test]
async fn bad_requests_are_refused_without_touching_the_file() {
    let ws = Ws::new();
    ws.write("m.rs", SRC);
    let cases = [
        (
            json!({"path": "m.rs", "old_string": "", "new_string": "x"}),
            "this file already has 58 bytes of text",
        ),
        (
            json!({"path": "m.rs", "old_string": "main", "new_string": "main"}),
            "identical",
        ),
        (
            json!({"path": "m.rs", "old_string": "main"}),
            "missing field `new_string`",
        ),
        (json!({"path": "m.rs"}), "missing field `old_string`"),
        (
            json!({"path": "m.rs", "old_string": "a", "new_string": "b", "edits": [{"old_string": "c", "new_string": "d"}]}),
            "not both",
        ),
        (
            json!({"path": "m.rs", "edits": [{"old_string": "c"}]}),
            "field `edits[0]`: missing field `new_string`",
        ),
    ];
    for (args, needle) in cases {
        let e = ws.err("edit_file", args.clone()).await;
        assert!(e.to_string().contains(needle), "{args}: {e}");
    }
    assert_eq!(ws.read("m.rs"), SRC);
    let e = ws
        .err(
            "edit_file",
            json!({"path": "nope.rs", "old_string": "a", "new_string": "b"}),
        )
        .await;
    assert!(matches!(e, ToolError::NotFound { .. }), "{e}");
}

#[tokio::test]
async fn crlf_files_stay_crlf() {
    let ws = Ws::new();
    ws.write("w.txt", "one\r\ntwo\r\nthree\r\n");
    ws.ok(
        "edit_file",
        json!({"path": "w.txt", "old_string": "one\ntwo\n", "new_string": "1\n2\n"}),
    )
    .await;
    assert_eq!(ws.read("w.txt"), "1\r\n2\r\nthree\r\n");
}

#[tokio::test]
async fn empty_old_string_creates_or_fills_a_file() {
    let ws = Ws::new();
    let out = ws
        .call(
            "edit_file",
            json!({"path": "new/dir/a.rs", "old_string": "", "new_string": "fn a() {}\n"}),
        )
        .await
        .unwrap();
    assert_eq!(ws.read("new/dir/a.rs"), "fn a() {}\n");
    assert_eq!(out.changed_paths, vec!["new/dir/a.rs"]);
    assert!(
        out.content
            .starts_with("created new/dir/a.rs (10 bytes, 1 lines)"),
        "{}",
        out.content
    );

    // An empty existing file is filled; later edits in the list see the new text.
    ws.write("empty.txt", "");
    let out = ws
        .ok(
            "edit_file",
            json!({"path": "empty.txt", "edits": [
                {"old_string": "", "new_string": "one\ntwo\n"},
                {"old_string": "two", "new_string": "2"}
            ]}),
        )
        .await;
    assert!(out.starts_with("edited empty.txt: 2 replacements"), "{out}");
    assert_eq!(ws.read("empty.txt"), "one\n2\n");

    // A file with text is not overwritten by an empty old_string.
    let e = ws
        .err(
            "edit_file",
            json!({"path": "empty.txt", "old_string": "", "new_string": "x"}),
        )
        .await;
    assert!(matches!(e, ToolError::EditFailed { .. }), "{e}");
    let msg = e.to_string();
    assert!(msg.contains("old_string is empty"), "{msg}");
    assert!(msg.contains("already has 6 bytes of text"), "{msg}");
    assert_eq!(ws.read("empty.txt"), "one\n2\n");
    assert!(e.self_correct("edit_file").is_none());

    // An edit that finds text still needs the file to exist.
    let e = ws
        .err(
            "edit_file",
            json!({"path": "nope.rs", "edits": [
                {"old_string": "a", "new_string": "b"},
                {"old_string": "", "new_string": "c"}
            ]}),
        )
        .await;
    assert!(matches!(e, ToolError::NotFound { .. }), "{e}");
    assert!(!ws.path("nope.rs").exists());
}

#[tokio::test]
async fn crlf_in_new_string_is_written_as_given() {
    let ws = Ws::new();
    // Into a CRLF file, with old_string written with bare LF.
    ws.write("w.txt", "one\r\ntwo\r\n");
    ws.ok(
        "edit_file",
        json!({"path": "w.txt", "old_string": "one\n", "new_string": "1\r\n1b\n"}),
    )
    .await;
    assert_eq!(ws.read("w.txt"), "1\r\n1b\r\ntwo\r\n");
    // Into an LF file, and into a new one.
    ws.write("l.txt", "one\ntwo\n");
    ws.ok(
        "edit_file",
        json!({"path": "l.txt", "old_string": "one", "new_string": "1\r\n1b"}),
    )
    .await;
    assert_eq!(ws.read("l.txt"), "1\r\n1b\ntwo\n");
    ws.ok(
        "edit_file",
        json!({"path": "c.txt", "old_string": "", "new_string": "a\r\nb\r\n"}),
    )
    .await;
    assert_eq!(ws.read("c.txt"), "a\r\nb\r\n");
}
