//! One task of a swarm, where it stands, and each dispatch of it to a worker, as the
//! coordinator saves them and `swarm.*` events carry them.

use serde::{Deserialize, Serialize};

use crate::quality::{CompileError, Finding, QualityTask, RetryContext, TaskKind, Verdict};

/// Where one task stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// Waiting for its dependencies, a worker, or its backoff.
    #[default]
    Pending,
    /// A worker has it.
    Running,
    /// The quality pipeline passed it.
    Passed,
    /// Out of attempts.
    Failed,
    /// Not run: a dependency failed or was skipped, or a person skipped it.
    Skipped,
    /// Out of attempts; a person was asked what to do and has not answered yet.
    AwaitingIntervention,
}

impl TaskStatus {
    /// Whether the task will not change any more.
    pub fn is_final(self) -> bool {
        matches!(
            self,
            TaskStatus::Passed | TaskStatus::Failed | TaskStatus::Skipped
        )
    }

    /// One glyph for status lists.
    pub fn glyph(self) -> &'static str {
        match self {
            TaskStatus::Pending => "·",
            TaskStatus::Running => "▶",
            TaskStatus::Passed => "✓",
            TaskStatus::Failed => "✗",
            TaskStatus::Skipped => "⊘",
            TaskStatus::AwaitingIntervention => "?",
        }
    }

    /// The name used in reports and events.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Pending => "pending",
            TaskStatus::Running => "running",
            TaskStatus::Passed => "passed",
            TaskStatus::Failed => "failed",
            TaskStatus::Skipped => "skipped",
            TaskStatus::AwaitingIntervention => "awaiting_intervention",
        }
    }
}

/// One dispatch of a task to a worker, and what came of it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Attempt {
    /// 1-based.
    pub number: u32,
    /// The model the worker ran.
    pub model: String,
    /// The worker's session id, when it reported one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// How the worker process exited (`None`: killed by a signal or never started).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// The pipeline's verdict (`None`: the worker never produced a result to judge).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
    /// The pipeline's score.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<u8>,
    /// What the checks found.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<Finding>,
    /// Compilation errors among them, for the intervention payload.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub compilation_errors: Vec<CompileError>,
    /// Files the worker changed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
    /// Tokens it used (input + output).
    pub tokens: u64,
    /// What it cost; `None` when the price is unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// `error` (the worker failed or crashed), `start` (the worker could not be started:
    /// its command, program or worktree), `quality` (the checks rejected the result),
    /// `budget` (a cap stopped it), `timeout`; `None` when it passed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_mode: Option<String>,
    /// One line on what went wrong.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The worker's final answer, bounded.
    #[serde(default)]
    pub summary: String,
    /// Wall time of the worker and the checks.
    pub duration_ms: u64,
    /// Unix milliseconds it was dispatched (`None`: a swarm saved before this was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_ms: Option<i64>,
    /// Unix milliseconds it was judged and recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_ms: Option<i64>,
    /// The worker slot it ran in, 1 to `max_workers`: a slot runs one attempt at a time,
    /// so the report's timeline draws one lane per slot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker: Option<u32>,
    /// The backoff it left the task in: milliseconds before the next attempt could be
    /// dispatched (`None`: no retry was scheduled after it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backoff_ms: Option<u64>,
}

/// What a person decided about a task that ran out of attempts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum InterventionAnswer {
    /// Try again with this guidance in the prompt.
    Guidance {
        /// What the person says.
        text: String,
    },
    /// The person fixed it by hand: check the files again, no worker.
    Fixed,
    /// Give up on the task (its dependents are skipped).
    Skip,
}

/// One task of the swarm.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SwarmTask {
    /// Unique within the swarm (`task-1`).
    pub id: String,
    /// What kind of work.
    pub kind: TaskKind,
    /// What to do.
    pub description: String,
    /// Ids of tasks that must pass first.
    #[serde(default)]
    pub dependencies: Vec<String>,
    /// Files it is expected to change (workspace-relative).
    #[serde(default)]
    pub target_files: Vec<String>,
    /// Files it should read.
    #[serde(default)]
    pub relevant_files: Vec<String>,
    /// What must be true when it is done.
    #[serde(default)]
    pub acceptance_criteria: Vec<String>,
    /// Rules the work must follow (enrichment).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub technical_constraints: Vec<String>,
    /// Step-by-step instructions (enrichment).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modification_instructions: Option<String>,
    /// Tests that should pass (enrichment).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub test_expectations: Vec<String>,
    /// Structures of the target and relevant files (classes, functions), for the worker.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code_context: Option<String>,
    /// What enrichment changed, for the plan view (`None`: nothing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enrichment: Option<String>,
    /// Where it stands.
    #[serde(default)]
    pub status: TaskStatus,
    /// Every dispatch so far.
    #[serde(default)]
    pub attempts: Vec<Attempt>,
    /// Attempts that count against `worker_retries` (an "I fixed it" re-check and a
    /// person's guidance start a new round).
    #[serde(default)]
    pub round_attempts: u32,
    /// The context for the next attempt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry: Option<RetryContext>,
    /// What people said about it, oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub guidance: Vec<String>,
    /// Why it was skipped or failed, for the report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Unix milliseconds it passed (a passing attempt, or a person's fix re-checked): its
    /// dependents waited on it until then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passed_ms: Option<i64>,
}

impl SwarmTask {
    /// Every file the task declares (targets, then relevant ones), for the overlap rule.
    pub fn files(&self) -> impl Iterator<Item = &String> {
        self.target_files.iter().chain(self.relevant_files.iter())
    }

    /// Whether a worker for it may write files.
    pub fn writes(&self) -> bool {
        self.kind.is_action()
    }

    /// The task as the quality pipeline sees it.
    pub fn quality_task(&self) -> QualityTask {
        QualityTask {
            id: self.id.clone(),
            kind: self.kind,
            description: self.description.clone(),
            target_files: self.target_files.clone(),
            acceptance: self.acceptance_criteria.clone(),
        }
    }

    /// Dispatches that count against the task's caps (an interrupted swarm's are not
    /// the task's doing).
    pub fn dispatches(&self) -> u32 {
        self.attempts
            .iter()
            .filter(|a| a.failure_mode.as_deref() != Some("interrupted"))
            .count() as u32
    }

    /// Tokens every attempt used.
    pub fn tokens(&self) -> u64 {
        self.attempts.iter().map(|a| a.tokens).sum()
    }

    /// What every attempt cost; `None` when any price was unknown.
    pub fn cost_usd(&self) -> Option<f64> {
        self.attempts
            .iter()
            .try_fold(0.0, |sum, a| a.cost_usd.map(|c| sum + c))
    }

    /// The latest judged score.
    pub fn score(&self) -> Option<u8> {
        self.attempts.iter().rev().find_map(|a| a.score)
    }
}
