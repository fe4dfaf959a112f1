//! The policy gate through the front door: approvals in interactive mode, grants that
//! stick, strict reads, BLOCK refused, the workspace boundary and the OS sandbox.

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;

use atto_testkit::{Reply, Script, ScriptToolCall};
use serde_json::{Value, json};

use crate::common::{Env, events, of_type, stderr, tool_results};

fn call(name: &str, arguments: Value) -> Reply {
    Reply {
        tool_calls: vec![ScriptToolCall {
            id: None,
            name: name.into(),
            arguments,
            raw_arguments: None,
        }],
        ..Reply::default()
    }
}

#[test]
fn interactive_warn_asks_and_always_creates_a_grant() {
    let mut env = Env::new();
    let cmd = "python3 -c 'print(40 + 2)'";
    env.serve(Script::new(vec![
        call("bash", json!({"command": cmd})),
        call("bash", json!({"command": cmd})),
        Reply::text("done"),
    ]));
    let mut child = env
        .atto()
        .args([
            "exec",
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
        ])
        .args([
            "--base-url",
            &env.base("chat"),
            "--model",
            "m",
            "run it twice",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let mut asked = 0;
    let mut lines = Vec::new();
    for line in stdout.lines() {
        let line = line.unwrap();
        let event: Value = serde_json::from_str(&line).unwrap();
        if event["type"] == "approval_required" {
            asked += 1;
            assert_eq!(event["risk"], "WARN");
            assert_eq!(event["subject"], cmd);
            assert!(!event["reasons"].as_array().unwrap().is_empty());
            let answer = json!({"type": "approval", "id": event["id"], "decision": "always", "scope": "project"});
            writeln!(stdin, "{answer}").unwrap();
            stdin.flush().unwrap();
        }
        lines.push(event);
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(asked, 1, "the grant must cover the second identical call");
    let results = tool_results(&env, 2);
    assert!(results.iter().all(|r| r.contains("42")), "{results:?}");
    // The grant is saved for this project and listed with one use.
    let list = env.atto().arg("grants").output().unwrap();
    let list = String::from_utf8_lossy(&list.stdout);
    assert!(list.contains("python3 -c 'print(40 + 2)'"), "{list}");
    assert!(list.contains("project"), "{list}");
}

#[test]
fn strict_mode_asks_before_a_read_and_headless_denies() {
    let mut env = Env::new();
    env.write("secret.txt", "top secret\n");
    env.serve(Script::new(vec![
        call("read_file", json!({"path": "secret.txt"})),
        Reply::text("could not read"),
    ]));
    let out = env
        .atto()
        .args([
            "exec",
            "--permission",
            "strict",
            "--output-format",
            "stream-json",
        ])
        .args(["--base-url", &env.base("chat"), "--model", "m", "read it"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let evs = events(&out);
    assert_eq!(of_type(&evs, "approval_required").len(), 1);
    assert_eq!(of_type(&evs, "tool_call_finished")[0]["status"], "denied");
    let results = tool_results(&env, 1);
    assert!(!results[0].contains("top secret"));
    assert!(results[0].contains("--on-ask deny"), "{results:?}");
}

#[test]
fn block_is_refused_in_every_mode_but_yolo_and_the_model_is_told_why() {
    for mode in ["strict", "interactive", "auto-safe"] {
        let mut env = Env::new();
        env.serve(Script::new(vec![
            call("bash", json!({"command": "rm -rf / --no-preserve-root"})),
            Reply::text("ok"),
        ]));
        let out = env
            .exec_with(
                &[
                    "--permission",
                    mode,
                    "--on-ask",
                    "allow",
                    "--output-format",
                    "stream-json",
                ],
                "clean up",
            )
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{mode}: {}", stderr(&out));
        let evs = events(&out);
        assert!(
            of_type(&evs, "approval_required").is_empty(),
            "{mode}: BLOCK never asks"
        );
        assert_eq!(of_type(&evs, "tool_call_finished")[0]["status"], "denied");
        let told = &tool_results(&env, 1)[0];
        assert!(told.contains("BLOCK"), "{mode}: {told}");
        assert!(told.contains("not run"), "{mode}: {told}");
    }
}

#[test]
fn file_tools_cannot_escape_the_workspace() {
    let mut env = Env::new();
    let outside = env.dir.path().join("outside.txt");
    std::os::unix::fs::symlink(env.dir.path(), env.repo().join("link")).unwrap();
    env.serve(Script::new(vec![
        call(
            "write_file",
            json!({"path": "../outside.txt", "content": "x"}),
        ),
        call(
            "write_file",
            json!({"path": "link/outside.txt", "content": "x"}),
        ),
        Reply::text("ok"),
    ]));
    let out = env.exec("chat", "write outside");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!outside.exists());
    let evs = events(&out);
    let finished = of_type(&evs, "tool_call_finished");
    assert!(
        finished.iter().all(|e| e["status"] == "error"),
        "{finished:?}"
    );
    assert!(
        tool_results(&env, 2)
            .iter()
            .all(|r| r.contains("outside the workspace"))
    );
}

#[test]
fn sandboxed_commands_write_inside_only() {
    let mut env = Env::new();
    let outside = env.dir.path().join("outside-marker");
    let touch_outside = format!("bash -c 'touch {}'", outside.display());
    env.serve(Script::new(vec![
        call("bash", json!({"command": touch_outside})),
        call("bash", json!({"command": "touch ./inside"})),
        Reply::text("ok"),
    ]));
    let out = env.exec("chat", "touch things");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(env.repo().join("inside").exists());
    assert!(
        !outside.exists(),
        "the sandbox let a write outside the workspace through"
    );
    let results = tool_results(&env, 2);
    assert!(results[0].contains("sandbox"), "{results:?}");
}

#[test]
fn grants_are_listed_and_revoked_from_the_plain_session() {
    let mut env = Env::new();
    let cmd = "python3 -c 'print(7)'";
    env.serve(Script::new(vec![
        call("bash", json!({"command": cmd})),
        Reply::text("ran it"),
    ]));
    let mut child = env
        .atto()
        .args(["--base-url", &env.base("chat"), "--model", "m"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    {
        // A prompt, the approval answer "a" (always, this session), then the commands.
        let mut stdin = child.stdin.take().unwrap();
        writeln!(
            stdin,
            "run it\na\n/grants\n/grants revoke 1\n/grants\n/grnts\n/exit"
        )
        .unwrap();
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("approval needed: bash [WARN]"), "{err}");
    let listed = err
        .find("bash(python3 -c 'print(7)')")
        .expect("grant listed");
    assert!(err[listed..].contains("revoked grant 1"), "{err}");
    assert!(err.contains("no grants"), "{err}");
    assert!(err.contains("did you mean /grants"), "{err}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("ran it"));
}

#[test]
fn trust_lets_file_tools_leave_the_workspace() {
    let mut env = Env::new();
    let outside = env.dir.path().join("notes.txt");
    std::fs::write(&outside, "outside notes\n").unwrap();
    env.serve(Script::new(vec![
        call("read_file", json!({"path": "../notes.txt"})),
        Reply::text("read it"),
    ]));
    let out = env
        .atto()
        .args(["exec", "--trust", "--output-format", "stream-json"])
        .args([
            "--base-url",
            &env.base("chat"),
            "--model",
            "m",
            "read notes",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(tool_results(&env, 1)[0].contains("outside notes"));
}

#[test]
fn bad_permission_config_is_a_clear_error() {
    let env = Env::new();
    let config = env.dir.path().join("home/.config/atto/config.toml");
    for (text, needle) in [
        (
            "permission_mode = \"careful\"\n",
            "unknown permission mode 'careful'",
        ),
        (
            "[permissions]\nallow = [\"bash(npm\"]\n",
            "invalid permission rule 'bash(npm'",
        ),
    ] {
        std::fs::write(&config, text).unwrap();
        let out = env
            .atto()
            .args([
                "exec",
                "--base-url",
                "http://127.0.0.1:9/v1",
                "--model",
                "m",
                "hi",
            ])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        let err = stderr(&out);
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains(needle), "{err}");
    }
    let project = env.repo().join(".atto");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(&config, "").unwrap();
    std::fs::write(
        project.join("config.toml"),
        "[permissions]\nallow = [\"bash\"]\n",
    )
    .unwrap();
    let out = env
        .atto()
        .args([
            "exec",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--model",
            "m",
            "hi",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("may only tighten"),
        "{}",
        stderr(&out)
    );
}
