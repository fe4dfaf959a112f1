//! The seeds' two decision tables, in one place: permission mode × tool danger level,
//! and permission mode × bash risk. Nothing else in atto decides allow / ask / deny from
//! a mode.

use atto_protocol::{DangerLevel, PermissionMode};
use serde::{Deserialize, Serialize};

use crate::bash::BashRisk;

/// What happens to a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Run it.
    Allow,
    /// Ask the user first.
    Ask,
    /// Refuse it; the model is told why.
    Deny,
}

impl Action {
    /// `allow`, `ask` or `deny`, as config and the audit log spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Allow => "allow",
            Action::Ask => "ask",
            Action::Deny => "deny",
        }
    }
}

use Action::{Allow, Ask, Deny};

/// Rows: strict, interactive, auto-safe, yolo. Columns: safe tools, moderate tools
/// (LOW and MEDIUM), dangerous tools (HIGH) — the seeds' "Permission Modes" table.
const LEVEL: [[Action; 3]; 4] = [
    [Ask, Ask, Ask],
    [Allow, Ask, Ask],
    [Allow, Allow, Deny],
    [Allow, Allow, Allow],
];

/// Rows as above. Columns: SAFE, WARN, BLOCK — the seeds' bash risk table.
const BASH: [[Action; 3]; 4] = [
    [Ask, Ask, Deny],
    [Allow, Ask, Deny],
    [Allow, Allow, Deny],
    [Allow, Allow, Allow],
];

fn row(mode: PermissionMode) -> usize {
    match mode {
        PermissionMode::Strict => 0,
        PermissionMode::Interactive => 1,
        PermissionMode::AutoSafe => 2,
        PermissionMode::Yolo => 3,
    }
}

/// The action for a non-bash tool of this danger level.
pub fn level_action(mode: PermissionMode, level: DangerLevel) -> Action {
    let col = match level {
        DangerLevel::Safe => 0,
        DangerLevel::Low | DangerLevel::Medium => 1,
        DangerLevel::High => 2,
    };
    LEVEL[row(mode)][col]
}

/// The action for a bash command of this risk.
pub fn bash_action(mode: PermissionMode, risk: BashRisk) -> Action {
    let col = match risk {
        BashRisk::Safe => 0,
        BashRisk::Warn => 1,
        BashRisk::Block => 2,
    };
    BASH[row(mode)][col]
}
