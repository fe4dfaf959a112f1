//! The agent mode's part of a call: refused or queued by the mode (plan mode records a
//! file change as a proposed change, after reading what it touches through the gate), and
//! `read_file`'s pending view of a file with queued changes. Running a call is not here.

use atto_policy::bash;
use atto_policy::gate::{ModeAction, ModeFacts, mode_action};
use atto_protocol::{Event, ToolCall, ToolCallStatus, ToolKind};
use atto_tools::{CancellationToken, Tool, ToolContext, names};
use std::sync::Arc;

use super::{CallOutcome, Orchestrator};
use crate::plan_queue::{self as plan, View};

impl Orchestrator<'_> {
    /// Applies the agent mode to a call: `Some` is the outcome of a call the mode refuses
    /// or queues (plan mode); `None` lets it on to the gate.
    pub(super) async fn apply_mode(
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
    pub(super) fn pending_view(
        &self,
        call: &ToolCall,
        args: &serde_json::Value,
    ) -> Option<CallOutcome> {
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
}
