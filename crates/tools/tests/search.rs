//! list_files, glob and grep: gitignore (with and without a git repo), hidden files,
//! `.git/` exclusion, caps, and bad patterns.

// Tests may unwrap: a panic is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use atto_tools::ToolError;
use common::Ws;
use serde_json::json;

/// A tree with ignored, hidden and `.git` content. `git` makes it a real repository.
fn tree(git: bool) -> Ws {
    let ws = Ws::new();
    if git {
        let status = std::process::Command::new("git")
            .args(["init", "-q"])
            .current_dir(ws.root())
            .status()
            .unwrap();
        assert!(status.success());
    } else {
        assert!(!ws.path(".git").exists());
    }
    ws.write(".gitignore", "ignored/\n*.log\n");
    ws.write("src/main.rs", "fn main() {\n    println!(\"Hello\");\n}\n");
    ws.write("src/lib.rs", "pub fn hello() {}\n");
    ws.write("src/deep/er/x.rs", "fn hello_deep() {}\n");
    ws.write("ignored/secret.rs", "fn main() {}\n");
    ws.write("debug.log", "fn main() log\n");
    ws.write(".hidden/h.rs", "fn hidden() {}\n");
    ws.write("blob.bin", b"fn main\0binary");
    ws
}

#[tokio::test]
async fn list_respects_gitignore_without_git_and_stops_at_two_levels() {
    for git in [false, true] {
        let ws = tree(git);
        if !git {
            // Without a repository there is no .git to hide; make one by hand to
            // check it is never listed either way.
            ws.write(".git/config", "[core]\n");
        }
        let out = ws.ok("list_files", json!({})).await;
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(
            lines,
            vec![
                ".gitignore",
                ".hidden/",
                ".hidden/h.rs",
                "blob.bin",
                "src/",
                "src/deep/",
                "src/lib.rs",
                "src/main.rs",
            ],
            "git={git}"
        );
        let sub = ws.ok("list_files", json!({"path": "src/deep"})).await;
        assert_eq!(sub, "src/deep/er/\nsrc/deep/er/x.rs");
    }
}

#[tokio::test]
async fn list_errors_and_cap() {
    let ws = Ws::new();
    ws.write("f.txt", "x");
    let e = ws.err("list_files", json!({"path": "f.txt"})).await;
    assert!(matches!(e, ToolError::NotADirectory { .. }), "{e}");
    let e = ws.err("list_files", json!({"path": "nope"})).await;
    assert!(matches!(e, ToolError::NotFound { .. }), "{e}");
    for i in 0..600 {
        ws.write(&format!("many/f{i:03}"), "");
    }
    let out = ws.ok("list_files", json!({"path": "many"})).await;
    assert_eq!(out.lines().filter(|l| l.starts_with("many/")).count(), 500);
    assert!(
        out.ends_with("(stopped after 500 entries; list a subdirectory or use glob to see more)"),
        "{out}"
    );
}

#[tokio::test]
async fn glob_matches_names_anywhere_or_paths_sorted() {
    let ws = tree(false);
    let out = ws.ok("glob", json!({"pattern": "*.rs"})).await;
    assert_eq!(
        out,
        ".hidden/h.rs\nsrc/deep/er/x.rs\nsrc/lib.rs\nsrc/main.rs"
    );
    let out = ws.ok("glob", json!({"pattern": "src/*.rs"})).await;
    assert_eq!(out, "src/lib.rs\nsrc/main.rs");
    let out = ws.ok("glob", json!({"pattern": "**/er/*.rs"})).await;
    assert_eq!(out, "src/deep/er/x.rs");
    let out = ws
        .ok("glob", json!({"pattern": "*.rs", "path": "src/deep"}))
        .await;
    assert_eq!(out, "src/deep/er/x.rs");
    let out = ws.ok("glob", json!({"pattern": "*.log"})).await;
    assert!(out.starts_with("no files match"), "{out}");
    let e = ws.err("glob", json!({"pattern": "a[b"})).await;
    assert!(matches!(e, ToolError::InvalidArguments(_)), "{e}");
}

#[tokio::test]
async fn glob_caps_results() {
    let ws = Ws::new();
    for i in 0..520 {
        ws.write(&format!("d/f{i:03}.txt"), "");
    }
    let out = ws.ok("glob", json!({"pattern": "*.txt"})).await;
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 501);
    assert_eq!(lines[0], "d/f000.txt");
    assert_eq!(lines[499], "d/f499.txt");
    assert!(
        lines[500].contains("520 files match; showing the first 500"),
        "{out}"
    );
}

#[tokio::test]
async fn grep_respects_ignores_and_skips_binary() {
    for git in [false, true] {
        let ws = tree(git);
        let out = ws.ok("grep", json!({"pattern": "fn main"})).await;
        assert_eq!(out, "src/main.rs:1:fn main() {", "git={git}");
    }
    let ws = tree(false);
    let out = ws
        .ok(
            "grep",
            json!({"pattern": "HELLO", "case_insensitive": true}),
        )
        .await;
    assert_eq!(
        out,
        "src/deep/er/x.rs:1:fn hello_deep() {}\nsrc/lib.rs:1:pub fn hello() {}\nsrc/main.rs:2:    println!(\"Hello\");"
    );
    assert!(
        ws.ok("grep", json!({"pattern": "HELLO"}))
            .await
            .starts_with("no matches")
    );
    let out = ws
        .ok("grep", json!({"pattern": "hello", "glob": "lib.rs"}))
        .await;
    assert_eq!(out, "src/lib.rs:1:pub fn hello() {}");
    let out = ws
        .ok("grep", json!({"pattern": "fn", "path": "src/lib.rs"}))
        .await;
    assert_eq!(out, "src/lib.rs:1:pub fn hello() {}");
}

#[tokio::test]
async fn grep_invalid_regex_and_caps() {
    let ws = Ws::new();
    let e = ws.err("grep", json!({"pattern": "fn ("})).await;
    assert!(matches!(e, ToolError::InvalidArguments(_)), "{e}");
    assert!(e.to_string().contains("invalid regex"), "{e}");

    ws.write("many.txt", "match me\n".repeat(300));
    ws.write("long.txt", format!("needle {}\n", "y".repeat(1000)));
    let out = ws.ok("grep", json!({"pattern": "match"})).await;
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 201);
    assert_eq!(lines[199], "many.txt:200:match me");
    assert!(lines[200].contains("stopped after 200 matches"), "{out}");
    let out = ws.ok("grep", json!({"pattern": "needle"})).await;
    assert!(
        out.contains("[... line truncated, 1007 chars in all]"),
        "{out}"
    );
    assert!(out.len() < 400);
}

#[tokio::test]
async fn a_glob_with_leading_directories_walks_only_them_and_keeps_the_ignore_rules() {
    let ws = tree(true);
    // Only directories on the pattern's literal path are entered; what matches is what a
    // full walk finds.
    ws.write("other/deep/x.rs", "fn other() {}\n");
    let out = ws.ok("glob", json!({"pattern": "src/deep/**/*.rs"})).await;
    assert_eq!(out, "src/deep/er/x.rs");
    let out = ws.ok("glob", json!({"pattern": "src/*.rs"})).await;
    assert_eq!(out, "src/lib.rs\nsrc/main.rs");
    // Inside an ignored directory nothing matches, as in a full walk.
    let out = ws.ok("glob", json!({"pattern": "ignored/*.rs"})).await;
    assert!(out.starts_with("no files match"), "{out}");
    let out = ws
        .ok("grep", json!({"pattern": "fn", "glob": "src/deep/**/*.rs"}))
        .await;
    assert_eq!(out, "src/deep/er/x.rs:1:fn hello_deep() {}");
}

/// Sets the modification time of `path` (a file or a directory), as if written at `when`.
fn set_mtime(path: &std::path::Path, when: std::time::SystemTime) {
    let file = if path.is_dir() {
        std::fs::File::open(path).unwrap()
    } else {
        std::fs::File::options().write(true).open(path).unwrap()
    };
    file.set_modified(when).unwrap();
}

/// Every file and directory under `dir` (itself included) as if last changed an hour ago:
/// a checkout made some time before.
fn age(dir: &std::path::Path, when: std::time::SystemTime) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            age(&path, when);
        } else if !path.is_symlink() {
            set_mtime(&path, when);
        }
    }
    set_mtime(dir, when);
}

#[tokio::test]
async fn a_whole_walk_is_kept_until_a_directory_or_an_ignore_file_under_it_changes() {
    let ws = tree(true);
    std::os::unix::fs::symlink("lib.rs", ws.path("src/link.rs")).unwrap();
    let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    age(ws.root(), hour_ago);
    let glob = || ws.ok("glob", json!({"pattern": "**/*.rs"}));
    let first = glob().await;
    assert_eq!(
        first.lines().collect::<Vec<_>>(),
        [
            ".hidden/h.rs",
            "src/deep/er/x.rs",
            "src/lib.rs",
            "src/link.rs",
            "src/main.rs"
        ]
    );

    // A file slipped in without its directory's time changing is not seen: the second
    // glob was served from the kept listing, not from a walk.
    ws.write("src/deep/er/unseen.rs", "fn unseen() {}\n");
    set_mtime(&ws.path("src/deep/er"), hour_ago);
    assert_eq!(glob().await, first);
    // grep is served by the same listing (and reads the files it lists).
    let grep = ws.ok("grep", json!({"pattern": "fn unseen"})).await;
    assert!(grep.starts_with("no matches"), "{grep}");

    // A link is resolved again at each use: its target went, so it is no longer a file.
    std::fs::remove_file(ws.path("src/lib.rs")).unwrap();
    set_mtime(&ws.path("src"), hour_ago);
    let without_target = glob().await;
    assert!(!without_target.contains("src/link.rs"), "{without_target}");

    // A directory that changed as usual: walked again, everything seen.
    ws.write("src/new.rs", "fn new() {}\n");
    let walked = glob().await;
    assert!(
        walked.contains("src/new.rs") && walked.contains("src/deep/er/unseen.rs"),
        "{walked}"
    );

    // An ignore file edited in place (its directory unchanged) counts too.
    age(ws.root(), hour_ago);
    assert!(glob().await.contains(".hidden/h.rs"));
    ws.write(".gitignore", "ignored/\n*.log\n.hidden/\n");
    set_mtime(ws.root(), hour_ago);
    let ignored = glob().await;
    assert!(!ignored.contains(".hidden/h.rs"), "{ignored}");
}
