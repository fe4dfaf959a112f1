//! OpenAI Chat Completions: `chat.completion.chunk` SSE data lines ending in
//! `data: [DONE]`, or one `chat.completion` object.
//!
//! Reasoning is sent as DeepSeek-style `reasoning_content` deltas. Owns only the shape of
//! the JSON; faults and framing are applied by the caller.

use serde_json::{Value, json};

use super::{ARGS_PIECE_CHARS, Ctx, TEXT_PIECE_CHARS, non_empty, pieces};
use crate::script::{Reply, ScriptStop};
use crate::sse::SseEvent;

fn completion_id(ctx: &Ctx) -> String {
    format!("chatcmpl-atto{}", ctx.reply_no)
}

fn finish_reason(reply: &Reply) -> &'static str {
    match reply.effective_stop() {
        ScriptStop::EndTurn => "stop",
        ScriptStop::ToolUse => "tool_calls",
        ScriptStop::MaxTokens => "length",
    }
}

fn usage(reply: &Reply) -> Value {
    let u = reply.effective_usage();
    let prompt = u.input_tokens + u.cache_read_tokens;
    json!({
        "prompt_tokens": prompt,
        "completion_tokens": u.output_tokens,
        "total_tokens": prompt + u.output_tokens,
        "prompt_tokens_details": {"cached_tokens": u.cache_read_tokens},
    })
}

/// One `chat.completion.chunk` event. When the client asked for usage, OpenAI sends
/// `"usage": null` on every chunk but the last, so clients must tolerate it.
fn chunk(ctx: &Ctx, choices: Value, usage: Option<Value>) -> SseEvent {
    let mut obj = json!({
        "id": completion_id(ctx),
        "object": "chat.completion.chunk",
        "created": ctx.created,
        "model": ctx.model,
        "system_fingerprint": null,
        "choices": choices,
    });
    if ctx.include_usage {
        obj["usage"] = usage.unwrap_or(Value::Null);
    }
    SseEvent::data(obj.to_string())
}

fn delta(ctx: &Ctx, delta: Value) -> SseEvent {
    chunk(
        ctx,
        json!([{"index": 0, "delta": delta, "logprobs": null, "finish_reason": null}]),
        None,
    )
}

/// The streamed reply: role, reasoning, content, tool calls, finish, usage, `[DONE]`.
pub(crate) fn stream_events(ctx: &Ctx, reply: &Reply) -> Vec<SseEvent> {
    let mut events = vec![delta(ctx, json!({"role": "assistant", "content": ""}))];
    if let Some(thinking) = non_empty(&reply.thinking) {
        for piece in pieces(thinking, TEXT_PIECE_CHARS) {
            events.push(delta(ctx, json!({"reasoning_content": piece})));
        }
    }
    if let Some(text) = non_empty(&reply.text) {
        for piece in pieces(text, TEXT_PIECE_CHARS) {
            events.push(delta(ctx, json!({"content": piece})));
        }
    }
    for (i, call) in reply.tool_calls.iter().enumerate() {
        let opening = json!({
            "index": i,
            "id": call.effective_id(ctx.reply_no, i),
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        });
        events.push(delta(ctx, json!({"tool_calls": [opening]})));
        let args = call.argument_text();
        for piece in pieces(&args, ARGS_PIECE_CHARS) {
            let more = json!({"index": i, "function": {"arguments": piece}});
            events.push(delta(ctx, json!({"tool_calls": [more]})));
        }
    }
    events.push(chunk(
        ctx,
        json!([{"index": 0, "delta": {}, "logprobs": null, "finish_reason": finish_reason(reply)}]),
        None,
    ));
    if ctx.include_usage {
        events.push(chunk(ctx, json!([]), Some(usage(reply))));
    }
    events.push(SseEvent::data("[DONE]"));
    events
}

/// The non-streaming `chat.completion` object.
pub(crate) fn full_body(ctx: &Ctx, reply: &Reply) -> Value {
    let mut message = json!({
        "role": "assistant",
        "content": non_empty(&reply.text),
        "refusal": null,
    });
    if let Some(thinking) = non_empty(&reply.thinking) {
        message["reasoning_content"] = json!(thinking);
    }
    if !reply.tool_calls.is_empty() {
        let calls: Vec<Value> = reply
            .tool_calls
            .iter()
            .enumerate()
            .map(|(i, call)| {
                json!({
                    "id": call.effective_id(ctx.reply_no, i),
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.argument_text()},
                })
            })
            .collect();
        message["tool_calls"] = Value::Array(calls);
    }
    json!({
        "id": completion_id(ctx),
        "object": "chat.completion",
        "created": ctx.created,
        "model": ctx.model,
        "choices": [{"index": 0, "message": message, "logprobs": null, "finish_reason": finish_reason(reply)}],
        "usage": usage(reply),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::script::{ScriptToolCall, ScriptUsage};

    fn ctx(include_usage: bool) -> Ctx {
        Ctx {
            reply_no: 3,
            model: "gpt-test".into(),
            include_usage,
            created: 1,
        }
    }

    fn parse(ev: &SseEvent) -> Value {
        serde_json::from_str(&ev.data).unwrap()
    }

    #[test]
    fn streams_text_reasoning_and_parallel_tool_calls() {
        let reply = Reply {
            thinking: Some("think hard".into()),
            text: Some("Hello, wörld! 🦀".into()),
            tool_calls: vec![
                ScriptToolCall {
                    id: None,
                    name: "read".into(),
                    arguments: json!({"path": "src/main.rs"}),
                    raw_arguments: None,
                },
                ScriptToolCall {
                    id: Some("mine".into()),
                    name: "ls".into(),
                    arguments: Value::Null,
                    raw_arguments: None,
                },
            ],
            usage: Some(ScriptUsage {
                input_tokens: 10,
                output_tokens: 5,
                cache_read_tokens: 7,
                cache_write_tokens: 0,
            }),
            ..Reply::default()
        };
        let events = stream_events(&ctx(true), &reply);
        assert_eq!(events.last().unwrap().data, "[DONE]");
        let chunks: Vec<Value> = events[..events.len() - 1].iter().map(parse).collect();
        assert_eq!(chunks[0]["choices"][0]["delta"]["role"], "assistant");
        assert!(
            chunks
                .iter()
                .all(|c| c["object"] == "chat.completion.chunk" && c["model"] == "gpt-test")
        );
        let collect = |key: &str| -> String {
            chunks
                .iter()
                .filter_map(|c| c["choices"][0]["delta"][key].as_str())
                .collect()
        };
        assert_eq!(collect("reasoning_content"), "think hard");
        assert_eq!(collect("content"), "Hello, wörld! 🦀");
        let mut args = [String::new(), String::new()];
        let mut ids = Vec::new();
        for c in &chunks {
            for tc in c["choices"][0]["delta"]["tool_calls"]
                .as_array()
                .into_iter()
                .flatten()
            {
                let i = tc["index"].as_u64().unwrap() as usize;
                if let Some(id) = tc["id"].as_str() {
                    ids.push(id.to_owned());
                    assert_eq!(tc["type"], "function");
                }
                args[i].push_str(tc["function"]["arguments"].as_str().unwrap());
            }
        }
        assert_eq!(ids, vec!["call_3_0", "mine"]);
        assert_eq!(args[0], r#"{"path":"src/main.rs"}"#);
        assert_eq!(args[1], "{}");
        let finish = &chunks[chunks.len() - 2];
        assert_eq!(finish["choices"][0]["finish_reason"], "tool_calls");
        let usage = &chunks[chunks.len() - 1];
        assert_eq!(usage["choices"], json!([]));
        assert_eq!(usage["usage"]["prompt_tokens"], 17);
        assert_eq!(usage["usage"]["total_tokens"], 22);
        assert_eq!(usage["usage"]["prompt_tokens_details"]["cached_tokens"], 7);
    }

    #[test]
    fn omits_usage_chunk_unless_asked_and_maps_max_tokens() {
        let reply = Reply {
            text: Some("cut".into()),
            stop: Some(ScriptStop::MaxTokens),
            ..Reply::default()
        };
        let events = stream_events(&ctx(false), &reply);
        let finish = parse(&events[events.len() - 2]);
        assert_eq!(finish["choices"][0]["finish_reason"], "length");
        assert!(finish.get("usage").is_none());
    }

    #[test]
    fn full_body_has_message_and_usage() {
        let reply = Reply {
            tool_calls: vec![ScriptToolCall {
                id: None,
                name: "w".into(),
                arguments: Value::Null,
                raw_arguments: Some("{\"a\":".into()),
            }],
            ..Reply::default()
        };
        let body = full_body(&ctx(false), &reply);
        assert_eq!(body["object"], "chat.completion");
        let msg = &body["choices"][0]["message"];
        assert_eq!(msg["content"], Value::Null);
        assert_eq!(msg["tool_calls"][0]["function"]["arguments"], "{\"a\":");
        assert_eq!(body["choices"][0]["finish_reason"], "tool_calls");
        assert_eq!(body["usage"]["prompt_tokens"], 100);
        assert_eq!(body["usage"]["completion_tokens"], 20);
    }
}
