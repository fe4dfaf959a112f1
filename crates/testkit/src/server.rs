//! The scripted server: accepts connections, records each request, hands each model
//! request the next script reply and writes it in the wire format its path selects.
//!
//! Owns the shared state (script position, recorded requests, subscribers) and fault
//! dispatch. HTTP framing lives in `http`, SSE framing in `sse`, reply shapes in `wire`.

use std::collections::BTreeMap;
use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::io::{AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio::task::{JoinHandle, JoinSet};

use crate::http::{self, READ_TIMEOUT, Request};
use crate::script::{Fault, Reply, Script, StreamOptions};
use crate::sse;
use crate::wire::{self, Ctx, Wire};

/// A request as the server received it, for assertions.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RecordedRequest {
    /// HTTP method.
    pub method: String,
    /// Request target, query string included.
    pub path: String,
    /// Lowercase header name → value.
    pub headers: BTreeMap<String, String>,
    /// Body parsed as JSON; the raw text if it is not JSON; `null` if empty.
    pub body: Value,
    /// Wall clock (Unix nanoseconds) when the request head was fully read.
    pub received_at_unix_ns: u128,
}

struct State {
    replies: Vec<Reply>,
    /// How many replies were served.
    next: usize,
    /// Which replies were served.
    used: Vec<bool>,
    requests: Vec<RecordedRequest>,
    subscribers: Vec<mpsc::UnboundedSender<RecordedRequest>>,
}

struct Shared {
    options: StreamOptions,
    state: Mutex<State>,
}

impl Shared {
    /// The state; a panic elsewhere while holding the lock leaves it usable, since every
    /// update is a single push or increment.
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// A running scripted server. Dropping it (or calling [`ScriptedServer::shutdown`])
/// stops accepting and aborts connections in flight.
pub struct ScriptedServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    task: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for ScriptedServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScriptedServer")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl ScriptedServer {
    /// Serve `script` on an ephemeral port of 127.0.0.1, on the current tokio runtime.
    pub async fn start(script: Script) -> io::Result<ScriptedServer> {
        ScriptedServer::start_on(script, SocketAddr::from((Ipv4Addr::LOCALHOST, 0))).await
    }

    /// Serve `script` on `addr`, on the current tokio runtime.
    pub async fn start_on(script: Script, addr: SocketAddr) -> io::Result<ScriptedServer> {
        let listener = TcpListener::bind(addr).await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            options: script.options,
            state: Mutex::new(State {
                replies: script.replies,
                next: 0,
                used: Vec::new(),
                requests: Vec::new(),
                subscribers: Vec::new(),
            }),
        });
        let task = tokio::spawn(accept_loop(listener, Arc::clone(&shared)));
        Ok(ScriptedServer {
            addr,
            shared,
            task: Some(task),
        })
    }

    /// `http://127.0.0.1:PORT`, without a trailing slash or `/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.lock().requests.clone()
    }

    /// How many script replies have been consumed (faulted ones included).
    pub fn replies_served(&self) -> usize {
        self.shared.lock().next
    }

    /// A channel receiving every request that arrives from now on, as it arrives.
    pub fn subscribe(&self) -> mpsc::UnboundedReceiver<RecordedRequest> {
        let (tx, rx) = mpsc::unbounded_channel();
        self.shared.lock().subscribers.push(tx);
        rx
    }

    /// Stop the server and wait until its tasks have ended.
    pub async fn shutdown(mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
            // The task was aborted on purpose; its cancellation error says nothing new.
            let _ = task.await;
        }
    }
}

impl Drop for ScriptedServer {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

/// Accept until aborted. Dropping the `JoinSet` on abort aborts the connections too.
async fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    let mut conns = JoinSet::new();
    loop {
        while conns.try_join_next().is_some() {}
        match listener.accept().await {
            Ok((stream, _)) => {
                conns.spawn(handle_connection(stream, Arc::clone(&shared)));
            }
            // Out of file descriptors and the like: back off instead of spinning.
            Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
        }
    }
}

fn now_unix_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

fn parse_body(raw: &[u8]) -> Value {
    if raw.is_empty() {
        return Value::Null;
    }
    serde_json::from_slice(raw)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(raw).into_owned()))
}

/// What the request gets: the next reply, or an error when the script is used up.
enum Answer {
    NotFound,
    Exhausted(usize),
    Reply(Wire, usize, Box<Reply>),
}

/// Record the request and, for a model path, take the next reply, in one critical section
/// so that arrival order and reply order agree.
fn admit(shared: &Shared, req: &Request, body: &Value) -> Answer {
    let recorded = RecordedRequest {
        method: req.method.clone(),
        path: req.path.clone(),
        headers: req.headers.clone(),
        body: body.clone(),
        received_at_unix_ns: req.received_at_unix_ns,
    };
    let mut state = shared.lock();
    state
        .subscribers
        .retain(|tx| tx.send(recorded.clone()).is_ok());
    state.requests.push(recorded);
    let Some(wire) = Wire::from_path(&req.path) else {
        return Answer::NotFound;
    };
    // The first unserved reply whose condition this request meets (none: any request).
    let text = body.to_string();
    let served = state.used.len().max(state.replies.len());
    state.used.resize(served, false);
    let chosen = (0..state.replies.len()).find(|&i| {
        !state.used[i]
            && state.replies[i]
                .when
                .as_deref()
                .is_none_or(|needle| text.contains(needle))
    });
    let Some(index) = chosen else {
        return Answer::Exhausted(state.next);
    };
    state.used[index] = true;
    state.next += 1;
    Answer::Reply(wire, index + 1, Box::new(state.replies[index].clone()))
}

async fn handle_connection(stream: TcpStream, shared: Arc<Shared>) {
    // Each write is one flushed chunk; NODELAY keeps them separate segments on the wire.
    let _ = stream.set_nodelay(true);
    let mut conn = BufReader::new(stream);
    let req = match tokio::time::timeout(READ_TIMEOUT, http::read_request(&mut conn)).await {
        Ok(Ok(Some(req))) => req,
        Ok(Ok(None)) => return,
        Ok(Err(err)) => {
            let body = wire::openai_error_body(400, &format!("atto-testkit: bad request: {err}"));
            let _ =
                http::write_full(&mut conn, 400, "application/json", &[], body.as_bytes()).await;
            return;
        }
        Err(_elapsed) => return,
    };
    let body = parse_body(&req.body);
    let result = match admit(&shared, &req, &body) {
        Answer::NotFound => {
            let msg = format!("atto-testkit: no model endpoint at {}", req.path);
            let body = wire::openai_error_body(404, &msg);
            http::write_full(&mut conn, 404, "application/json", &[], body.as_bytes()).await
        }
        Answer::Exhausted(served) => {
            let wire = Wire::from_path(&req.path).unwrap_or(Wire::Chat);
            let msg = format!("atto-testkit: script exhausted after {served} replies");
            let body = wire.error_body(400, &msg);
            http::write_full(&mut conn, 400, "application/json", &[], body.as_bytes()).await
        }
        Answer::Reply(wire, reply_no, reply) => {
            let ctx = Ctx {
                reply_no,
                model: body["model"].as_str().unwrap_or("atto-scripted").to_owned(),
                include_usage: body["stream_options"]["include_usage"] == json!(true),
                created: now_unix_secs(),
            };
            let streaming = body["stream"] == json!(true);
            respond(&mut conn, &shared.options, wire, &ctx, &reply, streaming).await
        }
    };
    if result.is_ok() {
        let _ = conn.shutdown().await;
    }
}

/// Write `reply` (or its fault) as a streamed or plain response.
async fn respond<W: AsyncWrite + Unpin>(
    conn: &mut W,
    options: &StreamOptions,
    wire: Wire,
    ctx: &Ctx,
    reply: &Reply,
    streaming: bool,
) -> io::Result<()> {
    if reply.delay_ms > 0 {
        tokio::time::sleep(Duration::from_millis(reply.delay_ms)).await;
    }
    if let Some(Fault::Status {
        status,
        body,
        retry_after,
    }) = &reply.fault
    {
        let body = match body {
            Some(body) => body.clone(),
            None => wire.error_body(*status, &format!("atto-testkit: scripted HTTP {status}")),
        };
        let extra: Vec<(&str, String)> = retry_after
            .iter()
            .map(|v| ("retry-after", v.clone()))
            .collect();
        return http::write_full(conn, *status, "application/json", &extra, body.as_bytes()).await;
    }
    if streaming {
        respond_streaming(conn, options, wire, ctx, reply).await
    } else {
        respond_plain(conn, wire, ctx, reply).await
    }
}

/// A streamed reply as server-sent events, with the scripted fault applied to them.
async fn respond_streaming<W: AsyncWrite + Unpin>(
    conn: &mut W,
    options: &StreamOptions,
    wire: Wire,
    ctx: &Ctx,
    reply: &Reply,
) -> io::Result<()> {
    if let Some(Fault::RawStream { body }) = &reply.fault {
        return sse::write_raw(conn, body.as_bytes(), options).await;
    }
    let mut events = wire.stream_events(ctx, reply);
    let mut cut_after = None;
    match &reply.fault {
        Some(Fault::Cut { after_events }) => cut_after = Some(*after_events),
        Some(Fault::EndEarly { after_events }) => {
            let keep = after_events.unwrap_or(events.len().saturating_sub(1));
            events.truncate(keep);
        }
        Some(Fault::MalformedChunk { after_events }) => {
            let at = (*after_events).min(events.len());
            events.insert(at, wire.malformed_event());
        }
        Some(Fault::ErrorEvent {
            after_events,
            error_type,
            message,
        }) => {
            events.truncate(*after_events);
            events.push(wire.error_event(ctx, events.len(), error_type, message));
        }
        Some(Fault::Status { .. } | Fault::RawStream { .. }) | None => {}
    }
    sse::write_stream(conn, &events, options, cut_after).await
}

/// A reply as one JSON body, with the scripted fault applied to it.
async fn respond_plain<W: AsyncWrite + Unpin>(
    conn: &mut W,
    wire: Wire,
    ctx: &Ctx,
    reply: &Reply,
) -> io::Result<()> {
    let full = wire.full_body(ctx, reply).to_string();
    match &reply.fault {
        Some(Fault::Cut { .. } | Fault::EndEarly { .. }) => {
            http::write_truncated(conn, "application/json", full.as_bytes(), full.len() / 2).await
        }
        Some(Fault::MalformedChunk { .. }) => {
            let half = &full.as_bytes()[..full.len() / 2];
            http::write_full(conn, 200, "application/json", &[], half).await
        }
        Some(Fault::ErrorEvent {
            error_type,
            message,
            ..
        }) => {
            let body = match wire {
                Wire::Anthropic => {
                    json!({"type": "error", "error": {"type": error_type, "message": message}})
                }
                Wire::Chat | Wire::Responses => {
                    json!({"error": {"message": message, "type": error_type, "param": null, "code": error_type}})
                }
            };
            let status = wire::status_for_error_type(error_type);
            http::write_full(
                conn,
                status,
                "application/json",
                &[],
                body.to_string().as_bytes(),
            )
            .await
        }
        Some(Fault::RawStream { body }) => {
            http::write_full(conn, 200, "text/event-stream", &[], body.as_bytes()).await
        }
        Some(Fault::Status { .. }) | None => {
            http::write_full(conn, 200, "application/json", &[], full.as_bytes()).await
        }
    }
}
