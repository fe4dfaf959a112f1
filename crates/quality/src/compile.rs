//! Compilation checks of the files a worker changed (placeholder until this module lands).

use std::path::Path;

use crate::{CommandRunner, CompileError};

/// Checks `files` (workspace-relative) by language, batched; errors and warnings with
/// their places.
pub async fn check(
    _workspace: &Path,
    _files: &[String],
    _runner: &dyn CommandRunner,
) -> Vec<CompileError> {
    Vec::new()
}
