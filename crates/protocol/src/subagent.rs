//! Subagents: what a spawn asks for, and how a child is named in its parent's events.

use serde::{Deserialize, Serialize};

/// What a subagent is for; it decides which tools the child gets (never more than its
/// parent has).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SubagentRole {
    /// Reads and searches only (review mode's tools).
    #[default]
    Explore,
    /// Reads and judges only (review mode's tools).
    Review,
    /// Reads and writes its declared files (the parent's mode).
    Implement,
    /// Reads and runs test commands only (debug mode's tools).
    Verify,
}

impl SubagentRole {
    /// The name used in commands, tool arguments and events.
    pub fn as_str(self) -> &'static str {
        match self {
            SubagentRole::Explore => "explore",
            SubagentRole::Review => "review",
            SubagentRole::Implement => "implement",
            SubagentRole::Verify => "verify",
        }
    }
}

/// A subagent role as commands, tool calls and agent files spell it.
pub fn parse_role(text: &str) -> Result<SubagentRole, String> {
    match text {
        "explore" => Ok(SubagentRole::Explore),
        "review" => Ok(SubagentRole::Review),
        "implement" => Ok(SubagentRole::Implement),
        "verify" => Ok(SubagentRole::Verify),
        other => Err(format!(
            "unknown role '{other}': explore, review, implement or verify"
        )),
    }
}

/// A request for a subagent: the `spawn_agent` tool's arguments and `/spawn`'s.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SpawnRequest {
    /// What the child is to do.
    pub task: String,
    /// A model for the child instead of the parent's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The child's role; `None`: the custom agent's, else `explore`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<SubagentRole>,
    /// A custom agent definition (`.atto/agents/NAME.md`) to run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// Workspace-relative files the child may write (writing roles only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
    /// Tokens for the child instead of the default share (within the parent's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_tokens: Option<u64>,
    /// Model calls the child may make.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_iterations: Option<u32>,
    /// What the parent passes on (findings, constraints), put in the child's prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
}

/// Which subagent an event or approval request comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubagentTag {
    /// The child's session id.
    pub id: String,
    /// Its role.
    pub role: SubagentRole,
    /// Its task, shortened for a label.
    pub task: String,
}

/// One subagent as `/agents` and the agents panel show it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubagentInfo {
    /// The child's session id.
    pub id: String,
    /// The session that spawned it.
    pub parent: String,
    /// 1 for a child of the session the user talks to, 2 for its child, …
    pub depth: u32,
    /// Its task.
    pub task: String,
    /// Its role.
    pub role: SubagentRole,
    /// The model its calls go to.
    pub model: String,
    /// Tokens it may use.
    pub budget_tokens: u64,
    /// Tokens used so far.
    pub tokens_used: u64,
    /// Cost so far in US dollars; `None` when a price is unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// Milliseconds since it started.
    pub elapsed_ms: u64,
    /// `running`, `completed`, `failed`, `stopped`.
    pub status: String,
}
