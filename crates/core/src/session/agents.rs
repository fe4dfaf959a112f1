//! The session's side of subagents between turns: `/spawn` run on the user's behalf (its
//! approvals and interrupts answered while it runs, its report noted for the next
//! prompt) and `/agents`.

use atto_protocol::{Event, SpawnRequest};
use atto_tools::CancellationToken;

use super::Session;
use super::drive::{self, Inbox};

impl Session {
    /// Runs a subagent the user asked for with `/spawn`.
    pub(super) async fn spawn_from_user(&mut self, request: SpawnRequest, inbox: &mut Inbox) {
        self.update_authority();
        let cancel = CancellationToken::new();
        let task = request.task.clone();
        let spawner = std::sync::Arc::clone(&self.spawner);
        let child_cancel = cancel.clone();
        let work = async move { spawner.run(request, &child_cancel).await };
        let approvals = self.approvals.clone();
        let (outcome, _) = drive::drive(inbox, &approvals, None, &cancel, work).await;
        match outcome {
            Ok(outcome) => self.notes.push(format!(
                "[atto] The user ran a subagent on \"{}\". Its report:\n{}",
                crate::plan_queue::one_paragraph(&task, 200),
                outcome.report
            )),
            Err(message) => self.emit(Event::Error {
                message: format!("no subagent was started: {message}"),
            }),
        }
    }

    /// Answers `/agents`.
    pub(super) fn list_agents(&self) {
        self.emit(Event::SubagentList {
            agents: self.tree.agents(),
        });
    }

    /// What the `spawn_agent` tool reads as this session's authority: set before each turn
    /// and each `/spawn` (neither changes while one runs).
    pub(super) fn update_authority(&self) {
        let mut authority = self
            .authority
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        authority.mode = self.mode;
        authority.permission = self.gate.permission;
        authority.trust = self.trust;
    }
}
