//! Bad input outside the model: each is a one-line error naming the problem, exit 2,
//! and none touches the network.

use crate::common::{Env, stderr};

fn one_line_error(out: &std::process::Output, needle: &str) {
    assert_eq!(out.status.code(), Some(2), "{}", stderr(out));
    let err = stderr(out);
    assert_eq!(err.trim_end().lines().count(), 1, "not one line: {err}");
    assert!(err.contains(needle), "{needle:?} not in {err}");
}

#[test]
fn unknown_provider() {
    let env = Env::new();
    let out = env
        .atto()
        .args(["exec", "--provider", "nope", "hi"])
        .output()
        .unwrap();
    one_line_error(&out, "unknown provider 'nope'");
}

#[test]
fn malformed_config() {
    let env = Env::new();
    let bad = env.dir.path().join("bad.toml");
    std::fs::write(&bad, "provider = [unclosed\n").unwrap();
    let out = env
        .atto()
        .arg("exec")
        .arg("--config")
        .arg(&bad)
        .arg("hi")
        .output()
        .unwrap();
    one_line_error(&out, "bad.toml");
}

#[test]
fn base_url_that_refuses_connections() {
    let env = Env::new();
    // Bind then drop a listener: nothing listens on that port any more.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/v1");
    let out = env
        .atto()
        .args(["exec", "--base-url", &url, "--model", "m", "hi"])
        .output()
        .unwrap();
    one_line_error(&out, &format!("127.0.0.1:{port}"));
}

#[test]
fn missing_prompt_file() {
    let env = Env::new();
    let out = env
        .atto()
        .args(["exec", "--prompt-file", "/no/such/prompt.md"])
        .output()
        .unwrap();
    one_line_error(&out, "/no/such/prompt.md");
}

#[test]
fn no_provider_configured_says_how_to_set_one_up() {
    let env = Env::new();
    let out = env.atto().args(["exec", "hi"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("ANTHROPIC_API_KEY") && err.contains("OPENAI_API_KEY"),
        "{err}"
    );
    assert!(err.contains("atto demo"), "{err}");
}

#[test]
fn version_and_help_touch_nothing() {
    let env = Env::new();
    // An unreadable config path and no HOME: --version and --help must not care.
    let out = env
        .atto()
        .env("XDG_CONFIG_HOME", "/nonexistent")
        .arg("--version")
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("atto "));
    let out = env.atto().arg("--help").output().unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("exec"));
}
