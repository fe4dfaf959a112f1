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

/// Makes `dir` a git repository with an identity for commits, then runs `script` there.
pub(crate) fn git_init(dir: &Path, script: &str) {
    sh(
        dir,
        &format!("git init -q && git config user.email a@b && git config user.name a && {script}"),
    );
}

/// A new temporary directory made a repository by [`git_init`] with `script`.
pub(crate) fn git_repo(script: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    git_init(dir.path(), script);
    dir
}
