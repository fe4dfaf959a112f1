//! A swarm started from this session (`/swarm "task"`), as its `swarm.*` events tell it:
//! its id, phase and goal, its tasks (indented by dependency depth, with status, attempts,
//! last score, the worker's model and latest activity, the pending retry and why a task
//! ended), tokens and cost against the cap, tripped models, and what it asks a person: the
//! plan, workers' approvals and stuck tasks. A start, task ends, notices and the summary
//! also get a line in the transcript.
//!
//! The swarm runs in atto-swarm's coordinator behind a channel; this module only folds
//! what it reports and keeps what is being asked. It never sends anything: `run` answers
//! with `SwarmInput`s. Drawing lives in `panels::swarm` and `view::intervention`.

use std::collections::VecDeque;

use atto_present::swarm as present;
use atto_protocol::quality::{CompileError, TaskKind};
use atto_protocol::swarm::{SwarmEvent, SwarmTask, TaskStatus};
use atto_protocol::{ApprovalDecision, ApprovalRequest};

use super::{App, ApprovalDialog, Panel};
use crate::transcript::Kind;
use crate::view::text::sanitize;

/// Where the swarm stands, as this front end knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Phase {
    /// Launched; the coordinator has not said its id yet.
    Starting,
    /// Decomposing and enriching the task.
    Planning,
    /// The plan waits for the person's yes.
    AwaitingConfirmation,
    /// Workers are running.
    Running,
    /// Asked to stop; waiting for the coordinator's summary.
    Stopping,
    /// The coordinator said it ended (`finished`, `interrupted`, `failed`).
    Finished {
        /// Its final status word.
        status: String,
        /// The Markdown report.
        report: String,
    },
    /// The channel closed without a summary (the coordinator failed to start or died).
    Lost,
}

/// One task of the swarm, with what its events said since the plan.
#[derive(Debug, Clone, PartialEq)]
pub struct SwarmTaskRow {
    /// Task id.
    pub id: String,
    /// What kind of work.
    pub kind: TaskKind,
    /// What to do (first line shown).
    pub description: String,
    /// Tasks it waits for.
    pub dependencies: Vec<String>,
    /// Its depth in the dependency graph (0: no dependencies), for indentation.
    pub depth: usize,
    /// Where it stands.
    pub status: TaskStatus,
    /// Attempts dispatched so far.
    pub attempts: u32,
    /// The last judged score.
    pub score: Option<u8>,
    /// The model of its latest attempt.
    pub model: Option<String>,
    /// What its worker did last (`bash: pytest -q`).
    pub activity: Option<String>,
    /// A retry waiting for its delay.
    pub retry: Option<Retry>,
    /// Why it failed or was skipped.
    pub reason: Option<String>,
}

/// A retry the coordinator scheduled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Retry {
    /// The next attempt's number.
    pub attempt: u32,
    /// Milliseconds until it may be dispatched.
    pub delay_ms: u64,
    /// Why the last attempt failed.
    pub reason: String,
}

/// Tokens and cost against the caps, as the last `swarm.budget` said.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SwarmBudget {
    /// Tokens used so far.
    pub tokens: u64,
    /// Token cap.
    pub max_tokens: Option<u64>,
    /// Dollars so far (`None`: a price was unknown).
    pub cost_usd: Option<f64>,
    /// Dollar cap.
    pub max_usd: Option<f64>,
    /// Whether a `swarm.budget` event said the caps (the summary alone does not).
    pub caps_known: bool,
}

/// A task out of attempts, waiting for a person's decision.
#[derive(Debug, Clone, PartialEq)]
pub struct Intervention {
    /// Task id.
    pub task_id: String,
    /// Its description.
    pub description: String,
    /// Attempts made.
    pub attempts: u32,
    /// The last error.
    pub last_error: String,
    /// Compilation errors of the last attempt.
    pub compilation_errors: Vec<CompileError>,
    /// `error`, `quality`, `timeout`, `budget`.
    pub failure_mode: String,
    /// The model of the last attempt.
    pub model: String,
}

/// The swarm of this session.
#[derive(Debug, Clone, PartialEq)]
pub struct Swarm {
    /// Its id, once the coordinator said it.
    pub id: Option<String>,
    /// What the person asked.
    pub goal: String,
    /// Where it stands.
    pub phase: Phase,
    /// The tasks, in the decomposer's order.
    pub tasks: Vec<SwarmTaskRow>,
    /// Tokens and cost against the caps.
    pub budget: Option<SwarmBudget>,
    /// Models whose circuit breaker is open, with their health.
    pub tripped: Vec<(String, u8)>,
    /// Workers' approvals waiting to be shown (one shows at a time, in `App::approval`).
    approvals: VecDeque<(String, ApprovalRequest)>,
    /// Stuck tasks; the first one's dialog shows.
    interventions: VecDeque<Intervention>,
    /// Guidance being typed in the intervention dialog.
    pub guidance: Option<String>,
    /// The swarm file is not trusted: what was sent to show, line by line, until answered.
    trust_question: Option<Vec<String>>,
}

impl Swarm {
    fn new(goal: &str) -> Swarm {
        Swarm {
            id: None,
            goal: sanitize(goal).into_owned(),
            phase: Phase::Starting,
            tasks: Vec::new(),
            budget: None,
            tripped: Vec::new(),
            approvals: VecDeque::new(),
            interventions: VecDeque::new(),
            guidance: None,
            trust_question: None,
        }
    }

    /// Whether the coordinator is still going (its summary has not come).
    pub fn running(&self) -> bool {
        !matches!(self.phase, Phase::Finished { .. } | Phase::Lost)
    }

    /// Tasks passed and all tasks.
    pub fn progress(&self) -> (usize, usize) {
        let passed = self
            .tasks
            .iter()
            .filter(|t| t.status == TaskStatus::Passed)
            .count();
        (passed, self.tasks.len())
    }

    /// The first eight characters of the id, or `…` before it is known.
    pub fn short_id(&self) -> &str {
        self.id.as_deref().map_or("…", short)
    }

    /// The intervention whose dialog shows (the oldest).
    pub fn intervention(&self) -> Option<&Intervention> {
        self.interventions.front()
    }

    fn task_mut(&mut self, id: &str) -> Option<&mut SwarmTaskRow> {
        self.tasks.iter_mut().find(|t| t.id == id)
    }

    /// Replaces the task list with a plan's (a re-decomposition replaces it again).
    fn set_plan(&mut self, tasks: &[SwarmTask]) {
        let depths = atto_present::swarm::depths(tasks);
        self.tasks = tasks
            .iter()
            .zip(depths)
            .map(|(t, depth)| SwarmTaskRow {
                id: sanitize(&t.id).into_owned(),
                kind: t.kind,
                description: sanitize(&t.description).into_owned(),
                dependencies: t
                    .dependencies
                    .iter()
                    .map(|d| sanitize(d).into_owned())
                    .collect(),
                depth,
                status: t.status,
                attempts: t.attempts.len() as u32,
                score: t.score(),
                model: t.attempts.last().map(|a| sanitize(&a.model).into_owned()),
                activity: None,
                retry: None,
                reason: t.reason.as_deref().map(|r| sanitize(r).into_owned()),
            })
            .collect();
    }

    /// The coordinator ended: nothing is asked any more, and no worker runs (an
    /// interrupted attempt is done again on resume, so its task shows pending).
    fn settle(&mut self) {
        self.approvals.clear();
        self.interventions.clear();
        self.guidance = None;
        for t in &mut self.tasks {
            if t.status == TaskStatus::Running {
                t.status = TaskStatus::Pending;
                t.activity = None;
            }
        }
    }

    /// A task reached a final status: what it asked no longer needs an answer.
    fn forget_questions(&mut self, task_id: &str) {
        self.approvals.retain(|(t, _)| t != task_id);
        if self.intervention().is_some_and(|i| i.task_id == task_id) {
            self.guidance = None;
        }
        self.interventions.retain(|i| i.task_id != task_id);
    }
}

impl App {
    /// The session's swarm, running or ended (until the next `/swarm "task"`).
    pub fn swarm(&self) -> Option<&Swarm> {
        self.swarm.as_ref()
    }

    /// Whether a swarm of this session has not ended yet.
    pub fn swarm_running(&self) -> bool {
        self.swarm.as_ref().is_some_and(Swarm::running)
    }

    /// A swarm was launched for `goal`: its overlay opens and shows it as it goes.
    pub fn start_swarm(&mut self, goal: &str) {
        // An ended swarm's question still showing answers nothing now.
        self.drop_swarm_approval();
        self.swarm = Some(Swarm::new(goal));
        self.panel = Some(Panel::Swarm);
        self.quiet(format!(
            "swarm: splitting \"{}\" into tasks… (F3 or /swarm shows or hides the overlay)",
            first_line(goal)
        ));
    }

    /// The plan waiting for confirmation, when one is.
    pub fn swarm_plan_waiting(&self) -> bool {
        self.swarm
            .as_ref()
            .is_some_and(|s| s.phase == Phase::AwaitingConfirmation)
    }

    /// The person answered the plan: the swarm goes on (or ends, declined).
    pub fn swarm_plan_answered(&mut self, yes: bool) {
        if let Some(s) = self.swarm.as_mut() {
            s.phase = if yes { Phase::Running } else { Phase::Stopping };
        }
        if !yes {
            self.quiet("swarm: plan declined".to_owned());
        }
    }

    /// The swarm was asked to stop.
    pub fn swarm_stopping(&mut self) {
        let Some(s) = self.swarm.as_mut() else {
            return;
        };
        s.phase = Phase::Stopping;
        let resume = s.id.as_deref().map_or_else(
            || "atto swarm --resume".to_owned(),
            |id| format!("atto swarm --resume {}", short(id)),
        );
        self.push_notice(&format!(
            "stopping the swarm's workers; the swarm can be resumed with {resume}"
        ));
    }

    /// The intervention whose dialog shows: only when no approval dialog covers it.
    pub fn intervention(&self) -> Option<&Intervention> {
        if self.approval.is_some() {
            return None;
        }
        self.swarm.as_ref()?.intervention()
    }

    /// Guidance typed in the intervention dialog, while it is typed.
    pub fn guidance_mut(&mut self) -> Option<&mut String> {
        if self.approval.is_some() {
            return None;
        }
        self.swarm.as_mut()?.guidance.as_mut()
    }

    /// Starts or stops typing guidance in the intervention dialog.
    pub fn set_guidance(&mut self, typing: Option<String>) {
        if let Some(s) = self.swarm.as_mut() {
            s.guidance = typing;
        }
    }

    /// The person answered the showing intervention: its dialog closes; the task id.
    pub fn take_intervention(&mut self) -> Option<String> {
        let s = self.swarm.as_mut()?;
        s.guidance = None;
        s.interventions.pop_front().map(|i| i.task_id)
    }

    /// Shows the next worker approval in the approval dialog when nothing else is asked
    /// there.
    pub fn promote_swarm_question(&mut self) {
        if self.approval.is_some() {
            return;
        }
        let Some((task_id, request)) = self.swarm.as_mut().and_then(|s| s.approvals.pop_front())
        else {
            return;
        };
        self.approval = Some(ApprovalDialog {
            request,
            input: None,
            swarm_task: Some(task_id),
        });
        self.dialog_scroll = 0;
    }

    /// The session asks an approval of its own while a worker's shows: the worker's goes
    /// back to wait first in line.
    pub(super) fn requeue_swarm_approval(&mut self) {
        let Some(dialog) = self.approval.take_if(|d| d.swarm_task.is_some()) else {
            return;
        };
        if let (Some(task), Some(s)) = (dialog.swarm_task, self.swarm.as_mut()) {
            s.approvals.push_front((task, dialog.request));
        }
    }

    /// Closes the approval dialog when it is a worker's.
    fn drop_swarm_approval(&mut self) {
        self.approval.take_if(|d| d.swarm_task.is_some());
    }

    /// Folds one swarm event in; true when something visible changed (every event of a
    /// swarm this session runs does).
    pub fn on_swarm_event(&mut self, event: &SwarmEvent) -> bool {
        if self.swarm.is_none() {
            return false;
        }
        if let Some(kind) = self.fold_swarm(event) {
            self.push(kind);
        }
        // Whatever ended may have been the question showing.
        let settled = |task: &str| {
            self.swarm.as_ref().is_some_and(|s| {
                !s.running() || s.tasks.iter().any(|t| t.id == task && t.status.is_final())
            })
        };
        if self
            .approval
            .as_ref()
            .and_then(|d| d.swarm_task.as_deref())
            .is_some_and(settled)
        {
            self.drop_swarm_approval();
        }
        self.promote_swarm_question();
        true
    }

    /// The swarm's state after `event`, and the transcript line it is worth, if any.
    fn fold_swarm(&mut self, event: &SwarmEvent) -> Option<Kind> {
        let s = self.swarm.as_mut()?;
        let mut line: Option<Kind> = None;
        match event {
            SwarmEvent::Started {
                swarm_id, resumed, ..
            } => line = Some(s.started(swarm_id, *resumed)),
            SwarmEvent::Decomposed { tasks, .. } => s.set_plan(tasks),
            SwarmEvent::Enriched { .. } => {}
            SwarmEvent::Plan { tasks } => {
                // The plan is confirmed in the overlay: it opens to ask.
                if s.plan_waits(tasks) {
                    self.panel = Some(Panel::Swarm);
                    self.show_keys = false;
                }
            }
            SwarmEvent::TaskStarted { .. }
            | SwarmEvent::TaskActivity { .. }
            | SwarmEvent::Permission { .. }
            | SwarmEvent::TaskChecked { .. }
            | SwarmEvent::TaskRetrying { .. }
            | SwarmEvent::TaskPassed { .. }
            | SwarmEvent::TaskFailed { .. }
            | SwarmEvent::TaskSkipped { .. }
            | SwarmEvent::InterventionNeeded { .. } => line = s.fold_task(event)?,
            SwarmEvent::ModelHealth {
                model,
                tripped,
                health,
            } => s.model_health(model, *tripped, *health),
            // The swarm panel shows the tripped model already; the countdown is for the
            // line front ends.
            SwarmEvent::ModelWaiting { .. } => return None,
            SwarmEvent::Budget {
                tokens,
                max_tokens,
                cost_usd,
                max_usd,
            } => {
                s.budget = Some(SwarmBudget {
                    tokens: *tokens,
                    max_tokens: *max_tokens,
                    cost_usd: *cost_usd,
                    max_usd: *max_usd,
                    caps_known: true,
                });
            }
            SwarmEvent::TrustNeeded { question } => s.trust_question = Some(sanitized(question)),
            SwarmEvent::Notice { text } => {
                line = Some(Kind::Notice(format!("swarm: {}", sanitize(text))));
            }
            SwarmEvent::Finished { .. } => line = s.finished(event),
        }
        line
    }

    /// The swarm's channel closed: without a summary, it is said to be lost.
    pub fn swarm_closed(&mut self) {
        let Some(s) = self.swarm.as_mut() else {
            return;
        };
        s.trust_question = None;
        if !s.running() {
            return;
        }
        s.phase = Phase::Lost;
        s.settle();
        let resume = s.id.as_deref().map_or_else(String::new, |id| {
            format!("; atto swarm --resume {} continues it", short(id))
        });
        self.drop_swarm_approval();
        self.push_error(&format!(
            "the swarm stopped without its summary (see the notices above){resume}"
        ));
    }
}

/// The first eight characters of a swarm id, as `--resume` takes it.
fn short(id: &str) -> &str {
    id.get(..8).unwrap_or(id)
}

/// The first line of `text`, sanitized.
fn first_line(text: &str) -> String {
    let line = text.trim().lines().next().unwrap_or("");
    sanitize(line).into_owned()
}

/// What each swarm event does to the swarm's state, for `App::fold_swarm`.
impl Swarm {
    /// A task's event: its row after it, and the transcript line it is worth, if any
    /// (`Some(None)`: folded, no line; `None`: no such task, or nothing to fold).
    fn fold_task(&mut self, event: &SwarmEvent) -> Option<Option<Kind>> {
        match event {
            SwarmEvent::TaskStarted {
                task_id,
                attempt,
                model,
                ..
            } => self.task_started(task_id, *attempt, model)?,
            SwarmEvent::TaskActivity { task_id, activity } => {
                self.task_mut(task_id)?.activity = Some(first_line(activity));
            }
            SwarmEvent::Permission {
                task_id,
                request,
                tier,
                decision,
            } => self.permission(task_id, request, tier, decision.as_ref())?,
            SwarmEvent::TaskChecked { task_id, score, .. } => {
                let t = self.task_mut(task_id)?;
                if score.is_some() {
                    t.score = *score;
                }
            }
            SwarmEvent::TaskRetrying {
                task_id,
                attempt,
                delay_ms,
                reason,
            } => self.task_retrying(task_id, *attempt, *delay_ms, reason)?,
            SwarmEvent::TaskPassed {
                task_id,
                attempts,
                score,
                ..
            } => return self.task_passed(task_id, *attempts, *score).map(Some),
            SwarmEvent::TaskFailed {
                task_id,
                attempts,
                reason,
            } => return self.task_failed(task_id, *attempts, reason).map(Some),
            SwarmEvent::TaskSkipped { task_id, reason } => {
                return self.task_skipped(task_id, reason).map(Some);
            }
            SwarmEvent::InterventionNeeded { task_id, .. } => {
                self.intervention_needed(task_id, event)
            }
            // The swarm's own events are `App::fold_swarm`'s.
            SwarmEvent::Started { .. }
            | SwarmEvent::Decomposed { .. }
            | SwarmEvent::Enriched { .. }
            | SwarmEvent::Plan { .. }
            | SwarmEvent::ModelHealth { .. }
            | SwarmEvent::ModelWaiting { .. }
            | SwarmEvent::Budget { .. }
            | SwarmEvent::TrustNeeded { .. }
            | SwarmEvent::Notice { .. }
            | SwarmEvent::Finished { .. } => return None,
        }
        Some(None)
    }

    /// The plan to confirm: true when it waits for the person (not when the swarm was
    /// stopped while planning: the coordinator takes the stop as the answer).
    fn plan_waits(&mut self, tasks: &[SwarmTask]) -> bool {
        self.set_plan(tasks);
        if self.phase == Phase::Stopping {
            return false;
        }
        self.phase = Phase::AwaitingConfirmation;
        true
    }

    fn started(&mut self, swarm_id: &str, resumed: bool) -> Kind {
        self.id = Some(sanitize(swarm_id).into_owned());
        if self.phase == Phase::Starting {
            self.phase = Phase::Planning;
        }
        Kind::Quiet(format!(
            "swarm {}{} started",
            self.short_id(),
            if resumed { " (resumed)" } else { "" }
        ))
    }

    fn task_started(&mut self, task_id: &str, attempt: u32, model: &str) -> Option<()> {
        if matches!(self.phase, Phase::Planning | Phase::AwaitingConfirmation) {
            self.phase = Phase::Running;
        }
        let t = self.task_mut(task_id)?;
        t.status = TaskStatus::Running;
        t.attempts = t.attempts.max(attempt);
        t.model = Some(sanitize(model).into_owned());
        t.activity = None;
        t.retry = None;
        Some(())
    }

    /// A worker's approval: an asked one waits in line, a refused one shows on its task.
    fn permission(
        &mut self,
        task_id: &str,
        request: &ApprovalRequest,
        tier: &str,
        decision: Option<&ApprovalDecision>,
    ) -> Option<()> {
        match (tier, decision) {
            ("asked", None) => self
                .approvals
                .push_back((task_id.to_owned(), request.clone())),
            (_, Some(d)) if *d != ApprovalDecision::Yes => {
                self.task_mut(task_id)?.activity = Some(format!(
                    "denied {}: {}",
                    sanitize(&request.tool),
                    first_line(&request.subject)
                ));
            }
            _ => return None,
        }
        Some(())
    }

    fn task_passed(&mut self, task_id: &str, attempts: u32, score: Option<u8>) -> Option<Kind> {
        self.forget_questions(task_id);
        let t = self.task_mut(task_id)?;
        t.status = TaskStatus::Passed;
        t.attempts = attempts;
        t.score = score.or(t.score);
        t.retry = None;
        Some(Kind::Quiet(format!(
            "swarm: {}",
            present::passed_line(&t.id, attempts, score)
        )))
    }

    fn task_failed(&mut self, task_id: &str, attempts: u32, reason: &str) -> Option<Kind> {
        self.forget_questions(task_id);
        let t = self.task_mut(task_id)?;
        t.status = TaskStatus::Failed;
        t.attempts = attempts;
        t.retry = None;
        t.reason = Some(first_line(reason));
        Some(Kind::Warning(format!(
            "swarm: {}",
            present::failed_line(&t.id, &first_line(reason))
        )))
    }

    fn task_skipped(&mut self, task_id: &str, reason: &str) -> Option<Kind> {
        self.forget_questions(task_id);
        let t = self.task_mut(task_id)?;
        t.status = TaskStatus::Skipped;
        t.retry = None;
        t.reason = Some(first_line(reason));
        Some(Kind::Quiet(format!(
            "swarm: {}",
            present::skipped_line(&t.id, &first_line(reason))
        )))
    }

    fn task_retrying(
        &mut self,
        task_id: &str,
        attempt: u32,
        delay_ms: u64,
        reason: &str,
    ) -> Option<()> {
        let t = self.task_mut(task_id)?;
        t.status = TaskStatus::Pending;
        t.activity = None;
        t.retry = Some(Retry {
            attempt,
            delay_ms,
            reason: first_line(reason),
        });
        Some(())
    }

    /// A stuck task waits for a person; a newer question about it replaces the older.
    fn intervention_needed(&mut self, task_id: &str, event: &SwarmEvent) {
        let SwarmEvent::InterventionNeeded {
            description,
            attempts,
            last_error,
            compilation_errors,
            failure_mode,
            model,
            ..
        } = event
        else {
            return;
        };
        if let Some(t) = self.task_mut(task_id) {
            t.status = TaskStatus::AwaitingIntervention;
            t.attempts = *attempts;
            t.activity = None;
        }
        self.interventions.retain(|i| i.task_id != *task_id);
        self.interventions.push_back(Intervention {
            task_id: sanitize(task_id).into_owned(),
            description: sanitize(description).into_owned(),
            attempts: *attempts,
            last_error: sanitize(last_error).into_owned(),
            compilation_errors: compilation_errors
                .iter()
                .map(|e| CompileError {
                    file: sanitize(&e.file).into_owned(),
                    message: sanitize(&e.message).into_owned(),
                    ..e.clone()
                })
                .collect(),
            failure_mode: sanitize(failure_mode).into_owned(),
            model: sanitize(model).into_owned(),
        });
    }

    /// A model's circuit breaker tripped (with its health) or closed.
    fn model_health(&mut self, model: &str, tripped: bool, health: u8) {
        let model = sanitize(model).into_owned();
        self.tripped.retain(|(m, _)| *m != model);
        if tripped {
            self.tripped.push((model, health));
        }
    }

    /// The swarm's end: its summary line, and the state settled.
    fn finished(&mut self, event: &SwarmEvent) -> Option<Kind> {
        let SwarmEvent::Finished {
            swarm_id,
            status,
            passed,
            failed,
            skipped,
            tokens,
            cost_usd,
            report,
            error,
        } = event
        else {
            return None;
        };
        let id = sanitize(swarm_id).into_owned();
        let status = sanitize(status).into_owned();
        let report = sanitize(report).into_owned();
        let mut text = format!(
            "swarm {} {status}: {passed} passed, {failed} failed, {skipped} skipped · \
             {} tokens · {} · report {report}",
            short(&id),
            crate::status::tokens(*tokens),
            crate::transcript::cost(*cost_usd),
        );
        if let Some(error) = error {
            text.push_str(&format!("\nstopped: {}", sanitize(error)));
        }
        if status == "interrupted" {
            text.push_str(&format!(
                "\nthe swarm can be resumed with atto swarm --resume {}",
                short(&id)
            ));
        }
        self.id = Some(id);
        self.phase = Phase::Finished { status, report };
        self.settle();
        // The caps are the last budget event's; without one they are not known.
        let b = self.budget.get_or_insert_with(SwarmBudget::default);
        b.tokens = *tokens;
        b.cost_usd = *cost_usd;
        Some(Kind::Notice(text))
    }
}

impl App {
    /// The question the swarm waits on before anything of it starts: its file is not
    /// trusted. Drawn by `view::swarm_trust`.
    pub fn swarm_trust_question(&self) -> Option<&[String]> {
        self.swarm.as_ref()?.trust_question.as_deref()
    }

    /// Closes the trust question; whether one was open (and so an answer is due).
    pub fn take_swarm_trust_question(&mut self) -> bool {
        self.swarm
            .as_mut()
            .and_then(|s| s.trust_question.take())
            .is_some()
    }
}

/// Each line of `text` made safe to draw, one entry per line.
fn sanitized(text: &[String]) -> Vec<String> {
    text.iter()
        .flat_map(|l| l.lines())
        .map(|l| sanitize(l).into_owned())
        .collect()
}
