//! Learnings: lessons that outlive a session (the seed's learning store). A learning is
//! proposed (by the model, by atto's self-improvement protocol, by a swarm task or by the
//! user), validated or rejected by the user, recalled into later requests when relevant,
//! and archived when it no longer applies. The rules — which status may follow which,
//! what is recalled, what is evicted — live in atto-store and atto-core.

use serde::{Deserialize, Serialize};

/// What kind of lesson a learning is (the seed's five types).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LearningKind {
    /// A recurring solution pattern.
    Pattern,
    /// A known workaround for a specific issue.
    Workaround,
    /// An approach that consistently fails.
    Antipattern,
    /// A validated effective technique.
    BestPractice,
    /// A subtle pitfall to watch for.
    Gotcha,
}

impl LearningKind {
    /// Every kind, in the seed's order.
    pub const ALL: [LearningKind; 5] = [
        LearningKind::Pattern,
        LearningKind::Workaround,
        LearningKind::Antipattern,
        LearningKind::BestPractice,
        LearningKind::Gotcha,
    ];

    /// The snake_case name, as stored and typed.
    pub fn as_str(self) -> &'static str {
        match self {
            LearningKind::Pattern => "pattern",
            LearningKind::Workaround => "workaround",
            LearningKind::Antipattern => "antipattern",
            LearningKind::BestPractice => "best_practice",
            LearningKind::Gotcha => "gotcha",
        }
    }

    /// `PATTERN`, `WORKAROUND`, ... as lists and recalled notes name it.
    pub fn label(self) -> &'static str {
        match self {
            LearningKind::Pattern => "PATTERN",
            LearningKind::Workaround => "WORKAROUND",
            LearningKind::Antipattern => "ANTIPATTERN",
            LearningKind::BestPractice => "BEST_PRACTICE",
            LearningKind::Gotcha => "GOTCHA",
        }
    }

    /// Reads a name in any case, `-` or `_` (`best-practice`, `BEST_PRACTICE`).
    pub fn parse(text: &str) -> Option<Self> {
        let name = text.trim().to_ascii_lowercase().replace('-', "_");
        LearningKind::ALL.into_iter().find(|k| k.as_str() == name)
    }
}

/// Where a learning stands in its lifecycle: PROPOSED → VALIDATED or REJECTED → ARCHIVED.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LearningStatus {
    /// Waiting for the user's decision; never recalled.
    Proposed,
    /// Approved (by the user, or automatically at high confidence); recalled when relevant.
    Validated,
    /// Refused by the user; never recalled.
    Rejected,
    /// Retired; never recalled.
    Archived,
}

impl LearningStatus {
    /// Every status, in lifecycle order.
    pub const ALL: [LearningStatus; 4] = [
        LearningStatus::Proposed,
        LearningStatus::Validated,
        LearningStatus::Rejected,
        LearningStatus::Archived,
    ];

    /// The snake_case name, as stored and typed.
    pub fn as_str(self) -> &'static str {
        match self {
            LearningStatus::Proposed => "proposed",
            LearningStatus::Validated => "validated",
            LearningStatus::Rejected => "rejected",
            LearningStatus::Archived => "archived",
        }
    }

    /// Reads a stored or typed name (`pending` is `proposed`).
    pub fn parse(text: &str) -> Option<Self> {
        match text.trim().to_ascii_lowercase().as_str() {
            "pending" => Some(LearningStatus::Proposed),
            name => LearningStatus::ALL.into_iter().find(|s| s.as_str() == name),
        }
    }
}

/// Whom a learning applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LearningScope {
    /// The workspace it was learned in.
    Project,
    /// Every workspace of this user.
    User,
}

impl LearningScope {
    /// `project` or `user`, as stored.
    pub fn as_str(self) -> &'static str {
        match self {
            LearningScope::Project => "project",
            LearningScope::User => "user",
        }
    }
}

/// Who proposed a learning.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LearningSource {
    /// The model, through the `propose_learning` tool.
    Model,
    /// atto's self-improvement protocol: a tool failed, then another attempt worked.
    ToolFailure,
    /// A swarm task that passed only after retries.
    Swarm,
    /// The user (`/learn`).
    User,
    /// Imported from a file (an export, or Attocode's learnings database).
    Import,
}

impl LearningSource {
    /// The snake_case name, as stored.
    pub fn as_str(self) -> &'static str {
        match self {
            LearningSource::Model => "model",
            LearningSource::ToolFailure => "tool_failure",
            LearningSource::Swarm => "swarm",
            LearningSource::User => "user",
            LearningSource::Import => "import",
        }
    }

    /// Reads a stored name.
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "model" => LearningSource::Model,
            "tool_failure" => LearningSource::ToolFailure,
            "swarm" => LearningSource::Swarm,
            "user" => LearningSource::User,
            "import" => LearningSource::Import,
            _ => return None,
        })
    }
}

/// A stored learning.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Learning {
    /// Its number, as `/learnings show N` takes it.
    pub id: i64,
    /// What kind of lesson it is.
    pub kind: LearningKind,
    /// Where it stands.
    pub status: LearningStatus,
    /// Whom it applies to.
    pub scope: LearningScope,
    /// The lesson in one sentence.
    pub description: String,
    /// More on it: the error, what worked, why.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub details: String,
    /// Words it is found by.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keywords: Vec<String>,
    /// Tools or commands it concerns (`bash`, `edit_file`, `cargo test`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub actions: Vec<String>,
    /// Areas it belongs to (`testing`, `COMMAND_NOT_FOUND`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub categories: Vec<String>,
    /// How sure the proposer was, 0 to 1; +0.05 each time it is marked helpful.
    pub confidence: f64,
    /// Who proposed it.
    pub source: LearningSource,
    /// What proposed it, in words: the tool that failed, the swarm task, the file imported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_ref: Option<String>,
    /// The session it was proposed in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// When it was proposed (Unix ms).
    pub created_at: i64,
    /// Requests it was recalled into.
    #[serde(default)]
    pub used: u64,
    /// Times it was marked helpful.
    #[serde(default)]
    pub helpful: u64,
}

/// A learning as events name it: enough to recognise it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LearningRef {
    /// Its number.
    pub id: i64,
    /// Its kind.
    pub kind: LearningKind,
    /// The lesson in one sentence.
    pub description: String,
}

/// A `/learn` or `/learnings` command.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum LearningCommand {
    /// List this workspace's learnings (answered by `learning_list`).
    List {
        /// Only these; `None`: proposed and validated ones.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        status: Option<LearningStatus>,
    },
    /// Show one learning whole (answered by `learning_list`).
    Show {
        /// Its number.
        id: i64,
    },
    /// `/learn "text"`: the user's own lesson, validated as it is written.
    Add {
        /// What kind of lesson.
        kind: LearningKind,
        /// The lesson.
        description: String,
    },
    /// Validate a proposed learning (answered by `learning_updated`).
    Validate {
        /// Its number.
        id: i64,
    },
    /// Reject a proposed learning.
    Reject {
        /// Its number.
        id: i64,
    },
    /// Archive a validated or rejected learning.
    Archive {
        /// Its number.
        id: i64,
    },
    /// Mark a learning helpful: +0.05 confidence (capped at 1).
    Helpful {
        /// Its number.
        id: i64,
    },
    /// Change a learning's words.
    Edit {
        /// Its number.
        id: i64,
        /// Which words.
        field: LearningField,
        /// The new value (keywords comma-separated).
        value: String,
    },
}

/// The words of a learning `/learnings edit` can change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LearningField {
    /// The one-sentence lesson.
    Description,
    /// The details.
    Details,
    /// The keywords (comma-separated when typed).
    Keywords,
    /// The kind (`gotcha`, ...).
    Kind,
}
