//! Streaming model clients for atto: OpenAI Chat Completions, OpenAI Responses and
//! Anthropic Messages over HTTP + server-sent events.
//!
//! Owns: the wire formats (request bodies, stream decoding), the SSE decoder, error
//! classification, retries with backoff, a per-model circuit breaker, provider presets
//! and resolution, prices, the optional wire log for diagnosing a provider, and asking until
//! a structured reply parses (`reask`). Does not own: the conversation (atto-core keeps it),
//! prompts, tools, or what to do with a reply.
//!
//! [`connect`] gives a [`ModelClient`] with retries and the breaker applied; each
//! [`ModelClient::stream`] call returns only complete replies.

mod breaker;
mod effort;
mod error;
mod http;
mod price;
mod provider;
pub mod reask;
mod retry;
mod secret;
pub mod sse;
mod tls;
mod window;
mod wire;
mod wire_log;

/// Entry points for the fuzz targets under `fuzz/`: the product's own decoders, reachable
/// without a server. Not an API for other crates.
#[doc(hidden)]
pub mod fuzzing {
    pub use crate::wire::decode_stream;
}

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use atto_protocol::{
    AssistantPart, Message, ReasoningEffort, RetryNotice, StopReason, ToolSpec, Usage,
};
use serde::{Deserialize, Serialize};

pub use atto_protocol::usage::{add_usage, cache_hit_rate, total_tokens};
pub use effort::{effort_name, takes_effort, thinking_budget};
pub use error::{ModelError, ProviderErrorKind};
pub use price::{Price, cost_usd, price};
pub use provider::{
    ModelConfig, PRESETS, Preset, ProviderChoice, ProviderError, ProviderModels, ProviderSettings,
    ResolvedProvider, preset, resolve,
};
pub use retry::RetryPolicy;
use retry::RetryingClient;
pub use secret::Secret;
pub use window::{ContextWindow, context_window};
pub use wire_log::WireLog;

/// A boxed, sendable future.
pub type BoxFuture<'a, T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>>;

/// A wire protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Wire {
    /// OpenAI Chat Completions (`/chat/completions`), spoken by most servers.
    Chat,
    /// OpenAI Responses (`/responses`).
    Responses,
    /// Anthropic Messages (`/v1/messages`).
    Anthropic,
}

impl Wire {
    /// The name used in config and flags.
    pub fn as_str(self) -> &'static str {
        match self {
            Wire::Chat => "chat",
            Wire::Responses => "responses",
            Wire::Anthropic => "anthropic",
        }
    }
}

impl fmt::Display for Wire {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A wire name that is not one of `chat`, `responses`, `anthropic`.
#[derive(Debug, Clone, thiserror::Error)]
#[error("unknown wire format '{0}'; use chat, responses or anthropic")]
pub struct UnknownWire(pub String);

impl FromStr for Wire {
    type Err = UnknownWire;

    fn from_str(s: &str) -> Result<Wire, UnknownWire> {
        match s {
            "chat" => Ok(Wire::Chat),
            "responses" => Ok(Wire::Responses),
            "anthropic" => Ok(Wire::Anthropic),
            other => Err(UnknownWire(other.to_owned())),
        }
    }
}

/// One model call's input.
#[derive(Debug, Clone)]
pub struct ModelRequest<'a> {
    /// System prompt (stable prefix first, so providers can cache it).
    pub system: Cow<'a, str>,
    /// The conversation so far (borrowed from the session: no copy per model call).
    pub messages: Cow<'a, [Message]>,
    /// Tools the model may call.
    pub tools: Cow<'a, [ToolSpec]>,
    /// Output token limit.
    pub max_output_tokens: u32,
    /// Reasoning effort; `None` leaves the provider's default. Set only for models that
    /// take one ([`takes_effort`]).
    pub effort: Option<ReasoningEffort>,
    /// Sampling temperature; `None` leaves the provider's default (a judge asks for a low
    /// one). Not sent with a thinking budget, which fixes it.
    pub temperature: Option<f32>,
}

/// Request bytes per token, on the generous side (English averages about four): budgets
/// that must not be crossed estimate a request's input tokens as its bytes over this.
pub const BYTES_PER_TOKEN: u64 = 3;

impl ModelRequest<'_> {
    /// The size of what the request sends, in bytes: its system prompt, messages and tool
    /// schemas as JSON. Budgets estimate its input tokens from it before it is sent.
    pub fn bytes(&self) -> u64 {
        let messages = serde_json::to_vec(self.messages.as_ref()).map_or(0, |v| v.len());
        let tools = serde_json::to_vec(self.tools.as_ref()).map_or(0, |v| v.len());
        u64::try_from(self.system.len() + messages + tools).unwrap_or(u64::MAX)
    }
}

/// Something that arrived while a reply streams.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamUpdate {
    /// Answer text.
    Text(String),
    /// Reasoning text.
    Thinking(String),
    /// A tool call started.
    ToolCallBegin {
        /// Call id.
        id: String,
        /// Tool name.
        name: String,
    },
    /// More argument text for a started tool call.
    ToolCallArgs {
        /// Call id.
        id: String,
        /// Raw JSON text fragment.
        fragment: String,
    },
    /// The attempt failed and the whole request will be sent again after the delay.
    /// Everything streamed so far belongs to the failed attempt: discard it.
    Retry(RetryNotice),
    /// An attempt that may have reached the provider ([`ModelError::reached_provider`])
    /// failed and will be retried: the provider may bill it although its reply is
    /// discarded. Sent once per such attempt, before its [`StreamUpdate::Retry`]; the
    /// last attempt's outcome is the call's result instead. The call yields right after
    /// it, so a caller that drops the call then (a budget with no room for another
    /// attempt) does so before the next attempt is sent.
    FailedAttempt,
}

/// A complete model reply.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelResponse {
    /// Text, reasoning and tool calls in the order the model produced them.
    pub parts: Vec<AssistantPart>,
    /// Why the model stopped.
    pub stop: StopReason,
    /// Tokens of this call (`input_tokens` excludes cache reads and writes). All zeros
    /// when the server reported none: see `usage_reported`.
    pub usage: Usage,
    /// Whether the server reported usage. When false the token counts (and so the
    /// cost) are unknown, not zero: callers must not add them up as zero.
    pub usage_reported: bool,
    /// Model id the provider reported (or the one requested).
    pub model: String,
}

impl ModelResponse {
    /// The visible answer: every text part, in order (reasoning and tool calls left out).
    #[must_use]
    pub fn text(&self) -> String {
        self.parts
            .iter()
            .filter_map(|p| match p {
                AssistantPart::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect()
    }
}

/// What a client talks to.
#[derive(Debug, Clone)]
pub struct ModelInfo {
    /// Provider name.
    pub provider: String,
    /// Model id.
    pub model: String,
    /// Wire format.
    pub wire: Wire,
    /// Endpoint root.
    pub base_url: String,
}

/// A model that can stream replies.
pub trait ModelClient: Send + Sync {
    /// What this client talks to.
    fn info(&self) -> &ModelInfo;

    /// Streams one model call. Only returns Ok for a COMPLETE response (the stream's
    /// terminal event seen); a stream that ends early is `Err(StreamCut)` — partial
    /// tool calls are never returned. Dropping the future cancels the call and closes
    /// its connection.
    fn stream<'a>(
        &'a self,
        req: &'a ModelRequest<'a>,
        on_update: &'a mut (dyn FnMut(StreamUpdate) + Send),
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>>;
}

/// How clients connect and retry.
#[derive(Debug, Clone)]
pub struct ClientOptions {
    /// Retries of failed calls.
    pub retry: RetryPolicy,
    /// Limit on establishing a connection.
    pub connect_timeout: Duration,
    /// Longest silence while waiting for response bytes.
    pub idle_timeout: Duration,
    /// Where to record every exchange for diagnosis (`--debug`); `None` records
    /// nothing and costs nothing.
    pub wire_log: Option<Arc<WireLog>>,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            retry: RetryPolicy::default(),
            connect_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(300),
            wire_log: None,
        }
    }
}

/// A client for `provider` with retries and the circuit breaker applied.
///
/// Cheap: no connection is opened and, for `http://` endpoints, no TLS state is built;
/// for `https://` endpoints the system root certificates load on a background thread
/// while the first request is prepared.
pub fn connect(
    provider: &ResolvedProvider,
    options: ClientOptions,
) -> Result<Arc<dyn ModelClient>, ModelError> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let inner = http::HttpModelClient::new(provider, &options)?;
    let breaker = breaker::shared(&provider.name, &provider.base_url, &provider.model);
    Ok(Arc::new(
        RetryingClient::new(inner, options.retry, breaker).with_log(options.wire_log),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_names_round_trip() {
        for w in [Wire::Chat, Wire::Responses, Wire::Anthropic] {
            assert_eq!(w.to_string().parse::<Wire>().unwrap(), w);
            assert_eq!(
                serde_json::to_value(w).unwrap(),
                serde_json::Value::String(w.to_string())
            );
        }
        let err = "grpc".parse::<Wire>().unwrap_err();
        assert!(err.to_string().contains("chat, responses or anthropic"));
    }
}
