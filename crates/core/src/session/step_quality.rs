//! `/auto` steps through the quality pipeline: a step that reports itself completed is
//! checked (compilation, pre-flight, concrete checks, verification; the judge when
//! `quality_gate_model` names one) before it counts as done. What was found goes into the
//! step's events and, for another attempt, into its prompt as the "Previous Attempt"
//! block.

use std::sync::Arc;

use atto_protocol::{Event, QualityCheck, StepKind, TaskPlan};
use atto_quality::{Input, Outcome, QualityConfig, QualityTask, TaskKind, Verdict};
use atto_tools::{CancellationToken, ToolContext};

use super::Session;
use super::drive::{self, Inbox};
use crate::quality_gate::{GateRunner, not_run, worker_result};

/// What one attempt at a step left behind, for its checks.
pub(super) struct StepWork {
    /// The model's last answer text.
    pub text: String,
    /// Files it changed (tools and commands, from the checkpoints).
    pub files: Vec<String>,
    /// Where its messages start in the history.
    pub history_from: usize,
}

impl Session {
    /// Remembers a call that never ran, for [`worker_result`].
    pub(super) fn note_ending(&mut self, outcome: &crate::orchestrator::CallOutcome) {
        let status = outcome.status();
        if not_run(status).is_some() {
            self.unrun.insert(outcome.result.call_id.clone(), status);
        }
    }

    /// Runs the pipeline over a step that reported itself completed.
    pub(super) async fn check_step(
        &mut self,
        plan: &TaskPlan,
        i: usize,
        work: &StepWork,
        attempt: u32,
        inbox: &mut Inbox,
    ) -> Outcome {
        let step = &plan.steps[i];
        let workspace = self.options.workspace.clone();
        let config = QualityConfig::load(&workspace).unwrap_or_else(|err| {
            self.emit(Event::Warning {
                message: format!("{err}; the quality checks use their defaults"),
            });
            QualityConfig::default()
        });
        let task = QualityTask {
            id: format!("step-{}", step.number),
            kind: kind_of(step.kind),
            description: step.description.clone(),
            target_files: atto_planner::plan::execute::step_scope(plan, i, &workspace)
                .unwrap_or_default(),
            acceptance: Vec::new(),
        };
        let model = self.options.client.info().model.clone();
        let history = self.history.get(work.history_from..).unwrap_or(&[]);
        let result = worker_result(history, &self.unrun, &work.text, &model);
        let before = match step.checkpoint {
            Some(id) => self.keeper.read_at(id, work.files.clone()).await,
            None => std::collections::BTreeMap::new(),
        };
        let judge = self.step_judge(&config, &model);
        let emit_events = self.events.clone();
        let emit = move |event: Event| {
            let _ = emit_events.send(event);
        };
        let cancel = CancellationToken::new();
        let ctx = ToolContext {
            workspace: workspace.clone(),
            cancel: cancel.clone(),
            sandbox: self.command_sandbox(),
            trust: false,
            judged_paths: None,
            focus: String::new(),
        };
        let bash = self.options.tools.get(atto_tools::names::BASH);
        let approvals = self.approvals.clone();
        let progress = Some(format!("plan step {} of {}", step.number, plan.steps.len()));
        let Some(runner) = GateRunner::new(&mut self.gate, bash, ctx, &emit) else {
            return skipped(attempt);
        };
        let input = Input {
            task: &task,
            result: &result,
            modified: &work.files,
            before: &before,
            workspace: &workspace,
            attempt,
            progress,
            config: &config,
            runner: &runner,
            judge: judge.as_deref(),
        };
        // The gate may ask about a test command: answers and interrupts reach it.
        let (outcome, _) = drive::drive(
            inbox,
            &approvals,
            None,
            &cancel,
            atto_quality::assess(&input),
        )
        .await;
        outcome
    }

    /// The judge only when a model is named for it: it costs a model call per step.
    fn step_judge(
        &self,
        config: &QualityConfig,
        model: &str,
    ) -> Option<Arc<dyn atto_llm::ModelClient>> {
        match config.quality_gate_model.as_str() {
            "" => None,
            name if name == model => Some(Arc::clone(&self.options.client)),
            name => self
                .tree
                .settings
                .connect
                .as_ref()
                .and_then(|connect| connect(name).ok()),
        }
    }
}

/// The outcome when the session cannot run the checks (no `bash` tool): nothing is
/// claimed either way.
fn skipped(attempt: u32) -> Outcome {
    Outcome {
        verdict: Verdict::Pass,
        score: None,
        findings: Vec::new(),
        retry: None,
        artifacts: Vec::new(),
        gate_error: Some(format!(
            "attempt {attempt} was not checked: this session has no bash tool to run checks with"
        )),
        checks: Vec::new(),
    }
}

/// The outcome as events carry it.
pub(super) fn check_of(outcome: &Outcome, attempt: u32) -> QualityCheck {
    let verdict = match outcome.verdict {
        Verdict::Pass => "pass",
        Verdict::Fail => "fail",
        Verdict::NeedsRetry => "needs_retry",
        Verdict::Intervention => "intervention",
    };
    let mut findings: Vec<String> = outcome
        .findings
        .iter()
        .map(|f| {
            let place = match (&f.file, f.line) {
                (Some(file), Some(line)) => format!("{file}:{line} — "),
                (Some(file), None) => format!("{file} — "),
                _ => String::new(),
            };
            let code = f
                .code
                .as_deref()
                .map_or_else(String::new, |c| format!("{c} "));
            format!("{}: {code}{place}{}", stage_name(f.stage), f.message)
        })
        .collect();
    if let Some(why) = &outcome.gate_error {
        findings.push(format!("judge: {why}"));
    }
    QualityCheck {
        verdict: verdict.to_owned(),
        score: outcome.score,
        attempt,
        findings,
        checks: outcome.checks.clone(),
    }
}

/// The pipeline's kind for a planner step.
fn kind_of(kind: StepKind) -> TaskKind {
    match kind {
        StepKind::Implement => TaskKind::Implement,
        StepKind::Refactor => TaskKind::Refactor,
        StepKind::Test => TaskKind::Test,
        StepKind::Document => TaskKind::Document,
        StepKind::Analyze | StepKind::Research | StepKind::Design => TaskKind::Research,
        StepKind::Validate => TaskKind::Review,
    }
}

fn stage_name(stage: atto_quality::Stage) -> &'static str {
    match stage {
        atto_quality::Stage::Compile => "compile",
        atto_quality::Stage::Preflight => "pre-flight",
        atto_quality::Stage::Concrete => "concrete",
        atto_quality::Stage::Verification => "verification",
        atto_quality::Stage::Judge => "judge",
    }
}
