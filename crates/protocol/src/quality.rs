//! What the quality pipeline decided about a piece of work, as events carry it, and the
//! task, finding and retry types a swarm's events embed. The checks that produce them live
//! in atto-quality.

mod retry;

pub use retry::RetryContext;

use serde::{Deserialize, Serialize};

/// The verdict on a plan step, task or subagent report, with its evidence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QualityCheck {
    /// `pass`, `fail`, `needs_retry` or `intervention`.
    pub verdict: String,
    /// 1–5 (0: no tool calls at all); absent when nothing scored it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<u8>,
    /// The attempt judged (1 for the first).
    pub attempt: u32,
    /// What was wrong, stage by stage (`compile: a.py:3 — SyntaxError: …`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<String>,
    /// The verification checks run (`[tests] PASSED (python3 -m pytest …)`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<String>,
}

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
