//! The session's side of the structured planner: drafting a plan (`/auto`, or a prompt the
//! complexity check sends to planning), refining the waiting plan with plain input,
//! showing and rejecting it, and running an approved plan step by step — a checkpoint, a
//! model turn with the step's instruction and budget, the outcome, rollback or skipping on
//! failure, a summary at the end.

use std::sync::Arc;

use atto_protocol::{
    Event, FinalResult, Op, PlanSelection, RevisionSource, StepStatus, TaskPlan, TaskPlanStatus,
    TurnStatus, Usage,
};

use atto_tools::CancellationToken;

use super::Session;
use super::drive::Inbox;
use crate::planner::edit::{self, EditError};
use crate::planner::generate::{Ask, Generated, NoPlan};
use crate::planner::{execute, generate, present, report};

/// How drafting a plan ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Drafted {
    /// A plan waits for confirmation.
    Waiting,
    /// No valid plan came back (said in an event).
    Failed,
    /// The user interrupted it (said in an event).
    Cancelled,
}

/// How one step ended.
enum StepEnd {
    Completed(String),
    Failed(String),
    Cancelled,
}

impl Session {
    /// Whether plan detection is on and `text` is complex enough to plan first.
    pub(super) fn should_plan(&self, text: &str) -> bool {
        let settings = &self.planner.settings;
        settings.detect
            && crate::complexity::should_create_plan(
                &crate::complexity::classify(text),
                settings.threshold,
            )
    }

    /// `Op::PlannerSettings`.
    pub(super) fn planner_settings(
        &mut self,
        auto_rollback: Option<bool>,
        detect: Option<bool>,
        threshold: Option<f64>,
    ) {
        let settings = &mut self.planner.settings;
        if let Some(on) = auto_rollback {
            settings.auto_rollback_on_failure = on;
        }
        if let Some(on) = detect {
            settings.detect = on;
        }
        if let Some(t) = threshold.filter(|t| t.is_finite() && *t >= 0.0) {
            settings.threshold = t;
        }
        let s = *settings;
        self.emit(Event::PlannerSettingsChanged {
            auto_rollback_on_failure: s.auto_rollback_on_failure,
            detect: s.detect,
            threshold: s.threshold,
        });
    }

    /// Runs one planning exchange, interruptible from `inbox`; its usage is reported.
    async fn ask_model(&mut self, user_text: String, task: &str, inbox: &mut Inbox) -> Generated {
        let client = Arc::clone(&self.options.client);
        let cancel = CancellationToken::new();
        let ask = generate::ask(
            client.as_ref(),
            Ask {
                user_text,
                task,
                max_output_tokens: self.options.limits.max_output_tokens,
                cancel: &cancel,
                effort: self.effort,
            },
        );
        let generated = inbox.interruptible(&cancel, ask).await;
        self.planning_usage(&generated.usage);
        generated
    }

    /// Asks the model for a plan of `task`; an interrupt from `inbox` stops the request.
    pub(super) async fn generate_plan(&mut self, task: String, inbox: &mut Inbox) -> Drafted {
        let generated = self
            .ask_model(generate::plan_request(&task), &task, inbox)
            .await;
        match generated.plan {
            Ok(plan) => {
                self.planner.save(&plan).await;
                self.planner.waiting = Some(plan.clone());
                self.emit(Event::PlanGenerated {
                    plan,
                    attempts: generated.attempts,
                });
                Drafted::Waiting
            }
            Err(NoPlan::Cancelled) => {
                self.emit(Event::PlanGenerationCancelled {
                    attempts: generated.attempts,
                    revision: false,
                });
                Drafted::Cancelled
            }
            Err(NoPlan::Invalid(error)) => {
                self.emit(Event::PlanGenerationFailed {
                    error: format!(
                        "no valid plan after {} model request(s): {error}. Nothing was planned \
                         or run; rephrase the task and try /auto again, or send it as a plain \
                         prompt.",
                        generated.attempts
                    ),
                    attempts: generated.attempts,
                });
                Drafted::Failed
            }
        }
    }

    fn planning_usage(&self, usage: &Usage) {
        if usage.input_tokens + usage.output_tokens == 0 {
            return;
        }
        let model = self.options.client.info().model.clone();
        self.emit(Event::Usage {
            cost_usd: atto_llm::cost_usd(&model, usage),
            model,
            usage: *usage,
        });
    }

    /// Plain input while a plan waits: an edit by the parser, else a revision by the model
    /// (which an interrupt from `inbox` stops).
    pub(super) async fn refine_plan(&mut self, request: String, inbox: &mut Inbox) {
        let Some(plan) = self.planner.waiting.clone() else {
            return;
        };
        let parsed = edit::parse(&request).map(|e| edit::apply(&plan, &e));
        let (revised, source) = match parsed {
            Some(Ok(revised)) => (revised, RevisionSource::Parser),
            Some(Err(EditError::Invalid(message))) => {
                self.emit(Event::Error {
                    message: format!("{message}; the plan is unchanged (/show-plan shows it)"),
                });
                return;
            }
            Some(Err(EditError::Unclear)) | None => {
                let generated = self
                    .ask_model(
                        generate::revision_request(&plan, &request),
                        &plan.task,
                        inbox,
                    )
                    .await;
                match generated.plan {
                    Ok(mut revised) => {
                        revised.id.clone_from(&plan.id);
                        (revised, RevisionSource::Model)
                    }
                    Err(NoPlan::Cancelled) => {
                        self.emit(Event::PlanGenerationCancelled {
                            attempts: generated.attempts,
                            revision: true,
                        });
                        return;
                    }
                    Err(NoPlan::Invalid(error)) => {
                        self.emit(Event::PlanGenerationFailed {
                            error: format!(
                                "the model gave no valid revision after {} request(s): {error}. \
                                 The plan is unchanged; try a simpler edit such as \"remove \
                                 step 2\".",
                                generated.attempts
                            ),
                            attempts: generated.attempts,
                        });
                        return;
                    }
                }
            }
        };
        let diff = present::diff(&plan, &revised);
        self.planner.save(&revised).await;
        self.planner.waiting = Some(revised.clone());
        self.emit(Event::PlanRevised {
            plan: revised,
            request,
            source,
            diff,
        });
    }

    /// `/show-plan` while a task plan waits.
    pub(super) fn show_task_plan(&self) {
        if let Some(plan) = &self.planner.waiting {
            self.emit(Event::TaskPlanShown { plan: plan.clone() });
        }
    }

    /// `/reject` while a task plan waits.
    pub(super) async fn reject_task_plan(&mut self, reason: Option<String>) {
        let Some(mut plan) = self.planner.waiting.take() else {
            return;
        };
        plan.status = TaskPlanStatus::Rejected;
        self.planner.save(&plan).await;
        self.emit(Event::PlanRejected {
            plan_id: plan.id,
            reason,
        });
    }

    /// `/approve` while a task plan waits: runs its steps in dependency order.
    pub(super) async fn run_plan(&mut self, selection: PlanSelection, inbox: &mut Inbox) {
        if selection != PlanSelection::All {
            self.emit(Event::Error {
                message: "a task plan is approved as a whole: use /approve without a selection \
                          (leave steps out first with \"skip step N\" or \"remove step N\")"
                    .to_owned(),
            });
            return;
        }
        let Some(mut plan) = self.planner.waiting.take() else {
            return;
        };
        plan.status = TaskPlanStatus::Running;
        self.planner.save(&plan).await;
        let runnable = plan
            .steps
            .iter()
            .filter(|s| s.status == StepStatus::Pending)
            .count();
        self.emit(Event::PlanConfirmed {
            plan_id: plan.id.clone(),
            steps: u32::try_from(runnable).unwrap_or(u32::MAX),
        });
        for step in plan
            .steps
            .iter()
            .filter(|s| s.status == StepStatus::Skipped)
        {
            self.emit(Event::PlanStepSkipped {
                number: step.number,
                reason: "skipped by the user".to_owned(),
            });
        }
        let mut cancelled = false;
        while let Some(i) = execute::next_ready(&plan) {
            if !self.decide_step(&mut plan, i, inbox).await {
                cancelled = true;
                break;
            }
            match self.run_step(&mut plan, i, inbox).await {
                StepEnd::Completed(summary) => {
                    plan.steps[i].status = StepStatus::Completed;
                    plan.steps[i].result = Some(summary.clone());
                    self.emit(Event::PlanStepCompleted {
                        number: plan.steps[i].number,
                        summary,
                    });
                }
                StepEnd::Failed(error) => {
                    if self.step_failed(&mut plan, i, error).await {
                        break;
                    }
                }
                StepEnd::Cancelled => {
                    plan.steps[i].status = StepStatus::Failed;
                    plan.steps[i].result = Some("cancelled by the user".to_owned());
                    cancelled = true;
                    break;
                }
            }
            self.planner.save(&plan).await;
            if inbox.gone {
                cancelled = true;
                break;
            }
        }
        for step in plan
            .steps
            .iter_mut()
            .filter(|s| s.status == StepStatus::Pending)
        {
            step.result = Some("not run: the plan stopped before it".to_owned());
        }
        plan.status = if cancelled {
            TaskPlanStatus::Cancelled
        } else {
            execute::final_status(&plan)
        };
        self.planner.save(&plan).await;
        self.emit(Event::PlanSummary {
            plan_id: plan.id.clone(),
            status: plan.status,
            outcomes: execute::outcomes(&plan),
        });
    }

    /// A decision-point step waits for the user's choice; `false` when the plan is to stop.
    async fn decide_step(&mut self, plan: &mut TaskPlan, i: usize, inbox: &mut Inbox) -> bool {
        let number = plan.steps[i].number;
        let Some(decision) = plan.steps[i].decision.as_mut() else {
            return true;
        };
        if decision.choice.is_some() {
            return true;
        }
        loop {
            self.emit(Event::PlanDecisionRequired {
                number,
                question: decision.question.clone(),
                options: decision.options.clone(),
            });
            match inbox.next().await {
                Some(Op::PlanDecision { number: n, choice }) if n == number => {
                    let picked = choice
                        .trim()
                        .parse::<usize>()
                        .ok()
                        .and_then(|k| decision.options.get(k.wrapping_sub(1)))
                        .or_else(|| {
                            decision
                                .options
                                .iter()
                                .find(|o| o.eq_ignore_ascii_case(choice.trim()))
                        })
                        .cloned();
                    match picked {
                        Some(option) => {
                            decision.choice = Some(option);
                            return true;
                        }
                        None => self.emit(Event::Error {
                            message: format!(
                                "\"{choice}\" is not one of the options; answer with an \
                                 option's number or text"
                            ),
                        }),
                    }
                }
                Some(Op::PlanDecision { number: n, .. }) => self.emit(Event::Error {
                    message: format!("step {number} waits for a decision, not step {n}"),
                }),
                Some(Op::Interrupt) | None => return false,
                Some(other @ Op::Shutdown) => {
                    inbox.defer(other);
                    return false;
                }
                // Answered once the plan is done.
                Some(other) => inbox.defer(other),
            }
        }
    }

    /// Runs step `i` as a turn: checkpoint, instruction, budget, and its report.
    async fn run_step(&mut self, plan: &mut TaskPlan, i: usize, inbox: &mut Inbox) -> StepEnd {
        let number = plan.steps[i].number;
        let checkpoint = self.keeper.before_step(self.turns + 1, number).await;
        plan.steps[i].status = StepStatus::InProgress;
        plan.steps[i].checkpoint = checkpoint;
        self.planner.save(plan).await;
        self.emit(Event::PlanStepStarted {
            number,
            description: plan.steps[i].description.clone(),
            checkpoint,
        });
        let budget = plan.steps[i].token_budget;
        let saved_limit = self.options.limits.max_tokens;
        self.options.limits.max_tokens = Some(saved_limit.map_or(budget, |max| max.min(budget)));
        self.tool_specs.push(report::spec(&self.planner.slot));
        report::take(&self.planner.slot);
        let result = self.drive_turn(execute::step_prompt(plan, i), inbox).await;
        self.tool_specs.pop();
        self.options.limits.max_tokens = saved_limit;
        let reported = report::take(&self.planner.slot);
        let end = step_end(&result, reported, budget);
        let turn = self.turns;
        self.charge_goals(&result).await;
        self.emit(Event::TurnCompleted { turn, result });
        end
    }

    /// Handles a failed step; whether the plan stops.
    async fn step_failed(&mut self, plan: &mut TaskPlan, i: usize, error: String) -> bool {
        let number = plan.steps[i].number;
        plan.steps[i].status = StepStatus::Failed;
        plan.steps[i].result = Some(error.clone());
        if self.planner.settings.auto_rollback_on_failure {
            let rolled_back = match plan.steps[i].checkpoint {
                Some(id) => {
                    let restored = self.keeper.restore(id).await;
                    let ok = restored.is_ok();
                    self.restored(id, restored);
                    ok
                }
                None => {
                    self.emit(Event::Warning {
                        message: format!(
                            "step {number} had no checkpoint, so its file changes could not be \
                             rolled back; check them with git diff"
                        ),
                    });
                    false
                }
            };
            self.emit(Event::PlanStepFailed {
                number,
                error,
                rolled_back,
            });
            return true;
        }
        self.emit(Event::PlanStepFailed {
            number,
            error,
            rolled_back: false,
        });
        for skipped in execute::skip_dependents(plan, i) {
            self.emit(Event::PlanStepSkipped {
                number: skipped,
                reason: format!("it depends on step {number}, which failed"),
            });
        }
        false
    }
}

/// How a step's turn ended, from the turn's result, the model's report and the budget.
fn step_end(result: &FinalResult, reported: Option<report::StepReport>, budget: u64) -> StepEnd {
    let used = result.usage.input_tokens
        + result.usage.output_tokens
        + result.usage.cache_read_tokens
        + result.usage.cache_write_tokens;
    match (result.status, reported) {
        (TurnStatus::Cancelled, _) => StepEnd::Cancelled,
        (_, Some(report)) if report.failed => StepEnd::Failed(report.summary),
        (TurnStatus::LimitReached, _) => StepEnd::Failed(format!(
            "stopped at its token budget ({used} of {budget} tokens used): {}",
            result.error.as_deref().unwrap_or("limit reached")
        )),
        (TurnStatus::Failed, _) => StepEnd::Failed(
            result
                .error
                .clone()
                .unwrap_or_else(|| "the step's turn failed".to_owned()),
        ),
        (TurnStatus::Completed, _) if used > budget => {
            StepEnd::Failed(format!("used {used} tokens, over its budget of {budget}"))
        }
        (TurnStatus::Completed, Some(report)) => StepEnd::Completed(report.summary),
        (TurnStatus::Completed, None) => StepEnd::Completed(
            result
                .text
                .lines()
                .next()
                .filter(|l| !l.trim().is_empty())
                .unwrap_or("done")
                .to_owned(),
        ),
    }
}
