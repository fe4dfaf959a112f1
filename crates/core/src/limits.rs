//! The bounds a turn runs within.

use std::time::Duration;

/// Limits on one turn. A turn that reaches one ends with status `limit_reached`.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Model calls per turn.
    pub max_rounds: u32,
    /// Tokens (input + output, all calls) per turn; `None` for no limit.
    pub max_tokens: Option<u64>,
    /// Wall time per turn; `None` for no limit.
    pub max_duration: Option<Duration>,
    /// Output tokens asked for per model call.
    pub max_output_tokens: u32,
    /// Bytes of one tool result kept for the model; the rest is cut with a note.
    pub max_tool_output_bytes: usize,
    /// How long before `max_duration` the model is told to wrap up (subagents); `None`:
    /// never.
    pub wrap_up_before: Option<Duration>,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_rounds: 50,
            max_tokens: None,
            max_duration: None,
            max_output_tokens: 8192,
            max_tool_output_bytes: 32 * 1024,
            wrap_up_before: None,
        }
    }
}
