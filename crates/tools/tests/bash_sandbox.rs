//! bash under the OS sandbox: the result records whether it ran sandboxed, says so in
//! its text, and flags a write the sandbox denied so core can offer an unsandboxed re-run.

// Tests may unwrap: a panic is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;

use atto_sandbox::{SandboxConfig, SandboxError};
use atto_tools::{Sandbox, SandboxStatus};
use common::Ws;
use serde_json::json;

/// A workspace whose bash runs sandboxed (writable: the workspace and `tmp`), or `None`
/// after asserting that this kernel honestly has no Landlock.
fn sandboxed(tmp: &tempfile::TempDir) -> Option<Ws> {
    let mut ws = Ws::new();
    let config = SandboxConfig {
        writable: vec![ws.root().to_path_buf(), tmp.path().to_path_buf()],
        allow_network: false,
        ..SandboxConfig::default()
    };
    match Sandbox::prepare(&config) {
        Ok(sb) => {
            ws.ctx.sandbox = Some(Arc::new(sb));
            Some(ws)
        }
        Err(SandboxError::Unsupported { reason }) => {
            assert_eq!(Sandbox::probe().landlock_abi, 0);
            eprintln!("NO LANDLOCK ON THIS KERNEL: {reason}");
            None
        }
        Err(e) => panic!("prepare failed: {e}"),
    }
}

#[tokio::test]
async fn sandboxed_run_is_recorded_and_stated() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(ws) = sandboxed(&tmp) else { return };
    let out = ws
        .call(
            "bash",
            json!({"command": format!("touch ./inside && echo t > {}/t && cat /etc/hostname", tmp.path().display())}),
        )
        .await
        .unwrap();
    assert!(out.content.starts_with("exit code: 0"), "{}", out.content);
    assert!(ws.path("inside").exists());
    assert!(tmp.path().join("t").exists());
    assert!(
        matches!(out.sandbox, Some(SandboxStatus::Applied { .. })),
        "{:?}",
        out.sandbox
    );
    let last = out.content.lines().last().unwrap();
    assert!(last.starts_with("[sandbox: writes limited to "), "{last}");
    assert!(last.contains(&ws.root().display().to_string()), "{last}");
    assert!(last.ends_with("network off]"), "{last}");
}

#[tokio::test]
async fn network_off_under_the_sandbox() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(ws) = sandboxed(&tmp) else { return };
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let cmd = format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected");
    let out = ws.call("bash", json!({"command": cmd})).await.unwrap();
    assert!(!out.content.contains("connected"), "{}", out.content);
    assert!(out.content.contains("Permission denied"), "{}", out.content);
    // A refused connection is not a denied write.

    let plain = Ws::new();
    let out = plain.call("bash", json!({"command": cmd})).await.unwrap();
    assert!(out.content.contains("connected"), "{}", out.content);
}

#[tokio::test]
async fn tools_that_run_no_command_record_no_sandbox() {
    let ws = Ws::new();
    ws.write("a.txt", "hello\n");
    let out = ws
        .call("read_file", json!({"path": "a.txt"}))
        .await
        .unwrap();
    assert_eq!(out.sandbox, None);
}
