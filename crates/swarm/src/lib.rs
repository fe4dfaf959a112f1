//! atto's swarm: one task decomposed into typed tasks with dependencies, thin tasks
//! enriched, ready tasks run by `atto exec` worker processes speaking stream-json (so a
//! worker crash cannot take the coordinator down, and the launch command can be a
//! cluster's), every result checked by the quality pipeline and retried with its
//! `RetryContext`, a person asked when a task is stuck, and the state saved in SQLite
//! after every change so a run can be resumed.
//!
//! Owns: the task graph and its validation (`decompose`), enrichment (`enrich`), the
//! scheduling rules (`schedule`: dependencies, file overlap, worker count, backoff,
//! dispatch caps), the circuit breaker per model (`health`), the permission mailbox
//! (`mailbox`), the worker process and its protocol (`worker`), the report (`report`)
//! and the loop tying them together (`coordinator`). Does not own: the checks
//! (atto-quality), the worker's agent (atto-core via `atto exec`), or the front end.

pub mod budget;
pub mod config;
pub mod coordinator;
pub mod decompose;
pub mod enrich;
pub mod events;
pub mod health;
pub mod isolation;
pub mod liveness;
pub mod mailbox;
pub mod remote;
pub mod report;
pub mod schedule;
pub mod task;
mod text;
pub mod worker;

pub use config::{ConfigError, Isolation, Loaded, RoleModels, SwarmConfig};
pub use enrich::{Enrichment, enrich, thin_reasons};
pub use events::{SwarmEvent, SwarmInput};
pub use health::{HealthChange, HealthMonitor};
pub use mailbox::Tier;
pub use report::Caps;
pub use task::{Attempt, InterventionAnswer, SwarmState, SwarmStatus, SwarmTask, TaskStatus};

#[cfg(test)]
mod testing;
