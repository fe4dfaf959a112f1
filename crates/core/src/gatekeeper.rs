//! Core's side of the policy gate: gathers the facts of a call, asks `atto-policy` for a
//! decision, asks the user when the decision is "ask" (an `approval_required` event
//! answered by `Op::Approval`), saves "always allow" answers as grants, and writes every
//! decision to the audit log before the call runs.

use std::path::PathBuf;

use atto_policy::bash;
use atto_policy::gate::{
    self, Action, CallFacts, Decision, GateContext, Grant, PermissionSetting, Rule,
};
use atto_protocol::{
    ApprovalDecision, ApprovalRequest, Event, GrantInfo, GrantScope, PermissionMode, ToolCall,
    ToolCallStatus, ToolKind,
};
use atto_tools::{CancellationToken, Tool};
use serde_json::Value;
use tokio::sync::mpsc;

use crate::audit::Audit;

mod grants;
mod input;
mod special;

use grants::GrantMeta;
pub(crate) use grants::GrantTable;
use input::{GateInput, denial_message};

/// What the gate starts a session with.
pub(crate) struct GateSetup {
    pub permission: PermissionSetting,
    /// The tree's grant table, shared with every session of the tree.
    pub grants: GrantTable,
    /// Whether `bash` runs under the OS sandbox; without it, WARN commands always ask.
    pub commands_sandboxed: bool,
    pub workspace: PathBuf,
    pub protected_dirs: Vec<String>,
    /// How long a question waits for its answer before it counts as "no"; `None` waits
    /// for as long as the session lives.
    pub approval_deadline: Option<std::time::Duration>,
    /// Exact commands the user allowed to re-run WITHOUT the sandbox without being asked
    /// (config `unsandboxed_commands`, `atto exec --allow-unsandboxed`).
    pub unsandboxed_commands: Vec<String>,
}

/// A call the gate let through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cleared {
    /// Run it as the model sent it, on the word of [`Clearance`].
    AsSent(Clearance),
    /// The user replaced the command at the approval: the arguments changed, so the
    /// caller must judge the new call again (agent mode, then [`Gatekeeper::check_edited`]).
    Edited,
}

/// On whose word a call runs, which decides the sandbox a command gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Clearance {
    /// No one was asked and nothing granted it: the command was judged SAFE. It runs
    /// where nothing is writable, so a misjudged command fails instead of writing.
    Unasked,
    /// A person approved it, a grant allows it, or the permission mode runs it as a
    /// WARN command: it keeps the workspace-writable sandbox.
    Approved,
}

/// Why a call will not run.
pub(crate) struct Refusal {
    pub status: ToolCallStatus,
    pub message: String,
}

/// The gate's state for one session.
pub(crate) struct Gatekeeper {
    pub permission: PermissionSetting,
    /// Config rules, stored grants and the grants given in this tree.
    grants: GrantTable,
    /// Canonical workspace root, to put paths in the form rules are written in.
    workspace: PathBuf,
    /// Absolute directories whose writes always ask (atto's config and data).
    protected_dirs: Vec<String>,
    /// Whether `bash` runs under the OS sandbox; without it, WARN commands always ask.
    pub commands_sandboxed: bool,
    pub audit: Audit,
    approvals: mpsc::UnboundedReceiver<(String, ApprovalDecision)>,
    next_request: u64,
    approval_deadline: Option<std::time::Duration>,
    unsandboxed_commands: Vec<String>,
    /// Where the last call judged leads, as the kernel resolved its paths for the
    /// decision; handed to the tool ([`Gatekeeper::judged_paths`]) so it acts there only.
    judged: Vec<String>,
}

impl Gatekeeper {
    pub(crate) fn new(
        setup: GateSetup,
        audit: Audit,
        approvals: mpsc::UnboundedReceiver<(String, ApprovalDecision)>,
    ) -> Self {
        let GateSetup {
            permission,
            grants,
            commands_sandboxed,
            workspace,
            protected_dirs,
            approval_deadline,
            unsandboxed_commands,
        } = setup;
        Self {
            permission,
            grants,
            workspace,
            protected_dirs,
            commands_sandboxed,
            audit,
            approvals,
            next_request: 0,
            approval_deadline,
            unsandboxed_commands,
            judged: Vec::new(),
        }
    }

    /// The paths the last check judged (see `ToolContext::judged_paths`), taken: the
    /// caller passes them to the tool it runs right after.
    pub(crate) fn judged_paths(&mut self) -> Vec<String> {
        std::mem::take(&mut self.judged)
    }

    /// Decides one call, asking the user when needed. `args` may be replaced when the
    /// user edits a command ([`Cleared::Edited`]). `Ok` means run it.
    pub(crate) async fn check(
        &mut self,
        call: &ToolCall,
        tool: &dyn Tool,
        args: &mut Value,
        emit: &(dyn Fn(Event) + Send + Sync),
        cancel: &CancellationToken,
    ) -> Result<Cleared, Refusal> {
        let facts = GateInput::of(call, tool, args, &self.workspace);
        self.judged = facts.paths.clone();
        let decision = {
            // Under one lock, so the use is counted on the grant that decided.
            let mut entries = self.grants.lock();
            let decision = self.judge(&facts, &entries.grants);
            if let Some(meta) = decision.grant_index.and_then(|i| entries.meta.get_mut(i)) {
                meta.uses += 1;
                meta.last_used_at = Some(atto_protocol::time::now_ms());
            }
            decision
        };
        let target = facts.subject_line();
        if let Some(id) = decision.grant_id {
            self.audit.grant_used(id).await;
        }
        match decision.action {
            Action::Allow => {
                self.audit
                    .record(&call.name, &target, &decision, "auto")
                    .await;
                self.recorded()?;
                let judged_safe = decision.grant_index.is_none()
                    && facts
                        .verdict
                        .as_ref()
                        .is_some_and(|v| v.risk == bash::BashRisk::Safe);
                Ok(Cleared::AsSent(if judged_safe {
                    Clearance::Unasked
                } else {
                    Clearance::Approved
                }))
            }
            Action::Deny => {
                self.audit
                    .record(&call.name, &target, &decision, "refused")
                    .await;
                Err(Refusal {
                    status: ToolCallStatus::Denied,
                    message: denial_message(&call.name, &decision),
                })
            }
            Action::Ask => {
                let answer = self
                    .ask(call, &facts, &decision, Sandboxing::Kept, emit, cancel)
                    .await?;
                let cleared = self.answered(call, args, &facts, decision, answer).await?;
                self.recorded()?;
                Ok(cleared)
            }
        }
    }

    /// Fails closed when the decision just made could not be written to the audit log:
    /// nothing runs without its record.
    fn recorded(&self) -> Result<(), Refusal> {
        match self.audit.failure() {
            None => Ok(()),
            Some(why) => Err(Refusal {
                status: ToolCallStatus::Error,
                message: format!(
                    "this call was not run: its approval could not be written to the audit log \
                     ({why}). atto stops rather than act without a record."
                ),
            }),
        }
    }

    /// Judges a command the user edited at an approval, after the agent mode accepted
    /// it: the whole gate again on the new text (BLOCK, deny and ask rules, protected
    /// paths). The user wrote and approved it, so what would merely ask runs; what policy
    /// refuses stays refused.
    pub(crate) async fn check_edited(
        &mut self,
        call: &ToolCall,
        tool: &dyn Tool,
        args: &Value,
    ) -> Result<(), Refusal> {
        let edited = GateInput::of(call, tool, args, &self.workspace);
        self.judged = edited.paths.clone();
        let decision = self.decide(&edited);
        let subject = edited.subject_line();
        if decision.action == Action::Deny
            && !decision.decided_by.starts_with("approval mode never")
        {
            self.audit
                .record(&call.name, &subject, &decision, "refused edited")
                .await;
            return Err(Refusal {
                status: ToolCallStatus::Denied,
                message: denial_message(&call.name, &decision),
            });
        }
        self.audit
            .record(&call.name, &subject, &decision, "approved edited")
            .await;
        self.recorded()
    }

    /// For a call plan mode is about to queue: the refusal if policy would deny it
    /// outright (a BLOCK verdict, a deny rule), so it is refused now rather than queued and
    /// refused on approval. Records the refusal.
    pub(crate) async fn refuses(
        &mut self,
        call: &ToolCall,
        tool: &dyn Tool,
        args: &Value,
    ) -> Option<Refusal> {
        let facts = GateInput::of(call, tool, args, &self.workspace);
        let decision = self.decide(&facts);
        if decision.action != Action::Deny || decision.decided_by.starts_with("approval mode never")
        {
            return None;
        }
        self.audit
            .record(&call.name, &facts.subject_line(), &decision, "refused")
            .await;
        Some(Refusal {
            status: ToolCallStatus::Denied,
            message: denial_message(&call.name, &decision),
        })
    }

    /// For a change the user approved from the plan: the approval stands for this exact
    /// call, so nothing is asked; a BLOCK verdict or a deny rule still refuses it.
    pub(crate) async fn check_approved(
        &mut self,
        call: &ToolCall,
        tool: &dyn Tool,
        args: &Value,
    ) -> Result<(), Refusal> {
        let facts = GateInput::of(call, tool, args, &self.workspace);
        self.judged = facts.paths.clone();
        let mut decision = self.decide(&facts);
        let refused = decision.action == Action::Deny
            && (decision.risk == "BLOCK" || decision.grant_index.is_some());
        if refused {
            self.audit
                .record(&call.name, &facts.subject_line(), &decision, "refused")
                .await;
            return Err(Refusal {
                status: ToolCallStatus::Denied,
                message: denial_message(&call.name, &decision),
            });
        }
        decision.decided_by = format!("approved in the plan review ({})", decision.decided_by);
        decision.action = Action::Allow;
        self.audit
            .record(
                &call.name,
                &facts.subject_line(),
                &decision,
                "approved (plan)",
            )
            .await;
        self.recorded()
    }

    /// Records what the agent mode did with a call (queued it, or refused it).
    pub(crate) async fn record_mode(
        &mut self,
        call: &ToolCall,
        target: &str,
        decision: &str,
        decided_by: &str,
        outcome: &str,
    ) {
        self.audit
            .record_as(&call.name, target, decision, decided_by, outcome)
            .await;
    }

    /// The table of the whole tree, so a revocation reaches every session of it.
    pub(crate) fn grant_table(&self) -> GrantTable {
        self.grants.clone()
    }

    fn decide(&self, facts: &GateInput) -> Decision {
        let entries = self.grants.lock();
        self.judge(facts, &entries.grants)
    }

    fn judge(&self, facts: &GateInput, grants: &[Grant]) -> Decision {
        let mut decision = gate::decide(
            &GateContext {
                permission: self.permission,
                grants,
                protected_dirs: &self.protected_dirs,
            },
            &CallFacts {
                tool: &facts.tool,
                level: facts.level,
                mutates: facts.mutates,
                bash: facts.verdict.as_ref(),
                paths: &facts.paths,
            },
        );
        // Without the OS sandbox nothing contains a WARN command, so the matrix's
        // auto-allow does not hold: it asks (unless the user granted it explicitly).
        if decision.action == Action::Allow
            && decision.grant_index.is_none()
            && !self.commands_sandboxed
            && self.permission.mode != PermissionMode::Yolo
            && facts
                .verdict
                .as_ref()
                .is_some_and(|v| v.risk == bash::BashRisk::Warn)
        {
            decision.action = if self.permission.deny_asks {
                Action::Deny
            } else {
                Action::Ask
            };
            decision.decided_by =
                "no OS sandbox on this system: WARN commands need approval".to_owned();
        }
        decision
    }

    async fn ask(
        &mut self,
        call: &ToolCall,
        facts: &GateInput,
        decision: &Decision,
        sandboxing: Sandboxing,
        emit: &(dyn Fn(Event) + Send + Sync),
        cancel: &CancellationToken,
    ) -> Result<ApprovalDecision, Refusal> {
        self.next_request += 1;
        let id = format!("approval-{}", self.next_request);
        let mut reasons = decision.reasons.clone();
        reasons.push(format!("decided by: {}", decision.decided_by));
        emit(Event::ApprovalRequired(ApprovalRequest {
            id: id.clone(),
            call_id: call.id.clone(),
            tool: call.name.clone(),
            kind: facts.kind,
            subject: facts.subject.clone(),
            risk: decision.risk.clone(),
            reasons,
            suggested_rule: facts.suggested_rule(),
            unsandboxed: sandboxing == Sandboxing::Dropped,
            protected: decision.protected,
            subagent: None,
            arguments: facts.arguments.clone(),
        }));
        // Far enough away to mean "never" when no deadline is set.
        let wait = self
            .approval_deadline
            .unwrap_or(std::time::Duration::from_secs(10 * 365 * 24 * 3600));
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            tokio::select! {
                () = tokio::time::sleep_until(deadline) => return Err(Refusal {
                    status: ToolCallStatus::Denied,
                    message: format!(
                        "no one answered the approval for this {} call within {} s, so it \
                         was refused and not run.",
                        call.name,
                        wait.as_secs()
                    ),
                }),
                answer = self.approvals.recv() => match answer {
                    Some((answer_id, answer)) if answer_id == id => return Ok(answer),
                    // An answer to an older question: that call is long gone.
                    Some(_) => {}
                    None => return Err(Refusal {
                        status: ToolCallStatus::Cancelled,
                        message: "no one is left to approve this call; it was not run.".into(),
                    }),
                },
                () = cancel.cancelled() => return Err(Refusal {
                    status: ToolCallStatus::Cancelled,
                    message: "cancelled while waiting for approval; it was not run.".into(),
                }),
            }
        }
    }

    async fn answered(
        &mut self,
        call: &ToolCall,
        args: &mut Value,
        facts: &GateInput,
        decision: Decision,
        answer: ApprovalDecision,
    ) -> Result<Cleared, Refusal> {
        let target = facts.subject_line();
        match answer {
            ApprovalDecision::Yes => {
                self.audit
                    .record(&call.name, &target, &decision, "approved")
                    .await;
                Ok(Cleared::AsSent(Clearance::Approved))
            }
            ApprovalDecision::No { reason } => {
                self.audit
                    .record(&call.name, &target, &decision, "declined")
                    .await;
                let mut message =
                    format!("the user declined this {} call; it was not run.", call.name);
                if let Some(reason) = reason.filter(|r| !r.trim().is_empty()) {
                    message.push_str(&format!(" The user said: {reason}"));
                }
                Err(Refusal {
                    status: ToolCallStatus::Denied,
                    message,
                })
            }
            ApprovalDecision::Always { scope, rule } => {
                let text = rule.unwrap_or_else(|| facts.suggested_rule());
                match Rule::parse(&text) {
                    Ok(rule) => self.save_grant(rule, scope).await,
                    Err(err) => {
                        self.audit
                            .warn(format!("{err}; this call was approved once, no rule saved"));
                    }
                }
                self.audit
                    .record(&call.name, &target, &decision, "approved always")
                    .await;
                Ok(Cleared::AsSent(Clearance::Approved))
            }
            ApprovalDecision::Edit { command } => {
                if facts.kind != ToolKind::Execute {
                    return Err(Refusal {
                        status: ToolCallStatus::Denied,
                        message: "only commands can be edited before running; the call was \
                                  not run."
                            .into(),
                    });
                }
                if let Value::Object(map) = args {
                    map.insert("command".into(), Value::String(command));
                }
                Ok(Cleared::Edited)
            }
        }
    }

    async fn save_grant(&mut self, rule: Rule, scope: GrantScope) {
        let id = match scope {
            GrantScope::Session => None,
            GrantScope::Project | GrantScope::User => {
                self.audit.store_grant(rule.text(), scope).await
            }
        };
        let origin = match scope {
            GrantScope::Session => "session grant",
            GrantScope::Project => "project grant",
            GrantScope::User => "user grant",
        };
        let mut entries = self.grants.lock();
        entries.grants.push(Grant {
            id,
            rule,
            action: Action::Allow,
            origin: origin.to_owned(),
        });
        entries.meta.push(GrantMeta {
            created_at: Some(atto_protocol::time::now_ms()),
            ..GrantMeta::default()
        });
    }

    /// The grants in force, numbered, as `/grants` shows them. Stored grants show what
    /// the database knows (uses from every session).
    pub(crate) async fn list(&mut self) -> Vec<GrantInfo> {
        let rows = self.audit.stored_grants().await;
        let entries = self.grants.lock();
        entries
            .grants
            .iter()
            .zip(&entries.meta)
            .enumerate()
            .map(|(i, (g, meta))| {
                let row = g.id.and_then(|id| rows.iter().find(|r| r.id == id));
                let scope = match (row, g.id) {
                    (Some(r), _) => r.scope.clone(),
                    (None, Some(_)) => "stored".to_owned(),
                    (None, None) if g.origin == "session grant" => "session".to_owned(),
                    (None, None) => g.origin.clone(),
                };
                GrantInfo {
                    number: u32::try_from(i + 1).unwrap_or(u32::MAX),
                    scope,
                    decision: g.action.as_str().to_owned(),
                    rule: g.rule.text().to_owned(),
                    created_at: row.map(|r| r.created_at).or(meta.created_at),
                    last_used_at: row.and_then(|r| r.last_used_at).or(meta.last_used_at),
                    uses: row.map_or(meta.uses, |r| u64::try_from(r.uses).unwrap_or(0)),
                    revocable: g.id.is_some() || g.origin == "session grant",
                }
            })
            .collect()
    }

    /// Removes grant `number` (as listed) for the whole tree. Config rules stay: they
    /// live in a file.
    pub(crate) async fn revoke(&mut self, number: u32) -> Result<String, String> {
        self.grants.revoke(number).await
    }
}

/// Whether an approval would keep the OS sandbox around the call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sandboxing {
    /// The call runs as the permission mode says (sandboxed where commands are).
    Kept,
    /// The call would run without the sandbox.
    Dropped,
}
