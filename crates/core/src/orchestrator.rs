//! The tool orchestrator: the one function every tool call passes through.
//!
//! Parses arguments (invalid or cut-off JSON is returned to the model as an error and
//! never executed), asks the gate for a decision, runs the call with the turn's
//! cancellation token, catches panics, and bounds the result. Read-only calls of one
//! reply run in parallel; a mutating call runs alone, in the order the model gave.

use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use atto_protocol::{Event, StopReason, ToolCall, ToolCallStatus, ToolResult};
use atto_tools::{CancellationToken, Tool, ToolContext, ToolError, ToolRegistry};
use futures_util::FutureExt as _;

use crate::truncate;

/// What the gate decided for one call. The policy crate will add asking and queueing;
/// until then every well-formed call is allowed.
enum Decision {
    Allow,
}

/// Everything the orchestrator needs for one reply's tool calls.
pub(crate) struct Orchestrator<'a> {
    pub tools: &'a ToolRegistry,
    pub workspace: &'a PathBuf,
    pub max_output_bytes: usize,
    pub emit: &'a (dyn Fn(Event) + Send + Sync),
}

/// A call that passed argument checks and is ready to run.
struct Prepared {
    call: ToolCall,
    tool: Arc<dyn Tool>,
    args: serde_json::Value,
    mutates: bool,
}

/// The outcome of one call, for the history and the turn summary.
pub(crate) struct CallOutcome {
    pub result: ToolResult,
    pub changed_paths: Vec<String>,
}

impl Orchestrator<'_> {
    /// Runs the calls of one reply and returns one outcome per call, in call order.
    pub(crate) async fn run_calls(
        &self,
        calls: &[ToolCall],
        stop: &StopReason,
        cancel: &CancellationToken,
    ) -> Vec<CallOutcome> {
        let mut outcomes = Vec::with_capacity(calls.len());
        let mut batch: Vec<Prepared> = Vec::new();
        for call in calls {
            match self.prepare(call, stop) {
                Err(outcome) => {
                    self.flush(&mut batch, cancel, &mut outcomes).await;
                    outcomes.push(outcome);
                }
                Ok(prepared) if prepared.mutates => {
                    self.flush(&mut batch, cancel, &mut outcomes).await;
                    outcomes.push(self.run_one(prepared, cancel).await);
                }
                Ok(prepared) => batch.push(prepared),
            }
        }
        self.flush(&mut batch, cancel, &mut outcomes).await;
        outcomes
    }

    /// Runs the pending read-only calls together.
    async fn flush(
        &self,
        batch: &mut Vec<Prepared>,
        cancel: &CancellationToken,
        outcomes: &mut Vec<CallOutcome>,
    ) {
        match batch.len() {
            0 => {}
            1 => {
                if let Some(p) = batch.pop() {
                    outcomes.push(self.run_one(p, cancel).await);
                }
            }
            _ => {
                let runs = batch.drain(..).map(|p| self.run_one(p, cancel));
                outcomes.extend(futures_util::future::join_all(runs).await);
            }
        }
    }

    /// Checks that the call names a known tool and carries complete, valid JSON.
    fn prepare(&self, call: &ToolCall, stop: &StopReason) -> Result<Prepared, CallOutcome> {
        let Some(tool) = self.tools.get(&call.name) else {
            let known = self.tools.names().join(", ");
            let message = format!(
                "unknown tool '{}'; it was not run. Available tools: {known}.",
                call.name
            );
            return Err(self.refused(call, ToolCallStatus::Error, message));
        };
        let raw = if call.arguments.trim().is_empty() {
            "{}"
        } else {
            call.arguments.as_str()
        };
        let args: serde_json::Value = match serde_json::from_str(raw) {
            Ok(args) => args,
            Err(err) => {
                let why = if *stop == StopReason::MaxTokens {
                    "the reply was cut off by the output token limit before the arguments \
                     were complete"
                        .to_owned()
                } else {
                    format!("they are not valid JSON ({err})")
                };
                let message = format!(
                    "the arguments of this {} call could not be used: {why}. The call was \
                     not run. Send the call again with complete, valid JSON arguments{}.",
                    call.name,
                    if *stop == StopReason::MaxTokens {
                        " (split large content into smaller edits)"
                    } else {
                        ""
                    }
                );
                return Err(self.refused(call, ToolCallStatus::InvalidArguments, message));
            }
        };
        if !args.is_object() {
            let message = format!(
                "the arguments of this {} call must be a JSON object; the call was not run.",
                call.name
            );
            return Err(self.refused(call, ToolCallStatus::InvalidArguments, message));
        }
        let mutates = tool.mutates(&args);
        match decide(call) {
            Decision::Allow => Ok(Prepared {
                call: call.clone(),
                tool,
                args,
                mutates,
            }),
        }
    }

    /// An outcome for a call that was never run, with its events.
    fn refused(&self, call: &ToolCall, status: ToolCallStatus, message: String) -> CallOutcome {
        (self.emit)(Event::ToolCallStarted {
            call_id: call.id.clone(),
            name: call.name.clone(),
            arguments: arguments_for_display(&call.arguments),
        });
        (self.emit)(Event::ToolCallFinished {
            call_id: call.id.clone(),
            name: call.name.clone(),
            status,
            duration_ms: 0,
            summary: truncate::summary(&message, 200),
        });
        CallOutcome {
            result: ToolResult {
                call_id: call.id.clone(),
                name: call.name.clone(),
                content: message,
                is_error: true,
            },
            changed_paths: Vec::new(),
        }
    }

    async fn run_one(&self, p: Prepared, cancel: &CancellationToken) -> CallOutcome {
        let Prepared {
            call, tool, args, ..
        } = p;
        (self.emit)(Event::ToolCallStarted {
            call_id: call.id.clone(),
            name: call.name.clone(),
            arguments: args.clone(),
        });
        let started = Instant::now();
        let (status, content, changed_paths) = if cancel.is_cancelled() {
            let msg = "cancelled by the user before it ran; nothing was done.".to_owned();
            (ToolCallStatus::Cancelled, msg, Vec::new())
        } else {
            let ctx = ToolContext {
                workspace: self.workspace.clone(),
                cancel: cancel.clone(),
            };
            let run = AssertUnwindSafe(tool.run(args, &ctx)).catch_unwind().await;
            match run {
                Ok(Ok(out)) => (ToolCallStatus::Ok, out.content, out.changed_paths),
                Ok(Err(ToolError::Cancelled)) => (
                    ToolCallStatus::Cancelled,
                    ToolError::Cancelled.to_string(),
                    Vec::new(),
                ),
                Ok(Err(err)) => (ToolCallStatus::Error, err.to_string(), Vec::new()),
                Err(_) => (
                    ToolCallStatus::Error,
                    format!(
                        "the {} tool crashed (an internal error in atto); the call may be \
                         incomplete. Check the affected files before relying on them.",
                        call.name
                    ),
                    Vec::new(),
                ),
            }
        };
        let content = truncate::head_and_tail(&content, self.max_output_bytes);
        (self.emit)(Event::ToolCallFinished {
            call_id: call.id.clone(),
            name: call.name.clone(),
            status,
            duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            summary: truncate::summary(&content, 200),
        });
        CallOutcome {
            result: ToolResult {
                call_id: call.id,
                name: call.name,
                content,
                is_error: status != ToolCallStatus::Ok,
            },
            changed_paths,
        }
    }
}

/// The gate. Every call that reaches a tool passes here first.
fn decide(_call: &ToolCall) -> Decision {
    Decision::Allow
}

/// Arguments as JSON when they parse, else the raw text as a JSON string.
fn arguments_for_display(raw: &str) -> serde_json::Value {
    serde_json::from_str(raw).unwrap_or_else(|_| serde_json::Value::String(raw.to_owned()))
}
