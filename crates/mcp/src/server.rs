//! One configured server over its life: not started, starting (in the background),
//! ready, or down with its last error. A server that fails to start, crashes or breaks
//! the protocol is reported once (a status event), marked down and started again on its
//! next use, no sooner than its backoff allows. Calls run on a clone of the connection's
//! peer, so a slow call never blocks another; each has the server's timeout and the
//! turn's cancellation (dropping the request sends `notifications/cancelled`).
//!
//! State lives behind a plain mutex that is never held across an `.await`; waiting for
//! a start is done on a `watch` channel.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use atto_protocol::{Event, McpServerInfo, McpServerState, McpToolInfo};
use rmcp::model::CallToolRequestParams;
use rmcp::service::{Peer, RoleClient};
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use crate::config::ServerConfig;
use crate::connect::{self, kill_group, one_line};
use crate::judge::{self, Judgement};
use crate::naming;

/// Wait before a server that failed twice in a row is started again; doubled per
/// further failure. After one failure (a crash of a server that ran fine, or a first
/// failed start) the next use starts it again at once.
const FIRST_BACKOFF: Duration = Duration::from_millis(500);
/// Longest wait between restarts.
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// One tool of a server, as atto offers it.
#[derive(Debug, Clone)]
pub(crate) struct ToolEntry {
    /// `mcp__server__tool`.
    pub name: String,
    /// The name the server knows it by.
    pub remote: String,
    pub description: String,
    pub schema: serde_json::Value,
    pub judgement: Judgement,
    pub annotations: Vec<String>,
}

impl ToolEntry {
    /// Bytes its schema adds to a request (name, description, parameters).
    pub(crate) fn size(&self) -> usize {
        self.name.len() + self.description.len() + self.schema.to_string().len() + 40
    }
}

enum Phase {
    Idle,
    Starting,
    Ready(Link),
    Down { retry_at: Instant },
    Disabled,
}

/// A live connection; dropping it stops the service and kills the process group.
struct Link {
    peer: Peer<RoleClient>,
    stop: CancellationToken,
    group: Option<u32>,
    generation: u64,
}

impl Drop for Link {
    fn drop(&mut self) {
        self.stop.cancel();
        if let Some(group) = self.group {
            kill_group(group);
        }
    }
}

struct State {
    phase: Phase,
    tools: Vec<ToolEntry>,
    last_error: Option<String>,
    /// The failure last announced since the server was last ready: the same failure
    /// again (a restart on next use that fails alike) is not news.
    announced_failure: Option<String>,
    failures: u32,
    generation: u64,
}

/// Why a call did not produce a result; one line for the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CallError {
    /// The turn was cancelled (Ctrl-C); the server was told.
    Cancelled,
    /// Anything else, said in full.
    Failed(String),
}

/// One server.
pub(crate) struct Server {
    pub config: ServerConfig,
    workspace: PathBuf,
    log_dir: PathBuf,
    state: Mutex<State>,
    changed: watch::Sender<u64>,
    events: mpsc::UnboundedSender<Event>,
}

impl Server {
    pub(crate) fn new(
        config: ServerConfig,
        workspace: PathBuf,
        log_dir: PathBuf,
        events: mpsc::UnboundedSender<Event>,
        disabled: Option<String>,
    ) -> Arc<Self> {
        let phase = if disabled.is_some() || !config.enabled {
            Phase::Disabled
        } else {
            Phase::Idle
        };
        Arc::new(Self {
            config,
            workspace,
            log_dir,
            state: Mutex::new(State {
                phase,
                tools: Vec::new(),
                last_error: disabled,
                announced_failure: None,
                failures: 0,
                generation: 0,
            }),
            changed: watch::Sender::new(0),
            events,
        })
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // A panic elsewhere while holding the lock leaves plain data behind; keep going.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Starts the server in the background when it is not running and may be started
    /// now (never started, or down past its backoff). Returns at once.
    pub(crate) fn ensure_started(self: &Arc<Self>) {
        {
            let mut state = self.state();
            let due = match &state.phase {
                Phase::Idle => true,
                Phase::Down { retry_at } => Instant::now() >= *retry_at,
                Phase::Starting | Phase::Ready(_) | Phase::Disabled => false,
            };
            if !due {
                return;
            }
            state.phase = Phase::Starting;
        }
        self.announce();
        let this = Arc::clone(self);
        tokio::spawn(async move { this.start().await });
    }

    async fn start(self: Arc<Self>) {
        let result = connect::connect(
            &self.config,
            &self.workspace,
            &self.log_dir,
            self.events.clone(),
        )
        .await;
        match result {
            Ok(connected) => {
                let tools = self.entries(connected.tools);
                let stop = connected.service.cancellation_token();
                let peer = connected.service.peer().clone();
                let ours = CancellationToken::new();
                let generation = {
                    let mut state = self.state();
                    state.generation += 1;
                    let generation = state.generation;
                    state.phase = Phase::Ready(Link {
                        peer,
                        stop: ours.clone(),
                        group: connected.group,
                        generation,
                    });
                    state.tools = tools;
                    state.failures = 0;
                    state.announced_failure = None;
                    state.last_error = None;
                    generation
                };
                // Watch the connection: when it ends without us ending it, the server
                // crashed or closed its output.
                let this = Arc::clone(&self);
                let service = connected.service;
                tokio::spawn(async move {
                    let waiting = service.waiting();
                    tokio::pin!(waiting);
                    tokio::select! {
                        () = ours.cancelled() => {
                            stop.cancel();
                            let _ = tokio::time::timeout(Duration::from_secs(2), waiting).await;
                        }
                        _ = &mut waiting => {
                            this.went_down(generation, "exited (its connection closed)".to_owned());
                        }
                    }
                });
                self.announce();
            }
            Err(error) => self.failed(error),
        }
    }

    fn entries(&self, tools: Vec<rmcp::model::Tool>) -> Vec<ToolEntry> {
        let filter = &self.config.tools;
        tools
            .into_iter()
            .filter(|t| filter.allow.is_empty() || filter.allow.iter().any(|a| a == &*t.name))
            .filter(|t| !filter.deny.iter().any(|d| d == &*t.name))
            .map(|t| {
                let annotations = t.annotations.as_ref();
                ToolEntry {
                    name: naming::tool_name(&self.config.name, &t.name),
                    remote: t.name.to_string(),
                    description: t
                        .description
                        .as_deref()
                        .map(|d| d.trim().to_owned())
                        .filter(|d| !d.is_empty())
                        .unwrap_or_else(|| format!("{} (MCP server {})", t.name, self.config.name)),
                    schema: serde_json::Value::Object((*t.input_schema).clone()),
                    judgement: judge::judge(&t.name, annotations, filter),
                    annotations: judge::words(annotations),
                }
            })
            .collect()
    }

    /// Marks a start as failed: down, with its backoff, said once.
    fn failed(&self, error: String) {
        let news = {
            let mut state = self.state();
            state.failures += 1;
            let backoff = match state.failures {
                0 | 1 => Duration::ZERO,
                n => FIRST_BACKOFF
                    .saturating_mul(1 << (n - 2).min(10))
                    .min(MAX_BACKOFF),
            };
            state.phase = Phase::Down {
                retry_at: Instant::now() + backoff,
            };
            let news = state.announced_failure.as_ref() != Some(&error);
            state.announced_failure = Some(error.clone());
            state.last_error = Some(error);
            news
        };
        if news {
            self.announce();
        } else {
            // Whoever waits on this start still learns that it ended.
            self.changed.send_modify(|n| *n += 1);
        }
    }

    /// The connection of `generation` ended: down unless a newer one replaced it.
    fn went_down(&self, generation: u64, why: String) {
        {
            let state = self.state();
            let current =
                matches!(&state.phase, Phase::Ready(link) if link.generation == generation);
            if !current {
                return;
            }
        }
        self.failed(format!("{why}; see its log: {}", self.log().display()));
    }

    fn log(&self) -> PathBuf {
        connect::log_path(&self.log_dir, &self.config.name)
    }

    /// Sends the server's status to the front ends and wakes whoever waits on it.
    fn announce(&self) {
        // Which tools the model sees is the hub's knowledge, not the server's.
        let info = self.info(&|_| false);
        self.changed.send_modify(|n| *n += 1);
        let _ = self.events.send(Event::McpServerStatus { server: info });
    }

    /// The server as `/mcp` shows it; `offered` says which tool names the model sees.
    pub(crate) fn info(&self, offered: &dyn Fn(&str) -> bool) -> McpServerInfo {
        let state = self.state();
        McpServerInfo {
            name: self.config.name.clone(),
            state: match state.phase {
                Phase::Idle | Phase::Starting => McpServerState::Starting,
                Phase::Ready(_) => McpServerState::Ready,
                Phase::Down { .. } => McpServerState::Down,
                Phase::Disabled => McpServerState::Disabled,
            },
            transport: self.config.transport.kind().to_owned(),
            origin: self.config.origin.clone(),
            tools: state
                .tools
                .iter()
                .map(|t| McpToolInfo {
                    name: t.name.clone(),
                    danger: t.judgement.danger,
                    read_only: t.judgement.read_only,
                    annotations: t.annotations.clone(),
                    offered: offered(&t.name),
                })
                .collect(),
            last_error: state.last_error.clone(),
        }
    }

    /// Whether the server is up with its tools listed.
    pub(crate) fn is_ready(&self) -> bool {
        matches!(self.state().phase, Phase::Ready(_))
    }

    /// Whether it is configured but not to be started.
    pub(crate) fn is_disabled(&self) -> bool {
        matches!(self.state().phase, Phase::Disabled)
    }

    /// The tools it offered when it last listed them.
    pub(crate) fn tools(&self) -> Vec<ToolEntry> {
        self.state().tools.clone()
    }

    /// Waits (bounded by the start-up timeout, or until `cancel`) for a start to end;
    /// starts the server first when it is due. `Err`: why it is not ready.
    pub(crate) async fn ready(
        self: &Arc<Self>,
        cancel: &CancellationToken,
    ) -> Result<(), CallError> {
        self.ensure_started();
        let mut changes = self.changed.subscribe();
        let deadline =
            tokio::time::Instant::now() + self.config.startup_timeout + Duration::from_secs(1);
        loop {
            let verdict = {
                let state = self.state();
                match &state.phase {
                    Phase::Ready(_) => Some(Ok(())),
                    Phase::Starting | Phase::Idle => None,
                    Phase::Disabled => Some(Err(format!(
                        "MCP server '{}' is disabled{}",
                        self.config.name,
                        state
                            .last_error
                            .as_deref()
                            .map(|e| format!(": {e}"))
                            .unwrap_or_default()
                    ))),
                    Phase::Down { retry_at } => Some(Err(format!(
                        "MCP server '{}' is down: {}. atto starts it again on the next call \
                         (in {:.1}s at the earliest).",
                        self.config.name,
                        state.last_error.as_deref().unwrap_or("it stopped"),
                        retry_at
                            .saturating_duration_since(Instant::now())
                            .as_secs_f64()
                    ))),
                }
            };
            if let Some(result) = verdict {
                return result.map_err(CallError::Failed);
            }
            tokio::select! {
                changed = changes.changed() => {
                    if changed.is_err() {
                        return Err(CallError::Failed("the MCP client was shut down".into()));
                    }
                }
                () = cancel.cancelled() => return Err(CallError::Cancelled),
                () = tokio::time::sleep_until(deadline) => {
                    return Err(CallError::Failed(format!(
                        "MCP server '{}' did not finish starting in time",
                        self.config.name
                    )));
                }
            }
        }
    }

    /// Calls `remote` with `args`: starts the server when needed, bounds the call by
    /// the tool timeout, and sends `notifications/cancelled` when `cancel` fires.
    pub(crate) async fn call(
        self: &Arc<Self>,
        remote: &str,
        args: serde_json::Value,
        cancel: &CancellationToken,
    ) -> Result<rmcp::model::CallToolResult, CallError> {
        self.ready(cancel).await?;
        let (peer, generation) = {
            let state = self.state();
            match &state.phase {
                Phase::Ready(link) => (link.peer.clone(), link.generation),
                _ => {
                    return Err(CallError::Failed(format!(
                        "MCP server '{}' went down before the call could be sent",
                        self.config.name
                    )));
                }
            }
        };
        let arguments = match args {
            serde_json::Value::Object(map) => Some(map),
            serde_json::Value::Null => None,
            other => {
                return Err(CallError::Failed(format!(
                    "arguments must be a JSON object, got {other}"
                )));
            }
        };
        let mut params = CallToolRequestParams::new(remote.to_owned());
        params.arguments = arguments;
        params.meta = Some(rmcp::model::RequestMetaObject::with_progress_token(
            rmcp::model::ProgressToken(rmcp::model::NumberOrString::String(
                format!("atto-{remote}").into(),
            )),
        ));
        let limit = self.config.tool_timeout;
        // Dropping the request future (cancel or timeout) tells the server to stop.
        let outcome = tokio::select! {
            result = peer.call_tool(params) => Ok(result),
            () = cancel.cancelled() => Err(CallError::Cancelled),
            () = tokio::time::sleep(limit) => Err(CallError::Failed(format!(
                "MCP server '{}' did not answer {remote} within {}s (tool_timeout); the call \
                 was cancelled",
                self.config.name,
                limit.as_secs_f64()
            ))),
        }?;
        match outcome {
            Ok(result) => Ok(result),
            Err(error) => {
                let message = one_line(&error.to_string());
                let broken = matches!(
                    error,
                    rmcp::ServiceError::TransportClosed | rmcp::ServiceError::TransportSend(_)
                ) || peer.is_transport_closed();
                if broken {
                    self.went_down(
                        generation,
                        format!("closed the connection during a call ({message})"),
                    );
                    Err(CallError::Failed(format!(
                        "MCP server '{}' stopped during the call ({message}); it was not \
                         completed. atto starts the server again on the next call; its log: {}",
                        self.config.name,
                        self.log().display()
                    )))
                } else {
                    Err(CallError::Failed(format!(
                        "MCP server '{}' answered {remote} with an error: {message}",
                        self.config.name
                    )))
                }
            }
        }
    }

    /// Stops the server and kills its processes (session end).
    pub(crate) fn shutdown(&self) {
        let mut state = self.state();
        // Dropping the link stops the service and kills the process group; a stopped
        // server is not started again.
        state.phase = Phase::Disabled;
    }
}
