//! One cheap pass over the workspace before each snapshot: it sums the size of the files a
//! snapshot would hold (honouring `.gitignore` as git does) to enforce the size cap, finds
//! nested git repositories so the side repository's `info/exclude` can skip them, lists the
//! directories holding no such file (git does not record them; the snapshot's message does),
//! and feeds every file's metadata to the stat fingerprint. It reads metadata only (the fingerprint
//! reads the few files touched in the last seconds) and stops as soon as the cap is passed.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use crate::error::CheckpointError;
use crate::fingerprint::{Builder, Fingerprints};

/// What one pass over the workspace found.
#[derive(Debug, Default)]
pub(crate) struct Survey {
    /// Nested repositories (directories below the root holding a `.git`), relative, `/`-separated.
    pub(crate) nested_repos: Vec<Vec<u8>>,
    /// Directories (relative, as bytes, `/`-separated, sorted) with no file a snapshot holds
    /// anywhere below them: empty, or holding only ignored files.
    pub(crate) empty_dirs: Vec<Vec<u8>>,
    /// The stat fingerprints of the files seen.
    pub(crate) prints: Fingerprints,
}

/// Walks `workspace`, feeding `prints`; fails with `Disabled` once the files add up to more
/// than `cap` bytes.
pub(crate) fn survey(
    workspace: &Path,
    cap: u64,
    mut prints: Builder,
) -> Result<Survey, CheckpointError> {
    let nested: Arc<Mutex<Vec<PathBuf>>> = Arc::default();
    let found = Arc::clone(&nested);
    let mut builder = ignore::WalkBuilder::new(workspace);
    builder
        .hidden(false)
        .parents(false)
        .ignore(false)
        .git_ignore(true)
        .git_global(false)
        .git_exclude(false)
        .require_git(false)
        .follow_links(false)
        .filter_entry(move |entry| {
            if entry.file_name() == ".git" {
                return false;
            }
            let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
            if is_dir && entry.depth() > 0 && entry.path().join(".git").exists() {
                found
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(entry.path().to_path_buf());
                return false;
            }
            true
        });
    let mut total: u64 = 0;
    let mut dirs = Vec::new();
    let mut holding: HashSet<PathBuf> = HashSet::new();
    for entry in builder.build() {
        // Files that vanish or cannot be read mid-walk are git's business, not the cap's; but
        // a walk that missed something cannot vouch for the workspace.
        let Ok(entry) = entry else {
            prints.broken();
            continue;
        };
        let Some(kind) = entry.file_type() else {
            continue;
        };
        let (file, symlink) = (kind.is_file(), kind.is_symlink());
        if kind.is_dir() && entry.depth() > 0 {
            dirs.push(entry.path().to_path_buf());
        }
        if !file && !symlink {
            continue;
        }
        let mut up = entry.path().parent();
        while let Some(dir) = up.filter(|d| *d != workspace) {
            if !holding.insert(dir.to_path_buf()) {
                break;
            }
            up = dir.parent();
        }
        let Ok(meta) = entry.metadata() else {
            prints.broken();
            continue;
        };
        if symlink {
            match std::fs::read_link(entry.path()) {
                Ok(target) => prints.add(entry.path(), &meta, Some(&target)),
                Err(_) => prints.broken(),
            }
            continue;
        }
        prints.add(entry.path(), &meta, None);
        total += meta.len();
        if total > cap {
            return Err(CheckpointError::Disabled {
                reason: format!(
                    "{} holds more than {} of files that .gitignore does not exclude, above the \
                     checkpoint size cap; no snapshot was taken and file changes cannot be undone \
                     with /restore or /undo — add large paths to .gitignore or raise \
                     max_workspace_bytes",
                    workspace.display(),
                    human_bytes(cap)
                ),
            });
        }
    }
    let mut nested_repos: Vec<Vec<u8>> = nested
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
        .filter_map(|p| p.strip_prefix(workspace).ok())
        .map(relative_bytes)
        .collect();
    nested_repos.sort();
    // A directory holding a nested repository is not empty (git skips it, restores leave it).
    for repo in nested.lock().unwrap_or_else(PoisonError::into_inner).iter() {
        let mut up = repo.parent();
        while let Some(dir) = up.filter(|d| *d != workspace) {
            holding.insert(dir.to_path_buf());
            up = dir.parent();
        }
    }
    let mut empty_dirs: Vec<Vec<u8>> = dirs
        .iter()
        .filter(|d| !holding.contains(*d))
        .filter_map(|d| d.strip_prefix(workspace).ok())
        .map(relative_bytes)
        .collect();
    empty_dirs.sort();
    let prints = prints.finish(&(&nested_repos, &empty_dirs));
    Ok(Survey {
        nested_repos,
        empty_dirs,
        prints,
    })
}

/// A relative path as git spells it: its bytes, `/`-separated.
#[cfg(unix)]
fn relative_bytes(path: &Path) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt;
    path.as_os_str().as_bytes().to_vec()
}

#[cfg(not(unix))]
fn relative_bytes(path: &Path) -> Vec<u8> {
    path.to_string_lossy().replace('\\', "/").into_bytes()
}

fn human_bytes(n: u64) -> String {
    const MB: u64 = 1024 * 1024;
    if n >= MB {
        format!("{} MB", n / MB)
    } else {
        format!("{n} bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn finds_nested_repos_and_enforces_cap() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("vendor/lib/.git")).unwrap();
        std::fs::create_dir_all(dir.path().join(".git")).unwrap();
        std::fs::write(dir.path().join("vendor/lib/big"), vec![0u8; 4096]).unwrap();
        std::fs::write(dir.path().join("a.txt"), b"hello").unwrap();
        std::os::unix::fs::symlink("a.txt", dir.path().join("link")).unwrap();
        let prints = || Builder::new(std::time::SystemTime::now(), None);
        let survey = survey(dir.path(), 100, prints()).unwrap();
        assert_eq!(survey.nested_repos, vec![b"vendor/lib".to_vec()]);
        assert_eq!(survey.prints.files, 2, "a.txt and the symlink");
        assert!(survey.empty_dirs.is_empty(), "{:?}", survey.empty_dirs);
        assert!(survey.prints.current.is_some());
        let err = super::survey(dir.path(), 3, prints()).unwrap_err();
        assert!(matches!(err, CheckpointError::Disabled { .. }), "{err}");
    }
}
