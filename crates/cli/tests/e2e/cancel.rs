//! Ctrl-C during `atto exec`: the running command's process group dies, the result says
//! cancelled, and the exit code is 130.

use std::time::{Duration, Instant};

use atto_testkit::{Reply, Script, ScriptToolCall};
use serde_json::json;

use crate::common::{Env, stderr};

#[test]
fn ctrl_c_cancels_the_turn_and_kills_the_command() {
    let mut env = Env::new();
    let url = env.serve(Script {
        replies: vec![
            Reply {
                tool_calls: vec![ScriptToolCall {
                    id: None,
                    name: "bash".into(),
                    arguments: json!({"command": "echo started > pid.txt; sleep 30.4242; touch after.txt"}),
                    raw_arguments: None,
                }],
                ..Reply::default()
            },
            Reply::text("never"),
        ],
        ..Script::default()
    });
    let child = env
        .atto()
        .args([
            "exec",
            "--permission",
            "auto-safe",
            "--output-format",
            "json",
            "--base-url",
        ])
        .arg(format!("{url}/v1"))
        .args(["--model", "m", "run it"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid_file = env.repo().join("pid.txt");
    let start = Instant::now();
    while !pid_file.exists()
        || std::fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .is_empty()
    {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "command never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let ok = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(ok.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    let result: serde_json::Value =
        serde_json::from_str(String::from_utf8_lossy(&out.stdout).trim()).unwrap();
    assert_eq!(result["status"], "cancelled");
    // The command is gone (or a zombie awaiting a reaper that is not us): `ps` shows no
    // live process running its `sleep` (the sandboxed shell's own `$$` is a pid of its
    // PID namespace, meaningless here).
    let ps = std::process::Command::new("ps")
        .args(["-eo", "stat=,args="])
        .output()
        .unwrap();
    let ps = String::from_utf8_lossy(&ps.stdout);
    let live: Vec<&str> = ps
        .lines()
        .filter(|l| l.contains("sleep 30.4242") && !l.trim_start().starts_with('Z'))
        .collect();
    assert!(live.is_empty(), "command still running: {live:?}");
    assert!(!env.repo().join("after.txt").exists());
}
