//! The server failing under atto: killed in the middle of a streamed reply, and a prompt
//! larger than its context window.

use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::fixture::{
    Limits, Server, ServerOptions, WIRES, Workspace, events, of_type, result, stream_lines,
    transcript, wait_bounded,
};

#[test]
fn a_server_killed_mid_stream_ends_in_a_retryable_failure_saying_the_connection_was_lost() {
    let Some(server) = Server::start(ServerOptions::default()) else {
        return;
    };
    let ws = Workspace::new(
        &server,
        Limits {
            max_rounds: 2,
            max_output_tokens: 2000,
        },
    );
    let mut child = ws
        .exec_command(
            "chat",
            "stream-json",
            &[],
            "Write a very long story about a dragon, at least 2000 words.",
        )
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let lines = stream_lines(&mut child);
    let mut seen = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut deltas = 0;
    while deltas < 3 {
        let left = deadline.saturating_duration_since(Instant::now());
        let line = lines
            .recv_timeout(left)
            .unwrap_or_else(|_| panic!("no deltas within a minute; saw {seen:#?}"));
        if line.contains("\"type\":\"text_delta\"") {
            deltas += 1;
        }
        seen.push(line);
    }
    server.kill();

    let mut out = wait_bounded(child, Duration::from_secs(60));
    // The reader thread holds stdout: collect the rest of the lines from it.
    seen.extend(lines.iter());
    out.stdout = (seen.join("\n") + "\n").into_bytes();
    let evs = events(&out);
    assert_eq!(out.status.code(), Some(75), "{}", transcript(&out));
    let res = result(&evs);
    assert_eq!(res["status"], "failed", "{}", transcript(&out));
    assert_eq!(res["failure"], "transient", "{}", transcript(&out));
    let error = res["error"].as_str().unwrap().to_lowercase();
    assert!(
        error.contains("connection")
            && ["lost", "broke", "dropped", "closed", "reset"]
                .iter()
                .any(|w| error.contains(w)),
        "the message says the connection was lost: {error}"
    );
}

#[test]
fn a_prompt_over_the_context_window_is_reported_as_a_context_overflow() {
    let Some(server) = Server::start(ServerOptions {
        ctx: 512,
        ..ServerOptions::default()
    }) else {
        return;
    };
    let ws = Workspace::new(
        &server,
        Limits {
            max_rounds: 2,
            max_output_tokens: 24,
        },
    );
    let prompt = format!(
        "Summarize this text. {}",
        "The quick brown fox jumps over the lazy dog. ".repeat(120)
    );
    for wire in WIRES {
        let out = ws.exec(wire, "stream-json", &[], &prompt);
        let code = out.status.code();
        assert!(
            code == Some(1) || code == Some(2),
            "{wire}: not a retryable failure: {}",
            transcript(&out)
        );
        let evs = events(&out);
        assert!(
            of_type(&evs, "retry").is_empty(),
            "{wire}: retrying cannot help: {}",
            transcript(&out)
        );
        let res = result(&evs);
        assert_eq!(res["status"], "failed", "{wire}: {}", transcript(&out));
        let error = res["error"].as_str().unwrap().to_lowercase();
        assert!(
            error.contains("context"),
            "{wire}: the message names the context: {error}"
        );
        // Not the advice for a malformed request: the request was fine, just too long.
        assert!(
            !error.contains("check the model name"),
            "{wire}: reported as a context overflow: {error}"
        );
    }
}
