//! What a swarm is made of: its tasks, their attempts, and the whole run's state as it is
//! saved after every change (so `atto swarm --resume ID` continues where it stopped). The
//! task and attempt types are protocol types, since swarm events carry them.

pub use atto_protocol::swarm::{Attempt, InterventionAnswer, SwarmTask, TaskStatus};
use serde::{Deserialize, Serialize};

/// Longest task id.
pub const MAX_ID_LEN: usize = 64;

/// Whether `id` may name a task: 1–64 of `[A-Za-z0-9_-]`. Ids come from the model and
/// become worktree directory names and launch-template arguments, so nothing a path or a
/// shell reads specially (`/`, `.`, `;`, `$`, spaces) may be in one.
pub fn is_valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= MAX_ID_LEN
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Where the whole swarm stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SwarmStatus {
    /// Decomposed, waiting for the plan to be confirmed.
    #[default]
    Planned,
    /// Workers are running.
    Running,
    /// Every task is final.
    Finished,
    /// The user stopped it (resumable).
    Interrupted,
    /// Could not go on (no plan, budget exhausted).
    Failed,
}

impl SwarmStatus {
    /// The name used in reports and events.
    pub fn as_str(self) -> &'static str {
        match self {
            SwarmStatus::Planned => "planned",
            SwarmStatus::Running => "running",
            SwarmStatus::Finished => "finished",
            SwarmStatus::Interrupted => "interrupted",
            SwarmStatus::Failed => "failed",
        }
    }
}

/// A swarm run, as it is saved.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SwarmState {
    /// Its id.
    pub id: String,
    /// What the user asked.
    pub goal: String,
    /// The workspace it works in.
    pub workspace: String,
    /// Where it stands.
    pub status: SwarmStatus,
    /// The tasks, in the decomposer's order.
    pub tasks: Vec<SwarmTask>,
    /// Tokens the coordinator's own calls used (decomposition, enrichment, judging).
    #[serde(default)]
    pub coordinator_tokens: u64,
    /// What they cost; `None` when a price was unknown.
    #[serde(default)]
    pub coordinator_cost_usd: Option<f64>,
    /// Unix milliseconds it was created.
    pub created_ms: i64,
    /// Why it failed, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl SwarmState {
    /// The task with `id`.
    pub fn task(&self, id: &str) -> Option<&SwarmTask> {
        self.tasks.iter().find(|t| t.id == id)
    }

    /// The task with `id`, to change.
    pub fn task_mut(&mut self, id: &str) -> Option<&mut SwarmTask> {
        self.tasks.iter_mut().find(|t| t.id == id)
    }

    /// Tokens used by everything the swarm ran.
    pub fn tokens(&self) -> u64 {
        self.coordinator_tokens + self.tasks.iter().map(SwarmTask::tokens).sum::<u64>()
    }

    /// What everything cost; `None` when a price was unknown.
    pub fn cost_usd(&self) -> Option<f64> {
        let mut sum = self.coordinator_cost_usd?;
        for t in &self.tasks {
            sum += t.cost_usd()?;
        }
        Some(sum)
    }

    /// `passed/total` and the like, for progress lines and retry contexts.
    pub fn progress(&self) -> String {
        let count = |s: TaskStatus| self.tasks.iter().filter(|t| t.status == s).count();
        format!(
            "{} of {} tasks passed, {} running, {} failed, {} skipped",
            count(TaskStatus::Passed),
            self.tasks.len(),
            count(TaskStatus::Running),
            count(TaskStatus::Failed),
            count(TaskStatus::Skipped)
        )
    }
}
