//! OpenAI Responses (`POST /responses`), stateless (`store: false`).
//!
//! Owns the request body (`instructions` + `input` items) and the stream decoder
//! (`response.output_item.*`, text / argument / reasoning-summary deltas, and the
//! terminal `response.completed`, `response.incomplete` or `response.failed`).
//! Reasoning is not replayed: without stored responses it would need encrypted
//! reasoning content, which atto does not request.

use atto_protocol::{AssistantPart, Message, StopReason, ToolCall, Usage, user_text_for_model};
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Slot, Slots, arguments_text, parse};
use crate::error::from_event;
use crate::sse::SseEvent;
use crate::{ModelError, ModelRequest, ModelResponse, StreamUpdate};

pub(crate) fn body(model: &str, req: &ModelRequest<'_>) -> Value {
    let mut input = Vec::with_capacity(req.messages.len());
    for message in req.messages.iter() {
        match message {
            Message::User { text, context } => input.push(json!({
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": user_text_for_model(text, context.as_deref())}],
            })),
            Message::Assistant { parts } => {
                for part in parts {
                    match part {
                        AssistantPart::Text { text } if !text.is_empty() => input.push(json!({
                            "type": "message",
                            "role": "assistant",
                            "content": [{"type": "output_text", "text": text}],
                        })),
                        AssistantPart::ToolCall(c) => input.push(json!({
                            "type": "function_call",
                            "call_id": c.id,
                            "name": c.name,
                            "arguments": arguments_text(&c.arguments),
                        })),
                        AssistantPart::Text { .. }
                        | AssistantPart::Thinking { .. }
                        | AssistantPart::RedactedThinking { .. } => {}
                    }
                }
            }
            Message::ToolResult(r) => input.push(json!({
                "type": "function_call_output",
                "call_id": r.call_id,
                "output": r.content,
            })),
        }
    }
    let mut body = json!({
        "model": model,
        "input": input,
        "stream": true,
        "store": false,
        "max_output_tokens": req.max_output_tokens,
    });
    if let Some(effort) = req.effort {
        body["reasoning"] = json!({"effort": crate::effort_name(effort)});
    }
    if let Some(t) = req.temperature {
        body["temperature"] = json!(t);
    }
    if !req.system.is_empty() {
        body["instructions"] = Value::String(req.system.to_string());
    }
    if !req.tools.is_empty() {
        body["tools"] = req
            .tools
            .iter()
            .map(|t| {
                json!({
                    "type": "function",
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.parameters,
                })
            })
            .collect();
    }
    body
}

#[derive(Deserialize)]
#[serde(tag = "type")]
enum Event {
    #[serde(rename = "response.created")]
    Created { response: Response },
    #[serde(rename = "response.output_item.added")]
    ItemAdded {
        #[serde(flatten)]
        at: Locator,
        item: Item,
    },
    #[serde(rename = "response.output_item.done")]
    ItemDone {
        #[serde(flatten)]
        at: Locator,
        item: Item,
    },
    #[serde(rename = "response.output_text.delta")]
    TextDelta {
        #[serde(flatten)]
        at: Locator,
        delta: String,
    },
    #[serde(rename = "response.function_call_arguments.delta")]
    ArgsDelta {
        #[serde(flatten)]
        at: Locator,
        delta: String,
    },
    #[serde(
        rename = "response.reasoning_summary_text.delta",
        alias = "response.reasoning_text.delta"
    )]
    ReasoningDelta {
        #[serde(flatten)]
        at: Locator,
        delta: String,
    },
    #[serde(rename = "response.completed", alias = "response.incomplete")]
    Completed { response: Response },
    #[serde(rename = "response.failed")]
    Failed { response: Response },
    #[serde(rename = "error")]
    Error {
        #[serde(default)]
        code: Option<String>,
        #[serde(default)]
        message: Option<String>,
        #[serde(default)]
        error: Option<ErrorBody>,
    },
    #[serde(other)]
    Unknown,
}

/// Where a delta belongs: `output_index`, or `item_id` from servers that omit it.
#[derive(Deserialize)]
struct Locator {
    #[serde(default)]
    output_index: Option<u32>,
    #[serde(default)]
    item_id: Option<String>,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Item {
    Message {
        #[serde(default)]
        id: Option<String>,
        #[serde(default)]
        content: Vec<ContentPart>,
    },
    FunctionCall {
        #[serde(default)]
        id: Option<String>,
        call_id: String,
        name: String,
        #[serde(default)]
        arguments: String,
    },
    Reasoning {
        #[serde(default)]
        id: Option<String>,
        #[serde(default)]
        summary: Vec<ContentPart>,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct ContentPart {
    #[serde(default)]
    text: Option<String>,
}

#[derive(Deserialize)]
struct Response {
    #[serde(default)]
    status: Option<String>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    usage: Option<ResponsesUsage>,
    #[serde(default)]
    incomplete_details: Option<IncompleteDetails>,
    #[serde(default)]
    error: Option<ErrorBody>,
}

#[derive(Deserialize)]
struct IncompleteDetails {
    #[serde(default)]
    reason: Option<String>,
}

#[derive(Deserialize)]
struct ResponsesUsage {
    #[serde(default)]
    input_tokens: u64,
    #[serde(default)]
    output_tokens: u64,
    #[serde(default)]
    input_tokens_details: Option<InputDetails>,
}

#[derive(Deserialize)]
struct InputDetails {
    #[serde(default)]
    cached_tokens: u64,
}

#[derive(Deserialize)]
struct ErrorBody {
    #[serde(default)]
    code: Option<String>,
    #[serde(default, rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    message: Option<String>,
}

/// An output item and the slot it fills.
struct OpenItem {
    output_index: Option<u32>,
    item_id: Option<String>,
    kind: ItemKind,
    /// `output_item.done` was seen for it.
    done: bool,
    slot: usize,
}

/// What an output item holds, to pair an `output_item.done` that names no item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ItemKind {
    Message,
    FunctionCall,
    Reasoning,
    Other,
}

impl Item {
    fn id(&self) -> Option<&String> {
        match self {
            Item::Message { id, .. }
            | Item::FunctionCall { id, .. }
            | Item::Reasoning { id, .. } => id.as_ref(),
            Item::Other => None,
        }
    }

    fn kind(&self) -> ItemKind {
        match self {
            Item::Message { .. } => ItemKind::Message,
            Item::FunctionCall { .. } => ItemKind::FunctionCall,
            Item::Reasoning { .. } => ItemKind::Reasoning,
            Item::Other => ItemKind::Other,
        }
    }
}

pub(crate) struct Decoder {
    model: String,
    slots: Slots,
    items: Vec<OpenItem>,
    stop: Option<StopReason>,
    usage: Usage,
    usage_reported: bool,
}

impl Decoder {
    pub(crate) fn new(model: &str) -> Decoder {
        Decoder {
            model: model.to_owned(),
            slots: Slots::default(),
            items: Vec::new(),
            stop: None,
            usage: Usage::default(),
            usage_reported: false,
        }
    }

    pub(crate) fn event(
        &mut self,
        ev: &SseEvent,
        on_update: &mut dyn FnMut(StreamUpdate),
    ) -> Result<bool, ModelError> {
        match parse::<Event>(&ev.data)? {
            Event::Created { response } => self.note_model(&response),
            Event::ItemAdded { at, item } => {
                self.slot_for(&at, &item, on_update);
            }
            Event::ItemDone { at, item } => self.item_done(&at, item, on_update),
            Event::TextDelta { at, delta } => {
                if let Some(Slot::Text(text)) = self.find(&at) {
                    text.push_str(&delta);
                } else {
                    self.slots.push_text(&delta);
                }
                on_update(StreamUpdate::Text(delta));
            }
            Event::ReasoningDelta { at, delta } => {
                if let Some(Slot::Thinking { text, .. }) = self.find(&at) {
                    text.push_str(&delta);
                } else {
                    self.slots.push_thinking(&delta);
                }
                on_update(StreamUpdate::Thinking(delta));
            }
            Event::ArgsDelta { at, delta } => {
                if let Some(Slot::Tool(call)) = self.find(&at) {
                    call.arguments.push_str(&delta);
                    let id = call.id.clone();
                    on_update(StreamUpdate::ToolCallArgs {
                        id,
                        fragment: delta,
                    });
                }
            }
            Event::Completed { response } => {
                self.completed(&response);
                return Ok(true);
            }
            Event::Failed { response } => {
                let err = response.error.unwrap_or(ErrorBody {
                    code: None,
                    kind: None,
                    message: None,
                });
                return Err(error(err));
            }
            Event::Error {
                code,
                message,
                error: nested,
            } => {
                return Err(error(nested.unwrap_or(ErrorBody {
                    code,
                    kind: None,
                    message,
                })));
            }
            Event::Unknown => {}
        }
        Ok(false)
    }

    fn note_model(&mut self, response: &Response) {
        if let Some(model) = response.model.as_ref().filter(|m| !m.is_empty()) {
            self.model.clone_from(model);
        }
    }

    /// The slot an event belongs to: by `output_index`, else by item id (the event's
    /// `item_id` or, on `output_item.*`, the item's own `id`), else — for an
    /// `output_item.done` with neither — the oldest item not yet done. Servers differ in
    /// which of these they send (llama.cpp sends no `output_index`).
    fn position(&self, at: &Locator, item: Option<&Item>) -> Option<usize> {
        if let Some(n) = at.output_index
            && let Some(open) = self.items.iter().find(|i| i.output_index == Some(n))
        {
            return Some(open.slot);
        }
        let id = at.item_id.as_ref().or_else(|| item.and_then(Item::id));
        if let Some(id) = id {
            return self
                .items
                .iter()
                .find(|i| i.item_id.as_ref() == Some(id))
                .map(|i| i.slot);
        }
        if at.output_index.is_some() {
            return None;
        }
        let item = item?;
        self.items
            .iter()
            .find(|i| !i.done && i.kind == item.kind())
            .map(|i| i.slot)
    }

    fn find(&mut self, at: &Locator) -> Option<&mut Slot> {
        let slot = self.position(at, None)?;
        self.slots.get_mut(slot)
    }

    /// The slot of an output item, started (and announced) on first sight.
    fn slot_for(
        &mut self,
        at: &Locator,
        item: &Item,
        on_update: &mut dyn FnMut(StreamUpdate),
    ) -> Option<usize> {
        if let Some(slot) = self.position(at, Some(item)) {
            return Some(slot);
        }
        let (item_id, slot) = match item {
            Item::Message { id, .. } => (id, Slot::Text(String::new())),
            Item::Reasoning { id, .. } => (
                id,
                Slot::Thinking {
                    text: String::new(),
                    signature: None,
                },
            ),
            Item::FunctionCall {
                id, call_id, name, ..
            } => {
                // A second item with a call id already seen continues that call: one
                // call id is one call (see `Slots::into_parts`).
                if let Some(slot) = self.slots.tool_slot(call_id) {
                    self.items.push(OpenItem {
                        output_index: at.output_index,
                        item_id: id.clone().or_else(|| at.item_id.clone()),
                        kind: item.kind(),
                        done: false,
                        slot,
                    });
                    return Some(slot);
                }
                on_update(StreamUpdate::ToolCallBegin {
                    id: call_id.clone(),
                    name: name.clone(),
                });
                (
                    id,
                    Slot::Tool(ToolCall {
                        id: call_id.clone(),
                        name: name.clone(),
                        arguments: String::new(),
                    }),
                )
            }
            Item::Other => return None,
        };
        let slot = self.slots.start(slot);
        self.items.push(OpenItem {
            output_index: at.output_index,
            item_id: item_id.clone().or_else(|| at.item_id.clone()),
            kind: item.kind(),
            done: false,
            slot,
        });
        Some(slot)
    }

    /// The finished item's content wins over the deltas, when it has any.
    fn item_done(&mut self, at: &Locator, item: Item, on_update: &mut dyn FnMut(StreamUpdate)) {
        let Some(slot) = self.slot_for(at, &item, on_update) else {
            return;
        };
        if let Some(open) = self.items.iter_mut().find(|i| i.slot == slot && !i.done) {
            open.done = true;
        }
        let Some(target) = self.slots.get_mut(slot) else {
            return;
        };
        match (target, item) {
            (Slot::Text(text), Item::Message { content, .. }) => {
                let full: String = content.into_iter().filter_map(|p| p.text).collect();
                if !full.is_empty() {
                    *text = full;
                }
            }
            (Slot::Thinking { text, .. }, Item::Reasoning { summary, .. }) => {
                let full: Vec<String> = summary.into_iter().filter_map(|p| p.text).collect();
                if !full.is_empty() {
                    *text = full.join("\n\n");
                }
            }
            (Slot::Tool(call), Item::FunctionCall { arguments, .. }) if !arguments.is_empty() => {
                call.arguments = arguments;
            }
            _ => {}
        }
    }

    fn completed(&mut self, response: &Response) {
        self.note_model(response);
        if let Some(u) = &response.usage {
            self.usage_reported = true;
            let cached = u
                .input_tokens_details
                .as_ref()
                .map_or(0, |d| d.cached_tokens);
            self.usage = Usage {
                input_tokens: u.input_tokens.saturating_sub(cached),
                output_tokens: u.output_tokens,
                cache_read_tokens: cached,
                cache_write_tokens: 0,
            };
        }
        let reason = response
            .incomplete_details
            .as_ref()
            .and_then(|d| d.reason.as_deref());
        self.stop = Some(match (response.status.as_deref(), reason) {
            (Some("incomplete"), Some("max_output_tokens")) => StopReason::MaxTokens,
            (Some("incomplete"), Some("content_filter")) => StopReason::ContentFilter,
            (Some("incomplete"), other) => {
                StopReason::Other(other.unwrap_or("incomplete").to_owned())
            }
            _ if self.slots.has_tool_calls() => StopReason::ToolUse,
            _ => StopReason::EndTurn,
        });
    }

    pub(crate) fn finish(self) -> Result<ModelResponse, ModelError> {
        let Some(stop) = self.stop else {
            return Err(ModelError::StreamCut(
                "the stream ended before response.completed".to_owned(),
            ));
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

fn error(e: ErrorBody) -> ModelError {
    let kind = e.code.or(e.kind).unwrap_or_else(|| "error".to_owned());
    from_event(&kind, e.message.as_deref().unwrap_or(""))
}

#[cfg(test)]
#[path = "responses_tests.rs"]
mod tests;
