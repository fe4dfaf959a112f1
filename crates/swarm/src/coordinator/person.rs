//! Where a person comes in: a task that ran out of attempts waits for guidance, "I fixed
//! it" (its files checked again without a worker) or skip; and a task that passed only
//! after retries proposes what fixed it as a learning, for the person to validate.

use std::collections::BTreeMap;

use atto_quality::{Outcome, RetryContext, Verdict, WorkerResult};

use super::Coordinator;
use crate::events::SwarmEvent;
use crate::task::{InterventionAnswer, SwarmTask, TaskStatus};
use crate::text::clip;
use crate::worker;

impl Coordinator {
    pub(super) async fn intervene(&mut self, task_id: &str, answer: InterventionAnswer) {
        let Some(task) = self.state.task(task_id).cloned() else {
            self.emit(SwarmEvent::Notice {
                text: format!("no task {task_id} in this swarm"),
            });
            return;
        };
        if task.status != TaskStatus::AwaitingIntervention {
            self.emit(SwarmEvent::Notice {
                text: format!("task {task_id} is not waiting for a decision"),
            });
            return;
        }
        match answer {
            InterventionAnswer::Guidance { text }
                if task.dispatches() >= self.config.max_dispatches_per_task =>
            {
                let _ = text;
                self.emit(SwarmEvent::Notice {
                    text: format!(
                        "task {task_id} has used all {} dispatches (max_dispatches_per_task); \
                         answer fixed (after fixing it by hand) or skip",
                        self.config.max_dispatches_per_task
                    ),
                });
                self.ask_person(&task);
            }
            InterventionAnswer::Guidance { text } => {
                if let Some(t) = self.state.task_mut(task_id) {
                    t.guidance.push(text);
                    t.round_attempts = 0;
                    t.status = TaskStatus::Pending;
                }
            }
            InterventionAnswer::Skip => {
                self.skip(task_id, "skipped by the user".into());
            }
            InterventionAnswer::Fixed => {
                let outcome = self.recheck(&task).await;
                let passed = outcome.verdict == Verdict::Pass;
                self.emit(SwarmEvent::TaskChecked {
                    task_id: task_id.to_owned(),
                    attempt: task.attempts.len() as u32,
                    verdict: outcome.verdict,
                    score: outcome.score,
                    findings: outcome.findings.clone(),
                });
                if passed {
                    if let Some(t) = self.state.task_mut(task_id) {
                        t.status = TaskStatus::Passed;
                        t.reason = Some("fixed by the user".into());
                        t.passed_ms = Some(super::now_unix_ms());
                    }
                    self.emit(SwarmEvent::TaskPassed {
                        task_id: task_id.to_owned(),
                        attempts: task.attempts.len() as u32,
                        score: outcome.score,
                        files: task.target_files.clone(),
                    });
                } else {
                    let first = outcome
                        .findings
                        .first()
                        .map_or_else(|| "the checks still fail".to_owned(), |f| f.message.clone());
                    if let Some(t) = self.state.task_mut(task_id) {
                        t.retry = outcome.retry.clone();
                    }
                    let refreshed = self.state.task(task_id).cloned().unwrap_or(task);
                    self.emit(SwarmEvent::Notice {
                        text: format!("task {task_id} still fails its checks: {first}"),
                    });
                    self.ask_person(&refreshed);
                }
            }
        }
        self.save().await;
    }

    /// The deterministic checks and the project's tests over the task's files, after a
    /// person fixed them by hand.
    async fn recheck(&self, task: &SwarmTask) -> Outcome {
        let mut quality = self.config.quality.clone();
        // A person's fix has no tool calls to show; the project's tests are the evidence.
        quality.test_require_execution_evidence = false;
        let result = WorkerResult {
            text: "The user fixed this task by hand.".into(),
            closure_report: None,
            actions: vec![atto_quality::action::started(
                "user",
                atto_protocol::ToolKind::Other,
                serde_json::json!({"fixed_by_hand": true}),
            )],
            model: None,
        };
        let modified: Vec<String> = task
            .target_files
            .iter()
            .filter(|f| self.deps.workspace.join(f).is_file())
            .cloned()
            .collect();
        let before = BTreeMap::new();
        // The loop waits on this check, so no one could answer a question from it: what
        // would ask is refused, and the finding says why.
        let runner = super::checks::GatedRunner::new(
            &self.deps.workspace,
            (self.deps.sandbox)(&self.deps.workspace),
            None,
        );
        let input = atto_quality::Input {
            task: &task.quality_task(),
            result: &result,
            modified: &modified,
            before: &before,
            workspace: &self.deps.workspace,
            attempt: task.attempts.len() as u32 + 1,
            progress: Some(self.state.progress()),
            config: &quality,
            runner: &runner,
            judge: None,
        };
        atto_quality::assess(&input).await
    }

    pub(super) fn ask_person(&self, task: &SwarmTask) {
        let last = task.attempts.last();
        self.emit(SwarmEvent::InterventionNeeded {
            task_id: task.id.clone(),
            description: task.description.clone(),
            attempts: task.attempts.len() as u32,
            last_error: last
                .and_then(|a| a.error.clone())
                .or_else(|| task.reason.clone())
                .unwrap_or_default(),
            compilation_errors: last
                .map(|a| a.compilation_errors.clone())
                .unwrap_or_default(),
            failure_mode: last
                .and_then(|a| a.failure_mode.clone())
                .unwrap_or_else(|| "error".into()),
            model: last.map(|a| a.model.clone()).unwrap_or_default(),
        });
    }

    /// Proposes a WORKAROUND learning from a task that passed after a failed attempt: the
    /// failed attempt's retry context and what the passing one did. It waits for the
    /// user's yes like any proposal below the auto-validation threshold.
    pub(super) async fn propose_lesson(
        &self,
        task: &SwarmTask,
        retry: &RetryContext,
        report: &worker::Report,
    ) {
        let Some(limits) = self.deps.learning else {
            return;
        };
        let first = retry.previous_feedback.lines().next().unwrap_or("").trim();
        let description = clip(
            &format!(
                "{} task \"{}\": a first attempt failed ({}); the retry that fixed it passed",
                task.kind.as_str(),
                clip(&task.description, 110),
                clip(first, 110)
            ),
            atto_store::MAX_DESCRIPTION,
        );
        let mut tools = tools_used(report);
        let details = lesson_details(task, retry, &tools);
        let keywords = lesson_keywords(task);
        tools.truncate(atto_store::MAX_WORDS);
        let new = atto_store::NewLearning {
            kind: atto_protocol::LearningKind::Workaround,
            description,
            details,
            keywords,
            actions: tools,
            categories: vec!["swarm".into(), task.kind.as_str().into()],
            confidence: 0.6,
            scope: atto_protocol::LearningScope::Project,
            project: self.state.workspace.clone(),
            source: atto_protocol::LearningSource::Swarm,
            source_ref: Some(format!(
                "swarm {} task {}",
                self.state.id.get(..8).unwrap_or(&self.state.id),
                task.id
            )),
            session_id: report.session_id.clone(),
        };
        let text = match self.deps.store.propose_learning(new, limits).await {
            Ok(p) if p.duplicate => return,
            Ok(p) => format!(
                "proposed learning #{} from task {} (`atto learnings show {}`): {}",
                p.learning.id, task.id, p.learning.id, p.learning.description
            ),
            Err(err) => format!("task {}'s lesson could not be stored: {err}", task.id),
        };
        self.emit(SwarmEvent::Notice { text });
    }
}

/// The tools the passing attempt called, each once, in order of first use.
fn tools_used(report: &worker::Report) -> Vec<String> {
    let mut tools: Vec<String> = Vec::new();
    for a in &report.actions {
        if !tools.contains(&a.tool) {
            tools.push(a.tool.clone());
        }
    }
    tools
}

/// The lesson's details: what the failed attempt was told, then what passed.
fn lesson_details(task: &SwarmTask, retry: &RetryContext, tools: &[String]) -> String {
    let files = task
        .attempts
        .last()
        .map(|a| a.files.join(", "))
        .unwrap_or_default();
    clip(
        &format!(
            "{}\n\nWhat passed (attempt {}): changed {}; tools {}.",
            retry.render(),
            task.attempts.len(),
            if files.is_empty() {
                "no files".into()
            } else {
                files
            },
            tools.join(", ")
        ),
        atto_store::MAX_DETAILS,
    )
}

/// The lesson's keywords: the task's kind and the stems of its target files.
fn lesson_keywords(task: &SwarmTask) -> Vec<String> {
    let mut keywords: Vec<String> = vec![task.kind.as_str().to_owned()];
    for f in &task.target_files {
        let name = std::path::Path::new(f)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        if !name.is_empty() && !keywords.contains(&name) {
            keywords.push(name);
        }
    }
    keywords.truncate(atto_store::MAX_WORDS);
    keywords
}
