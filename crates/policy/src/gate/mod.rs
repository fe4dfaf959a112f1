//! The gate: one decision — allow, ask or deny — for every call that could have a
//! side effect, from the permission mode, the risk of the exact call and what the user
//! already granted. Pure: it reads facts and returns a decision; it runs nothing,
//! prompts nobody and stores nothing (core does those, in that order).

mod agent;
mod matrix;
mod mode;
mod rule;

use std::path::{Path, PathBuf};

use atto_protocol::{DangerLevel, PermissionMode};

use crate::bash::{BashRisk, Verdict};
use crate::protected::ProtectedPaths;

pub use agent::{
    ModeAction, ModeFacts, SPAWN_TOOL, TEST_WHITELIST, is_write_tool_name, mode_action, offered,
    parse_agent_mode,
};
pub use matrix::{Action, bash_action, level_action};
pub use mode::{PermissionSetting, parse_permission, permission_name, stricter};
pub use rule::{Rule, RuleError, mcp_seed_spelling};

/// A grant as the gate sees it: a parsed rule and what it decides.
#[derive(Debug, Clone)]
pub struct Grant {
    /// Store id, or `None` for session grants and config rules.
    pub id: Option<i64>,
    /// The rule.
    pub rule: Rule,
    /// What a match decides.
    pub action: Action,
    /// Where it came from, for the audit log ("session grant", "user config", …).
    pub origin: String,
}

/// What the gate knows about the session.
pub struct GateContext<'a> {
    /// The permission mode and whether asks become denials (`approval_mode = never`).
    pub permission: PermissionSetting,
    /// Grants and config rules, in any order.
    pub grants: &'a [Grant],
    /// Absolute directories whose writes always ask (atto's own config and data).
    pub protected_dirs: &'a [String],
}

/// What the gate knows about one call.
pub struct CallFacts<'a> {
    /// Tool name.
    pub tool: &'a str,
    /// The tool's danger level.
    pub level: DangerLevel,
    /// Whether this call may change anything.
    pub mutates: bool,
    /// The classifier's verdict, for `bash`.
    pub bash: Option<&'a Verdict>,
    /// Paths the call reads or writes (file tools): workspace-relative, or absolute when
    /// they lead outside the workspace (trust mode).
    pub paths: &'a [String],
}

/// The gate's answer, with what decided it.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// Allow, ask or deny.
    pub action: Action,
    /// One line on what decided it: the rule text, the matrix cell or the protection.
    pub decided_by: String,
    /// Store id of the grant that decided it, to record its use.
    pub grant_id: Option<i64>,
    /// Position in `GateContext::grants` of the grant that decided it.
    pub grant_index: Option<usize>,
    /// Risk label for prompts and events: `SAFE` / `WARN` / `BLOCK`, or the level.
    pub risk: String,
    /// Human reasons (the classifier's, per segment, for commands).
    pub reasons: Vec<String>,
    /// The call writes into repository internals or atto's own files: only a person may
    /// approve it, whatever reads the decision downstream (a swarm's mailbox included).
    pub protected: bool,
}

/// Decides one call.
pub fn decide(ctx: &GateContext<'_>, call: &CallFacts<'_>) -> Decision {
    let mode = ctx.permission.mode;
    let (risk, reasons) = match call.bash {
        Some(v) => (v.risk.as_str().to_owned(), v.reasons.clone()),
        None => (level_label(call.level).to_owned(), Vec::new()),
    };
    let grant = matching_grant(ctx.grants, call);
    // A decision made by the matching grant carries its identity; others carry none.
    let decision = |action, decided_by: String, by_grant: bool| {
        let by = grant.filter(|_| by_grant);
        Decision {
            action,
            decided_by,
            grant_id: by.and_then(|(_, g)| g.id),
            grant_index: by.map(|(i, _)| i),
            risk: risk.clone(),
            reasons: reasons.clone(),
            protected: false,
        }
    };
    // BLOCK is refused in every mode but yolo, and no grant widens it.
    if let Some(v) = call.bash
        && v.risk == BashRisk::Block
        && mode != PermissionMode::Yolo
    {
        return decision(
            Action::Deny,
            "BLOCK verdict: refused in every permission mode but yolo".to_owned(),
            false,
        );
    }
    if let Some((_, g)) = grant
        && g.action == Action::Deny
    {
        return decision(Action::Deny, format!("{} ({})", g.rule, g.origin), true);
    }
    // No mode and no allow grant skips the question.
    if let Some(target) = protected_target(ctx, call) {
        let mut d = decision(
            Action::Ask,
            format!("writes to {target}: repository internals and atto's own files always ask"),
            false,
        );
        d.protected = true;
        return never_asks(ctx, d);
    }
    let d = match grant {
        Some((_, g)) => decision(g.action, format!("{} ({})", g.rule, g.origin), true),
        None => {
            let (action, cell) = matrix_cell(mode, call);
            decision(action, format!("permission matrix: {cell}"), false)
        }
    };
    never_asks(ctx, d)
}

/// What a mutating call writes that is protected, for the decision line.
/// The same protection for file tools (by path) and for bash (the
/// classifier marks commands that write into `.git/`/`.atto/` or make git
/// run a program).
fn protected_target(ctx: &GateContext<'_>, call: &CallFacts<'_>) -> Option<String> {
    if !call.mutates {
        return None;
    }
    let list = ProtectedPaths::new(ctx.protected_dirs.iter().map(PathBuf::from).collect());
    let protected = |p: &String| list.contains(Path::new(p));
    call.paths
        .iter()
        .find(|p| protected(p))
        .cloned()
        .or_else(|| {
            call.bash
                .filter(|v| v.protected_write)
                .map(protected_segment)
        })
}

/// The permission matrix's action for the call, and the cell that gave it.
fn matrix_cell(mode: PermissionMode, call: &CallFacts<'_>) -> (Action, String) {
    match call.bash {
        Some(v) => (
            bash_action(mode, v.risk),
            format!("{mode:?} × {}", v.risk.as_str()),
        ),
        None => (
            level_action(mode, call.level),
            format!("{mode:?} × {}", level_label(call.level)),
        ),
    }
}

/// Under `approval_mode = never`, whatever would ask is denied.
fn never_asks(ctx: &GateContext<'_>, mut d: Decision) -> Decision {
    if d.action == Action::Ask && ctx.permission.deny_asks {
        d.action = Action::Deny;
        d.decided_by = format!("approval mode never (would ask: {})", d.decided_by);
    }
    d
}

/// The strongest grant that matches, with its position: deny beats ask beats allow.
fn matching_grant<'g>(grants: &'g [Grant], call: &CallFacts<'_>) -> Option<(usize, &'g Grant)> {
    grants
        .iter()
        .enumerate()
        .filter(|(_, g)| g.rule.applies(g.action, call.tool, call.bash, call.paths))
        .max_by_key(|(_, g)| match g.action {
            Action::Deny => 2,
            Action::Ask => 1,
            Action::Allow => 0,
        })
}

/// The first segment of `v` that is a protected write, for the decision line.
fn protected_segment(v: &Verdict) -> String {
    v.segments
        .iter()
        .find(|s| s.protected_write)
        .map(|s| format!("`{}`", s.text))
        .unwrap_or_default()
}

/// `SAFE` / `LOW` / `MEDIUM` / `HIGH`.
pub fn level_label(level: DangerLevel) -> &'static str {
    match level {
        DangerLevel::Safe => "SAFE",
        DangerLevel::Low => "LOW",
        DangerLevel::Medium => "MEDIUM",
        DangerLevel::High => "HIGH",
    }
}

#[cfg(test)]
mod tests;
