//! The three model wire formats, chosen by request path: what a [`Reply`] looks like as
//! a stream of SSE events or as one JSON body, and what errors look like.
//!
//! Owns the dispatch and helpers shared by the formats. It does no I/O; the server
//! writes what these functions build.

mod anthropic;
mod chat;
mod responses;

use serde_json::{Value, json};

use crate::script::Reply;
use crate::sse::SseEvent;

/// Characters per text delta, so clients must assemble text from several deltas.
pub(crate) const TEXT_PIECE_CHARS: usize = 8;
/// Characters per tool-argument delta.
pub(crate) const ARGS_PIECE_CHARS: usize = 10;

/// A provider wire format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wire {
    /// OpenAI Chat Completions (`…/chat/completions`).
    Chat,
    /// OpenAI Responses (`…/responses`).
    Responses,
    /// Anthropic Messages (`…/messages`).
    Anthropic,
}

/// What a reply needs to know about the request and its place in the script.
#[derive(Debug, Clone)]
pub(crate) struct Ctx {
    /// 1-based number of the reply in the script.
    pub reply_no: usize,
    /// The request's `model`, echoed back.
    pub model: String,
    /// Chat only: the request asked for `stream_options.include_usage`.
    pub include_usage: bool,
    /// Unix seconds, for `created` fields.
    pub created: u64,
}

impl Wire {
    /// The wire format served at `path` (query string ignored), if any.
    pub fn from_path(path: &str) -> Option<Wire> {
        let path = path.split('?').next().unwrap_or(path).trim_end_matches('/');
        if path.ends_with("/chat/completions") {
            Some(Wire::Chat)
        } else if path.ends_with("/responses") {
            Some(Wire::Responses)
        } else if path.ends_with("/messages") {
            Some(Wire::Anthropic)
        } else {
            None
        }
    }

    /// The reply as a sequence of SSE events, terminal event included.
    pub fn stream_events(self, ctx: &Ctx, reply: &Reply) -> Vec<SseEvent> {
        match self {
            Wire::Chat => chat::stream_events(ctx, reply),
            Wire::Responses => responses::stream_events(ctx, reply),
            Wire::Anthropic => anthropic::stream_events(ctx, reply),
        }
    }

    /// The reply as one non-streaming JSON body.
    pub fn full_body(self, ctx: &Ctx, reply: &Reply) -> Value {
        match self {
            Wire::Chat => chat::full_body(ctx, reply),
            Wire::Responses => responses::full_body(ctx, reply),
            Wire::Anthropic => anthropic::full_body(ctx, reply),
        }
    }

    /// A data line that looks like the start of this format's chunk but is not JSON.
    pub fn malformed_event(self) -> SseEvent {
        match self {
            Wire::Chat => SseEvent::data(r#"{"choices":[{"delta":{"content":"#),
            Wire::Responses => SseEvent::named(
                "response.output_text.delta",
                r#"{"type":"response.output_text.delta","delta":"#,
            ),
            Wire::Anthropic => SseEvent::named(
                "content_block_delta",
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_de"#,
            ),
        }
    }

    /// The provider's mid-stream error event; `seq` is its position in the stream.
    pub fn error_event(self, ctx: &Ctx, seq: usize, error_type: &str, message: &str) -> SseEvent {
        match self {
            Wire::Chat => SseEvent::data(
                json!({"error": {"message": message, "type": error_type, "param": null, "code": error_type}})
                    .to_string(),
            ),
            Wire::Responses => responses::failed_event(ctx, seq, error_type, message),
            Wire::Anthropic => SseEvent::named(
                "error",
                json!({"type": "error", "error": {"type": error_type, "message": message}}).to_string(),
            ),
        }
    }

    /// The JSON error body this provider sends with an HTTP error `status`.
    pub fn error_body(self, status: u16, message: &str) -> String {
        match self {
            Wire::Anthropic => json!({
                "type": "error",
                "error": {"type": anthropic_error_type(status), "message": message},
            })
            .to_string(),
            Wire::Chat | Wire::Responses => openai_error_body(status, message),
        }
    }
}

/// OpenAI-style `{"error":{…}}` body for an HTTP error `status`.
pub(crate) fn openai_error_body(status: u16, message: &str) -> String {
    let (kind, code) = match status {
        401 => ("invalid_request_error", Value::from("invalid_api_key")),
        404 => ("invalid_request_error", Value::from("not_found")),
        429 => ("requests", Value::from("rate_limit_exceeded")),
        500..=599 => ("server_error", Value::Null),
        _ => ("invalid_request_error", Value::Null),
    };
    json!({"error": {"message": message, "type": kind, "param": null, "code": code}}).to_string()
}

/// Anthropic's `error.type` for an HTTP status.
fn anthropic_error_type(status: u16) -> &'static str {
    match status {
        401 => "authentication_error",
        403 => "permission_error",
        404 => "not_found_error",
        413 => "request_too_large",
        429 => "rate_limit_error",
        529 => "overloaded_error",
        500..=599 => "api_error",
        _ => "invalid_request_error",
    }
}

/// HTTP status for a non-streaming request whose reply carries an error-event fault.
pub(crate) fn status_for_error_type(error_type: &str) -> u16 {
    match error_type {
        "overloaded_error" => 529,
        "rate_limit_error" | "rate_limit_exceeded" => 429,
        "invalid_request_error" => 400,
        _ => 500,
    }
}

/// Split `s` into pieces of at most `n` characters, on character boundaries.
pub(crate) fn pieces(s: &str, n: usize) -> Vec<&str> {
    let n = n.max(1);
    let mut out = Vec::new();
    let mut start = 0;
    let mut count = 0;
    for (i, _) in s.char_indices() {
        if count == n {
            out.push(&s[start..i]);
            start = i;
            count = 0;
        }
        count += 1;
    }
    if start < s.len() {
        out.push(&s[start..]);
    }
    out
}

/// The text of an optional field, `None` when absent or empty (no block is sent then).
pub(crate) fn non_empty(s: &Option<String>) -> Option<&str> {
    s.as_deref().filter(|s| !s.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_by_path_suffix() {
        assert_eq!(Wire::from_path("/v1/chat/completions"), Some(Wire::Chat));
        assert_eq!(Wire::from_path("/chat/completions?x=1"), Some(Wire::Chat));
        assert_eq!(Wire::from_path("/v1/responses"), Some(Wire::Responses));
        assert_eq!(Wire::from_path("/v1/messages"), Some(Wire::Anthropic));
        assert_eq!(Wire::from_path("/v1/models"), None);
    }

    #[test]
    fn pieces_respect_char_boundaries() {
        assert_eq!(pieces("abcdefghij", 4), vec!["abcd", "efgh", "ij"]);
        assert_eq!(pieces("ééééé", 2), vec!["éé", "éé", "é"]);
        assert_eq!(pieces("", 3), Vec::<&str>::new());
        assert_eq!(pieces("🦀x", 1).concat(), "🦀x");
    }

    #[test]
    fn error_bodies_follow_each_provider() {
        let a: Value = serde_json::from_str(&Wire::Anthropic.error_body(529, "busy")).unwrap();
        assert_eq!(a["type"], "error");
        assert_eq!(a["error"]["type"], "overloaded_error");
        assert_eq!(a["error"]["message"], "busy");
        let o: Value = serde_json::from_str(&Wire::Chat.error_body(429, "slow")).unwrap();
        assert_eq!(o["error"]["code"], "rate_limit_exceeded");
        assert_eq!(o["error"]["message"], "slow");
    }
}
