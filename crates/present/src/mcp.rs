//! MCP servers as lines of text, for every front end: a status change, a progress
//! report, and `/mcp`'s answer (each server, then its tools with their annotations).

use atto_protocol::{McpServerInfo, McpServerState};

/// One line for a server's status change; `None` for changes not worth a line (a
/// server starting).
pub fn status_line(server: &McpServerInfo) -> Option<String> {
    match server.state {
        McpServerState::Starting | McpServerState::Disabled => None,
        McpServerState::Ready => Some(format!(
            "MCP server {} ready: {} tools",
            server.name,
            server.tools.len()
        )),
        McpServerState::Down => Some(format!(
            "MCP server {} is down: {}",
            server.name,
            server.last_error.as_deref().unwrap_or("it stopped")
        )),
    }
}

/// One line for a progress report.
pub fn progress_line(
    server: &str,
    progress: f64,
    total: Option<f64>,
    message: Option<&str>,
) -> String {
    let amount = match total {
        Some(total) => format!("{progress}/{total}"),
        None => format!("{progress}"),
    };
    match message {
        Some(message) => format!("MCP {server}: {amount} {message}"),
        None => format!("MCP {server}: {amount}"),
    }
}

/// `/mcp`'s answer.
pub fn server_lines(servers: &[McpServerInfo]) -> Vec<String> {
    if servers.is_empty() {
        return vec![
            "no MCP servers are configured ([mcp_servers.NAME] in config.toml, or .mcp.json)"
                .to_owned(),
        ];
    }
    let mut lines = Vec::new();
    for s in servers {
        let mut line = format!(
            "{}  {}  {} tools  {}  {}",
            s.name,
            s.state.as_str(),
            s.tools.len(),
            s.transport,
            s.origin
        );
        if let Some(error) = &s.last_error {
            line.push_str(&format!("  last error: {error}"));
        }
        lines.push(line);
        for t in &s.tools {
            lines.push(format!(
                "  {}  {}{}{}{}",
                t.name,
                t.danger.as_str(),
                if t.read_only { ", read-only" } else { "" },
                if t.offered {
                    ""
                } else {
                    ", deferred (mcp_tool_search)"
                },
                if t.annotations.is_empty() {
                    String::new()
                } else {
                    format!("  [{}]", t.annotations.join(" "))
                }
            ));
        }
    }
    lines
}
