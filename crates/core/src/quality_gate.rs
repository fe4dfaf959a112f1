//! The quality pipeline (`atto-quality`) inside a session: its commands run through the
//! session's gate and sandbox, and what a worker did is read from the history it left.
//!
//! Owns: the runner the pipeline's commands go through (the project's tests, type checks
//! and lint pass the policy gate like any `bash` call — asked, audited, refused as the
//! permission mode says — and atto's own file checks skip the asking but not the
//! sandbox: where the session has no sandbox they pass the gate too), and turning a turn's messages into the pipeline's `WorkerResult`. Does not
//! own: the checks (atto-quality) or when to retry (the planner, subagents).

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use atto_protocol::{AssistantPart, Event, Message, ToolCall, ToolCallStatus};
use atto_quality::action::ACTION_OUTPUT;
use atto_quality::{
    BoxFuture, CommandOutput, CommandRequest, CommandRunner, Purpose, WorkerResult,
};
use atto_tools::{Tool, ToolContext, ToolError};

use crate::gatekeeper::Gatekeeper;

/// Runs the pipeline's commands as `bash` calls of the session.
pub(crate) struct GateRunner<'a> {
    gate: tokio::sync::Mutex<&'a mut Gatekeeper>,
    bash: Arc<dyn Tool>,
    ctx: ToolContext,
    emit: &'a (dyn Fn(Event) + Send + Sync),
    next: AtomicU32,
}

impl<'a> GateRunner<'a> {
    /// A runner over the session's gate; `None` when the session has no `bash` tool.
    pub(crate) fn new(
        gate: &'a mut Gatekeeper,
        bash: Option<Arc<dyn Tool>>,
        ctx: ToolContext,
        emit: &'a (dyn Fn(Event) + Send + Sync),
    ) -> Option<Self> {
        Some(GateRunner {
            gate: tokio::sync::Mutex::new(gate),
            bash: bash?,
            ctx,
            emit,
            next: AtomicU32::new(1),
        })
    }
}

impl CommandRunner for GateRunner<'_> {
    fn run<'b>(&'b self, request: CommandRequest<'b>) -> BoxFuture<'b, CommandOutput> {
        Box::pin(async move {
            let mut args = serde_json::json!({
                "command": request.command,
                "timeout": request.timeout.as_secs().clamp(1, 600),
            });
            // atto's own file checks skip the question only where the sandbox holds them;
            // without one they are judged like any command (asked, or refused).
            if request.purpose == Purpose::Verification || self.ctx.sandbox.is_none() {
                let call = ToolCall {
                    id: format!("quality-{}", self.next.fetch_add(1, Ordering::Relaxed)),
                    name: atto_tools::names::BASH.to_owned(),
                    arguments: args.to_string(),
                };
                let mut gate = self.gate.lock().await;
                let cleared = gate
                    .check(
                        &call,
                        self.bash.as_ref(),
                        &mut args,
                        self.emit,
                        &self.ctx.cancel,
                    )
                    .await;
                if let Err(refusal) = cleared {
                    return CommandOutput {
                        refused: Some(refusal.message),
                        ..CommandOutput::default()
                    };
                }
            }
            match self.bash.run(args, &self.ctx).await {
                Ok(out) => CommandOutput {
                    exit_code: out.exit_code,
                    output: out.content,
                    timed_out: false,
                    refused: None,
                },
                Err(ToolError::Timeout { output, .. }) => CommandOutput {
                    output,
                    timed_out: true,
                    ..CommandOutput::default()
                },
                Err(err) => CommandOutput {
                    refused: Some(err.to_string()),
                    ..CommandOutput::default()
                },
            }
        })
    }
}

/// Why a call that ended so never ran; `None` when it ran (well or not).
pub(crate) fn not_run(status: ToolCallStatus) -> Option<&'static str> {
    match status {
        ToolCallStatus::Ok | ToolCallStatus::Error => None,
        ToolCallStatus::Denied => Some("denied"),
        ToolCallStatus::Cancelled => Some("cancelled"),
        ToolCallStatus::InvalidArguments => Some("invalid arguments"),
        ToolCallStatus::Queued => Some("queued"),
    }
}

/// What a worker did, from the messages of its turn(s): every tool call with its
/// arguments, output, exit code and whether it ran tests. `unrun` says which calls never
/// ran (by call id): they are recorded as not run, never as a test run.
pub(crate) fn worker_result(
    messages: &[Message],
    unrun: &HashMap<String, ToolCallStatus>,
    text: &str,
    model: &str,
) -> WorkerResult {
    let mut actions = Vec::new();
    for message in messages {
        let Message::Assistant { parts } = message else {
            continue;
        };
        for part in parts {
            let AssistantPart::ToolCall(call) = part else {
                continue;
            };
            let output = messages
                .iter()
                .find_map(|m| match m {
                    Message::ToolResult(r) if r.call_id == call.id => Some(r.content.as_str()),
                    _ => None,
                })
                .unwrap_or("");
            let arguments: serde_json::Value =
                serde_json::from_str(&call.arguments).unwrap_or(serde_json::Value::Null);
            let not_run = unrun.get(&call.id).copied().and_then(not_run);
            // A history knows its calls by name only: the built-in tool of that name says
            // whether it runs commands.
            let kind = atto_tools::kind_of(&call.name);
            let mut action = atto_quality::action::started(&call.name, kind, arguments);
            action.exit_code = exit_code(output);
            action.is_test_run &= not_run.is_none();
            action.output = bounded(output);
            action.not_run = not_run.map(str::to_owned);
            actions.push(action);
        }
    }
    WorkerResult {
        text: text.to_owned(),
        closure_report: None,
        actions,
        model: Some(model.to_owned()),
    }
}

/// The exit code a `bash` result reports (`exit code: N`).
fn exit_code(output: &str) -> Option<i32> {
    let rest = &output[output.find("exit code: ")? + "exit code: ".len()..];
    let digits: String = rest
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '-')
        .collect();
    digits.parse().ok()
}

fn bounded(text: &str) -> String {
    if text.len() <= ACTION_OUTPUT {
        return text.to_owned();
    }
    let mut end = ACTION_OUTPUT;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… [{} bytes more]", &text[..end], text.len() - end)
}

#[cfg(test)]
mod tests {
    use super::*;
    use atto_protocol::ToolResult;

    /// A session gate in interactive mode on a system without the OS sandbox, whose
    /// questions go unanswered (they are refused after a short deadline).
    fn unsandboxed_gate(workspace: &std::path::Path) -> (Gatekeeper, ToolContext) {
        let (events, _) = tokio::sync::mpsc::unbounded_channel();
        let (_, approvals) = tokio::sync::mpsc::unbounded_channel();
        let permission = atto_policy::gate::PermissionSetting {
            mode: atto_protocol::PermissionMode::Interactive,
            deny_asks: false,
        };
        let gate = Gatekeeper::new(
            crate::gatekeeper::GateSetup {
                permission,
                grants: crate::gatekeeper::GrantTable::new(Vec::new(), None),
                commands_sandboxed: false,
                workspace: workspace.to_path_buf(),
                protected_dirs: Vec::new(),
                approval_deadline: Some(std::time::Duration::from_millis(200)),
                unsandboxed_commands: Vec::new(),
            },
            crate::audit::Audit::new(
                None,
                "s".into(),
                workspace.display().to_string(),
                permission.mode,
                events,
            ),
            approvals,
        );
        let ctx = ToolContext {
            workspace: workspace.to_path_buf(),
            cancel: atto_tools::CancellationToken::new(),
            sandbox: None,
            trust: false,
            judged_paths: None,
            focus: String::new(),
        };
        (gate, ctx)
    }

    #[tokio::test]
    async fn without_a_sandbox_atto_s_own_checks_are_asked_about_too() {
        let dir = tempfile::tempdir().unwrap();
        let workspace = dir.path().canonicalize().unwrap();
        let (mut gate, ctx) = unsandboxed_gate(&workspace);
        let asked = std::sync::Mutex::new(Vec::new());
        let emit = |event: Event| {
            if let Event::ApprovalRequired(request) = event {
                asked.lock().unwrap().push(request);
            }
        };
        let bash = atto_tools::ToolRegistry::builtin().get("bash");
        let runner = GateRunner::new(&mut gate, bash, ctx, &emit).unwrap();
        let command = format!("touch '{}'", workspace.join("ran").display());
        let out = runner
            .run(CommandRequest {
                command: &command,
                purpose: Purpose::Check,
                timeout: std::time::Duration::from_secs(10),
            })
            .await;
        assert!(!workspace.join("ran").exists(), "ran unsandboxed, unasked");
        assert!(out.refused.is_some(), "{out:?}");
        assert_eq!(asked.lock().unwrap().len(), 1, "the person was not asked");
    }

    #[test]
    fn a_turns_calls_become_tool_actions_with_their_outputs() {
        let messages = vec![
            Message::Assistant {
                parts: vec![AssistantPart::ToolCall(ToolCall {
                    id: "c1".into(),
                    name: "bash".into(),
                    arguments: r#"{"command":"python3 -m pytest -q"}"#.into(),
                })],
            },
            Message::ToolResult(ToolResult {
                call_id: "c1".into(),
                name: "bash".into(),
                content: "exit code: 1\n1 failed".into(),
                is_error: false,
            }),
        ];
        let result = worker_result(&messages, &HashMap::new(), "done", "m");
        assert_eq!(result.actions.len(), 1);
        let action = &result.actions[0];
        assert_eq!(action.exit_code, Some(1));
        assert!(action.is_test_run);
        assert!(action.output.contains("1 failed"));
    }

    #[test]
    fn a_call_that_never_ran_is_no_test_run_whatever_it_says() {
        let messages = vec![
            Message::Assistant {
                parts: vec![AssistantPart::ToolCall(ToolCall {
                    id: "c1".into(),
                    name: "bash".into(),
                    arguments: r#"{"command":"python3 -m pytest -q"}"#.into(),
                })],
            },
            Message::ToolResult(ToolResult {
                call_id: "c1".into(),
                name: "bash".into(),
                content: "denied: not run. 3 passed".into(),
                is_error: true,
            }),
        ];
        let unrun = HashMap::from([("c1".to_owned(), ToolCallStatus::Denied)]);
        let result = worker_result(&messages, &unrun, "done", "m");
        let action = &result.actions[0];
        assert_eq!(action.not_run.as_deref(), Some("denied"));
        assert!(!action.is_test_run);
        assert!(!atto_quality::preflight::shows_test_run(action));
    }
}
