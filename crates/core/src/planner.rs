//! How a task plan is shown to a person (`present`). The planner itself (plans, their
//! schema, edits and execution rules) is the atto-planner crate; its settings and schema are
//! re-exported here for the front ends that still reach the planner through atto-core.

pub mod present;

pub use atto_planner::plan::{Settings, schema};
