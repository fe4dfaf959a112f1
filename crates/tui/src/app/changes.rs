//! The pending plan of Plan mode: changes queued, the plan as `/show-plan` answered it,
//! and the outcome of approving or rejecting it, with the open-change count the status
//! line shows.

use atto_protocol::{ChangeOutcome, Event, PlanStatus, ProposedChange};

use super::App;
use crate::transcript::Kind;
use crate::view::text::sanitize;

impl App {
    /// Pending-plan events; `None` for other events.
    pub(super) fn change_event(&mut self, event: &Event) -> Option<()> {
        match event {
            Event::ChangeQueued { change } => self.change_queued(change),
            Event::Plan { plan, previews } => {
                self.plan = plan.clone();
                self.previews = previews.iter().map(|p| sanitize(p).into_owned()).collect();
                self.pending_changes = plan.as_ref().map_or(0, |p| {
                    p.proposed_changes
                        .iter()
                        .filter(|c| c.status.is_open())
                        .count()
                });
            }
            Event::PlanDecided {
                status,
                outcomes,
                tally,
            } => self.plan_decided(*status, outcomes, tally),
            _ => return None,
        }
        Some(())
    }

    fn change_queued(&mut self, change: &ProposedChange) {
        self.pending_changes += 1;
        if let Some(plan) = &mut self.plan
            && plan.status.is_open()
            && !plan.proposed_changes.iter().any(|c| c.id == change.id)
        {
            plan.proposed_changes.push(change.clone());
            self.previews.push(String::new());
        }
        self.quiet(format!(
            "plan: change {} queued ({} {}); /show-plan to review",
            change.order,
            change.tool,
            (self.info.change_target)(change)
        ));
    }

    fn plan_decided(
        &mut self,
        status: PlanStatus,
        outcomes: &[ChangeOutcome],
        tally: &atto_protocol::PlanTally,
    ) {
        let mut lines = Vec::with_capacity(outcomes.len() + 1);
        for o in outcomes {
            lines.push(format!(
                "{}. {} {}: {} — {}",
                o.order,
                o.tool,
                o.target,
                o.status.as_str(),
                o.detail.lines().next().unwrap_or("")
            ));
        }
        lines.push(atto_present::plan_tally_line(tally));
        match &mut self.plan {
            Some(plan) => {
                plan.status = status;
                for o in outcomes {
                    if let Some(c) = plan
                        .proposed_changes
                        .iter_mut()
                        .find(|c| c.order == o.order)
                    {
                        c.status = o.status;
                    }
                }
                self.pending_changes = if status.is_open() {
                    plan.proposed_changes
                        .iter()
                        .filter(|c| c.status.is_open())
                        .count()
                } else {
                    0
                };
            }
            None => {
                let closed = outcomes.iter().filter(|o| !o.status.is_open()).count();
                self.pending_changes = if status.is_open() {
                    self.pending_changes.saturating_sub(closed)
                } else {
                    0
                };
            }
        }
        self.push(Kind::Notice(sanitize(&lines.join("\n")).into_owned()));
    }
}
