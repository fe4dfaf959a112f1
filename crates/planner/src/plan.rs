//! The structured planner (the autonomous-agent spec's planner and the plan-mode seed's
//! interactive planning): a task plan drafted by the model as JSON (`generate`, validated
//! by `schema`), refined before approval by plain edit requests (`edit`, the model for the
//! rest), and run step by step with a checkpoint before each (`execute` has the rules;
//! atto-core's session runs the turns). How a plan is shown to a person is the front
//! ends' business, not this module's. Plan mode's queue of proposed changes lives in
//! atto-core and is a different thing.
//!
//! This module holds the planner's state of one session: its settings, the plan waiting
//! for confirmation, and saving plans to the store.

pub mod edit;
pub mod execute;
pub mod generate;
pub mod report;
pub mod schema;

use atto_protocol::{Event, TaskPlan, TaskPlanStatus};
use atto_store::Store;
use tokio::sync::mpsc;

use crate::complexity::DEFAULT_PLAN_THRESHOLD;

/// A revision's unified diff of the step lists, before to after: the text
/// `Event::PlanRevised` carries.
pub fn diff(before: &TaskPlan, after: &TaskPlan) -> String {
    let (old, new) = (
        before.step_lines().join("\n") + "\n",
        after.step_lines().join("\n") + "\n",
    );
    similar::TextDiff::from_lines(&old, &new)
        .unified_diff()
        .context_radius(2)
        .header("plan", "revised plan")
        .to_string()
}

/// How the planner behaves; changed with `Op::PlannerSettings`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    /// A failed step's file changes are restored from its checkpoint and the plan stops.
    /// On by default: the spec's executor checks it first, and a half-done step left in
    /// the files is the worse surprise. Off: the dependents of a failed step are skipped
    /// and the rest run.
    pub auto_rollback_on_failure: bool,
    /// Plain prompts scoring at least `threshold` are planned first. Off by default: the
    /// plan needs someone to confirm it, which `atto exec` and scripts do not have.
    pub detect: bool,
    /// Complexity score from which a detected prompt is planned (COMPLEX by default).
    pub threshold: f64,
    /// Ready steps that declare disjoint files and have no decision point run together, up
    /// to three at a time (`execute::batch`). Off by default: steps then see each other's
    /// work only after their batch, which a plan written for sequential runs may not expect.
    pub parallel: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            auto_rollback_on_failure: true,
            detect: false,
            threshold: DEFAULT_PLAN_THRESHOLD,
            parallel: false,
        }
    }
}

/// The planner's state in one session.
pub struct Planner {
    pub settings: Settings,
    /// The plan waiting for refinement, `/approve` or `/reject`.
    pub waiting: Option<TaskPlan>,
    /// Where `plan_step_result` reports land.
    pub step_report: report::ReportSlot,
    store: Option<Store>,
    session: String,
    events: mpsc::UnboundedSender<Event>,
}

impl Planner {
    pub fn new(
        store: Option<Store>,
        session: String,
        events: mpsc::UnboundedSender<Event>,
    ) -> Self {
        Self {
            settings: Settings::default(),
            waiting: None,
            step_report: report::ReportSlot::default(),
            store,
            session,
            events,
        }
    }

    /// After a resume: a plan that was waiting for confirmation waits again.
    pub async fn load(&mut self) {
        let Some(store) = &self.store else {
            return;
        };
        match store.latest_task_plan(&self.session).await {
            Ok(Some(plan)) if plan.status == TaskPlanStatus::AwaitingConfirmation => {
                let _ = self.events.send(Event::Notice {
                    message: format!(
                        "a task plan is waiting for confirmation ({} steps): /show-plan shows \
                         it, /approve runs it, /reject drops it",
                        plan.steps.len()
                    ),
                });
                let _ = self
                    .events
                    .send(Event::TaskPlanShown { plan: plan.clone() });
                self.waiting = Some(plan);
            }
            Ok(_) => {}
            Err(err) => {
                let _ = self.events.send(Event::Warning {
                    message: format!("the session's task plan could not be loaded: {err}"),
                });
            }
        }
    }

    /// Saves a plan as it is now; a failure is a warning, the plan goes on in memory.
    pub async fn save(&self, plan: &TaskPlan) {
        let Some(store) = &self.store else {
            return;
        };
        if let Err(err) = store.save_task_plan(plan, &self.session).await {
            let _ = self.events.send(Event::Warning {
                message: format!(
                    "the task plan could not be saved ({err}); it will not survive a restart"
                ),
            });
        }
    }
}
