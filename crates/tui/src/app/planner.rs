//! The structured planner's task plan: the plan as generated, shown, revised, confirmed
//! or rejected, and the decision dialog's answers. Its running steps are `steps`'.

use atto_present::planner as present;
use atto_protocol::{Event, RevisionSource, TaskPlan, TaskPlanStatus};

use super::App;
use crate::transcript::{Kind, PlanEntry, Tone};
use crate::view::text::sanitize;

impl App {
    /// The task plan as the planner's events left it (waiting, running or finished).
    pub fn task_plan(&self) -> Option<&TaskPlan> {
        self.task_plan.as_ref()
    }

    /// The decision to send for the open dialog: the step's number and the highlighted
    /// option's 1-based number as text (unambiguous even when two options read alike).
    /// Send it as `Op::PlanDecision { number, choice }`.
    pub fn decision_choice(&self) -> Option<(u32, String)> {
        let d = self.decision.as_ref()?;
        (d.selected < d.options.len()).then(|| (d.number, (d.selected + 1).to_string()))
    }

    /// Enter in the dialog: the highlighted choice (as `decision_choice`), closing the
    /// dialog and the wait. Send it as `Op::PlanDecision { number, choice }`.
    pub fn take_decision_choice(&mut self) -> Option<(u32, String)> {
        let choice = self.decision_choice()?;
        self.close_decision();
        Some(choice)
    }

    /// Esc in the dialog: hides it; the engine still waits, and the next prompt typed
    /// answers it (`answer_decision`).
    pub fn dismiss_decision(&mut self) {
        self.decision = None;
    }

    /// The step whose decision the engine waits for, with the dialog open or dismissed.
    pub fn decision_waiting(&self) -> Option<u32> {
        self.decision_waiting
    }

    /// A prompt typed while a decision waits is its answer (an option's number or text,
    /// as the line session takes it): the step's number and the trimmed text to send as
    /// `Op::PlanDecision`, closing the wait. `None` when no decision waits (send the
    /// prompt as usual). A wrong answer makes the engine ask again, reopening the dialog.
    pub fn answer_decision(&mut self, text: &str) -> Option<(u32, String)> {
        let number = self.decision_waiting?;
        self.close_decision();
        Some((number, text.trim().to_owned()))
    }

    pub(super) fn close_decision(&mut self) {
        self.decision = None;
        self.decision_waiting = None;
    }

    /// Moves the dialog's highlight by `delta` options (positive: down), stopping at the
    /// first and last.
    pub fn decision_select(&mut self, delta: i32) {
        if let Some(d) = &mut self.decision {
            let last = d.options.len().saturating_sub(1);
            d.selected = super::add(d.selected, delta).min(last);
        }
    }

    /// Highlights option `n` (1-based, as the digit keys number them); false when there is
    /// no such option.
    pub fn decision_pick(&mut self, n: usize) -> bool {
        match &mut self.decision {
            Some(d) if (1..=d.options.len()).contains(&n) => {
                d.selected = n - 1;
                true
            }
            _ => false,
        }
    }

    /// The task plan's own events (generated, revised, confirmed, rejected, settings);
    /// `None` for other events. Step events are `steps`'.
    pub(super) fn task_plan_event(&mut self, event: &Event) -> Option<()> {
        match event {
            Event::PlanGenerated { plan, attempts } => self.plan_generated(plan, *attempts),
            // `/show-plan`: the Plan panel shows it, as it does the pending plan.
            Event::TaskPlanShown { plan } => self.task_plan = Some(clean_plan(plan)),
            Event::PlanGenerationFailed { error, attempts } => {
                let tries = present::tries(*attempts);
                self.note(format!("✗ plan: {error}{tries}"), Tone::Error);
            }
            Event::PlanGenerationCancelled { revision, .. } => {
                self.note(present::cancelled_line(*revision).to_owned(), Tone::Quiet);
            }
            Event::PlanRevised {
                plan,
                request,
                source,
                diff,
            } => self.plan_revised(plan, request, *source, diff),
            Event::PlanConfirmed { plan_id, steps } => {
                self.set_plan_status(plan_id, TaskPlanStatus::Running);
                self.note(format!("✓ {}", present::confirmed_line(*steps)), Tone::Ok);
            }
            Event::PlanRejected { plan_id, reason } => {
                self.close_decision();
                self.set_plan_status(plan_id, TaskPlanStatus::Rejected);
                self.note(present::rejected_line(reason.as_deref()), Tone::Warn);
            }
            Event::PlannerSettingsChanged { .. } => {
                if let Some(line) = atto_present::planner::settings_line(event) {
                    self.push(Kind::Notice(line));
                }
            }
            _ => return None,
        }
        Some(())
    }

    fn plan_generated(&mut self, plan: &TaskPlan, attempts: u32) {
        self.close_decision();
        let plan = clean_plan(plan);
        self.task_plan = Some(plan.clone());
        self.plan_entry(PlanEntry::Block {
            plan: Box::new(plan),
            heading: "Task Plan Generated",
            attempts,
            hint: true,
        });
    }

    fn plan_revised(&mut self, plan: &TaskPlan, request: &str, source: RevisionSource, diff: &str) {
        self.task_plan = Some(clean_plan(plan));
        let diff = sanitize(diff)
            .lines()
            .map(|l| l.trim_end().to_owned())
            .collect();
        self.plan_entry(PlanEntry::Revision {
            title: sanitize(&present::revision_heading(source, request)).into_owned(),
            diff,
        });
    }

    pub(super) fn plan_entry(&mut self, entry: PlanEntry) {
        self.push(Kind::Plan(entry));
    }

    pub(super) fn note(&mut self, text: String, tone: Tone) {
        let text = sanitize(&text).into_owned();
        self.plan_entry(PlanEntry::Note { text, tone });
    }

    pub(super) fn set_plan_status(&mut self, plan_id: &str, status: TaskPlanStatus) {
        if let Some(plan) = &mut self.task_plan
            && plan.id == plan_id
        {
            plan.status = status;
        }
    }
}

/// The plan with its model-written text made safe to draw.
fn clean_plan(plan: &TaskPlan) -> TaskPlan {
    let mut plan = plan.clone();
    plan.intent = sanitize(&plan.intent).into_owned();
    for step in &mut plan.steps {
        step.description = sanitize(&step.description).into_owned();
        step.files = step
            .files
            .iter()
            .map(|f| sanitize(f).into_owned())
            .collect();
        if let Some(d) = &mut step.decision {
            d.question = sanitize(&d.question).into_owned();
            d.options = d.options.iter().map(|o| sanitize(o).into_owned()).collect();
        }
    }
    plan
}
