//! `atto --plain`: a prompt on stdin is answered by the real model, then `/exit` ends it.

use std::io::Write as _;
use std::process::Stdio;
use std::time::Duration;

use crate::fixture::{Limits, Server, ServerOptions, Workspace, stderr, transcript, wait_bounded};

#[test]
fn the_plain_session_answers_a_prompt_from_stdin() {
    let Some(server) = Server::start(ServerOptions::default()) else {
        return;
    };
    let ws = Workspace::new(
        &server,
        Limits {
            max_rounds: 2,
            max_output_tokens: 24,
        },
    );
    let mut child = ws
        .atto()
        .arg("--plain")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Small enough for the pipe's buffer: written whole before the child reads.
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"What is the capital of France?\n/exit\n")
        .unwrap();
    let out = wait_bounded(child, Duration::from_secs(120));
    assert_eq!(out.status.code(), Some(0), "{}", transcript(&out));
    assert!(
        !String::from_utf8_lossy(&out.stdout).trim().is_empty(),
        "the answer is on stdout: {}",
        transcript(&out)
    );
    let err = stderr(&out);
    assert!(!err.contains("error"), "{}", transcript(&out));
    assert!(err.contains("cost unknown"), "{}", transcript(&out));
}
