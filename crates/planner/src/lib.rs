//! atto's planner: how complex a prompt is, task plans (drafted by the model, edited,
//! run step by step), and a session's task graph and goals.
//! Must never drive a session, run a tool call or render for a person: atto-core's session
//! actor calls these rules and front ends show their results.
//!
//! - [`complexity`] scores a prompt and says whether it is worth a plan first.
//! - [`plan`] drafts, validates, edits and schedules a [`TaskPlan`](atto_protocol::TaskPlan),
//!   and holds one session's planner state.
//! - [`tasks`] holds the pure rules of the task graph and the goals; [`work`] persists
//!   them through the store and gives the model its task tools.

pub mod complexity;
pub mod plan;
pub mod tasks;
pub mod work;
