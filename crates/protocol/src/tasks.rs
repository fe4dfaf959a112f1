//! Tasks and goals: the vocabulary of task decomposition (a session's tasks with their
//! dependencies, what `/goals` and the task tools show) and of session objectives (`/goal`,
//! with token and time accounting). The rules — which state may follow which, when a goal
//! hits its budget — live in atto-core's `tasks` module.

use serde::{Deserialize, Serialize};

/// Where one task stands (the seeds' six states).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskState {
    /// Ready to start: every dependency is completed or skipped.
    Pending,
    /// Waiting for a dependency that is not completed or skipped yet.
    Blocked,
    /// Being worked on.
    InProgress,
    /// Done.
    Completed,
    /// Attempted and failed; its dependents stay blocked.
    Failed,
    /// Not done, by decision; counts as out of the way for its dependents.
    Skipped,
}

impl TaskState {
    /// The snake_case name, as stored.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskState::Pending => "pending",
            TaskState::Blocked => "blocked",
            TaskState::InProgress => "in_progress",
            TaskState::Completed => "completed",
            TaskState::Failed => "failed",
            TaskState::Skipped => "skipped",
        }
    }

    /// Reads a stored name.
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "pending" => TaskState::Pending,
            "blocked" => TaskState::Blocked,
            "in_progress" => TaskState::InProgress,
            "completed" => TaskState::Completed,
            "failed" => TaskState::Failed,
            "skipped" => TaskState::Skipped,
            _ => return None,
        })
    }

    /// Whether the task is over: completed, failed or skipped.
    pub fn is_finished(self) -> bool {
        matches!(
            self,
            TaskState::Completed | TaskState::Failed | TaskState::Skipped
        )
    }
}

/// One task of a session's decomposition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Task {
    /// Unique id.
    pub id: String,
    /// 1-based number within the session; `/goals` and the task tools name tasks by it.
    pub number: u32,
    /// One line saying what to do.
    pub title: String,
    /// More on what to do, possibly empty.
    #[serde(default)]
    pub detail: String,
    /// Where it stands.
    pub state: TaskState,
    /// Ids of the tasks that must be completed (or skipped) before this one can start, in
    /// the order of their numbers.
    #[serde(default)]
    pub depends_on: Vec<String>,
    /// Unix milliseconds.
    pub created_at: i64,
    /// Unix milliseconds of the last change to it.
    pub updated_at: i64,
    /// What came of it (a summary or the failure), once finished.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
}

/// Where a goal stands (codewhale's six statuses).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GoalStatus {
    /// Being pursued: shown to the model and charged for the work done.
    Active,
    /// Kept but not pursued until resumed.
    Paused,
    /// Cannot go on without something from the user.
    Blocked,
    /// Stopped because the provider's usage limit was reached.
    UsageLimited,
    /// Stopped because it used up its token budget.
    BudgetLimited,
    /// Done.
    Complete,
}

impl GoalStatus {
    /// The snake_case name, as stored.
    pub fn as_str(self) -> &'static str {
        match self {
            GoalStatus::Active => "active",
            GoalStatus::Paused => "paused",
            GoalStatus::Blocked => "blocked",
            GoalStatus::UsageLimited => "usage_limited",
            GoalStatus::BudgetLimited => "budget_limited",
            GoalStatus::Complete => "complete",
        }
    }

    /// Reads a stored name.
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "active" => GoalStatus::Active,
            "paused" => GoalStatus::Paused,
            "blocked" => GoalStatus::Blocked,
            "usage_limited" => GoalStatus::UsageLimited,
            "budget_limited" => GoalStatus::BudgetLimited,
            "complete" => GoalStatus::Complete,
            _ => return None,
        })
    }

    /// Whether the goal is still open (anything but complete).
    pub fn is_open(self) -> bool {
        self != GoalStatus::Complete
    }
}

/// A session objective, with what has been spent on it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Goal {
    /// Unique id.
    pub id: String,
    /// What to achieve, in the user's words.
    pub objective: String,
    /// Where it stands.
    pub status: GoalStatus,
    /// Tokens it may use before it stops as budget-limited; `None` for no limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_budget: Option<u64>,
    /// Tokens used while it was active.
    pub tokens_used: u64,
    /// Milliseconds of work while it was active.
    pub time_used_ms: u64,
    /// Unix milliseconds.
    pub created_at: i64,
    /// Unix milliseconds of the last change to it.
    pub updated_at: i64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_names_are_the_serde_names_and_read_back() {
        let states = [
            TaskState::Pending,
            TaskState::Blocked,
            TaskState::InProgress,
            TaskState::Completed,
            TaskState::Failed,
            TaskState::Skipped,
        ];
        for state in states {
            let json = serde_json::to_value(state).unwrap_or_default();
            assert_eq!(json.as_str(), Some(state.as_str()));
            assert_eq!(TaskState::parse(state.as_str()), Some(state));
        }
        let finished: Vec<_> = states.into_iter().filter(|s| s.is_finished()).collect();
        assert_eq!(
            finished,
            [TaskState::Completed, TaskState::Failed, TaskState::Skipped]
        );
        let statuses = [
            GoalStatus::Active,
            GoalStatus::Paused,
            GoalStatus::Blocked,
            GoalStatus::UsageLimited,
            GoalStatus::BudgetLimited,
            GoalStatus::Complete,
        ];
        for status in statuses {
            let json = serde_json::to_value(status).unwrap_or_default();
            assert_eq!(json.as_str(), Some(status.as_str()));
            assert_eq!(GoalStatus::parse(status.as_str()), Some(status));
            assert_eq!(status.is_open(), status != GoalStatus::Complete);
        }
        assert_eq!(TaskState::parse("done"), None);
        assert_eq!(GoalStatus::parse("Active"), None);
    }
}
