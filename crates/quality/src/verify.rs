//! The verification gate (placeholder until this module lands).

use std::path::Path;
use std::time::Duration;

use crate::{CommandRunner, CompileError, TaskKind};

/// One check the gate ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckRun {
    /// `tests`, `type_check` or `lint`.
    pub name: String,
    /// The command line.
    pub command: String,
    /// It ran and passed.
    pub passed: bool,
    /// The end of its output.
    pub output: String,
    /// It was killed at its time limit.
    pub timed_out: bool,
}

/// What the gate found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Verification {
    /// The checks run, in order.
    pub runs: Vec<CheckRun>,
    /// Names of failed tests.
    pub test_failures: Vec<String>,
    /// Type and lint errors with their places.
    pub errors: Vec<CompileError>,
    /// What to fix, by check (`[tests] …`).
    pub suggestions: Vec<String>,
    /// No test runner was found for the project.
    pub no_runner: bool,
}

impl Verification {
    /// Whether the evidence lets a task of `kind` pass.
    pub fn passed(&self, kind: TaskKind) -> bool {
        self.runs.iter().all(|r| r.passed) && !(kind.is_test() && self.no_runner)
    }

    /// The seed's summary lines (`[tests] FAILED: …`, `[lint] PASSED`).
    pub fn summary(&self) -> String {
        String::new()
    }
}

/// Detects the project's runners and runs them through `runner`.
pub async fn run(
    _workspace: &Path,
    _kind: TaskKind,
    _runner: &dyn CommandRunner,
    _timeout: Duration,
) -> Verification {
    Verification::default()
}
