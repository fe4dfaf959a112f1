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
pub mod retry;
mod runner;
pub mod verify;

use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use config::QualityConfig;
pub use pipeline::{Input, Outcome, assess};
pub use retry::RetryContext;
pub use runner::{LocalRunner, Prepare};

/// A boxed, sendable future.
pub type BoxFuture<'a, T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>>;

/// What kind of work a task is: decides which checks apply and how strictly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskKind {
    /// New behaviour in code.
    #[default]
    Implement,
    /// Tests written and run.
    Test,
    /// Code reshaped without changing behaviour.
    Refactor,
    /// A defect fixed.
    Fix,
    /// Documentation written.
    Document,
    /// Reading and reporting, no changes expected.
    Research,
    /// Judging existing work, no changes expected.
    Review,
    /// Anything else.
    Other,
}

impl TaskKind {
    /// Tasks expected to change files: compilation checks always run for them.
    pub fn is_action(self) -> bool {
        matches!(
            self,
            TaskKind::Implement
                | TaskKind::Test
                | TaskKind::Refactor
                | TaskKind::Fix
                | TaskKind::Document
        )
    }

    /// Test tasks get the stricter rubric and threshold and must show a test run.
    pub fn is_test(self) -> bool {
        self == TaskKind::Test
    }

    /// The name used in config, prompts and events.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskKind::Implement => "implement",
            TaskKind::Test => "test",
            TaskKind::Refactor => "refactor",
            TaskKind::Fix => "fix",
            TaskKind::Document => "document",
            TaskKind::Research => "research",
            TaskKind::Review => "review",
            TaskKind::Other => "other",
        }
    }
}

/// The task a result is judged against.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct QualityTask {
    /// Task or step id.
    pub id: String,
    /// What kind of work.
    pub kind: TaskKind,
    /// What was asked.
    pub description: String,
    /// Workspace-relative files the task is about.
    #[serde(default)]
    pub target_files: Vec<String>,
    /// What must be true when it is done.
    #[serde(default)]
    pub acceptance: Vec<String>,
}

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

/// How bad a compile finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Fails the task.
    Error,
    /// Reported, does not fail.
    Warning,
}

/// A compilation, type or syntax error at a place in a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompileError {
    /// Workspace-relative file.
    pub file: String,
    /// 1-based line, when known.
    pub line: Option<u32>,
    /// What is wrong (`SyntaxError: unexpected indent`).
    pub message: String,
    /// Error or warning.
    pub severity: Severity,
}

impl CompileError {
    /// `file:line — message`, as the seed shows it.
    pub fn line_text(&self) -> String {
        match self.line {
            Some(line) => format!("{}:{line} — {}", self.file, self.message),
            None => format!("{} — {}", self.file, self.message),
        }
    }
}

/// Which stage found something.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// Compilation checks.
    Compile,
    /// Pre-flight checks (no model).
    Preflight,
    /// Concrete checks of the files.
    Concrete,
    /// The project's tests, type checks and lint.
    Verification,
    /// The LLM judge.
    Judge,
}

/// One thing a stage found wrong.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    /// The stage.
    pub stage: Stage,
    /// The seed's check code (`V4`, `V11`), when it has one.
    pub code: Option<String>,
    /// What is wrong, for the worker and the user.
    pub message: String,
    /// The file it is about.
    pub file: Option<String>,
    /// The line, when known.
    pub line: Option<u32>,
}

/// The pipeline's decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The evidence says it is done.
    Pass,
    /// It is not done and another attempt would not help (no retries left).
    Fail,
    /// Not done; try again with the retry context.
    NeedsRetry,
    /// Not done after repeated attempts; a person should look.
    Intervention,
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
