//! atto's MCP side, on the official Rust SDK (`rmcp`).
//!
//! Owns: MCP server configuration (`[mcp_servers.NAME]`, `.mcp.json`), the client that
//! starts servers in the background and keeps them running (restart with backoff,
//! timeouts, cancellation, stderr to a log file, process groups killed at the end), the
//! tools they offer as atto tools named `mcp__server__tool` with a danger level judged
//! from their annotations, the `mcp_tool_search` tool for deferred schemas, and `atto
//! mcp serve` (atto's read-only tools as an MCP server).
//!
//! Deliberately does not: decide whether a call may run (core's gate does, for these
//! tools exactly as for built-in ones), or decide whether a project's `.mcp.json` is
//! trusted (the CLI asks the user and remembers).

mod config;
mod connect;
mod content;
mod hub;
mod judge;
mod naming;
mod serve;
mod server;
mod tool;

pub use config::{
    ConfigError, DEFAULT_STARTUP_TIMEOUT, DEFAULT_TOOL_TIMEOUT, PermissionLists, PinnedFile,
    RawServer, ServerConfig, ToolsConfig, Transport, from_mcp_json, from_tables, parse_mcp_json,
};
pub use connect::kill_all_servers;
pub use content::MAX_RESULT_BYTES;
pub use hub::{HubOptions, McpHub};
pub use naming::{PREFIX, canonical, seed_spelling, tool_name};
#[doc(hidden)]
pub use serve::fuzzing;
pub use serve::{ExecSettings, ServeOptions, serve_stdio};
pub use tool::SEARCH_TOOL;
