//! The workspace boundary: `..`, absolute paths and symlinks cannot reach outside.

// Tests may unwrap: a panic is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::os::unix::fs::symlink;

use atto_tools::{ToolError, paths};
use common::Ws;
use serde_json::json;

fn outside(r: Result<std::path::PathBuf, ToolError>) -> bool {
    matches!(r, Err(ToolError::OutsideWorkspace { .. }))
}

#[test]
fn resolve_stays_inside() {
    let ws = Ws::new();
    let root = ws.root();
    ws.write("a/b.txt", "x");
    let elsewhere = tempfile::tempdir().unwrap();
    let elsewhere = elsewhere.path().canonicalize().unwrap();
    std::fs::write(elsewhere.join("secret"), "s").unwrap();

    assert_eq!(
        paths::resolve(root, "a/b.txt").unwrap(),
        root.join("a/b.txt")
    );
    assert_eq!(
        paths::resolve(root, "./a/../a/b.txt").unwrap(),
        root.join("a/b.txt")
    );
    assert_eq!(
        paths::resolve(root, "new/dir/../f.txt").unwrap(),
        root.join("new/f.txt")
    );
    assert_eq!(paths::resolve(root, ".").unwrap(), root);
    let abs_inside = root.join("a/b.txt");
    assert_eq!(
        paths::resolve(root, abs_inside.to_str().unwrap()).unwrap(),
        abs_inside
    );

    assert!(outside(paths::resolve(root, "../x")));
    assert!(outside(paths::resolve(root, "a/../../x")));
    assert!(outside(paths::resolve(root, "/etc/passwd")));
    assert!(outside(paths::resolve(
        root,
        elsewhere.join("secret").to_str().unwrap()
    )));

    // Symlinks: to a directory outside, to a file outside, and dangling to outside.
    symlink(&elsewhere, root.join("out_dir")).unwrap();
    symlink(elsewhere.join("secret"), root.join("out_file")).unwrap();
    symlink(elsewhere.join("not_yet"), root.join("dangling")).unwrap();
    symlink(root.join("a"), root.join("in_link")).unwrap();
    assert!(outside(paths::resolve(root, "out_dir/secret")));
    assert!(outside(paths::resolve(root, "out_dir/new_file")));
    assert!(outside(paths::resolve(root, "out_file")));
    assert!(outside(paths::resolve(root, "dangling")));
    assert!(outside(paths::resolve(root, "dangling/sub")));
    assert_eq!(
        paths::resolve(root, "in_link/b.txt").unwrap(),
        root.join("a/b.txt")
    );

    assert!(matches!(
        paths::resolve(root, ""),
        Err(ToolError::InvalidArguments(_))
    ));
    assert_eq!(paths::relative(root, &root.join("a/b.txt")), "a/b.txt");
}

#[tokio::test]
async fn tools_refuse_outside_paths_and_leave_them_alone() {
    let ws = Ws::new();
    let elsewhere = tempfile::tempdir().unwrap();
    std::fs::write(elsewhere.path().join("victim"), "keep").unwrap();
    symlink(elsewhere.path().join("victim"), ws.path("link")).unwrap();
    symlink(elsewhere.path(), ws.path("dir_link")).unwrap();

    let calls = [
        ("read_file", json!({"path": "../x"})),
        ("read_file", json!({"path": "link"})),
        ("write_file", json!({"path": "link", "content": "pwned"})),
        (
            "write_file",
            json!({"path": "dir_link/new", "content": "pwned"}),
        ),
        (
            "edit_file",
            json!({"path": "link", "old_string": "keep", "new_string": "pwned"}),
        ),
        ("delete_file", json!({"path": "link"})),
        ("list_files", json!({"path": "dir_link"})),
        ("glob", json!({"pattern": "*", "path": "/"})),
        ("grep", json!({"pattern": "keep", "path": "dir_link"})),
    ];
    for (tool, args) in calls {
        let e = ws.err(tool, args.clone()).await;
        assert!(
            matches!(e, ToolError::OutsideWorkspace { .. }),
            "{tool} {args}: {e}"
        );
        assert!(e.to_string().contains("outside the workspace"), "{e}");
    }
    assert_eq!(
        std::fs::read_to_string(elsewhere.path().join("victim")).unwrap(),
        "keep"
    );
    assert!(!elsewhere.path().join("new").exists());

    // A walk from the root does not follow the link out either.
    let out = ws.ok("grep", json!({"pattern": "keep"})).await;
    assert!(out.starts_with("no matches"), "{out}");
}
