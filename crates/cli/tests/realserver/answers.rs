//! A plain answer on every wire in every output format: the structure of what `atto exec`
//! prints (text, the `result` object, the stream-json lines) when the peer is llama-server.

use serde_json::Value;

use crate::fixture::{
    Limits, Server, ServerOptions, Workspace, events, of_type, result, stderr, transcript,
};

const PROMPT: &str = "What is the capital of France?";
const MAX_OUTPUT: u64 = 24;

fn answers_in_every_format(wire: &str) {
    let Some(server) = Server::start(ServerOptions::default()) else {
        return;
    };
    let ws = Workspace::new(
        &server,
        Limits {
            max_rounds: 3,
            max_output_tokens: MAX_OUTPUT as u32,
        },
    );

    // text: the answer on stdout, the summary (with the unknown cost) on stderr.
    let out = ws.exec(wire, "text", &[], PROMPT);
    assert_eq!(out.status.code(), Some(0), "{}", transcript(&out));
    assert!(
        !String::from_utf8_lossy(&out.stdout).trim().is_empty(),
        "{}",
        transcript(&out)
    );
    assert!(
        stderr(&out).contains("cost unknown"),
        "{}",
        transcript(&out)
    );

    // json: one `result` object.
    let out = ws.exec(wire, "json", &[], PROMPT);
    assert_eq!(out.status.code(), Some(0), "{}", transcript(&out));
    let evs = events(&out);
    assert_eq!(evs.len(), 1, "{}", transcript(&out));
    check_result(result(&evs), &out);

    // stream-json: the documented line types, in order, and deltas that add up to the text.
    let out = ws.exec(wire, "stream-json", &[], PROMPT);
    assert_eq!(out.status.code(), Some(0), "{}", transcript(&out));
    let evs = events(&out);
    assert!(
        evs.iter()
            .all(|e| e["schema"] == "atto.exec" && e["schema_version"] == 1),
        "{}",
        transcript(&out)
    );
    let started = &evs[0];
    assert_eq!(started["type"], "session_started");
    assert_eq!(started["wire"], wire);
    assert_eq!(started["provider"], "local");
    assert_eq!(started["model"], "smollm2");
    assert_eq!(evs[1]["type"], "turn_started");
    let usage = of_type(&evs, "usage");
    assert_eq!(usage.len(), 1, "one model call: {}", transcript(&out));
    assert!(usage[0]["usage"]["output_tokens"].as_u64().unwrap() > 0);
    assert_eq!(usage[0]["cost_usd"], Value::Null, "no known price: unknown");
    assert_eq!(of_type(&evs, "turn_completed").len(), 1);
    assert_eq!(evs[evs.len() - 2]["type"], "session_ended");
    let res = result(&evs);
    check_result(res, &out);
    let streamed: String = of_type(&evs, "text_delta")
        .iter()
        .map(|e| e["text"].as_str().unwrap())
        .collect();
    assert_eq!(
        res["text"].as_str().unwrap(),
        streamed,
        "the result text is what was streamed, once: {}",
        transcript(&out)
    );
}

fn check_result(res: &Value, out: &std::process::Output) {
    assert_eq!(res["status"], "completed", "{}", transcript(out));
    assert!(res["session_id"].as_str().is_some_and(|s| !s.is_empty()));
    assert_eq!(res["turns"], 1);
    assert_eq!(res["rounds"], 1);
    assert!(
        res["text"].as_str().is_some_and(|t| !t.trim().is_empty()),
        "{}",
        transcript(out)
    );
    let output_tokens = res["usage"]["output_tokens"].as_u64().unwrap();
    assert!(
        (1..=MAX_OUTPUT).contains(&output_tokens),
        "{}",
        transcript(out)
    );
    let input = res["usage"]["input_tokens"].as_u64().unwrap()
        + res["usage"]["cache_read_tokens"].as_u64().unwrap();
    assert!(input > 0, "{}", transcript(out));
    assert_eq!(res["cost_usd"], Value::Null, "{}", transcript(out));
    assert!(res["duration_ms"].as_u64().is_some());
    assert!(res.get("error").is_none_or(Value::is_null));
}

#[test]
fn chat_answers_in_text_json_and_stream_json() {
    answers_in_every_format("chat");
}

#[test]
fn responses_answers_in_text_json_and_stream_json() {
    answers_in_every_format("responses");
}

#[test]
fn anthropic_answers_in_text_json_and_stream_json() {
    answers_in_every_format("anthropic");
}
