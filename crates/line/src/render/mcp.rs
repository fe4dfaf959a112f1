//! MCP events as text: a server's status change (once per change), progress of a
//! running call, and `/mcp`'s answer.

use atto_present::mcp as present;
use atto_protocol::Event;

/// The text for an MCP event; `None` for other events (and `Some("")` for a status
/// change not worth a line).
pub(super) fn text(event: &Event) -> Option<String> {
    let lines = match event {
        Event::McpServerStatus { server } => present::status_line(server).into_iter().collect(),
        Event::McpProgress {
            server,
            progress,
            total,
            message,
        } => vec![present::progress_line(
            server,
            *progress,
            *total,
            message.as_deref(),
        )],
        Event::McpServers { servers } => present::server_lines(servers),
        _ => return None,
    };
    Some(lines.iter().map(|l| format!("{l}\n")).collect())
}
