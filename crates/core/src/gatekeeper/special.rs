//! The gate's two questions that are not about a call's risk: running a command again
//! WITHOUT the sandbox (only a person, never a grant or an auto mode), and running a
//! mutating call whose checkpoint could not be taken.

use atto_policy::gate::{Action, Decision};
use atto_protocol::{
    ApprovalDecision, DangerLevel, Event, PermissionMode, ToolCall, ToolCallStatus, ToolKind,
};
use atto_tools::{CancellationToken, Tool};
use serde_json::Value;

use super::{GateInput, Gatekeeper, Refusal, Sandboxing};

impl Gatekeeper {
    /// Asks whether a command the sandbox stopped may run again WITHOUT it. `blocked` is
    /// atto's own evidence: paths the parsed command writes that the sandbox does not
    /// permit. Only a person answering an approval marked `unsandboxed` re-runs it, once:
    /// no rule is saved, grants and the permission mode do not apply. A command the user
    /// named in `unsandboxed_commands` re-runs without the question.
    pub(crate) async fn confirm_unsandboxed(
        &mut self,
        call: &ToolCall,
        args: &Value,
        blocked: &[String],
        emit: &(dyn Fn(Event) + Send + Sync),
        cancel: &CancellationToken,
    ) -> Result<(), Refusal> {
        let command = args.get("command").and_then(Value::as_str).unwrap_or("");
        let mut decision = Decision {
            action: Action::Ask,
            decided_by: "the OS sandbox does not permit writing where this command writes"
                .to_owned(),
            grant_id: None,
            grant_index: None,
            risk: "WARN".to_owned(),
            protected: false,
            reasons: vec![
                format!(
                    "the command failed and writes to {}, which the sandbox does not permit",
                    blocked.join(", ")
                ),
                "approving runs this exact command again WITHOUT the sandbox: it can then \
                 write anywhere you can"
                    .to_owned(),
            ],
        };
        if self.unsandboxed_commands.iter().any(|c| c == command) {
            decision.action = Action::Allow;
            decision.decided_by = "listed in unsandboxed_commands".to_owned();
            self.audit
                .record(&call.name, command, &decision, "allowed unsandboxed")
                .await;
            return self.recorded();
        }
        let facts = GateInput {
            tool: call.name.clone(),
            // Only a command is run again without the sandbox.
            kind: ToolKind::Execute,
            level: DangerLevel::High,
            mutates: true,
            verdict: None,
            paths: Vec::new(),
            subject: format!("this runs WITHOUT the sandbox: {command}"),
            command: Some(command.to_owned()),
            arguments: args.clone(),
        };
        let answer = self
            .ask(call, &facts, &decision, Sandboxing::Dropped, emit, cancel)
            .await;
        let (outcome, result) = unsandboxed_outcome(answer);
        self.audit
            .record(&call.name, command, &decision, outcome)
            .await;
        result.and_then(|()| self.recorded())
    }

    /// A mutating call whose checkpoint could not be taken (`why`): in the auto modes it
    /// does not run; in interactive and strict modes the user decides, once, knowing
    /// `/undo` cannot reverse it. Never silently run without one.
    pub(crate) async fn confirm_without_checkpoint(
        &mut self,
        call: &ToolCall,
        tool: &dyn Tool,
        args: &Value,
        why: &str,
        emit: &(dyn Fn(Event) + Send + Sync),
        cancel: &CancellationToken,
    ) -> Result<(), Refusal> {
        let subject = tool.subject(args);
        let decision = Decision {
            action: Action::Ask,
            decided_by: "no checkpoint could be taken before this call".to_owned(),
            grant_id: None,
            grant_index: None,
            risk: "WARN".to_owned(),
            protected: false,
            reasons: vec![
                format!("the checkpoint before it failed: {why}"),
                "running it anyway means /undo and /restore cannot reverse it".to_owned(),
            ],
        };
        let refusal = Refusal {
            status: ToolCallStatus::Error,
            message: format!(
                "this {} call was not run: no checkpoint could be taken before it ({why}), so \
                 it could not be undone. Try again in a moment.",
                call.name
            ),
        };
        let line = subject.lines().next().unwrap_or("").to_owned();
        if matches!(
            self.permission.mode,
            PermissionMode::AutoSafe | PermissionMode::Yolo
        ) || self.permission.deny_asks
        {
            self.audit
                .record(&call.name, &line, &decision, "refused: no checkpoint")
                .await;
            return Err(refusal);
        }
        let facts = GateInput {
            tool: call.name.clone(),
            kind: tool.kind(),
            level: DangerLevel::High,
            mutates: true,
            verdict: None,
            paths: Vec::new(),
            subject: format!("run without a checkpoint: {subject}"),
            command: None,
            arguments: args.clone(),
        };
        let answer = self
            .ask(call, &facts, &decision, Sandboxing::Kept, emit, cancel)
            .await?;
        if answer == ApprovalDecision::Yes || matches!(answer, ApprovalDecision::Always { .. }) {
            self.audit
                .record(&call.name, &line, &decision, "approved without checkpoint")
                .await;
            return self.recorded();
        }
        self.audit
            .record(&call.name, &line, &decision, "declined: no checkpoint")
            .await;
        Err(refusal)
    }
}

/// What a person's answer to a run WITHOUT the sandbox means: the audit's word for it and
/// whether the command runs again.
fn unsandboxed_outcome(
    answer: Result<ApprovalDecision, Refusal>,
) -> (&'static str, Result<(), Refusal>) {
    match answer {
        Ok(ApprovalDecision::Yes | ApprovalDecision::Always { .. }) => {
            ("approved unsandboxed", Ok(()))
        }
        Ok(ApprovalDecision::No { reason }) => {
            let mut message = "the user did not approve running this command without the \
                               sandbox; it was not run again."
                .to_owned();
            if let Some(reason) = reason.filter(|r| !r.trim().is_empty()) {
                message.push_str(&format!(" The user said: {reason}"));
            }
            (
                "declined unsandboxed",
                Err(Refusal {
                    status: ToolCallStatus::Denied,
                    message,
                }),
            )
        }
        Ok(ApprovalDecision::Edit { .. }) => (
            "declined unsandboxed",
            Err(Refusal {
                status: ToolCallStatus::Denied,
                message: "a command cannot be edited when approving a run without the \
                          sandbox; it was not run again."
                    .to_owned(),
            }),
        ),
        Err(refusal) => ("declined unsandboxed", Err(refusal)),
    }
}
