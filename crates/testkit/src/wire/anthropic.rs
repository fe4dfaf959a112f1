//! Anthropic Messages: named SSE events (`message_start`, `ping`, content blocks,
//! `message_delta`, `message_stop`), or one `message` object.
//!
//! Thinking blocks carry the signature `sig-<reply number>`. Owns only the shape of the
//! JSON; faults and framing are applied by the caller.

use serde_json::{Value, json};

use super::{ARGS_PIECE_CHARS, Ctx, TEXT_PIECE_CHARS, non_empty, pieces};
use crate::script::{Reply, ScriptStop, ScriptToolCall};
use crate::sse::SseEvent;

fn stop_reason(reply: &Reply) -> &'static str {
    match reply.effective_stop() {
        ScriptStop::EndTurn => "end_turn",
        ScriptStop::ToolUse => "tool_use",
        ScriptStop::MaxTokens => "max_tokens",
    }
}

fn signature(ctx: &Ctx) -> String {
    format!("sig-{}", ctx.reply_no)
}

fn usage(reply: &Reply, output_tokens: u64) -> Value {
    let u = reply.effective_usage();
    json!({
        "input_tokens": u.input_tokens,
        "cache_creation_input_tokens": u.cache_write_tokens,
        "cache_read_input_tokens": u.cache_read_tokens,
        "output_tokens": output_tokens,
    })
}

fn message(
    ctx: &Ctx,
    reply: &Reply,
    content: Value,
    stop: Option<&str>,
    output_tokens: u64,
) -> Value {
    json!({
        "id": format!("msg_atto{}", ctx.reply_no),
        "type": "message",
        "role": "assistant",
        "model": ctx.model,
        "content": content,
        "stop_reason": stop,
        "stop_sequence": null,
        "usage": usage(reply, output_tokens),
    })
}

fn event(name: &str, data: Value) -> SseEvent {
    SseEvent::named(name, data.to_string())
}

fn block_delta(index: usize, delta: Value) -> SseEvent {
    event(
        "content_block_delta",
        json!({"type": "content_block_delta", "index": index, "delta": delta}),
    )
}

/// The tool input as a JSON value; unparseable raw arguments are passed on as a string.
fn tool_input(call: &ScriptToolCall) -> Value {
    let text = call.argument_text();
    serde_json::from_str(&text).unwrap_or(Value::String(text))
}

/// The streamed reply, from `message_start` to `message_stop`.
pub(crate) fn stream_events(ctx: &Ctx, reply: &Reply) -> Vec<SseEvent> {
    let mut events = vec![
        event(
            "message_start",
            json!({"type": "message_start", "message": message(ctx, reply, json!([]), None, 1)}),
        ),
        event("ping", json!({"type": "ping"})),
    ];
    let mut index = 0;
    let mut block = |events: &mut Vec<SseEvent>, start: Value, deltas: Vec<Value>| {
        events.push(event(
            "content_block_start",
            json!({"type": "content_block_start", "index": index, "content_block": start}),
        ));
        events.extend(deltas.into_iter().map(|d| block_delta(index, d)));
        events.push(event(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        ));
        index += 1;
    };
    if let Some(thinking) = non_empty(&reply.thinking) {
        let mut deltas: Vec<Value> = pieces(thinking, TEXT_PIECE_CHARS)
            .into_iter()
            .map(|p| json!({"type": "thinking_delta", "thinking": p}))
            .collect();
        deltas.push(json!({"type": "signature_delta", "signature": signature(ctx)}));
        block(
            &mut events,
            json!({"type": "thinking", "thinking": ""}),
            deltas,
        );
    }
    if let Some(text) = non_empty(&reply.text) {
        let deltas = pieces(text, TEXT_PIECE_CHARS)
            .into_iter()
            .map(|p| json!({"type": "text_delta", "text": p}))
            .collect();
        block(&mut events, json!({"type": "text", "text": ""}), deltas);
    }
    for (i, call) in reply.tool_calls.iter().enumerate() {
        let args = call.argument_text();
        // The API opens every tool input with an empty partial_json.
        let mut deltas = vec![json!({"type": "input_json_delta", "partial_json": ""})];
        deltas.extend(
            pieces(&args, ARGS_PIECE_CHARS)
                .into_iter()
                .map(|p| json!({"type": "input_json_delta", "partial_json": p})),
        );
        let start = json!({
            "type": "tool_use",
            "id": call.effective_id(ctx.reply_no, i),
            "name": call.name,
            "input": {},
        });
        block(&mut events, start, deltas);
    }
    let output_tokens = reply.effective_usage().output_tokens;
    events.push(event(
        "message_delta",
        json!({
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason(reply), "stop_sequence": null},
            "usage": {"output_tokens": output_tokens},
        }),
    ));
    events.push(event("message_stop", json!({"type": "message_stop"})));
    events
}

/// The non-streaming `message` object.
pub(crate) fn full_body(ctx: &Ctx, reply: &Reply) -> Value {
    let mut content = Vec::new();
    if let Some(thinking) = non_empty(&reply.thinking) {
        content
            .push(json!({"type": "thinking", "thinking": thinking, "signature": signature(ctx)}));
    }
    if let Some(text) = non_empty(&reply.text) {
        content.push(json!({"type": "text", "text": text}));
    }
    for (i, call) in reply.tool_calls.iter().enumerate() {
        content.push(json!({
            "type": "tool_use",
            "id": call.effective_id(ctx.reply_no, i),
            "name": call.name,
            "input": tool_input(call),
        }));
    }
    let output_tokens = reply.effective_usage().output_tokens;
    message(
        ctx,
        reply,
        Value::Array(content),
        Some(stop_reason(reply)),
        output_tokens,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::script::ScriptUsage;

    fn ctx() -> Ctx {
        Ctx {
            reply_no: 2,
            model: "claude-test".into(),
            include_usage: false,
            created: 1,
        }
    }

    #[test]
    fn streams_blocks_in_order_with_indices() {
        let reply = Reply {
            thinking: Some("hmm, let me see".into()),
            text: Some("Reading the file now.".into()),
            tool_calls: vec![ScriptToolCall {
                id: None,
                name: "read".into(),
                arguments: json!({"path": "a.rs"}),
                raw_arguments: None,
            }],
            usage: Some(ScriptUsage {
                input_tokens: 5,
                output_tokens: 9,
                cache_read_tokens: 3,
                cache_write_tokens: 4,
            }),
            ..Reply::default()
        };
        let events = stream_events(&ctx(), &reply);
        let names: Vec<&str> = events.iter().map(|e| e.name.as_deref().unwrap()).collect();
        assert_eq!(names[..3], ["message_start", "ping", "content_block_start"]);
        assert_eq!(names[names.len() - 2..], ["message_delta", "message_stop"]);
        let data: Vec<Value> = events
            .iter()
            .map(|e| serde_json::from_str(&e.data).unwrap())
            .collect();
        for (name, d) in names.iter().zip(&data) {
            assert_eq!(d["type"], *name);
        }
        let start = &data[0]["message"];
        assert_eq!(start["model"], "claude-test");
        assert_eq!(start["usage"]["input_tokens"], 5);
        assert_eq!(start["usage"]["cache_read_input_tokens"], 3);
        assert_eq!(start["usage"]["cache_creation_input_tokens"], 4);
        assert_eq!(start["stop_reason"], Value::Null);

        let starts: Vec<&Value> = data
            .iter()
            .filter(|d| d["type"] == "content_block_start")
            .collect();
        assert_eq!(starts.len(), 3);
        assert_eq!(starts[0]["content_block"]["type"], "thinking");
        assert_eq!(starts[1]["content_block"]["type"], "text");
        assert_eq!(starts[2]["content_block"]["id"], "call_2_0");
        assert_eq!(starts[2]["index"], 2);

        let joined = |index: u64, field: &str| -> String {
            data.iter()
                .filter(|d| d["type"] == "content_block_delta" && d["index"] == index)
                .filter_map(|d| d["delta"][field].as_str())
                .collect()
        };
        assert_eq!(joined(0, "thinking"), "hmm, let me see");
        assert_eq!(joined(0, "signature"), "sig-2");
        assert_eq!(joined(1, "text"), "Reading the file now.");
        assert_eq!(joined(2, "partial_json"), r#"{"path":"a.rs"}"#);
        let md = &data[data.len() - 2];
        assert_eq!(md["delta"]["stop_reason"], "tool_use");
        assert_eq!(md["usage"]["output_tokens"], 9);
    }

    #[test]
    fn raw_arguments_stream_verbatim() {
        let reply = Reply {
            tool_calls: vec![ScriptToolCall {
                id: Some("toolu_x".into()),
                name: "write".into(),
                arguments: Value::Null,
                raw_arguments: Some(r#"{"path": "a.rs", "content": "unterminated"#.into()),
            }],
            ..Reply::default()
        };
        let events = stream_events(&ctx(), &reply);
        let partial: String = events
            .iter()
            .filter_map(|e| serde_json::from_str::<Value>(&e.data).ok())
            .filter_map(|d| d["delta"]["partial_json"].as_str().map(str::to_owned))
            .collect();
        assert_eq!(partial, r#"{"path": "a.rs", "content": "unterminated"#);
    }

    #[test]
    fn full_body_is_a_message() {
        let reply = Reply {
            thinking: Some("t".into()),
            text: Some("done".into()),
            stop: Some(ScriptStop::MaxTokens),
            ..Reply::default()
        };
        let body = full_body(&ctx(), &reply);
        assert_eq!(body["type"], "message");
        assert_eq!(body["stop_reason"], "max_tokens");
        assert_eq!(body["content"][0]["signature"], "sig-2");
        assert_eq!(body["content"][1]["text"], "done");
        assert_eq!(body["usage"]["output_tokens"], 20);
    }
}
