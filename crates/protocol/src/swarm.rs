//! What a swarm reports as it runs: `swarm.*` events, one JSON object per line in
//! stream-json (`{"type":"swarm.task.started",…}`), what the front end answers, and the
//! tasks the events carry. The coordinator that sends them lives in atto-swarm.

mod task;

use serde::{Deserialize, Serialize};

pub use task::{Attempt, InterventionAnswer, SwarmTask, TaskStatus};

use crate::quality::{CompileError, Finding, Verdict};
use crate::{ApprovalDecision, ApprovalRequest};

/// Something that happened in a swarm.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
#[allow(
    clippy::large_enum_variant,
    reason = "a few events per task, sent once each: the approval they carry is not worth a box at every match"
)]
pub enum SwarmEvent {
    /// The swarm has an id and a state row.
    #[serde(rename = "swarm.started")]
    Started {
        /// Swarm id (for `--resume` and `atto swarm status`).
        swarm_id: String,
        /// What the user asked.
        goal: String,
        /// Whether this continues an earlier run.
        resumed: bool,
    },
    /// The task was broken into tasks (after enrichment).
    #[serde(rename = "swarm.decomposed")]
    Decomposed {
        /// The tasks.
        tasks: Vec<SwarmTask>,
        /// Model requests the decomposition took (re-asks included).
        attempts: u32,
    },
    /// Enrichment looked at the tasks.
    #[serde(rename = "swarm.enriched")]
    Enriched {
        /// Tasks found thin.
        thin: Vec<String>,
        /// Tasks enrichment changed.
        enriched: Vec<String>,
        /// Tasks still thin afterwards.
        still_thin: Vec<String>,
        /// Whether the task was decomposed again because most stayed thin.
        redecomposed: bool,
    },
    /// The plan waits for the user's yes (interactive runs).
    #[serde(rename = "swarm.plan")]
    Plan {
        /// The tasks.
        tasks: Vec<SwarmTask>,
    },
    /// A worker took a task.
    #[serde(rename = "swarm.task.started")]
    TaskStarted {
        /// Task id.
        task_id: String,
        /// 1-based attempt.
        attempt: u32,
        /// The worker's model.
        model: String,
        /// The worker process id, when local.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pid: Option<u32>,
    },
    /// What a worker is doing (a tool call started).
    #[serde(rename = "swarm.task.activity")]
    TaskActivity {
        /// Task id.
        task_id: String,
        /// One line (`bash: pytest -q`).
        activity: String,
    },
    /// A worker's approval request the mailbox answered or passed on.
    #[serde(rename = "swarm.permission")]
    Permission {
        /// Task id.
        task_id: String,
        /// The request.
        request: ApprovalRequest,
        /// `auto_approved`, `auto_denied`, `asked`.
        tier: String,
        /// The answer, when the mailbox gave it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        decision: Option<ApprovalDecision>,
    },
    /// The checks judged an attempt.
    #[serde(rename = "swarm.task.checked")]
    TaskChecked {
        /// Task id.
        task_id: String,
        /// Attempt judged.
        attempt: u32,
        /// Verdict.
        verdict: Verdict,
        /// Score.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        score: Option<u8>,
        /// What the checks found.
        findings: Vec<Finding>,
    },
    /// An attempt failed; the task will be dispatched again after a delay.
    #[serde(rename = "swarm.task.retrying")]
    TaskRetrying {
        /// Task id.
        task_id: String,
        /// The next attempt.
        attempt: u32,
        /// Milliseconds until it may be dispatched.
        delay_ms: u64,
        /// Why.
        reason: String,
    },
    /// A task passed.
    #[serde(rename = "swarm.task.passed")]
    TaskPassed {
        /// Task id.
        task_id: String,
        /// Attempts it took.
        attempts: u32,
        /// Score.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        score: Option<u8>,
        /// Files changed.
        files: Vec<String>,
    },
    /// A task failed for good.
    #[serde(rename = "swarm.task.failed")]
    TaskFailed {
        /// Task id.
        task_id: String,
        /// Attempts it took.
        attempts: u32,
        /// Why.
        reason: String,
    },
    /// A task was skipped.
    #[serde(rename = "swarm.task.skipped")]
    TaskSkipped {
        /// Task id.
        task_id: String,
        /// Why.
        reason: String,
    },
    /// A task ran out of attempts and a person should decide (seed payload).
    #[serde(rename = "swarm.task.intervention_needed")]
    InterventionNeeded {
        /// Task id.
        task_id: String,
        /// Its description.
        description: String,
        /// Attempts made.
        attempts: u32,
        /// The last error.
        last_error: String,
        /// Compilation errors of the last attempt.
        compilation_errors: Vec<CompileError>,
        /// `error`, `quality`, `timeout`, `budget`.
        failure_mode: String,
        /// The model of the last attempt.
        model: String,
    },
    /// A model's circuit breaker tripped or closed.
    #[serde(rename = "swarm.model.health")]
    ModelHealth {
        /// The model.
        model: String,
        /// Whether dispatches to it are stopped.
        tripped: bool,
        /// Health 0–100.
        health: u8,
    },
    /// Tasks wait for a model whose circuit breaker is open; repeated as the wait counts
    /// down, so a long wait is never silent.
    #[serde(rename = "swarm.model.waiting")]
    ModelWaiting {
        /// The model.
        model: String,
        /// Seconds until it takes dispatches again.
        wait_seconds: u64,
        /// Why it takes none now (how many failures, and what the last one said).
        reason: String,
    },
    /// Tokens and cost against the cap.
    #[serde(rename = "swarm.budget")]
    Budget {
        /// Tokens used so far.
        tokens: u64,
        /// Token cap.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_tokens: Option<u64>,
        /// Dollars so far.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cost_usd: Option<f64>,
        /// Dollar cap.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_usd: Option<f64>,
    },
    /// A note for the user (a warning from the config, a worker's stderr line).
    #[serde(rename = "swarm.notice")]
    Notice {
        /// The text.
        text: String,
    },
    /// The swarm file, or a file its launch template runs, is not trusted: nothing starts
    /// until the person answers [`SwarmInput::Trust`]. Sent by a session that can ask,
    /// before the swarm is set up.
    #[serde(rename = "swarm.trust_needed")]
    TrustNeeded {
        /// What is not trusted, the launch template, and the whole text to be trusted.
        question: Vec<String>,
    },
    /// The swarm ended (or stopped, resumable).
    #[serde(rename = "swarm.finished")]
    Finished {
        /// Swarm id.
        swarm_id: String,
        /// `finished`, `interrupted`, `failed`.
        status: String,
        /// Tasks passed.
        passed: u32,
        /// Tasks failed.
        failed: u32,
        /// Tasks skipped.
        skipped: u32,
        /// Tokens used in all.
        tokens: u64,
        /// Cost in all; `None` when a price was unknown.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cost_usd: Option<f64>,
        /// The Markdown report's path.
        report: String,
        /// Why the swarm stopped before its tasks ran out (a split that failed, a declined
        /// plan); `None` when it ran its course.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
}

/// What the front end tells a running swarm.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum SwarmInput {
    /// Go ahead with the shown plan (`yes`) or drop it.
    Confirm {
        /// Whether to run it.
        yes: bool,
    },
    /// The answer to an approval the mailbox passed on.
    Approval {
        /// Task id.
        task_id: String,
        /// The request's id.
        id: String,
        /// The answer.
        #[serde(flatten)]
        decision: ApprovalDecision,
    },
    /// A person's answer to `swarm.task.intervention_needed`.
    Intervention {
        /// Task id.
        task_id: String,
        /// What to do.
        #[serde(flatten)]
        answer: InterventionAnswer,
    },
    /// Trust what [`SwarmEvent::TrustNeeded`] showed, as it is now (`yes`), or start
    /// nothing.
    Trust {
        /// Whether to trust it.
        yes: bool,
    },
    /// Stop: running workers are stopped, the state stays resumable.
    Interrupt,
}
