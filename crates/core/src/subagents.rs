//! Subagents: child sessions of the same process that do delegated work with a budget
//! carved out of their parent's, inside caps that hold for the whole session tree, and
//! hand back a closure report.
//!
//! Owns: the settings (seed defaults), what every session of a tree shares (`SessionTree`:
//! the budget tree, the grant table, the template children are made from, the running
//! limit, the list `/agents` shows), where one session sits in the tree (`TreePosition`), routing a child's
//! approval answers to it (`Approvals`), and running a child (`spawn`, the
//! `spawn_agent` tool in `tool`). Does not own: the turn loop (a child is an ordinary
//! session), the mode table (`atto-policy` refuses writing subagents outside build).

pub mod budget;
pub mod defs;
mod report;
mod spawn;
mod tool;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use atto_llm::ModelClient;
use atto_policy::gate::PermissionSetting;
use atto_protocol::{AgentMode, ApprovalDecision, Op, SubagentInfo, SubagentRole};
use tokio::sync::mpsc;

use crate::session::SessionOptions;
use atto_protocol::OpSender;
pub(crate) use spawn::Spawner;
pub(crate) use tool::SpawnAgentTool;

/// Connects a client for a model named in `/spawn --model` or a custom agent.
pub type Connector = Arc<dyn Fn(&str) -> Result<Arc<dyn ModelClient>, String> + Send + Sync>;

/// How subagents are budgeted and bounded (the seed's defaults; config and flags change
/// them).
#[derive(Clone)]
pub struct SubagentSettings {
    /// A child's default share of its parent's remaining tokens.
    pub share: budget::Share,
    /// Model calls a child may make.
    pub max_iterations: u32,
    /// A child's wall time; it is told to wrap up 30 s (or a tenth) before.
    pub timeout: Duration,
    /// How deep subagents may nest (a child of the session is depth 1).
    pub max_depth: u32,
    /// Subagents running at once in the whole tree.
    pub max_running: usize,
    /// The session-wide caps.
    pub caps: budget::Caps,
    /// Custom agent definitions.
    pub agents: Vec<defs::AgentDef>,
    /// Connects other models; `None`: only the session's model can be used.
    pub connect: Option<Connector>,
}

impl Default for SubagentSettings {
    fn default() -> Self {
        SubagentSettings {
            share: budget::Share::default(),
            max_iterations: 30,
            timeout: Duration::from_secs(300),
            max_depth: 3,
            max_running: 8,
            caps: budget::Caps::default(),
            agents: Vec::new(),
            connect: None,
        }
    }
}

impl std::fmt::Debug for SubagentSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SubagentSettings")
            .field("share", &self.share)
            .field("max_iterations", &self.max_iterations)
            .field("timeout", &self.timeout)
            .field("max_depth", &self.max_depth)
            .field("max_running", &self.max_running)
            .field("caps", &self.caps)
            .field("agents", &self.agents.len())
            .finish_non_exhaustive()
    }
}

/// How long before its hard limit a child is told to wrap up: the seed's 30 s, or a
/// tenth of a shorter limit.
pub(crate) fn wrap_up_lead(timeout: Duration) -> Duration {
    Duration::from_secs(30).min(timeout / 10)
}

/// What every session of one tree shares.
#[derive(Clone)]
pub(crate) struct SessionTree {
    pub budget: Arc<budget::Tree>,
    pub settings: Arc<SubagentSettings>,
    /// The root's options at start: children are made from them (pristine built-in
    /// tools, the unbudgeted client).
    pub template: Arc<SessionOptions>,
    /// Subagents running at once.
    pub running: Arc<tokio::sync::Semaphore>,
    /// Every subagent of the tree, oldest first.
    pub registry: Arc<Mutex<Vec<SubagentInfo>>>,
    /// The grants every session of the tree decides by: a revocation holds for all.
    pub grants: crate::gatekeeper::GrantTable,
}

impl SessionTree {
    pub(crate) fn record(&self, info: SubagentInfo) {
        let mut list = self
            .registry
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match list.iter_mut().find(|a| a.id == info.id) {
            Some(slot) => *slot = info,
            None => list.push(info),
        }
    }

    pub(crate) fn agents(&self) -> Vec<SubagentInfo> {
        self.registry
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}

/// Where a session sits in its tree.
#[derive(Debug, Clone)]
pub(crate) struct TreePosition {
    /// Its budget node (its session id).
    pub node: String,
    /// 0 for the session the user talks to.
    pub depth: u32,
    /// The session that spawned it.
    pub parent: Option<String>,
    /// Files it may write (a writing child with declared files).
    pub scope: Option<Vec<String>>,
    /// The only tools it has (a custom agent's list); `None`: its mode's.
    pub tools: Option<Vec<String>>,
}

/// What a session's calls run under now, read by the `spawn_agent` tool when it starts a
/// child (never wider for the child).
#[derive(Debug, Clone, Copy)]
pub(crate) struct CallAuthority {
    pub mode: AgentMode,
    pub permission: PermissionSetting,
    pub trust: bool,
}

/// Shared view of a session's authority, updated at each turn's start.
pub(crate) type SharedAuthority = Arc<Mutex<CallAuthority>>;

/// Approval answers: to this session's gate, or on to the child that asked.
#[derive(Clone)]
pub(crate) struct Approvals {
    gate: mpsc::UnboundedSender<(String, ApprovalDecision)>,
    children: Arc<Mutex<HashMap<String, (OpSender, String)>>>,
}

impl Approvals {
    pub(crate) fn new(gate: mpsc::UnboundedSender<(String, ApprovalDecision)>) -> Self {
        Approvals {
            gate,
            children: Arc::default(),
        }
    }

    /// Passes an answer on to whoever asked.
    pub(crate) fn answer(&self, id: String, decision: ApprovalDecision) {
        let child = self
            .children
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(&id);
        match child {
            Some((ops, asked_as)) => {
                let _ = ops.submit(Op::Approval {
                    id: asked_as,
                    decision,
                });
            }
            None => {
                let _ = self.gate.send((id, decision));
            }
        }
    }

    /// Remembers that `id` (as shown here) is the child's request `asked_as`.
    pub(crate) fn route(&self, id: String, child: OpSender, asked_as: String) {
        self.children
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(id, (child, asked_as));
    }
}

/// The mode a child of `role` runs in under a parent in `parent`: never wider.
pub(crate) fn child_mode(role: SubagentRole, parent: AgentMode) -> Result<AgentMode, String> {
    use AgentMode::{Build, Debug, Plan, Review};
    match (role, parent) {
        (SubagentRole::Explore | SubagentRole::Review, _)
        | (SubagentRole::Verify, Plan | Review) => Ok(Review),
        (SubagentRole::Verify, Build | Debug) => Ok(Debug),
        (SubagentRole::Implement, Build) => Ok(Build),
        (SubagentRole::Implement, mode) => Err(format!(
            "{} mode: a subagent that writes cannot be started here. Spawn a read-only one \
             (role explore, review or verify), or switch modes (/mode build).",
            mode.as_str().to_uppercase()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_never_gets_a_wider_mode_than_its_parent() {
        use AgentMode::{Build, Debug, Plan, Review};
        use SubagentRole::{Explore, Implement, Verify};
        assert_eq!(child_mode(Explore, Build), Ok(Review));
        assert_eq!(child_mode(SubagentRole::Review, Debug), Ok(Review));
        assert_eq!(child_mode(Verify, Build), Ok(Debug));
        assert_eq!(child_mode(Verify, Plan), Ok(Review));
        assert_eq!(child_mode(Verify, Review), Ok(Review));
        assert_eq!(child_mode(Implement, Build), Ok(Build));
        for parent in [Plan, Review, Debug] {
            assert!(child_mode(Implement, parent).is_err(), "{parent:?}");
        }
    }

    #[test]
    fn the_wrap_up_comes_thirty_seconds_or_a_tenth_before_the_limit() {
        assert_eq!(
            wrap_up_lead(Duration::from_secs(300)),
            Duration::from_secs(30)
        );
        assert_eq!(
            wrap_up_lead(Duration::from_secs(8)),
            Duration::from_millis(800)
        );
    }
}
