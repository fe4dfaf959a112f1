//! What can go wrong in a model call, and whether trying again can help.
//!
//! Owns [`ModelError`], the classification of HTTP statuses and provider error bodies
//! into it, and [`ModelError::is_retryable`]. It does not retry anything (`retry` does)
//! and does not read HTTP responses (`http` does).

use std::time::Duration;

use crate::secret::Secret;

/// How a model call failed. Every message says what happened, what was not done and
/// what to do next; none contains an API key.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// The server could not be reached or the connection broke before a response.
    #[error(
        "could not reach the model server: {0}. No reply was received; check the network and the base URL, then try again"
    )]
    Transport(String),
    /// Nothing listens at the base URL: the connection was refused. Deterministic for a
    /// wrong URL or a local server that is not running, so it is not retried.
    #[error(
        "nothing is listening at {0} (connection refused). No request was sent; check the base URL and that the server is running"
    )]
    Refused(String),
    /// The server answered with an HTTP error status.
    #[error("the model server answered HTTP {status}: {message}. {}", status_advice(*.status))]
    Status {
        /// HTTP status code.
        status: u16,
        /// The provider's error message.
        message: String,
        /// How long the server asked to wait (`Retry-After`).
        retry_after: Option<Duration>,
    },
    /// The server refused the credentials (401/403).
    #[error(
        "the model server refused the credentials (HTTP {status}): {message}. The request was not run; {hint}"
    )]
    Auth {
        /// HTTP status code.
        status: u16,
        /// The provider's error message.
        message: String,
        /// What to check, naming the key variable.
        hint: String,
    },
    /// The server rejected the request itself (400/404/422 …).
    #[error(
        "the model server rejected the request: {message}. Retrying will not help; check the model name, the base URL and the provider's wire format"
    )]
    BadRequest {
        /// The provider's error message, with the status.
        message: String,
    },
    /// The conversation no longer fits the model's context window.
    #[error(
        "the conversation is too long for the model's context window: {message}. The request was not run; compact or shorten the conversation, or use a model with a larger context"
    )]
    ContextTooLong {
        /// The provider's error message.
        message: String,
    },
    /// The provider is overloaded (Anthropic 529 / `overloaded_error`).
    #[error(
        "the model provider is overloaded: {message}. The request did not complete; it is worth retrying in a little while"
    )]
    Overloaded {
        /// The provider's error message.
        message: String,
    },
    /// The provider sent an error event in the middle of a stream.
    #[error(
        "the model provider reported an error mid-reply ({kind}): {message}. The partial reply was discarded; {}", kind.advice()
    )]
    Provider {
        /// What kind of error.
        kind: ProviderErrorKind,
        /// The provider's error message.
        message: String,
    },
    /// The stream ended before its terminal event.
    #[error(
        "the model's reply was cut off: {0}. The partial reply was discarded; trying again usually helps"
    )]
    StreamCut(String),
    /// An event in the stream was not valid JSON of the expected shape.
    #[error(
        "the model server sent a malformed stream event: {0}. The partial reply was discarded; trying again usually helps"
    )]
    Decode(String),
    /// Recent calls to this model failed; calls fail fast until it recovers.
    #[error(
        "calls to model {model} are paused after {failures} failures (last: {last}); no request was sent. Try again in {} s or switch model", retry_in.as_secs().max(1)
    )]
    CircuitOpen {
        /// Model id.
        model: String,
        /// When a trial call will be let through.
        retry_in: Duration,
        /// Failures since its last success.
        failures: usize,
        /// What the latest of them said.
        last: String,
    },
    /// Every attempt made failed with a retryable error: all that the retry policy
    /// allowed, or fewer when the circuit breaker opened.
    #[error("{}", exhausted_message(*.attempts, *.max_attempts, *.breaker_opened, *.same_each_time, last))]
    Exhausted {
        /// Attempts made.
        attempts: u32,
        /// Attempts the retry policy allowed (the `max_attempts` of the retry notices).
        max_attempts: u32,
        /// The circuit breaker opened and stopped the retries before `max_attempts`.
        breaker_opened: bool,
        /// Every attempt failed with the same message: more likely a permanent fault
        /// of the server or the request than a passing one.
        same_each_time: bool,
        /// The last attempt's error.
        last: Box<ModelError>,
    },
    /// The HTTP client could not be set up.
    #[error("could not set up the HTTP client: {0}. No request was sent; check the base URL")]
    Setup(String),
    /// The caller cancelled the call.
    #[error("the model call was cancelled; no reply was kept")]
    Cancelled,
    /// The call would cross a token or dollar budget, so it was not sent.
    #[error("{0}")]
    OverBudget(String),
}

/// The kind of a mid-stream provider error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProviderErrorKind {
    /// The provider is overloaded.
    Overloaded,
    /// A rate limit was hit.
    RateLimited,
    /// The provider failed internally (`api_error`, `server_error`).
    Server,
    /// The request was invalid.
    InvalidRequest,
    /// Credentials or permissions were refused.
    Auth,
    /// Any other error type.
    Other,
}

impl ProviderErrorKind {
    /// Maps a provider's error `type` / `code` string.
    pub fn from_type(kind: &str) -> ProviderErrorKind {
        match kind {
            "overloaded_error" | "overloaded" => ProviderErrorKind::Overloaded,
            "rate_limit_error" | "rate_limit_exceeded" | "rate_limited" | "too_many_requests" => {
                ProviderErrorKind::RateLimited
            }
            "api_error"
            | "server_error"
            | "internal_error"
            | "internal_server_error"
            | "service_unavailable"
            | "server_is_overloaded"
            | "timeout" => ProviderErrorKind::Server,
            "invalid_request_error" | "invalid_request" | "invalid_prompt" | "not_found_error" => {
                ProviderErrorKind::InvalidRequest
            }
            "authentication_error" | "permission_error" | "invalid_api_key" => {
                ProviderErrorKind::Auth
            }
            _ => ProviderErrorKind::Other,
        }
    }

    /// Whether an error of this kind may go away by itself.
    pub fn is_retryable(self) -> bool {
        match self {
            ProviderErrorKind::Overloaded
            | ProviderErrorKind::RateLimited
            | ProviderErrorKind::Server => true,
            ProviderErrorKind::InvalidRequest
            | ProviderErrorKind::Auth
            | ProviderErrorKind::Other => false,
        }
    }

    fn advice(self) -> &'static str {
        if self.is_retryable() {
            "it is worth retrying in a little while"
        } else {
            "retrying will not help; check the request and the provider settings"
        }
    }
}

impl std::fmt::Display for ProviderErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ProviderErrorKind::Overloaded => "overloaded",
            ProviderErrorKind::RateLimited => "rate limited",
            ProviderErrorKind::Server => "server error",
            ProviderErrorKind::InvalidRequest => "invalid request",
            ProviderErrorKind::Auth => "authentication",
            ProviderErrorKind::Other => "error",
        })
    }
}

fn status_advice(status: u16) -> &'static str {
    if status_is_retryable(status) {
        "The request did not complete; it is worth retrying in a little while"
    } else {
        "The request did not complete; check the provider settings"
    }
}

fn status_is_retryable(status: u16) -> bool {
    matches!(status, 408 | 409 | 429 | 500..=599)
}

/// The final message after retries: what the server said, once and plainly, how many
/// attempts were made and why they stopped, and what to do.
fn exhausted_message(
    attempts: u32,
    max_attempts: u32,
    breaker_opened: bool,
    same_each_time: bool,
    last: &ModelError,
) -> String {
    let tries = if attempts == 1 {
        "1 attempt".to_owned()
    } else {
        format!("{attempts} attempts")
    };
    let stopped = if breaker_opened && attempts < max_attempts {
        format!(
            " of {max_attempts} (the circuit breaker stopped the retries: calls to this model keep failing)"
        )
    } else {
        String::new()
    };
    let next = if same_each_time && attempts > 1 {
        "every attempt got the same answer, so the server is more likely misconfigured or \
         refusing this request than busy: fix what it says, then try again"
    } else {
        "no reply was kept; try again later, and check the server if it keeps failing"
    };
    format!(
        "the model call failed after {tries}{stopped}: {}. {next}",
        last.what_happened()
    )
}

impl ModelError {
    /// What happened, without the advice the full message adds: the server's own words
    /// where there are some.
    pub fn what_happened(&self) -> String {
        match self {
            ModelError::Transport(what) => format!("could not reach the model server: {what}"),
            ModelError::Refused(url) => {
                format!("nothing is listening at {url} (connection refused)")
            }
            ModelError::Status {
                status, message, ..
            } => format!("the model server answered HTTP {status}: {message}"),
            ModelError::Auth {
                status, message, ..
            } => format!("the model server refused the credentials (HTTP {status}): {message}"),
            ModelError::BadRequest { message } => {
                format!("the model server rejected the request: {message}")
            }
            ModelError::ContextTooLong { message } => {
                format!("the conversation is too long for the model's context window: {message}")
            }
            ModelError::Overloaded { message } => {
                format!("the model provider is overloaded: {message}")
            }
            ModelError::Provider { kind, message } => {
                format!("the model provider reported an error mid-reply ({kind}): {message}")
            }
            ModelError::StreamCut(what) => format!("the model's reply was cut off: {what}"),
            ModelError::Decode(what) => {
                format!("the model server sent a malformed stream event: {what}")
            }
            ModelError::Exhausted { last, .. } => last.what_happened(),
            ModelError::CircuitOpen { .. }
            | ModelError::Setup(_)
            | ModelError::Cancelled
            | ModelError::OverBudget(_) => self.to_string(),
        }
    }

    /// Whether the same request may succeed if sent again later.
    pub fn is_retryable(&self) -> bool {
        match self {
            ModelError::Transport(_)
            | ModelError::Overloaded { .. }
            | ModelError::StreamCut(_)
            | ModelError::Decode(_) => true,
            ModelError::Status { status, .. } => status_is_retryable(*status),
            ModelError::Provider { kind, .. } => kind.is_retryable(),
            ModelError::Exhausted { last, .. } => last.is_retryable(),
            ModelError::Auth { .. }
            | ModelError::BadRequest { .. }
            | ModelError::ContextTooLong { .. }
            | ModelError::CircuitOpen { .. }
            | ModelError::Setup(_)
            | ModelError::Refused(_)
            | ModelError::Cancelled
            | ModelError::OverBudget(_) => false,
        }
    }

    /// Whether the request may have reached the provider, and so may be billed: it
    /// answered (an HTTP status, a stream that started), or the connection failed after
    /// the request could have been read. Only a call refused before it was sent is known
    /// to cost nothing.
    pub fn reached_provider(&self) -> bool {
        match self {
            ModelError::Transport(_)
            | ModelError::Status { .. }
            | ModelError::Auth { .. }
            | ModelError::BadRequest { .. }
            | ModelError::ContextTooLong { .. }
            | ModelError::Overloaded { .. }
            | ModelError::Provider { .. }
            | ModelError::StreamCut(_)
            | ModelError::Decode(_)
            // Cancelled mid-call: the request may have been read.
            | ModelError::Cancelled => true,
            ModelError::Exhausted { attempts, .. } => *attempts > 0,
            ModelError::Refused(_)
            | ModelError::CircuitOpen { .. }
            | ModelError::Setup(_)
            | ModelError::OverBudget(_) => false,
        }
    }

    /// How long the server asked to wait before retrying, if it did.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            ModelError::Status { retry_after, .. } => *retry_after,
            _ => None,
        }
    }
}

/// What a failed HTTP response said, before classification.
pub(crate) struct HttpFailure<'a> {
    pub status: u16,
    pub body: &'a str,
    pub retry_after: Option<Duration>,
    /// The key, to scrub out of the body.
    pub key: Option<&'a Secret>,
    /// The variable the key comes from, for the hint.
    pub key_env: Option<&'a str>,
}

/// Classifies an HTTP error response.
pub(crate) fn from_http(f: &HttpFailure<'_>) -> ModelError {
    let (kind, raw) = error_message(f.body);
    let message = match f.key {
        Some(key) => key.scrub(&raw),
        None => raw,
    };
    let message = if message.is_empty() {
        "(no error message)".to_owned()
    } else {
        message
    };
    let overflow = looks_like_context_overflow(&message)
        || kind.as_deref().is_some_and(looks_like_context_overflow);
    // 413: the request is too large to take; a shorter conversation is the cure too.
    if (overflow && !matches!(f.status, 401 | 403 | 429)) || f.status == 413 {
        return ModelError::ContextTooLong { message };
    }
    match f.status {
        401 | 403 => ModelError::Auth {
            status: f.status,
            message,
            hint: auth_hint(f.key.is_some(), f.key_env),
        },
        529 => ModelError::Overloaded { message },
        _ if kind.as_deref() == Some("overloaded_error") => ModelError::Overloaded { message },
        400 | 404 | 422 => ModelError::BadRequest {
            message: format!("HTTP {}: {message}", f.status),
        },
        status @ (408 | 409 | 429 | 500..=599) => ModelError::Status {
            status,
            message,
            retry_after: f.retry_after,
        },
        status @ 402..=499 => ModelError::BadRequest {
            message: format!("HTTP {status}: {message}"),
        },
        status => ModelError::Status {
            status,
            message,
            retry_after: f.retry_after,
        },
    }
}

/// Classifies a mid-stream error event.
pub(crate) fn from_event(kind: &str, message: &str) -> ModelError {
    let message = if message.is_empty() {
        kind.to_owned()
    } else {
        message.to_owned()
    };
    if looks_like_context_overflow(&message) || looks_like_context_overflow(kind) {
        return ModelError::ContextTooLong { message };
    }
    ModelError::Provider {
        kind: ProviderErrorKind::from_type(kind),
        message,
    }
}

fn auth_hint(had_key: bool, key_env: Option<&str>) -> String {
    match (key_env, had_key) {
        (Some(var), true) => format!("check {var}: it is set but the server refused it"),
        (Some(var), false) => format!("check {var}: set it to a valid API key"),
        (None, _) => "this provider needs an API key: add api_key_env = \"VAR\" to its [providers.NAME] table and export VAR".to_owned(),
    }
}

/// True when a message says the prompt exceeded the context window.
pub(crate) fn looks_like_context_overflow(message: &str) -> bool {
    let lower = message.to_ascii_lowercase();
    [
        // OpenAI
        "context_length_exceeded",
        "maximum context length",
        "context window",
        // Anthropic
        "prompt is too long",
        // llama.cpp (`exceed_context_size_error`) and other local servers
        "exceed_context_size",
        "exceeds the available context size",
        "context size",
        "context length",
    ]
    .iter()
    .any(|needle| lower.contains(needle))
}

/// Longest provider message kept in an error.
const MAX_MESSAGE: usize = 1000;

/// The provider's error type and message from an error body (`error.message`,
/// `message`, or the text itself).
fn error_message(body: &str) -> (Option<String>, String) {
    let parsed: Option<serde_json::Value> = serde_json::from_str(body).ok();
    let from_json = parsed.as_ref().and_then(|v| {
        let err = v.get("error").unwrap_or(v);
        let kind = err
            .get("type")
            .or_else(|| err.get("code"))
            .and_then(|t| t.as_str())
            .map(str::to_owned);
        let msg = err
            .get("message")
            .and_then(|m| m.as_str())
            .or_else(|| err.as_str())
            .or_else(|| v.get("message").and_then(|m| m.as_str()))?;
        Some((kind, msg.to_owned()))
    });
    let (kind, msg) = from_json.unwrap_or_else(|| (None, body.trim().to_owned()));
    (kind, truncate(msg))
}

fn truncate(mut s: String) -> String {
    if s.len() > MAX_MESSAGE {
        s.truncate(s.floor_char_boundary(MAX_MESSAGE));
        s.push('…');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn classify(status: u16, body: &str) -> ModelError {
        from_http(&HttpFailure {
            status,
            body,
            retry_after: None,
            key: None,
            key_env: Some("OPENAI_API_KEY"),
        })
    }

    #[test]
    fn statuses_classify_as_documented() {
        let table: &[(u16, &str, bool)] = &[
            (408, "Status", true),
            (409, "Status", true),
            (429, "Status", true),
            (500, "Status", true),
            (503, "Status", true),
            (529, "Overloaded", true),
            (401, "Auth", false),
            (403, "Auth", false),
            (400, "BadRequest", false),
            (404, "BadRequest", false),
            (422, "BadRequest", false),
            (402, "BadRequest", false),
        ];
        for &(status, want, retryable) in table {
            let e = classify(status, r#"{"error":{"message":"nope"}}"#);
            let got = format!("{e:?}");
            assert!(got.starts_with(want), "{status}: {got}");
            assert_eq!(e.is_retryable(), retryable, "{status}");
            assert!(e.to_string().contains("nope"), "{status}: {e}");
        }
    }

    #[test]
    fn context_overflow_is_detected_in_any_wording() {
        for body in [
            r#"{"error":{"message":"This model's maximum context length is 128000 tokens","code":"context_length_exceeded"}}"#,
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#,
        ] {
            let e = classify(400, body);
            assert!(matches!(e, ModelError::ContextTooLong { .. }), "{e:?}");
            assert!(!e.is_retryable());
        }
    }

    #[test]
    fn context_overflow_from_each_provider_is_its_own_failure() {
        let table: &[(u16, &str)] = &[
            // llama.cpp
            (
                400,
                r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":9000,"n_ctx":8192}}"#,
            ),
            (
                400,
                r#"{"error":{"code":400,"message":"request too long","type":"exceed_context_size_error"}}"#,
            ),
            // OpenAI
            (
                400,
                r#"{"error":{"message":"Your input exceeds the context window of this model.","type":"invalid_request_error","code":"context_length_exceeded"}}"#,
            ),
            // Anthropic
            (
                400,
                r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#,
            ),
            (
                413,
                r#"{"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum allowed number of bytes."}}"#,
            ),
            (500, "the prompt exceeds the context size of the model"),
        ];
        for &(status, body) in table {
            let e = classify(status, body);
            assert!(
                matches!(e, ModelError::ContextTooLong { .. }),
                "{body}: {e:?}"
            );
            assert!(!e.is_retryable(), "{body}");
            let text = e.to_string();
            assert!(text.contains("compact"), "{text}");
            assert!(!text.contains("check the model name"), "{text}");
        }
        let e = from_event("exceed_context_size_error", "too long");
        assert!(matches!(e, ModelError::ContextTooLong { .. }), "{e:?}");
    }

    #[test]
    fn exhausted_says_what_the_server_said_once_and_how_it_stopped() {
        let body = r#"{"error":{"code":500,"message":"tools param requires --jinja flag","type":"server_error"}}"#;
        let e = ModelError::Exhausted {
            attempts: 3,
            max_attempts: 5,
            breaker_opened: true,
            same_each_time: true,
            last: Box::new(classify(500, body)),
        };
        let text = e.to_string();
        assert_eq!(
            text.matches("tools param requires --jinja flag").count(),
            1,
            "{text}"
        );
        assert!(text.contains("HTTP 500"), "{text}");
        assert!(text.contains("3 attempts of 5"), "{text}");
        assert!(text.contains("circuit breaker"), "{text}");
        assert!(text.contains("misconfigured"), "{text}");
        assert!(!text.contains("worth retrying"), "{text}");
    }

    #[test]
    fn auth_hint_names_the_variable_and_key_is_scrubbed() {
        let key = Secret::new("sk-abcdef123456");
        let e = from_http(&HttpFailure {
            status: 401,
            body: r#"{"error":{"message":"Incorrect API key provided: sk-abcdef123456"}}"#,
            retry_after: None,
            key: Some(&key),
            key_env: Some("OPENAI_API_KEY"),
        });
        let text = format!("{e} {e:?}");
        assert!(text.contains("OPENAI_API_KEY"), "{text}");
        assert!(!text.contains("sk-abcdef123456"), "{text}");
        assert!(text.contains("[redacted]"), "{text}");
    }

    #[test]
    fn anthropic_overloaded_body_and_plain_text_bodies() {
        let e = classify(
            503,
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        );
        assert!(matches!(e, ModelError::Overloaded { .. }), "{e:?}");
        let e = classify(502, "<html>Bad gateway</html>");
        assert!(e.to_string().contains("Bad gateway"), "{e}");
        assert!(e.is_retryable());
    }

    #[test]
    fn provider_event_kinds() {
        assert!(from_event("overloaded_error", "busy").is_retryable());
        assert!(from_event("rate_limit_error", "slow down").is_retryable());
        assert!(from_event("api_error", "oops").is_retryable());
        assert!(!from_event("invalid_request_error", "bad").is_retryable());
        assert!(!from_event("weird", "bad").is_retryable());
    }

    #[test]
    fn exhausted_inherits_retryability() {
        let e = ModelError::Exhausted {
            attempts: 3,
            max_attempts: 3,
            breaker_opened: false,
            same_each_time: false,
            last: Box::new(classify(500, "boom")),
        };
        assert!(e.is_retryable());
        let e = ModelError::Exhausted {
            attempts: 1,
            max_attempts: 1,
            breaker_opened: false,
            same_each_time: false,
            last: Box::new(classify(400, "bad")),
        };
        assert!(!e.is_retryable());
    }

    #[test]
    fn long_messages_are_truncated_on_a_char_boundary() {
        let body = "é".repeat(2000);
        let e = classify(500, &body);
        let ModelError::Status { message, .. } = e else {
            panic!("unexpected {e:?}")
        };
        assert!(message.len() <= MAX_MESSAGE + '…'.len_utf8());
    }
}
