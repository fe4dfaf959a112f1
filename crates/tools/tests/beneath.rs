//! File tools act on what the kernel resolved beneath the workspace: a symlink followed
//! by `..` is judged where it lands, and a directory swapped for a symlink to somewhere
//! else between the check and the write never lets a write out of the workspace.

// Tests may unwrap: a panic is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::os::unix::fs::symlink;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use atto_tools::ToolError;
use atto_tools::beneath::Workspace;
use atto_tools::{ApplyPatchTool, Tool};
use common::Ws;
use rustix::fs::{CWD, RenameFlags, renameat_with};
use serde_json::json;

/// A workspace with `.git/objects` and the link `gobj -> .git/objects`.
fn with_gobj() -> Ws {
    let ws = Ws::new();
    std::fs::create_dir_all(ws.path(".git/objects")).unwrap();
    std::fs::create_dir_all(ws.path(".git/hooks")).unwrap();
    symlink(".git/objects", ws.path("gobj")).unwrap();
    ws
}

#[test]
fn link_dotdot_resolves_where_the_kernel_goes() {
    let ws = with_gobj();
    let root = Workspace::open(ws.root()).unwrap();
    assert_eq!(root.resolve("gobj/../config").unwrap().rel(), ".git/config");
    assert_eq!(
        root.resolve("gobj/../hooks/pre-push").unwrap().rel(),
        ".git/hooks/pre-push"
    );
    // A dangling link is judged by where a write through it would land.
    symlink(".git/hooks/post-checkout", ws.path("hook")).unwrap();
    assert_eq!(
        root.resolve("hook").unwrap().rel(),
        ".git/hooks/post-checkout"
    );
    // A dangling link on the way is followed as the kernel would, `..` after its link
    // included.
    symlink("gobj/../newhooks", ws.path("dl")).unwrap();
    assert_eq!(root.resolve("dl/x").unwrap().rel(), ".git/newhooks/x");
    // Directories that do not exist yet are appended as written (they will be made, with
    // no links in them), `..` among them applies to them, and never climbs out of them.
    assert_eq!(
        root.resolve("new/dir/f.txt").unwrap().rel(),
        "new/dir/f.txt"
    );
    assert_eq!(root.resolve("new/../f.txt").unwrap().rel(), "f.txt");
    assert!(root.resolve("new/../../f.txt").is_err());
    assert_eq!(root.resolve(".").unwrap().rel(), ".");
    assert_eq!(root.resolve("gobj/..").unwrap().rel(), ".git");
}

#[test]
fn links_out_of_the_workspace_are_refused() {
    let ws = Ws::new();
    let outside = tempfile::tempdir().unwrap();
    symlink(outside.path(), ws.path("out")).unwrap();
    symlink(outside.path().join("nothing"), ws.path("dangling")).unwrap();
    let root = Workspace::open(ws.root()).unwrap();
    for path in [
        "out/x",
        "out",
        "dangling",
        "../x",
        "/etc/passwd",
        "out/../x",
    ] {
        assert!(
            matches!(root.resolve(path), Err(ToolError::OutsideWorkspace { .. })),
            "{path}"
        );
    }
}

#[tokio::test]
async fn file_tools_report_the_path_they_wrote() {
    let ws = with_gobj();
    let out = ws
        .call(
            "write_file",
            json!({"path": "gobj/../config", "content": "[core]\n"}),
        )
        .await
        .unwrap();
    assert_eq!(out.changed_paths, vec![".git/config".to_owned()]);
    assert_eq!(ws.read(".git/config"), "[core]\n");
    let out = ws
        .call("delete_file", json!({"path": "gobj/../config"}))
        .await
        .unwrap();
    assert_eq!(out.changed_paths, vec![".git/config".to_owned()]);
    assert!(!ws.path(".git/config").exists());
}

/// A background thread exchanges the directory `d` and a symlink to a directory outside
/// the workspace, as fast as it can, while `write_file d/.bashrc` runs again and again.
/// Some writes land in the workspace and some are refused; none may land outside.
#[tokio::test]
async fn a_swapped_symlink_never_lets_a_write_out() {
    let ws = Ws::new();
    let outside = tempfile::tempdir().unwrap();
    std::fs::create_dir(ws.path("d")).unwrap();
    symlink(outside.path(), ws.path("s")).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let swapper = {
        let stop = Arc::clone(&stop);
        let (d, s) = (ws.path("d"), ws.path("s"));
        std::thread::spawn(move || {
            let mut swaps = 0u64;
            while !stop.load(Ordering::Relaxed) {
                renameat_with(CWD, &d, CWD, &s, RenameFlags::EXCHANGE).unwrap();
                swaps += 1;
            }
            swaps
        })
    };
    let mut wrote = 0;
    for _ in 0..2000 {
        let args = json!({"path": "d/.bashrc", "content": "echo owned\n"});
        if ws.call("write_file", args).await.is_ok() {
            wrote += 1;
        }
        let patch = "*** Begin Patch\n*** Add File: d/.profile\n+echo owned\n*** End Patch\n";
        let _ = ApplyPatchTool.run(json!({"input": patch}), &ws.ctx).await;
        let _ = ws.call("delete_file", json!({"path": "d/.profile"})).await;
    }
    stop.store(true, Ordering::Relaxed);
    let swaps = swapper.join().unwrap();
    assert!(swaps > 100, "the swapper barely ran ({swaps} swaps)");
    assert!(wrote > 0, "no write went through at all");
    let escaped: Vec<_> = std::fs::read_dir(outside.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(
        escaped.is_empty(),
        "written outside the workspace: {escaped:?}"
    );
}

/// The same swap against the reading tools: `grep` walks `d` by name, but every file it
/// reads is opened beneath the workspace, so what lies outside never shows.
#[tokio::test]
async fn a_swapped_symlink_never_lets_a_read_out() {
    let ws = Ws::new();
    let outside = tempfile::tempdir().unwrap();
    std::fs::create_dir(ws.path("d")).unwrap();
    std::fs::write(ws.path("d/notes.txt"), "nothing here\n").unwrap();
    std::fs::write(outside.path().join("notes.txt"), "OUTSIDE_SECRET\n").unwrap();
    symlink(outside.path(), ws.path("s")).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let swapper = {
        let stop = Arc::clone(&stop);
        let (d, s) = (ws.path("d"), ws.path("s"));
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                renameat_with(CWD, &d, CWD, &s, RenameFlags::EXCHANGE).unwrap();
            }
        })
    };
    let mut leaked = Vec::new();
    for _ in 0..1000 {
        let args = json!({"pattern": "OUTSIDE_SECRET", "path": "d"});
        if let Ok(out) = ws.call("grep", args).await
            && out.content.contains("notes.txt:")
        {
            leaked.push(out.content);
        }
        if let Ok(out) = ws.call("read_file", json!({"path": "d/notes.txt"})).await
            && out.content.contains("OUTSIDE_SECRET")
        {
            leaked.push(out.content);
        }
    }
    stop.store(true, Ordering::Relaxed);
    swapper.join().unwrap();
    assert!(leaked.is_empty(), "read outside the workspace: {leaked:?}");
}

/// The same swap against the listing tools: `list_files` and `glob` walk `d` by name, and
/// while `d` leads outside the walk reads names there; only names that are in the
/// workspace when they are shown may show.
#[tokio::test]
async fn a_swapped_symlink_never_lets_a_name_out() {
    let ws = Ws::new();
    let outside = tempfile::tempdir().unwrap();
    std::fs::create_dir(ws.path("d")).unwrap();
    std::fs::write(ws.path("d/inside.txt"), "x\n").unwrap();
    std::fs::write(outside.path().join("OUTSIDE_NAME.txt"), "x\n").unwrap();
    symlink(outside.path(), ws.path("s")).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let swapper = {
        let stop = Arc::clone(&stop);
        let (d, s) = (ws.path("d"), ws.path("s"));
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                renameat_with(CWD, &d, CWD, &s, RenameFlags::EXCHANGE).unwrap();
            }
        })
    };
    let mut leaked = Vec::new();
    let mut listed = 0;
    for _ in 0..1000 {
        for (tool, args) in [
            ("list_files", json!({})),
            ("glob", json!({"pattern": "**/*.txt"})),
        ] {
            if let Ok(out) = ws.call(tool, args).await {
                if out.content.contains("inside.txt") {
                    listed += 1;
                }
                if out.content.contains("OUTSIDE_NAME") {
                    leaked.push(format!("{tool}: {}", out.content));
                }
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    swapper.join().unwrap();
    assert!(listed > 0, "the workspace's own file was never listed");
    assert!(leaked.is_empty(), "listed names from outside: {leaked:?}");
}

/// The gate judged `d/config` while `d` was a directory; `d` has been swapped for a link
/// to `.git` since. The tools resolve the path again, see it now leads to `.git/config`,
/// and refuse rather than act where nobody checked.
#[tokio::test]
async fn a_path_that_leads_elsewhere_than_judged_is_refused() {
    let mut ws = Ws::new();
    std::fs::create_dir_all(ws.path(".git")).unwrap();
    std::fs::write(ws.path(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    symlink(".git", ws.path("d")).unwrap();
    ws.ctx.judged_paths = Some(vec!["d/config".into(), "d/HEAD".into()]);
    let e = ws
        .err("write_file", json!({"path": "d/config", "content": "x"}))
        .await
        .to_string();
    assert!(e.contains("where it was checked"), "{e}");
    ws.err("delete_file", json!({"path": "d/HEAD"})).await;
    let patch = "*** Begin Patch\n*** Add File: d/config\n+x\n*** End Patch\n";
    assert!(
        ApplyPatchTool
            .run(json!({"input": patch}), &ws.ctx)
            .await
            .is_err()
    );
    assert!(!ws.path(".git/config").exists());
    assert!(ws.path(".git/HEAD").exists());

    // Judged where it leads, the same call runs.
    ws.ctx.judged_paths = Some(vec![".git/config".into()]);
    ws.ok("write_file", json!({"path": "d/config", "content": "x"}))
        .await;
    assert_eq!(ws.read(".git/config"), "x");
}
