//! atto's engine: a session actor that runs the turn loop of DESIGN.md §2 behind an
//! [`AgentHandle`], and the tool orchestrator every tool call passes through.
//!
//! Owns: conversation history of a live session, building model requests (system
//! prompt, project instructions, recalled learnings), limits, cancellation, running tool
//! calls, the self-improvement protocol, the context window and compaction.
//! Does not own: wire formats (atto-llm), what tools do (atto-tools), how events are
//! shown (front ends), persistence (a later store crate).

mod audit;
mod checkpoints;
pub mod context;
mod correction;
mod gatekeeper;
pub mod learning;
mod limits;
mod model_failure;
pub mod models;
mod orchestrator;
mod plan_approval;
mod plan_queue;
pub mod planner;
mod prompt;
mod quality_gate;
mod recorder;
mod revert;
mod sandbox_evidence;
mod session;
pub mod subagents;
mod threads;
mod truncate;

pub use atto_protocol::handle::{AgentHandle, OpSender, SessionClosed};
pub use context::ContextSettings;
pub use learning::LearningSettings;
pub use limits::Limits;
pub use plan_queue::target_of as change_target;
pub use prompt::{
    ProjectInstructions, find_project_instructions, find_project_instructions_with,
    instruction_paths,
};
pub use session::{SessionOptions, spawn_session};
