//! The session's side of the structured planner: drafting a plan (`/auto`, or a prompt the
//! complexity check sends to planning), refining the waiting plan with plain input,
//! showing and rejecting it, and running an approved plan step by step — a checkpoint, a
//! model turn with the step's instruction and budget, the outcome, rollback or skipping on
//! failure, a summary at the end. With parallel steps on, batches of independent steps run
//! side by side (`parallel`) and are settled here the same way.

use std::sync::Arc;

use atto_protocol::{
    Event, FinalResult, Op, PlanSelection, RevisionSource, StepStatus, TaskPlan, TaskPlanStatus,
    TurnStatus, Usage,
};

use atto_tools::CancellationToken;

use super::Session;
use super::drive::Inbox;
use super::step_quality::{self, StepWork};
use atto_planner::plan::edit::{self, EditError};
use atto_planner::plan::generate::{Ask, Generated, NoPlan};
use atto_planner::plan::{execute, generate, report};
use atto_quality::Verdict;

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

/// `Op::PlannerSettings`: the settings to change; `None` keeps one.
pub(super) struct SettingsChange {
    pub auto_rollback: Option<bool>,
    pub detect: Option<bool>,
    pub threshold: Option<f64>,
    pub parallel: Option<bool>,
}

/// How the plan goes on after a step or a batch; later variants win.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum PlanCourse {
    /// The next ready steps run.
    Go,
    /// A failure stopped the plan (auto-rollback).
    Stop,
    /// The user interrupted it.
    Cancelled,
}

/// What a failed step's rollback restores from its checkpoint.
enum Rollback {
    /// The whole workspace: the step ran alone.
    Checkpoint,
    /// Only the files its calls changed: other steps ran beside it.
    Paths(Vec<String>),
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
            && atto_planner::complexity::should_create_plan(
                &atto_planner::complexity::classify(text),
                settings.threshold,
            )
    }

    /// `Op::PlannerSettings`.
    pub(super) fn planner_settings(&mut self, change: SettingsChange) {
        let SettingsChange {
            auto_rollback,
            detect,
            threshold,
            parallel,
        } = change;
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
        if let Some(on) = parallel {
            settings.parallel = on;
        }
        let s = *settings;
        self.emit(Event::PlannerSettingsChanged {
            auto_rollback_on_failure: s.auto_rollback_on_failure,
            detect: s.detect,
            threshold: s.threshold,
            parallel: s.parallel,
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
        let diff = atto_planner::plan::diff(&plan, &revised);
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
            let batch = if self.planner.settings.parallel {
                execute::batch(&plan, &self.options.workspace)
            } else {
                vec![i]
            };
            let flow = if batch.len() > 1 {
                self.run_together(&mut plan, &batch, inbox).await
            } else {
                self.run_alone(&mut plan, i, inbox).await
            };
            match flow {
                PlanCourse::Go => {}
                PlanCourse::Stop => break,
                PlanCourse::Cancelled => {
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

    /// Runs step `i` on its own, after its decision point if it has one.
    async fn run_alone(&mut self, plan: &mut TaskPlan, i: usize, inbox: &mut Inbox) -> PlanCourse {
        if !self.decide_step(plan, i, inbox).await {
            return PlanCourse::Cancelled;
        }
        let (mut end, mut work) = self.run_step(plan, i, inbox, None).await;
        // Completed when the evidence says so: the quality checks pass it, or it is
        // tried again with what they found, until the retries run out.
        let mut attempt = 1;
        while matches!(end, StepEnd::Completed(_)) {
            let outcome = self.check_step(plan, i, &work, attempt, inbox).await;
            let check = step_quality::check_of(&outcome, attempt);
            match (outcome.verdict, outcome.retry) {
                (Verdict::Pass, _) => {
                    self.step_quality = Some(check);
                    break;
                }
                (Verdict::NeedsRetry, Some(retry)) => {
                    attempt += 1;
                    self.emit(Event::PlanStepRetrying {
                        number: plan.steps[i].number,
                        attempt,
                        quality: check,
                    });
                    (end, work) = self.run_step(plan, i, inbox, Some(&retry.render())).await;
                }
                _ => {
                    let why = check
                        .findings
                        .first()
                        .cloned()
                        .unwrap_or_else(|| "the quality checks did not pass it".to_owned());
                    self.step_quality = Some(check);
                    end = StepEnd::Failed(format!("not done after {attempt} attempt(s): {why}"));
                }
            }
        }
        self.settle(plan, i, end, Rollback::Checkpoint).await
    }

    /// Runs the steps at `batch` side by side (`parallel`), then settles each outcome in
    /// step order. A failed step rolls back only the files its own calls changed, so the
    /// steps beside it keep theirs; the plan stops after the batch.
    async fn run_together(
        &mut self,
        plan: &mut TaskPlan,
        batch: &[usize],
        inbox: &mut Inbox,
    ) -> PlanCourse {
        let workers = self.run_batch(plan, batch, inbox).await;
        let mut flow = PlanCourse::Go;
        for worker in workers {
            let Some(result) = worker.result else {
                continue;
            };
            let i = worker.index;
            let end = step_end(&result, worker.report, plan.steps[i].token_budget);
            let number = plan.steps[i].number;
            // Not streamed while the steps ran: shown once, now.
            if !result.text.trim().is_empty() {
                self.emit(Event::Notice {
                    message: format!("step {number}: {}", result.text.trim()),
                });
            }
            let changed = result.files_changed.clone();
            self.charge_turn_time(&result).await;
            self.emit(Event::TurnCompleted {
                turn: worker.turn,
                result,
            });
            let settled = self.settle(plan, i, end, Rollback::Paths(changed)).await;
            flow = flow.max(settled);
        }
        flow
    }

    /// Records how step `i` ended; how the plan goes on.
    async fn settle(
        &mut self,
        plan: &mut TaskPlan,
        i: usize,
        end: StepEnd,
        rollback: Rollback,
    ) -> PlanCourse {
        match end {
            StepEnd::Completed(summary) => {
                plan.steps[i].status = StepStatus::Completed;
                plan.steps[i].result = Some(summary.clone());
                let quality = self.step_quality.take();
                self.emit(Event::PlanStepCompleted {
                    number: plan.steps[i].number,
                    summary,
                    quality,
                });
                PlanCourse::Go
            }
            StepEnd::Failed(error) => {
                if self.step_failed(plan, i, error, rollback).await {
                    PlanCourse::Stop
                } else {
                    PlanCourse::Go
                }
            }
            StepEnd::Cancelled => {
                plan.steps[i].status = StepStatus::Failed;
                plan.steps[i].result = Some("cancelled by the user".to_owned());
                PlanCourse::Cancelled
            }
        }
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

    /// Runs step `i` as a turn: checkpoint, instruction, budget, and its report. A retry
    /// (`retry`: the last attempt's findings) keeps the first attempt's checkpoint, so a
    /// rollback undoes every attempt.
    async fn run_step(
        &mut self,
        plan: &mut TaskPlan,
        i: usize,
        inbox: &mut Inbox,
        retry: Option<&str>,
    ) -> (StepEnd, StepWork) {
        let number = plan.steps[i].number;
        if retry.is_none() {
            let checkpoint = self.keeper.before_step(self.turns + 1, number).await;
            plan.steps[i].status = StepStatus::InProgress;
            plan.steps[i].checkpoint = checkpoint;
            self.planner.save(plan).await;
            self.emit(Event::PlanStepStarted {
                number,
                description: plan.steps[i].description.clone(),
                checkpoint,
            });
        }
        let mut prompt = execute::step_prompt(plan, i);
        if let Some(retry) = retry {
            prompt = format!("{prompt}\n\n{retry}\nFix what is listed above, then report.");
        }
        let history_from = self.history.len();
        let budget = plan.steps[i].token_budget;
        let saved_limit = self.options.limits.max_tokens;
        self.options.limits.max_tokens = Some(saved_limit.map_or(budget, |max| max.min(budget)));
        self.tool_specs
            .push(report::spec(&self.planner.step_report));
        report::take(&self.planner.step_report);
        let result = self.drive_turn(prompt, inbox).await;
        // Not `pop`: external tools may have been appended during the step.
        self.tool_specs.retain(|s| s.name != report::NAME);
        self.options.limits.max_tokens = saved_limit;
        let reported = report::take(&self.planner.step_report);
        let end = step_end(&result, reported, budget);
        let work = StepWork {
            text: result.text.clone(),
            files: result.files_changed.clone(),
            history_from,
        };
        let turn = self.turns;
        self.charge_turn_time(&result).await;
        self.emit(Event::TurnCompleted { turn, result });
        (end, work)
    }

    /// Handles a failed step; whether the plan stops.
    async fn step_failed(
        &mut self,
        plan: &mut TaskPlan,
        i: usize,
        error: String,
        rollback: Rollback,
    ) -> bool {
        let number = plan.steps[i].number;
        plan.steps[i].status = StepStatus::Failed;
        plan.steps[i].result = Some(error.clone());
        if self.planner.settings.auto_rollback_on_failure {
            let rolled_back = match plan.steps[i].checkpoint {
                Some(id) => {
                    let restored = match rollback {
                        Rollback::Checkpoint => self.keeper.restore(id).await,
                        Rollback::Paths(paths) => self.keeper.restore_paths(id, paths).await,
                    };
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
            let quality = self.step_quality.take();
            self.emit(Event::PlanStepFailed {
                number,
                error,
                rolled_back,
                quality,
            });
            return true;
        }
        let quality = self.step_quality.take();
        self.emit(Event::PlanStepFailed {
            number,
            error,
            rolled_back: false,
            quality,
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
    let used = atto_llm::total_tokens(&result.usage);
    match (result.status, reported) {
        (TurnStatus::Cancelled, _) => StepEnd::Cancelled,
        (_, Some(report)) if report.failed => StepEnd::Failed(report.summary),
        // The turn's own message names the limit that stopped it: rounds, time, the
        // step's token budget or its goal's.
        (TurnStatus::LimitReached, _) => StepEnd::Failed(format!(
            "{} ({used} of its {budget}-token budget used)",
            result.error.as_deref().unwrap_or("stopped at a limit")
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

#[cfg(test)]
mod tests {
    use super::{StepEnd, step_end};
    use atto_protocol::{FinalResult, TurnStatus, Usage};

    fn stopped(error: &str) -> FinalResult {
        FinalResult {
            status: TurnStatus::LimitReached,
            rounds: 3,
            usage: Usage {
                input_tokens: 900,
                output_tokens: 100,
                ..Usage::default()
            },
            cost_usd: None,
            files_changed: Vec::new(),
            text: String::new(),
            error: Some(error.to_owned()),
            failure: None,
            duration_ms: 1,
        }
    }

    #[test]
    fn a_failed_step_names_the_limit_that_stopped_it() {
        let rounds = step_end(
            &stopped("stopped after 3 model calls (the round limit)"),
            None,
            50_000,
        );
        match rounds {
            StepEnd::Failed(why) => {
                assert!(why.contains("round limit"), "{why}");
                assert!(why.contains("1000 of its 50000-token budget used"), "{why}");
                assert!(!why.starts_with("stopped at its token budget"), "{why}");
            }
            _ => panic!("not a failure"),
        }
        let time = step_end(&stopped("stopped at the time limit"), None, 50_000);
        assert!(
            matches!(time, StepEnd::Failed(why) if why.starts_with("stopped at the time limit"))
        );
    }
}
