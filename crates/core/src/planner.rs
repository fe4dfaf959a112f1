//! The planner's settings and schema, re-exported for the code that still reaches the
//! planner through atto-core. The planner itself is the atto-planner crate; how a plan is
//! shown to a person is `atto_present::planner`.

pub use atto_planner::plan::{Settings, schema};
