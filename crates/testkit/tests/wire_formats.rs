//! End-to-end: each wire format, streamed and not, over a real socket.

// Tests may unwrap: a panic is the failure report.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use atto_testkit::{Reply, Script, ScriptToolCall, ScriptUsage};
use common::{events, post, start};
use serde_json::{Value, json};

fn tool_reply() -> Reply {
    Reply {
        thinking: Some("I should read the file first.".into()),
        text: Some("Reading `src/lib.rs` — één moment 🦀".into()),
        tool_calls: vec![
            ScriptToolCall {
                id: None,
                name: "read_file".into(),
                arguments: json!({"path": "src/lib.rs"}),
                raw_arguments: None,
            },
            ScriptToolCall {
                id: None,
                name: "grep".into(),
                arguments: json!({"pattern": "fn main", "path": "."}),
                raw_arguments: None,
            },
        ],
        usage: Some(ScriptUsage {
            input_tokens: 1000,
            output_tokens: 42,
            cache_read_tokens: 800,
            cache_write_tokens: 50,
        }),
        ..Reply::default()
    }
}

#[tokio::test]
async fn chat_completions_stream() {
    let server = start(Script::new(vec![tool_reply(), Reply::text("done")])).await;
    let req = json!({"model": "gpt-x", "stream": true, "stream_options": {"include_usage": true}, "messages": []});
    let resp = post(&server, "/v1/chat/completions", &req.to_string()).await;
    assert_eq!(resp.headers["transfer-encoding"], "chunked");
    let evs = events(&resp);
    assert!(evs.iter().all(|e| e.name.is_none()));
    assert_eq!(evs.last().unwrap().data, "[DONE]");
    let chunks: Vec<Value> = evs[..evs.len() - 1].iter().map(|e| e.json()).collect();
    assert_eq!(chunks[0]["choices"][0]["delta"]["role"], "assistant");
    assert!(
        chunks
            .iter()
            .all(|c| c["model"] == "gpt-x" && c["id"] == chunks[0]["id"])
    );
    let content: String = chunks
        .iter()
        .filter_map(|c| c["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert_eq!(content, "Reading `src/lib.rs` — één moment 🦀");
    let content_deltas = chunks
        .iter()
        .filter(|c| {
            c["choices"][0]["delta"]["content"]
                .as_str()
                .is_some_and(|s| !s.is_empty())
        })
        .count();
    assert!(content_deltas > 2, "text must arrive in several deltas");
    let reasoning: String = chunks
        .iter()
        .filter_map(|c| c["choices"][0]["delta"]["reasoning_content"].as_str())
        .collect();
    assert_eq!(reasoning, "I should read the file first.");
    let mut calls: Vec<(String, String, String)> = Vec::new();
    for c in &chunks {
        for tc in c["choices"][0]["delta"]["tool_calls"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let i = tc["index"].as_u64().unwrap() as usize;
            if i == calls.len() {
                calls.push((
                    tc["id"].as_str().unwrap().into(),
                    tc["function"]["name"].as_str().unwrap().into(),
                    String::new(),
                ));
            }
            calls[i]
                .2
                .push_str(tc["function"]["arguments"].as_str().unwrap());
        }
    }
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].0, "call_1_0");
    assert_eq!(calls[1].1, "grep");
    assert_eq!(
        serde_json::from_str::<Value>(&calls[1].2).unwrap(),
        json!({"pattern": "fn main", "path": "."})
    );
    assert_eq!(
        chunks[chunks.len() - 2]["choices"][0]["finish_reason"],
        "tool_calls"
    );
    let usage = &chunks[chunks.len() - 1];
    assert_eq!(usage["choices"], json!([]));
    assert_eq!(usage["usage"]["prompt_tokens"], 1800);
    assert_eq!(usage["usage"]["completion_tokens"], 42);
    assert_eq!(
        usage["usage"]["prompt_tokens_details"]["cached_tokens"],
        800
    );

    // The second request gets the second reply, non-streaming.
    let resp = post(
        &server,
        "/v1/chat/completions",
        r#"{"model":"gpt-x","messages":[]}"#,
    )
    .await;
    assert_eq!(resp.status, 200);
    assert_eq!(resp.headers["content-type"], "application/json");
    let body = resp.json();
    assert_eq!(body["object"], "chat.completion");
    assert_eq!(body["choices"][0]["message"]["content"], "done");
    assert_eq!(body["choices"][0]["finish_reason"], "stop");
    assert_eq!(server.replies_served(), 2);
}

#[tokio::test]
async fn anthropic_messages_stream() {
    let server = start(Script::new(vec![tool_reply(), tool_reply()])).await;
    let resp = post(
        &server,
        "/v1/messages",
        r#"{"model":"claude-x","stream":true,"max_tokens":100,"messages":[]}"#,
    )
    .await;
    let evs = events(&resp);
    let names: Vec<&str> = evs.iter().map(|e| e.name.as_deref().unwrap()).collect();
    let data: Vec<Value> = evs.iter().map(|e| e.json()).collect();
    for (n, d) in names.iter().zip(&data) {
        assert_eq!(d["type"], *n, "event name and data type agree");
    }
    assert_eq!(names[0], "message_start");
    assert_eq!(names[1], "ping");
    assert_eq!(names[names.len() - 2..], ["message_delta", "message_stop"]);
    let msg = &data[0]["message"];
    assert_eq!(
        (msg["role"].as_str(), msg["model"].as_str()),
        (Some("assistant"), Some("claude-x"))
    );
    assert_eq!(msg["usage"]["input_tokens"], 1000);
    assert_eq!(msg["usage"]["cache_read_input_tokens"], 800);
    assert_eq!(msg["usage"]["cache_creation_input_tokens"], 50);
    // Blocks: thinking 0, text 1, tool_use 2 and 3, each start … stop in order.
    let mut open: Option<u64> = None;
    let mut kinds = Vec::new();
    let mut text = String::new();
    let mut thinking = String::new();
    let mut sig = String::new();
    let mut json_parts: Vec<String> = Vec::new();
    for d in &data {
        match d["type"].as_str().unwrap() {
            "content_block_start" => {
                assert!(open.is_none());
                open = d["index"].as_u64();
                assert_eq!(open, Some(kinds.len() as u64));
                kinds.push(d["content_block"]["type"].as_str().unwrap().to_owned());
                if d["content_block"]["type"] == "tool_use" {
                    assert_eq!(d["content_block"]["input"], json!({}));
                    json_parts.push(String::new());
                }
            }
            "content_block_delta" => {
                assert_eq!(d["index"].as_u64(), open);
                let delta = &d["delta"];
                match delta["type"].as_str().unwrap() {
                    "thinking_delta" => thinking.push_str(delta["thinking"].as_str().unwrap()),
                    "signature_delta" => sig.push_str(delta["signature"].as_str().unwrap()),
                    "text_delta" => text.push_str(delta["text"].as_str().unwrap()),
                    "input_json_delta" => json_parts
                        .last_mut()
                        .unwrap()
                        .push_str(delta["partial_json"].as_str().unwrap()),
                    other => panic!("unexpected delta {other}"),
                }
            }
            "content_block_stop" => assert_eq!(open.take(), d["index"].as_u64()),
            _ => {}
        }
    }
    assert_eq!(kinds, ["thinking", "text", "tool_use", "tool_use"]);
    assert_eq!(thinking, "I should read the file first.");
    assert_eq!(sig, "sig-1");
    assert_eq!(text, "Reading `src/lib.rs` — één moment 🦀");
    assert_eq!(
        serde_json::from_str::<Value>(&json_parts[0]).unwrap(),
        json!({"path": "src/lib.rs"})
    );
    let md = &data[data.len() - 2];
    assert_eq!(md["delta"]["stop_reason"], "tool_use");
    assert_eq!(md["usage"]["output_tokens"], 42);

    let resp = post(
        &server,
        "/v1/messages",
        r#"{"model":"claude-x","max_tokens":100,"messages":[]}"#,
    )
    .await;
    let body = resp.json();
    assert_eq!(body["type"], "message");
    assert_eq!(body["stop_reason"], "tool_use");
    let types: Vec<&str> = body["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["type"].as_str().unwrap())
        .collect();
    assert_eq!(types, ["thinking", "text", "tool_use", "tool_use"]);
    assert_eq!(body["content"][0]["signature"], "sig-2");
    assert_eq!(body["content"][3]["id"], "call_2_1");
    assert_eq!(
        body["content"][3]["input"],
        json!({"pattern": "fn main", "path": "."})
    );
}

#[tokio::test]
async fn openai_responses_stream() {
    let server = start(Script::new(vec![tool_reply(), tool_reply()])).await;
    let resp = post(
        &server,
        "/v1/responses",
        r#"{"model":"gpt-r","stream":true,"input":[]}"#,
    )
    .await;
    let evs = events(&resp);
    let data: Vec<Value> = evs.iter().map(|e| e.json()).collect();
    for (i, (e, d)) in evs.iter().zip(&data).enumerate() {
        assert_eq!(d["type"], e.name.as_deref().unwrap());
        assert_eq!(d["sequence_number"], i);
    }
    assert_eq!(data[0]["type"], "response.created");
    assert_eq!(data[1]["type"], "response.in_progress");
    let last = data.last().unwrap();
    assert_eq!(last["type"], "response.completed");
    let r = &last["response"];
    assert_eq!(
        (r["status"].as_str(), r["model"].as_str()),
        (Some("completed"), Some("gpt-r"))
    );
    assert_eq!(r["usage"]["input_tokens"], 1800);
    assert_eq!(r["usage"]["input_tokens_details"]["cached_tokens"], 800);
    assert_eq!(r["usage"]["output_tokens"], 42);
    let output_types: Vec<&str> = r["output"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        output_types,
        ["reasoning", "message", "function_call", "function_call"]
    );

    let of_type = |t: &str| data.iter().filter(|d| d["type"] == t).collect::<Vec<_>>();
    let summary: String = of_type("response.reasoning_summary_text.delta")
        .iter()
        .map(|d| d["delta"].as_str().unwrap())
        .collect();
    assert_eq!(summary, "I should read the file first.");
    let text: String = of_type("response.output_text.delta")
        .iter()
        .map(|d| d["delta"].as_str().unwrap())
        .collect();
    assert_eq!(text, "Reading `src/lib.rs` — één moment 🦀");
    assert_eq!(of_type("response.output_text.done")[0]["text"], text);
    let added = of_type("response.output_item.added");
    let fc = &added[3]["item"];
    assert_eq!(
        (
            fc["type"].as_str(),
            fc["name"].as_str(),
            fc["call_id"].as_str()
        ),
        (Some("function_call"), Some("grep"), Some("call_1_1"))
    );
    let args: String = of_type("response.function_call_arguments.delta")
        .iter()
        .filter(|d| d["item_id"] == fc["id"] && d["output_index"] == 3)
        .map(|d| d["delta"].as_str().unwrap())
        .collect();
    assert_eq!(
        serde_json::from_str::<Value>(&args).unwrap(),
        json!({"pattern": "fn main", "path": "."})
    );
    let args_done = of_type("response.function_call_arguments.done");
    assert_eq!(args_done[1]["arguments"], args);
    assert_eq!(of_type("response.output_item.done").len(), 4);

    let resp = post(&server, "/v1/responses", r#"{"model":"gpt-r","input":[]}"#).await;
    let body = resp.json();
    assert_eq!(body["object"], "response");
    assert_eq!(body["status"], "completed");
    assert_eq!(
        body["output"][1]["content"][0]["text"],
        "Reading `src/lib.rs` — één moment 🦀"
    );
    assert_eq!(body["output"][2]["arguments"], r#"{"path":"src/lib.rs"}"#);
}
