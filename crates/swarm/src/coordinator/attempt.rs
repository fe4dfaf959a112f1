//! One attempt of a task: starting its worker (in the workspace or a worktree of a
//! snapshot), checking what it did with the quality pipeline, merging a worktree back, and
//! turning the outcome into the task's next state (passed, retried after a backoff, waiting
//! for a person, failed). Also the worker's prompt.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use atto_llm::ModelClient;
use atto_protocol::{ApprovalDecision, ApprovalRequest};
use atto_quality::{CommandRunner, Outcome, RetryContext, Verdict, WorkerResult};
use tokio::sync::{mpsc, watch};

use super::{Active, Coordinator, Done, SNAPSHOT_MAX, checks, jitter_ms};
use crate::budget::Reservation;
use crate::config::Isolation;
use crate::events::SwarmEvent;
use crate::schedule;
use crate::task::{Attempt, SwarmTask, TaskStatus};
use crate::text::bounded;
use crate::worker::{self, Launch, Template, Vars};
use crate::{decompose, isolation, mailbox};

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
        let mut args = vec![
            "--output-format".to_owned(),
            "stream-json".to_owned(),
            "--input-format".to_owned(),
            "stream-json".to_owned(),
            "--on-ask".to_owned(),
            "deny".to_owned(),
            "--stop-on-stdin-close".to_owned(),
            "--model".to_owned(),
            model.clone(),
            "--timeout".to_owned(),
            self.config.worker_timeout_secs.to_string(),
        ];
        if !task.writes() {
            args.extend(["--mode".to_owned(), "review".to_owned()]);
        }
        args.extend(budget_args);
        args.extend(self.deps.worker_args.iter().cloned());
        let mut vars = Vars {
            atto: self.deps.atto.clone(),
            args,
            workspace: self.deps.workspace.display().to_string(),
            task_id: task.id.clone(),
            swarm_id: self.state.id.clone(),
        };
        let template = Template::from_config(&self.config.worker_command);
        let prompt = prompt(&self.state.goal, &task);
        let (stop_tx, stop) = watch::channel(false);
        let (answers_tx, answers) = mpsc::unbounded_channel();
        // The lowest slot no running attempt holds: at most `max_workers` run at once, so
        // one is free.
        let worker = (1..)
            .find(|n| self.active.values().all(|a| a.worker != *n))
            .unwrap_or(1);
        self.active.insert(
            task.id.clone(),
            Active {
                stop: stop_tx,
                answers: answers_tx,
                worker,
                started_ms: super::now_unix_ms(),
            },
        );
        self.emit(SwarmEvent::TaskStarted {
            task_id: task.id.clone(),
            attempt,
            model: model.clone(),
            pid: None,
        });
        let main = self.deps.workspace.clone();
        let isolated = self.config.isolation == Isolation::Worktree;
        let scratch = self.deps.report_dir.join(&self.state.id).join("worktrees");
        let quality = self.config.quality.clone();
        let sandbox_for = self.deps.sandbox.clone();
        let person = checks::Person {
            task_id: task.id.clone(),
            asks: self.check_asks_tx.clone(),
        };
        let judge: Option<Arc<dyn ModelClient>> =
            self.judge.clone().map(|j| j as Arc<dyn ModelClient>);
        let progress = self.state.progress();
        let timeout = Duration::from_secs(self.config.worker_timeout_secs.saturating_add(30));
        let messages = self.messages_tx.clone();
        let task_id = task.id.clone();
        let remote_launch =
            self.config
                .launcher
                .is_remote()
                .then(|| crate::remote::attempt::Launch {
                    launcher: self.config.launcher,
                    slurm: self.config.slurm.clone(),
                    ssh: self.config.ssh.clone(),
                    hosts: self.hosts.clone(),
                });
        self.jobs.spawn(async move {
            let (tx, mut rx) = mpsc::unbounded_channel();
            let forward = {
                let task_id = task_id.clone();
                tokio::spawn(async move {
                    while let Some(m) = rx.recv().await {
                        if messages.send((task_id.clone(), m)).is_err() {
                            break;
                        }
                    }
                })
            };
            // With worktree isolation the attempt works on a snapshot of the workspace.
            let tree = if isolated {
                let dir = scratch.join(format!("{task_id}-{attempt}"));
                let made = match isolation::snapshot(&main, &scratch).await {
                    Ok(base) => isolation::create(&main, &base, &dir).await,
                    Err(err) => Err(err),
                };
                Some(made.map_err(|e| format!("its worktree could not be made: {e}")))
            } else {
                None
            };
            let workspace = match &tree {
                Some(Ok(t)) => t.dir.clone(),
                _ => main.clone(),
            };
            vars.workspace = workspace.display().to_string();
            let before = snapshot(&workspace, &task);
            // A remote worker starts from a published base and returns a branch.
            let expanded = match (&tree, &remote_launch) {
                (Some(Err(err)), _) => Err(err.clone()),
                (Some(Ok(t)), Some(launch)) => crate::remote::attempt::prepare(
                    launch, &template, &vars, &main, t, &scratch, attempt,
                )
                .await
                .map(|p| (p.program, p.args, p.preamble, Some(p.remote))),
                (None, Some(_)) => Err("a remote launcher needs isolation: worktree".into()),
                (_, None) => template
                    .expand(&vars)
                    .map(|(program, args)| (program, args, Vec::new(), None)),
            };
            let mut remote = None;
            let mut report = match expanded {
                Ok((program, args, preamble, r)) => {
                    remote = r;
                    let launch = Launch {
                        program,
                        args,
                        cwd: workspace.clone(),
                        prompt,
                        timeout,
                        preamble,
                    };
                    let writes = task.writes();
                    let decide = move |r: &ApprovalRequest| match mailbox::decide(r, writes) {
                        mailbox::Tier::AutoApprove => Some(ApprovalDecision::Yes),
                        mailbox::Tier::AutoDeny(reason) => Some(ApprovalDecision::No {
                            reason: Some(reason),
                        }),
                        mailbox::Tier::Ask => None,
                    };
                    worker::run(launch, &decide, tx, answers, stop).await
                }
                Err(err) => {
                    drop(tx);
                    worker::Report {
                        spawn_error: Some(err),
                        ..worker::Report::default()
                    }
                }
            };
            let _ = forward.await;
            if let (Some(r), Some(launch), Some(Ok(t))) = (&remote, &remote_launch, &tree) {
                crate::remote::attempt::finish(launch, r, &mut report, &main, t, &scratch).await;
            }
            // The files this worker changed, once, for the checks and the attempt's record.
            let files = own_changes(&task, &report, &workspace);
            let outcome = if report.failure().is_none() {
                let runner =
                    checks::GatedRunner::new(&workspace, sandbox_for(&workspace), Some(person));
                Some(
                    assess(
                        &task,
                        &report,
                        &files,
                        &before,
                        &workspace,
                        attempt,
                        progress,
                        &quality,
                        &runner,
                        judge.as_deref(),
                    )
                    .await,
                )
            } else {
                None
            };
            let passed = outcome.as_ref().is_some_and(|o| o.verdict == Verdict::Pass);
            let mut merge = None;
            if let Some(Ok(t)) = &tree {
                if passed {
                    let merged = match isolation::changes(t, &scratch).await {
                        Ok(changes) => isolation::merge_back(&main, t, &changes, &scratch)
                            .await
                            .map_err(|paths| {
                                format!(
                                    "its changes conflict with the workspace in {} (its \
                                     worktree is kept at {})",
                                    paths.join(", "),
                                    t.dir.display()
                                )
                            }),
                        Err(err) => Err(format!("its changes could not be read: {err}")),
                    };
                    merge = Some(merged);
                }
                if !matches!(merge, Some(Err(_))) {
                    isolation::remove(&main, t).await;
                }
            }
            Done {
                task_id,
                model,
                reservation,
                report,
                files,
                outcome,
                merge,
            }
        });
    }

    pub(super) async fn finished(&mut self, done: Done) {
        let Done {
            task_id,
            model,
            reservation,
            report,
            files,
            mut outcome,
            merge,
        } = done;
        // A passing attempt whose changes could not be merged back has not passed.
        let conflict = match &merge {
            Some(Err(why)) => Some(why.clone()),
            _ => None,
        };
        if let (Some(why), Some(o)) = (&conflict, outcome.as_mut()) {
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
        let ran = self.active.remove(&task_id);
        let (worker, started_ms) = (
            ran.as_ref().map(|a| a.worker),
            ran.as_ref().map(|a| a.started_ms),
        );
        let ended_ms = Some(super::now_unix_ms());
        self.asks.retain(|_, t| *t != task_id);
        let tokens = report.tokens();
        let cost = report.result.as_ref().and_then(|r| r.cost_usd);
        self.budget.settle(reservation, tokens, cost);
        let now = self.now();
        let failure = report.failure();
        if report.interrupted {
            // Not the task's fault: it goes back to pending, and this dispatch does not
            // count against it.
            if let Some(t) = self.state.task_mut(&task_id) {
                t.status = TaskStatus::Pending;
                t.attempts.push(Attempt {
                    number: t.attempts.len() as u32 + 1,
                    model: model.clone(),
                    session_id: report.session_id.clone(),
                    exit_code: report.exit_code,
                    tokens,
                    cost_usd: cost,
                    failure_mode: Some("interrupted".into()),
                    error: Some("the swarm was interrupted".into()),
                    duration_ms: report.duration_ms,
                    started_ms,
                    ended_ms,
                    worker,
                    ..Attempt::default()
                });
            }
            self.save().await;
            return;
        }
        // Only what the model could have done otherwise counts against its health: a cap
        // that stopped it does not, and a worker that never started asked no model at all.
        let change = match failure.as_ref().map(|(mode, why)| (mode.as_str(), why)) {
            Some(("start", _)) => None,
            Some(("budget", _)) | None => self.health.record_success(&model, now),
            Some((_, why)) => self.health.record_failure(&model, now, why),
        };
        if let Some(change) = change {
            self.emit(SwarmEvent::ModelHealth {
                model: change.model,
                tripped: change.tripped,
                health: change.health,
            });
        }
        let Some(task) = self.state.task(&task_id).cloned() else {
            return;
        };
        let number = task.attempts.len() as u32 + 1;
        let mut attempt = Attempt {
            number,
            model: model.clone(),
            session_id: report.session_id.clone(),
            exit_code: report.exit_code,
            files: files.clone(),
            tokens,
            cost_usd: cost,
            summary: report
                .result
                .as_ref()
                .map(|r| bounded(&r.text, 2000))
                .unwrap_or_default(),
            duration_ms: report.duration_ms,
            started_ms,
            ended_ms,
            worker,
            ..Attempt::default()
        };
        let max_attempts = self.max_attempts(&task);
        let mut retry: Option<RetryContext> = None;
        match (&failure, &outcome) {
            (Some((mode, why)), _) => {
                attempt.failure_mode = Some(mode.clone());
                attempt.error = Some(why.clone());
                retry = Some(RetryContext {
                    previous_feedback: why.clone(),
                    previous_score: 0,
                    attempt: number + 1,
                    max_attempts,
                    previous_model: Some(model.clone()),
                    previous_files: files.clone(),
                    swarm_progress: Some(self.state.progress()),
                    ..RetryContext::default()
                });
            }
            (None, Some(o)) => {
                attempt.verdict = Some(o.verdict);
                attempt.score = o.score;
                attempt.findings.clone_from(&o.findings);
                attempt.compilation_errors = o
                    .retry
                    .as_ref()
                    .map(|r| r.compilation_errors.clone())
                    .unwrap_or_default();
                self.emit(SwarmEvent::TaskChecked {
                    task_id: task_id.clone(),
                    attempt: number,
                    verdict: o.verdict,
                    score: o.score,
                    findings: o.findings.clone(),
                });
                if o.verdict != Verdict::Pass {
                    attempt.failure_mode = Some(
                        if conflict.is_some() {
                            "conflict"
                        } else {
                            "quality"
                        }
                        .into(),
                    );
                    attempt.error =
                        Some(o.findings.first().map_or_else(
                            || "the quality checks did not pass it".to_owned(),
                            placed,
                        ));
                    retry = o.retry.clone().map(|mut r| {
                        r.attempt = number + 1;
                        r.max_attempts = max_attempts;
                        r.previous_model = Some(model.clone());
                        r.swarm_progress = Some(self.state.progress());
                        r
                    });
                    if retry.is_none() {
                        retry = Some(RetryContext {
                            previous_feedback: attempt.error.clone().unwrap_or_default(),
                            previous_score: o.score.unwrap_or(1),
                            attempt: number + 1,
                            max_attempts,
                            previous_model: Some(model.clone()),
                            previous_files: files.clone(),
                            swarm_progress: Some(self.state.progress()),
                            ..RetryContext::default()
                        });
                    }
                }
            }
            (None, None) => {}
        }
        if let Some(judge) = &self.judge {
            let (tokens, cost) = judge.used();
            self.state.coordinator_tokens = self.base.0 + tokens;
            self.state.coordinator_cost_usd = self.base.1.zip(cost).map(|(a, b)| a + b);
        }
        let passed = attempt.verdict == Some(Verdict::Pass);
        let error = attempt.error.clone().unwrap_or_default();
        let Some(t) = self.state.task_mut(&task_id) else {
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
            t.status = TaskStatus::Passed;
            t.passed_ms = ended_ms;
            t.retry = None;
            let (attempts, score) = (
                t.attempts.len() as u32,
                t.attempts.last().and_then(|a| a.score),
            );
            self.emit(SwarmEvent::TaskPassed {
                task_id: task_id.clone(),
                attempts,
                score,
                files,
            });
        } else {
            t.retry = retry;
            let dispatches = t.dispatches();
            let can_retry = t.round_attempts <= self.config.worker_retries
                && dispatches < self.config.max_dispatches_per_task;
            let out_of_budget = failure.as_ref().is_some_and(|(m, _)| m == "budget");
            if conflict.is_some() && self.config.enable_user_intervention {
                // The rule: a merge conflict is a person's to resolve.
                t.status = TaskStatus::AwaitingIntervention;
                let snapshot = t.clone();
                self.ask_person(&snapshot);
            } else if can_retry && !out_of_budget {
                t.status = TaskStatus::Pending;
                let jitter = jitter_ms(self.options.backoff_unit_ms);
                let delay = schedule::backoff_ms(dispatches, self.options.backoff_unit_ms, jitter);
                self.not_before.insert(task_id.clone(), now + delay);
                if let Some(last) = t.attempts.last_mut() {
                    last.backoff_ms = Some(delay);
                }
                self.emit(SwarmEvent::TaskRetrying {
                    task_id: task_id.clone(),
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
                    task_id: task_id.clone(),
                    attempts: dispatches,
                    reason,
                });
            }
        }
        if let Some((Some(retry), task)) = lesson {
            self.propose_lesson(&task, &retry, &report).await;
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
        let args = &action.arguments;
        match action.tool.as_str() {
            "write_file" | "edit_file" | "delete_file" => {
                if let Some(p) = args.get("path").and_then(serde_json::Value::as_str) {
                    mine.insert(clean(p));
                }
            }
            "apply_patch" => {
                let text = args
                    .get("patch")
                    .or_else(|| args.get("input"))
                    .and_then(serde_json::Value::as_str)
                    .unwrap_or("");
                for line in text.lines() {
                    for head in [
                        "*** Add File: ",
                        "*** Update File: ",
                        "*** Delete File: ",
                        "*** Move to: ",
                    ] {
                        if let Some(p) = line.strip_prefix(head) {
                            mine.insert(clean(p));
                        }
                    }
                }
            }
            _ => {}
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
    use super::placed;
    use atto_quality::{Finding, Stage};

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
