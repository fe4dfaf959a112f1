//! The artifacts of a result (placeholder until this module lands).

use std::path::Path;

use crate::QualityTask;

/// Target files, modified files and paths named in `text` that exist in `workspace`.
pub fn collect(
    _task: &QualityTask,
    _modified: &[String],
    _text: &str,
    _workspace: &Path,
) -> Vec<String> {
    Vec::new()
}
