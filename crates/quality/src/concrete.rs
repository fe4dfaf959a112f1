//! Concrete checks of the modified files (placeholder until this module lands).

use std::collections::BTreeMap;
use std::path::Path;

use crate::{Finding, QualityTask};

/// What is wrong with the modified files; `before` holds their text before the work.
pub fn check(
    _task: &QualityTask,
    _modified: &[String],
    _workspace: &Path,
    _before: &BTreeMap<String, String>,
) -> Vec<Finding> {
    Vec::new()
}
