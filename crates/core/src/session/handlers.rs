//! The session's answers to ops between turns: reasoning effort, agent and permission
//! modes, plan review, goals, restoring checkpoints, and moving files along with thread
//! switches.

use atto_policy::gate::PermissionSetting;
use atto_protocol::{
    AgentMode, Event, FinalResult, PermissionMode, PlanSelection, ReasoningEffort,
};
use atto_tools::CancellationToken;

use super::Session;
use crate::plan_approval::ApprovedChanges;
use crate::threads::Switched;

impl Session {
    /// `/effort`: the reasoning effort of the next requests. A model that takes none keeps
    /// its requests unchanged, and the answer says so.
    pub(super) fn set_effort(&mut self, effort: Option<ReasoningEffort>) {
        let model = self.options.client.info().model.clone();
        let supported = atto_llm::takes_effort(&model);
        self.effort = effort.filter(|_| supported);
        self.emit(Event::EffortChanged {
            effort: self.effort,
            supported,
            model,
        });
    }

    /// `/mode`: switches the agent mode for the next turns; a permission given with it
    /// (codewhale's yolo) applies too, and leaving such a mode restores the permission the
    /// session started with.
    pub(super) async fn set_mode(&mut self, mode: AgentMode, permission: Option<PermissionMode>) {
        if mode != self.mode {
            self.tool_specs = super::mode_specs(&self.options.tools, mode);
        }
        self.mode = mode;
        let setting = match permission {
            Some(PermissionMode::Yolo) => {
                self.trust = true;
                PermissionSetting {
                    mode: PermissionMode::Yolo,
                    deny_asks: false,
                }
            }
            Some(mode) => PermissionSetting {
                mode,
                deny_asks: false,
            },
            None => self.base_permission,
        };
        if permission.is_none() && self.gate.permission.mode == PermissionMode::Yolo {
            self.trust = self.options.trust;
        }
        self.gate.permission = setting;
        self.gate.audit.mode = setting.mode;
        self.save_modes().await;
        self.emit(Event::ModeChanged {
            mode,
            permission: setting.mode,
        });
    }

    /// Whether this session's commands run sandboxed, from what was prepared (not from a
    /// probe of the kernel): yolo runs them without it, and so does a system where it
    /// could not be prepared.
    pub(super) fn sandbox_state(&self) -> atto_protocol::SandboxState {
        match (self.command_sandbox(), self.gate.permission.mode) {
            (Some(sandbox), _) => atto_protocol::SandboxState {
                applied: true,
                detail: sandbox.summary(),
                protections: sandbox.protections().to_vec(),
            },
            (None, PermissionMode::Yolo) => atto_protocol::SandboxState {
                applied: false,
                detail: "yolo: commands run without the sandbox".to_owned(),
                protections: Vec::new(),
            },
            (None, _) => atto_protocol::SandboxState {
                applied: false,
                detail: self
                    .options
                    .sandbox_off_reason
                    .clone()
                    .unwrap_or_else(|| "no OS sandbox on this system".to_owned()),
                protections: Vec::new(),
            },
        }
    }

    /// Records the agent and permission modes with the session, so a resume restores
    /// them (a plan-mode session must not come back in build mode).
    pub(super) async fn save_modes(&mut self) {
        let Some(store) = self.recorder.store.clone() else {
            return;
        };
        let permission = atto_policy::gate::permission_name(self.gate.permission.mode);
        if let Err(err) = store
            .set_session_modes(
                &self.options.session_id,
                Some(self.mode.as_str()),
                Some(permission),
            )
            .await
        {
            self.recorder.failed(&err.to_string());
        }
    }

    /// `/goal` and `/goals`.
    pub(super) async fn goal(&mut self, command: atto_protocol::GoalCommand) {
        use atto_protocol::GoalCommand as C;
        let mut work = self.work.lock().await;
        let done = match command {
            C::List => Ok(()),
            C::Set { objective, budget } => work.goals.set(&objective, budget).map(drop),
            C::Add { objective } => work.goals.add(&objective, None).map(drop),
            C::Done { number } => work
                .goals
                .done(usize::try_from(number).unwrap_or(usize::MAX))
                .map(drop),
            C::Budget { tokens } => work.goals.set_budget(tokens).map(drop),
            C::Pause => work.goals.pause().map(drop),
            C::Resume => work.goals.resume().map(drop),
            C::Complete => work.goals.complete().map(drop),
            C::Blocked => work.goals.block().map(drop),
            C::Clear => work.goals.clear().map(drop),
        };
        match done {
            Ok(()) => {
                work.save().await;
                let event = work.goals_event();
                drop(work);
                self.emit(event);
            }
            Err(err) => {
                drop(work);
                self.emit(Event::Error {
                    message: err.to_string(),
                });
            }
        }
    }

    /// Charges one model call's tokens to the active goals as soon as its reply is in,
    /// so a goal's budget holds between the calls of a turn; says when one hits it.
    pub(super) async fn charge_call(&mut self, usage: &atto_protocol::Usage) {
        self.charge_goals(atto_llm::total_tokens(usage), 0).await;
    }

    /// Charges a finished turn's wall time to the active goals (its tokens were charged
    /// call by call).
    pub(super) async fn charge_turn_time(&mut self, result: &FinalResult) {
        self.charge_goals(0, result.duration_ms).await;
    }

    async fn charge_goals(&mut self, tokens: u64, time_ms: u64) {
        let mut work = self.work.lock().await;
        if work.goals.active().is_empty() {
            return;
        }
        let limited: Vec<String> = work
            .goals
            .add_usage(tokens, time_ms)
            .iter()
            .map(|g| g.objective.clone())
            .collect();
        work.save().await;
        drop(work);
        for objective in limited {
            self.emit(Event::Notice {
                message: format!(
                    "goal \"{objective}\" reached its token budget and stopped \
                     (budget_limited); raise it with /goal budget N, then /goal resume"
                ),
            });
        }
    }

    /// The provider's usage limit (quota, billing) stops all goal work: the active goals
    /// become usage-limited.
    pub(super) async fn usage_limit_hit(&mut self) {
        let mut work = self.work.lock().await;
        let stopped: Vec<String> = work
            .goals
            .hit_usage_limit()
            .iter()
            .map(|g| g.objective.clone())
            .collect();
        if stopped.is_empty() {
            return;
        }
        work.save().await;
        drop(work);
        for objective in stopped {
            self.emit(Event::Notice {
                message: format!(
                    "goal \"{objective}\" stopped: the provider's usage limit was reached \
                     (usage_limited); /goal resume once your quota allows"
                ),
            });
        }
    }

    /// How much the current goal may still spend: what one model call of its work may
    /// produce at most, or whether its budget is already spent.
    pub(super) async fn goal_room(&self) -> GoalRoom {
        let work = self.work.lock().await;
        let Some(goal) = work.goals.current() else {
            return GoalRoom::NoGoal;
        };
        match (goal.status, goal.token_budget) {
            (atto_protocol::GoalStatus::BudgetLimited, _) => GoalRoom::Spent,
            (atto_protocol::GoalStatus::Active, None) => GoalRoom::Unbounded,
            (atto_protocol::GoalStatus::Active, Some(budget)) if goal.tokens_used >= budget => {
                GoalRoom::Spent
            }
            (atto_protocol::GoalStatus::Active, Some(budget)) => {
                GoalRoom::Room(budget - goal.tokens_used)
            }
            _ => GoalRoom::NoGoal,
        }
    }

    /// Reports a restore, and tells the model its view of the files is stale.
    pub(super) fn restored(
        &mut self,
        id: u32,
        restored: Result<atto_checkpoint::RestoreReport, String>,
    ) {
        match restored {
            Ok(report) => {
                let files = report.restored.len() + report.deleted.len();
                self.notes.push(format!(
                    "[atto] The user restored the workspace files to an earlier checkpoint \
                     ({files} file(s) changed back). Files may differ from what you last saw: \
                     read them again before editing."
                ));
                self.emit(Event::Restored {
                    checkpoint: id,
                    safety_checkpoint: report.safety_snapshot,
                    restored: report.restored,
                    deleted: report.deleted,
                    kept: report.kept,
                });
            }
            Err(message) => self.emit(Event::Error { message }),
        }
    }

    /// `/approve` and `/reject`: decides the selected changes and reports each outcome.
    pub(super) async fn decide_plan(
        &mut self,
        selection: PlanSelection,
        reason: Option<String>,
        approve: bool,
    ) {
        if approve && let Ok(picks) = self.plan.select(&selection) {
            self.keeper.before_plan(self.turns).await;
            // A change queued for an external tool (an MCP server's) in another process:
            // its server is started and the tool found, as when the model calls it.
            let names: Vec<String> = picks
                .iter()
                .filter_map(|&i| self.plan.change(i).map(|c| c.tool.clone()))
                .collect();
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            self.resolve_external_tools(&names, &CancellationToken::new())
                .await;
        }
        let sandbox = self.command_sandbox();
        let mut apply = ApprovedChanges {
            plan: &mut self.plan,
            gate: &mut self.gate,
            tools: &self.options.tools,
            workspace: &self.options.workspace,
            sandbox,
            trust: self.trust,
            max_output_bytes: self.options.limits.max_tool_output_bytes,
        };
        let decided = if approve {
            apply.approve(&selection, &CancellationToken::new()).await
        } else {
            apply.reject(&selection, reason.as_deref()).await
        };
        match decided {
            Ok((status, outcomes)) => {
                let tally = atto_protocol::PlanTally::of(self.plan.plan());
                self.emit(Event::PlanDecided {
                    status,
                    outcomes,
                    tally,
                });
            }
            Err(message) => self.emit(Event::Error { message }),
        }
    }

    /// Continues in the thread a switch or rollback produced, or reports why not.
    /// The current thread as `/threads` names it.
    pub(super) fn thread_name(&self) -> String {
        if self.recorder.thread == self.options.session_id {
            "main".to_owned()
        } else {
            self.recorder.thread.clone()
        }
    }

    /// After a switch: the files on disk are still those the previous thread left. Records
    /// them, and offers the checkpoint where the thread now entered left its files, so the
    /// files can move with the conversation.
    pub(super) async fn offer_files(&mut self, leaving: &str, rollback: bool) {
        self.keeper.leaving_thread(self.turns, leaving).await;
        let entered = self.thread_name();
        let message = match self.keeper.left_by(&entered).await {
            Some(id) if !rollback => format!(
                "the files on disk are still as thread {leaving} left them; /restore {id} \
                 brings back the files as thread {entered} left them"
            ),
            _ if rollback => format!(
                "the conversation went back to the fork point, the files did not: they are as \
                 thread {leaving} left them. /restore list shows the checkpoints by turn, /undo \
                 takes back the last turn's changes"
            ),
            _ => return,
        };
        self.emit(Event::Notice { message });
    }

    /// Continues in the thread a switch or rollback produced, or reports why not; whether
    /// it switched.
    pub(super) fn enter_thread(&mut self, switched: Result<Switched, String>) -> bool {
        match switched {
            Ok(Switched { info, history }) => {
                let thread = if info.id == "main" {
                    self.options.session_id.clone()
                } else {
                    info.id.clone()
                };
                self.recorder.set_thread(thread, history.len());
                self.turns = super::history::count_turns(&history);
                self.history = history;
                self.emit(Event::ThreadSwitched { thread: info });
                true
            }
            Err(message) => {
                self.emit(Event::Error { message });
                false
            }
        }
    }
}

/// What the current goal lets the next model call spend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum GoalRoom {
    /// No goal is being pursued.
    NoGoal,
    /// An active goal without a budget.
    Unbounded,
    /// An active goal with this many tokens left.
    Room(u64),
    /// The goal's budget is used up.
    Spent,
}
