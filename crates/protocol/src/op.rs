//! What a front end asks the engine to do.

use serde::{Deserialize, Serialize};

use crate::{AgentMode, ApprovalDecision, PermissionMode, PlanSelection};

/// What a rewind puts back to how it was just before the prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RewindScope {
    /// The conversation only, as a new thread version (the old one stays for `/rollback`).
    Conversation,
    /// The files only, to the checkpoint taken before the prompt changed anything.
    Code,
    /// The conversation and the files.
    Both,
}

/// A `/goal` or `/goals` command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum GoalCommand {
    /// Show the goals.
    List,
    /// `/goal TEXT [--budget N]`: the session's objective; other active goals pause.
    Set {
        /// What to achieve.
        objective: String,
        /// Token budget.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        budget: Option<u64>,
    },
    /// `/goals add "..."`: one more active goal.
    Add {
        /// What to achieve.
        objective: String,
    },
    /// `/goals done N`: complete the N-th open goal.
    Done {
        /// Position in the open goals, 1-based.
        number: u32,
    },
    /// `/goal budget N|none`: change the current goal's token budget.
    Budget {
        /// Tokens; `None` removes the limit.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tokens: Option<u64>,
    },
    /// Pause the current goal.
    Pause,
    /// Resume the current goal.
    Resume,
    /// Mark the current goal complete.
    Complete,
    /// Mark the current goal blocked.
    Blocked,
    /// Remove the current goal.
    Clear,
}

/// How hard a reasoning model thinks before it answers (`Op::SetEffort`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReasoningEffort {
    /// Little reasoning: faster and cheaper.
    Low,
    /// Balanced.
    Medium,
    /// Deep reasoning: slower and dearer.
    High,
}

impl ReasoningEffort {
    /// `low`, `medium` or `high`: the wire name, and how the level is shown.
    pub fn as_str(self) -> &'static str {
        match self {
            ReasoningEffort::Low => "low",
            ReasoningEffort::Medium => "medium",
            ReasoningEffort::High => "high",
        }
    }
}

/// A reasoning effort as commands and config spell it (`default`: the provider's).
pub fn parse_effort(text: &str) -> Result<Option<ReasoningEffort>, String> {
    match text {
        "low" => Ok(Some(ReasoningEffort::Low)),
        "medium" => Ok(Some(ReasoningEffort::Medium)),
        "high" => Ok(Some(ReasoningEffort::High)),
        "default" => Ok(None),
        other => Err(format!(
            "effort takes low, medium, high or default, not '{other}'"
        )),
    }
}

/// A request from a front end to the session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Op {
    /// Start a turn with this prompt (queued if a turn is running).
    UserInput {
        /// The prompt.
        text: String,
    },
    /// Run a subagent on a task (`/spawn`); its report is noted for the next prompt.
    Spawn {
        /// What to run.
        #[serde(flatten)]
        request: crate::SpawnRequest,
    },
    /// List the subagents of this session (answered by `subagent_list`).
    ListAgents,
    /// Use this model for the following turns (`/model NAME`, `PROVIDER/NAME`), or route
    /// each turn by its complexity (`auto`); answered by `model_changed`.
    SetModel {
        /// The model, `PROVIDER/NAME`, or `auto`.
        model: String,
    },
    /// List the models this session can use and its routes (answered by `model_list`).
    ListModels,
    /// Tokens and cost per model so far (answered by `cost_report`).
    ShowCost,
    /// How full the model's context window is (answered by `context_report`).
    ShowContext,
    /// Compact the conversation now (answered by `context_compacted` or an error).
    Compact {
        /// What the summary should keep in particular (`/compact FOCUS`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        focus: Option<String>,
    },
    /// The MCP servers, their state and tools (answered by `mcp_servers`).
    ListMcp,
    /// Change one session setting (`/config KEY VALUE`); one that loosens safety needs
    /// `confirm`, else it is refused with what it would change. Without a key: show them.
    Configure {
        /// `permission`, `approval`, `mode`, `model`, `effort`, `trust`, `max_rounds`,
        /// `max_tokens`, `max_duration_secs`, `max_output_tokens`; `None` shows them all.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        key: Option<String>,
        /// The new value.
        #[serde(default)]
        value: String,
        /// The user confirmed a change that loosens safety.
        #[serde(default)]
        confirm: bool,
    },
    /// Cancel the running turn, plan step or planning request; the session stays usable.
    Interrupt,
    /// Answer an `approval_required` event.
    Approval {
        /// The request's id.
        id: String,
        /// The answer.
        #[serde(flatten)]
        decision: ApprovalDecision,
    },
    /// Turn trust mode on or off: whether file tools may reach outside the workspace.
    SetTrust {
        /// The new state.
        on: bool,
    },
    /// List the grants in force (answered by `grant_list`).
    ListGrants,
    /// Remove the grant with this number from `grant_list`.
    RevokeGrant {
        /// The number shown in `grant_list`.
        number: u32,
    },
    /// Branch the conversation here into a new thread and continue in it.
    Fork {
        /// A label for the new thread.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        label: Option<String>,
    },
    /// List the threads of this session (answered by `thread_list`).
    ListThreads,
    /// Continue in another thread (id, unique prefix, or `main`).
    SwitchThread {
        /// The thread.
        id: String,
    },
    /// Go back to the fork point of the current thread, in a new sibling thread (the
    /// current thread stays as it is).
    Rollback,
    /// List this conversation's prompts, numbered for `Rewind` (answered by `prompt_list`).
    ListPrompts,
    /// Go back to just before prompt `prompt` (answered by `rewound`).
    Rewind {
        /// The prompt's number in `prompt_list`.
        prompt: u32,
        /// What goes back: the conversation, the files, or both.
        scope: RewindScope,
    },
    /// Switch the agent mode (takes effect from the next turn). With `permission`, the
    /// permission mode changes too (codewhale's `/mode yolo`); without it, a permission
    /// raised to yolo by an earlier mode switch returns to what the session started with.
    SetMode {
        /// The new agent mode.
        mode: AgentMode,
        /// A permission mode to switch to as well.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        permission: Option<PermissionMode>,
    },
    /// Show the pending plan (answered by `plan`).
    ShowPlan,
    /// Run the selected proposed changes in order (answered by `plan_decided`).
    ApprovePlan {
        /// Which changes.
        selection: PlanSelection,
    },
    /// Discard the selected proposed changes; the reason is given to the model.
    RejectPlan {
        /// Which changes.
        selection: PlanSelection,
        /// Why, for the model to re-plan.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// List file checkpoints, newest first (answered by `checkpoint_list`).
    ListCheckpoints {
        /// How many; `None` for the default (20).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        limit: Option<u32>,
        /// Every session's checkpoints of this workspace, not only this session's.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        all: bool,
    },
    /// Bring the workspace's files back to checkpoint `id`, after a safety checkpoint of
    /// the current state (answered by `restored`).
    RestoreCheckpoint {
        /// The checkpoint's number.
        id: u32,
    },
    /// Undo the file changes of the last turn that changed files (answered by `restored`).
    Undo,
    /// Work with the session's goals (`/goal`, `/goals`); answered by `goals`.
    Goal {
        /// What to do.
        command: GoalCommand,
    },
    /// Work with learnings (`/learn`, `/learnings`); answered by `learning_list`,
    /// `learning_updated` or `learning_proposed`.
    Learning {
        /// What to do.
        command: crate::LearningCommand,
    },
    /// `/auto "task"`: ask the model for a task plan (answered by `plan_generated`,
    /// `plan_generation_failed`, or `plan_generation_cancelled` after an interrupt).
    AutoPlan {
        /// The task to plan.
        task: String,
    },
    /// Answer a `plan_decision_required` event.
    PlanDecision {
        /// The step's number.
        number: u32,
        /// The option chosen: its text, or its 1-based number.
        choice: String,
    },
    /// Change the planner's settings; absent fields stay (answered by
    /// `planner_settings_changed`).
    PlannerSettings {
        /// Roll a failed step back to its checkpoint and stop the plan.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        auto_rollback_on_failure: Option<bool>,
        /// Check plain prompts for needing a plan.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        detect: Option<bool>,
        /// Complexity score at and above which a detected prompt is planned.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        threshold: Option<f64>,
        /// Run independent steps that touch disjoint files together (`/auto-parallel`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parallel: Option<bool>,
    },
    /// Set the reasoning effort of the next model requests (answered by
    /// `effort_changed`); models without one keep their requests unchanged.
    SetEffort {
        /// The effort; `None` leaves it to the provider's default.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        effort: Option<ReasoningEffort>,
    },
    /// End the session once the ops sent before it are done (send `Interrupt` first to
    /// cancel a running turn).
    Shutdown,
}
