//! The three wire formats behind one small interface: where to send, what to send,
//! and a decoder that turns SSE events into updates and a final reply.
//!
//! Owns the dispatch between formats and the reply assembly they share ([`Slots`]).
//! Each submodule owns one provider format; none does I/O (`http` does).

pub(crate) mod anthropic;
pub(crate) mod chat;
pub(crate) mod responses;

use atto_protocol::{AssistantPart, ToolCall};
use serde::de::DeserializeOwned;

use crate::sse::{SseDecoder, SseEvent};
use crate::{ModelError, ModelRequest, ModelResponse, StreamUpdate, Wire};

/// The URL a request for `wire` goes to.
pub(crate) fn endpoint(wire: Wire, base_url: &str) -> String {
    match wire {
        Wire::Chat => format!("{base_url}/chat/completions"),
        Wire::Responses => format!("{base_url}/responses"),
        // The preset root has no version; a root already ending in /v1 is accepted too.
        Wire::Anthropic if base_url.ends_with("/v1") => format!("{base_url}/messages"),
        Wire::Anthropic => format!("{base_url}/v1/messages"),
    }
}

/// The JSON request body for `wire`.
pub(crate) fn body(wire: Wire, model: &str, req: &ModelRequest<'_>) -> serde_json::Value {
    match wire {
        Wire::Chat => chat::body(model, req),
        Wire::Responses => responses::body(model, req),
        Wire::Anthropic => anthropic::body(model, req),
    }
}

/// OpenAI's `prompt_cache_key`: a hash of the stable prefix (system prompt and tool
/// schemas), so every request of a session, and of other sessions with the same prefix,
/// is routed to the same cache. FNV-1a, fixed across builds and machines.
pub(crate) fn prompt_cache_key(req: &ModelRequest<'_>) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut feed = |bytes: &[u8]| {
        for b in bytes {
            hash ^= u64::from(*b);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    };
    feed(req.system.as_bytes());
    for tool in req.tools.iter() {
        feed(tool.name.as_bytes());
        feed(tool.description.as_bytes());
        feed(tool.parameters.to_string().as_bytes());
    }
    format!("atto-{hash:016x}")
}

/// A stream decoder for one wire format.
pub(crate) enum Decoder {
    Chat(chat::Decoder),
    Responses(responses::Decoder),
    Anthropic(anthropic::Decoder),
}

impl Decoder {
    pub(crate) fn new(wire: Wire, model: &str) -> Decoder {
        match wire {
            Wire::Chat => Decoder::Chat(chat::Decoder::new(model)),
            Wire::Responses => Decoder::Responses(responses::Decoder::new(model)),
            Wire::Anthropic => Decoder::Anthropic(anthropic::Decoder::new(model)),
        }
    }

    /// Handles one event; `Ok(true)` once the stream's terminal event was seen.
    pub(crate) fn event(
        &mut self,
        ev: &SseEvent,
        on_update: &mut dyn FnMut(StreamUpdate),
    ) -> Result<bool, ModelError> {
        match self {
            Decoder::Chat(d) => d.event(ev, on_update),
            Decoder::Responses(d) => d.event(ev, on_update),
            Decoder::Anthropic(d) => d.event(ev, on_update),
        }
    }

    /// The reply, once the byte stream has ended; `StreamCut` if it ended too early.
    pub(crate) fn finish(self) -> Result<ModelResponse, ModelError> {
        match self {
            Decoder::Chat(d) => d.finish(),
            Decoder::Responses(d) => d.finish(),
            Decoder::Anthropic(d) => d.finish(),
        }
    }
}

/// One part of a reply being assembled.
#[derive(Debug)]
pub(crate) enum Slot {
    Text(String),
    Thinking {
        text: String,
        signature: Option<String>,
    },
    Redacted(String),
    Tool(ToolCall),
}

/// Reply parts in the order they started.
#[derive(Debug, Default)]
pub(crate) struct Slots(pub Vec<Slot>);

impl Slots {
    /// Appends text to the last part if it is text, else starts a text part.
    pub(crate) fn push_text(&mut self, delta: &str) {
        if let Some(Slot::Text(text)) = self.0.last_mut() {
            text.push_str(delta);
        } else {
            self.0.push(Slot::Text(delta.to_owned()));
        }
    }

    /// Appends reasoning to the last part if it is reasoning, else starts one.
    pub(crate) fn push_thinking(&mut self, delta: &str) {
        if let Some(Slot::Thinking { text, .. }) = self.0.last_mut() {
            text.push_str(delta);
        } else {
            self.0.push(Slot::Thinking {
                text: delta.to_owned(),
                signature: None,
            });
        }
    }

    /// Starts a part and returns its position.
    pub(crate) fn start(&mut self, slot: Slot) -> usize {
        self.0.push(slot);
        self.0.len() - 1
    }

    pub(crate) fn get_mut(&mut self, at: usize) -> Option<&mut Slot> {
        self.0.get_mut(at)
    }

    /// The slot of the tool call with this id, if one was started.
    pub(crate) fn tool_slot(&self, id: &str) -> Option<usize> {
        self.0
            .iter()
            .position(|s| matches!(s, Slot::Tool(call) if call.id == id))
    }

    pub(crate) fn has_tool_calls(&self) -> bool {
        self.0.iter().any(|s| matches!(s, Slot::Tool(_)))
    }

    /// The finished parts; empty text and empty unsigned reasoning are dropped.
    ///
    /// One call id is one call: a tool call whose id an earlier call of this reply
    /// already has is dropped, so no reply ever asks for the same call twice. Its
    /// arguments are kept only when the earlier call has none (a server that announced
    /// the call once and sent it whole a second time).
    pub(crate) fn into_parts(self) -> Vec<AssistantPart> {
        let mut parts: Vec<AssistantPart> = Vec::with_capacity(self.0.len());
        for slot in self.0 {
            let part = match slot {
                Slot::Text(text) if text.is_empty() => continue,
                Slot::Text(text) => AssistantPart::Text { text },
                Slot::Thinking { text, signature } if text.is_empty() && signature.is_none() => {
                    continue;
                }
                Slot::Thinking { text, signature } => AssistantPart::Thinking { text, signature },
                Slot::Redacted(data) => AssistantPart::RedactedThinking { data },
                Slot::Tool(call) => {
                    let earlier = parts.iter_mut().find_map(|p| match p {
                        AssistantPart::ToolCall(c) if c.id == call.id => Some(c),
                        _ => None,
                    });
                    if let Some(earlier) = earlier {
                        if earlier.arguments.is_empty() {
                            earlier.arguments = call.arguments;
                        }
                        continue;
                    }
                    AssistantPart::ToolCall(call)
                }
            };
            parts.push(part);
        }
        parts
    }
}

/// Parses an event's JSON, mapping failure to `Decode` with a short excerpt.
pub(crate) fn parse<T: DeserializeOwned>(data: &str) -> Result<T, ModelError> {
    serde_json::from_str(data).map_err(|e| {
        let mut excerpt: String = data.chars().take(120).collect();
        if excerpt.len() < data.len() {
            excerpt.push('…');
        }
        ModelError::Decode(format!("{e} in event data {excerpt:?}"))
    })
}

/// Tool-call arguments as a JSON object, for history sent back to any wire. Invalid or
/// non-object text (a call cut off by the output limit: `{"path":`) becomes `{}`: the
/// call was already answered with an error result, which follows it as usual, and
/// servers such as llama.cpp answer 500 to invalid JSON in history, which would wedge
/// the session on a request that can never succeed.
pub(crate) fn arguments_object(arguments: &str) -> serde_json::Value {
    match serde_json::from_str::<serde_json::Value>(arguments) {
        Ok(v @ serde_json::Value::Object(_)) => v,
        _ => serde_json::Value::Object(serde_json::Map::new()),
    }
}

/// [`arguments_object`] as the JSON text the OpenAI wires carry; valid arguments are
/// sent exactly as received (no re-serialisation, so prompt caches keep matching).
pub(crate) fn arguments_text(arguments: &str) -> std::borrow::Cow<'_, str> {
    match serde_json::from_str::<serde_json::Value>(arguments) {
        Ok(serde_json::Value::Object(_)) => std::borrow::Cow::Borrowed(arguments),
        _ => std::borrow::Cow::Borrowed("{}"),
    }
}

/// Decodes a whole byte stream, arriving in `chunks`, as a reply on `wire`: SSE framing
/// and the wire's decoder, stopping at the terminal event as the HTTP client does. What
/// the fuzz targets and the decode tests drive; the HTTP client runs the same two
/// decoders on the chunks it receives.
pub fn decode_stream<'a>(
    wire: Wire,
    chunks: impl IntoIterator<Item = &'a [u8]>,
) -> (Vec<StreamUpdate>, Result<ModelResponse, ModelError>) {
    let mut updates = Vec::new();
    let mut sse = SseDecoder::new();
    let mut decoder = Decoder::new(wire, "requested-model");
    let mut events = Vec::new();
    let mut on_update = |u| updates.push(u);
    let mut pieces = chunks.into_iter();
    loop {
        let ended = match pieces.next() {
            Some(piece) => {
                if let Err(e) = sse.feed(piece, &mut events) {
                    return (updates, Err(ModelError::Decode(e.to_string())));
                }
                false
            }
            None => {
                sse.finish(&mut events);
                true
            }
        };
        for ev in events.drain(..) {
            match decoder.event(&ev, &mut on_update) {
                Ok(true) => return (updates, decoder.finish()),
                Ok(false) => {}
                Err(e) => return (updates, Err(e)),
            }
        }
        if ended {
            return (updates, decoder.finish());
        }
    }
}

/// Helpers for the per-wire decode tests.
#[cfg(test)]
pub(crate) mod testutil {
    use super::*;

    /// Feeds `stream` in `chunk`-byte pieces through SSE and the wire decoder.
    pub(crate) fn decode_chunked(
        wire: Wire,
        stream: &str,
        chunk: usize,
    ) -> (Vec<StreamUpdate>, Result<ModelResponse, ModelError>) {
        super::decode_stream(wire, stream.as_bytes().chunks(chunk.max(1)))
    }

    /// Decodes `stream` whole, and checks byte-at-a-time decoding agrees.
    pub(crate) fn decode(
        wire: Wire,
        stream: &str,
    ) -> (Vec<StreamUpdate>, Result<ModelResponse, ModelError>) {
        let whole = decode_chunked(wire, stream, usize::MAX);
        let bytewise = decode_chunked(wire, stream, 1);
        assert_eq!(format!("{whole:?}"), format!("{bytewise:?}"));
        whole
    }

    /// Concatenated text updates.
    pub(crate) fn text_of(updates: &[StreamUpdate]) -> String {
        updates
            .iter()
            .filter_map(|u| match u {
                StreamUpdate::Text(t) => Some(t.as_str()),
                _ => None,
            })
            .collect()
    }

    /// A request with one of everything.
    pub(crate) fn sample_request() -> ModelRequest<'static> {
        use atto_protocol::{Message, ToolResult, ToolSpec};
        ModelRequest {
            system: "You are atto.".into(),
            messages: vec![
                Message::user("fix it"),
                Message::Assistant {
                    parts: vec![
                        AssistantPart::Thinking {
                            text: "look first".into(),
                            signature: Some("sig-1".into()),
                        },
                        AssistantPart::Text {
                            text: "Reading.".into(),
                        },
                        AssistantPart::ToolCall(ToolCall {
                            id: "call_a".into(),
                            name: "read".into(),
                            arguments: r#"{"path":"a.rs"}"#.into(),
                        }),
                        AssistantPart::ToolCall(ToolCall {
                            id: "call_b".into(),
                            name: "read".into(),
                            arguments: r#"{"path":"#.into(),
                        }),
                    ],
                },
                Message::ToolResult(ToolResult {
                    call_id: "call_a".into(),
                    name: "read".into(),
                    content: "fn a() {}".into(),
                    is_error: false,
                }),
                Message::ToolResult(ToolResult {
                    call_id: "call_b".into(),
                    name: "read".into(),
                    content: "invalid arguments".into(),
                    is_error: true,
                }),
                Message::user("and b"),
            ].into(),
            tools: vec![ToolSpec {
                name: "read".into(),
                description: "Read a file".into(),
                parameters: serde_json::json!({"type":"object","properties":{"path":{"type":"string"}}}),
            }]
            .into(),
            max_output_tokens: 4096,
            effort: None,
            temperature: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints() {
        assert_eq!(
            endpoint(Wire::Chat, "https://api.openai.com/v1"),
            "https://api.openai.com/v1/chat/completions"
        );
        assert_eq!(
            endpoint(Wire::Anthropic, "https://api.anthropic.com"),
            "https://api.anthropic.com/v1/messages"
        );
        assert_eq!(
            endpoint(Wire::Anthropic, "https://gw.example/v1"),
            "https://gw.example/v1/messages"
        );
        assert_eq!(
            endpoint(Wire::Responses, "http://127.0.0.1:1"),
            "http://127.0.0.1:1/responses"
        );
    }

    #[test]
    fn arguments_object_falls_back_to_empty() {
        assert_eq!(arguments_object(r#"{"a":1}"#)["a"], 1);
        assert_eq!(arguments_object(r#"{"a":"#), serde_json::json!({}));
        assert_eq!(arguments_object("[1]"), serde_json::json!({}));
        assert_eq!(arguments_text(r#"{"a": 1}"#), r#"{"a": 1}"#);
        assert_eq!(arguments_text(r#"{"#), "{}");
        assert_eq!(arguments_text(""), "{}");
        assert_eq!(arguments_text("null"), "{}");
    }

    #[test]
    fn a_100_mb_line_is_refused_without_holding_it() {
        // One event line 100 MB long with no line end, as a hostile or broken server
        // could send: the decoder must give up at its limit instead of buffering it all.
        let chunk = vec![b'a'; 1 << 20];
        let mut line = std::iter::once(&b"data: "[..]).chain(std::iter::repeat_n(&chunk[..], 100));
        let mut fed = 0usize;
        let counted = std::iter::from_fn(|| {
            let piece = line.next()?;
            fed += piece.len();
            Some(piece)
        });
        let (_, result) = decode_stream(Wire::Chat, counted);
        let Err(ModelError::Decode(why)) = result else {
            panic!("expected a Decode error, got {result:?}");
        };
        assert!(why.contains("16 MiB"), "{why}");
        assert!(fed <= 17 << 20, "read {fed} bytes past the limit");
    }

    #[test]
    fn json_nested_10000_deep_is_refused_in_events_and_in_tool_arguments() {
        let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        // Where an event holds free-form JSON (chat's error code): a decode error naming
        // the limit, not a stack overflow.
        let stream = format!("data: {{\"error\":{{\"code\":{deep}}}}}\n\n");
        let (_, result) = decode_stream(Wire::Chat, [stream.as_bytes()]);
        let Err(ModelError::Decode(why)) = result else {
            panic!("expected a Decode error, got {result:?}");
        };
        assert!(why.contains("recursion limit"), "{why}");
        // As a tool call's arguments: history carries `{}` instead.
        let args = format!("{{\"a\":{deep}}}");
        assert_eq!(arguments_object(&args), serde_json::json!({}));
        assert_eq!(arguments_text(&args), "{}");
    }
}
