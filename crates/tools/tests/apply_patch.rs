//! apply_patch against real files: every operation of the envelope, Codex's context
//! matching, ambiguity, the workspace boundary, and all-or-nothing failures.

// Tests may unwrap: a panic is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use atto_protocol::DangerLevel;
use atto_tools::{
    ApplyPatchTool, BuiltinOptions, Tool, ToolError, ToolOutput, ToolRegistry, patch_paths,
};
use common::Ws;
use serde_json::json;

fn patch(body: &str) -> String {
    format!("*** Begin Patch\n{body}\n*** End Patch\n")
}

async fn apply(ws: &Ws, body: &str) -> Result<ToolOutput, ToolError> {
    ApplyPatchTool
        .run(json!({ "input": patch(body) }), &ws.ctx)
        .await
}

async fn refused(ws: &Ws, body: &str) -> String {
    match apply(ws, body).await {
        Ok(out) => panic!("the patch applied: {}", out.content),
        Err(e) => e.to_string(),
    }
}

#[tokio::test]
async fn adds_deletes_updates_and_moves_in_one_patch() {
    let ws = Ws::new();
    ws.write("gone.txt", "bye\n");
    ws.write(
        "src/lib.rs",
        "fn a() {\n    1\n}\n\nfn b() {\n    2\n}\n\nfn c() {\n    3\n}\n",
    );
    ws.write("old/name.txt", "keep me\n");
    let out = apply(
        &ws,
        "*** Add File: docs/new.md\n+# New\n+\n+text\n\
         *** Delete File: gone.txt\n\
         *** Update File: src/lib.rs\n\
         @@ fn a() {\n-    1\n+    10\n\
         @@ fn c() {\n-    3\n+    30\n+    // end\n\
         *** Update File: old/name.txt\n*** Move to: renamed/dir/name.txt\n@@\n-keep me\n+kept",
    )
    .await
    .unwrap();
    assert_eq!(ws.read("docs/new.md"), "# New\n\ntext\n");
    assert!(!ws.path("gone.txt").exists());
    assert_eq!(
        ws.read("src/lib.rs"),
        "fn a() {\n    10\n}\n\nfn b() {\n    2\n}\n\nfn c() {\n    30\n    // end\n}\n"
    );
    assert!(!ws.path("old/name.txt").exists());
    assert_eq!(ws.read("renamed/dir/name.txt"), "kept\n");
    assert_eq!(
        out.content,
        "Success. Updated the following files:\nA docs/new.md\nD gone.txt\nM src/lib.rs\n\
         R old/name.txt -> renamed/dir/name.txt"
    );
    assert_eq!(
        out.changed_paths,
        vec![
            "docs/new.md",
            "gone.txt",
            "src/lib.rs",
            "old/name.txt",
            "renamed/dir/name.txt"
        ]
    );
    assert_eq!(out.exit_code, None);
}

#[tokio::test]
async fn every_line_keeps_its_own_ending_and_added_lines_take_their_neighbours() {
    let ws = Ws::new();
    // A file whose lines end both ways (as a file edited on two systems does).
    ws.write("mixed.txt", "a\r\nb\nc\r\nd\ne\r\n");
    apply(
        &ws,
        "*** Update File: mixed.txt\n@@\n-b\n+B\n c\n+X\n@@ d\n+after d",
    )
    .await
    .unwrap();
    assert_eq!(ws.read("mixed.txt"), "a\r\nB\nc\r\nX\r\nd\nafter d\ne\r\n");
    // A file with only LF lines stays LF; one with only CRLF lines stays CRLF.
    ws.write("lf.txt", "a\nb\n");
    ws.write("crlf.txt", "a\r\nb\r\n");
    apply(
        &ws,
        "*** Update File: lf.txt\n@@\n a\n+x\n*** Update File: crlf.txt\n@@\n a\n+x",
    )
    .await
    .unwrap();
    assert_eq!(ws.read("lf.txt"), "a\nx\nb\n");
    assert_eq!(ws.read("crlf.txt"), "a\r\nx\r\nb\r\n");
}

#[tokio::test]
async fn context_matching_follows_codex() {
    let ws = Ws::new();
    // Chunks without `@@` lines, trailing whitespace in the file, and looser indentation.
    ws.write("a.py", "import os  \nimport sys\n\ndef f():\n\treturn 1\n");
    apply(
        &ws,
        "*** Update File: a.py\n import os\n+import re\n@@\n def f():\n-    return 1\n+    return 2",
    )
    .await
    .unwrap();
    // As in Codex, the chunk's context lines are written as the patch gives them.
    assert_eq!(
        ws.read("a.py"),
        "import os\nimport re\nimport sys\n\ndef f():\n    return 2\n"
    );

    // `*** End of File` pins the chunk to the end, though the lines also occur earlier.
    ws.write("t.txt", "x\nend\nmiddle\nx\nend\n");
    apply(
        &ws,
        "*** Update File: t.txt\n@@\n x\n-end\n+END\n*** End of File",
    )
    .await
    .unwrap();
    assert_eq!(ws.read("t.txt"), "x\nend\nmiddle\nx\nEND\n");
    let e = refused(&ws, "*** Update File: t.txt\n@@\n-middle\n*** End of File").await;
    assert!(
        e.contains("these lines were not found at the end of the file"),
        "{e}"
    );

    // CRLF files stay CRLF.
    ws.write("w.txt", "one\r\ntwo\r\n");
    apply(&ws, "*** Update File: w.txt\n@@\n-two\n+2\n+3")
        .await
        .unwrap();
    assert_eq!(ws.read("w.txt"), "one\r\n2\r\n3\r\n");
}

#[tokio::test]
async fn a_chunk_matching_twice_needs_an_at_at_line() {
    let ws = Ws::new();
    let text = "fn a() {\n    x += 1;\n}\nfn b() {\n    x += 1;\n}\n";
    ws.write("m.rs", text);
    let e = apply(&ws, "*** Update File: m.rs\n@@\n-    x += 1;\n+    x += 2;")
        .await
        .unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.starts_with("apply_patch: nothing was changed: m.rs: "),
        "{msg}"
    );
    assert!(
        msg.contains("the chunk matches 2 places (lines 2, 5)"),
        "{msg}"
    );
    assert!(msg.contains("Add an `@@` line"), "{msg}");
    assert_eq!(ws.read("m.rs"), text);
    // A stale view of the file earns a hint to read it again.
    let hint = e.self_correct("apply_patch").unwrap();
    assert_eq!(hint.fallback_tools, ["read_file", "apply_patch"]);

    apply(
        &ws,
        "*** Update File: m.rs\n@@ fn b() {\n-    x += 1;\n+    x += 2;",
    )
    .await
    .unwrap();
    assert_eq!(
        ws.read("m.rs"),
        "fn a() {\n    x += 1;\n}\nfn b() {\n    x += 2;\n}\n"
    );
}

#[tokio::test]
async fn mismatches_name_the_file_and_chunk_and_change_nothing() {
    let ws = Ws::new();
    ws.write("a.txt", "one\ntwo\n");
    ws.write("b.txt", "alpha\nbeta\n");
    let cases = [
        (
            "*** Update File: b.txt\n@@ fn missing()\n-alpha\n+ALPHA",
            "b.txt: the `@@ fn missing()` line of the chunk was not found",
        ),
        (
            "*** Update File: b.txt\n@@\n-alpha\n+ALPHA\n@@\n-gamma\n+GAMMA",
            "b.txt: chunk 2 of 2 does not match the file: these lines were not found after line 1",
        ),
        (
            "*** Update File: nope.txt\n@@\n-x\n+y",
            "cannot update nope.txt: it does not exist",
        ),
        (
            "*** Delete File: nope.txt",
            "cannot delete nope.txt: it does not exist",
        ),
    ];
    for (body, want) in cases {
        // The first file's change is computed but must not be written.
        let body = format!("*** Update File: a.txt\n@@\n-one\n+ONE\n{body}");
        let e = refused(&ws, &body).await;
        assert!(e.starts_with("apply_patch: nothing was changed: "), "{e}");
        assert!(e.contains(want), "{body}: {e}");
        assert_eq!(ws.read("a.txt"), "one\ntwo\n");
        assert_eq!(ws.read("b.txt"), "alpha\nbeta\n");
    }
}

#[tokio::test]
async fn a_patch_that_fails_half_way_leaves_nothing_changed() {
    let ws = Ws::new();
    ws.write("a.txt", "one\n");
    ws.write("sub", "a file where a directory would be needed\n");
    let e = refused(
        &ws,
        "*** Update File: a.txt\n@@\n-one\n+ONE\n*** Add File: new/x.txt\n+x\n*** Add File: sub/y.txt\n+y",
    )
    .await;
    assert!(e.contains("sub/y.txt"), "{e}");
    assert_eq!(ws.read("a.txt"), "one\n");
    assert!(!ws.path("new").exists());

    // A write the OS refuses after two files were written: those two are put back.
    let mut ws = ws;
    ws.ctx.trust = true;
    ws.write("gone.txt", "still here\n");
    let e = refused(
        &ws,
        "*** Update File: a.txt\n@@\n-one\n+ONE\n*** Add File: new/x.txt\n+x\n\
         *** Delete File: gone.txt\n*** Add File: /proc/atto-no-such-dir/y.txt\n+y",
    )
    .await;
    assert!(
        e.contains("writing /proc/atto-no-such-dir/y.txt failed"),
        "{e}"
    );
    assert!(e.contains("the files already written were restored"), "{e}");
    assert_eq!(ws.read("a.txt"), "one\n");
    assert_eq!(ws.read("gone.txt"), "still here\n");
    assert!(!ws.path("new").exists());
}

#[tokio::test]
async fn malformed_envelopes_are_refused() {
    let ws = Ws::new();
    ws.write("a.txt", "one\n");
    let cases = [
        (
            "*** Update File: a.txt\n@@\n-one\n+two\n",
            "the first line must be `*** Begin Patch`",
        ),
        (
            "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+two\n",
            "the last line must be `*** End Patch`",
        ),
        (
            "*** Begin Patch\n*** Update File: a.txt\n@@\n?one\n*** End Patch",
            "line 4: `?one` starts with neither",
        ),
        ("*** Begin Patch\n*** End Patch", "no file operations"),
    ];
    for (input, want) in cases {
        let e = ApplyPatchTool
            .run(json!({ "input": input }), &ws.ctx)
            .await
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("apply_patch: nothing was changed: the patch is malformed: "),
            "{e}"
        );
        assert!(e.contains(want), "{input:?}: {e}");
    }
    let e = ApplyPatchTool
        .run(json!({"patch": "x"}), &ws.ctx)
        .await
        .unwrap_err();
    assert!(matches!(e, ToolError::InvalidArguments(_)), "{e}");
    assert_eq!(ws.read("a.txt"), "one\n");
}

#[tokio::test]
async fn paths_stay_inside_the_workspace_unless_trusted() {
    let mut ws = Ws::new();
    let outside = tempfile::tempdir().unwrap();
    let out_file = outside.path().canonicalize().unwrap().join("o.txt");
    std::fs::write(&out_file, "outside\n").unwrap();
    std::os::unix::fs::symlink(outside.path(), ws.path("link")).unwrap();
    ws.write("a.txt", "one\n");
    let bodies = [
        "*** Add File: ../escape.txt\n+x".to_string(),
        format!(
            "*** Update File: {}\n@@\n-outside\n+changed",
            out_file.display()
        ),
        "*** Update File: link/o.txt\n@@\n-outside\n+changed".to_string(),
        "*** Update File: a.txt\n*** Move to: ../moved.txt\n@@\n-one\n+two".to_string(),
        "*** Delete File: link/o.txt".to_string(),
    ];
    for body in &bodies {
        let e = apply(&ws, &format!("*** Add File: fine.txt\n+ok\n{body}"))
            .await
            .unwrap_err();
        assert!(
            matches!(e, ToolError::OutsideWorkspace { .. }),
            "{body}: {e}"
        );
    }
    assert_eq!(std::fs::read_to_string(&out_file).unwrap(), "outside\n");
    assert_eq!(ws.read("a.txt"), "one\n");
    assert!(!ws.path("fine.txt").exists());

    ws.ctx.trust = true;
    apply(&ws, "*** Update File: link/o.txt\n@@\n-outside\n+changed")
        .await
        .unwrap();
    assert_eq!(std::fs::read_to_string(&out_file).unwrap(), "changed\n");
}

#[tokio::test]
async fn offered_only_when_asked_for() {
    assert!(ToolRegistry::builtin().get("apply_patch").is_none());
    let reg = ToolRegistry::builtin_with(&BuiltinOptions {
        apply_patch: true,
        ..BuiltinOptions::default()
    });
    assert_eq!(
        reg.names(),
        vec![
            "read_file",
            "list_files",
            "glob",
            "grep",
            "codebase_overview",
            "write_file",
            "edit_file",
            "apply_patch",
            "delete_file",
            "bash"
        ]
    );
    let tool = reg.get("apply_patch").unwrap();
    assert_eq!(tool.danger(), DangerLevel::Low);
    assert!(tool.mutates(&json!({})));
    let spec = reg
        .specs()
        .into_iter()
        .find(|s| s.name == "apply_patch")
        .unwrap();
    assert_eq!(spec.parameters["required"], json!(["input"]));

    // Plan mode learns the paths without applying anything.
    assert_eq!(
        patch_paths(&patch(
            "*** Update File: a\n*** Move to: b\n@@\n-x\n+y\n*** Add File: c\n+z"
        ))
        .unwrap(),
        vec!["a", "b", "c"]
    );
}
