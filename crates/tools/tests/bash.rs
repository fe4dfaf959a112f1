//! bash: exit codes, combined output, output cap, and that timeouts and cancellation
//! kill the whole process tree.

// Tests may unwrap: a panic is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::{Duration, Instant};

use atto_tools::{ToolError, ToolRegistry};
use common::Ws;
use serde_json::json;

/// Whether process `pid` is still running (a zombie counts as dead: it has exited and
/// only awaits reaping by whoever adopted it).
fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => false,
        Ok(stat) => {
            let state = stat
                .rsplit(')')
                .next()
                .unwrap()
                .split_whitespace()
                .next()
                .unwrap();
            state != "Z" && state != "X"
        }
    }
}

/// Waits (bounded) for every pid in the files to be gone.
fn assert_all_dead(ws: &Ws, files: &[&str]) {
    let pids: Vec<u32> = files
        .iter()
        .map(|f| ws.read(f).trim().parse().unwrap())
        .collect();
    let start = Instant::now();
    while pids.iter().any(|&p| alive(p)) {
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "still alive: {pids:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[tokio::test]
async fn the_exit_status_is_in_the_output_structure() {
    let ws = Ws::new();
    let cases = [
        ("true", Some(0)),
        ("exit 3", Some(3)),
        ("atto-no-such-command-xyz", Some(127)),
        ("kill -9 $$", Some(137)),
    ];
    for (command, code) in cases {
        let out = ws
            .call("bash", json!({ "command": command }))
            .await
            .unwrap();
        assert_eq!(out.exit_code, code, "{command}: {}", out.content);
    }
}

#[tokio::test]
async fn reports_exit_code_and_interleaved_output() {
    let ws = Ws::new();
    let out = ws
        .ok(
            "bash",
            json!({"command": "echo out; echo err >&2; echo out2; exit 3"}),
        )
        .await;
    assert_eq!(out, "exit code: 3\nout\nerr\nout2\n");
    let out = ws.ok("bash", json!({"command": "pwd"})).await;
    assert_eq!(out, format!("exit code: 0\n{}\n", ws.root().display()));
    let out = ws.ok("bash", json!({"command": "true"})).await;
    assert_eq!(out, "exit code: 0\n(no output)");
    let out = ws.ok("bash", json!({"command": "printf '\\377ok'"})).await;
    assert_eq!(out, "exit code: 0\n\u{fffd}ok");
    let out = ws
        .ok("bash", json!({"command": "read x; echo \"$?[$x]\""}))
        .await;
    assert_eq!(out, "exit code: 0\n1[]\n", "stdin is empty");
    let out = ws.ok("bash", json!({"command": "kill -9 $$"})).await;
    assert!(
        out.starts_with("exit code: 137 (killed by signal 9)"),
        "{out}"
    );
    let out = ws
        .ok(
            "bash",
            json!({"command": "echo $PAGER $GIT_PAGER $GIT_TERMINAL_PROMPT"}),
        )
        .await;
    assert_eq!(out, "exit code: 0\ncat cat 0\n");
    let e = ws.err("bash", json!({"command": "  "})).await;
    assert!(matches!(e, ToolError::InvalidArguments(_)), "{e}");
}

#[tokio::test]
async fn output_cap_keeps_head_and_tail() {
    let ws = Ws::new();
    let out = ws
        .ok(
            "bash",
            json!({"command": "echo START; yes line | head -n 20000; echo END"}),
        )
        .await;
    assert!(
        out.starts_with("exit code: 0\nSTART\nline\n"),
        "{}",
        &out[..40]
    );
    assert!(out.ends_with("line\nEND\n"), "{}", &out[out.len() - 40..]);
    // 6 + 20000*5 + 4 bytes in all; 30 KB kept.
    let omitted = 6 + 20_000 * 5 + 4 - 2 * 15 * 1024;
    assert!(
        out.contains(&format!("\n[... {omitted} bytes omitted ...]\n")),
        "marker missing"
    );
    assert!(out.len() < 31 * 1024);
}

#[tokio::test]
async fn timeout_kills_the_whole_group() {
    let ws = Ws::new();
    let start = Instant::now();
    let e = ws
        .err(
            "bash",
            json!({"command": "echo $$ > leader.pid; sleep 30 & echo $! > bg.pid; echo started; sleep 30", "timeout": 1}),
        )
        .await;
    assert!(start.elapsed() < Duration::from_secs(10));
    match &e {
        ToolError::Timeout { seconds, output } => {
            assert_eq!(*seconds, 1);
            assert_eq!(output, "started\n");
        }
        other => panic!("unexpected {other}"),
    }
    assert!(e.to_string().contains("timed out after 1s"), "{e}");
    assert_all_dead(&ws, &["leader.pid", "bg.pid"]);
}

#[tokio::test]
async fn cancellation_kills_promptly() {
    let ws = Ws::new();
    let ctx = ws.ctx.clone();
    let cancel = ctx.cancel.clone();
    let task = tokio::spawn(async move {
        let tool = ToolRegistry::builtin().get("bash").unwrap();
        tool.run(
            json!({"command": "echo $$ > leader.pid; (sleep 30; echo) & echo $! > bg.pid; sleep 30"}),
            &ctx,
        )
        .await
    });
    let pidfile = ws.path("bg.pid");
    let start = Instant::now();
    while !pidfile.exists() || ws.read("bg.pid").trim().is_empty() {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "command never started"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let cancelled_at = Instant::now();
    cancel.cancel();
    let result = tokio::time::timeout(Duration::from_secs(5), task)
        .await
        .unwrap()
        .unwrap();
    assert!(matches!(result, Err(ToolError::Cancelled)), "{result:?}");
    assert!(cancelled_at.elapsed() < Duration::from_secs(2));
    assert_all_dead(&ws, &["leader.pid", "bg.pid"]);

    // Already cancelled: nothing runs.
    let e = ws.err("bash", json!({"command": "touch ran"})).await;
    assert!(matches!(e, ToolError::Cancelled), "{e}");
    assert!(!ws.path("ran").exists());
}

#[tokio::test]
async fn leftover_background_processes_holding_output_are_killed() {
    let ws = Ws::new();
    let start = Instant::now();
    let out = ws
        .ok(
            "bash",
            json!({"command": "sleep 30 & echo $! > bg.pid; echo done"}),
        )
        .await;
    assert!(start.elapsed() < Duration::from_secs(5));
    assert!(out.starts_with("exit code: 0\ndone\n"), "{out}");
    assert!(out.contains("background processes"), "{out}");
    assert_all_dead(&ws, &["bg.pid"]);

    // A background job that does not hold the output is left running.
    let out = ws
        .ok(
            "bash",
            json!({"command": "sleep 30 >/dev/null 2>&1 & echo $! > free.pid"}),
        )
        .await;
    assert_eq!(out, "exit code: 0\n(no output)");
    let pid: u32 = ws.read("free.pid").trim().parse().unwrap();
    assert!(alive(pid));
    std::process::Command::new("kill")
        .arg(pid.to_string())
        .status()
        .unwrap();
}
