//! The session's plan as ACP shows it: one list of entries made of the task plan's steps
//! (from `/auto` or the planner) followed by the session's goals. ACP replaces the whole
//! plan on every update, so this keeps both halves and rebuilds the list.

use agent_client_protocol::v1::schema::{Plan, PlanEntry, PlanEntryPriority, PlanEntryStatus};
use atto_protocol::{Goal, GoalStatus, StepStatus, TaskPlan};

/// The latest task plan and goals of one session.
#[derive(Default)]
pub(crate) struct PlanView {
    steps: Vec<Step>,
    goals: Vec<Goal>,
}

struct Step {
    number: u32,
    text: String,
    status: StepStatus,
}

impl PlanView {
    /// A new or revised task plan replaces the old one.
    pub(crate) fn set_plan(&mut self, plan: &TaskPlan) {
        self.steps = plan
            .steps
            .iter()
            .map(|s| Step {
                number: s.number,
                text: format!("{}. {}", s.number, s.description),
                status: s.status,
            })
            .collect();
    }

    /// A step moved on.
    pub(crate) fn step(&mut self, number: u32, status: StepStatus) {
        if let Some(step) = self.steps.iter_mut().find(|s| s.number == number) {
            step.status = status;
        }
    }

    /// The goals changed.
    pub(crate) fn set_goals(&mut self, goals: Vec<Goal>) {
        self.goals = goals;
    }

    /// The whole plan, steps first, then goals.
    pub(crate) fn plan(&self) -> Plan {
        let steps = self.steps.iter().map(|s| {
            let (status, note) = match s.status {
                StepStatus::Pending => (PlanEntryStatus::Pending, ""),
                StepStatus::InProgress => (PlanEntryStatus::InProgress, ""),
                StepStatus::Completed => (PlanEntryStatus::Completed, ""),
                // ACP has no failed or skipped entry: the text says it.
                StepStatus::Failed => (PlanEntryStatus::Completed, " (failed)"),
                StepStatus::Skipped => (PlanEntryStatus::Completed, " (skipped)"),
            };
            PlanEntry::new(
                format!("{}{note}", s.text),
                PlanEntryPriority::Medium,
                status,
            )
        });
        let goals = self.goals.iter().map(|g| {
            let (status, note) = match g.status {
                GoalStatus::Active => (PlanEntryStatus::InProgress, ""),
                GoalStatus::Paused => (PlanEntryStatus::Pending, " (paused)"),
                GoalStatus::Blocked => (PlanEntryStatus::Pending, " (blocked)"),
                GoalStatus::UsageLimited => (PlanEntryStatus::Pending, " (usage limit)"),
                GoalStatus::BudgetLimited => (PlanEntryStatus::Pending, " (budget spent)"),
                GoalStatus::Complete => (PlanEntryStatus::Completed, ""),
            };
            PlanEntry::new(
                format!("goal: {}{note}", g.objective),
                PlanEntryPriority::High,
                status,
            )
        });
        Plan::new(steps.chain(goals).collect())
    }
}
