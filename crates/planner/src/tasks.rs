//! Task decomposition and session objectives, as pure rules over values in memory: the
//! session's [`TaskGraph`] (tasks with dependencies, the seeds' six states, automatic
//! unblocking; `graph`) and its [`GoalBook`] (the `/goal` objective and the `/goals` list,
//! with token and time accounting; `goals`, whose docs hold the goal rules).
//!
//! Owns: which state may follow which, when a blocked task becomes pending, what a failed
//! dependency does, and validating tasks read back after a restart. Deliberately does no
//! I/O and knows no commands: the session persists what [`TaskGraph::take_changed`] and
//! [`GoalBook::take_changes`] return through the store, and front ends parse `/goals`.
//!
//! # Task rules
//!
//! - A task is numbered 1, 2, 3 … in the order it is added; it may depend only on tasks
//!   that exist already, so adding can never close a cycle (a cycle in stored data is
//!   refused by [`TaskGraph::from_tasks`]).
//! - A dependency is *satisfied* when it is completed or skipped (skipping means "not
//!   needed", so it does not hold anything up). A task with an unsatisfied dependency is
//!   blocked; it becomes pending by itself when its last dependency is satisfied.
//! - A failed dependency is not satisfied: its dependents stay blocked (the seeds unblock
//!   on "complete"), and [`TaskGraph::finish`] reports every task stranded that way. The
//!   way on is to [`retry`](TaskGraph::retry) the failed task or to skip the stranded ones.
//! - Only a pending task can be started. A task can be completed or failed when pending
//!   or in progress, and skipped in any unfinished state. Finished is final, except that a
//!   failed task can be retried.

mod goals;
mod graph;

pub use goals::{GoalBook, GoalChanges, GoalError};
pub use graph::{Finished, TaskError, TaskGraph};

/// Now, in Unix milliseconds (0 if the clock is before 1970): when a task or goal changed.
fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}
