//! Running one turn while the front end keeps talking: the op inbox (ops that arrive
//! mid-turn wait in a queue), interrupts, approval answers and grant revocations passed
//! to the running turn, and the wall-time limit. Used for prompts, plan steps and batches of parallel steps
//! alike, and (without the approvals and the limit) for planning requests.

use std::collections::VecDeque;
use std::time::Duration;

use atto_protocol::{Event, FinalResult, Op, TurnStatus};
use atto_tools::CancellationToken;
use tokio::sync::mpsc;

use super::Session;
use crate::gatekeeper::GrantTable;
use crate::subagents::Approvals;

/// The session's ops: those queued while a turn ran come first.
pub(super) struct Inbox {
    ops: mpsc::UnboundedReceiver<Op>,
    queued: VecDeque<Op>,
    /// The front end went away: nobody sees what follows.
    pub gone: bool,
    /// The tree's grants: a revocation cannot wait for the turn to end, since the turn's
    /// subagents keep deciding by them.
    grants: GrantTable,
    events: mpsc::UnboundedSender<Event>,
}

impl Inbox {
    pub(super) fn new(
        ops: mpsc::UnboundedReceiver<Op>,
        grants: GrantTable,
        events: mpsc::UnboundedSender<Event>,
    ) -> Self {
        Self {
            ops,
            queued: VecDeque::new(),
            gone: false,
            grants,
            events,
        }
    }

    /// Revokes a grant mid-turn, for every session of the tree, and says so.
    async fn revoke(&self, number: u32) {
        let event = match self.grants.revoke(number).await {
            Ok(message) => Event::Notice { message },
            Err(message) => Event::Error { message },
        };
        let _ = self.events.send(event);
    }

    /// The next op; `None` once the front end is gone and the queue is empty.
    pub(super) async fn next(&mut self) -> Option<Op> {
        if let Some(op) = self.queued.pop_front() {
            return Some(op);
        }
        if self.gone {
            return None;
        }
        let op = self.ops.recv().await;
        if op.is_none() {
            self.gone = true;
        }
        op
    }

    /// Puts an op back for the main loop.
    pub(super) fn defer(&mut self, op: Op) {
        self.queued.push_back(op);
    }

    /// Awaits `work` (a request that runs no tools) while the front end keeps talking: an
    /// interrupt, or the front end going away, cancels `cancel`; other ops wait in the
    /// queue for the main loop.
    pub(super) async fn interruptible<F: Future>(
        &mut self,
        cancel: &CancellationToken,
        work: F,
    ) -> F::Output {
        tokio::pin!(work);
        loop {
            tokio::select! {
                out = &mut work => return out,
                // A closed channel answers `None` at once, forever: stop polling it.
                op = self.ops.recv(), if !self.gone => match op {
                    Some(Op::Interrupt) => cancel.cancel(),
                    None => {
                        cancel.cancel();
                        self.gone = true;
                    }
                    Some(other) => self.queued.push_back(other),
                },
            }
        }
    }
}

impl Session {
    /// Runs a turn for `text` to its end, answering interrupts and approvals meanwhile.
    pub(super) async fn drive_turn(&mut self, text: String, inbox: &mut Inbox) -> FinalResult {
        let cancel = CancellationToken::new();
        let deadline = self.options.limits.max_duration;
        let approvals = self.approvals.clone();
        let children_before = self.tree.budget.children_spend(&self.position.node);
        let turn = self.run_turn(text, cancel.clone());
        let (mut result, timed_out) = drive(inbox, &approvals, deadline, &cancel, turn).await;
        // What its subagents spent is part of what the turn cost.
        let (usage, cost) = self.tree.budget.children_spend(&self.position.node);
        let spent = atto_protocol::Usage {
            input_tokens: usage.input_tokens - children_before.0.input_tokens,
            output_tokens: usage.output_tokens - children_before.0.output_tokens,
            cache_read_tokens: usage.cache_read_tokens - children_before.0.cache_read_tokens,
            cache_write_tokens: usage.cache_write_tokens - children_before.0.cache_write_tokens,
        };
        if spent != atto_protocol::Usage::default() {
            atto_llm::add_usage(&mut result.usage, &spent);
            result.cost_usd = match (result.cost_usd, cost, children_before.1) {
                (Some(own), Some(after), Some(before)) => Some(own + after - before),
                _ => None,
            };
        }
        if timed_out && result.status == TurnStatus::Cancelled {
            result.status = TurnStatus::LimitReached;
            result.error = Some(TIMED_OUT.to_owned());
        }
        // A turn that changed files closes with a snapshot: what its calls changed is then
        // known exactly, so `/undo` puts back only this turn's doing.
        self.keeper.after_turn(self.turns).await;
        // The summary's "changed" covers what commands changed, not only file tools.
        for path in self.keeper.changed_in_turn(self.turns).await {
            if !result.files_changed.contains(&path) {
                result.files_changed.push(path);
            }
        }
        result.files_changed.sort();
        result
    }
}

/// What a step or turn cancelled at the wall-time limit says.
pub(super) const TIMED_OUT: &str = "stopped at the time limit; the running step was cancelled \
     and the task may be unfinished. Raise limits.max_duration_secs (or --timeout) to allow \
     longer turns.";

/// Awaits `work` (which runs tools) while the front end keeps talking: an interrupt, the
/// front end going away or the `deadline` cancels `cancel`; approval answers go to the
/// running calls through `approvals`; other ops wait in the queue. Returns `work`'s output
/// and whether the deadline passed.
pub(super) async fn drive<F: Future>(
    inbox: &mut Inbox,
    approvals: &Approvals,
    deadline: Option<Duration>,
    cancel: &CancellationToken,
    work: F,
) -> (F::Output, bool) {
    let mut timed_out = false;
    // The wall-time limit holds mid-stream and mid-tool too: at the deadline the work is
    // cancelled like an interrupt.
    let timer = tokio::time::sleep(deadline.unwrap_or(Duration::MAX));
    tokio::pin!(timer);
    tokio::pin!(work);
    loop {
        tokio::select! {
            out = &mut work => return (out, timed_out),
            () = &mut timer, if deadline.is_some() && !timed_out => {
                timed_out = true;
                cancel.cancel();
            }
            // A closed channel answers `None` at once, forever: stop polling it.
            op = inbox.ops.recv(), if !inbox.gone => match op {
                Some(Op::Interrupt) => cancel.cancel(),
                Some(Op::Approval { id, decision }) => approvals.answer(id, decision),
                Some(Op::RevokeGrant { number }) => inbox.revoke(number).await,
                // The front end is gone: nobody will see the rest.
                None => {
                    cancel.cancel();
                    inbox.gone = true;
                }
                Some(other) => inbox.queued.push_back(other),
            },
        }
    }
}
