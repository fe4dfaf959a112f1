//! The user's decision on a pending plan: `/approve` runs the selected changes in order
//! (each after a conflict check, through the gate as an approved call, under the sandbox),
//! `/reject` discards them. What became of each change is reported to the front end now
//! and to the model on its next turn.

use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::sync::Arc;

use atto_protocol::{ChangeOutcome, ChangeStatus, PlanSelection, PlanStatus, ToolCall};
use atto_tools::{CancellationToken, Sandbox, ToolContext, ToolRegistry};
use futures_util::FutureExt as _;

use crate::gatekeeper::Gatekeeper;
use crate::plan_queue::{self, PlanQueue};
use crate::truncate;

/// What applying changes needs from the session.
pub(crate) struct ApprovedChanges<'a> {
    pub plan: &'a mut PlanQueue,
    pub gate: &'a mut Gatekeeper,
    pub tools: &'a ToolRegistry,
    pub workspace: &'a PathBuf,
    pub sandbox: Option<Arc<Sandbox>>,
    pub trust: bool,
    pub max_output_bytes: usize,
}

impl ApprovedChanges<'_> {
    /// Runs the selected changes in order; `Err` (one line) when the selection is invalid,
    /// in which case nothing changed.
    pub(crate) async fn approve(
        &mut self,
        selection: &PlanSelection,
        cancel: &CancellationToken,
    ) -> Result<(PlanStatus, Vec<ChangeOutcome>), String> {
        let picks = self.plan.select(selection)?;
        let mut outcomes = Vec::with_capacity(picks.len());
        for index in picks {
            let Some(change) = self.plan.change(index).cloned() else {
                continue;
            };
            let (status, detail) = if cancel.is_cancelled() {
                (
                    ChangeStatus::Pending,
                    "not run: the approval was interrupted".to_owned(),
                )
            } else if let Err(conflict) = self.plan.check_base(&change) {
                (ChangeStatus::Conflict, conflict)
            } else {
                self.run(&change, cancel).await
            };
            outcomes.push(ChangeOutcome {
                order: change.order,
                tool: change.tool.clone(),
                target: plan_queue::target_of(&change),
                status,
                detail: detail.clone(),
            });
            // Stored as each change ends: a crash mid-approval must not leave an applied
            // change pending (a command would run twice).
            if status != ChangeStatus::Pending {
                self.plan.decided(vec![(index, status, detail)]).await;
            }
        }
        Ok((self.plan.status(), outcomes))
    }

    /// Discards the selected changes; the reason goes to the model.
    pub(crate) async fn reject(
        &mut self,
        selection: &PlanSelection,
        reason: Option<&str>,
    ) -> Result<(PlanStatus, Vec<ChangeOutcome>), String> {
        let picks = self.plan.select(selection)?;
        let detail = match reason.map(str::trim).filter(|r| !r.is_empty()) {
            Some(reason) => format!("rejected by the user: {reason}"),
            None => "rejected by the user".to_owned(),
        };
        let mut updates = Vec::with_capacity(picks.len());
        let mut outcomes = Vec::with_capacity(picks.len());
        for index in picks {
            let Some(change) = self.plan.change(index) else {
                continue;
            };
            outcomes.push(ChangeOutcome {
                order: change.order,
                tool: change.tool.clone(),
                target: plan_queue::target_of(change),
                status: ChangeStatus::Rejected,
                detail: detail.clone(),
            });
            updates.push((index, ChangeStatus::Rejected, detail.clone()));
        }
        self.plan.decided(updates).await;
        if let Some(reason) = reason.map(str::trim).filter(|r| !r.is_empty()) {
            self.plan.tell_model(format!(
                "The user's reason: {reason}. Re-plan with this in mind; the rejected changes \
                 were discarded."
            ));
        }
        Ok((self.plan.status(), outcomes))
    }

    /// Runs one approved change: through the gate as approved (BLOCK and deny rules still
    /// refuse), under the sandbox, with panics caught.
    async fn run(
        &mut self,
        change: &atto_protocol::ProposedChange,
        cancel: &CancellationToken,
    ) -> (ChangeStatus, String) {
        // Kept pending, not failed: the tool may come back (its MCP server started, the
        // config restored), and a failed change could never be applied again.
        let Some(tool) = self.tools.get(&change.tool) else {
            return (
                ChangeStatus::Pending,
                format!(
                    "not run, still pending: no tool named '{}' is available now (is its MCP \
                     server configured and trusted?); approve it again once it is",
                    change.tool
                ),
            );
        };
        let call = ToolCall {
            id: change.tool_call_id.clone(),
            name: change.tool.clone(),
            arguments: change.args.to_string(),
        };
        if let Err(refusal) = self
            .gate
            .check_approved(&call, tool.as_ref(), &change.args)
            .await
        {
            return (ChangeStatus::Failed, refusal.message);
        }
        let ctx = ToolContext {
            workspace: self.workspace.clone(),
            cancel: cancel.clone(),
            sandbox: self.sandbox.clone(),
            trust: self.trust,
            judged_paths: Some(self.gate.judged_paths()),
            focus: String::new(),
        };
        let run = AssertUnwindSafe(tool.run(change.args.clone(), &ctx))
            .catch_unwind()
            .await;
        let blocked = match (&self.sandbox, change.args.get("command")) {
            (Some(sandbox), Some(serde_json::Value::String(command))) => {
                crate::sandbox_evidence::blocked_writes(command, sandbox, self.workspace)
            }
            _ => Vec::new(),
        };
        match run {
            Ok(Ok(out)) if !blocked.is_empty() => (
                ChangeStatus::Failed,
                format!(
                    "the OS sandbox does not permit writing {} (run it yourself, or in yolo \
                     mode, if it is needed): {}",
                    blocked.join(", "),
                    truncate::head_and_tail(&out.content, self.max_output_bytes)
                ),
            ),
            Ok(Ok(out)) => (
                ChangeStatus::Applied,
                truncate::head_and_tail(&out.content, self.max_output_bytes),
            ),
            Ok(Err(err)) => (ChangeStatus::Failed, err.to_string()),
            Err(_) => (
                ChangeStatus::Failed,
                format!(
                    "the {} tool crashed (an internal error in atto); check the affected files",
                    change.tool
                ),
            ),
        }
    }
}
