//! What stops a session from starting: a problem to fix first, or a shared resource busy
//! for now. Every start-up module returns it; it depends on none of them.

/// A setup problem: bad flags, config or environment (exit code 2), or a shared resource
/// that is busy right now, such as the database held by another process (exit code 75).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct SetupError(pub String, pub Retry);

/// Whether running again later may succeed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retry {
    /// Fix the flags, config or environment first.
    No,
    /// Busy or unavailable for now.
    Later,
}

impl SetupError {
    /// A problem to fix before running again.
    pub fn fix(message: impl Into<String>) -> Self {
        SetupError(message.into(), Retry::No)
    }
}
