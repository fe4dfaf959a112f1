//! How a run with no person at its terminal talks: where it reads its input, how it
//! reports, and what it does when a call needs approval. `atto exec` and `atto swarm` take
//! these as flags; a swarm in the line session sets them itself.

use clap::ValueEnum;

/// What a headless run does when a call needs approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OnAsk {
    /// Refuse the call; the model is told and may try another way.
    Deny,
    /// Stop the task: exit 1 naming the call that needed approval.
    Fail,
    /// Approve the call (BLOCK verdicts stay refused).
    Allow,
}

/// Where a headless run reads its input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum InputFormat {
    /// The task as text (argument, --prompt-file, stdin).
    Text,
    /// JSON ops, one per line on stdin: `{"type":"approval","id":…,"decision":"yes"}`,
    /// `{"type":"user_input","text":…}`, `{"type":"interrupt"}`.
    StreamJson,
}

/// How `atto exec` reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// Answer text on stdout, progress on stderr.
    Text,
    /// The final result object only, on stdout.
    Json,
    /// One JSON event per line on stdout, the result last.
    StreamJson,
}
