//! atto's shared vocabulary: the types every crate and front end speak.
//!
//! Owns: conversation messages, tool calls and results, usage, the `Op`s a front end
//! sends and the `Event`s it receives, and the channel handle a front end holds.
//! Deliberately holds no logic beyond the readings every side shares (a name's spelling
//! both ways, a plan's tally and step lines, UTC dates) and does no I/O; behaviour lives in
//! the crate that owns the concept.

mod complexity;
mod context;
mod event;
pub mod handle;
mod learning;
mod mcp;
mod message;
mod models;
mod op;
mod permission;
mod plan;
mod planner;
pub mod quality;
mod subagent;
pub mod swarm;
mod tasks;
pub mod time;
mod tool;
pub mod usage;

pub use complexity::{Complexity, ComplexityTier};
pub use context::{CompactTrigger, Compaction, ContextUse};
pub use event::{
    CheckpointInfo, Event, FailureKind, FinalResult, GrantInfo, PlanTally, PromptInfo,
    ProtectionName, RetryNotice, SandboxProtection, SandboxState, ThreadInfo, ToolCallStatus,
    TurnStatus,
};
pub use handle::{AgentHandle, OpSender, SessionClosed};
pub use learning::{
    Learning, LearningCommand, LearningField, LearningKind, LearningRef, LearningScope,
    LearningSource, LearningStatus,
};
pub use mcp::{McpServerInfo, McpServerState, McpToolInfo};
pub use message::{
    AssistantPart, Message, StopReason, ToolCall, ToolResult, Usage, user_text_for_model,
};
pub use models::{ModelRoute, ModelSpend};
pub use op::{GoalCommand, Op, ReasoningEffort, RewindScope, parse_effort};
pub use permission::{ApprovalDecision, ApprovalRequest, GrantScope, PermissionMode};
pub use plan::{
    AgentMode, ChangeOutcome, ChangeStatus, PendingPlan, PlanSelection, PlanStatus, ProposedChange,
    parse_agent_mode,
};
pub use planner::{
    DecisionPoint, PlanStep, RevisionSource, RiskLevel, StepKind, StepOutcome, StepStatus,
    TaskPlan, TaskPlanStatus,
};
pub use quality::QualityCheck;
pub use subagent::{SpawnRequest, SubagentInfo, SubagentRole, SubagentTag, parse_role};
pub use tasks::{Goal, GoalStatus, Task, TaskState};
pub use tool::{DangerLevel, ToolKind, ToolSpec};

/// Version of the JSON event schema written by `atto exec --output-format stream-json`.
pub const EVENT_SCHEMA_VERSION: u32 = 1;

/// Name of the JSON event schema written by `atto exec --output-format stream-json`.
pub const EVENT_SCHEMA: &str = "atto.exec";
