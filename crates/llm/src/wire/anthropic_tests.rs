//! Anthropic Messages decode and request-body tests, on streams in Anthropic's
//! published event format.

use atto_protocol::{AssistantPart, StopReason, ToolCall, Usage};

use super::*;
use crate::Wire;
use crate::wire::testutil::{decode, sample_request, text_of};

/// Thinking (signed), text, and two tool calls with arguments in many fragments.
const FULL: &str = r#"event: message_start
data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[],"stop_reason":null,"usage":{"input_tokens":12,"cache_creation_input_tokens":2000,"cache_read_input_tokens":30000,"output_tokens":1}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}

event: ping
data: {"type": "ping"}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Read main "}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"first."}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQBCgIYAh"}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: content_block_start
data: {"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Checking — "}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"now."}}

event: content_block_stop
data: {"type":"content_block_stop","index":1}

event: content_block_start
data: {"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_01","name":"read","input":{}}}

event: content_block_delta
data: {"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"path\": \"sr"}}

event: content_block_delta
data: {"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"c/main.rs\"}"}}

event: content_block_stop
data: {"type":"content_block_stop","index":2}

event: content_block_start
data: {"type":"content_block_start","index":3,"content_block":{"type":"tool_use","id":"toolu_02","name":"ls","input":{}}}

event: content_block_stop
data: {"type":"content_block_stop","index":3}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":89}}

event: message_stop
data: {"type":"message_stop"}

"#;

#[test]
fn full_stream_decodes_in_block_order() {
    let (updates, result) = decode(Wire::Anthropic, FULL);
    let r = result.unwrap();
    assert_eq!(r.stop, StopReason::ToolUse);
    assert_eq!(r.model, "claude-sonnet-4-5-20250929");
    assert_eq!(
        r.parts,
        vec![
            AssistantPart::Thinking {
                text: "Read main first.".into(),
                signature: Some("EqQBCgIYAh".into())
            },
            AssistantPart::Text {
                text: "Checking — now.".into()
            },
            AssistantPart::ToolCall(ToolCall {
                id: "toolu_01".into(),
                name: "read".into(),
                arguments: r#"{"path": "src/main.rs"}"#.into()
            }),
            AssistantPart::ToolCall(ToolCall {
                id: "toolu_02".into(),
                name: "ls".into(),
                arguments: "{}".into()
            }),
        ]
    );
    assert_eq!(
        r.usage,
        Usage {
            input_tokens: 12,
            output_tokens: 89,
            cache_read_tokens: 30000,
            cache_write_tokens: 2000
        }
    );
    assert_eq!(text_of(&updates), "Checking — now.");
    assert!(updates.contains(&StreamUpdate::ToolCallBegin {
        id: "toolu_02".into(),
        name: "ls".into()
    }));
}

#[test]
fn crlf_and_keepalives_decode_the_same() {
    let noisy = FULL
        .replace("\n\n", "\n\n: keepalive\n\n")
        .replace('\n', "\r\n");
    let (_, a) = decode(Wire::Anthropic, FULL);
    let (_, b) = decode(Wire::Anthropic, &noisy);
    assert_eq!(a.unwrap(), b.unwrap());
}

#[test]
fn cut_before_message_stop_is_stream_cut() {
    let cut = FULL.split("event: message_delta").next().unwrap();
    let (updates, result) = decode(Wire::Anthropic, cut);
    assert!(
        matches!(result, Err(ModelError::StreamCut(_))),
        "{result:?}"
    );
    assert!(!updates.is_empty(), "partial deltas were still streamed");
}

#[test]
fn a_stream_ending_without_a_blank_line_after_message_stop_is_whole() {
    // As streams recorded from the official SDKs' tests end.
    let unterminated = FULL.trim_end();
    assert!(unterminated.ends_with(r#"data: {"type":"message_stop"}"#));
    let (_, result) = decode(Wire::Anthropic, unterminated);
    assert_eq!(result.unwrap().stop, StopReason::ToolUse);
    // Cut inside the last event's JSON, the same stream is still a cut.
    let cut = &unterminated[..unterminated.len() - 3];
    let (_, result) = decode(Wire::Anthropic, cut);
    assert!(
        matches!(result, Err(ModelError::StreamCut(_))),
        "{result:?}"
    );
}

#[test]
fn overloaded_error_event_is_retryable() {
    let stream = concat!(
        "event: message_start\n",
        r#"data: {"type":"message_start","message":{"model":"claude-haiku-4-5","usage":{"input_tokens":5,"output_tokens":1}}}"#,
        "\n\nevent: error\n",
        r#"data: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        "\n\n"
    );
    let (_, result) = decode(Wire::Anthropic, stream);
    let err = result.unwrap_err();
    assert!(
        matches!(
            err,
            ModelError::Provider {
                kind: crate::ProviderErrorKind::Overloaded,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(err.is_retryable());
    let (_, result) = decode(
        Wire::Anthropic,
        "data: {\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"bad\"}}\n\n",
    );
    assert!(!result.unwrap_err().is_retryable());
}

#[test]
fn max_tokens_with_cut_off_tool_json_returns_raw_arguments() {
    let stream = concat!(
        r#"data: {"type":"message_start","message":{"model":"m","usage":{"input_tokens":5,"output_tokens":1}}}"#,
        "\n\n",
        r#"data: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t1","name":"write","input":{}}}"#,
        "\n\n",
        r#"data: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"content\": \"abc"}}"#,
        "\n\n",
        r#"data: {"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":4096}}"#,
        "\n\n",
        r#"data: {"type":"message_stop"}"#,
        "\n\n"
    );
    let (_, result) = decode(Wire::Anthropic, stream);
    let r = result.unwrap();
    assert_eq!(r.stop, StopReason::MaxTokens);
    let [AssistantPart::ToolCall(call)] = r.parts.as_slice() else {
        panic!("{:?}", r.parts)
    };
    assert_eq!(call.arguments, r#"{"content": "abc"#);
}

#[test]
fn redacted_thinking_is_kept_for_replay() {
    let stream = concat!(
        r#"data: {"type":"message_start","message":{"model":"m","usage":{"input_tokens":1}}}"#,
        "\n\n",
        r#"data: {"type":"content_block_start","index":0,"content_block":{"type":"redacted_thinking","data":"EmwKAhgB"}}"#,
        "\n\n",
        r#"data: {"type":"content_block_start","index":1,"content_block":{"type":"text","text":"ok"}}"#,
        "\n\n",
        r#"data: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":3}}"#,
        "\n\n",
        r#"data: {"type":"message_stop"}"#,
        "\n\n"
    );
    let (updates, result) = decode(Wire::Anthropic, stream);
    let r = result.unwrap();
    assert_eq!(
        r.parts,
        vec![
            AssistantPart::RedactedThinking {
                data: "EmwKAhgB".into()
            },
            AssistantPart::Text { text: "ok".into() }
        ]
    );
    assert_eq!(text_of(&updates), "ok");
}

#[test]
fn request_body_merges_turns_and_replays_signed_thinking() {
    let body = body("claude-sonnet-4-5", &sample_request());
    assert_eq!(body["system"][0]["text"], "You are atto.");
    assert_eq!(body["system"][0]["cache_control"]["type"], "ephemeral");
    assert_eq!(body["max_tokens"], 4096);
    assert_eq!(body["stream"], true);
    assert_eq!(body["tools"][0]["input_schema"]["type"], "object");
    let messages = body["messages"].as_array().unwrap();
    let roles: Vec<_> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "user"], "strict alternation");

    let assistant = messages[1]["content"].as_array().unwrap();
    let kinds: Vec<_> = assistant
        .iter()
        .map(|b| b["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["thinking", "text", "tool_use", "tool_use"]);
    assert_eq!(assistant[0]["signature"], "sig-1");
    assert_eq!(assistant[0]["thinking"], "look first");
    assert_eq!(assistant[2]["input"]["path"], "a.rs");
    assert_eq!(
        assistant[3]["input"],
        serde_json::json!({}),
        "invalid args sent as {{}}"
    );

    let results = messages[2]["content"].as_array().unwrap();
    let kinds: Vec<_> = results
        .iter()
        .map(|b| b["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["tool_result", "tool_result", "text"]);
    assert_eq!(results[0]["tool_use_id"], "call_a");
    assert_eq!(results[1]["is_error"], true);
    assert_eq!(results[2]["text"], "and b");
}

#[test]
fn unsigned_thinking_and_empty_assistant_turns_are_not_sent() {
    use atto_protocol::Message;
    let req = ModelRequest {
        system: String::new().into(),
        messages: vec![
            Message::user("a"),
            Message::Assistant {
                parts: vec![AssistantPart::Thinking {
                    text: "from another wire".into(),
                    signature: None,
                }],
            },
            Message::user("b"),
        ]
        .into(),
        tools: Vec::new().into(),
        max_output_tokens: 10,
        effort: None,
        temperature: None,
    };
    let body = body("m", &req);
    assert!(body.get("system").is_none());
    assert!(body.get("tools").is_none());
    assert_eq!(
        body["messages"],
        serde_json::json!([{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b","cache_control":{"type":"ephemeral"}}]}])
    );
}

#[test]
fn reasoning_effort_enables_thinking_with_a_budget_below_max_tokens() {
    use atto_protocol::ReasoningEffort;
    let plain = body("claude-sonnet-4-5", &sample_request());
    assert!(plain.get("thinking").is_none(), "the provider's default");
    let mut budgets = Vec::new();
    for effort in [
        ReasoningEffort::Low,
        ReasoningEffort::Medium,
        ReasoningEffort::High,
    ] {
        let mut req = sample_request();
        req.effort = Some(effort);
        let body = body("claude-sonnet-4-5", &req);
        assert_eq!(body["thinking"]["type"], "enabled");
        let budget = body["thinking"]["budget_tokens"].as_u64().unwrap();
        let max = body["max_tokens"].as_u64().unwrap();
        assert!(budget >= 1024, "Anthropic's minimum budget");
        assert!(
            max > budget,
            "max_tokens {max} must exceed the budget {budget}"
        );
        assert!(max >= 4096, "never below the request's own limit");
        budgets.push(budget);
    }
    assert!(
        budgets[0] < budgets[1] && budgets[1] < budgets[2],
        "{budgets:?}"
    );
    // A limit already above budget and answer room is kept as it is.
    let mut roomy = sample_request();
    roomy.max_output_tokens = 64_000;
    roomy.effort = Some(ReasoningEffort::High);
    assert_eq!(body("claude-opus-4-1", &roomy)["max_tokens"], 64_000);
}

#[test]
fn content_block_indices_that_skip_or_go_back_are_a_protocol_error() {
    let start = |i: u32| {
        format!(
            "data: {{\"type\":\"content_block_start\",\"index\":{i},\"content_block\":{{\"type\":\"text\",\"text\":\"\"}}}}\n\n"
        )
    };
    let head = r#"data: {"type":"message_start","message":{"model":"m"}}"#.to_owned() + "\n\n";
    let stop = concat!(
        r#"data: {"type":"message_delta","delta":{"stop_reason":"end_turn"}}"#,
        "\n\n",
        r#"data: {"type":"message_stop"}"#,
        "\n\n"
    );
    let ok = format!("{head}{}{}{stop}", start(0), start(1));
    assert!(decode(Wire::Anthropic, &ok).1.is_ok());
    for bad in [
        format!("{head}{}{stop}", start(1)),
        format!("{head}{}{}{stop}", start(0), start(2)),
        format!("{head}{}{}{}{stop}", start(0), start(1), start(1)),
        format!(
            "{head}{}{}{stop}",
            start(0),
            r#"data: {"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"x"}}"#.to_owned() + "\n\n"
        ),
    ] {
        let err = decode(Wire::Anthropic, &bad).1.unwrap_err();
        assert!(matches!(err, ModelError::Decode(_)), "{err:?}");
        assert!(err.to_string().contains("content block"), "{err}");
    }
}

/// Where the cache breakpoints sit: one block per line, `*` marking `cache_control`.
fn breakpoint_map(body: &Value) -> String {
    let mut out = String::new();
    let mark = |block: &Value| {
        if block.get("cache_control").is_some() {
            " *"
        } else {
            ""
        }
    };
    for tool in body["tools"].as_array().into_iter().flatten() {
        out.push_str(&format!("tool {}{}\n", tool["name"], mark(tool)));
    }
    for block in body["system"].as_array().into_iter().flatten() {
        out.push_str(&format!("system {}{}\n", block["type"], mark(block)));
    }
    for message in body["messages"].as_array().into_iter().flatten() {
        for block in message["content"].as_array().into_iter().flatten() {
            out.push_str(&format!(
                "{} {}{}\n",
                message["role"],
                block["type"],
                mark(block)
            ));
        }
    }
    out
}

#[test]
fn cache_breakpoints_end_the_stable_prefix_and_the_history() {
    let body = body("claude-sonnet-4-5", &sample_request());
    insta::assert_snapshot!(breakpoint_map(&body));
    // A history ending in tool results marks the last result.
    let mut req = sample_request();
    req.messages.to_mut().pop();
    let body = super::body("claude-sonnet-4-5", &req);
    let last = body["messages"][2]["content"][1].clone();
    assert_eq!(last["type"], "tool_result");
    assert_eq!(last["cache_control"]["type"], "ephemeral");
    // Only two breakpoints: Anthropic allows four, and more buy nothing here.
    assert_eq!(body.to_string().matches("cache_control").count(), 2);
}
