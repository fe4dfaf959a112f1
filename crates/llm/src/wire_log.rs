//! The wire log: a JSON-lines file of everything said with a model server, for
//! diagnosing a provider (`--debug`, `ATTO_LOG=debug`).
//!
//! Owns [`WireLog`] and its line format. One JSON object per line, each with `kind`,
//! `call` (the request's number in this log) and `ms` (milliseconds since that request
//! went out; retry and breaker lines count from the call's start): `request` (URL,
//! headers with credential values redacted, body), `response` (status, headers),
//! `event` (SSE event name and data), `end` (how the attempt ended, events and bytes
//! received), `retry` and `breaker`. API key values never reach the file: credential
//! headers are redacted and every line is scrubbed of the key.
//!
//! It does not decide when logging is on (the CLI does) and costs nothing when off:
//! clients hold an `Option<Arc<WireLog>>` and format nothing when it is `None`.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use reqwest::header::HeaderMap;
use serde_json::{Value, json};

use crate::secret::Secret;

/// Header names whose values are credentials, redacted in the log.
const CREDENTIAL_HEADERS: [&str; 4] = [
    "authorization",
    "x-api-key",
    "api-key",
    "proxy-authorization",
];

/// An append-only JSON-lines log of model-server exchanges, shared by every client that
/// is given it.
pub struct WireLog {
    path: PathBuf,
    file: Mutex<File>,
    calls: AtomicU64,
}

impl std::fmt::Debug for WireLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WireLog").field("path", &self.path).finish()
    }
}

impl WireLog {
    /// Opens (creating or appending to) the log file at `path`.
    pub fn create(path: impl Into<PathBuf>) -> std::io::Result<WireLog> {
        let path = path.into();
        let file = OpenOptions::new().create(true).append(true).open(&path)?;
        Ok(WireLog {
            path,
            file: Mutex::new(file),
            calls: AtomicU64::new(0),
        })
    }

    /// Where the log is written, for messages such as "details in PATH".
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes one line. A log that cannot be written must not fail the model call: the
    /// error is dropped (the user finds the file short, not the session broken).
    fn write(&self, line: &Value, key: Option<&Secret>) {
        let mut text = line.to_string();
        if let Some(key) = key {
            text = key.scrub(&text);
        }
        text.push('\n');
        // A panic while holding this lock leaves a usable file behind: recover it.
        let mut file = self.file.lock().unwrap_or_else(|p| p.into_inner());
        let _ = file.write_all(text.as_bytes());
    }

    /// Starts logging one request; the returned handle logs the rest of the attempt.
    pub(crate) fn request<'a>(
        &'a self,
        url: &str,
        headers: &HeaderMap,
        body: &[u8],
        key: Option<&'a Secret>,
    ) -> CallLog<'a> {
        let call = self.calls.fetch_add(1, Ordering::Relaxed) + 1;
        let body = serde_json::from_slice::<Value>(body)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(body).into_owned()));
        let unix_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis());
        self.write(
            &json!({
                "kind": "request",
                "call": call,
                "ms": 0,
                "unix_ms": unix_ms,
                "url": url,
                "headers": headers_json(headers),
                "body": body,
            }),
            key,
        );
        CallLog {
            log: self,
            call,
            start: Instant::now(),
            key,
        }
    }

    /// A retry decided after a failed attempt.
    pub(crate) fn retry(&self, attempt: u32, max_attempts: u32, delay_ms: u64, reason: &str) {
        self.write(
            &json!({
                "kind": "retry",
                "call": self.calls.load(Ordering::Relaxed),
                "attempt": attempt,
                "max_attempts": max_attempts,
                "delay_ms": delay_ms,
                "reason": reason,
            }),
            None,
        );
    }

    /// The circuit breaker changed state or refused a call.
    pub(crate) fn breaker(&self, model: &str, state: &str, detail: &str) {
        self.write(
            &json!({
                "kind": "breaker",
                "call": self.calls.load(Ordering::Relaxed),
                "model": model,
                "state": state,
                "detail": detail,
            }),
            None,
        );
    }
}

/// Logging for one attempt, timed from its request.
pub(crate) struct CallLog<'a> {
    log: &'a WireLog,
    call: u64,
    start: Instant,
    key: Option<&'a Secret>,
}

impl CallLog<'_> {
    fn ms(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// The response status and headers arrived.
    pub(crate) fn response(&self, status: u16, headers: &HeaderMap) {
        self.log.write(
            &json!({
                "kind": "response",
                "call": self.call,
                "ms": self.ms(),
                "status": status,
                "headers": headers_json(headers),
            }),
            self.key,
        );
    }

    /// An error body, as far as it was read.
    pub(crate) fn error_body(&self, body: &str) {
        self.log.write(
            &json!({"kind": "error_body", "call": self.call, "ms": self.ms(), "body": body}),
            self.key,
        );
    }

    /// One SSE event.
    pub(crate) fn event(&self, event: Option<&str>, data: &str) {
        self.log.write(
            &json!({
                "kind": "event",
                "call": self.call,
                "ms": self.ms(),
                "event": event,
                "data": data,
            }),
            self.key,
        );
    }

    /// How the attempt ended: `error` is `None` for a complete reply.
    pub(crate) fn end(&self, events: usize, bytes: usize, error: Option<&str>) {
        self.log.write(
            &json!({
                "kind": "end",
                "call": self.call,
                "ms": self.ms(),
                "events": events,
                "bytes": bytes,
                "ok": error.is_none(),
                "error": error,
            }),
            self.key,
        );
    }
}

/// Headers as a JSON object, credential values replaced by `[redacted]`.
fn headers_json(headers: &HeaderMap) -> Value {
    let mut out = serde_json::Map::new();
    for (name, value) in headers {
        let shown = if CREDENTIAL_HEADERS.contains(&name.as_str()) {
            "[redacted]".to_owned()
        } else {
            String::from_utf8_lossy(value.as_bytes()).into_owned()
        };
        out.insert(name.as_str().to_owned(), Value::String(shown));
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use reqwest::header::HeaderValue;

    use super::*;

    #[test]
    fn credential_headers_are_redacted_and_the_key_scrubbed_everywhere() {
        let dir = std::env::temp_dir().join(format!("atto-wirelog-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("unit.jsonl");
        let _ = std::fs::remove_file(&path);
        let log = WireLog::create(&path).unwrap();
        let key = Secret::new("sk-unit-secret-987");
        let mut headers = HeaderMap::new();
        for name in ["authorization", "x-api-key", "api-key"] {
            headers.insert(name, HeaderValue::from_static("Bearer sk-unit-secret-987"));
        }
        headers.insert("content-type", HeaderValue::from_static("application/json"));
        let call = log.request("http://x/v1", &headers, br#"{"a":1}"#, Some(&key));
        call.event(None, "echo sk-unit-secret-987");
        call.end(1, 10, None);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains("sk-unit-secret-987"), "{text}");
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[0]["headers"]["x-api-key"], "[redacted]");
        assert_eq!(lines[0]["headers"]["content-type"], "application/json");
        assert_eq!(lines[0]["body"]["a"], 1);
        assert_eq!(lines[2]["ok"], true);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
