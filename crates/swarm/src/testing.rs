//! What the crate's tests share.

#![allow(clippy::unwrap_used)]

use std::path::Path;

/// Runs `script` with `sh -c` in `dir`; panics when it fails.
pub(crate) fn sh(dir: &Path, script: &str) {
    let ok = std::process::Command::new("sh")
        .args(["-c", script])
        .current_dir(dir)
        .status()
        .unwrap();
    assert!(ok.success(), "{script}");
}
