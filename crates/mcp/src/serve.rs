//! `atto mcp serve`: atto as a stdio MCP server. It offers atto's read-only tools
//! (`read_file`, `list_files`, `glob`, `grep` on the served workspace, and
//! `policy_explain`, the bash classifier's verdict) and, only when the serving user
//! enables it, `atto_exec`, which runs a task with `atto exec` under the permission and
//! agent mode the serving side chose; the caller cannot change them. Tools are
//! annotated read-only (except `atto_exec`), so clients judge them as atto judges theirs.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use atto_protocol::ToolKind;
use atto_tools::{CancellationToken, Tool, ToolContext, ToolRegistry};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, ToolAnnotations,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler, ServiceExt as _};
use serde_json::{Value, json};

/// How `atto_exec` runs tasks; set only by the serving side.
#[derive(Debug, Clone)]
pub struct ExecSettings {
    /// The `atto` binary.
    pub program: PathBuf,
    /// Flags put before the task (`exec --permission … --mode …` and the model flags).
    pub args: Vec<String>,
    /// Bound on one task.
    pub timeout: Duration,
}

/// What `atto mcp serve` serves.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// The workspace the file tools read.
    pub workspace: PathBuf,
    /// `atto_exec`, when the user enabled it.
    pub exec: Option<ExecSettings>,
}

/// Entry point for the fuzz targets under `fuzz/`. Not an API for other crates.
#[doc(hidden)]
pub mod fuzzing;

/// The name of the tool that runs a task with atto.
const EXEC_TOOL: &str = "atto_exec";
/// The name of the classifier tool.
const EXPLAIN_TOOL: &str = "policy_explain";

struct Served {
    options: ServeOptions,
    tools: Vec<Arc<dyn Tool>>,
}

/// Serves on stdin/stdout until the client goes away.
pub async fn serve_stdio(options: ServeOptions) -> Result<(), String> {
    let served = Served {
        options,
        tools: served_tools(),
    };
    let service = served
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| format!("the MCP handshake failed: {e}"))?;
    service
        .waiting()
        .await
        .map(|_| ())
        .map_err(|e| format!("the MCP server stopped: {e}"))
}

/// The built-in tools that read or search the served workspace and change nothing, in the
/// registry's order (not the codebase overview, which keeps an index of its own).
fn served_tools() -> Vec<Arc<dyn Tool>> {
    let builtin = ToolRegistry::builtin();
    let empty = json!({});
    builtin
        .names()
        .into_iter()
        .filter_map(|name| builtin.get(name))
        .filter(|t| matches!(t.kind(), ToolKind::Read | ToolKind::Search) && t.read_only(&empty))
        .collect()
}

fn read_only() -> ToolAnnotations {
    let mut a = ToolAnnotations::new();
    a.read_only_hint = Some(true);
    a.destructive_hint = Some(false);
    a.idempotent_hint = Some(true);
    a.open_world_hint = Some(false);
    a
}

fn object(value: Value) -> Arc<serde_json::Map<String, Value>> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(serde_json::Map::new()),
    }
}

impl Served {
    fn listed(&self) -> Vec<rmcp::model::Tool> {
        let mut out: Vec<rmcp::model::Tool> = self
            .tools
            .iter()
            .map(|t| {
                rmcp::model::Tool::new(
                    t.name().to_owned(),
                    t.description().to_owned(),
                    object(t.parameters()),
                )
                .with_annotations(read_only())
            })
            .collect();
        out.push(
            rmcp::model::Tool::new(
                EXPLAIN_TOOL,
                "How atto's bash classifier judges a command: SAFE, WARN or BLOCK per segment, \
                 with reasons. Runs nothing.",
                object(json!({
                    "type": "object",
                    "properties": {"command": {"type": "string"}},
                    "required": ["command"]
                })),
            )
            .with_annotations(read_only()),
        );
        if self.options.exec.is_some() {
            let mut a = ToolAnnotations::new();
            a.read_only_hint = Some(false);
            a.destructive_hint = Some(true);
            a.open_world_hint = Some(true);
            out.push(
                rmcp::model::Tool::new(
                    EXEC_TOOL,
                    "Run a coding task with atto in the served workspace, under the permission \
                     and agent mode the serving user chose; returns atto's final answer.",
                    object(json!({
                        "type": "object",
                        "properties": {"task": {"type": "string"}},
                        "required": ["task"]
                    })),
                )
                .with_annotations(a),
            );
        }
        out
    }

    async fn call(&self, name: &str, args: Value, cancel: CancellationToken) -> CallToolResult {
        if name == EXPLAIN_TOOL {
            return match args.get("command").and_then(Value::as_str) {
                Some(command) => CallToolResult::success(vec![ContentBlock::text(
                    atto_policy::explain::explain_json(command).to_string(),
                )]),
                None => error("`command` (a string) is required"),
            };
        }
        if name == EXEC_TOOL {
            return match (&self.options.exec, args.get("task").and_then(Value::as_str)) {
                (Some(exec), Some(task)) => {
                    run_exec(exec, &self.options.workspace, task, &cancel).await
                }
                (None, _) => error("atto_exec is not enabled by the serving user"),
                (_, None) => error("`task` (a string) is required"),
            };
        }
        let Some(tool) = self.tools.iter().find(|t| t.name() == name) else {
            return error(&format!("no tool named '{name}'"));
        };
        let mut ctx = ToolContext::new(self.options.workspace.clone());
        ctx.cancel = cancel;
        match tool.run(args, &ctx).await {
            Ok(output) => CallToolResult::success(vec![ContentBlock::text(output.content)]),
            Err(e) => error(&e.to_string()),
        }
    }
}

fn error(message: &str) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message.to_owned())])
}

async fn run_exec(
    exec: &ExecSettings,
    workspace: &std::path::Path,
    task: &str,
    cancel: &CancellationToken,
) -> CallToolResult {
    let mut cmd = tokio::process::Command::new(&exec.program);
    cmd.args(&exec.args)
        .arg(task)
        .current_dir(workspace)
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true);
    let run = cmd.output();
    let output = tokio::select! {
        out = run => out,
        () = cancel.cancelled() => return error("cancelled: the task was stopped"),
        () = tokio::time::sleep(exec.timeout) => {
            return error(&format!("the task did not finish within {}s and was stopped", exec.timeout.as_secs()));
        }
    };
    match output {
        Err(e) => error(&format!("could not start atto: {e}")),
        Ok(out) => {
            let text = answer(&String::from_utf8_lossy(&out.stdout));
            if out.status.success() {
                CallToolResult::success(vec![ContentBlock::text(text)])
            } else {
                let err = String::from_utf8_lossy(&out.stderr);
                error(&format!(
                    "atto exec ended with {}: {}{}",
                    out.status,
                    text.trim(),
                    err.lines()
                        .last()
                        .map(|l| format!(" ({l})"))
                        .unwrap_or_default()
                ))
            }
        }
    }
}

impl ServerHandler for Served {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("atto", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "atto's read-only tools over the served workspace; atto_exec only when the \
                 serving user enabled it.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.listed()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.map_or(json!({}), Value::Object);
        let result = self.call(&request.name, args, context.ct.clone()).await;
        Ok(CallToolResponse::Complete(result))
    }
}

/// What a task's run says to the caller, from its stream-json events: the final answer,
/// and when changes were queued instead of made (plan mode), that they wait and how the
/// serving user approves them. Output that is not the event stream is passed on as it is.
fn answer(stdout: &str) -> String {
    let mut result: Option<(String, String)> = None;
    let mut queued = 0usize;
    for line in stdout.lines() {
        let Ok(event) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        match event.get("type").and_then(Value::as_str) {
            Some("change_queued") => queued += 1,
            Some("result") => {
                let field = |name: &str| {
                    event
                        .get(name)
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned()
                };
                result = Some((field("text"), field("session_id")));
            }
            _ => {}
        }
    }
    let Some((mut text, session)) = result else {
        return stdout.to_owned();
    };
    if queued > 0 {
        let (n, verb) = if queued == 1 {
            ("1 proposed change was", "It waits")
        } else {
            (&*format!("{queued} proposed changes were"), "They wait")
        };
        text.push_str(&format!(
            "\n\n{n} queued, not applied (plan mode). {verb} for the serving user: atto \
             plan show --session {session} to review, atto plan approve --session {session} \
             to apply."
        ));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An `atto exec` stand-in that prints what a plan-mode run streams.
    fn fake_exec(lines: &str) -> ExecSettings {
        ExecSettings {
            program: PathBuf::from("sh"),
            args: vec!["-c".into(), format!("printf '%s\\n' {lines}"), "sh".into()],
            timeout: Duration::from_secs(10),
        }
    }

    fn text_of(result: &CallToolResult) -> String {
        result
            .content
            .iter()
            .filter_map(|c| c.as_text().map(|t| t.text.clone()))
            .collect()
    }

    #[tokio::test]
    async fn a_plan_mode_task_says_its_changes_are_queued_and_how_to_approve_them() {
        let lines = [
            r#"'{"type":"session_started","session_id":"S1"}'"#,
            r#"'{"type":"change_queued","change":{"id":1}}'"#,
            r#"'{"type":"change_queued","change":{"id":2}}'"#,
            r#"'{"type":"result","session_id":"S1","status":"completed","text":"I proposed two edits."}'"#,
        ]
        .join(" ");
        let dir = std::env::temp_dir();
        let result = run_exec(
            &fake_exec(&lines),
            &dir,
            "edit it",
            &CancellationToken::new(),
        )
        .await;
        let text = text_of(&result);
        assert_ne!(result.is_error, Some(true), "{text}");
        assert!(text.starts_with("I proposed two edits."), "{text}");
        assert!(text.contains("2 proposed changes were queued"), "{text}");
        assert!(text.contains("atto plan approve --session S1"), "{text}");
    }

    #[tokio::test]
    async fn a_task_that_queued_nothing_is_its_answer_alone() {
        let lines = r#"'{"type":"result","session_id":"S2","status":"completed","text":"done"}'"#;
        let dir = std::env::temp_dir();
        let result = run_exec(&fake_exec(lines), &dir, "x", &CancellationToken::new()).await;
        assert_eq!(text_of(&result), "done");
    }
}
