//! Headless conveniences: `atto -p` runs one task like `atto exec`, `--profile` applies a
//! `[profiles.NAME]` table (flags still win), `atto config show` says where each value
//! came from, completions print, and `--version` names its commit.

use atto_testkit::{Reply, Script};

use crate::common::{Env, stderr};

fn config(env: &Env, text: &str) {
    std::fs::write(env.dir.path().join("home/.config/atto/config.toml"), text).unwrap();
}

#[test]
fn dash_p_runs_one_task_and_prints_the_answer() {
    let mut env = Env::new();
    env.serve(Script::new(vec![Reply::text("the answer is 42")]));
    let out = env
        .atto()
        .args([
            "--base-url",
            &env.base("chat"),
            "--model",
            "m",
            "-p",
            "what is it?",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("the answer is 42"));
    assert!(env.requests()[0].body.to_string().contains("what is it?"));
    // -p with a subcommand is a usage error.
    let out = env.atto().args(["-p", "x", "sessions"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_profile_sets_model_and_mode_and_a_flag_still_wins() {
    let mut env = Env::new();
    env.serve(Script::new(vec![Reply::text("ok"), Reply::text("ok")]));
    config(
        &env,
        "[profiles.cheap]\nmodel = \"small-model\"\nmode = \"review\"\n\n[profiles.other]\nmodel \
         = \"x\"\n",
    );
    let out = env
        .atto()
        .args(["--base-url", &env.base("chat"), "--profile", "cheap"])
        .args(["exec", "--output-format", "stream-json", "look"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("\"mode\":\"review\""), "{stdout}");
    assert_eq!(env.requests()[0].body["model"], "small-model");
    let out = env
        .atto()
        .args([
            "--base-url",
            &env.base("chat"),
            "--profile",
            "cheap",
            "--model",
            "big",
        ])
        .args(["exec", "look"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(env.requests()[1].body["model"], "big");
    // An unknown profile names the defined ones.
    let out = env
        .atto()
        .args(["--profile", "nope", "exec", "x"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("no profile 'nope' (defined: cheap, other)"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn config_show_names_where_each_value_came_from() {
    let env = Env::new();
    config(
        &env,
        "model = \"file-model\"\npermission_mode = \"strict\"\n\n[profiles.p]\nmodel = \
         \"profile-model\"\n",
    );
    let out = env.atto().args(["config", "show"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("file-model"), "{text}");
    assert!(text.contains("(config "), "{text}");
    let out = env
        .atto()
        .args(["--profile", "p", "config", "show"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.lines().any(|l| l.starts_with("model")
            && l.contains("profile-model")
            && l.contains("(profile p)")),
        "{text}"
    );
    let out = env
        .atto()
        .args(["--profile", "p", "--model", "flag-model", "config", "show"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.lines()
            .any(|l| l.starts_with("model") && l.contains("flag-model") && l.contains("(flag)")),
        "{text}"
    );
    assert!(
        text.lines()
            .any(|l| l.starts_with("permission_mode") && l.contains("strict")),
        "{text}"
    );
}

#[test]
fn config_show_lists_every_key_of_the_schema() {
    let env = Env::new();
    config(&env, "[retry]\nmax_attempts = 2\n");
    let out = env.atto().args(["config", "show"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    for key in atto_config::KEYS {
        assert!(
            text.lines()
                .any(|l| l.split_whitespace().next() == Some(key.name)),
            "{} is missing: {text}",
            key.name
        );
    }
    assert!(
        text.lines().any(|l| l.starts_with("retry.max_attempts")
            && l.contains(" 2 ")
            && l.contains("(config ")),
        "{text}"
    );
}

#[test]
fn completions_print_and_the_version_names_its_commit() {
    let env = Env::new();
    let out = env.atto().args(["completion", "bash"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("_atto()"));
    let out = env.atto().arg("--version").output().unwrap();
    let version = String::from_utf8_lossy(&out.stdout);
    let commit = std::process::Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    let commit = String::from_utf8_lossy(&commit.stdout).trim().to_owned();
    assert!(
        version.contains(&format!("({commit})")),
        "{version} vs {commit}"
    );
}

#[test]
fn config_shows_and_changes_settings_and_loosening_needs_a_confirmation() {
    let mut env = Env::new();
    env.serve(Script::new(vec![Reply::text("ok")]));
    let out = crate::common::run_line_session(
        &env,
        "m",
        &["--permission", "interactive"],
        "/config\n/config permission yolo\n/config approval never\n/config permission \
         auto-safe confirm\n/config trust on\n/config bogus 1\n/config max_rounds 0\n/config \
         max_rounds 7\n/config\nhi\n",
    );
    let err = stderr(&out);
    assert!(err.contains("permission  interactive"), "{err}");
    assert!(
        err.contains("permission yolo loosens safety (interactive → yolo"),
        "{err}"
    );
    assert!(
        err.contains("To confirm: /config permission yolo confirm"),
        "{err}"
    );
    // Tightening needs no confirmation; the confirmed loosening applies.
    assert!(err.contains("permission  auto-safe"), "{err}");
    assert!(err.contains("trust on loosens safety"), "{err}");
    assert!(err.contains("unknown setting 'bogus'"), "{err}");
    assert!(err.contains("max_rounds takes a positive number"), "{err}");
    assert!(err.contains("max_rounds  7"), "{err}");
}
