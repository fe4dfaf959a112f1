//! OpenAI Chat Completions (`POST /chat/completions`), as spoken by OpenAI, DeepSeek,
//! OpenRouter, Ollama, vLLM, LM Studio and llama.cpp.
//!
//! Owns the request body and the stream decoder: text and `reasoning_content` deltas,
//! tool calls assembled by index, `finish_reason`, the usage chunk and `[DONE]`.
//! Reasoning is never sent back: these servers do not accept it in history.

use atto_protocol::{AssistantPart, Message, StopReason, ToolCall, Usage, user_text_for_model};
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Slot, Slots, arguments_text, parse};
use crate::error::from_event;
use crate::sse::SseEvent;
use crate::{ModelError, ModelRequest, ModelResponse, StreamUpdate};

pub(crate) fn body(model: &str, req: &ModelRequest<'_>) -> Value {
    let mut messages = Vec::with_capacity(req.messages.len() + 1);
    if !req.system.is_empty() {
        messages.push(json!({"role": "system", "content": req.system}));
    }
    for message in req.messages.iter() {
        match message {
            Message::User { text, context } => messages.push(
                json!({"role": "user", "content": user_text_for_model(text, context.as_deref())}),
            ),
            Message::Assistant { parts } => {
                let mut text = String::new();
                let mut calls = Vec::new();
                for part in parts {
                    match part {
                        AssistantPart::Text { text: t } => text.push_str(t),
                        AssistantPart::ToolCall(c) => calls.push(json!({
                            "id": c.id,
                            "type": "function",
                            "function": {"name": c.name, "arguments": arguments_text(&c.arguments)},
                        })),
                        AssistantPart::Thinking { .. } | AssistantPart::RedactedThinking { .. } => {
                        }
                    }
                }
                if text.is_empty() && calls.is_empty() {
                    continue;
                }
                let mut m = json!({
                    "role": "assistant",
                    "content": if text.is_empty() { Value::Null } else { Value::String(text) },
                });
                if !calls.is_empty() {
                    m["tool_calls"] = Value::Array(calls);
                }
                messages.push(m);
            }
            Message::ToolResult(r) => messages.push(json!({
                "role": "tool",
                "tool_call_id": r.call_id,
                "content": r.content,
            })),
        }
    }
    let mut body = json!({
        "model": model,
        "messages": messages,
        "stream": true,
        "stream_options": {"include_usage": true},
    });
    // OpenAI's reasoning models reject `max_tokens`; everyone else knows only it.
    let limit = if takes_max_completion_tokens(model) {
        "max_completion_tokens"
    } else {
        "max_tokens"
    };
    body[limit] = json!(req.max_output_tokens);
    if let Some(t) = req.temperature {
        body["temperature"] = json!(t);
    }
    if let Some(effort) = req.effort {
        body["reasoning_effort"] = json!(crate::effort_name(effort));
    }
    if !req.tools.is_empty() {
        body["tools"] = req
            .tools
            .iter()
            .map(|t| {
                json!({"type": "function", "function": {
                    "name": t.name, "description": t.description, "parameters": t.parameters,
                }})
            })
            .collect();
    }
    body
}

/// Whether `model` is one of OpenAI's reasoning models (o1, o3, o4…, the GPT-5 family,
/// codex-mini), which take `max_completion_tokens` on the chat wire. A router's
/// `vendor/` prefix is ignored, as in [`crate::takes_effort`].
fn takes_max_completion_tokens(model: &str) -> bool {
    let lower = model.to_ascii_lowercase();
    let id = lower.rsplit('/').next().unwrap_or(&lower);
    let o_series = ["o1", "o3", "o4"].iter().any(|p| {
        id.strip_prefix(p)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('-'))
    });
    o_series || id.starts_with("gpt-5") || id.starts_with("codex-mini")
}

#[derive(Deserialize)]
struct Chunk {
    #[serde(default)]
    choices: Vec<Choice>,
    #[serde(default)]
    usage: Option<ChatUsage>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    error: Option<ErrorBody>,
}

#[derive(Deserialize)]
struct Choice {
    /// Which of `n` choices; servers that send one choice may leave it out.
    #[serde(default)]
    index: u32,
    #[serde(default)]
    delta: Option<Delta>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize, Default)]
struct Delta {
    #[serde(default)]
    content: Option<String>,
    /// DeepSeek and vLLM.
    #[serde(default)]
    reasoning_content: Option<String>,
    /// OpenRouter and Ollama.
    #[serde(default)]
    reasoning: Option<String>,
    #[serde(default)]
    tool_calls: Vec<ToolDelta>,
}

#[derive(Deserialize)]
struct ToolDelta {
    #[serde(default)]
    index: Option<u32>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<FunctionDelta>,
}

#[derive(Deserialize)]
struct FunctionDelta {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<String>,
}

#[derive(Deserialize)]
struct ChatUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
    #[serde(default)]
    prompt_tokens_details: Option<PromptDetails>,
    /// DeepSeek's name for cached prompt tokens.
    #[serde(default)]
    prompt_cache_hit_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct PromptDetails {
    #[serde(default)]
    cached_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct ErrorBody {
    #[serde(default)]
    message: Option<String>,
    #[serde(default, rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    code: Option<Value>,
}

/// A tool call being assembled.
struct Pending {
    index: u32,
    slot: usize,
    /// Whether `ToolCallBegin` was sent (it waits for the name).
    begun: bool,
}

pub(crate) struct Decoder {
    model: String,
    slots: Slots,
    tools: Vec<Pending>,
    finish_reason: Option<String>,
    usage: Usage,
    usage_reported: bool,
    done: bool,
}

impl Decoder {
    pub(crate) fn new(model: &str) -> Decoder {
        Decoder {
            model: model.to_owned(),
            slots: Slots::default(),
            tools: Vec::new(),
            finish_reason: None,
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
        let data = ev.data.trim();
        if data == "[DONE]" {
            self.done = true;
            return Ok(true);
        }
        if data.is_empty() {
            return Ok(false);
        }
        let chunk: Chunk = parse(data)?;
        if let Some(err) = chunk.error {
            let kind = err.kind.or_else(|| match err.code {
                Some(Value::String(s)) => Some(s),
                Some(Value::Number(n)) => Some(n.to_string()),
                _ => None,
            });
            return Err(from_event(
                kind.as_deref().unwrap_or("error"),
                err.message.as_deref().unwrap_or(""),
            ));
        }
        if let Some(model) = chunk.model.filter(|m| !m.is_empty()) {
            self.model = model;
        }
        if let Some(u) = chunk.usage {
            self.usage_reported = true;
            let cached = u
                .prompt_tokens_details
                .and_then(|d| d.cached_tokens)
                .or(u.prompt_cache_hit_tokens)
                .unwrap_or(0);
            self.usage = Usage {
                input_tokens: u.prompt_tokens.saturating_sub(cached),
                output_tokens: u.completion_tokens,
                cache_read_tokens: cached,
                cache_write_tokens: 0,
            };
        }
        // atto asks for one choice; a proxy or `n > 1` may interleave others, which are
        // not part of this reply.
        if let Some(choice) = chunk.choices.into_iter().find(|c| c.index == 0) {
            if let Some(delta) = choice.delta {
                self.delta(delta, on_update);
            }
            if let Some(reason) = choice.finish_reason.filter(|r| !r.is_empty()) {
                self.finish_reason = Some(reason);
            }
        }
        Ok(false)
    }

    fn delta(&mut self, delta: Delta, on_update: &mut dyn FnMut(StreamUpdate)) {
        for thinking in [delta.reasoning_content, delta.reasoning]
            .into_iter()
            .flatten()
        {
            if !thinking.is_empty() {
                self.slots.push_thinking(&thinking);
                on_update(StreamUpdate::Thinking(thinking));
            }
        }
        if let Some(text) = delta.content.filter(|t| !t.is_empty()) {
            self.slots.push_text(&text);
            on_update(StreamUpdate::Text(text));
        }
        for td in delta.tool_calls {
            self.tool_delta(td, on_update);
        }
    }

    fn tool_delta(&mut self, td: ToolDelta, on_update: &mut dyn FnMut(StreamUpdate)) {
        // Servers that omit `index` send one delta per call, or continue the last one.
        let index = match td.index {
            Some(i) => i,
            None => {
                let same_id = self.tools.iter().find(|t| {
                    matches!(self.slots.0.get(t.slot), Some(Slot::Tool(c)) if Some(&c.id) == td.id.as_ref())
                });
                match (same_id, self.tools.last(), &td.id) {
                    (Some(t), _, _) => t.index,
                    (None, Some(last), None) => last.index,
                    (None, Some(last), Some(_)) => last.index + 1,
                    (None, None, _) => 0,
                }
            }
        };
        let (name, fragment) = match td.function {
            Some(f) => (f.name, f.arguments),
            None => (None, None),
        };
        let pos = match self.tools.iter().position(|t| t.index == index) {
            Some(pos) => pos,
            None => {
                let id = td
                    .id
                    .clone()
                    .filter(|id| !id.is_empty())
                    .unwrap_or_else(|| format!("call_{index}"));
                let slot = self.slots.start(Slot::Tool(ToolCall {
                    id,
                    name: String::new(),
                    arguments: String::new(),
                }));
                self.tools.push(Pending {
                    index,
                    slot,
                    begun: false,
                });
                self.tools.len() - 1
            }
        };
        let pending = &mut self.tools[pos];
        let Some(Slot::Tool(call)) = self.slots.get_mut(pending.slot) else {
            return;
        };
        if let Some(name) = name.filter(|n| !n.is_empty())
            && call.name.is_empty()
        {
            call.name = name;
        }
        if let Some(fragment) = &fragment {
            call.arguments.push_str(fragment);
        }
        if !pending.begun && !call.name.is_empty() {
            pending.begun = true;
            on_update(StreamUpdate::ToolCallBegin {
                id: call.id.clone(),
                name: call.name.clone(),
            });
            // Arguments that arrived before the name are sent in one piece.
            if !call.arguments.is_empty() {
                on_update(StreamUpdate::ToolCallArgs {
                    id: call.id.clone(),
                    fragment: call.arguments.clone(),
                });
            }
        } else if pending.begun
            && let Some(fragment) = fragment.filter(|f| !f.is_empty())
        {
            on_update(StreamUpdate::ToolCallArgs {
                id: call.id.clone(),
                fragment,
            });
        }
    }

    pub(crate) fn finish(self) -> Result<ModelResponse, ModelError> {
        // Without `[DONE]` nothing proves the stream was not cut after a finish_reason
        // (a proxy or a dying server can close there): it is a cut stream, retried.
        let (true, Some(reason)) = (self.done, self.finish_reason) else {
            return Err(ModelError::StreamCut(if self.done {
                "the stream ended with [DONE] but no finish_reason".to_owned()
            } else {
                "the stream ended before [DONE]".to_owned()
            }));
        };
        let has_tools = self.slots.has_tool_calls();
        let stop = match reason.as_str() {
            "length" => StopReason::MaxTokens,
            "content_filter" => StopReason::ContentFilter,
            "tool_calls" | "function_call" => StopReason::ToolUse,
            // Some local servers report "stop" even when they called tools.
            "stop" | "end_turn" if has_tools => StopReason::ToolUse,
            "stop" | "end_turn" => StopReason::EndTurn,
            other => StopReason::Other(other.to_owned()),
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
#[path = "chat_tests.rs"]
mod tests;
