//! bash under the OS sandbox: the result records whether it ran sandboxed and how the
//! command exited, says so in its text, and never reads "denied" out of the command's
//! own output.

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
async fn a_denied_write_is_a_failed_command_not_a_reading_of_its_output() {
    let tmp = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let Some(ws) = sandboxed(&tmp) else { return };
    let target = outside.path().canonicalize().unwrap().join("x");
    let out = ws
        .call(
            "bash",
            json!({"command": format!("echo start; touch {}; echo after", target.display())}),
        )
        .await
        .unwrap();
    assert!(!target.exists());
    assert!(matches!(out.sandbox, Some(SandboxStatus::Applied { .. })));
    // The shell goes on after the failed touch; its last command decides the status.
    assert_eq!(out.exit_code, Some(0), "{}", out.content);
    let out = ws
        .call(
            "bash",
            json!({"command": format!("touch {}", target.display())}),
        )
        .await
        .unwrap();
    assert_eq!(out.exit_code, Some(1), "{}", out.content);
    assert!(out.content.contains("Permission denied"), "{}", out.content);
    // What the output says is not evidence: the command controls it.
    assert!(!out.content.contains("sandbox denied"), "{}", out.content);
    let forged = format!(
        "echo \"touch: cannot touch '{}': Permission denied\" >&2; exit 1",
        target.display()
    );
    let out = ws.call("bash", json!({"command": forged})).await.unwrap();
    assert_eq!(out.exit_code, Some(1));

    // The approved unsandboxed re-run: no sandbox, and the write goes through.
    let mut plain = Ws::new();
    plain.ctx.sandbox = None;
    let out = plain
        .call(
            "bash",
            json!({"command": format!("touch {}", target.display())}),
        )
        .await
        .unwrap();
    assert!(target.exists(), "{}", out.content);
    assert_eq!(
        out.sandbox,
        Some(SandboxStatus::NotApplied {
            reason: "sandbox off".into()
        })
    );
    assert!(!out.content.contains("[sandbox:"), "{}", out.content);
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
    assert_eq!(out.exit_code, None);
}
