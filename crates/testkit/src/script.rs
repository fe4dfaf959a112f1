//! The script: what the scripted server answers, one reply per model request, in order.
//!
//! Owns the serde shape of a script file and its loading. It does not know any wire
//! format; `wire::*` turns a [`Reply`] into bytes for one provider.

use std::path::Path;

use serde::{Deserialize, Serialize};

/// A sequence of replies, consumed one per model request, plus how streams are framed.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Script {
    /// Replies in the order requests consume them.
    pub replies: Vec<Reply>,
    /// SSE framing applied to every streamed reply.
    #[serde(default)]
    pub options: StreamOptions,
}

/// One model turn as the server will stream or return it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Reply {
    /// Reasoning text, sent before `text` (anthropic: a thinking block signed `sig-<n>`;
    /// responses: a reasoning item with summary text; chat: `reasoning_content` deltas).
    #[serde(default)]
    pub thinking: Option<String>,
    /// Assistant text.
    #[serde(default)]
    pub text: Option<String>,
    /// Tool calls, sent after the text as parallel calls of one turn.
    #[serde(default)]
    pub tool_calls: Vec<ScriptToolCall>,
    /// Token usage to report; `None` reports input 100, output 20.
    #[serde(default)]
    pub usage: Option<ScriptUsage>,
    /// Why the turn stopped; `None` means `tool_use` when there are tool calls, else `end_turn`.
    #[serde(default)]
    pub stop: Option<ScriptStop>,
    /// A failure to inject instead of (or into) this reply.
    #[serde(default)]
    pub fault: Option<Fault>,
    /// Serve this reply only to a request whose body (as JSON text) contains this text;
    /// until one does, requests take the next reply without a condition. For requests
    /// whose arrival order is not fixed (parallel plan steps).
    #[serde(default)]
    pub when: Option<String>,
    /// Milliseconds to wait before sending the response headers.
    #[serde(default)]
    pub delay_ms: u64,
}

/// A tool call the model makes.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ScriptToolCall {
    /// Call id; `None` means `call_<reply number, 1-based>_<index in reply, 0-based>`.
    #[serde(default)]
    pub id: Option<String>,
    /// Tool name.
    pub name: String,
    /// Arguments, sent as JSON text (`null` is sent as `{}`).
    #[serde(default)]
    pub arguments: serde_json::Value,
    /// If set, sent verbatim as the argument text instead of `arguments` (to script
    /// invalid or cut-off JSON).
    #[serde(default)]
    pub raw_arguments: Option<String>,
}

/// Token counts to report. `input_tokens` excludes cached tokens (Anthropic's meaning);
/// OpenAI formats report `input_tokens + cache_read_tokens` as their prompt total.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
pub struct ScriptUsage {
    /// Uncached input tokens.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Input tokens read from the prompt cache.
    #[serde(default)]
    pub cache_read_tokens: u64,
    /// Input tokens written to the prompt cache (reported by Anthropic only).
    #[serde(default)]
    pub cache_write_tokens: u64,
}

/// Why the scripted turn stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScriptStop {
    /// The model finished its turn.
    EndTurn,
    /// The model wants tool results.
    ToolUse,
    /// The output token limit was hit.
    MaxTokens,
}

/// A failure injected into the reply that carries it. Each script entry answers exactly
/// one request, fault or not.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Fault {
    /// Answer with this HTTP status and body (default: the wire's error JSON).
    Status {
        /// HTTP status code.
        status: u16,
        /// Response body sent verbatim; `None` sends the wire's error JSON.
        #[serde(default)]
        body: Option<String>,
        /// Value of a `Retry-After` header, sent only when set.
        #[serde(default)]
        retry_after: Option<String>,
    },
    /// Stream the reply, then close the connection abruptly after `after_events` SSE
    /// events, in the middle of an HTTP chunk and without the terminating empty chunk.
    Cut {
        /// Complete SSE events sent before the cut.
        after_events: usize,
    },
    /// Insert one malformed SSE data line (not JSON) after `after_events` events, then
    /// continue the stream normally.
    MalformedChunk {
        /// Events sent before the malformed one.
        after_events: usize,
    },
    /// Send the provider's mid-stream error event after `after_events` events and end
    /// the stream cleanly.
    ErrorEvent {
        /// Events sent before the error.
        after_events: usize,
        /// Provider error type (anthropic `error.type`, openai `error.type` / `code`).
        #[serde(default = "default_error_type")]
        error_type: String,
        /// Human-readable message.
        message: String,
    },
    /// Stream the reply's first `after_events` events, then end the body cleanly (the
    /// terminating empty chunk is sent): a server or proxy that closed the stream before
    /// its terminal event (`[DONE]`, `message_stop`, `response.completed`).
    EndEarly {
        /// Complete SSE events sent before the clean end; `None` sends all but the last
        /// (the wire's terminal event).
        #[serde(default)]
        after_events: Option<usize>,
    },
    /// Answer a streaming request with this SSE text verbatim (status 200,
    /// `text/event-stream`), ignoring the reply's content: replays a recorded exchange
    /// from a real server (for instance llama.cpp's own event layout). The text is sent
    /// as written, so it decides its own line ends and blank lines.
    RawStream {
        /// The whole event-stream body.
        body: String,
    },
}

fn default_error_type() -> String {
    "overloaded_error".to_owned()
}

/// How streamed replies are framed on the wire, to exercise client SSE parsing.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct StreamOptions {
    /// Line terminator used for every SSE line.
    #[serde(default)]
    pub line_ending: LineEnding,
    /// Insert a `: keepalive` comment between events.
    #[serde(default)]
    pub keepalive_comments: bool,
    /// Write the SSE body in HTTP chunks of at most this many bytes, each flushed, so
    /// UTF-8 characters and JSON get split across reads. `None`: one chunk per event.
    #[serde(default)]
    pub chunk_bytes: Option<usize>,
    /// Send the last SSE event without its terminating blank line (its last line still
    /// ends with a line terminator).
    #[serde(default)]
    pub no_trailing_newline: bool,
}

/// SSE line terminator.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LineEnding {
    /// `\n`
    #[default]
    Lf,
    /// `\r\n`
    Crlf,
    /// `\r`
    Cr,
}

impl LineEnding {
    /// The terminator's bytes.
    pub fn as_str(self) -> &'static str {
        match self {
            LineEnding::Lf => "\n",
            LineEnding::Crlf => "\r\n",
            LineEnding::Cr => "\r",
        }
    }
}

/// A script file that could not be read or parsed.
#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    /// The file could not be read.
    #[error("cannot read script {path}: {source}")]
    Read {
        /// The script path.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The text is not a valid script.
    #[error("invalid script JSON: {0}")]
    Parse(#[from] serde_json::Error),
}

impl Script {
    /// A script with these replies and default stream options.
    pub fn new(replies: Vec<Reply>) -> Script {
        Script {
            replies,
            options: StreamOptions::default(),
        }
    }

    /// Parse a script from JSON text.
    pub fn from_json(s: &str) -> Result<Script, ScriptError> {
        Ok(serde_json::from_str(s)?)
    }

    /// Read and parse a script file.
    pub fn from_file(p: &Path) -> Result<Script, ScriptError> {
        let text = std::fs::read_to_string(p).map_err(|source| ScriptError::Read {
            path: p.display().to_string(),
            source,
        })?;
        Script::from_json(&text)
    }
}

impl Reply {
    /// A reply that only says `text`.
    pub fn text(text: impl Into<String>) -> Reply {
        Reply {
            text: Some(text.into()),
            ..Reply::default()
        }
    }

    /// The stop reason actually reported.
    pub fn effective_stop(&self) -> ScriptStop {
        match self.stop {
            Some(stop) => stop,
            None if self.tool_calls.is_empty() => ScriptStop::EndTurn,
            None => ScriptStop::ToolUse,
        }
    }

    /// The usage actually reported.
    pub fn effective_usage(&self) -> ScriptUsage {
        self.usage.unwrap_or(ScriptUsage {
            input_tokens: 100,
            output_tokens: 20,
            cache_read_tokens: 0,
            cache_write_tokens: 0,
        })
    }
}

impl ScriptToolCall {
    /// The call id actually sent, for the `reply_no`-th reply (1-based), call `index`.
    pub fn effective_id(&self, reply_no: usize, index: usize) -> String {
        match &self.id {
            Some(id) => id.clone(),
            None => format!("call_{reply_no}_{index}"),
        }
    }

    /// The argument text actually sent.
    pub fn argument_text(&self) -> String {
        if let Some(raw) = &self.raw_arguments {
            return raw.clone();
        }
        if self.arguments.is_null() {
            return "{}".to_owned();
        }
        self.arguments.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_script_with_faults_and_options() {
        let s = Script::from_json(
            r#"{"replies":[
                {"fault":{"kind":"status","status":429,"retry_after":"1"}},
                {"text":"hi","tool_calls":[{"name":"read","arguments":{"path":"a"}}]},
                {"fault":{"kind":"error_event","after_events":2,"message":"boom"}}
              ],
              "options":{"line_ending":"crlf","chunk_bytes":3}}"#,
        )
        .unwrap();
        assert_eq!(s.replies.len(), 3);
        assert!(matches!(
            s.replies[0].fault,
            Some(Fault::Status { status: 429, .. })
        ));
        assert_eq!(s.replies[1].effective_stop(), ScriptStop::ToolUse);
        assert_eq!(s.replies[1].tool_calls[0].effective_id(2, 0), "call_2_0");
        assert_eq!(
            s.replies[1].tool_calls[0].argument_text(),
            r#"{"path":"a"}"#
        );
        match &s.replies[2].fault {
            Some(Fault::ErrorEvent { error_type, .. }) => {
                assert_eq!(error_type, "overloaded_error")
            }
            other => panic!("unexpected fault {other:?}"),
        }
        assert_eq!(s.options.line_ending, LineEnding::Crlf);
        assert_eq!(s.options.chunk_bytes, Some(3));
    }

    #[test]
    fn parses_the_end_early_and_raw_stream_faults() {
        let s = Script::from_json(
            r#"{"replies":[
                {"fault":{"kind":"end_early","after_events":4}},
                {"fault":{"kind":"raw_stream","body":"data: [DONE]\n\n"}}
              ]}"#,
        )
        .unwrap();
        assert!(matches!(
            s.replies[0].fault,
            Some(Fault::EndEarly {
                after_events: Some(4)
            })
        ));
        assert!(
            matches!(&s.replies[1].fault, Some(Fault::RawStream { body }) if body == "data: [DONE]\n\n")
        );
    }

    #[test]
    fn rejects_unknown_fault_kind() {
        let err = Script::from_json(r#"{"replies":[{"fault":{"kind":"explode"}}]}"#);
        assert!(matches!(err, Err(ScriptError::Parse(_))));
    }

    #[test]
    fn null_arguments_are_sent_as_empty_object() {
        let call = ScriptToolCall {
            id: None,
            name: "x".into(),
            arguments: serde_json::Value::Null,
            raw_arguments: None,
        };
        assert_eq!(call.argument_text(), "{}");
        let raw = ScriptToolCall {
            raw_arguments: Some("{\"a\":".into()),
            ..call
        };
        assert_eq!(raw.argument_text(), "{\"a\":");
    }
}
