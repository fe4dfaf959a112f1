//! atto as an Agent Client Protocol agent (`atto acp`): an editor (Zed, JetBrains, any ACP
//! client) starts atto, speaks JSON-RPC on its stdin/stdout, and drives atto sessions.
//!
//! This crate owns the translation both ways: ACP requests become `Op`s on an
//! [`AgentHandle`], and every `Event` becomes `session/update` notifications, permission
//! requests or prompt responses. It never reaches into the engine: a session is started by
//! the binary's [`SessionStarter`] (the same wiring as every other front end), so the gate,
//! grants, audit, checkpoints and sandbox are the ones the terminal UI uses.
//!
//! The client's MCP servers (stdio and streamable HTTP) are handed to the starter, which
//! adds them to the session's own MCP client beside the user's configured ones. It does not
//! route reads, writes and commands through the client's `fs/*` and `terminal/*` methods:
//! atto's own tools do that work.

mod convert;
mod permission;
mod plan_view;
mod prompt;
mod pump;
mod replay;
mod server;
#[cfg(test)]
mod tests;

/// Entry point for the fuzz targets under `fuzz/`. Not an API for other crates.
#[doc(hidden)]
pub mod fuzzing;

use std::path::PathBuf;
use std::time::Duration;

use atto_protocol::AgentHandle;
use atto_protocol::Message;

pub use server::serve;

/// What the client asked for when it opened or loaded a session.
#[derive(Debug, Clone)]
pub struct StartRequest {
    /// The client's working directory: the workspace is found from it.
    pub cwd: PathBuf,
    /// A saved atto session to continue (`session/load`), by id.
    pub resume: Option<String>,
    /// The client's MCP servers, by name, each as a `.mcp.json` entry would describe it
    /// (`command`/`args`/`env`, or `type: "http"` with `url`/`headers`).
    pub mcp_servers: std::collections::BTreeMap<String, serde_json::Value>,
}

/// A session started for the client.
pub struct Started {
    /// The running session.
    pub handle: AgentHandle,
    /// For a resumed session: its history so far, replayed to the client.
    pub history: Vec<Message>,
    /// Whether trust mode is on at the start (`--trust`, `--yolo`); `/trust` toggles it.
    pub trust: bool,
}

/// Starts atto sessions the way every front end does (flags, config, store, sandbox).
pub trait SessionStarter: Send + Sync + 'static {
    /// Starts a session, or says in one line why it cannot.
    fn start(&self, request: StartRequest) -> Result<Started, String>;
}

/// What ACP shows of a tool call it knows only by name and arguments (a replayed history,
/// an approval, a queued change), and the text a write would replace. The binary answers
/// from the tools crate: ACP itself knows no tool.
pub trait ToolFacts: Send + Sync + 'static {
    /// What the tool does.
    fn kind(&self, tool: &str) -> atto_protocol::ToolKind;
    /// The call's one-line title.
    fn title(&self, tool: &str, args: &serde_json::Value) -> String;
    /// The workspace-relative files the call touches.
    fn paths(&self, tool: &str, args: &serde_json::Value) -> Vec<String>;
    /// The file at `path` beneath `workspace` as text; `None` when the path leads outside
    /// the workspace or the file cannot be read.
    fn read(&self, workspace: &std::path::Path, path: &str) -> Option<String>;
}

/// How the ACP server behaves.
#[derive(Clone)]
pub struct AcpOptions {
    /// How long a permission request waits for the client before it counts as "no"
    /// (`None`: no deadline). The session's own gate applies the same deadline.
    pub approval_deadline: Option<Duration>,
    /// atto's version, for `initialize`'s `agentInfo`.
    pub version: String,
    /// What the tools say of their calls.
    pub tools: std::sync::Arc<dyn ToolFacts>,
}

/// The connection to the client failed.
#[derive(Debug, thiserror::Error)]
pub enum AcpError {
    /// The JSON-RPC connection broke (not a clean end of input).
    #[error("the ACP connection failed: {0}")]
    Connection(String),
}
