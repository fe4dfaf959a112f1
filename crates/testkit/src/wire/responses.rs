//! OpenAI Responses: typed SSE events carrying a `sequence_number`, from
//! `response.created` to `response.completed` (or `response.incomplete` when the output
//! token limit was hit, as the API does), or one `response` object.
//!
//! Thinking becomes a `reasoning` item with summary text. Owns only the shape of the
//! JSON; faults and framing are applied by the caller.

use serde_json::{Value, json};

use super::{ARGS_PIECE_CHARS, Ctx, TEXT_PIECE_CHARS, non_empty, pieces};
use crate::script::{Reply, ScriptStop};
use crate::sse::SseEvent;

fn usage(reply: &Reply) -> Value {
    let u = reply.effective_usage();
    let input = u.input_tokens + u.cache_read_tokens;
    json!({
        "input_tokens": input,
        "input_tokens_details": {"cached_tokens": u.cache_read_tokens},
        "output_tokens": u.output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": input + u.output_tokens,
    })
}

fn response_id(ctx: &Ctx) -> String {
    format!("resp_atto{}", ctx.reply_no)
}

/// The response object with `status`, `output` and `usage` as given.
fn response(ctx: &Ctx, status: &str, output: Value, usage: Value) -> Value {
    let incomplete = if status == "incomplete" {
        json!({"reason": "max_output_tokens"})
    } else {
        Value::Null
    };
    json!({
        "id": response_id(ctx),
        "object": "response",
        "created_at": ctx.created,
        "status": status,
        "error": null,
        "incomplete_details": incomplete,
        "model": ctx.model,
        "output": output,
        "parallel_tool_calls": true,
        "usage": usage,
    })
}

/// Output items when complete, each with the id the stream uses for it.
fn final_items(ctx: &Ctx, reply: &Reply) -> Vec<Value> {
    let n = ctx.reply_no;
    let mut items = Vec::new();
    if let Some(thinking) = non_empty(&reply.thinking) {
        items.push(json!({
            "id": format!("rs_atto{n}"),
            "type": "reasoning",
            "summary": [{"type": "summary_text", "text": thinking}],
        }));
    }
    if let Some(text) = non_empty(&reply.text) {
        items.push(json!({
            "id": format!("msg_atto{n}"),
            "type": "message",
            "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": text, "annotations": []}],
        }));
    }
    for (i, call) in reply.tool_calls.iter().enumerate() {
        items.push(json!({
            "id": format!("fc_atto{n}_{i}"),
            "type": "function_call",
            "status": "completed",
            "call_id": call.effective_id(n, i),
            "name": call.name,
            "arguments": call.argument_text(),
        }));
    }
    items
}

fn final_status(reply: &Reply) -> &'static str {
    match reply.effective_stop() {
        ScriptStop::EndTurn | ScriptStop::ToolUse => "completed",
        ScriptStop::MaxTokens => "incomplete",
    }
}

/// Events in order; sequence numbers are stamped at the end.
struct Events(Vec<(String, Value)>);

impl Events {
    fn push(&mut self, kind: &str, mut fields: Value) {
        fields["type"] = json!(kind);
        self.0.push((kind.to_owned(), fields));
    }

    /// A reasoning item's events: its summary part, streamed in pieces.
    fn reasoning(&mut self, idx: usize, item: &Value) {
        let id = item["id"].clone();
        let text = item["summary"][0]["text"].as_str().unwrap_or_default();
        let added = json!({"id": id, "type": "reasoning", "summary": []});
        self.push(
            "response.output_item.added",
            json!({"output_index": idx, "item": added}),
        );
        let at = json!({"item_id": id, "output_index": idx, "summary_index": 0});
        let empty_part = json!({"type": "summary_text", "text": ""});
        self.push(
            "response.reasoning_summary_part.added",
            with(at.clone(), "part", empty_part),
        );
        for piece in pieces(text, TEXT_PIECE_CHARS) {
            self.push(
                "response.reasoning_summary_text.delta",
                with(at.clone(), "delta", json!(piece)),
            );
        }
        self.push(
            "response.reasoning_summary_text.done",
            with(at.clone(), "text", json!(text)),
        );
        let part = json!({"type": "summary_text", "text": text});
        self.push(
            "response.reasoning_summary_part.done",
            with(at, "part", part),
        );
    }

    /// A message item's events: its output text part, streamed in pieces.
    fn message(&mut self, idx: usize, item: &Value) {
        let id = item["id"].clone();
        let text = item["content"][0]["text"].as_str().unwrap_or_default();
        let added = json!({"id": id, "type": "message", "status": "in_progress", "role": "assistant", "content": []});
        self.push(
            "response.output_item.added",
            json!({"output_index": idx, "item": added}),
        );
        let at = json!({"item_id": id, "output_index": idx, "content_index": 0});
        let empty_part = json!({"type": "output_text", "text": "", "annotations": []});
        self.push(
            "response.content_part.added",
            with(at.clone(), "part", empty_part),
        );
        for piece in pieces(text, TEXT_PIECE_CHARS) {
            let delta = with(at.clone(), "delta", json!(piece));
            self.push(
                "response.output_text.delta",
                with(delta, "logprobs", json!([])),
            );
        }
        self.push(
            "response.output_text.done",
            with(at.clone(), "text", json!(text)),
        );
        let part = json!({"type": "output_text", "text": text, "annotations": []});
        self.push("response.content_part.done", with(at, "part", part));
    }

    /// A function call item's events: its arguments, streamed in pieces.
    fn function_call(&mut self, idx: usize, item: &Value) {
        let id = item["id"].clone();
        let args = item["arguments"].as_str().unwrap_or_default();
        let mut added = item.clone();
        added["status"] = json!("in_progress");
        added["arguments"] = json!("");
        self.push(
            "response.output_item.added",
            json!({"output_index": idx, "item": added}),
        );
        for piece in pieces(args, ARGS_PIECE_CHARS) {
            self.push(
                "response.function_call_arguments.delta",
                json!({"item_id": id, "output_index": idx, "delta": piece}),
            );
        }
        self.push(
            "response.function_call_arguments.done",
            json!({"item_id": id, "output_index": idx, "name": item["name"], "arguments": args}),
        );
    }
}

/// `base` with `key` set to `v`.
fn with(mut base: Value, key: &str, v: Value) -> Value {
    base[key] = v;
    base
}

/// The streamed reply, from `response.created` to the terminal event.
pub(crate) fn stream_events(ctx: &Ctx, reply: &Reply) -> Vec<SseEvent> {
    let mut ev = Events(Vec::new());
    let in_progress = response(ctx, "in_progress", json!([]), Value::Null);
    ev.push("response.created", json!({"response": in_progress.clone()}));
    ev.push("response.in_progress", json!({"response": in_progress}));

    let items = final_items(ctx, reply);
    for (idx, item) in items.iter().enumerate() {
        match item["type"].as_str() {
            Some("reasoning") => ev.reasoning(idx, item),
            Some("message") => ev.message(idx, item),
            _ => ev.function_call(idx, item),
        }
        ev.push(
            "response.output_item.done",
            json!({"output_index": idx, "item": item}),
        );
    }

    let status = final_status(reply);
    let done = response(ctx, status, Value::Array(items), usage(reply));
    let terminal = match status {
        "incomplete" => "response.incomplete",
        _ => "response.completed",
    };
    ev.push(terminal, json!({"response": done}));

    ev.0.into_iter()
        .enumerate()
        .map(|(seq, (kind, mut data))| {
            data["sequence_number"] = json!(seq);
            SseEvent::named(kind, data.to_string())
        })
        .collect()
}

/// `response.failed` as the `seq`-th event, carrying the error.
pub(crate) fn failed_event(ctx: &Ctx, seq: usize, error_type: &str, message: &str) -> SseEvent {
    let mut failed = response(ctx, "failed", json!([]), Value::Null);
    failed["error"] = json!({"code": error_type, "message": message});
    let data = json!({"type": "response.failed", "sequence_number": seq, "response": failed});
    SseEvent::named("response.failed", data.to_string())
}

/// The non-streaming `response` object.
pub(crate) fn full_body(ctx: &Ctx, reply: &Reply) -> Value {
    response(
        ctx,
        final_status(reply),
        Value::Array(final_items(ctx, reply)),
        usage(reply),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::script::{ScriptToolCall, ScriptUsage};

    fn ctx() -> Ctx {
        Ctx {
            reply_no: 1,
            model: "gpt-5-test".into(),
            include_usage: false,
            created: 7,
        }
    }

    fn stream(reply: &Reply) -> Vec<Value> {
        let events = stream_events(&ctx(), reply);
        events
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let d: Value = serde_json::from_str(&e.data).unwrap();
                assert_eq!(d["type"], e.name.as_deref().unwrap());
                assert_eq!(d["sequence_number"], i);
                d
            })
            .collect()
    }

    #[test]
    fn streams_reasoning_message_and_function_call_items() {
        let reply = Reply {
            thinking: Some("plan: read it".into()),
            text: Some("Let me look at that file.".into()),
            tool_calls: vec![ScriptToolCall {
                id: None,
                name: "read".into(),
                arguments: json!({"path": "Cargo.toml"}),
                raw_arguments: None,
            }],
            usage: Some(ScriptUsage {
                input_tokens: 50,
                output_tokens: 8,
                cache_read_tokens: 30,
                cache_write_tokens: 0,
            }),
            ..Reply::default()
        };
        let d = stream(&reply);
        assert_eq!(d[0]["type"], "response.created");
        assert_eq!(d[0]["response"]["status"], "in_progress");
        assert_eq!(d[1]["type"], "response.in_progress");
        let added: Vec<&Value> = d
            .iter()
            .filter(|e| e["type"] == "response.output_item.added")
            .collect();
        assert_eq!(added.len(), 3);
        assert_eq!(added[0]["item"]["type"], "reasoning");
        assert_eq!(added[1]["item"]["type"], "message");
        assert_eq!(added[2]["item"]["type"], "function_call");
        assert_eq!(added[2]["item"]["call_id"], "call_1_0");
        assert_eq!(added[2]["item"]["arguments"], "");
        let join = |kind: &str| -> String {
            d.iter()
                .filter(|e| e["type"] == kind)
                .filter_map(|e| e["delta"].as_str())
                .collect()
        };
        assert_eq!(
            join("response.reasoning_summary_text.delta"),
            "plan: read it"
        );
        assert_eq!(
            join("response.output_text.delta"),
            "Let me look at that file."
        );
        assert_eq!(
            join("response.function_call_arguments.delta"),
            r#"{"path":"Cargo.toml"}"#
        );
        let text_delta = d
            .iter()
            .find(|e| e["type"] == "response.output_text.delta")
            .unwrap();
        assert_eq!(text_delta["item_id"], "msg_atto1");
        assert_eq!(text_delta["output_index"], 1);
        assert_eq!(text_delta["content_index"], 0);
        let last = d.last().unwrap();
        assert_eq!(last["type"], "response.completed");
        let resp = &last["response"];
        assert_eq!(resp["status"], "completed");
        assert_eq!(resp["output"].as_array().unwrap().len(), 3);
        assert_eq!(resp["usage"]["input_tokens"], 80);
        assert_eq!(resp["usage"]["input_tokens_details"]["cached_tokens"], 30);
        assert_eq!(resp["usage"]["total_tokens"], 88);
    }

    #[test]
    fn max_tokens_ends_incomplete() {
        let reply = Reply {
            text: Some("trunc".into()),
            stop: Some(ScriptStop::MaxTokens),
            ..Reply::default()
        };
        let d = stream(&reply);
        let last = d.last().unwrap();
        assert_eq!(last["type"], "response.incomplete");
        assert_eq!(last["response"]["status"], "incomplete");
        assert_eq!(
            last["response"]["incomplete_details"]["reason"],
            "max_output_tokens"
        );
        assert_eq!(full_body(&ctx(), &reply)["status"], "incomplete");
    }

    #[test]
    fn failed_event_carries_error() {
        let ev = failed_event(&ctx(), 4, "server_error", "boom");
        let d: Value = serde_json::from_str(&ev.data).unwrap();
        assert_eq!(d["sequence_number"], 4);
        assert_eq!(d["response"]["status"], "failed");
        assert_eq!(d["response"]["error"]["message"], "boom");
    }
}
