//! The edit tools through the front door: `apply_patch` offered to the models trained on
//! it (or by config), applied across files, queued in plan mode and approved whole; and
//! the environment commands see.

use atto_testkit::{Reply, Script};
use serde_json::json;

use crate::common::{Env, call, calls, events, of_type, stderr};

const PATCH: &str = "*** Begin Patch\n\
*** Update File: a.txt\n\
@@\n\
-one\n\
+uno\n\
*** Add File: b.txt\n\
+dos\n\
*** End Patch\n";

/// The tool names offered in request `n`.
fn offered(env: &Env, n: usize) -> Vec<String> {
    env.requests()[n].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn apply_patch_is_offered_to_models_trained_on_it_or_by_config() {
    let mut env = Env::new();
    env.serve(Script::new(vec![
        Reply::text("a"),
        Reply::text("b"),
        Reply::text("c"),
    ]));
    for model in ["gpt-5-codex", "m"] {
        let out = env
            .atto()
            .args([
                "exec",
                "--base-url",
                &env.base("chat"),
                "--model",
                model,
                "hi",
            ])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    }
    assert!(offered(&env, 0).contains(&"apply_patch".to_owned()));
    assert!(!offered(&env, 1).contains(&"apply_patch".to_owned()));
    std::fs::write(
        env.dir.path().join("home/.config/atto/config.toml"),
        "apply_patch = true\n",
    )
    .unwrap();
    let out = env.exec_with(&[], "hi").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(offered(&env, 2).contains(&"apply_patch".to_owned()));
}

#[test]
fn a_patch_applies_across_files_and_in_plan_mode_waits_for_approval() {
    let mut env = Env::new();
    std::fs::write(
        env.dir.path().join("home/.config/atto/config.toml"),
        "apply_patch = true\n",
    )
    .unwrap();
    env.write("a.txt", "one\n");
    let patch = || calls(vec![call("apply_patch", json!({ "input": PATCH }))]);
    env.serve(Script::new(vec![
        patch(),
        Reply::text("queued"),
        patch(),
        Reply::text("done"),
    ]));
    // Plan mode: queued, nothing on disk, the plan names both files.
    let out = env
        .exec_with(
            &["--mode", "plan", "--output-format", "stream-json"],
            "patch it",
        )
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(env.read("a.txt"), "one\n");
    assert!(!env.repo().join("b.txt").exists());
    let queued = of_type(&events(&out), "change_queued").len();
    assert_eq!(queued, 1);
    let shown = env
        .atto()
        .args(["plan", "show", "--session", "latest"])
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&shown.stdout).into_owned();
    assert!(shown.contains("a.txt, b.txt"), "{shown}");
    let approved = env
        .atto()
        .args(["plan", "approve", "--session", "latest"])
        .output()
        .unwrap();
    assert_eq!(approved.status.code(), Some(0), "{}", stderr(&approved));
    assert_eq!(env.read("a.txt"), "uno\n");
    assert_eq!(env.read("b.txt"), "dos\n");
    // Build mode, auto-safe: it runs, atomically.
    env.write("a.txt", "one\n");
    std::fs::remove_file(env.repo().join("b.txt")).unwrap();
    let out = env.exec("chat", "patch it");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(env.read("a.txt"), "uno\n");
    assert_eq!(env.read("b.txt"), "dos\n");
}

#[test]
fn commands_see_harmless_variables_and_the_ones_named_but_no_credentials() {
    let mut env = Env::new();
    std::fs::write(
        env.dir.path().join("home/.config/atto/config.toml"),
        "pass_env = [\"MY_FLAG\"]\n",
    )
    .unwrap();
    env.serve(Script::new(vec![
        calls(vec![call(
            "bash",
            json!({"command": "echo \"flag=$MY_FLAG db=$DATABASE_URL pat=$GH_PAT ssh=$SSH_AUTH_SOCK home=${HOME:+set}\""}),
        )]),
        Reply::text("ok"),
    ]));
    let out = env
        .atto()
        .env("MY_FLAG", "on")
        .env("DATABASE_URL", "postgres://u:secret@h/db")
        .env("GH_PAT", "ghp_secret")
        .env("SSH_AUTH_SOCK", "/tmp/agent.sock")
        .args(["exec", "--permission", "auto-safe"])
        .args(["--base-url", &env.base("chat"), "--model", "m", "env"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let result = env.requests()[1].body["messages"].to_string();
    assert!(
        result.contains("flag=on db= pat= ssh= home=set"),
        "{result}"
    );
}
