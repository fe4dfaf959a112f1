//! Anthropic Messages (`POST /v1/messages`).
//!
//! Owns the request body (system prompt marked for caching, strict user/assistant
//! alternation, tool results as `tool_result` blocks, signed thinking replayed) and the
//! stream decoder (`message_start` … `message_stop`, content blocks by index).

use atto_protocol::{AssistantPart, Message, StopReason, ToolCall, Usage, user_text_for_model};
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Slot, Slots, arguments_object, parse};
use crate::error::from_event;
use crate::sse::SseEvent;
use crate::{ModelError, ModelRequest, ModelResponse, StreamUpdate};

pub(crate) fn body(model: &str, req: &ModelRequest<'_>) -> Value {
    // (role, blocks); consecutive same-role entries are merged, as the API requires.
    let mut turns: Vec<(&str, Vec<Value>)> = Vec::with_capacity(req.messages.len());
    for message in req.messages.iter() {
        let (role, blocks) = match message {
            Message::User { text, context } if text.is_empty() && context.is_none() => continue,
            Message::User { text, context } => (
                "user",
                vec![
                    json!({"type": "text", "text": user_text_for_model(text, context.as_deref())}),
                ],
            ),
            Message::Assistant { parts } => ("assistant", assistant_blocks(parts)),
            Message::ToolResult(r) => (
                "user",
                vec![json!({
                    "type": "tool_result",
                    "tool_use_id": r.call_id,
                    "content": r.content,
                    "is_error": r.is_error,
                })],
            ),
        };
        if blocks.is_empty() {
            continue;
        }
        match turns.last_mut() {
            Some((last_role, last)) if *last_role == role => last.extend(blocks),
            _ => turns.push((role, blocks)),
        }
    }
    mark_history_end(&mut turns);
    let messages: Vec<Value> = turns
        .into_iter()
        .map(|(role, content)| json!({"role": role, "content": content}))
        .collect();
    let mut body = json!({
        "model": model,
        "messages": messages,
        "max_tokens": req.max_output_tokens,
        "stream": true,
    });
    if let Some(effort) = req.effort {
        // The budget counts toward max_tokens, which must exceed it: room for the answer
        // is kept on top.
        let budget = crate::thinking_budget(effort);
        body["thinking"] = json!({"type": "enabled", "budget_tokens": budget});
        body["max_tokens"] = json!(
            req.max_output_tokens
                .max(budget + crate::effort::MIN_ANSWER_TOKENS)
        );
    } else if let Some(t) = req.temperature {
        // With thinking on, Anthropic fixes the temperature itself.
        body["temperature"] = json!(t);
    }
    if !req.system.is_empty() {
        body["system"] = json!([{
            "type": "text",
            "text": req.system,
            "cache_control": {"type": "ephemeral"},
        }]);
    }
    if !req.tools.is_empty() {
        body["tools"] = req
            .tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.parameters}))
            .collect();
    }
    body
}

/// The second cache breakpoint (the first ends the system prompt, after the tools): the
/// last block of the history, so the next request reads everything before its new turn
/// from the cache. Set only on a user turn's text or tool result, the blocks that may
/// carry one (never on reasoning).
fn mark_history_end(turns: &mut [(&str, Vec<Value>)]) {
    let Some(("user", blocks)) = turns.last_mut() else {
        return;
    };
    if let Some(block) = blocks.last_mut()
        && matches!(block["type"].as_str(), Some("text" | "tool_result"))
    {
        block["cache_control"] = json!({"type": "ephemeral"});
    }
}

fn assistant_blocks(parts: &[AssistantPart]) -> Vec<Value> {
    parts
        .iter()
        .filter_map(|part| match part {
            AssistantPart::Text { text } if text.is_empty() => None,
            AssistantPart::Text { text } => Some(json!({"type": "text", "text": text})),
            // Unsigned reasoning (from another wire) would be rejected; it is dropped.
            AssistantPart::Thinking {
                text,
                signature: Some(sig),
            } => Some(json!({"type": "thinking", "thinking": text, "signature": sig})),
            AssistantPart::Thinking {
                signature: None, ..
            } => None,
            AssistantPart::RedactedThinking { data } => {
                Some(json!({"type": "redacted_thinking", "data": data}))
            }
            AssistantPart::ToolCall(c) => Some(json!({
                "type": "tool_use",
                "id": c.id,
                "name": c.name,
                "input": arguments_object(&c.arguments),
            })),
        })
        .collect()
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Event {
    MessageStart {
        message: StartMessage,
    },
    ContentBlockStart {
        index: u32,
        content_block: Block,
    },
    ContentBlockDelta {
        index: u32,
        delta: Delta,
    },
    ContentBlockStop {},
    MessageDelta {
        #[serde(default)]
        delta: MessageDelta,
        #[serde(default)]
        usage: Option<AnthropicUsage>,
    },
    MessageStop {},
    Ping {},
    Error {
        error: ErrorBody,
    },
    #[serde(other)]
    Unknown,
}

#[derive(Deserialize)]
struct StartMessage {
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    usage: Option<AnthropicUsage>,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Block {
    Text {
        #[serde(default)]
        text: String,
    },
    Thinking {
        #[serde(default)]
        thinking: String,
        #[serde(default)]
        signature: Option<String>,
    },
    RedactedThinking {
        data: String,
    },
    ToolUse {
        id: String,
        name: String,
        #[serde(default)]
        input: Value,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Delta {
    #[serde(rename = "text_delta")]
    Text { text: String },
    #[serde(rename = "input_json_delta")]
    InputJson { partial_json: String },
    #[serde(rename = "thinking_delta")]
    Thinking { thinking: String },
    #[serde(rename = "signature_delta")]
    Signature { signature: String },
    #[serde(other)]
    Other,
}

#[derive(Deserialize, Default)]
struct MessageDelta {
    #[serde(default)]
    stop_reason: Option<String>,
}

#[derive(Deserialize)]
struct AnthropicUsage {
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: Option<u64>,
    #[serde(default)]
    cache_read_input_tokens: Option<u64>,
    #[serde(default)]
    cache_creation_input_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct ErrorBody {
    #[serde(default, rename = "type")]
    kind: String,
    #[serde(default)]
    message: String,
}

/// A content block: its stream index, its slot, and for tool calls the `input` the
/// start event carried (used when no `input_json_delta` follows).
struct OpenBlock {
    index: u32,
    slot: usize,
    start_input: Option<String>,
}

pub(crate) struct Decoder {
    model: String,
    slots: Slots,
    blocks: Vec<OpenBlock>,
    /// The index the next `content_block_start` must carry: blocks are numbered 0, 1,
    /// 2… in stream order, whatever their kind.
    next_index: u32,
    stop_reason: Option<String>,
    usage: Usage,
    usage_reported: bool,
    done: bool,
}

impl Decoder {
    pub(crate) fn new(model: &str) -> Decoder {
        Decoder {
            model: model.to_owned(),
            slots: Slots::default(),
            blocks: Vec::new(),
            next_index: 0,
            stop_reason: None,
            usage: Usage::default(),
            usage_reported: false,
            done: false,
        }
    }

    pub(crate) fn event(
        &mut self,
        ev: &SseEvent,
        on_update: &mut dyn FnMut(StreamUpdate),
    ) -> Result<bool, ModelError> {
        match parse::<Event>(&ev.data)? {
            Event::MessageStart { message } => {
                if let Some(model) = message.model.filter(|m| !m.is_empty()) {
                    self.model = model;
                }
                if let Some(u) = message.usage {
                    self.merge_usage(&u);
                }
            }
            Event::ContentBlockStart {
                index,
                content_block,
            } => {
                if index != self.next_index {
                    return Err(ModelError::Decode(format!(
                        "content block {index} started where block {} was due (indices skip \
                         or arrive out of order)",
                        self.next_index
                    )));
                }
                self.next_index += 1;
                self.start_block(index, content_block, on_update);
            }
            Event::ContentBlockDelta { index, delta } => {
                if index >= self.next_index {
                    return Err(ModelError::Decode(format!(
                        "a delta for content block {index}, which was never started"
                    )));
                }
                self.delta(index, delta, on_update);
            }
            Event::MessageDelta { delta, usage } => {
                if delta.stop_reason.is_some() {
                    self.stop_reason = delta.stop_reason;
                }
                if let Some(u) = usage {
                    self.merge_usage(&u);
                }
            }
            Event::MessageStop {} => {
                self.done = true;
                return Ok(true);
            }
            Event::Error { error } => return Err(from_event(&error.kind, &error.message)),
            Event::ContentBlockStop {} | Event::Ping {} | Event::Unknown => {}
        }
        Ok(false)
    }

    /// `message_delta` counts are cumulative and win over `message_start`'s.
    fn merge_usage(&mut self, u: &AnthropicUsage) {
        self.usage_reported = true;
        let set = |field: &mut u64, v: Option<u64>| {
            if let Some(v) = v {
                *field = v;
            }
        };
        set(&mut self.usage.input_tokens, u.input_tokens);
        set(&mut self.usage.output_tokens, u.output_tokens);
        set(&mut self.usage.cache_read_tokens, u.cache_read_input_tokens);
        set(
            &mut self.usage.cache_write_tokens,
            u.cache_creation_input_tokens,
        );
    }

    fn start_block(&mut self, index: u32, block: Block, on_update: &mut dyn FnMut(StreamUpdate)) {
        let mut start_input = None;
        let slot = match block {
            Block::Text { text } => {
                if !text.is_empty() {
                    on_update(StreamUpdate::Text(text.clone()));
                }
                Slot::Text(text)
            }
            Block::Thinking {
                thinking,
                signature,
            } => {
                if !thinking.is_empty() {
                    on_update(StreamUpdate::Thinking(thinking.clone()));
                }
                Slot::Thinking {
                    text: thinking,
                    signature,
                }
            }
            Block::RedactedThinking { data } => Slot::Redacted(data),
            Block::ToolUse { id, name, input } => {
                on_update(StreamUpdate::ToolCallBegin {
                    id: id.clone(),
                    name: name.clone(),
                });
                if input.as_object().is_some_and(|o| !o.is_empty()) {
                    start_input = Some(input.to_string());
                }
                Slot::Tool(ToolCall {
                    id,
                    name,
                    arguments: String::new(),
                })
            }
            // Server tool blocks and future kinds carry nothing atto replays.
            Block::Other => return,
        };
        let slot = self.slots.start(slot);
        self.blocks.push(OpenBlock {
            index,
            slot,
            start_input,
        });
    }

    fn delta(&mut self, index: u32, delta: Delta, on_update: &mut dyn FnMut(StreamUpdate)) {
        let Some(block) = self.blocks.iter().find(|b| b.index == index) else {
            return;
        };
        let Some(slot) = self.slots.get_mut(block.slot) else {
            return;
        };
        match (slot, delta) {
            (Slot::Text(text), Delta::Text { text: d }) => {
                text.push_str(&d);
                on_update(StreamUpdate::Text(d));
            }
            (Slot::Tool(call), Delta::InputJson { partial_json }) => {
                if partial_json.is_empty() {
                    return;
                }
                call.arguments.push_str(&partial_json);
                on_update(StreamUpdate::ToolCallArgs {
                    id: call.id.clone(),
                    fragment: partial_json,
                });
            }
            (Slot::Thinking { text, .. }, Delta::Thinking { thinking }) => {
                text.push_str(&thinking);
                on_update(StreamUpdate::Thinking(thinking));
            }
            (Slot::Thinking { signature, .. }, Delta::Signature { signature: s }) => {
                signature.get_or_insert_with(String::new).push_str(&s);
            }
            // A delta that does not fit its block is ignored rather than guessed at.
            _ => {}
        }
    }

    pub(crate) fn finish(mut self) -> Result<ModelResponse, ModelError> {
        if !self.done {
            return Err(ModelError::StreamCut(
                "the stream ended before message_stop".to_owned(),
            ));
        }
        for block in &mut self.blocks {
            if let Some(Slot::Tool(call)) = self.slots.get_mut(block.slot)
                && call.arguments.is_empty()
            {
                call.arguments = block.start_input.take().unwrap_or_else(|| "{}".to_owned());
            }
        }
        let stop = match self.stop_reason.as_deref() {
            Some("end_turn" | "stop_sequence") | None => StopReason::EndTurn,
            Some("tool_use") => StopReason::ToolUse,
            Some("max_tokens" | "model_context_window_exceeded") => StopReason::MaxTokens,
            Some("refusal") => StopReason::ContentFilter,
            Some(other) => StopReason::Other(other.to_owned()),
        };
        Ok(ModelResponse {
            parts: self.slots.into_parts(),
            stop,
            usage: self.usage,
            usage_reported: self.usage_reported,
            model: self.model,
        })
    }
}

#[cfg(test)]
#[path = "anthropic_tests.rs"]
mod tests;
