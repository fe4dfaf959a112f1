//! The tool orchestrator: the one function every tool call passes through.
//!
//! Parses arguments (invalid or cut-off JSON is returned to the model as an error and
//! never executed), passes the call through the gate (allow, ask the user, or deny), runs the call with the turn's
//! cancellation token, catches panics, and bounds the result. Read-only calls of one
//! reply run in parallel; a mutating call runs alone, in the order the model gave.

use std::path::PathBuf;
use std::sync::Arc;

use atto_policy::gate::is_write_tool_name;
use atto_protocol::{AgentMode, Event, Message, StopReason, ToolCall, ToolCallStatus, ToolResult};
use atto_tools::{CancellationToken, Sandbox, Tool, ToolRegistry};

use crate::checkpoints::SessionCheckpoints;
use crate::correction::{self, CallEnding, Corrections};
use crate::gatekeeper::{Clearance, Cleared, Gatekeeper};
use crate::plan_queue::{self as plan, PlanQueue};
use crate::recorder::Recorder;
use crate::truncate;

mod plan_mode;
mod run;

/// Everything the orchestrator needs for one reply's tool calls.
pub(crate) struct Orchestrator<'a> {
    pub gate: &'a mut Gatekeeper,
    pub recorder: &'a mut Recorder,
    pub tools: &'a ToolRegistry,
    pub workspace: &'a PathBuf,
    pub max_output_bytes: usize,
    pub emit: &'a (dyn Fn(Event) + Send + Sync),
    /// The OS sandbox for commands; `None` runs them unsandboxed (yolo).
    pub sandbox: Option<Arc<Sandbox>>,
    /// Trust mode: file tools may reach outside the workspace.
    pub trust: bool,
    /// The agent mode of this turn: which calls exist, which are queued.
    pub mode: AgentMode,
    /// Plan mode's queue.
    pub plan: &'a mut PlanQueue,
    /// The turn's prompt, the task a new plan is for.
    pub task: &'a str,
    /// What the model wrote alongside these calls: a queued change's stated reason.
    pub reason: &'a str,
    /// File checkpoints, taken before each mutating call.
    pub checkpoints: &'a mut SessionCheckpoints,
    /// The turn these calls belong to.
    pub turn: u32,
    /// The turn's self-correction and self-improvement state: attempts, calls that
    /// already failed, failure diagnoses and counts.
    pub correction: &'a mut Corrections,
    /// The files these calls may change, when they are limited; `None`: the workspace.
    pub scope: Option<Scope<'a>>,
    /// What the session is working on (the files it changed, the files these calls may
    /// change), handed to tools that rank by it.
    pub focus: String,
}

/// Calls limited to some files (normalized, workspace-relative), and why.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Scope<'a> {
    /// A plan step running beside others may change only the files it declared.
    Step(&'a [String]),
    /// A subagent may change only the files it was given.
    Subagent(&'a [String]),
}

/// A call that passed argument checks and is ready to run.
struct ReadyCall {
    call: ToolCall,
    tool: Arc<dyn Tool>,
    args: serde_json::Value,
    mutates: bool,
    /// Where the gate judged the call's paths to lead; the tool acts there only.
    judged_paths: Vec<String>,
    /// On whose word it runs, with plan and review modes counted as unasked: which
    /// sandbox a command gets.
    clearance: Clearance,
}

/// The outcome of one call, for the history and the turn summary.
pub(crate) struct CallOutcome {
    pub result: ToolResult,
    pub changed_paths: Vec<String>,
    /// The command of a `bash` call that ran under the sandbox and failed.
    sandboxed_command: Option<String>,
    /// The `tool_call_finished` event, sent once the result is committed.
    finished: Event,
    /// What self-correction needs to know about the call.
    facts: CallEnding,
    /// A workaround this call completed (a failure got past), to propose as a learning.
    pub workaround: Option<correction::Workaround>,
}

impl Orchestrator<'_> {
    /// Runs the calls of one reply and returns one outcome per call, in call order.
    pub(crate) async fn run_calls(
        &mut self,
        calls: &[ToolCall],
        stop: &StopReason,
        cancel: &CancellationToken,
    ) -> Vec<CallOutcome> {
        let mut outcomes = Vec::with_capacity(calls.len());
        let mut batch: Vec<ReadyCall> = Vec::new();
        for call in calls {
            match self.prepare(call, stop, cancel).await {
                Err(outcome) => {
                    self.flush(&mut batch, cancel, &mut outcomes).await;
                    self.complete(outcome, &mut outcomes).await;
                }
                Ok(prepared) if prepared.mutates => {
                    self.flush(&mut batch, cancel, &mut outcomes).await;
                    let outcome = self.run_mutating(prepared, cancel).await;
                    self.complete(outcome, &mut outcomes).await;
                }
                Ok(prepared) => batch.push(prepared),
            }
        }
        self.flush(&mut batch, cancel, &mut outcomes).await;
        outcomes
    }

    /// Commits a call's result to the session's history, then reports it finished: what
    /// was shown as done survives a crash.
    async fn complete(&mut self, mut outcome: CallOutcome, outcomes: &mut Vec<CallOutcome>) {
        let result = &mut outcome.result;
        let verdict = self
            .correction
            .finished(&result.name, &result.content, &outcome.facts);
        // The model gets the self-correction prompt; the user keeps seeing what failed
        // (the attempt itself is its own event).
        if let Some(content) = verdict.content {
            result.content = content;
        }
        outcome.workaround = verdict.workaround;
        self.recorder
            .persist(&Message::ToolResult(outcome.result.clone()))
            .await;
        (self.emit)(outcome.finished.clone());
        verdict.events.into_iter().for_each(self.emit);
        outcomes.push(outcome);
    }

    /// Runs the pending read-only calls together.
    async fn flush(
        &mut self,
        batch: &mut Vec<ReadyCall>,
        cancel: &CancellationToken,
        outcomes: &mut Vec<CallOutcome>,
    ) {
        if batch.is_empty() {
            return;
        }
        let done = {
            let this = &*self;
            let runs = batch.drain(..).map(|p| {
                let sandbox = this.sandbox_for(p.clearance);
                this.run_one(p, sandbox, cancel)
            });
            futures_util::future::join_all(runs).await
        };
        for outcome in done {
            self.complete(outcome, outcomes).await;
        }
    }

    /// Checks that the call names a known tool and carries complete, valid JSON, applies
    /// the agent mode (which may refuse or queue the call), then passes it through the gate
    /// (which may ask the user). `Err` is the outcome of a call that will not run.
    async fn prepare(
        &mut self,
        call: &ToolCall,
        stop: &StopReason,
        cancel: &CancellationToken,
    ) -> Result<ReadyCall, CallOutcome> {
        let tool = self.tools.get(&call.name);
        // An external tool whose name reads as a write is queued in plan mode even when it
        // is not connected: every attempt to write lands in the plan.
        let queue_unknown = self.mode == AgentMode::Plan && is_write_tool_name(&call.name);
        if tool.is_none() && !queue_unknown {
            return Err(self.unknown_tool(call));
        }
        let mut args = match parse_args(call, stop) {
            Ok(args) => args,
            Err(message) => {
                return Err(self.refused(call, ToolCallStatus::InvalidArguments, message));
            }
        };
        if let Some(message) = self.correction.repeated(&call.name, &args) {
            return Err(self.refused(call, ToolCallStatus::Error, message));
        }
        if let Some(outcome) = self.apply_mode(call, tool.as_ref(), &args, cancel).await {
            return Err(outcome);
        }
        let Some(tool) = tool else {
            let message = format!("unknown tool '{}'; it was not run.", call.name);
            return Err(self.refused(call, ToolCallStatus::Error, message));
        };
        if let Some(message) = self.out_of_scope(call, &args) {
            let target = args
                .get("path")
                .and_then(serde_json::Value::as_str)
                .unwrap_or("");
            self.gate
                .record_mode(call, target, "deny", "plan step files", "refused")
                .await;
            return Err(self.refused(call, ToolCallStatus::Denied, message));
        }
        let clearance = self.clear(call, &tool, &mut args, cancel).await?;
        // Answered only once the read passed the boundary, the gate and the audit.
        if let Some(outcome) = self.pending_view(call, &args) {
            return Err(outcome);
        }
        let mutates = tool.mutates(&args);
        if !mutates {
            let target = args
                .get("path")
                .or_else(|| args.get("pattern"))
                .or_else(|| args.get("command"))
                .and_then(serde_json::Value::as_str)
                .unwrap_or("");
            self.plan.explored(format!("{} {target}", call.name));
        }
        Ok(ReadyCall {
            call: call.clone(),
            tool,
            args,
            mutates,
            judged_paths: self.gate.judged_paths(),
            clearance,
        })
    }

    /// The outcome of a call to a tool this session does not have, naming the ones it has.
    fn unknown_tool(&self, call: &ToolCall) -> CallOutcome {
        // Only what this session is offered: a read-only child is not told of writers.
        let known: Vec<String> = crate::session::mode_specs(self.tools, self.mode)
            .into_iter()
            .map(|spec| spec.name)
            .collect();
        let why = if call.name == atto_policy::gate::SPAWN_TOOL {
            " This session may not start subagents: it is at the deepest level subagents \
             may nest ([subagents] max_depth), or its agent definition leaves spawn_agent \
             out; do the work here."
        } else {
            ""
        };
        let message = format!(
            "unknown tool '{}'; it was not run.{why} Available tools: {}.",
            call.name,
            known.join(", ")
        );
        self.refused(call, ToolCallStatus::Error, message)
    }

    /// Passes the call through the gate (which may ask the user), and says where it may
    /// run: `Err` is the outcome of a call the gate refused.
    async fn clear(
        &mut self,
        call: &ToolCall,
        tool: &Arc<dyn Tool>,
        args: &mut serde_json::Value,
        cancel: &CancellationToken,
    ) -> Result<Clearance, CallOutcome> {
        let cleared = match self
            .gate
            .check(call, tool.as_ref(), args, self.emit, cancel)
            .await
        {
            Ok(Cleared::AsSent(clearance)) => clearance,
            // The user replaced the command: the new text passes the agent mode and the
            // whole gate again, as if the model had sent it.
            Ok(Cleared::Edited) => {
                if let Some(outcome) = self.apply_mode(call, Some(tool), args, cancel).await {
                    return Err(outcome);
                }
                if let Err(refusal) = self.gate.check_edited(call, tool.as_ref(), args).await {
                    return Err(self.refused(call, refusal.status, refusal.message));
                }
                // A person wrote this command.
                Clearance::Approved
            }
            Err(refusal) => return Err(self.refused(call, refusal.status, refusal.message)),
        };
        // Plan and review modes change nothing: their commands run where nothing is
        // writable, whoever let them run.
        Ok(match self.mode {
            AgentMode::Plan | AgentMode::Review => Clearance::Unasked,
            // Debug mode's test commands build and write caches, as in build mode.
            AgentMode::Build | AgentMode::Debug => cleared,
        })
    }

    /// For a plan step running beside others: why a file tool's write is refused when its
    /// path is not one of the step's declared files.
    fn out_of_scope(&self, call: &ToolCall, args: &serde_json::Value) -> Option<String> {
        let (scope, who, owner) = match self.scope? {
            Scope::Step(files) => (
                files,
                "this plan step runs beside other steps and",
                "the step",
            ),
            Scope::Subagent(files) => (files, "this subagent", "the session"),
        };
        if !plan::is_file_tool(&call.name) {
            return None;
        }
        let path = args.get("path").and_then(serde_json::Value::as_str)?;
        let relative = atto_tools::paths::resolve(self.workspace, path)
            .map(|abs| atto_tools::paths::relative(self.workspace, &abs))
            .unwrap_or_else(|_| path.to_owned());
        if atto_planner::plan::execute::in_scope(scope, &relative) {
            return None;
        }
        Some(format!(
            "{who} may change only its own files ({}); {relative} is not one of them, so it \
             was not changed. Leave it to {owner} that owns it, or report that the task cannot \
             be done without it.",
            scope.join(", ")
        ))
    }

    /// An outcome for a call that was never run, with its events.
    fn refused(&self, call: &ToolCall, status: ToolCallStatus, message: String) -> CallOutcome {
        self.answered(call, status, message, true)
    }

    /// An outcome answered without running the tool (refused, queued, or a pending view).
    fn answered(
        &self,
        call: &ToolCall,
        status: ToolCallStatus,
        message: String,
        is_error: bool,
    ) -> CallOutcome {
        let tool = self.tools.get(&call.name);
        (self.emit)(started(
            call,
            tool.as_deref(),
            arguments_for_display(&call.arguments),
        ));
        let finished = Event::ToolCallFinished {
            call_id: call.id.clone(),
            name: call.name.clone(),
            status,
            duration_ms: 0,
            summary: truncate::summary(&message, 200),
            sandboxed: None,
            exit_code: None,
        };
        CallOutcome {
            result: ToolResult {
                call_id: call.id.clone(),
                name: call.name.clone(),
                content: message,
                is_error,
            },
            changed_paths: Vec::new(),
            sandboxed_command: None,
            finished,
            facts: CallEnding::answered(&call.arguments, status),
            workaround: None,
        }
    }
}

impl CallOutcome {
    /// How the call ended (whether it ran at all).
    pub(crate) fn status(&self) -> ToolCallStatus {
        self.facts.status
    }

    /// The command, when this was a `bash` call that ran under the sandbox.
    fn sandboxed_command(&self) -> Option<&str> {
        self.sandboxed_command.as_deref()
    }
}

/// The call's arguments as a JSON object, or what to tell the model about why not.
fn parse_args(call: &ToolCall, stop: &StopReason) -> Result<serde_json::Value, String> {
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
            return Err(message);
        }
    };
    if !args.is_object() {
        let message = format!(
            "the arguments of this {} call must be a JSON object; the call was not run.",
            call.name
        );
        return Err(message);
    }
    Ok(args)
}

/// Arguments as JSON when they parse, else the raw text as a JSON string.
fn arguments_for_display(raw: &str) -> serde_json::Value {
    serde_json::from_str(raw).unwrap_or_else(|_| serde_json::Value::String(raw.to_owned()))
}

/// The event that announces a call, described by its tool: its kind and its one-line title
/// (`other` and the bare name for a tool this session does not have).
fn started(call: &ToolCall, tool: Option<&dyn Tool>, arguments: serde_json::Value) -> Event {
    Event::ToolCallStarted {
        call_id: call.id.clone(),
        name: call.name.clone(),
        kind: tool.map(Tool::kind).unwrap_or_default(),
        title: tool.map_or_else(|| call.name.clone(), |t| t.title(&arguments)),
        arguments,
    }
}
