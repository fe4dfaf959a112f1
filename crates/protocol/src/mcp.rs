//! What front ends are told about MCP servers: their state, their tools, the last error.

use serde::{Deserialize, Serialize};

/// Where an MCP server is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum McpServerState {
    /// Being started (or restarted) in the background.
    Starting,
    /// Connected; its tools are listed.
    Ready,
    /// Failed to start, crashed or broke the protocol; restarted on next use.
    Down,
    /// Configured with `enabled = false`, or a project's servers not trusted yet.
    Disabled,
}

impl McpServerState {
    /// `starting`, `ready`, `down` or `disabled`.
    pub fn as_str(self) -> &'static str {
        match self {
            McpServerState::Starting => "starting",
            McpServerState::Ready => "ready",
            McpServerState::Down => "down",
            McpServerState::Disabled => "disabled",
        }
    }
}

/// One MCP server as `/mcp` and `atto mcp list` show it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct McpServerInfo {
    /// The configured name.
    pub name: String,
    /// Its state now.
    pub state: McpServerState,
    /// `stdio` or `http`.
    pub transport: String,
    /// Where the config came from (`config.toml`, `.mcp.json`, …).
    pub origin: String,
    /// Tools it offers (after `tools.allow`/`tools.deny`).
    pub tools: Vec<McpToolInfo>,
    /// The last error, one line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
}

/// One tool of an MCP server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct McpToolInfo {
    /// The name the model calls it by (`mcp__server__tool`).
    pub name: String,
    /// Its danger level as atto judges it.
    pub danger: crate::DangerLevel,
    /// Whether atto treats it as read-only (the server says so and the user did not say
    /// otherwise).
    pub read_only: bool,
    /// The server's annotations, as `readOnlyHint=true` words.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub annotations: Vec<String>,
    /// Whether the model sees it in the tool list now (deferred tools are found through
    /// `mcp_tool_search`); judged in `/mcp` answers, always `false` in status events.
    pub offered: bool,
}
