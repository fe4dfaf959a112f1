//! atto's one SQLite database: where it lives, opening it safely (WAL, numbered migrations,
//! refusing damaged or newer files without touching them), a single handle whose requests run
//! on a dedicated thread off the async runtime, and atto's tables: remembered grants and the
//! audit log (`grants`, `audit`), sessions with their threads and messages (`sessions`),
//! plan mode's pending plans with their proposed changes (`plans`), the planner's task plans
//! (`task_plans`), swarm runs with their saved state (`swarms`), and learnings with their
//! full-text index (`learnings`, recalled by `learnings_recall`, imported by
//! `learnings_import`). Many atto processes may
//! share the file: writes take the write lock before they read (`BEGIN IMMEDIATE`), a
//! request that meets another process's lock is retried within one bound (`busy`), and an
//! error says whether the database was merely unavailable ([`StoreError::is_unavailable`]).
//! Later tables arrive as further migrations and modules here. The crate decides nothing
//! about policy or plans: it stores what it is given.
//!
//! ```no_run
//! # async fn demo() -> Result<(), atto_store::StoreError> {
//! let store = atto_store::Store::open(&atto_store::default_path()?)?;
//! let grants = store.grants_for("/home/me/project").await?;
//! # Ok(()) }
//! ```

mod actor;
mod audit;
mod busy;
mod error;
mod grants;
mod ids;
mod learnings;
mod learnings_import;
mod learnings_recall;
mod migrate;
mod open;
mod plans;
mod session_settings;
mod sessions;
mod swarms;
mod task_plans;
mod tasks;

pub use actor::Store;
pub use audit::AuditEntry;
pub use error::{StoreError, StoreErrorKind};
pub use grants::{GrantRow, NewGrant};
pub use ids::{IdKind, SHORT_ID_MIN, short_form};
pub use learnings::{
    LearningFilter, LearningLimits, MAX_DESCRIPTION, MAX_DETAILS, MAX_WORD, MAX_WORDS, NewLearning,
    Proposal,
};
pub use learnings_import::{
    ImportReport, ImportedLearning, attocode_learning_dbs, is_sqlite, read_attocode_learnings,
};
pub use learnings_recall::{LearningQuery, search_terms};
pub use migrate::LATEST as SCHEMA_VERSION;
pub use open::{IntegrityCheck, OpenOptions, default_path, move_aside};
pub use sessions::{NewSession, SessionRef, SessionRow, ThreadRow};
pub use swarms::{SWARM_PREFIX_MIN, SwarmRow};

/// Now, in unix milliseconds (0 if the clock is before 1970).
pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}
