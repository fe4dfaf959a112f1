//! Running a call that was cleared: its checkpoint, its sandbox (and the approved re-run
//! without it when the sandbox stopped a write), panics caught, output cut for the model.
//! Deciding whether a call may run is not here.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Instant;

use atto_protocol::{Event, ToolCall, ToolCallStatus, ToolResult};
use atto_tools::{CancellationToken, Sandbox, SandboxStatus, Tool, ToolContext, ToolError};
use futures_util::FutureExt as _;

use super::{CallOutcome, Orchestrator, ReadyCall, started};
use crate::correction::{self, CallEnding};
use crate::gatekeeper::Clearance;
use crate::plan_queue as plan;
use crate::truncate;

impl Orchestrator<'_> {
    /// The sandbox for a call: where nothing is writable when no one was asked, the
    /// workspace-writable one otherwise.
    pub(super) fn sandbox_for(&self, clearance: Clearance) -> Option<Arc<Sandbox>> {
        let sandbox = self.sandbox.as_ref()?;
        Some(match clearance {
            Clearance::Approved => Arc::clone(sandbox),
            Clearance::Unasked => sandbox
                .no_write()
                .map_or_else(|| Arc::clone(sandbox), Arc::clone),
        })
    }

    /// Runs a mutating call. When the command ran sandboxed and atto's own parse shows
    /// it writes where the sandbox does not permit, a person may approve running exactly
    /// that call again without the sandbox.
    pub(super) async fn run_mutating(
        &mut self,
        p: ReadyCall,
        cancel: &CancellationToken,
    ) -> CallOutcome {
        let again = ReadyCall {
            call: p.call.clone(),
            tool: Arc::clone(&p.tool),
            args: p.args.clone(),
            mutates: p.mutates,
            judged_paths: p.judged_paths.clone(),
            clearance: p.clearance,
        };
        let target = ["path", "command"]
            .iter()
            .find_map(|k| p.args.get(*k).and_then(serde_json::Value::as_str))
            .map(|t| plan::one_paragraph(t, 80))
            .unwrap_or_default();
        if let Err(why) = self
            .checkpoints
            .before_call(self.turn, &p.call.name, &target)
            .await
            && let Err(refusal) = self
                .gate
                .confirm_without_checkpoint(
                    &p.call,
                    p.tool.as_ref(),
                    &p.args,
                    &why,
                    self.emit,
                    cancel,
                )
                .await
        {
            return self.refused(&p.call, refusal.status, refusal.message);
        }
        let sandbox = self.sandbox_for(p.clearance);
        let mut first = self.run_one(p, sandbox.clone(), cancel).await;
        let blocked = match (&sandbox, first.sandboxed_command()) {
            (Some(sandbox), Some(command)) if !cancel.is_cancelled() => {
                crate::sandbox_evidence::blocked_writes(command, sandbox, self.workspace)
            }
            _ => Vec::new(),
        };
        if blocked.is_empty() {
            return first;
        }
        // The sandboxed attempt is shown; only the final result enters the history.
        (self.emit)(first.finished.clone());
        match self
            .gate
            .confirm_unsandboxed(&again.call, &again.args, &blocked, self.emit, cancel)
            .await
        {
            Ok(()) => {
                let mut second = self.run_one(again, None, cancel).await;
                second.result.content = format!(
                    "(the sandboxed run could not write {}; this is an approved re-run WITHOUT \
                     the sandbox)\n{}",
                    blocked.join(", "),
                    second.result.content
                );
                second
            }
            Err(refusal) => {
                first.result.content.push_str(&format!(
                    "\n[the sandbox does not permit writing {}. {}]",
                    blocked.join(", "),
                    refusal.message
                ));
                first
            }
        }
    }

    pub(super) async fn run_one(
        &self,
        p: ReadyCall,
        sandbox: Option<Arc<Sandbox>>,
        cancel: &CancellationToken,
    ) -> CallOutcome {
        let ReadyCall {
            call,
            tool,
            args,
            mutates,
            judged_paths,
            clearance: _,
        } = p;
        (self.emit)(started(&call, Some(tool.as_ref()), args.clone()));
        let started = Instant::now();
        let command = args
            .get("command")
            .and_then(serde_json::Value::as_str)
            .map(str::to_owned);
        let ran = if cancel.is_cancelled() {
            let msg = "cancelled by the user before it ran; nothing was done.".to_owned();
            Ran::not_run(ToolCallStatus::Cancelled, msg)
        } else {
            let ctx = ToolContext {
                workspace: self.workspace.clone(),
                cancel: cancel.clone(),
                sandbox,
                trust: self.trust,
                judged_paths: Some(judged_paths),
                focus: self.focus.clone(),
            };
            run_tool(&call, tool.as_ref(), args, &ctx).await
        };
        let Ran {
            status,
            content,
            changed_paths,
            sandboxed,
            exit_code,
            fallback,
        } = ran;
        let content =
            truncate::for_model(&content, self.max_output_bytes, self.workspace, &call.id);
        let finished = Event::ToolCallFinished {
            call_id: call.id.clone(),
            name: call.name.clone(),
            status,
            duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            summary: truncate::summary(&content, 200),
            sandboxed,
            exit_code,
        };
        CallOutcome {
            result: ToolResult {
                call_id: call.id,
                name: call.name,
                content,
                is_error: status != ToolCallStatus::Ok,
            },
            changed_paths,
            // Only a sandboxed command that failed can have been stopped by the sandbox.
            sandboxed_command: command.filter(|_| sandboxed == Some(true) && exit_code != Some(0)),
            finished,
            facts: CallEnding {
                args: correction::arguments(&call.arguments),
                status,
                mutates,
                fallback,
                exit_code,
                ran: true,
            },
            workaround: None,
        }
    }
}

/// What running a call produced, before its output is cut for the model.
struct Ran {
    status: ToolCallStatus,
    content: String,
    changed_paths: Vec<String>,
    /// Whether the command ran under the OS sandbox; `None` for tools that run none.
    sandboxed: Option<bool>,
    exit_code: Option<i32>,
    /// The better route after the error, when it has one.
    fallback: Option<atto_tools::Fallback>,
}

impl Ran {
    /// A call that ended without output of its own: `content` says why.
    fn not_run(status: ToolCallStatus, content: String) -> Self {
        Ran {
            status,
            content,
            changed_paths: Vec::new(),
            sandboxed: None,
            exit_code: None,
            fallback: None,
        }
    }
}

/// Runs the tool; a panic in it becomes an error result, never the session's end.
async fn run_tool(
    call: &ToolCall,
    tool: &dyn Tool,
    args: serde_json::Value,
    ctx: &ToolContext,
) -> Ran {
    let run = AssertUnwindSafe(tool.run(args, ctx)).catch_unwind().await;
    match run {
        Ok(Ok(out)) => Ran {
            status: ToolCallStatus::Ok,
            sandboxed: out
                .sandbox
                .as_ref()
                .map(|s| matches!(s, SandboxStatus::Applied { .. })),
            exit_code: out.exit_code,
            content: out.content,
            changed_paths: out.changed_paths,
            fallback: None,
        },
        Ok(Err(ToolError::Cancelled)) => {
            Ran::not_run(ToolCallStatus::Cancelled, ToolError::Cancelled.to_string())
        }
        Ok(Err(err)) => {
            let fallback = err.self_correct(&call.name);
            let status = match err {
                ToolError::InvalidArguments(_) => ToolCallStatus::InvalidArguments,
                _ => ToolCallStatus::Error,
            };
            Ran {
                fallback,
                ..Ran::not_run(status, err.to_string())
            }
        }
        Err(_) => Ran::not_run(
            ToolCallStatus::Error,
            format!(
                "the {} tool crashed (an internal error in atto); the call may be \
                 incomplete. Check the affected files before relying on them.",
                call.name
            ),
        ),
    }
}
