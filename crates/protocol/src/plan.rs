//! Agent modes and plan mode's vocabulary: the pending plan, its proposed changes, and what
//! became of each when the user decided.

use serde::{Deserialize, Serialize};

/// Which tools exist for the model: the seeds' four agent modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AgentMode {
    /// Full access (default; codewhale's `agent`).
    #[default]
    Build,
    /// Reads run; writes and commands that are not provably read-only are queued as
    /// proposed changes for the user to approve.
    Plan,
    /// Read-only: every write and command is refused.
    Review,
    /// Reads plus whitelisted test commands.
    Debug,
}

impl AgentMode {
    /// `build`, `plan`, `review` or `debug`.
    pub fn as_str(self) -> &'static str {
        match self {
            AgentMode::Build => "build",
            AgentMode::Plan => "plan",
            AgentMode::Review => "review",
            AgentMode::Debug => "debug",
        }
    }

    /// `BUILD`, `PLAN`, `REVIEW` or `DEBUG`, as messages name the mode.
    pub fn label(self) -> &'static str {
        match self {
            AgentMode::Build => "BUILD",
            AgentMode::Plan => "PLAN",
            AgentMode::Review => "REVIEW",
            AgentMode::Debug => "DEBUG",
        }
    }
}

/// Reads a mode name: `build` (`agent`, `normal`), `plan`, `review`, `debug`; codewhale's
/// numbers `1` (plan) and `2` (agent). `yolo` / `3` is build with permission yolo, so it is
/// answered as `(Build, true)`.
pub fn parse_agent_mode(text: &str) -> Result<(AgentMode, bool), String> {
    match text.trim().to_ascii_lowercase().as_str() {
        "build" | "agent" | "normal" | "2" => Ok((AgentMode::Build, false)),
        "plan" | "1" => Ok((AgentMode::Plan, false)),
        "review" => Ok((AgentMode::Review, false)),
        "debug" => Ok((AgentMode::Debug, false)),
        "yolo" | "3" => Ok((AgentMode::Build, true)),
        other => Err(format!(
            "unknown mode '{other}' (expected build, plan, review, debug; or agent, yolo, 1, 2, 3)"
        )),
    }
}

/// Where a pending plan stands (the seeds' lifecycle).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlanStatus {
    /// Changes proposed, awaiting the user's decision.
    Pending,
    /// Every change was approved (and run).
    Approved,
    /// Every change was rejected (discarded).
    Rejected,
    /// Some changes were decided, others still wait.
    PartiallyApproved,
}

impl PlanStatus {
    /// The snake_case name, as stored.
    pub fn as_str(self) -> &'static str {
        match self {
            PlanStatus::Pending => "pending",
            PlanStatus::Approved => "approved",
            PlanStatus::Rejected => "rejected",
            PlanStatus::PartiallyApproved => "partially_approved",
        }
    }

    /// Reads a stored name.
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "pending" => PlanStatus::Pending,
            "approved" => PlanStatus::Approved,
            "rejected" => PlanStatus::Rejected,
            "partially_approved" => PlanStatus::PartiallyApproved,
            _ => return None,
        })
    }

    /// Whether changes of this plan may still be decided.
    pub fn is_open(self) -> bool {
        matches!(self, PlanStatus::Pending | PlanStatus::PartiallyApproved)
    }
}

/// Where one proposed change stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeStatus {
    /// Waiting for the user.
    Pending,
    /// Approved and run successfully.
    Applied,
    /// Approved, run, and the tool failed (or policy still refused it).
    Failed,
    /// Approved, but the file changed on disk since it was proposed; not applied, still
    /// pending.
    Conflict,
    /// Rejected by the user; discarded.
    Rejected,
}

impl ChangeStatus {
    /// The snake_case name, as stored.
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeStatus::Pending => "pending",
            ChangeStatus::Applied => "applied",
            ChangeStatus::Failed => "failed",
            ChangeStatus::Conflict => "conflict",
            ChangeStatus::Rejected => "rejected",
        }
    }

    /// Reads a stored name.
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "pending" => ChangeStatus::Pending,
            "applied" => ChangeStatus::Applied,
            "failed" => ChangeStatus::Failed,
            "conflict" => ChangeStatus::Conflict,
            "rejected" => ChangeStatus::Rejected,
            _ => return None,
        })
    }

    /// Whether the change still waits for a decision (a conflict stays approvable).
    pub fn is_open(self) -> bool {
        matches!(self, ChangeStatus::Pending | ChangeStatus::Conflict)
    }
}

/// One intercepted call, queued instead of run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProposedChange {
    /// Unique id.
    pub id: String,
    /// The tool that would be called.
    pub tool: String,
    /// Its arguments, exactly as the model gave them.
    pub args: serde_json::Value,
    /// The model's stated reason (the text it wrote with the call).
    pub reason: String,
    /// 1-based position in the plan; `/approve N` and `/reject N` use it.
    pub order: u32,
    /// When it was queued, Unix milliseconds.
    pub proposed_at: i64,
    /// The model's id for the original call.
    pub tool_call_id: String,
    /// The file it writes, for file tools (workspace-relative as given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Fingerprint of the file as the change expects to find it when applied: the file
    /// after the earlier queued changes, or `absent`. `None` for commands.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_hash: Option<String>,
    /// Where it stands.
    pub status: ChangeStatus,
    /// What happened when it was decided (output, error or conflict), if it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
}

/// The changes proposed for one task, awaiting the user.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PendingPlan {
    /// Unique id.
    pub id: String,
    /// The prompt that started it.
    pub task: String,
    /// Unix milliseconds.
    pub created_at: i64,
    /// Unix milliseconds of the last change to it.
    pub updated_at: i64,
    /// The changes, in order.
    pub proposed_changes: Vec<ProposedChange>,
    /// What the model read and ran before proposing (tool names and targets).
    pub exploration_summary: String,
    /// Where it stands.
    pub status: PlanStatus,
    /// The session it belongs to.
    pub session_id: String,
}

/// Which changes a decision covers: `/approve`, `/approve 3` (the first three),
/// `/approve 2,4` or `/approve 3-5` (these, by order number).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PlanSelection {
    /// Every open change.
    All,
    /// The first `n` open changes, in order.
    First {
        /// How many.
        n: u32,
    },
    /// These changes, by order number.
    Picks {
        /// Order numbers, ascending, without repeats.
        orders: Vec<u32>,
    },
}

/// What became of one change when the user decided.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChangeOutcome {
    /// The change's order number.
    pub order: u32,
    /// Its tool.
    pub tool: String,
    /// Its file or command, for display.
    pub target: String,
    /// Applied, failed, conflict or rejected.
    pub status: ChangeStatus,
    /// One line on what happened.
    pub detail: String,
}
