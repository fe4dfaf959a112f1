//! atto's words in ACP's: modes, tool calls (kind, title, locations, diffs), the options
//! of a permission request, and the slash commands offered to the client. Pure functions.

use std::path::Path;

use agent_client_protocol::v1::schema::{
    AvailableCommand, AvailableCommandInput, ContentBlock, ContentChunk, Diff, PermissionOption,
    PermissionOptionKind, SessionMode, SessionModeState, SessionUpdate, TextContent,
    ToolCallContent, ToolCallLocation, ToolKind, UnstructuredCommandInput,
};
use atto_protocol::{AgentMode, ApprovalDecision, ApprovalRequest, GrantScope};
use serde_json::Value;

const MODES: [AgentMode; 4] = [
    AgentMode::Build,
    AgentMode::Plan,
    AgentMode::Review,
    AgentMode::Debug,
];

/// atto's four agent modes as ACP session modes, `current` selected.
pub(crate) fn modes(current: AgentMode) -> SessionModeState {
    let available = MODES
        .iter()
        .map(|m| {
            let about = match m {
                AgentMode::Build => "full access: edits and commands, through the approval gate",
                AgentMode::Plan => {
                    "reads run; edits and commands are queued as proposed changes to approve"
                }
                AgentMode::Review => "read-only: every edit and command is refused",
                AgentMode::Debug => "reads plus test commands",
            };
            SessionMode::new(m.as_str(), m.label()).description(about.to_owned())
        })
        .collect();
    SessionModeState::new(current.as_str(), available)
}

/// The agent mode an ACP mode id names.
pub(crate) fn mode_from_id(id: &str) -> Option<AgentMode> {
    MODES.into_iter().find(|m| m.as_str() == id)
}

/// A text chunk of the agent's answer.
pub(crate) fn agent_text(text: impl Into<String>) -> SessionUpdate {
    SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::Text(TextContent::new(
        text,
    ))))
}

/// A chunk of the agent's reasoning.
pub(crate) fn thought(text: impl Into<String>) -> SessionUpdate {
    SessionUpdate::AgentThoughtChunk(ContentChunk::new(ContentBlock::Text(TextContent::new(
        text,
    ))))
}

/// A chunk of the user's message (history replay).
pub(crate) fn user_text(text: impl Into<String>) -> SessionUpdate {
    SessionUpdate::UserMessageChunk(ContentChunk::new(ContentBlock::Text(TextContent::new(
        text,
    ))))
}

/// Text content of a tool call.
pub(crate) fn text_content(text: impl Into<String>) -> ToolCallContent {
    ToolCallContent::Content(agent_client_protocol::v1::schema::Content::new(
        ContentBlock::Text(TextContent::new(text)),
    ))
}

/// What kind of work a call does, in ACP's words, for the client's icon.
pub(crate) fn kind(kind: atto_protocol::ToolKind) -> ToolKind {
    use atto_protocol::ToolKind as Atto;
    match kind {
        Atto::Read => ToolKind::Read,
        Atto::Edit => ToolKind::Edit,
        Atto::Delete => ToolKind::Delete,
        Atto::Move => ToolKind::Move,
        Atto::Search => ToolKind::Search,
        Atto::Execute => ToolKind::Execute,
        Atto::Think => ToolKind::Think,
        Atto::Fetch => ToolKind::Fetch,
        Atto::Other => ToolKind::Other,
    }
}

fn arg<'a>(args: &'a Value, key: &str) -> Option<&'a str> {
    args.get(key).and_then(Value::as_str)
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("")
}

/// The title of a call waiting for approval: the call's own title from the arguments the
/// gate judged (the subject's first line only when the request carries none), marked when
/// it would run without the sandbox.
pub(crate) fn approval_title(request: &ApprovalRequest, tools: &dyn crate::ToolFacts) -> String {
    let title = if request.arguments.is_object() {
        tools.title(&request.tool, &request.arguments)
    } else {
        first_line(&request.subject).to_owned()
    };
    if request.unsandboxed {
        format!("{title} WITHOUT the sandbox")
    } else {
        title
    }
}

/// The files a call touches, absolute: its `path`, or every file a patch names.
pub(crate) fn locations(workspace: &Path, paths: Vec<String>) -> Vec<ToolCallLocation> {
    paths
        .iter()
        .map(|p| p.trim())
        .filter(|p| !p.is_empty())
        .map(|p| ToolCallLocation::new(workspace.join(p)))
        .collect()
}

/// The change a file tool's arguments make (`atto_present::file_change`), as ACP diffs: each
/// edit as its old and new text, a write as the whole new content (over `before`, the file as
/// read when plan mode queued the call, when known). Calls without a `path` show none.
pub(crate) fn diffs(workspace: &Path, args: &Value, before: Option<&str>) -> Vec<ToolCallContent> {
    use atto_present::file_change::{self, ArgsChange};
    let Some(path) = arg(args, "path").map(|p| workspace.join(p)) else {
        return Vec::new();
    };
    match file_change::of(args) {
        Some(ArgsChange::Write(content)) => {
            let diff = Diff::new(path, content).old_text(before.map(str::to_owned));
            vec![ToolCallContent::Diff(diff)]
        }
        Some(ArgsChange::Replace(pairs)) => pairs
            .into_iter()
            .map(|(old, new)| {
                ToolCallContent::Diff(Diff::new(path.clone(), new).old_text(old.to_owned()))
            })
            .collect(),
        None => Vec::new(),
    }
}

/// The answers atto offers for an approval: once, always (this session / this project),
/// reject. A call that would run WITHOUT the sandbox may only be allowed once.
pub(crate) fn permission_options(request: &ApprovalRequest) -> Vec<PermissionOption> {
    let mut options = vec![PermissionOption::new(
        "allow_once",
        "Allow once",
        PermissionOptionKind::AllowOnce,
    )];
    if !request.unsandboxed {
        options.push(PermissionOption::new(
            "allow_session",
            format!("Always allow {} in this session", request.suggested_rule),
            PermissionOptionKind::AllowAlways,
        ));
        options.push(PermissionOption::new(
            "allow_project",
            format!("Always allow {} in this project", request.suggested_rule),
            PermissionOptionKind::AllowAlways,
        ));
    }
    options.push(PermissionOption::new(
        "reject_once",
        "Reject",
        PermissionOptionKind::RejectOnce,
    ));
    options
}

/// The decision an option id stands for.
pub(crate) fn decision(option: &str) -> ApprovalDecision {
    match option {
        "allow_once" => ApprovalDecision::Yes,
        "allow_session" => ApprovalDecision::Always {
            scope: GrantScope::Session,
            rule: None,
        },
        "allow_project" => ApprovalDecision::Always {
            scope: GrantScope::Project,
            rule: None,
        },
        "reject_once" => ApprovalDecision::No {
            reason: Some("rejected in the editor".to_owned()),
        },
        other => ApprovalDecision::No {
            reason: Some(format!(
                "the editor answered with an unknown option '{other}'"
            )),
        },
    }
}

/// atto's slash commands, offered to the client (one entry per command name).
pub(crate) fn commands() -> Vec<AvailableCommand> {
    let mut seen: Vec<&str> = Vec::new();
    let mut out = Vec::new();
    for info in atto_present::commands::COMMANDS {
        let usage = info.usage.trim_start_matches('/');
        let (name, rest) = usage.split_once(' ').unwrap_or((usage, ""));
        if seen.contains(&name) {
            continue;
        }
        seen.push(name);
        let mut command = AvailableCommand::new(name, info.about);
        if !rest.is_empty() {
            command = command.input(AvailableCommandInput::Unstructured(
                UnstructuredCommandInput::new(rest),
            ));
        }
        out.push(command);
    }
    out
}

/// An event ACP has no update for (the answer to `/grants`, `/threads`, `/cost` …), as
/// text: its JSON, which carries every field the terminal UI shows.
pub(crate) fn event_text(event: &atto_protocol::Event) -> String {
    match serde_json::to_string_pretty(event) {
        Ok(json) => format!("\n```json\n{json}\n```\n"),
        Err(err) => format!("\n(atto could not render this answer: {err})\n"),
    }
}

/// The client's MCP servers as `.mcp.json` entries, by name; an error names a server atto
/// cannot reach (SSE, or a transport this version of ACP added later) or a name given twice.
pub(crate) fn mcp_servers(
    servers: &[agent_client_protocol::v1::schema::McpServer],
) -> Result<std::collections::BTreeMap<String, Value>, String> {
    use agent_client_protocol::v1::schema::McpServer;
    let mut out = std::collections::BTreeMap::new();
    for server in servers {
        let (name, entry) = match server {
            McpServer::Stdio(s) => {
                let env: serde_json::Map<String, Value> = s
                    .env
                    .iter()
                    .map(|v| (v.name.clone(), Value::String(v.value.clone())))
                    .collect();
                let entry = serde_json::json!({
                    "command": s.command.to_string_lossy(),
                    "args": s.args,
                    "env": env,
                });
                (s.name.clone(), entry)
            }
            McpServer::Http(h) => {
                let headers: serde_json::Map<String, Value> = h
                    .headers
                    .iter()
                    .map(|v| (v.name.clone(), Value::String(v.value.clone())))
                    .collect();
                let entry = serde_json::json!({ "type": "http", "url": h.url, "headers": headers });
                (h.name.clone(), entry)
            }
            McpServer::Sse(s) => {
                return Err(format!(
                    "MCP server '{}' uses SSE, which atto does not speak (stdio and streamable \
                     HTTP only; initialize said so)",
                    s.name
                ));
            }
            _ => return Err("an MCP server transport atto does not know".to_owned()),
        };
        if out.insert(name.clone(), entry).is_some() {
            return Err(format!("MCP server '{name}' is given twice"));
        }
    }
    Ok(out)
}
