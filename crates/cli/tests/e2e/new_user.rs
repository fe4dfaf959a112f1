//! What a new user tripped over, each pinned: the tools a mode offers, modes that survive
//! a resume, ids whose short form is unique, `/undo` that stays in its session.

use atto_testkit::{Reply, Script};

use crate::common::{Env, stderr};

/// The tool names atto offered in request `n`.
fn offered(env: &Env, n: usize) -> Vec<String> {
    env.requests()[n].body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .map(|t| t["function"]["name"].as_str().unwrap_or("").to_owned())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn review_and_debug_modes_offer_only_the_tools_they_allow() {
    for (mode, must, must_not) in [
        (
            "review",
            &["read_file", "grep"][..],
            &["write_file", "edit_file", "bash"][..],
        ),
        (
            "debug",
            &["read_file", "bash"][..],
            &["write_file", "delete_file"][..],
        ),
        ("plan", &["write_file", "bash"][..], &[][..]),
    ] {
        let mut env = Env::new();
        env.serve(Script {
            replies: vec![Reply::text("ok")],
            ..Script::default()
        });
        let out = env.exec_with(&["--mode", mode], "look").output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let tools = offered(&env, 0);
        for name in must {
            assert!(
                tools.iter().any(|t| t == name),
                "{mode}: {name} missing: {tools:?}"
            );
        }
        for name in must_not {
            assert!(
                !tools.iter().any(|t| t == name),
                "{mode}: {name} offered: {tools:?}"
            );
        }
    }
}

#[test]
fn a_project_config_that_loosens_permissions_is_named_once() {
    let mut env = Env::new();
    env.write(".atto/config.toml", "permission_mode = \"yolo\"\n");
    env.serve(Script {
        replies: vec![Reply::text("ok")],
        ..Script::default()
    });
    let out = env.exec_with(&[], "hi").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(
        err.matches("may only tighten permissions").count(),
        1,
        "{err}"
    );
    assert!(err.contains("\"yolo\""), "{err}");
}

#[test]
fn arguments_that_break_a_tools_schema_are_invalid_arguments() {
    let mut env = Env::new();
    env.write("a.txt", "x\n");
    env.serve(Script {
        replies: vec![
            crate::common::calls(vec![
                crate::common::call(
                    "edit_file",
                    serde_json::json!({"path": "a.txt", "new_string": "y"}),
                ),
                crate::common::call("read_file", serde_json::json!({"path": ""})),
            ]),
            Reply::text("ok"),
        ],
        ..Script::default()
    });
    let out = env.exec("chat", "edit");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let events = crate::common::events(&out);
    let statuses: Vec<_> = crate::common::of_type(&events, "tool_call_finished")
        .into_iter()
        .map(|e| e["status"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(statuses, ["invalid_arguments", "invalid_arguments"]);
}

#[test]
fn each_command_lists_only_the_options_it_takes() {
    let env = Env::new();
    let help = |args: &[&str]| {
        let out = env.atto().args(args).arg("--help").output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let session_flags = ["--mode", "--yolo", "--permission", "--resume", "--model"];
    for args in [
        &["policy", "explain"][..],
        &["store"],
        &["grants"],
        &["sessions"],
    ] {
        let text = help(args);
        for flag in session_flags {
            assert!(!text.contains(flag), "{args:?} lists {flag}:\n{text}");
        }
    }
    let exec = help(&["exec"]);
    for flag in session_flags {
        assert!(exec.contains(flag), "exec lacks {flag}");
    }
    // Options still go before the subcommand, too.
    let out = env
        .atto()
        .args(["--model", "m", "sessions"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // The help speaks the user's language, not the project's.
    let top = help(&[]);
    assert!(
        !top.contains("codewhale") && !exec.contains("codewhale"),
        "{top}"
    );
}

#[test]
fn a_resumed_session_keeps_its_agent_mode_and_a_stricter_permission() {
    let mut env = Env::new();
    let write = crate::common::writes;
    env.serve(Script {
        replies: vec![
            write("a.txt"),
            Reply::text("queued"),
            write("b.txt"),
            Reply::text("queued again"),
        ],
        ..Script::default()
    });
    let first = env
        .exec_with(&["--mode", "plan", "--permission", "strict"], "plan a")
        .output()
        .unwrap();
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    assert!(!env.repo().join("a.txt").exists());
    // `-c` with no mode flag: still plan mode, still strict; said so.
    let out = crate::common::run_line_session(&env, "m", &["-c"], "now b\n");
    let err = stderr(&out);
    assert!(
        !env.repo().join("b.txt").exists(),
        "wrote to disk after resume: {err}"
    );
    assert!(err.contains("resumed in plan mode"), "{err}");
    assert!(err.contains("resumed with permission strict"), "{err}");
    // A flag given on resume wins, and is announced.
    let out = crate::common::run_line_session(&env, "m", &["-c", "--mode", "build"], "");
    let err = stderr(&out);
    assert!(err.contains("--mode build given now wins"), "{err}");
}

#[test]
fn short_ids_stay_unique_and_sessions_that_never_reached_the_model_are_told_apart() {
    let mut env = Env::new();
    env.serve(Script {
        replies: vec![Reply::text("one"), Reply::text("two")],
        ..Script::default()
    });
    // Two sessions started within a second share their first 8 characters (UUIDv7).
    for task in ["first task", "second task"] {
        let out = env.exec("chat", task);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    }
    // A session that never reached the model (nothing listens there), and one of slash
    // commands only.
    let unanswered = env
        .atto()
        .args([
            "exec",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--model",
            "m",
            "lost",
        ])
        .output()
        .unwrap();
    assert_eq!(unanswered.status.code(), Some(2));
    crate::common::run_line_session(&env, "m", &[], "/threads\n");
    let list = env.atto().arg("sessions").output().unwrap();
    let list = String::from_utf8_lossy(&list.stdout).into_owned();
    let rows: Vec<&str> = list.lines().collect();
    assert_eq!(rows.len(), 3, "slash-only sessions are not listed:\n{list}");
    let shorts: Vec<&str> = rows
        .iter()
        .map(|r| r.split_whitespace().next().unwrap())
        .collect();
    assert!(shorts.iter().all(|s| s.len() >= 8), "{shorts:?}");
    let unique: std::collections::HashSet<_> = shorts.iter().collect();
    assert_eq!(unique.len(), 3, "short ids collide:\n{list}");
    assert!(list.contains("never answered  lost"), "{list}");
    // Each short id resumes its own session.
    for short in shorts {
        let show = env
            .atto()
            .args(["sessions", "show", short])
            .output()
            .unwrap();
        assert_eq!(show.status.code(), Some(0), "{short}: {}", stderr(&show));
    }
}

#[test]
fn fork_says_what_it_did_with_a_piped_prompt() {
    let mut env = Env::new();
    env.serve(Script {
        replies: vec![Reply::text("one")],
        ..Script::default()
    });
    assert_eq!(env.exec("chat", "first").status.code(), Some(0));
    let mut child = env
        .atto()
        .args(["fork", "--last"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"and now do more\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("was not sent"), "{}", stderr(&out));
}

#[test]
fn a_command_that_fails_shows_its_exit_status_not_ok() {
    let mut env = Env::new();
    env.serve(Script {
        replies: vec![
            crate::common::calls(vec![crate::common::call(
                "bash",
                serde_json::json!({"command": "no-such-program-here --version"}),
            )]),
            Reply::text("ok"),
        ],
        ..Script::default()
    });
    let out =
        crate::common::run_line_session(&env, "m", &["--permission", "auto-safe"], "run it\n");
    let err = stderr(&out);
    assert!(err.contains("  exit 127 ("), "{err}");
}

#[test]
fn undo_stays_in_its_session_and_a_second_undo_goes_further_back() {
    let mut env = Env::new();
    let write = crate::common::writes;
    env.serve(Script {
        replies: vec![
            write("a.txt"),
            Reply::text("one"),
            write("b.txt"),
            Reply::text("two"),
        ],
        ..Script::default()
    });
    let first = crate::common::run_line_session(
        &env,
        "m",
        &["--permission", "auto-safe"],
        "write a\nwrite b\n",
    );
    assert!(env.repo().join("b.txt").exists(), "{}", stderr(&first));
    // A new, separate session: its /undo has nothing of its own to undo.
    let other = crate::common::run_line_session(
        &env,
        "m",
        &[],
        "/undo\n/restore list\n/restore list all\n",
    );
    let err = stderr(&other);
    assert!(err.contains("changed no files yet"), "{err}");
    assert!(env.repo().join("a.txt").exists() && env.repo().join("b.txt").exists());
    assert!(
        err.contains("[session "),
        "all lists the other session's: {err}"
    );
    assert!(
        err.contains("turn 1   undoes write_file a.txt (a.txt) and after"),
        "{err}"
    );
    // Back in the first session: each /undo goes one turn further back.
    let list = env.atto().arg("sessions").output().unwrap();
    let list = String::from_utf8_lossy(&list.stdout).into_owned();
    let first_id = list.split_whitespace().next().unwrap().to_owned();
    let back =
        crate::common::run_line_session(&env, "m", &["-r", &first_id], "/undo\n/undo\n/undo\n");
    let err = stderr(&back);
    assert!(!env.repo().join("b.txt").exists(), "{err}");
    assert!(!env.repo().join("a.txt").exists(), "{err}");
    assert!(err.contains("undid the file changes of turn 2"), "{err}");
    assert!(err.contains("undid the file changes of turn 1"), "{err}");
    assert!(err.contains("nothing further back to undo"), "{err}");
}

#[test]
fn undo_puts_back_only_what_its_own_turn_changed() {
    let mut env = Env::new();
    let write = crate::common::writes;
    env.serve(Script {
        replies: vec![
            write("mine.txt"),
            Reply::text("one"),
            write("theirs.txt"),
            Reply::text("two"),
        ],
        ..Script::default()
    });
    let first = env.exec("chat", "write mine");
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    let id = crate::common::events(&first)[0]["session_id"]
        .as_str()
        .unwrap()
        .to_owned();
    // Another session, later, in the same workspace.
    let second = env.exec("chat", "write theirs");
    assert_eq!(second.status.code(), Some(0), "{}", stderr(&second));
    let back = crate::common::run_line_session(&env, "m", &["-r", &id], "/undo\n");
    let err = stderr(&back);
    assert!(err.contains("undid the file changes of turn 1"), "{err}");
    assert!(!env.repo().join("mine.txt").exists(), "{err}");
    assert!(
        env.repo().join("theirs.txt").exists(),
        "undo reached into the other session: {err}"
    );
}

#[test]
fn the_summary_lists_what_commands_changed_too() {
    let mut env = Env::new();
    env.write("gone.txt", "x\n");
    env.serve(Script {
        replies: vec![
            crate::common::calls(vec![
                crate::common::call(
                    "write_file",
                    serde_json::json!({"path": "a.txt", "content": "a\n"}),
                ),
                crate::common::call(
                    "bash",
                    serde_json::json!({"command": "echo b > made-by-bash.txt && rm gone.txt"}),
                ),
            ]),
            Reply::text("done"),
        ],
        ..Script::default()
    });
    let out = env.exec("chat", "change things");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let events = crate::common::events(&out);
    let result = events.last().unwrap();
    let changed: Vec<&str> = result["files_changed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(
        changed,
        ["a.txt", "gone.txt", "made-by-bash.txt"],
        "{result}"
    );
}

#[test]
fn a_command_writing_to_a_closed_pipe_exits_quietly() {
    let env = Env::new();
    for args in [&["completion", "bash"][..], &["config", "show"][..]] {
        // A pipe whose reader is already gone: the first write fails with EPIPE.
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = env
            .atto()
            .args(args)
            .stdout(writer)
            .stderr(std::process::Stdio::piped())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        assert!(
            !stderr(&out).contains("panicked"),
            "{args:?}: {}",
            stderr(&out)
        );
    }
}
