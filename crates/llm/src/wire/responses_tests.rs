//! OpenAI Responses decode and request-body tests, on streams in OpenAI's published
//! event format.

use atto_protocol::{AssistantPart, StopReason, ToolCall, Usage};

use super::*;
use crate::Wire;
use crate::wire::testutil::{decode, sample_request, text_of};

const FULL: &str = r#"event: response.created
data: {"type":"response.created","sequence_number":0,"response":{"id":"resp_1","status":"in_progress","model":"gpt-5-2025-08-07","output":[]}}

event: response.output_item.added
data: {"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[]}}

event: response.reasoning_summary_text.delta
data: {"type":"response.reasoning_summary_text.delta","sequence_number":2,"item_id":"rs_1","output_index":0,"summary_index":0,"delta":"Plan: read."}

event: response.output_item.done
data: {"type":"response.output_item.done","sequence_number":3,"output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[{"type":"summary_text","text":"Plan: read."}]}}

event: response.output_item.added
data: {"type":"response.output_item.added","sequence_number":4,"output_index":1,"item":{"id":"msg_1","type":"message","status":"in_progress","role":"assistant","content":[]}}

event: response.output_text.delta
data: {"type":"response.output_text.delta","sequence_number":5,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"Hel"}

event: response.output_text.delta
data: {"type":"response.output_text.delta","sequence_number":6,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"lo ✓"}

event: response.output_item.done
data: {"type":"response.output_item.done","sequence_number":7,"output_index":1,"item":{"id":"msg_1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Hello ✓","annotations":[]}]}}

event: response.output_item.added
data: {"type":"response.output_item.added","sequence_number":8,"output_index":2,"item":{"id":"fc_1","type":"function_call","status":"in_progress","call_id":"call_X","name":"read","arguments":""}}

event: response.function_call_arguments.delta
data: {"type":"response.function_call_arguments.delta","sequence_number":9,"item_id":"fc_1","output_index":2,"delta":"{\"path\":"}

event: response.output_item.added
data: {"type":"response.output_item.added","sequence_number":10,"output_index":3,"item":{"id":"fc_2","type":"function_call","status":"in_progress","call_id":"call_Y","name":"ls","arguments":""}}

event: response.function_call_arguments.delta
data: {"type":"response.function_call_arguments.delta","sequence_number":11,"item_id":"fc_1","output_index":2,"delta":"\"a.rs\"}"}

event: response.function_call_arguments.delta
data: {"type":"response.function_call_arguments.delta","sequence_number":12,"item_id":"fc_2","output_index":3,"delta":"{}"}

event: response.function_call_arguments.done
data: {"type":"response.function_call_arguments.done","sequence_number":13,"item_id":"fc_1","output_index":2,"arguments":"{\"path\":\"a.rs\"}"}

event: response.output_item.done
data: {"type":"response.output_item.done","sequence_number":14,"output_index":2,"item":{"id":"fc_1","type":"function_call","status":"completed","call_id":"call_X","name":"read","arguments":"{\"path\":\"a.rs\"}"}}

event: response.completed
data: {"type":"response.completed","sequence_number":15,"response":{"id":"resp_1","status":"completed","model":"gpt-5-2025-08-07","usage":{"input_tokens":2000,"input_tokens_details":{"cached_tokens":1500},"output_tokens":80,"output_tokens_details":{"reasoning_tokens":40},"total_tokens":2080}}}

"#;

#[test]
fn full_stream_decodes_items_in_output_order() {
    let (updates, result) = decode(Wire::Responses, FULL);
    let r = result.unwrap();
    assert_eq!(r.stop, StopReason::ToolUse);
    assert_eq!(r.model, "gpt-5-2025-08-07");
    assert_eq!(
        r.parts,
        vec![
            AssistantPart::Thinking {
                text: "Plan: read.".into(),
                signature: None
            },
            AssistantPart::Text {
                text: "Hello ✓".into()
            },
            AssistantPart::ToolCall(ToolCall {
                id: "call_X".into(),
                name: "read".into(),
                arguments: r#"{"path":"a.rs"}"#.into()
            }),
            AssistantPart::ToolCall(ToolCall {
                id: "call_Y".into(),
                name: "ls".into(),
                arguments: "{}".into()
            }),
        ]
    );
    assert_eq!(
        r.usage,
        Usage {
            input_tokens: 500,
            output_tokens: 80,
            cache_read_tokens: 1500,
            cache_write_tokens: 0
        }
    );
    assert_eq!(text_of(&updates), "Hello ✓");
    assert!(updates.contains(&StreamUpdate::ToolCallArgs {
        id: "call_X".into(),
        fragment: "\"a.rs\"}".into()
    }));
    assert!(updates.contains(&StreamUpdate::Thinking("Plan: read.".into())));
}

#[test]
fn crlf_and_keepalives_decode_the_same() {
    let noisy = FULL.replace("\n\n", "\n:\n\n").replace('\n', "\r\n");
    let (_, a) = decode(Wire::Responses, FULL);
    let (_, b) = decode(Wire::Responses, &noisy);
    assert_eq!(a.unwrap(), b.unwrap());
}

#[test]
fn final_item_content_wins_over_deltas() {
    let stream = concat!(
        r#"data: {"type":"response.output_item.added","output_index":0,"item":{"id":"m","type":"message","content":[]}}"#,
        "\n\n",
        r#"data: {"type":"response.output_text.delta","item_id":"m","output_index":0,"delta":"Helo"}"#,
        "\n\n",
        r#"data: {"type":"response.output_item.done","output_index":0,"item":{"id":"m","type":"message","content":[{"type":"output_text","text":"Hello"}]}}"#,
        "\n\n",
        r#"data: {"type":"response.completed","response":{"status":"completed","usage":{"input_tokens":3,"output_tokens":1}}}"#,
        "\n\n"
    );
    let (_, result) = decode(Wire::Responses, stream);
    let r = result.unwrap();
    assert_eq!(
        r.parts,
        vec![AssistantPart::Text {
            text: "Hello".into()
        }]
    );
    assert_eq!(r.stop, StopReason::EndTurn);
}

#[test]
fn incomplete_for_max_output_tokens_keeps_raw_arguments() {
    let stream = concat!(
        r#"data: {"type":"response.output_item.added","output_index":0,"item":{"id":"fc","type":"function_call","call_id":"c1","name":"write","arguments":""}}"#,
        "\n\n",
        r#"data: {"type":"response.function_call_arguments.delta","item_id":"fc","output_index":0,"delta":"{\"content\":\"ab"}"#,
        "\n\n",
        r#"data: {"type":"response.incomplete","response":{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"usage":{"input_tokens":3,"output_tokens":100}}}"#,
        "\n\n"
    );
    let (_, result) = decode(Wire::Responses, stream);
    let r = result.unwrap();
    assert_eq!(r.stop, StopReason::MaxTokens);
    let [AssistantPart::ToolCall(call)] = r.parts.as_slice() else {
        panic!("{:?}", r.parts)
    };
    assert_eq!(call.arguments, r#"{"content":"ab"#);
}

#[test]
fn cut_before_completed_is_stream_cut() {
    let cut = FULL.split("event: response.completed").next().unwrap();
    let (_, result) = decode(Wire::Responses, cut);
    assert!(
        matches!(result, Err(ModelError::StreamCut(_))),
        "{result:?}"
    );
}

#[test]
fn failed_and_error_events_are_provider_errors() {
    let failed = r#"data: {"type":"response.failed","response":{"status":"failed","error":{"code":"server_error","message":"The model failed"}}}

"#;
    let err = decode(Wire::Responses, failed).1.unwrap_err();
    assert!(err.is_retryable(), "{err:?}");
    assert!(err.to_string().contains("The model failed"));

    let error = r#"data: {"type":"error","code":"rate_limit_exceeded","message":"Slow down","param":null}

"#;
    let err = decode(Wire::Responses, error).1.unwrap_err();
    assert!(
        matches!(
            err,
            ModelError::Provider {
                kind: crate::ProviderErrorKind::RateLimited,
                ..
            }
        ),
        "{err:?}"
    );

    let nested = r#"data: {"type":"error","error":{"type":"invalid_request_error","code":"context_length_exceeded","message":"Your input exceeds the context window of this model."}}

"#;
    let err = decode(Wire::Responses, nested).1.unwrap_err();
    assert!(matches!(err, ModelError::ContextTooLong { .. }), "{err:?}");
}

#[test]
fn request_body_layout() {
    let body = body("gpt-5", &sample_request());
    assert_eq!(body["instructions"], "You are atto.");
    assert_eq!(body["store"], false);
    assert_eq!(body["stream"], true);
    assert_eq!(body["max_output_tokens"], 4096);
    assert_eq!(body["tools"][0]["type"], "function");
    assert_eq!(body["tools"][0]["name"], "read");
    let input = body["input"].as_array().unwrap();
    let kinds: Vec<_> = input
        .iter()
        .map(|i| {
            format!(
                "{}:{}",
                i["type"].as_str().unwrap(),
                i["role"].as_str().unwrap_or("-")
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "message:user",
            "message:assistant",
            "function_call:-",
            "function_call:-",
            "function_call_output:-",
            "function_call_output:-",
            "message:user"
        ]
    );
    assert_eq!(input[0]["content"][0]["type"], "input_text");
    assert_eq!(input[1]["content"][0]["type"], "output_text");
    assert_eq!(input[2]["call_id"], "call_a");
    assert_eq!(input[2]["arguments"], r#"{"path":"a.rs"}"#);
    assert_eq!(
        input[3]["arguments"], "{}",
        "cut-off arguments would make the server reject the whole history"
    );
    assert_eq!(input[5]["output"], "invalid arguments");
}

#[test]
fn reasoning_effort_goes_in_the_reasoning_object() {
    use atto_protocol::ReasoningEffort;
    let plain = body("gpt-5", &sample_request());
    assert!(plain.get("reasoning").is_none(), "the provider's default");
    let mut req = sample_request();
    req.effort = Some(ReasoningEffort::High);
    let body = body("gpt-5", &req);
    assert_eq!(body["reasoning"], serde_json::json!({"effort": "high"}));
    assert!(
        body.get("reasoning_effort").is_none(),
        "the Chat shape is not sent"
    );
    assert_eq!(body["max_output_tokens"], 4096);
}

/// llama.cpp's Responses stream: no `output_index` anywhere, the item id only inside
/// `item` on `output_item.*`, and `item_id` on the deltas.
const LLAMA_CPP: &str = r#"event: response.created
data: {"type":"response.created","response":{"id":"resp_l","object":"response","status":"in_progress"}}

event: response.in_progress
data: {"type":"response.in_progress","response":{"id":"resp_l","object":"response","status":"in_progress"}}

event: response.output_item.added
data: {"type":"response.output_item.added","item":{"id":"msg_l","type":"message","status":"in_progress","role":"assistant","content":[]}}

event: response.output_text.delta
data: {"type":"response.output_text.delta","item_id":"msg_l","delta":"Running it."}

event: response.output_item.done
data: {"type":"response.output_item.done","item":{"id":"msg_l","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Running it."}]}}

event: response.output_item.added
data: {"type":"response.output_item.added","item":{"id":"fc_l","type":"function_call","status":"in_progress","arguments":"","call_id":"fc_l","name":"bash"}}

event: response.function_call_arguments.delta
data: {"type":"response.function_call_arguments.delta","item_id":"fc_l","delta":"{\"command\":\"echo run >> log.txt\"}"}

event: response.output_item.done
data: {"type":"response.output_item.done","item":{"id":"fc_l","type":"function_call","status":"completed","arguments":"{\"command\":\"echo run >> log.txt\"}","call_id":"fc_l","name":"bash"}}

event: response.completed
data: {"type":"response.completed","response":{"id":"resp_l","object":"response","status":"completed","usage":{"input_tokens":50,"output_tokens":12,"total_tokens":62}}}

"#;

#[test]
fn items_without_output_index_are_matched_by_item_id() {
    let (updates, result) = decode(Wire::Responses, LLAMA_CPP);
    let r = result.unwrap();
    assert_eq!(
        r.parts,
        vec![
            AssistantPart::Text {
                text: "Running it.".into()
            },
            AssistantPart::ToolCall(ToolCall {
                id: "fc_l".into(),
                name: "bash".into(),
                arguments: r#"{"command":"echo run >> log.txt"}"#.into(),
            }),
        ]
    );
    assert_eq!(r.stop, StopReason::ToolUse);
    let begins = updates
        .iter()
        .filter(|u| matches!(u, StreamUpdate::ToolCallBegin { .. }))
        .count();
    assert_eq!(begins, 1, "{updates:?}");
    assert_eq!(text_of(&updates), "Running it.");
}

#[test]
fn items_without_any_locator_are_matched_by_position() {
    // Neither `output_index` nor an item id: each `done` closes the oldest open item.
    let stream = concat!(
        r#"data: {"type":"response.output_item.added","item":{"type":"function_call","call_id":"c1","name":"ls","arguments":""}}"#,
        "\n\n",
        r#"data: {"type":"response.output_item.done","item":{"type":"function_call","call_id":"c1","name":"ls","arguments":"{}"}}"#,
        "\n\n",
        r#"data: {"type":"response.output_item.added","item":{"type":"message","content":[]}}"#,
        "\n\n",
        r#"data: {"type":"response.output_item.done","item":{"type":"message","content":[{"type":"output_text","text":"done"}]}}"#,
        "\n\n",
        r#"data: {"type":"response.completed","response":{"status":"completed"}}"#,
        "\n\n"
    );
    let r = decode(Wire::Responses, stream).1.unwrap();
    assert_eq!(
        r.parts,
        vec![
            AssistantPart::ToolCall(ToolCall {
                id: "c1".into(),
                name: "ls".into(),
                arguments: "{}".into(),
            }),
            AssistantPart::Text {
                text: "done".into()
            },
        ]
    );
}

#[test]
fn a_repeated_call_id_surfaces_once() {
    // Two distinct items carrying one call id (a confused server): one call is kept.
    let stream = concat!(
        r#"data: {"type":"response.output_item.done","output_index":0,"item":{"id":"a","type":"function_call","call_id":"dup","name":"ls","arguments":"{}"}}"#,
        "\n\n",
        r#"data: {"type":"response.output_item.done","output_index":1,"item":{"id":"b","type":"function_call","call_id":"dup","name":"ls","arguments":"{}"}}"#,
        "\n\n",
        r#"data: {"type":"response.completed","response":{"status":"completed"}}"#,
        "\n\n"
    );
    let (updates, result) = decode(Wire::Responses, stream);
    let r = result.unwrap();
    assert_eq!(r.parts.len(), 1, "{:?}", r.parts);
    let begins = updates
        .iter()
        .filter(|u| matches!(u, StreamUpdate::ToolCallBegin { .. }))
        .count();
    assert_eq!(begins, 1, "{updates:?}");
}

#[test]
fn usage_is_unknown_when_completed_carries_none() {
    let stream = concat!(
        r#"data: {"type":"response.output_text.delta","delta":"hi"}"#,
        "\n\n",
        r#"data: {"type":"response.completed","response":{"status":"completed"}}"#,
        "\n\n"
    );
    let r = decode(Wire::Responses, stream).1.unwrap();
    assert!(!r.usage_reported);
    assert!(decode(Wire::Responses, LLAMA_CPP).1.unwrap().usage_reported);
}
