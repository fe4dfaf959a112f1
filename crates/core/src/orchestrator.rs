//! The tool orchestrator: the one function every tool call passes through.
//!
//! Parses arguments (invalid or cut-off JSON is returned to the model as an error and
//! never executed), passes the call through the gate (allow, ask the user, or deny), runs the call with the turn's
//! cancellation token, catches panics, and bounds the result. Read-only calls of one
//! reply run in parallel; a mutating call runs alone, in the order the model gave.

use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use atto_policy::bash;
use atto_policy::gate::{ModeAction, ModeFacts, is_write_tool_name, mode_action};
use atto_protocol::{
    AgentMode, Event, Message, StopReason, ToolCall, ToolCallStatus, ToolKind, ToolResult,
};
use atto_tools::{
    CancellationToken, Sandbox, SandboxStatus, Tool, ToolContext, ToolError, ToolRegistry, names,
};
use futures_util::FutureExt as _;

use crate::checkpoints::SessionCheckpoints;
use crate::correction::{self, CallEnding, Corrections};
use crate::gatekeeper::{Clearance, Cleared, Gatekeeper};
use crate::plan_queue::{self as plan, PlanQueue, View};
use crate::recorder::Recorder;
use crate::truncate;

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

    /// Applies the agent mode to a call: `Some` is the outcome of a call the mode refuses
    /// or queues (plan mode); `None` lets it on to the gate.
    async fn apply_mode(
        &mut self,
        call: &ToolCall,
        tool: Option<&Arc<dyn Tool>>,
        args: &serde_json::Value,
        cancel: &CancellationToken,
    ) -> Option<CallOutcome> {
        let command = args.get("command").and_then(serde_json::Value::as_str);
        let kind = tool.map(|t| t.kind()).unwrap_or_default();
        let verdict = (kind == ToolKind::Execute).then(|| bash::classify(command.unwrap_or("")));
        let action = mode_action(
            self.mode,
            &ModeFacts {
                tool: &call.name,
                known: tool.is_some(),
                mutates: tool.is_some_and(|t| t.mutates(args)),
                kind,
                bash: verdict.as_ref(),
                command,
            },
        );
        match action {
            ModeAction::Run => None,
            ModeAction::Refuse(message) => {
                let target = plan::one_paragraph(&args.to_string(), 200);
                let by = format!("agent mode {}", self.mode.as_str());
                self.gate
                    .record_mode(call, &target, "deny", &by, "refused")
                    .await;
                Some(self.refused(call, ToolCallStatus::Denied, message))
            }
            ModeAction::Queue => Some(
                self.queue(call, tool.map(|t| t.as_ref()), args.clone(), cancel)
                    .await,
            ),
        }
    }

    /// Plan mode: records the call as a proposed change instead of running it. A call
    /// policy would refuse outright is refused now instead.
    async fn queue(
        &mut self,
        call: &ToolCall,
        tool: Option<&dyn Tool>,
        mut args: serde_json::Value,
        cancel: &CancellationToken,
    ) -> CallOutcome {
        if let Some(tool) = tool
            && let Some(refusal) = self.gate.refuses(call, tool, &args).await
        {
            return self.refused(call, refusal.status, refusal.message);
        }
        if let Err(outcome) = self.plan_read(call, &mut args, cancel).await {
            return outcome;
        }
        match self.plan.queue(self.task, call, &args, self.reason).await {
            Ok(change) => {
                let target = plan::target_of(&change);
                self.gate
                    .record_mode(call, &target, "queue", "agent mode plan", "queued")
                    .await;
                let message = format!(
                    "{} (change {}: {} {target}). It has NOT been applied: nothing changes on \
                     disk until the user approves it. Do not retry or verify this change; move \
                     on to the next step. When every change is queued, summarize the plan for \
                     the user and stop.",
                    plan::QUEUED_NOTE,
                    change.order,
                    change.tool
                );
                let outcome = self.answered(call, ToolCallStatus::Queued, message, false);
                (self.emit)(Event::ChangeQueued { change });
                outcome
            }
            Err(message) => self.refused(call, ToolCallStatus::Error, message),
        }
    }

    /// Queuing a file change reads the files it touches to plan against them: each read
    /// passes the workspace boundary, the gate (strict mode asks) and the audit exactly as
    /// a `read_file` call would, before anything is read. A single path is put in the
    /// workspace-relative form, so one file has one name in the plan.
    async fn plan_read(
        &mut self,
        call: &ToolCall,
        args: &mut serde_json::Value,
        cancel: &CancellationToken,
    ) -> Result<(), CallOutcome> {
        let single = args
            .get("path")
            .and_then(serde_json::Value::as_str)
            .filter(|_| plan::is_file_tool(&call.name))
            .map(str::to_owned);
        let paths = match (&single, atto_tools::builtin_tool(&call.name)) {
            (Some(path), _) => vec![path.clone()],
            // A change to several files names them itself (a patch, inside its text).
            (None, Some(tool)) if tool.kind() == ToolKind::Edit => {
                tool.paths(args).map_err(|err| {
                    self.refused(
                        call,
                        ToolCallStatus::Error,
                        format!("this {} call was not queued: {err}", call.name),
                    )
                })?
            }
            _ => return Ok(()),
        };
        let mut relatives = Vec::with_capacity(paths.len());
        for path in &paths {
            relatives.push(self.read_for_plan(call, path, cancel).await?);
        }
        if let (Some(relative), Some(map)) = (relatives.pop(), args.as_object_mut())
            && single.is_some()
        {
            map.insert("path".into(), serde_json::Value::String(relative));
        }
        Ok(())
    }

    /// One read `plan_read` makes: the boundary, then the gate as for `read_file`.
    /// Returns the path in workspace-relative form.
    async fn read_for_plan(
        &mut self,
        call: &ToolCall,
        path: &str,
        cancel: &CancellationToken,
    ) -> Result<String, CallOutcome> {
        let ctx = ToolContext {
            workspace: self.workspace.clone(),
            cancel: cancel.clone(),
            sandbox: None,
            trust: self.trust,
            judged_paths: None,
            focus: String::new(),
        };
        let resolved = atto_tools::paths::resolve_for(&ctx, path).map_err(|err| {
            self.refused(
                call,
                ToolCallStatus::Denied,
                format!("this {} call was not queued: {err}", call.name),
            )
        })?;
        let relative = atto_tools::paths::relative(self.workspace, &resolved);
        let Some(reader) = self.tools.get(names::READ_FILE) else {
            return Ok(relative);
        };
        let read = ToolCall {
            id: call.id.clone(),
            name: names::READ_FILE.to_owned(),
            arguments: serde_json::json!({ "path": relative }).to_string(),
        };
        let mut read_args = serde_json::json!({ "path": relative });
        match self
            .gate
            .check(&read, reader.as_ref(), &mut read_args, self.emit, cancel)
            .await
        {
            Ok(_) => Ok(relative),
            Err(refusal) => Err(self.refused(
                call,
                refusal.status,
                format!(
                    "this {} call was not queued: reading {path} to plan the change was \
                     refused ({})",
                    call.name, refusal.message
                ),
            )),
        }
    }

    /// `read_file` with `"pending": true` on a file with queued changes: the file as it
    /// will be once they apply, without running the tool.
    fn pending_view(&self, call: &ToolCall, args: &serde_json::Value) -> Option<CallOutcome> {
        if call.name != names::READ_FILE
            || !args
                .get("pending")
                .is_some_and(|p| p.as_bool() == Some(true) || p.as_str() == Some("true"))
        {
            return None;
        }
        let path = args.get("path").and_then(serde_json::Value::as_str)?;
        let queued = self.plan.open_changes_to(path);
        if queued == 0 {
            return None;
        }
        let number = |k: &str| args.get(k).and_then(serde_json::Value::as_u64);
        let content = match self.plan.view(path, u32::MAX) {
            View::Text(text) => format!(
                "(pending view of {path}: as it will be after {queued} queued change(s); not \
                 on disk yet)\n{}",
                plan::numbered(&text, number("offset"), number("limit"))
            ),
            View::Absent => {
                format!("(pending view: a queued change deletes {path}; it will not exist)")
            }
            View::Opaque(why) => format!("(pending view of {path}: {why})"),
        };
        Some(self.answered(call, ToolCallStatus::Ok, content, false))
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

    /// The sandbox for a call: where nothing is writable when no one was asked, the
    /// workspace-writable one otherwise.
    fn sandbox_for(&self, clearance: Clearance) -> Option<Arc<Sandbox>> {
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
    async fn run_mutating(&mut self, p: ReadyCall, cancel: &CancellationToken) -> CallOutcome {
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

    async fn run_one(
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
