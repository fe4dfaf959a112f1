//! Chat Completions decode and request-body tests, on streams in OpenAI's published format.

use atto_protocol::{AssistantPart, StopReason, ToolCall, Usage};

use super::*;
use crate::Wire;
use crate::wire::testutil::{decode, sample_request, text_of};

/// Text, then two parallel tool calls whose arguments arrive in many fragments, then
/// usage in a choice-less final chunk (OpenAI with `include_usage`).
const PARALLEL_TOOLS: &str = r#"data: {"id":"c1","object":"chat.completion.chunk","model":"gpt-4.1-2025-04-14","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}

data: {"id":"c1","model":"gpt-4.1-2025-04-14","choices":[{"index":0,"delta":{"content":"Let me "},"finish_reason":null}]}

: keepalive

data: {"id":"c1","model":"gpt-4.1-2025-04-14","choices":[{"index":0,"delta":{"content":"look — ✓"},"finish_reason":null}]}

data: {"id":"c1","model":"gpt-4.1-2025-04-14","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_A","type":"function","function":{"name":"read","arguments":""}}]},"finish_reason":null}]}

data: {"id":"c1","model":"gpt-4.1-2025-04-14","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"pa"}}]},"finish_reason":null}]}

data: {"id":"c1","model":"gpt-4.1-2025-04-14","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"th\": \"src/"}}]},"finish_reason":null}]}

data: {"id":"c1","model":"gpt-4.1-2025-04-14","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_B","type":"function","function":{"name":"grep","arguments":"{\"pattern\""}}]},"finish_reason":null}]}

data: {"id":"c1","model":"gpt-4.1-2025-04-14","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"main.rs\"}"}}]},"finish_reason":null}]}

data: {"id":"c1","model":"gpt-4.1-2025-04-14","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":": \"fn \"}"}}]},"finish_reason":null}]}

data: {"id":"c1","model":"gpt-4.1-2025-04-14","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}

data: {"id":"c1","model":"gpt-4.1-2025-04-14","choices":[],"usage":{"prompt_tokens":1200,"completion_tokens":45,"total_tokens":1245,"prompt_tokens_details":{"cached_tokens":1024}}}

data: [DONE]

"#;

#[test]
fn parallel_tool_calls_assemble_by_index() {
    let (updates, result) = decode(Wire::Chat, PARALLEL_TOOLS);
    let r = result.unwrap();
    assert_eq!(r.stop, StopReason::ToolUse);
    assert_eq!(r.model, "gpt-4.1-2025-04-14");
    assert_eq!(
        r.parts,
        vec![
            AssistantPart::Text {
                text: "Let me look — ✓".into()
            },
            AssistantPart::ToolCall(ToolCall {
                id: "call_A".into(),
                name: "read".into(),
                arguments: r#"{"path": "src/main.rs"}"#.into(),
            }),
            AssistantPart::ToolCall(ToolCall {
                id: "call_B".into(),
                name: "grep".into(),
                arguments: r#"{"pattern": "fn "}"#.into(),
            }),
        ]
    );
    assert_eq!(
        r.usage,
        Usage {
            input_tokens: 176,
            output_tokens: 45,
            cache_read_tokens: 1024,
            cache_write_tokens: 0
        }
    );
    assert_eq!(text_of(&updates), "Let me look — ✓");
    let begins: Vec<_> = updates
        .iter()
        .filter_map(|u| match u {
            StreamUpdate::ToolCallBegin { id, name } => Some((id.as_str(), name.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(begins, vec![("call_A", "read"), ("call_B", "grep")]);
    let a_args: String = updates
        .iter()
        .filter_map(|u| match u {
            StreamUpdate::ToolCallArgs { id, fragment } if id == "call_A" => {
                Some(fragment.as_str())
            }
            _ => None,
        })
        .collect();
    assert_eq!(a_args, r#"{"path": "src/main.rs"}"#);
}

#[test]
fn crlf_framing_decodes_the_same() {
    let crlf = PARALLEL_TOOLS.replace('\n', "\r\n");
    let (_, lf) = decode(Wire::Chat, PARALLEL_TOOLS);
    let (_, cr) = decode(Wire::Chat, &crlf);
    assert_eq!(lf.unwrap(), cr.unwrap());
}

#[test]
fn deepseek_reasoning_and_cache_hit_usage() {
    let stream = concat!(
        r#"data: {"model":"deepseek-reasoner","choices":[{"index":0,"delta":{"role":"assistant","content":null,"reasoning_content":"Think"},"finish_reason":null}]}"#,
        "\n\n",
        r#"data: {"model":"deepseek-reasoner","choices":[{"index":0,"delta":{"content":null,"reasoning_content":"ing."},"finish_reason":null}]}"#,
        "\n\n",
        r#"data: {"model":"deepseek-reasoner","choices":[{"index":0,"delta":{"content":"Done."},"finish_reason":"stop"}],"usage":{"prompt_tokens":50,"completion_tokens":9,"prompt_cache_hit_tokens":32,"prompt_cache_miss_tokens":18}}"#,
        "\n\ndata: [DONE]\n\n"
    );
    let (updates, result) = decode(Wire::Chat, stream);
    let r = result.unwrap();
    assert_eq!(r.stop, StopReason::EndTurn);
    assert_eq!(
        r.parts,
        vec![
            AssistantPart::Thinking {
                text: "Thinking.".into(),
                signature: None
            },
            AssistantPart::Text {
                text: "Done.".into()
            },
        ]
    );
    assert_eq!((r.usage.input_tokens, r.usage.cache_read_tokens), (18, 32));
    assert_eq!(updates[0], StreamUpdate::Thinking("Think".into()));
}

#[test]
fn stream_cut_before_finish_is_an_error_even_with_complete_looking_args() {
    let cut = PARALLEL_TOOLS
        .split("data: {\"id\":\"c1\",\"model\":\"gpt-4.1-2025-04-14\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\"")
        .next()
        .unwrap();
    let (_, result) = decode(Wire::Chat, cut);
    assert!(
        matches!(result, Err(ModelError::StreamCut(_))),
        "{result:?}"
    );
}

#[test]
fn finish_reason_without_done_is_a_cut_stream() {
    let stream = concat!(
        r#"data: {"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}"#,
        "\n\n"
    );
    let (_, result) = decode(Wire::Chat, stream);
    let err = result.unwrap_err();
    assert!(matches!(err, ModelError::StreamCut(_)), "{err:?}");
    assert!(err.is_retryable());
}

#[test]
fn done_without_its_blank_line_ends_the_stream_but_a_cut_done_does_not() {
    let head = concat!(
        r#"data: {"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}"#,
        "\n\n"
    );
    let (_, result) = decode(Wire::Chat, &format!("{head}data: [DONE]\n"));
    assert_eq!(result.unwrap().text(), "hi");
    let err = decode(Wire::Chat, &format!("{head}data: [DO"))
        .1
        .unwrap_err();
    assert!(matches!(err, ModelError::StreamCut(_)), "{err:?}");
}

#[test]
fn only_choice_zero_is_assembled() {
    let stream = concat!(
        r#"data: {"choices":[{"index":0,"delta":{"content":"one"},"finish_reason":null}]}"#,
        "\n\n",
        r#"data: {"choices":[{"index":1,"delta":{"content":"two"},"finish_reason":null}]}"#,
        "\n\n",
        r#"data: {"choices":[{"index":1,"delta":{"tool_calls":[{"index":0,"id":"x","function":{"name":"ls","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}"#,
        "\n\n",
        r#"data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
        "\n\ndata: [DONE]\n\n"
    );
    let (updates, result) = decode(Wire::Chat, stream);
    let r = result.unwrap();
    assert_eq!(r.parts, vec![AssistantPart::Text { text: "one".into() }]);
    assert_eq!(r.stop, StopReason::EndTurn);
    assert_eq!(text_of(&updates), "one");
}

#[test]
fn max_tokens_returns_cut_off_arguments_raw() {
    let stream = concat!(
        r#"data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","function":{"name":"write","arguments":"{\"path\":\"a\",\"content\":\"lo"}}]},"finish_reason":null}]}"#,
        "\n\n",
        r#"data: {"choices":[{"index":0,"delta":{},"finish_reason":"length"}]}"#,
        "\n\ndata: [DONE]\n\n"
    );
    let (_, result) = decode(Wire::Chat, stream);
    let r = result.unwrap();
    assert_eq!(r.stop, StopReason::MaxTokens);
    let [AssistantPart::ToolCall(call)] = r.parts.as_slice() else {
        panic!("{:?}", r.parts)
    };
    assert_eq!(call.arguments, r#"{"path":"a","content":"lo"#);
}

#[test]
fn error_chunk_mid_stream_is_a_provider_error() {
    let stream = concat!(
        r#"data: {"choices":[{"index":0,"delta":{"content":"par"},"finish_reason":null}]}"#,
        "\n\n",
        r#"data: {"error":{"message":"The server is overloaded","type":"server_error","code":null}}"#,
        "\n\n"
    );
    let (_, result) = decode(Wire::Chat, stream);
    let err = result.unwrap_err();
    assert!(
        matches!(&err, ModelError::Provider { kind: crate::ProviderErrorKind::Server, message } if message.contains("overloaded")),
        "{err:?}"
    );
    assert!(err.is_retryable());
}

#[test]
fn malformed_chunk_is_a_decode_error() {
    let (_, result) = decode(Wire::Chat, "data: {not json\n\n");
    assert!(matches!(result, Err(ModelError::Decode(_))), "{result:?}");
}

#[test]
fn tool_calls_without_index_or_with_stop_reason_from_local_servers() {
    let stream = concat!(
        r#"data: {"choices":[{"index":0,"delta":{"tool_calls":[{"id":"x1","function":{"name":"ls","arguments":"{}"}}]},"finish_reason":null}]}"#,
        "\n\n",
        r#"data: {"choices":[{"index":0,"delta":{"tool_calls":[{"id":"x2","function":{"name":"pwd","arguments":"{}"}}]},"finish_reason":"stop"}]}"#,
        "\n\ndata: [DONE]\n\n"
    );
    let (_, result) = decode(Wire::Chat, stream);
    let r = result.unwrap();
    assert_eq!(r.stop, StopReason::ToolUse);
    let names: Vec<_> = r
        .parts
        .iter()
        .filter_map(|p| match p {
            AssistantPart::ToolCall(c) => Some((c.id.as_str(), c.name.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(names, vec![("x1", "ls"), ("x2", "pwd")]);
}

#[test]
fn request_body_layout() {
    let body = body("gpt-4.1", &sample_request());
    let messages = body["messages"].as_array().unwrap();
    let roles: Vec<_> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        ["system", "user", "assistant", "tool", "tool", "user"]
    );
    assert_eq!(messages[0]["content"], "You are atto.");
    let assistant = &messages[2];
    assert_eq!(assistant["content"], "Reading.");
    assert_eq!(assistant["tool_calls"][0]["id"], "call_a");
    assert_eq!(assistant["tool_calls"][0]["type"], "function");
    assert_eq!(
        assistant["tool_calls"][0]["function"]["arguments"], r#"{"path":"a.rs"}"#,
        "valid arguments are sent back exactly as received"
    );
    assert_eq!(
        assistant["tool_calls"][1]["function"]["arguments"], "{}",
        "cut-off arguments would make the server reject the whole history"
    );
    assert!(assistant.get("reasoning_content").is_none());
    assert_eq!(messages[4]["tool_call_id"], "call_b");
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"]["include_usage"], true);
    assert_eq!(body["max_tokens"], 4096);
    assert_eq!(body["tools"][0]["function"]["name"], "read");
    assert_eq!(body["tools"][0]["type"], "function");

    let mut bare = sample_request();
    bare.tools.to_mut().clear();
    bare.system.to_mut().clear();
    let body = super::body("m", &bare);
    assert!(body.get("tools").is_none());
    assert_eq!(body["messages"][0]["role"], "user");
}

#[test]
fn reasoning_effort_is_sent_only_when_set() {
    use atto_protocol::ReasoningEffort;
    let plain = body("o3", &sample_request());
    assert!(
        plain.get("reasoning_effort").is_none(),
        "the provider's default"
    );
    for (effort, name) in [
        (ReasoningEffort::Low, "low"),
        (ReasoningEffort::Medium, "medium"),
        (ReasoningEffort::High, "high"),
    ] {
        let mut req = sample_request();
        req.effort = Some(effort);
        let body = body("o3", &req);
        assert_eq!(body["reasoning_effort"], name);
        assert!(
            body.get("reasoning").is_none(),
            "the Responses shape is not sent"
        );
        assert_eq!(
            body["max_completion_tokens"], 4096,
            "the output limit is unchanged"
        );
    }
}

#[test]
fn a_call_id_sent_under_two_indices_surfaces_once() {
    let stream = concat!(
        r#"data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","function":{"name":"ls","arguments":"{}"}}]},"finish_reason":null}]}"#,
        "\n\n",
        r#"data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_1","function":{"name":"ls","arguments":"{}"}}]},"finish_reason":null}]}"#,
        "\n\n",
        r#"data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
        "\n\ndata: [DONE]\n\n"
    );
    let r = decode(Wire::Chat, stream).1.unwrap();
    assert_eq!(
        r.parts,
        vec![AssistantPart::ToolCall(ToolCall {
            id: "call_1".into(),
            name: "ls".into(),
            arguments: "{}".into(),
        })]
    );
}

#[test]
fn openai_reasoning_models_take_max_completion_tokens() {
    for model in [
        "o1",
        "o1-mini",
        "o3",
        "o4-mini",
        "openai/o3",
        "gpt-5",
        "gpt-5-mini",
        "codex-mini-latest",
    ] {
        let body = body(model, &sample_request());
        assert_eq!(body["max_completion_tokens"], 4096, "{model}");
        assert!(body.get("max_tokens").is_none(), "{model}");
    }
    for model in ["gpt-4.1", "deepseek-chat", "llama3", "o1x", "qwen3-o3"] {
        let body = body(model, &sample_request());
        assert_eq!(body["max_tokens"], 4096, "{model}");
        assert!(body.get("max_completion_tokens").is_none(), "{model}");
    }
}

#[test]
fn usage_is_unknown_when_the_server_reports_none() {
    let stream = concat!(
        r#"data: {"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}"#,
        "\n\ndata: [DONE]\n\n"
    );
    let r = decode(Wire::Chat, stream).1.unwrap();
    assert!(!r.usage_reported);
    let (_, with) = decode(Wire::Chat, PARALLEL_TOOLS);
    assert!(with.unwrap().usage_reported);
}
