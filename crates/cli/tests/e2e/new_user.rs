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
        let out = env
            .atto()
            .args(["exec", "--mode", mode])
            .args(["--base-url", &env.base("chat"), "--model", "m", "look"])
            .output()
            .unwrap();
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
    let out = env
        .atto()
        .args([
            "exec",
            "--base-url",
            &env.base("chat"),
            "--model",
            "m",
            "hi",
        ])
        .output()
        .unwrap();
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
