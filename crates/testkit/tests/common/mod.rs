//! A deliberately independent raw HTTP/1.1 client and SSE parser for the tests, so the
//! server's framing is checked by code that does not share its helpers.

#![allow(
    dead_code,
    reason = "each test binary uses a different subset of these helpers"
)]

use std::collections::BTreeMap;
use std::net::SocketAddr;

use atto_testkit::{Script, ScriptedServer};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A response read to EOF.
#[derive(Debug)]
pub struct RawResponse {
    pub status: u16,
    pub headers: BTreeMap<String, String>,
    /// Decoded body (for a cut chunked body: what arrived, partial chunk included).
    pub body: Vec<u8>,
    /// Data of each HTTP chunk, in order (empty for Content-Length bodies).
    pub chunks: Vec<Vec<u8>>,
    /// Whether the body ended properly (terminal chunk, or Content-Length reached).
    pub complete: bool,
}

impl RawResponse {
    pub fn text(&self) -> String {
        String::from_utf8(self.body.clone()).unwrap()
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap()
    }
}

pub async fn start(script: Script) -> ScriptedServer {
    ScriptedServer::start(script).await.unwrap()
}

pub fn addr(server: &ScriptedServer) -> SocketAddr {
    server
        .base_url()
        .trim_start_matches("http://")
        .parse()
        .unwrap()
}

/// POST a JSON body with Content-Length.
pub async fn post(server: &ScriptedServer, path: &str, body: &str) -> RawResponse {
    let req = format!(
        "POST {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nX-Api-Key: test-key\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    send_raw(addr(server), req.as_bytes()).await
}

/// Send raw request bytes and read the response until the server closes.
pub async fn send_raw(addr: SocketAddr, request: &[u8]) -> RawResponse {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(request).await.unwrap();
    let mut raw = Vec::new();
    let read = tokio::time::timeout(
        std::time::Duration::from_secs(10),
        stream.read_to_end(&mut raw),
    );
    read.await
        .expect("server did not close the connection")
        .unwrap();
    parse_response(&raw)
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

pub fn parse_response(raw: &[u8]) -> RawResponse {
    let head_end = find(raw, b"\r\n\r\n").expect("no end of head");
    let head = std::str::from_utf8(&raw[..head_end]).unwrap();
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap();
    assert!(status_line.starts_with("HTTP/1.1 "), "{status_line}");
    let status: u16 = status_line[9..12].parse().unwrap();
    let headers: BTreeMap<String, String> = lines
        .map(|l| {
            let (n, v) = l.split_once(':').unwrap();
            (n.trim().to_ascii_lowercase(), v.trim().to_owned())
        })
        .collect();
    let rest = &raw[head_end + 4..];
    if headers.get("transfer-encoding").map(String::as_str) == Some("chunked") {
        let (body, chunks, complete) = decode_chunked(rest);
        RawResponse {
            status,
            headers,
            body,
            chunks,
            complete,
        }
    } else {
        let len: usize = headers["content-length"].parse().unwrap();
        let complete = rest.len() == len;
        RawResponse {
            status,
            headers,
            body: rest[..rest.len().min(len)].to_vec(),
            chunks: vec![],
            complete,
        }
    }
}

fn decode_chunked(mut rest: &[u8]) -> (Vec<u8>, Vec<Vec<u8>>, bool) {
    let (mut body, mut chunks) = (Vec::new(), Vec::new());
    loop {
        let Some(line_end) = find(rest, b"\r\n") else {
            return (body, chunks, false);
        };
        let size =
            usize::from_str_radix(std::str::from_utf8(&rest[..line_end]).unwrap(), 16).unwrap();
        rest = &rest[line_end + 2..];
        if size == 0 {
            return (body, chunks, rest == b"\r\n");
        }
        if rest.len() < size + 2 {
            body.extend_from_slice(rest);
            return (body, chunks, false);
        }
        assert_eq!(&rest[size..size + 2], b"\r\n", "chunk not followed by CRLF");
        body.extend_from_slice(&rest[..size]);
        chunks.push(rest[..size].to_vec());
        rest = &rest[size + 2..];
    }
}

/// One parsed SSE event.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    pub name: Option<String>,
    pub data: String,
}

impl Event {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.data).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.data))
    }
}

/// Parse an SSE body per the spec (LF, CRLF or CR line endings, comments ignored).
/// Returns the dispatched events and, separately, an event left pending at EOF.
pub fn parse_sse(text: &str) -> (Vec<Event>, Option<Event>) {
    let normalized = text.replace("\r\n", "\n").replace('\r', "\n");
    let mut events = Vec::new();
    let (mut name, mut data): (Option<String>, Option<String>) = (None, None);
    let mut lines: Vec<&str> = normalized.split('\n').collect();
    let unterminated = lines.pop().unwrap_or_default();
    assert!(
        unterminated.is_empty(),
        "body ends mid-line: {unterminated:?}"
    );
    for line in lines {
        if line.is_empty() {
            if let Some(d) = data.take() {
                events.push(Event {
                    name: name.take(),
                    data: d,
                });
            }
            name = None;
        } else if line.starts_with(':') {
            continue;
        } else if let Some(v) = line.strip_prefix("event: ") {
            name = Some(v.to_owned());
        } else if let Some(v) = line.strip_prefix("data: ") {
            match &mut data {
                Some(d) => {
                    d.push('\n');
                    d.push_str(v);
                }
                None => data = Some(v.to_owned()),
            }
        } else {
            panic!("unexpected SSE line {line:?}");
        }
    }
    let pending = data.map(|d| Event { name, data: d });
    (events, pending)
}

/// Parse a complete, well-terminated SSE body.
pub fn events(resp: &RawResponse) -> Vec<Event> {
    assert_eq!(
        resp.status,
        200,
        "body: {}",
        String::from_utf8_lossy(&resp.body)
    );
    assert_eq!(resp.headers["content-type"], "text/event-stream");
    assert!(resp.complete, "stream did not end with the terminal chunk");
    let (events, pending) = parse_sse(&resp.text());
    assert!(pending.is_none(), "event left pending: {pending:?}");
    events
}
