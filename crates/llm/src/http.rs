//! One model call over HTTP: send the body, classify a failed status, feed the
//! response bytes through the SSE decoder into the wire decoder.
//!
//! Owns the reqwest client, headers and auth, bounded error-body reads and mapping
//! transport failures to [`ModelError`]. It makes exactly one attempt; retrying and
//! the circuit breaker belong to `retry`.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use reqwest::header::{self, HeaderMap, HeaderValue};

use crate::error::{HttpFailure, from_http};
use crate::retry::parse_retry_after;
use crate::secret::Secret;
use crate::sse::SseDecoder;
use crate::wire::{self, Decoder};
use crate::wire_log::{CallLog, WireLog};
use crate::{
    BoxFuture, ClientOptions, ModelClient, ModelError, ModelInfo, ModelRequest, ModelResponse,
    ResolvedProvider, StreamUpdate, Wire, tls,
};

/// Error bodies are read up to this size; the message is near the start.
const MAX_ERROR_BODY: usize = 64 * 1024;

/// A single-attempt client for one model endpoint.
pub(crate) struct HttpModelClient {
    info: ModelInfo,
    http: reqwest::Client,
    url: String,
    key: Option<Secret>,
    key_env: Option<String>,
    idle_timeout: Duration,
    log: Option<Arc<WireLog>>,
    /// The headers every request carries, for the wire log (reqwest adds them at send).
    headers: HeaderMap,
    /// Whether requests carry OpenAI's `prompt_cache_key`: on the Responses wire and
    /// OpenAI's own Chat endpoint. Other Chat servers (Mistral, strict gateways) may
    /// refuse a field they do not know.
    sends_cache_key: bool,
}

impl HttpModelClient {
    pub(crate) fn new(
        provider: &ResolvedProvider,
        options: &ClientOptions,
    ) -> Result<HttpModelClient, ModelError> {
        let crypto = tls::crypto_provider();
        if provider.base_url.starts_with("https:") {
            tls::warm_up(crypto.clone());
        }
        let tls = tls::client_config(crypto).map_err(ModelError::Setup)?;
        let headers = default_headers(provider)?;
        let http = reqwest::Client::builder()
            .tls_backend_preconfigured(tls)
            .connect_timeout(options.connect_timeout)
            .read_timeout(options.idle_timeout)
            .user_agent(concat!("atto/", env!("CARGO_PKG_VERSION")))
            .default_headers(headers.clone())
            .build()
            .map_err(|e| ModelError::Setup(e.to_string()))?;
        Ok(HttpModelClient {
            info: ModelInfo {
                provider: provider.name.clone(),
                model: provider.model.clone(),
                wire: provider.wire,
                base_url: provider.base_url.clone(),
            },
            http,
            url: wire::endpoint(provider.wire, &provider.base_url),
            key: provider.api_key.clone(),
            key_env: provider.api_key_env.clone(),
            idle_timeout: options.idle_timeout,
            log: options.wire_log.clone(),
            headers,
            sends_cache_key: provider.wire == Wire::Responses || provider.name == "openai",
        })
    }

    async fn call(
        &self,
        req: &ModelRequest<'_>,
        on_update: &mut (dyn FnMut(StreamUpdate) + Send),
    ) -> Result<ModelResponse, ModelError> {
        let mut body = wire::body(self.info.wire, &self.info.model, req);
        if self.sends_cache_key {
            body["prompt_cache_key"] = wire::prompt_cache_key(req).into();
        }
        let body = serde_json::to_vec(&body)
            .map_err(|e| ModelError::Setup(format!("cannot encode the request: {e}")))?;
        let log = self
            .log
            .as_deref()
            .map(|log| log.request(&self.url, &self.headers, &body, self.key.as_ref()));
        let mut received = Received::default();
        let result = self
            .exchange(body, log.as_ref(), &mut received, on_update)
            .await;
        if let Some(log) = &log {
            let error = result.as_ref().err().map(ToString::to_string);
            log.end(received.events, received.bytes, error.as_deref());
        }
        result
    }

    /// Sends `body` and reads the reply, counting what arrives into `received`.
    async fn exchange(
        &self,
        body: Vec<u8>,
        log: Option<&CallLog<'_>>,
        received: &mut Received,
        on_update: &mut (dyn FnMut(StreamUpdate) + Send),
    ) -> Result<ModelResponse, ModelError> {
        let mut response = self
            .http
            .post(&self.url)
            .body(body)
            .send()
            .await
            .map_err(|e| self.transport(&e))?;
        let status = response.status();
        if let Some(log) = log {
            log.response(status.as_u16(), response.headers());
        }
        if !status.is_success() {
            return Err(self.status_error(response, log).await);
        }
        if is_json(&response) {
            return Err(self.unstreamed(response, log).await);
        }
        let mut sse = SseDecoder::new();
        let mut decoder = Decoder::new(self.info.wire, &self.info.model);
        let mut events = Vec::new();
        let mut ended = false;
        while !ended {
            match response.chunk().await {
                Ok(Some(chunk)) => {
                    received.bytes += chunk.len();
                    sse.feed(&chunk, &mut events)
                        .map_err(|e| ModelError::Decode(format!("{e} (after {received})")))?;
                }
                Ok(None) => {
                    // A last event whose blank line never came is dispatched here when
                    // it is whole.
                    received.unfinished_event = sse.finish(&mut events);
                    ended = true;
                }
                Err(e) => return Err(self.cut(&e, received)),
            }
            for event in events.drain(..) {
                received.events += 1;
                if let Some(log) = log {
                    log.event(event.event.as_deref(), &event.data);
                }
                if decoder.event(&event, on_update)? {
                    // Terminal event: the reply is whole; the rest of the body is not
                    // needed, and dropping the response releases the connection.
                    return decoder.finish();
                }
            }
        }
        decoder.finish().map_err(|e| match e {
            ModelError::StreamCut(why) => ModelError::StreamCut(format!(
                "{why}; the server closed the connection after {received}"
            )),
            other => other,
        })
    }

    fn transport(&self, e: &reqwest::Error) -> ModelError {
        if is_refused(e) {
            return ModelError::Refused(self.url.clone());
        }
        let what = if e.is_connect() {
            if e.is_timeout() {
                "connection timed out"
            } else {
                "connection failed"
            }
        } else if e.is_timeout() {
            "no answer in time"
        } else {
            "request failed"
        };
        ModelError::Transport(self.scrub(&format!("{what} ({}): {}", self.url, chain(e))))
    }

    fn cut(&self, e: &reqwest::Error, received: &Received) -> ModelError {
        if e.is_timeout() {
            ModelError::StreamCut(format!(
                "the server sent nothing for {} s, after {received}",
                self.idle_timeout.as_secs()
            ))
        } else {
            ModelError::StreamCut(self.scrub(&format!(
                "the connection was lost after {received}: {}",
                chain(e)
            )))
        }
    }

    fn scrub(&self, text: &str) -> String {
        match &self.key {
            Some(key) => key.scrub(text),
            None => text.to_owned(),
        }
    }

    async fn status_error(
        &self,
        mut response: reqwest::Response,
        log: Option<&CallLog<'_>>,
    ) -> ModelError {
        let status = response.status().as_u16();
        let retry_after = response
            .headers()
            .get(header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| parse_retry_after(v, SystemTime::now()));
        let body = read_bounded(&mut response).await;
        if let Some(log) = log {
            log.error_body(&body);
        }
        from_http(&HttpFailure {
            status,
            body: &body,
            retry_after,
            key: self.key.as_ref(),
            key_env: self.key_env.as_deref(),
        })
    }

    /// A 200 answer with a JSON body instead of an event stream: either an error some
    /// gateways send with a success status, or a server that ignored `stream: true`.
    async fn unstreamed(
        &self,
        mut response: reqwest::Response,
        log: Option<&CallLog<'_>>,
    ) -> ModelError {
        let body = self.scrub(&read_bounded(&mut response).await);
        if let Some(log) = log {
            log.error_body(&body);
        }
        let parsed: Option<serde_json::Value> = serde_json::from_str(&body).ok();
        if let Some(err) = parsed.as_ref().and_then(|v| v.get("error")) {
            let field = |name: &str| err.get(name).and_then(|f| f.as_str()).unwrap_or("");
            let kind = [field("type"), field("code")]
                .into_iter()
                .find(|k| !k.is_empty())
                .unwrap_or("error");
            let message = match err.as_str() {
                Some(text) => text,
                None => field("message"),
            };
            return crate::error::from_event(kind, message);
        }
        ModelError::BadRequest {
            message: "the server answered with a JSON document instead of an event stream; \
                      it may not support streaming on this endpoint"
                .to_owned(),
        }
    }
}

/// How much of a streamed reply arrived, for the message when the stream breaks.
#[derive(Debug, Default)]
struct Received {
    bytes: usize,
    events: usize,
    /// The stream ended inside an event (no blank line after it).
    unfinished_event: bool,
}

impl std::fmt::Display for Received {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let plural = if self.events == 1 { "" } else { "s" };
        write!(
            f,
            "{} event{plural} ({} bytes) of the reply",
            self.events, self.bytes
        )?;
        if self.unfinished_event {
            f.write_str(", the last one unfinished")?;
        }
        Ok(())
    }
}

/// The body as text, at most `MAX_ERROR_BODY` bytes; a body that breaks off is
/// returned as far as it arrived.
async fn read_bounded(response: &mut reqwest::Response) -> String {
    let mut body = Vec::new();
    while let Ok(Some(chunk)) = response.chunk().await {
        let room = MAX_ERROR_BODY - body.len();
        body.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if body.len() >= MAX_ERROR_BODY {
            break;
        }
    }
    String::from_utf8_lossy(&body).into_owned()
}

fn is_json(response: &reqwest::Response) -> bool {
    response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().starts_with("application/json"))
}

/// The error and its sources in one line (reqwest's own message is terse).
fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let s_text = s.to_string();
        if !text.contains(&s_text) {
            text.push_str(": ");
            text.push_str(&s_text);
        }
        source = s.source();
    }
    text
}

fn default_headers(provider: &ResolvedProvider) -> Result<HeaderMap, ModelError> {
    let mut headers = HeaderMap::new();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    headers.insert(
        header::ACCEPT,
        HeaderValue::from_static("text/event-stream"),
    );
    let key = provider
        .api_key
        .as_ref()
        .map(|key| {
            let invalid = || {
                ModelError::Setup(format!(
                    "the API key in {} contains characters not allowed in an HTTP header",
                    provider
                        .api_key_env
                        .as_deref()
                        .unwrap_or("the key variable")
                ))
            };
            let value = match provider.wire {
                Wire::Anthropic => HeaderValue::from_str(key.expose()),
                Wire::Chat | Wire::Responses => {
                    HeaderValue::from_str(&format!("Bearer {}", key.expose()))
                }
            };
            value.map_err(|_| invalid()).map(|mut v| {
                v.set_sensitive(true);
                v
            })
        })
        .transpose()?;
    match provider.wire {
        Wire::Anthropic => {
            headers.insert("anthropic-version", HeaderValue::from_static("2023-06-01"));
            if let Some(key) = key {
                headers.insert("x-api-key", key);
            }
        }
        Wire::Chat | Wire::Responses => {
            if let Some(key) = key {
                headers.insert(header::AUTHORIZATION, key);
            }
        }
    }
    Ok(headers)
}

impl ModelClient for HttpModelClient {
    fn info(&self) -> &ModelInfo {
        &self.info
    }

    fn stream<'a>(
        &'a self,
        req: &'a ModelRequest<'a>,
        on_update: &'a mut (dyn FnMut(StreamUpdate) + Send),
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        Box::pin(self.call(req, on_update))
    }
}

/// Whether the connection was refused (no listener), found anywhere in the error chain.
fn is_refused(e: &reqwest::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(e);
    while let Some(err) = source {
        if let Some(io) = err.downcast_ref::<std::io::Error>()
            && io.kind() == std::io::ErrorKind::ConnectionRefused
        {
            return true;
        }
        source = err.source();
    }
    false
}
