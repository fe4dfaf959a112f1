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
    let artifacts = artifacts::collect(
        input.task,
        input.modified,
        &input.result.text,
        input.workspace,
    );
    let mut state = State::default();
    match state.run_stages(input).await {
        Ok(judgement) => Outcome {
            verdict: Verdict::Pass,
            score: judgement.map(|j| j.score),
            findings: state.findings,
            retry: None,
            artifacts,
            gate_error: state.gate_error,
            checks: state.checks,
        },
        Err(stop) => state.reject(input, stop.score, &stop.feedback, artifacts),
    }
}

/// Why a stage stopped the pipeline: the score it gives the result and the feedback for
/// the next attempt.
struct Rejection {
    score: u8,
    feedback: String,
}

impl Rejection {
    fn new(score: u8, feedback: impl Into<String>) -> Self {
        Rejection {
            score,
            feedback: feedback.into(),
        }
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
    /// The stages in the seed's order; the first that rejects the result stops the rest.
    /// `Ok` carries the judge's judgement when it ran.
    async fn run_stages(&mut self, input: &Input<'_>) -> Result<Option<Judgement>, Rejection> {
        let task = input.task;
        let config = input.config;
        // 1. Compilation checks, always for action tasks.
        if task.kind.is_action() && !input.modified.is_empty() {
            self.check_compiles(input).await?;
        }
        // 2. Pre-flight, no model.
        self.check_preflight(input)?;
        // 3. Concrete checks of the files.
        if config.enable_concrete_validation {
            self.check_concrete(input)?;
        }
        // 4 and 5. Verification and the judge: for test tasks verification first, its results
        // in the judge's prompt; for others the judge first.
        let mut verification = None;
        if config.enable_verification && task.kind.is_test() {
            verification = Some(self.verify(input, 1).await?);
        }
        let judgement = match input.judge.filter(|_| config.quality_gates) {
            Some(client) => {
                Some(judge::judge(client, task, input.result, verification.as_ref()).await)
            }
            None => None,
        };
        if let Some(j) = &judgement {
            self.take_judgement(input, j)?;
        }
        if config.enable_verification && !task.kind.is_test() {
            let score = judgement.as_ref().map_or(2, |j: &Judgement| j.score.min(2));
            self.verify(input, score).await?;
        }
        Ok(judgement)
    }

    /// Stage 1: the changed files compile; warnings are findings, errors reject.
    async fn check_compiles(&mut self, input: &Input<'_>) -> Result<(), Rejection> {
        let errors = compile::check(input.workspace, input.modified, input.runner).await;
        let failing: Vec<CompileError> = errors
            .iter()
            .filter(|e| e.severity == Severity::Error)
            .cloned()
            .collect();
        for e in &errors {
            self.findings.push(Finding {
                stage: Stage::Compile,
                code: None,
                message: e.message.clone(),
                file: Some(e.file.clone()),
                line: e.line,
            });
        }
        if !failing.is_empty() {
            self.compilation_errors = failing;
            return Err(Rejection::new(1, "the changed files do not compile"));
        }
        Ok(())
    }

    /// Stage 2: pre-flight, no model.
    fn check_preflight(&mut self, input: &Input<'_>) -> Result<(), Rejection> {
        let Some(r) = preflight::check(
            input.task,
            input.result,
            input.modified,
            input.workspace,
            input.config,
        ) else {
            return Ok(());
        };
        self.findings.push(Finding {
            stage: Stage::Preflight,
            code: Some(r.code.to_owned()),
            message: r.message.clone(),
            file: None,
            line: None,
        });
        Err(Rejection::new(
            r.score,
            format!("{}: {}", r.code, r.message),
        ))
    }

    /// Stage 3: concrete checks of the files.
    fn check_concrete(&mut self, input: &Input<'_>) -> Result<(), Rejection> {
        let found = concrete::check(input.task, input.modified, input.workspace, input.before);
        if found.is_empty() {
            return Ok(());
        }
        let why = found
            .iter()
            .map(|f| f.message.clone())
            .collect::<Vec<_>>()
            .join("; ");
        self.findings.extend(found);
        Err(Rejection::new(1, why))
    }

    /// The verification gate: the project's checks run; failing ones reject with `score`.
    async fn verify(&mut self, input: &Input<'_>, score: u8) -> Result<Verification, Rejection> {
        let timeout = Duration::from_secs(input.config.verification_timeout_secs);
        let v = verify::run(input.workspace, input.task.kind, input.runner, timeout).await;
        let passed = v.passed(input.task.kind);
        self.take_verification(&v);
        if !passed {
            return Err(Rejection::new(score, "verification failed"));
        }
        Ok(v)
    }

    /// The judge's score against the task's threshold.
    fn take_judgement(&mut self, input: &Input<'_>, j: &Judgement) -> Result<(), Rejection> {
        self.gate_error.clone_from(&j.gate_error);
        let threshold = if input.task.kind.is_test() {
            input.config.test_quality_threshold
        } else {
            input.config.quality_threshold
        };
        if j.score < threshold {
            self.findings.push(Finding {
                stage: Stage::Judge,
                code: None,
                message: format!("score {}/5 (needs {threshold}): {}", j.score, j.feedback),
                file: None,
                line: None,
            });
            return Err(Rejection::new(j.score, j.feedback.clone()));
        }
        Ok(())
    }

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
