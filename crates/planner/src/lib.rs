//! Owns atto's planning rules: prompt complexity, task plans, file overlap, tasks and goals.
//! Never drives a session, runs a tool call or renders for a person (core, front ends do).
//!
//! - [`complexity`] scores a prompt and says whether it is worth a plan first.
//! - [`plan`] drafts, validates, edits and schedules a [`TaskPlan`](atto_protocol::TaskPlan),
//!   and holds one session's planner state.
//! - [`overlap`] says whether two pieces of work may touch the same file (plan steps
//!   and swarm tasks alike).
//! - [`tasks`] holds the pure rules of the task graph and the goals; [`work`] persists
//!   them through the store and gives the model its task tools.

pub mod complexity;
pub mod overlap;
pub mod plan;
pub mod tasks;
pub mod work;
