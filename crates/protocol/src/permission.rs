//! Permission modes and approvals: the words front ends and the policy gate share.

use serde::{Deserialize, Serialize};

/// How readily atto acts without asking (the seeds' four permission modes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PermissionMode {
    /// Ask before everything, reads included.
    Strict,
    /// Run safe calls; ask for the rest (the default).
    Interactive,
    /// Run safe and moderate calls; deny dangerous ones.
    AutoSafe,
    /// Run everything, BLOCK included.
    Yolo,
}

/// How long an "always allow" answer lasts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GrantScope {
    /// Until this session ends (kept in memory).
    Session,
    /// For this workspace, in every session.
    Project,
    /// For every workspace of this user.
    User,
}

/// A question the user must answer before a call runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApprovalRequest {
    /// Id to answer with `Op::Approval`.
    pub id: String,
    /// The tool call waiting.
    pub call_id: String,
    /// Tool name.
    pub tool: String,
    /// What kind of work the tool does, so a front end decides by kind rather than by
    /// name; `other` in streams written before it was sent.
    #[serde(default)]
    pub kind: crate::ToolKind,
    /// Exactly what would run: the command, or the path and change.
    pub subject: String,
    /// The risk: `SAFE`, `WARN`, `BLOCK` for commands; the danger level for other tools.
    pub risk: String,
    /// Why it needs approval, per segment for commands.
    pub reasons: Vec<String>,
    /// The rule an "always allow" answer would save.
    pub suggested_rule: String,
    /// The call would run WITHOUT the OS sandbox. Only a person can approve this, and
    /// only once: "always" answers, grants and `--on-ask allow` never do.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unsandboxed: bool,
    /// The gate judged the call a write into protected places (repository internals,
    /// atto's own files), after the kernel resolved its path. Only a person approves it:
    /// no auto mode, grant or swarm mailbox does.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub protected: bool,
    /// The subagent whose call waits; `None` for the session's own calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagent: Option<crate::SubagentTag>,
    /// The call's arguments as the gate judged them, so a front end can show the change
    /// itself (an editor's diff view) rather than parse `subject`; null when none.
    #[serde(default, skip_serializing_if = "serde_json::Value::is_null")]
    pub arguments: serde_json::Value,
}

/// The user's answer to an approval request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum ApprovalDecision {
    /// Run it this once.
    Yes,
    /// Do not run it; the reason, if any, goes to the model.
    No {
        /// Told to the model.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// Run it and save a grant for the suggested rule (or `rule`, if given).
    Always {
        /// How long the grant lasts.
        scope: GrantScope,
        /// A rule to save instead of the suggested one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rule: Option<String>,
    },
    /// Run this command instead (bash only); it is judged again, and BLOCK stays refused.
    Edit {
        /// The edited command.
        command: String,
    },
}
