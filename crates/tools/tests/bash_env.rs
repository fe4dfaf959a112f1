//! bash passes commands only an allowlist of inherited variables, plus the ones named.
//!
//! Its own test binary with a single test: setting process environment variables is
//! only sound while no other thread reads them.

// Tests may unwrap: a panic is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use atto_tools::{BashTool, Tool};
use common::Ws;
use serde_json::json;

#[test]
fn commands_see_only_the_allowlist_and_named_variables() {
    // SAFETY: this binary runs only this test, and no other thread exists yet: the
    // runtime is built below.
    #[allow(
        unsafe_code,
        reason = "set_var is unsafe in edition 2024; single-threaded here"
    )]
    unsafe {
        std::env::set_var("FOO_API_KEY", "sk-123");
        std::env::set_var("NPM_AUTH", "a");
        std::env::set_var("DATABASE_URL", "postgres://u:p@h/db");
        std::env::set_var("SSH_AUTH_SOCK", "/tmp/agent.sock");
        std::env::set_var("BASH_ENV", "/tmp/evil.sh");
        std::env::set_var("ATTO_TEST_PLAIN", "named");
        std::env::set_var("LC_ATTO_TEST", "c");
        std::env::remove_var("TERM");
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let ws = Ws::new();
    let command = "echo \"[${FOO_API_KEY-unset}] [${NPM_AUTH-unset}] [${DATABASE_URL-unset}] \
                   [${SSH_AUTH_SOCK-unset}] [${BASH_ENV-unset}] [${ATTO_TEST_PLAIN-unset}] \
                   [$LC_ATTO_TEST] [$TERM] [$PAGER] [${PATH:+path}]\"";
    let out = rt.block_on(ws.ok("bash", json!({ "command": command })));
    assert_eq!(
        out,
        "exit code: 0\n[unset] [unset] [unset] [unset] [unset] [unset] [c] [dumb] [cat] [path]\n"
    );

    // Variables the user names pass too; the others stay out.
    let tool = BashTool::with_env(vec!["ATTO_TEST_PLAIN".into(), "DATABASE_URL".into()]);
    let out = rt
        .block_on(tool.run(json!({ "command": command }), &ws.ctx))
        .unwrap();
    assert_eq!(
        out.content,
        "exit code: 0\n[unset] [unset] [postgres://u:p@h/db] [unset] [unset] [named] [c] [dumb] [cat] [path]\n"
    );
}
