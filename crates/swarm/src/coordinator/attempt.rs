//! One attempt of a task: starting its worker (in the workspace or a worktree of a
//! snapshot), checking what it did with the quality pipeline, merging a worktree back, and
//! turning the outcome into the task's next state (passed, retried after a backoff, waiting
//! for a person, failed). Also the worker's prompt.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use atto_llm::ModelClient;
use atto_protocol::{ApprovalDecision, ToolKind};
use atto_quality::{CommandRunner, Outcome, RetryContext, Verdict, WorkerResult};
use tokio::sync::{mpsc, watch};

use super::{Active, Coordinator, Done, SNAPSHOT_MAX, checks, jitter_ms};
use crate::budget::Reservation;
use crate::config::Isolation;
use crate::decompose;
use crate::events::SwarmEvent;
use crate::schedule;
use crate::task::{Attempt, SwarmTask, TaskStatus};
use crate::text::bounded;
use crate::worker::{self, Template, Vars};
use job::{Checking, Job, WorkerStart};

mod job;

impl Coordinator {
    pub(super) fn start(
        &mut self,
        task: SwarmTask,
        model: String,
        reservation: Reservation,
        budget_args: Vec<String>,
    ) {
        let attempt = task.attempts.len() as u32 + 1;
        if let Some(t) = self.state.task_mut(&task.id) {
            t.status = TaskStatus::Running;
        }
        self.not_before.remove(&task.id);
        let vars = Vars {
            atto: self.deps.atto.clone(),
            args: self.worker_args(&task, &model, budget_args),
            workspace: self.deps.workspace.display().to_string(),
            task_id: task.id.clone(),
            swarm_id: self.state.id.clone(),
        };
        let (stop, answers) = self.take_worker_slot(&task.id);
        self.emit(SwarmEvent::TaskStarted {
            task_id: task.id.clone(),
            attempt,
            model: model.clone(),
            pid: None,
        });
        let worker = WorkerStart {
            vars,
            template: Template::from_config(&self.config.worker_command),
            prompt: prompt(&self.state.goal, &task),
            timeout: Duration::from_secs(self.config.worker_timeout_secs.saturating_add(30)),
            stop,
            answers,
            messages: self.messages_tx.clone(),
            remote: self
                .config
                .launcher
                .is_remote()
                .then(|| crate::remote::attempt::Launch {
                    launcher: self.config.launcher,
                    slurm: self.config.slurm.clone(),
                    ssh: self.config.ssh.clone(),
                    hosts: self.hosts.clone(),
                }),
        };
        let checking = Checking {
            quality: self.config.quality.clone(),
            sandbox_for: self.deps.sandbox.clone(),
            person: checks::Person {
                task_id: task.id.clone(),
                asks: self.check_asks_tx.clone(),
            },
            judge: self.judge.clone().map(|j| j as Arc<dyn ModelClient>),
            progress: self.state.progress(),
        };
        let job = Job {
            main: self.deps.workspace.clone(),
            isolated: self.config.isolation == Isolation::Worktree,
            scratch: self.deps.report_dir.join(&self.state.id).join("worktrees"),
            pool: self.worktrees.clone(),
            task,
            model,
            reservation,
            attempt,
            worker,
            checking,
        };
        self.jobs.spawn(job.run());
    }

    /// The worker's `atto exec` flags: stream-json both ways, asks denied (the mailbox
    /// answers them), its model, timeout and budget, and review mode for a task that does
    /// not write.
    fn worker_args(&self, task: &SwarmTask, model: &str, budget_args: Vec<String>) -> Vec<String> {
        let mut args = vec![
            "--output-format".to_owned(),
            "stream-json".to_owned(),
            "--input-format".to_owned(),
            "stream-json".to_owned(),
            "--on-ask".to_owned(),
            "deny".to_owned(),
            "--stop-on-stdin-close".to_owned(),
            "--model".to_owned(),
            model.to_owned(),
            "--timeout".to_owned(),
            self.config.worker_timeout_secs.to_string(),
        ];
        if !task.writes() {
            args.extend(["--mode".to_owned(), "review".to_owned()]);
        }
        args.extend(budget_args);
        args.extend(self.deps.worker_args.iter().cloned());
        args
    }

    /// Records the attempt as active in the lowest worker slot no running attempt holds
    /// (at most `max_workers` run at once, so one is free); the job gets the receiving
    /// ends of its stop signal and its approval answers.
    fn take_worker_slot(
        &mut self,
        task_id: &str,
    ) -> (
        watch::Receiver<bool>,
        mpsc::UnboundedReceiver<(String, ApprovalDecision)>,
    ) {
        let (stop_tx, stop) = watch::channel(false);
        let (answers_tx, answers) = mpsc::unbounded_channel();
        let worker = (1..)
            .find(|n| self.active.values().all(|a| a.worker != *n))
            .unwrap_or(1);
        self.active.insert(
            task_id.to_owned(),
            Active {
                stop: stop_tx,
                answers: answers_tx,
                worker,
                started_ms: super::now_unix_ms(),
            },
        );
        (stop, answers)
    }

    pub(super) async fn finished(&mut self, mut done: Done) {
        // A passing attempt whose changes could not be merged back has not passed.
        let conflict = merge_conflict(&mut done);
        let ran = self.release(&done);
        let now = self.now();
        let failure = done.report.failure();
        if done.report.interrupted {
            self.requeue_interrupted(&done, &ran);
            self.save().await;
            return;
        }
        self.record_health(&done.model, now, failure.as_ref());
        let Some(task) = self.state.task(&done.task_id).cloned() else {
            return;
        };
        let (attempt, retry) =
            self.attempt_of(&task, &done, &ran, failure.as_ref(), conflict.is_some());
        if let Some(judge) = &self.judge {
            let (tokens, cost) = judge.used();
            self.state.coordinator_tokens = self.base.0 + tokens;
            self.state.coordinator_cost_usd = self.base.1.zip(cost).map(|(a, b)| a + b);
        }
        let passed = attempt.verdict == Some(Verdict::Pass);
        let error = attempt.error.clone().unwrap_or_default();
        let Some(t) = self.state.task_mut(&done.task_id) else {
            return;
        };
        t.attempts.push(attempt);
        t.round_attempts += 1;
        // A task that passed only after retries: what fixed it is worth remembering, when
        // the failure before it was the work's own (the checks rejected it). A worker that
        // was killed, timed out, could not start or hit a cap taught nothing about the task.
        let failed_on_its_work = t
            .attempts
            .iter()
            .rev()
            .skip(1)
            .find(|a| a.failure_mode.as_deref() != Some("interrupted"))
            .is_some_and(|a| a.failure_mode.as_deref() == Some("quality"));
        let lesson = (passed && t.dispatches() > 1 && failed_on_its_work)
            .then(|| (t.retry.clone(), t.clone()));
        if passed {
            self.pass(&done.task_id, std::mem::take(&mut done.files), ran.ended_ms);
        } else {
            let failed = Failed {
                retry,
                error,
                out_of_budget: failure.as_ref().is_some_and(|(m, _)| m == "budget"),
                conflict: conflict.is_some(),
            };
            self.after_failure(&done.task_id, failed, now);
        }
        if let Some((Some(retry), task)) = lesson {
            self.propose_lesson(&task, &retry, &done.report).await;
        }
        let (tokens, cost_usd) = (self.state.tokens(), self.state.cost_usd());
        let (max_tokens, max_usd) = self.budget.caps();
        self.emit(SwarmEvent::Budget {
            tokens,
            max_tokens,
            cost_usd,
            max_usd,
        });
        self.save().await;
    }

    /// Frees the attempt's worker slot and its open asks, and settles its reservation
    /// with what it spent.
    fn release(&mut self, done: &Done) -> Ran {
        let ran = self.active.remove(&done.task_id);
        let (worker, started_ms) = (
            ran.as_ref().map(|a| a.worker),
            ran.as_ref().map(|a| a.started_ms),
        );
        let ended_ms = Some(super::now_unix_ms());
        self.asks.retain(|_, t| *t != done.task_id);
        let tokens = done.report.tokens();
        let cost = done.report.result.as_ref().and_then(|r| r.cost_usd);
        self.budget.settle(done.reservation, tokens, cost);
        Ran {
            worker,
            started_ms,
            ended_ms,
            tokens,
            cost,
        }
    }

    /// An interrupted attempt is not the task's fault: it goes back to pending, and this
    /// dispatch does not count against it.
    fn requeue_interrupted(&mut self, done: &Done, ran: &Ran) {
        if let Some(t) = self.state.task_mut(&done.task_id) {
            t.status = TaskStatus::Pending;
            t.attempts.push(Attempt {
                number: t.attempts.len() as u32 + 1,
                model: done.model.clone(),
                session_id: done.report.session_id.clone(),
                exit_code: done.report.exit_code,
                tokens: ran.tokens,
                cost_usd: ran.cost,
                failure_mode: Some("interrupted".into()),
                error: Some("the swarm was interrupted".into()),
                duration_ms: done.report.duration_ms,
                started_ms: ran.started_ms,
                ended_ms: ran.ended_ms,
                worker: ran.worker,
                ..Attempt::default()
            });
        }
    }

    /// Only what the model could have done otherwise counts against its health: a cap
    /// that stopped it does not, a worker that never started asked no model at all, and
    /// a result lost on its way back was the model's work done. Counting those would trip
    /// the breaker when attempts end together and hold every pending task for minutes.
    fn record_health(&mut self, model: &str, now: u64, failure: Option<&(String, String)>) {
        let change = match failure.map(|(mode, why)| (mode.as_str(), why)) {
            Some(("start" | "transport", _)) => None,
            Some(("budget", _)) | None => self.health.record_success(model, now),
            Some((_, why)) => self.health.record_failure(model, now, why),
        };
        if let Some(change) = change {
            self.emit(SwarmEvent::ModelHealth {
                model: change.model,
                tripped: change.tripped,
                health: change.health,
            });
        }
    }

    /// The attempt's record, and what the next attempt is told when this one did not pass.
    fn attempt_of(
        &self,
        task: &SwarmTask,
        done: &Done,
        ran: &Ran,
        failure: Option<&(String, String)>,
        conflict: bool,
    ) -> (Attempt, Option<RetryContext>) {
        let number = task.attempts.len() as u32 + 1;
        let mut attempt = Attempt {
            number,
            model: done.model.clone(),
            session_id: done.report.session_id.clone(),
            exit_code: done.report.exit_code,
            files: done.files.clone(),
            tokens: ran.tokens,
            cost_usd: ran.cost,
            summary: done
                .report
                .result
                .as_ref()
                .map(|r| bounded(&r.text, 2000))
                .unwrap_or_default(),
            duration_ms: done.report.duration_ms,
            started_ms: ran.started_ms,
            ended_ms: ran.ended_ms,
            worker: ran.worker,
            ..Attempt::default()
        };
        let max_attempts = self.max_attempts(task);
        let mut retry: Option<RetryContext> = None;
        match (failure, &done.outcome) {
            (Some((mode, why)), _) => {
                attempt.failure_mode = Some(mode.clone());
                attempt.error = Some(why.clone());
                retry = Some(self.retry_context(done, number, max_attempts, why.clone(), 0));
            }
            (None, Some(o)) => {
                retry = self.checked(&mut attempt, o, done, max_attempts, conflict);
            }
            (None, None) => {}
        }
        (attempt, retry)
    }

    /// Records the checks' verdict on the attempt; when it did not pass, what the next
    /// attempt is told.
    fn checked(
        &self,
        attempt: &mut Attempt,
        o: &Outcome,
        done: &Done,
        max_attempts: u32,
        conflict: bool,
    ) -> Option<RetryContext> {
        let number = attempt.number;
        attempt.verdict = Some(o.verdict);
        attempt.score = o.score;
        attempt.findings.clone_from(&o.findings);
        attempt.compilation_errors = o
            .retry
            .as_ref()
            .map(|r| r.compilation_errors.clone())
            .unwrap_or_default();
        self.emit(SwarmEvent::TaskChecked {
            task_id: done.task_id.clone(),
            attempt: number,
            verdict: o.verdict,
            score: o.score,
            findings: o.findings.clone(),
        });
        if o.verdict == Verdict::Pass {
            return None;
        }
        attempt.failure_mode = Some(if conflict { "conflict" } else { "quality" }.into());
        attempt.error = Some(
            o.findings
                .first()
                .map_or_else(|| "the quality checks did not pass it".to_owned(), placed),
        );
        let retry = o.retry.clone().map(|mut r| {
            r.attempt = number + 1;
            r.max_attempts = max_attempts;
            r.previous_model = Some(done.model.clone());
            r.swarm_progress = Some(self.state.progress());
            r
        });
        retry.or_else(|| {
            let feedback = attempt.error.clone().unwrap_or_default();
            let score = o.score.unwrap_or(1);
            Some(self.retry_context(done, number, max_attempts, feedback, score))
        })
    }

    /// What attempt `number + 1` is told when the checks gave no retry context of their
    /// own: the feedback and score, the model that tried and the files it changed.
    fn retry_context(
        &self,
        done: &Done,
        number: u32,
        max_attempts: u32,
        previous_feedback: String,
        previous_score: u8,
    ) -> RetryContext {
        RetryContext {
            previous_feedback,
            previous_score,
            attempt: number + 1,
            max_attempts,
            previous_model: Some(done.model.clone()),
            previous_files: done.files.clone(),
            swarm_progress: Some(self.state.progress()),
            ..RetryContext::default()
        }
    }

    /// The task passed.
    fn pass(&mut self, task_id: &str, files: Vec<String>, ended_ms: Option<i64>) {
        let Some(t) = self.state.task_mut(task_id) else {
            return;
        };
        t.status = TaskStatus::Passed;
        t.passed_ms = ended_ms;
        t.retry = None;
        let (attempts, score) = (
            t.attempts.len() as u32,
            t.attempts.last().and_then(|a| a.score),
        );
        self.emit(SwarmEvent::TaskPassed {
            task_id: task_id.to_owned(),
            attempts,
            score,
            files,
        });
    }

    /// The task's attempt did not pass: it is retried after a backoff, put to a person, or
    /// failed for good.
    fn after_failure(&mut self, task_id: &str, failed: Failed, now: u64) {
        let Some(t) = self.state.task_mut(task_id) else {
            return;
        };
        t.retry = failed.retry;
        let dispatches = t.dispatches();
        let can_retry = t.round_attempts <= self.config.worker_retries
            && dispatches < self.config.max_dispatches_per_task;
        let out_of_budget = failed.out_of_budget;
        let error = failed.error;
        if failed.conflict && self.config.enable_user_intervention {
            // The rule: a merge conflict is a person's to resolve.
            t.status = TaskStatus::AwaitingIntervention;
            let snapshot = t.clone();
            self.ask_person(&snapshot);
        } else if can_retry && !out_of_budget {
            t.status = TaskStatus::Pending;
            let jitter = jitter_ms(self.options.backoff_unit_ms);
            let delay = schedule::backoff_ms(dispatches, self.options.backoff_unit_ms, jitter);
            self.not_before.insert(task_id.to_owned(), now + delay);
            if let Some(last) = t.attempts.last_mut() {
                last.backoff_ms = Some(delay);
            }
            self.emit(SwarmEvent::TaskRetrying {
                task_id: task_id.to_owned(),
                attempt: dispatches + 1,
                delay_ms: delay,
                reason: error,
            });
        } else if self.config.enable_user_intervention
            && dispatches >= self.config.user_intervention_threshold
            && !out_of_budget
        {
            t.status = TaskStatus::AwaitingIntervention;
            let snapshot = t.clone();
            self.ask_person(&snapshot);
        } else {
            t.status = TaskStatus::Failed;
            let reason = format!("failed after {dispatches} attempts: {error}");
            t.reason = Some(reason.clone());
            self.emit(SwarmEvent::TaskFailed {
                task_id: task_id.to_owned(),
                attempts: dispatches,
                reason,
            });
        }
    }
}

/// What an attempt's worker used, and when and in which slot it ran.
struct Ran {
    worker: Option<u32>,
    started_ms: Option<i64>,
    ended_ms: Option<i64>,
    tokens: u64,
    cost: Option<f64>,
}

/// Why an attempt did not pass, as deciding the task's next state needs it.
struct Failed {
    /// What the next attempt is told.
    retry: Option<RetryContext>,
    /// The attempt's error.
    error: String,
    /// The budget cap stopped it: retrying cannot help.
    out_of_budget: bool,
    /// Its changes conflict with the workspace.
    conflict: bool,
}

/// Why a passing attempt's changes could not be merged back, if they could not; its
/// outcome then asks for a retry, the conflict its first finding.
fn merge_conflict(done: &mut Done) -> Option<String> {
    let conflict = match &done.merge {
        Some(Err(why)) => Some(why.clone()),
        _ => None,
    };
    if let (Some(why), Some(o)) = (&conflict, done.outcome.as_mut()) {
        o.verdict = Verdict::NeedsRetry;
        o.findings.insert(
            0,
            atto_quality::Finding {
                stage: atto_quality::Stage::Verification,
                code: None,
                message: why.clone(),
                file: None,
                line: None,
            },
        );
    }
    conflict
}

/// Runs the quality pipeline over one finished attempt.
#[allow(clippy::too_many_arguments)]
async fn assess(
    task: &SwarmTask,
    report: &worker::Report,
    modified: &[String],
    before: &BTreeMap<String, String>,
    workspace: &std::path::Path,
    attempt: u32,
    progress: String,
    quality: &atto_quality::QualityConfig,
    runner: &dyn CommandRunner,
    judge: Option<&dyn ModelClient>,
) -> Outcome {
    let result = report.result.as_ref();
    let worker_result = WorkerResult {
        text: result.map(|r| r.text.clone()).unwrap_or_default(),
        closure_report: None,
        actions: report.actions.clone(),
        model: report.model.clone(),
    };
    let input = atto_quality::Input {
        task: &task.quality_task(),
        result: &worker_result,
        modified,
        before,
        workspace,
        attempt,
        progress: Some(progress),
        config: quality,
        runner,
        judge,
    };
    atto_quality::assess(&input).await
}

/// The files this worker changed. In a shared workspace a session's `files_changed`
/// also holds what other workers (and its own test runs' caches) changed meanwhile, so
/// only the files its file tools named, and the task's declared targets, count.
fn own_changes(
    task: &SwarmTask,
    report: &worker::Report,
    workspace: &std::path::Path,
) -> Vec<String> {
    let Some(result) = &report.result else {
        return Vec::new();
    };
    let root = format!("{}/", workspace.display());
    let clean = |p: &str| -> String {
        let p = p.trim();
        p.strip_prefix(root.as_str())
            .unwrap_or(p)
            .trim_start_matches("./")
            .to_owned()
    };
    let mut mine: std::collections::HashSet<String> =
        task.target_files.iter().map(|f| clean(f)).collect();
    for action in &report.actions {
        // Only a call that changes files names files this worker changed, and the tool
        // itself says which paths its call names (a patch names them inside its text).
        let Some(tool) = atto_tools::builtin_tool(&action.tool) else {
            continue;
        };
        if matches!(
            tool.kind(),
            ToolKind::Edit | ToolKind::Delete | ToolKind::Move
        ) {
            for p in tool.paths(&action.arguments).unwrap_or_default() {
                mine.insert(clean(&p));
            }
        }
    }
    result
        .files_changed
        .iter()
        .filter(|f| mine.contains(&clean(f)))
        .cloned()
        .collect()
}

/// The text of the declared files before the task, for the checks.
fn snapshot(workspace: &std::path::Path, task: &SwarmTask) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for rel in task.files() {
        if !decompose::is_relative_inside(rel) {
            continue;
        }
        let path = workspace.join(rel);
        let small = std::fs::metadata(&path).is_ok_and(|m| m.is_file() && m.len() <= SNAPSHOT_MAX);
        if small && let Ok(text) = std::fs::read_to_string(&path) {
            out.insert(rel.clone(), text);
        }
    }
    out
}

/// [`snapshot`] of the declared files as commit `base` of `workspace` holds them, in one
/// git run (a remote attempt's worktree is not at its base until its result is there).
async fn snapshot_at(
    workspace: &std::path::Path,
    base: &str,
    task: &SwarmTask,
) -> BTreeMap<String, String> {
    let rels: Vec<&str> = task
        .files()
        .map(String::as_str)
        .filter(|rel| decompose::is_relative_inside(rel))
        .collect();
    let texts = crate::isolation::at_base(workspace, base, &rels)
        .await
        .unwrap_or_default();
    rels.into_iter()
        .zip(texts)
        .filter_map(|(rel, bytes)| {
            let bytes = bytes.filter(|b| b.len() as u64 <= SNAPSHOT_MAX)?;
            Some((rel.to_owned(), String::from_utf8(bytes).ok()?))
        })
        .collect()
}

/// The worker's prompt: the task with everything enrichment and earlier attempts added.
pub fn prompt(goal: &str, task: &SwarmTask) -> String {
    use std::fmt::Write as _;
    let mut p = format!(
        "You are a worker in atto's swarm: other workers do other parts of a larger goal at the \
         same time. Do exactly the task below in this workspace, change only the files it \
         needs, check your work, then stop with a short summary of what you changed and how \
         you checked it.\n\nThe swarm's goal: {goal}\n\n## Task {} ({})\n{}\n",
        task.id,
        task.kind.as_str(),
        task.description
    );
    let list = |p: &mut String, title: &str, items: &[String]| {
        if !items.is_empty() {
            let _ = writeln!(p, "\n### {title}");
            for i in items {
                let _ = writeln!(p, "- {i}");
            }
        }
    };
    list(&mut p, "Target files", &task.target_files);
    list(&mut p, "Relevant files", &task.relevant_files);
    list(&mut p, "Acceptance criteria", &task.acceptance_criteria);
    list(&mut p, "Technical constraints", &task.technical_constraints);
    if let Some(steps) = &task.modification_instructions {
        let _ = write!(p, "\n### Modification instructions\n{steps}\n");
    }
    list(&mut p, "Test expectations", &task.test_expectations);
    if let Some(context) = &task.code_context {
        let _ = write!(p, "\n### Code context\n{context}\n");
    }
    if task.kind.is_test() {
        p.push_str(
            "\n### Running the tests\nRun the tests and keep their output in your answer. When \
             an import fails, install what is missing (Python: pip install <package> or pip \
             install -e .; Node.js: npm install; Go: go mod tidy; Rust: cargo build) and run \
             them again.\n",
        );
    }
    list(&mut p, "Guidance from the user", &task.guidance);
    if let Some(retry) = &task.retry {
        p.push('\n');
        p.push_str(&retry.render());
    }
    p
}

/// A finding with its place in front (`app.py:3 — SyntaxError: …`), unless its message
/// already starts with it: the error a person reads must say where to look.
fn placed(f: &atto_quality::Finding) -> String {
    let place = match (&f.file, f.line) {
        (Some(file), Some(line)) => format!("{file}:{line}"),
        (Some(file), None) => file.clone(),
        (None, _) => return f.message.clone(),
    };
    if f.message.starts_with(&place) {
        f.message.clone()
    } else {
        format!("{place} — {}", f.message)
    }
}

#[cfg(test)]
mod tests {
    use super::{SwarmTask, placed, snapshot_at};
    use atto_quality::{Finding, Stage};

    /// A remote attempt's declared files before the task are read from its base in git:
    /// what the base held, not what the workspace or a worktree holds now; a file the base
    /// lacks, a directory and a path outside are left out, as from the disk.
    #[tokio::test]
    async fn the_declared_files_before_a_remote_task_are_read_from_its_base() {
        let ws = crate::testing::git_repo(
            "mkdir src && echo 'x = 1' > src/a.py && git add . && git commit -qm init",
        );
        let scratch = tempfile::tempdir().unwrap();
        let base = crate::isolation::snapshot(ws.path(), scratch.path())
            .await
            .unwrap();
        std::fs::write(ws.path().join("src/a.py"), "x = 2\n").unwrap();
        let task = SwarmTask {
            target_files: ["src/a.py", "src/new.py", "src", "../out.py"]
                .map(String::from)
                .to_vec(),
            ..SwarmTask::default()
        };
        let before = snapshot_at(ws.path(), &base, &task).await;
        assert_eq!(
            before.into_iter().collect::<Vec<_>>(),
            vec![("src/a.py".to_owned(), "x = 1\n".to_owned())]
        );
    }

    fn finding(message: &str, file: Option<&str>, line: Option<u32>) -> Finding {
        Finding {
            stage: Stage::Compile,
            code: None,
            message: message.into(),
            file: file.map(str::to_owned),
            line,
        }
    }

    #[test]
    fn an_attempts_error_keeps_the_findings_place() {
        let cases = [
            (
                finding("SyntaxError: unexpected indent", Some("app.py"), Some(3)),
                "app.py:3 — SyntaxError: unexpected indent",
            ),
            (
                finding("is empty", Some("app.py"), None),
                "app.py — is empty",
            ),
            (
                finding("app.py:3: bad", Some("app.py"), Some(3)),
                "app.py:3: bad",
            ),
            (
                finding("no test run shows", None, None),
                "no test run shows",
            ),
        ];
        for (f, want) in cases {
            assert_eq!(placed(&f), want);
        }
    }
}
