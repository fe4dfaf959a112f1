//! Pre-flight checks without a model (placeholder until this module lands).

use std::path::Path;

use crate::{QualityConfig, QualityTask, WorkerResult};

/// Why pre-flight rejected a result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection {
    /// The seed's code (`V4`, `V6`, `V7`, `V10`, `V11`).
    pub code: &'static str,
    /// The score it gets.
    pub score: u8,
    /// What is wrong, for the worker.
    pub message: String,
}

/// The first pre-flight check `result` fails, if any.
pub fn check(
    _task: &QualityTask,
    _result: &WorkerResult,
    _modified: &[String],
    _workspace: &Path,
    _config: &QualityConfig,
) -> Option<Rejection> {
    None
}
