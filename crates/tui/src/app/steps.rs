//! A running task plan's steps: each step's start, end or skip (its card in the
//! transcript and its state in the plan), the decision point a step waits on, the tokens
//! the running step used, and the plan's closing summary.

use atto_protocol::{Event, StepOutcome, StepStatus, TaskPlanStatus};

use super::{App, DecisionDialog};
use crate::transcript::{Kind, PlanEntry, StepCard, Tone};
use crate::view::text::sanitize;

impl App {
    /// Step events and the plan's summary; `None` for other events.
    pub(super) fn step_event(&mut self, event: &Event) -> Option<()> {
        match event {
            Event::PlanDecisionRequired {
                number,
                question,
                options,
            } => self.decision_required(*number, question, options),
            Event::PlanStepStarted {
                number,
                description,
                checkpoint,
            } => self.step_started(*number, description, *checkpoint),
            Event::PlanStepCompleted {
                number,
                summary,
                quality,
            } => {
                let note = quality
                    .as_ref()
                    .and_then(|q| q.score)
                    .map(|s| format!("checked, score {s}/5"));
                self.step_ended(*number, StepStatus::Completed, summary, note);
            }
            Event::PlanStepRetrying {
                number,
                attempt,
                quality,
            } => {
                let why = quality
                    .findings
                    .first()
                    .cloned()
                    .unwrap_or_else(|| "its checks did not pass".to_owned());
                self.step_retrying(*number, *attempt, &why);
            }
            Event::PlanStepFailed {
                number,
                error,
                rolled_back,
                ..
            } => {
                let note = rolled_back.then(|| "rolled back, plan stopped".to_owned());
                self.step_ended(*number, StepStatus::Failed, error, note);
            }
            Event::PlanStepSkipped { number, reason } => self.step_skipped(*number, reason),
            Event::PlanSummary {
                plan_id,
                status,
                outcomes,
            } => self.plan_summary(plan_id, *status, outcomes),
            _ => return None,
        }
        Some(())
    }

    /// Tokens of a `Usage` event, charged to the step running now.
    pub(super) fn charge_step(&mut self, tokens: u64) {
        if let Some((_, used)) = &mut self.step_usage {
            *used += tokens;
        }
    }

    fn step(&mut self, number: u32) -> Option<&mut atto_protocol::PlanStep> {
        self.task_plan
            .as_mut()?
            .steps
            .iter_mut()
            .find(|s| s.number == number)
    }

    fn decision_required(&mut self, number: u32, question: &str, options: &[String]) {
        // Asked again (the last answer was not an option): keep the highlight.
        let selected = match &self.decision {
            Some(d) if d.number == number => d.selected.min(options.len().saturating_sub(1)),
            _ => 0,
        };
        self.decision_waiting = Some(number);
        self.decision = Some(DecisionDialog {
            number,
            question: sanitize(question).into_owned(),
            options: options.iter().map(|o| sanitize(o).into_owned()).collect(),
            selected,
        });
        self.note(
            format!("? step {number} waits for a decision: {question}"),
            Tone::Warn,
        );
    }

    fn step_started(&mut self, number: u32, description: &str, checkpoint: Option<u32>) {
        self.close_decision();
        self.step_usage = Some((number, 0));
        let total = self.task_plan.as_ref().map(|p| p.steps.len());
        if let Some(step) = self.step(number) {
            step.status = StepStatus::InProgress;
            step.checkpoint = checkpoint;
        }
        self.push(Kind::Plan(PlanEntry::Step(StepCard {
            number,
            total,
            description: sanitize(description).into_owned(),
            status: StepStatus::InProgress,
            checkpoint,
            tokens: None,
            budget: None,
            detail: Vec::new(),
            note: None,
            expanded: false,
        })));
    }

    fn step_ended(&mut self, number: u32, status: StepStatus, detail: &str, note: Option<String>) {
        self.close_decision();
        let used = match self.step_usage.take() {
            Some((n, used)) if n == number => Some(used),
            other => {
                self.step_usage = other;
                None
            }
        };
        let budget = self.step(number).map(|step| {
            step.status = status;
            step.result = Some(detail.to_owned());
            step.token_budget
        });
        let detail: Vec<String> = sanitize(detail)
            .lines()
            .map(|l| l.trim_end().to_owned())
            .filter(|l| !l.is_empty())
            .collect();
        match self.transcript.step_mut(number) {
            Some(card) => {
                card.status = status;
                card.tokens = used;
                card.budget = budget;
                card.detail = detail;
                card.note = note;
            }
            // Never seen starting (the screen opened mid-run): show its end anyway.
            None => {
                let description = self
                    .task_plan
                    .as_ref()
                    .and_then(|p| p.steps.iter().find(|s| s.number == number))
                    .map(|s| sanitize(&s.description).into_owned())
                    .unwrap_or_default();
                let total = self.task_plan.as_ref().map(|p| p.steps.len());
                self.push(Kind::Plan(PlanEntry::Step(StepCard {
                    number,
                    total,
                    description,
                    status,
                    checkpoint: None,
                    tokens: used,
                    budget,
                    detail,
                    note,
                    expanded: false,
                })));
            }
        }
    }

    /// A step its checks did not pass runs again: its card says so, and why.
    fn step_retrying(&mut self, number: u32, attempt: u32, why: &str) {
        if let Some(card) = self.transcript.step_mut(number) {
            card.note = Some(format!(
                "checks failed, attempt {attempt}: {}",
                sanitize(why).lines().next().unwrap_or("")
            ));
        }
    }

    fn step_skipped(&mut self, number: u32, reason: &str) {
        let description = self.step(number).map(|step| {
            step.status = StepStatus::Skipped;
            step.result = Some(reason.to_owned());
            sanitize(&step.description).into_owned()
        });
        let total = self.task_plan.as_ref().map(|p| p.steps.len());
        self.push(Kind::Plan(PlanEntry::Step(StepCard {
            number,
            total,
            description: description.unwrap_or_default(),
            status: StepStatus::Skipped,
            checkpoint: None,
            tokens: None,
            budget: None,
            detail: vec![sanitize(reason).into_owned()],
            note: None,
            expanded: false,
        })));
    }

    fn plan_summary(&mut self, plan_id: &str, status: TaskPlanStatus, outcomes: &[StepOutcome]) {
        self.close_decision();
        self.step_usage = None;
        self.set_plan_status(plan_id, status);
        if let Some(plan) = &mut self.task_plan {
            for o in outcomes {
                if let Some(step) = plan.steps.iter_mut().find(|s| s.number == o.number) {
                    step.status = o.status;
                    step.result.clone_from(&o.result);
                }
            }
        }
        let outcomes = outcomes
            .iter()
            .map(|o| {
                let mut o = o.clone();
                o.description = sanitize(&o.description).into_owned();
                o.result = o.result.map(|r| sanitize(&r).into_owned());
                o
            })
            .collect();
        self.plan_entry(PlanEntry::Summary { status, outcomes });
    }
}
