//! read_file, write_file and delete_file against a real temp workspace.

// Tests may unwrap: a panic is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::os::unix::fs::{MetadataExt, PermissionsExt};

use atto_tools::ToolError;
use common::Ws;
use serde_json::json;

#[tokio::test]
async fn read_numbers_lines_and_pages() {
    let ws = Ws::new();
    ws.write("a.txt", "l1\nl2\nl3\nl4\nl5\n");
    let all = ws.ok("read_file", json!({"path": "a.txt"})).await;
    assert_eq!(
        all,
        "     1\tl1\n     2\tl2\n     3\tl3\n     4\tl4\n     5\tl5\n"
    );

    let part = ws
        .ok(
            "read_file",
            json!({"path": "a.txt", "offset": 2, "limit": 2}),
        )
        .await;
    assert_eq!(
        part,
        "     2\tl2\n     3\tl3\n\n(2 more lines; use offset=4 to continue)\n"
    );
    // The last line without a newline still counts.
    ws.write("b.txt", "x\ny\nz");
    let part = ws
        .ok("read_file", json!({"path": "b.txt", "limit": "1"}))
        .await;
    assert!(
        part.ends_with("(2 more lines; use offset=2 to continue)\n"),
        "{part}"
    );
    let tail = ws
        .ok("read_file", json!({"path": "b.txt", "offset": 3}))
        .await;
    assert_eq!(tail, "     3\tz\n");

    let e = ws
        .err("read_file", json!({"path": "a.txt", "offset": 9}))
        .await;
    assert!(matches!(e, ToolError::InvalidArguments(_)), "{e}");
    assert!(e.to_string().contains("has 5 lines"), "{e}");
    let e = ws
        .err("read_file", json!({"path": "a.txt", "limit": 0}))
        .await;
    assert!(matches!(e, ToolError::InvalidArguments(_)), "{e}");

    ws.write("empty.txt", "");
    assert!(
        ws.ok("read_file", json!({"path": "empty.txt"}))
            .await
            .contains("empty")
    );
}

#[tokio::test]
async fn read_truncates_long_lines() {
    let ws = Ws::new();
    ws.write("long.txt", format!("{}\nshort\n", "x".repeat(5000)));
    let out = ws.ok("read_file", json!({"path": "long.txt"})).await;
    let first = out.lines().next().unwrap();
    assert!(
        first.contains("[... line truncated, 5000 chars in all]"),
        "{first}"
    );
    assert!(first.len() < 2100);
    assert!(out.contains("     2\tshort"));
}

#[tokio::test]
async fn read_refuses_binary_and_huge_files() {
    let ws = Ws::new();
    ws.write("bin.dat", b"abc\0def");
    let e = ws.err("read_file", json!({"path": "bin.dat"})).await;
    assert!(matches!(e, ToolError::Binary { size: 7, .. }), "{e}");
    assert!(
        e.to_string().contains("binary") && e.to_string().contains("7 bytes"),
        "{e}"
    );

    let line = "0123456789012345678901234567890123456789\n";
    ws.write("big.txt", line.repeat(11 * 1024 * 1024 / line.len()));
    let e = ws.err("read_file", json!({"path": "big.txt"})).await;
    assert!(matches!(e, ToolError::TooLarge { .. }), "{e}");
    assert!(e.to_string().contains("offset and limit"), "{e}");
    let part = ws
        .ok(
            "read_file",
            json!({"path": "big.txt", "offset": 10, "limit": 2}),
        )
        .await;
    assert!(part.starts_with("    10\t0123"), "{part}");
    assert!(
        part.contains("more lines; use offset=12 to continue"),
        "{part}"
    );
}

#[tokio::test]
async fn read_not_found_suggests_and_directory_points_to_list_files() {
    let ws = Ws::new();
    ws.write("src/main.rs", "fn main() {}\n");
    let e = ws.err("read_file", json!({"path": "src/mian.rs"})).await;
    match &e {
        ToolError::NotFound { path, suggestions } => {
            assert_eq!(path, "src/mian.rs");
            assert_eq!(suggestions, &vec!["src/main.rs".to_string()]);
        }
        other => panic!("unexpected {other}"),
    }
    assert!(e.to_string().contains("did you mean src/main.rs?"), "{e}");
    // A missing directory is suggested at its own level.
    let e = ws.err("read_file", json!({"path": "scr/main.rs"})).await;
    assert!(e.to_string().contains("did you mean src?"), "{e}");

    let e = ws.err("read_file", json!({"path": "src"})).await;
    assert!(matches!(e, ToolError::IsDirectory { .. }), "{e}");
    assert!(e.to_string().contains("list_files"), "{e}");
}

#[tokio::test]
async fn write_creates_dirs_then_overwrites_atomically_keeping_mode() {
    let ws = Ws::new();
    let out = ws
        .call(
            "write_file",
            json!({"path": "deep/er/new.txt", "content": "hello\n"}),
        )
        .await
        .unwrap();
    assert!(
        out.content.starts_with("created deep/er/new.txt (6 bytes"),
        "{}",
        out.content
    );
    assert_eq!(out.changed_paths, vec!["deep/er/new.txt"]);
    assert_eq!(ws.read("deep/er/new.txt"), "hello\n");

    let p = ws.path("deep/er/new.txt");
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o751)).unwrap();
    // A hard link keeps the old inode: an atomic replace leaves it untouched, an
    // in-place rewrite would change it.
    let link = ws.path("deep/old-inode");
    std::fs::hard_link(&p, &link).unwrap();
    let before = std::fs::metadata(&p).unwrap().ino();

    let out = ws
        .ok(
            "write_file",
            json!({"path": "deep/er/new.txt", "content": "bye"}),
        )
        .await;
    assert!(
        out.starts_with("overwrote deep/er/new.txt (3 bytes"),
        "{out}"
    );
    assert!(out.contains("was 6 bytes"), "{out}");
    assert_eq!(ws.read("deep/er/new.txt"), "bye");
    assert_eq!(std::fs::read_to_string(&link).unwrap(), "hello\n");
    let meta = std::fs::metadata(&p).unwrap();
    assert_ne!(meta.ino(), before);
    assert_eq!(meta.permissions().mode() & 0o777, 0o751);
    // No temp files left behind.
    let names: Vec<_> = std::fs::read_dir(ws.path("deep/er"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec!["new.txt"]);

    let e = ws
        .err("write_file", json!({"path": "deep", "content": "x"}))
        .await;
    assert!(matches!(e, ToolError::IsDirectory { .. }), "{e}");
    let e = ws.err("write_file", json!({"path": "x.txt"})).await;
    assert!(e.to_string().contains("missing field `content`"), "{e}");
}

#[tokio::test]
async fn delete_removes_files_only() {
    let ws = Ws::new();
    ws.write("d/f.txt", "12345");
    let out = ws
        .call("delete_file", json!({"path": "d/f.txt"}))
        .await
        .unwrap();
    assert_eq!(out.content, "deleted d/f.txt (5 bytes)");
    assert_eq!(out.changed_paths, vec!["d/f.txt"]);
    assert!(!ws.path("d/f.txt").exists());

    let e = ws.err("delete_file", json!({"path": "d/f.txt"})).await;
    assert!(matches!(e, ToolError::NotFound { .. }), "{e}");
    let e = ws.err("delete_file", json!({"path": "d"})).await;
    assert!(matches!(e, ToolError::IsDirectory { .. }), "{e}");
    assert!(ws.path("d").is_dir());
    let e = ws.err("delete_file", json!({"path": "."})).await;
    assert!(matches!(e, ToolError::IsDirectory { .. }), "{e}");
}
