//! Running the stages in the seed's order and turning what they found into a verdict,
//! a score and the context for the next attempt. A deterministic stage that fails stops
//! the pipeline before the (paid) judge runs.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use atto_llm::ModelClient;
use serde::Serialize;

use crate::judge::{self, Judgement};
use crate::verify::{self, Verification};
use crate::{
    CommandRunner, CompileError, Finding, QualityConfig, QualityTask, RetryContext, Severity,
    Stage, Verdict, WorkerResult, artifacts, compile, concrete, preflight,
};

/// What the pipeline judges.
pub struct Input<'a> {
    /// The task.
    pub task: &'a QualityTask,
    /// What the worker produced.
    pub result: &'a WorkerResult,
    /// Files the worker modified (from the checkpoints), workspace-relative.
    pub modified: &'a [String],
    /// Their text before the work (absent: the file did not exist).
    pub before: &'a BTreeMap<String, String>,
    /// The workspace.
    pub workspace: &'a Path,
    /// Which attempt this was (1 for the first).
    pub attempt: u32,
    /// Where the surrounding work stands, for the retry context.
    pub progress: Option<String>,
    /// The settings.
    pub config: &'a QualityConfig,
    /// Runs commands through the caller's gate and sandbox.
    pub runner: &'a dyn CommandRunner,
    /// The judge's model; `None`: no judge (the deterministic stages decide).
    pub judge: Option<&'a dyn ModelClient>,
}

/// The pipeline's answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Outcome {
    /// Pass, fail, or try again.
    pub verdict: Verdict,
    /// 1–5 (0: no tool calls at all); `None` when nothing scored it (checks passed, no
    /// judge).
    pub score: Option<u8>,
    /// What was wrong, stage by stage.
    pub findings: Vec<Finding>,
    /// For the next attempt, when there is one.
    pub retry: Option<RetryContext>,
    /// Files the result is about.
    pub artifacts: Vec<String>,
    /// The judge could not answer; its score is the fail-safe one.
    pub gate_error: Option<String>,
    /// The verification gate's checks, when it ran.
    pub checks: Vec<String>,
}

/// Runs the pipeline over `input`.
pub async fn assess(input: &Input<'_>) -> Outcome {
    let task = input.task;
    let config = input.config;
    let artifacts = artifacts::collect(task, input.modified, &input.result.text, input.workspace);
    let mut state = State::default();

    // 1. Compilation checks, always for action tasks.
    if task.kind.is_action() && !input.modified.is_empty() {
        let errors = compile::check(input.workspace, input.modified, input.runner).await;
        let failing: Vec<CompileError> = errors
            .iter()
            .filter(|e| e.severity == Severity::Error)
            .cloned()
            .collect();
        for e in &errors {
            state.findings.push(Finding {
                stage: Stage::Compile,
                code: None,
                message: e.message.clone(),
                file: Some(e.file.clone()),
                line: e.line,
            });
        }
        if !failing.is_empty() {
            state.compilation_errors = failing;
            return state.reject(input, 1, "the changed files do not compile", artifacts);
        }
    }
    // 2. Pre-flight, no model.
    if let Some(r) = preflight::check(task, input.result, input.modified, input.workspace, config) {
        state.findings.push(Finding {
            stage: Stage::Preflight,
            code: Some(r.code.to_owned()),
            message: r.message.clone(),
            file: None,
            line: None,
        });
        return state.reject(
            input,
            r.score,
            &format!("{}: {}", r.code, r.message),
            artifacts,
        );
    }
    // 3. Concrete checks of the files.
    if config.enable_concrete_validation {
        let found = concrete::check(task, input.modified, input.workspace, input.before);
        if !found.is_empty() {
            let why = found
                .iter()
                .map(|f| f.message.clone())
                .collect::<Vec<_>>()
                .join("; ");
            state.findings.extend(found);
            return state.reject(input, 1, &why, artifacts);
        }
    }
    // 4 and 5. Verification and the judge: for test tasks verification first, its results
    // in the judge's prompt; for others the judge first.
    let timeout = Duration::from_secs(config.verification_timeout_secs);
    let mut verification = None;
    if config.enable_verification && task.kind.is_test() {
        let v = verify::run(input.workspace, task.kind, input.runner, timeout).await;
        let passed = v.passed(task.kind);
        state.take_verification(&v);
        if !passed {
            return state.reject(input, 1, "verification failed", artifacts);
        }
        verification = Some(v);
    }
    let judgement = match input.judge.filter(|_| config.quality_gates) {
        Some(client) => Some(judge::judge(client, task, input.result, verification.as_ref()).await),
        None => None,
    };
    if let Some(j) = &judgement {
        state.gate_error.clone_from(&j.gate_error);
        let threshold = if task.kind.is_test() {
            config.test_quality_threshold
        } else {
            config.quality_threshold
        };
        if j.score < threshold {
            state.findings.push(Finding {
                stage: Stage::Judge,
                code: None,
                message: format!("score {}/5 (needs {threshold}): {}", j.score, j.feedback),
                file: None,
                line: None,
            });
            return state.reject(input, j.score, &j.feedback, artifacts);
        }
    }
    if config.enable_verification && !task.kind.is_test() {
        let v = verify::run(input.workspace, task.kind, input.runner, timeout).await;
        let passed = v.passed(task.kind);
        state.take_verification(&v);
        if !passed {
            let score = judgement.as_ref().map_or(2, |j: &Judgement| j.score.min(2));
            return state.reject(input, score, "verification failed", artifacts);
        }
    }
    Outcome {
        verdict: Verdict::Pass,
        score: judgement.map(|j| j.score),
        findings: state.findings,
        retry: None,
        artifacts,
        gate_error: state.gate_error,
        checks: state.checks,
    }
}

/// What the stages found so far.
#[derive(Default)]
struct State {
    findings: Vec<Finding>,
    compilation_errors: Vec<CompileError>,
    test_failures: Vec<String>,
    suggestions: Vec<String>,
    checks: Vec<String>,
    gate_error: Option<String>,
}

impl State {
    fn take_verification(&mut self, v: &Verification) {
        self.checks = v
            .runs
            .iter()
            .map(|r| {
                format!(
                    "[{}] {} ({})",
                    r.name,
                    if r.passed { "PASSED" } else { "FAILED" },
                    r.command
                )
            })
            .collect();
        if v.no_runner {
            self.checks
                .push("[tests] no test runner detected".to_owned());
        }
        for r in v.runs.iter().filter(|r| !r.passed) {
            self.findings.push(Finding {
                stage: Stage::Verification,
                code: None,
                message: format!(
                    "[{}] FAILED{}: {}",
                    r.name,
                    if r.timed_out { " (timed out)" } else { "" },
                    r.command
                ),
                file: None,
                line: None,
            });
        }
        if v.no_runner {
            self.findings.push(Finding {
                stage: Stage::Verification,
                code: None,
                message: "no test runner was detected for this project, so the tests could \
                          not be run"
                    .to_owned(),
                file: None,
                line: None,
            });
        }
        self.test_failures.clone_from(&v.test_failures);
        self.suggestions.clone_from(&v.suggestions);
        self.compilation_errors.extend(v.errors.iter().cloned());
    }

    /// A failed result: another attempt while the retries last, else a failure.
    fn reject(
        self,
        input: &Input<'_>,
        score: u8,
        feedback: &str,
        artifacts: Vec<String>,
    ) -> Outcome {
        let max_attempts = input.config.max_verification_retries + 1;
        let verdict = if input.attempt < max_attempts {
            Verdict::NeedsRetry
        } else {
            Verdict::Fail
        };
        let retry = RetryContext {
            previous_feedback: feedback.to_owned(),
            previous_score: score,
            attempt: input.attempt + 1,
            max_attempts,
            previous_model: input.result.model.clone(),
            previous_files: input.modified.to_vec(),
            swarm_progress: input.progress.clone(),
            compilation_errors: self.compilation_errors,
            test_failures: self.test_failures,
            verification_suggestions: self.suggestions,
        };
        Outcome {
            verdict,
            score: Some(score),
            findings: self.findings,
            retry: Some(retry),
            artifacts,
            gate_error: self.gate_error,
            checks: self.checks,
        }
    }
}
