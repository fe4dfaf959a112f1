//! The gate judges a file call by the path the kernel resolves, not by its text: with a
//! symlink `gobj -> .git/objects` in the workspace, `gobj/../config` is `.git/config`,
//! and a write there asks in every mode (here auto-safe with "never ask", so it is
//! refused) instead of landing silently.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::os::unix::fs::symlink;

use atto_core::Limits;
use atto_protocol::{Event, Op, ToolCallStatus};
use atto_tools::{BuiltinOptions, ToolRegistry};
use common::*;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_through_a_link_into_git_are_judged_as_writes_into_git() {
    let patch = |body: &str| json!({"input": format!("*** Begin Patch\n{body}*** End Patch\n")});
    let f = fixture(vec![
        calls(vec![
            call(
                "write_file",
                json!({"path": "gobj/../config", "content": "[core]\n\tfsmonitor = ./evil\n"}),
            ),
            call(
                "write_file",
                json!({"path": "gobj/../hooks/pre-push", "content": "#!/bin/sh\nevil\n"}),
            ),
            call("delete_file", json!({"path": "gobj/../HEAD"})),
            call(
                "apply_patch",
                patch("*** Add File: gobj/../hooks/post-checkout\n+evil\n"),
            ),
            call(
                "apply_patch",
                patch("*** Update File: gobj/../description\n@@\n-unnamed\n+evil\n"),
            ),
            call(
                "edit_file",
                json!({"path": "gobj/../description", "old_string": "unnamed", "new_string": "evil"}),
            ),
            // A dangling link: a write through it lands on its target.
            call(
                "write_file",
                json!({"path": "hook", "content": "#!/bin/sh\nevil\n"}),
            ),
            // The control: an ordinary write is allowed in auto-safe.
            call("write_file", json!({"path": "ok.txt", "content": "fine\n"})),
        ]),
        text("done"),
    ])
    .await;
    let ws = &f.workspace;
    std::fs::create_dir_all(ws.join(".git/objects")).unwrap();
    std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
    std::fs::write(ws.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(ws.join(".git/description"), "unnamed\n").unwrap();
    symlink(".git/objects", ws.join("gobj")).unwrap();
    symlink(".git/hooks/post-merge", ws.join("hook")).unwrap();

    let permission = atto_policy::gate::PermissionSetting {
        mode: atto_protocol::PermissionMode::AutoSafe,
        deny_asks: true,
    };
    let tools = ToolRegistry::builtin_with(&BuiltinOptions {
        apply_patch: true,
        ..BuiltinOptions::default()
    });
    let mut handle = start_gated(&f, tools, Limits::default(), permission, Vec::new());
    handle.submit(Op::UserInput { text: "go".into() }).unwrap();
    let (events, _) = turn_events(&mut handle).await;
    let statuses: Vec<(String, ToolCallStatus, String)> = events
        .iter()
        .filter_map(|e| match e {
            Event::ToolCallFinished {
                name,
                status,
                summary,
                ..
            } => Some((name.clone(), *status, summary.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(statuses.len(), 8, "{statuses:?}");
    let (last, protected) = statuses.split_last().unwrap();
    assert_eq!(last.1, ToolCallStatus::Ok, "{last:?}");
    for s in protected {
        assert_eq!(s.1, ToolCallStatus::Denied, "{s:?}");
        assert!(
            s.2.contains(".git/"),
            "the refusal names the real path: {s:?}"
        );
    }
    assert!(!ws.join(".git/config").exists());
    assert!(!ws.join(".git/hooks/pre-push").exists());
    assert!(!ws.join(".git/hooks/post-checkout").exists());
    assert!(!ws.join(".git/hooks/post-merge").exists());
    assert!(ws.join(".git/HEAD").exists());
    assert_eq!(
        std::fs::read_to_string(ws.join(".git/description")).unwrap(),
        "unnamed\n"
    );
    assert!(ws.join("ok.txt").exists());
}
