//! The session's op loop: it records the session (repairing a killed session's tail) and
//! loads its saved state, announces it, then answers each op in turn until the front end
//! shuts it down or goes away. Turns, plan runs and the answers themselves live in the
//! sibling modules; this one only dispatches.

use atto_protocol::{Event, Op, PlanSelection};
use tokio::sync::mpsc;

use super::Session;
use super::{drive, planning};
use crate::checkpoints::DEFAULT_LIST;

impl Session {
    /// The session's life: start, every op until shutdown, then `session_ended`.
    pub(super) async fn run(mut self, ops: mpsc::UnboundedReceiver<Op>) {
        // Recorded (and a killed session's tail repaired) before it is announced.
        self.register().await;
        self.repair_interrupted_calls().await;
        self.plan.load().await;
        self.work.lock().await.load().await;
        self.planner.load().await;
        // Said before the session is announced: front ends show what comes before
        // `session_started` as the session's opening, before reading any command.
        for message in std::mem::take(&mut self.options.start_notices) {
            self.emit(Event::Notice { message });
        }
        let info = self.options.client.info().clone();
        self.emit(Event::SessionStarted {
            session_id: self.options.session_id.clone(),
            provider: info.provider,
            model: info.model,
            wire: info.wire.to_string(),
            workspace: self.options.workspace.display().to_string(),
            mode: self.mode,
            permission: Some(self.gate.permission.mode),
            sandbox: Some(self.sandbox_state()),
        });
        self.save_modes().await;
        let mut inbox = drive::Inbox::new(ops, self.gate.grant_table(), self.events.clone());
        while let Some(op) = inbox.next().await {
            if matches!(op, Op::Shutdown) {
                break;
            }
            self.answer(op, &mut inbox).await;
            if inbox.gone {
                break;
            }
        }
        self.emit(Event::SessionEnded);
    }

    /// Answers one op, by family.
    async fn answer(&mut self, op: Op, inbox: &mut drive::Inbox) {
        match op {
            Op::UserInput { text } => self.user_input(text, inbox).await,
            Op::Spawn { request } => self.spawn_from_user(request, inbox).await,
            Op::ListAgents => self.list_agents(),
            Op::SetModel { model } => self.set_model(&model).await,
            Op::ListModels => self.list_models(),
            Op::Configure {
                key,
                value,
                confirm,
            } => self.configure(key.as_deref(), &value, confirm).await,
            Op::ShowCost => self.emit(Event::CostReport {
                models: self.models.spend(),
            }),
            Op::ShowContext => self.emit(Event::ContextReport {
                context: self.context_use(),
                asked: true,
            }),
            Op::Compact { focus } => self.compact_asked(focus).await,
            Op::ListMcp => self.list_mcp(),
            Op::AutoPlan { task } => {
                self.generate_plan(task, inbox).await;
            }
            Op::PlanDecision { number, .. } => self.emit(Event::Error {
                message: format!(
                    "no plan step is waiting for a decision (step {number}); nothing was changed"
                ),
            }),
            Op::PlannerSettings {
                auto_rollback_on_failure,
                detect,
                threshold,
                parallel,
            } => self.planner_settings(planning::SettingsChange {
                auto_rollback: auto_rollback_on_failure,
                detect,
                threshold,
                parallel,
            }),
            op @ (Op::Fork { .. } | Op::ListThreads | Op::SwitchThread { .. } | Op::Rollback) => {
                self.thread_op(op).await;
            }
            Op::ListPrompts => self.list_prompts().await,
            Op::Rewind { prompt, scope } => self.rewind(prompt, scope).await,
            Op::SetMode { mode, permission } => self.set_mode(mode, permission).await,
            Op::SetEffort { effort } => self.set_effort(effort),
            op @ (Op::ShowPlan | Op::ApprovePlan { .. } | Op::RejectPlan { .. }) => {
                self.plan_op(op, inbox).await;
            }
            Op::Goal { command } => self.goal(command).await,
            Op::Learning { command } => self.learnings.command(command).await,
            op @ (Op::ListCheckpoints { .. } | Op::RestoreCheckpoint { .. } | Op::Undo) => {
                self.checkpoint_op(op).await;
            }
            Op::SetTrust { on } => {
                self.trust = on;
                self.emit(Event::TrustChanged { on });
            }
            op @ (Op::ListGrants | Op::RevokeGrant { .. }) => self.grant_op(op).await,
            // Nothing is running: nothing to interrupt, no question open. Shutdown is the
            // caller's.
            Op::Interrupt | Op::Approval { .. } | Op::Shutdown => {}
        }
    }

    /// `/compact`: the conversation compacted now, whatever the threshold.
    async fn compact_asked(&mut self, focus: Option<String>) {
        let cancel = atto_tools::CancellationToken::new();
        let trigger = atto_protocol::CompactTrigger::User;
        self.register().await;
        self.compact(trigger, focus, &cancel).await;
    }

    /// The MCP servers and their state.
    fn list_mcp(&self) {
        self.emit(Event::McpServers {
            servers: self
                .options
                .external_tools
                .as_ref()
                .map(|source| source.servers())
                .unwrap_or_default(),
        });
    }

    /// The grants the session decides by: listed, or one revoked.
    async fn grant_op(&mut self, op: Op) {
        match op {
            Op::ListGrants => {
                let grants = self.gate.list().await;
                self.emit(Event::GrantList { grants });
            }
            Op::RevokeGrant { number } => match self.gate.revoke(number).await {
                Ok(message) => self.emit(Event::Notice { message }),
                Err(message) => self.emit(Event::Error { message }),
            },
            _ => {}
        }
    }

    /// A prompt: a refinement while a step plan waits, a plan first when detection says
    /// so, else a turn.
    async fn user_input(&mut self, text: String, inbox: &mut drive::Inbox) {
        if self.planner.waiting.is_some() {
            self.refine_plan(text, inbox).await;
            return;
        }
        if self.should_plan(&text) {
            let drafted = self.generate_plan(text.clone(), inbox).await;
            // Failed: the prompt runs as a plain turn instead.
            if inbox.gone || drafted != planning::Drafted::Failed {
                return;
            }
        }
        let result = self.drive_turn(text, inbox).await;
        let turn = self.turns;
        self.charge_turn_time(&result).await;
        self.emit(Event::TurnCompleted { turn, result });
    }

    /// `/fork`, `/threads`, `/switch`, `/rollback`.
    async fn thread_op(&mut self, op: Op) {
        match op {
            Op::Fork { label } => {
                // The parent's files as the conversation leaves it, for a later switch.
                let leaving = self.thread_name();
                self.keeper.leaving_thread(self.turns, &leaving).await;
                let threads = self.threads();
                let forked = threads
                    .fork(&self.recorder.thread, self.history.len(), label)
                    .await;
                match forked {
                    Ok(thread) => {
                        let len = self.history.len();
                        self.recorder.set_thread(thread.id.clone(), len);
                        self.emit(Event::ThreadSwitched { thread });
                    }
                    Err(message) => self.emit(Event::Error { message }),
                }
            }
            Op::ListThreads => {
                let threads = self.threads();
                match threads.list(&self.recorder.thread).await {
                    Ok(threads) => self.emit(Event::ThreadList { threads }),
                    Err(message) => self.emit(Event::Error { message }),
                }
            }
            Op::SwitchThread { id } => {
                let leaving = self.thread_name();
                let threads = self.threads();
                let switched = threads.switch(&id).await;
                if self.enter_thread(switched) {
                    self.offer_files(&leaving, false).await;
                }
            }
            Op::Rollback => {
                let leaving = self.thread_name();
                let threads = self.threads();
                let switched = threads.rollback(&self.recorder.thread).await;
                if self.enter_thread(switched) {
                    self.offer_files(&leaving, true).await;
                }
            }
            _ => {}
        }
    }

    /// `/show-plan`, `/approve`, `/reject`: on the step plan while one waits, else on plan
    /// mode's proposed changes.
    async fn plan_op(&mut self, op: Op, inbox: &mut drive::Inbox) {
        let step_plan = self.planner.waiting.is_some();
        match op {
            Op::ShowPlan if step_plan => self.show_task_plan(),
            Op::ApprovePlan { selection } if step_plan => self.run_plan(selection, inbox).await,
            Op::RejectPlan {
                selection: PlanSelection::All,
                reason,
            } if step_plan => self.reject_task_plan(reason).await,
            // A step plan is approved or rejected whole; single steps are edited in words.
            Op::RejectPlan { .. } if step_plan => self.emit(Event::Error {
                message: "a step plan is rejected whole: /reject [reason] rejects it; to drop \
                          one step, type \"remove step N\" (or \"skip step N\"). Nothing was \
                          changed."
                    .to_owned(),
            }),
            Op::ShowPlan => {
                let previews = self.plan.previews();
                self.emit(Event::Plan {
                    plan: self.plan.plan().cloned(),
                    previews,
                });
            }
            Op::ApprovePlan { selection } => self.decide_plan(selection, None, true).await,
            Op::RejectPlan { selection, reason } => {
                self.decide_plan(selection, reason, false).await;
            }
            _ => {}
        }
    }

    /// `/restore list`, `/restore N`, `/undo`.
    async fn checkpoint_op(&mut self, op: Op) {
        match op {
            Op::ListCheckpoints { limit, all } => {
                match self.keeper.list(limit.unwrap_or(DEFAULT_LIST), all).await {
                    Ok(checkpoints) => self.emit(Event::CheckpointList { checkpoints }),
                    Err(message) => self.emit(Event::Error { message }),
                }
            }
            Op::RestoreCheckpoint { id } => {
                let restored = self.keeper.restore(id).await;
                self.restored(id, restored);
            }
            Op::Undo => match self.keeper.undo().await {
                Ok((turn, report)) => {
                    self.emit(Event::Notice {
                        message: format!("undid the file changes of turn {turn}"),
                    });
                    self.restored(0, Ok(report));
                }
                Err(message) => self.emit(Event::Error { message }),
            },
            _ => {}
        }
    }
}
