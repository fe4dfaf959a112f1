//! A tool round trip on every wire: the model (told to copy a `<tool_call>`) calls a
//! non-idempotent `bash` command, atto runs it once, sends the result back and the model
//! answers. `log.txt` counts the runs.

use crate::fixture::{
    Limits, Server, ServerOptions, TOOL_PROMPT, Workspace, events, of_type, result, transcript,
};

fn round_trip(wire: &str) {
    let Some(server) = Server::start(ServerOptions {
        tools: true,
        ..ServerOptions::default()
    }) else {
        return;
    };
    // 40 tokens hold one call; the model would otherwise repeat it until the limit.
    let ws = Workspace::new(
        &server,
        Limits {
            max_rounds: 4,
            max_output_tokens: 40,
        },
    );
    let out = ws.exec(
        wire,
        "stream-json",
        &["--permission", "auto-safe"],
        TOOL_PROMPT,
    );
    assert_eq!(out.status.code(), Some(0), "{}", transcript(&out));

    let log = std::fs::read_to_string(ws.repo().join("log.txt")).unwrap_or_default();
    assert_eq!(log, "run\n", "the command ran once: {}", transcript(&out));

    let evs = events(&out);
    let started = of_type(&evs, "tool_call_started");
    assert_eq!(started.len(), 1, "one tool call: {}", transcript(&out));
    assert_eq!(started[0]["name"], "bash");
    assert_eq!(started[0]["arguments"]["command"], "echo run >> log.txt");
    let call_id = started[0]["call_id"].as_str().unwrap();
    assert!(!call_id.is_empty());
    let finished = of_type(&evs, "tool_call_finished");
    assert_eq!(finished.len(), 1, "{}", transcript(&out));
    assert_eq!(finished[0]["call_id"], call_id);
    assert_eq!(finished[0]["status"], "ok", "{}", transcript(&out));

    let res = result(&evs);
    assert_eq!(res["status"], "completed", "{}", transcript(&out));
    assert!(res["rounds"].as_u64().unwrap() >= 2, "the result went back");
    assert!(res["cost_usd"].is_null());
}

#[test]
fn chat_runs_a_bash_call_once() {
    round_trip("chat");
}

#[test]
fn responses_runs_a_bash_call_once() {
    round_trip("responses");
}

#[test]
fn anthropic_runs_a_bash_call_once() {
    round_trip("anthropic");
}
