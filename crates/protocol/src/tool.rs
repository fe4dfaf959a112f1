//! How a tool is described to the model, how dangerous it is, and what kind of work a call
//! does (for the people watching).

use serde::{Deserialize, Serialize};

/// A tool as advertised to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// Name the model calls it by.
    pub name: String,
    /// What it does, for the model.
    pub description: String,
    /// JSON Schema of its arguments.
    pub parameters: serde_json::Value,
}

/// Danger level of a tool, as in the seeds' tool danger table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DangerLevel {
    /// Read-only.
    Safe,
    /// Changes files or delegates.
    Low,
    /// Runs shell commands.
    Medium,
    /// Destructive.
    High,
}

impl DangerLevel {
    /// `safe`, `low`, `medium` or `high`, as configuration spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            DangerLevel::Safe => "safe",
            DangerLevel::Low => "low",
            DangerLevel::Medium => "medium",
            DangerLevel::High => "high",
        }
    }
}

/// What kind of work a tool call does, so a front end can pick its icon and wording
/// without knowing the tool: the kinds ACP clients know.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolKind {
    /// Reads files or other data.
    Read,
    /// Changes files.
    Edit,
    /// Deletes files.
    Delete,
    /// Moves or renames files.
    Move,
    /// Searches for files or text.
    Search,
    /// Runs a command or code.
    Execute,
    /// Thinks or plans, touching nothing outside the session.
    Think,
    /// Fetches data from the network.
    Fetch,
    /// Anything else, or not known.
    #[default]
    Other,
}
