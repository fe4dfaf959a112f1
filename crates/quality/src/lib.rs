//! atto's quality pipeline: a worker's result in, a verdict out. A step, task or
//! subagent is done when the evidence says so, not when the model says so.
//!
//! Stages, in the seed's order (`pipeline::assess` runs them): compilation checks of the
//! changed files (`compile`), pre-flight checks without a model (`preflight`: V4, V6, V7,
//! V10, V11), concrete checks of the files (`concrete`), the verification gate that runs
//! the project's tests, type checks and lint (`verify`), the LLM judge (`judge`), and the
//! artifacts the result names (`artifacts`). A failing result carries a `RetryContext`
//! (`retry`) rendered for the next attempt as the seed's "Previous Attempt" block.
//!
//! Owns: what a task and a result look like to the pipeline, every check, and the
//! settings (`config`, the seed's SwarmConfig quality fields). Does not own: running
//! commands safely (the caller passes a `CommandRunner` that goes through its policy gate
//! and sandbox), the worker, or retrying (the caller retries with the context).

pub mod action;
pub mod artifacts;
pub mod compile;
pub mod concrete;
pub mod config;
pub mod judge;
mod pipeline;
pub mod preflight;
mod runner;
pub mod verify;

use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use atto_protocol::quality::{
    CompileError, Finding, QualityTask, RetryContext, Severity, Stage, TaskKind, Verdict,
};
pub use config::QualityConfig;
pub use pipeline::{Input, Outcome, assess};
pub use runner::{LocalRunner, Prepare};

/// A boxed, sendable future.
pub type BoxFuture<'a, T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>>;

/// One tool call the worker made, as the judge and the pre-flight checks see it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolAction {
    /// Tool name.
    pub tool: String,
    /// Its arguments.
    pub arguments: serde_json::Value,
    /// Its output (the caller bounds it).
    pub output: String,
    /// The command's exit code, for commands.
    pub exit_code: Option<i32>,
    /// Whether the call ran tests.
    pub is_test_run: bool,
    /// Why it never ran (`denied`, `cancelled`, `invalid arguments`, `queued`); `None`
    /// when it ran. A call that did not run is no evidence, whatever its text says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_run: Option<String>,
}

/// What the worker produced.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WorkerResult {
    /// Its final answer text.
    pub text: String,
    /// Its closure report, when it wrote one.
    pub closure_report: Option<String>,
    /// Every tool call it made, in order.
    pub actions: Vec<ToolAction>,
    /// The model that did the work.
    pub model: Option<String>,
}

/// Why a command is run, so the caller's gate can tell atto's own checker from the
/// project's scripts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// atto's own check of a file (compile, parse): no project code is meant to run.
    Check,
    /// The project's tests, type checks or lint: project code runs.
    Verification,
}

/// A command the pipeline wants run in the workspace.
#[derive(Debug, Clone, Copy)]
pub struct CommandRequest<'a> {
    /// A shell command line.
    pub command: &'a str,
    /// Why it runs.
    pub purpose: Purpose,
    /// Longest it may run; then it and every process it started are killed.
    pub timeout: Duration,
}

/// What a command did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommandOutput {
    /// Exit code; `None` when killed or never started.
    pub exit_code: Option<i32>,
    /// Standard output then standard error, bounded by the runner.
    pub output: String,
    /// It was killed at its timeout.
    pub timed_out: bool,
    /// It was not run: why (the gate refused it, it could not start).
    pub refused: Option<String>,
}

impl CommandOutput {
    /// Whether it ran and exited 0.
    pub fn succeeded(&self) -> bool {
        self.refused.is_none() && !self.timed_out && self.exit_code == Some(0)
    }
}

/// Runs the pipeline's commands: through the caller's policy gate and sandbox in a
/// session, plainly in tests and benchmarks ([`LocalRunner`]).
pub trait CommandRunner: Send + Sync {
    /// Runs `request` in the workspace and returns what it did; never panics, never
    /// waits past the timeout.
    fn run<'a>(&'a self, request: CommandRequest<'a>) -> BoxFuture<'a, CommandOutput>;
}
