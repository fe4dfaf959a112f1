//! bash strips secret-looking variables from the inherited environment.
//!
//! Its own test binary with a single test: setting process environment variables is
//! only sound while no other thread reads them.

// Tests may unwrap: a panic is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::Ws;
use serde_json::json;

#[test]
fn secret_variables_are_not_inherited() {
    // SAFETY: this binary runs only this test, and no other thread exists yet: the
    // runtime is built below.
    #[allow(
        unsafe_code,
        reason = "set_var is unsafe in edition 2024; single-threaded here"
    )]
    unsafe {
        std::env::set_var("FOO_API_KEY", "sk-123");
        std::env::set_var("my_token", "t");
        std::env::set_var("AWS_REGION", "eu");
        std::env::set_var("ATTO_TEST_PLAIN", "visible");
        std::env::remove_var("TERM");
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let ws = Ws::new();
    let out = rt.block_on(ws.ok(
        "bash",
        json!({"command": "echo \"[${FOO_API_KEY-unset}] [${my_token-unset}] [${AWS_REGION-unset}] [$ATTO_TEST_PLAIN] [$TERM] [${PATH:+path}]\""}),
    ));
    assert_eq!(
        out,
        "exit code: 0\n[unset] [unset] [unset] [visible] [dumb] [path]\n"
    );
}
