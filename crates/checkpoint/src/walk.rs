//! One cheap pass over the workspace before a snapshot the watcher cannot vouch for: it sums
//! the size of the files a snapshot would hold (honouring `.gitignore` as git does) to enforce
//! the size cap, finds nested git repositories so the side repository's `info/exclude` can skip
//! them, lists the directories holding no such file (git does not record them; the snapshot's
//! message does), feeds every file's metadata to the stat fingerprint, and arms the watcher on
//! every directory before reading it. It reads metadata only (the fingerprint reads the few
//! files touched in the last seconds), each file's relative to its directory, and stops as soon
//! as the cap is passed.

use std::path::Path;
use std::rc::Rc;

use ignore::gitignore::{Gitignore, GitignoreBuilder};

use crate::error::CheckpointError;
use crate::fingerprint::{Builder, Fingerprints, Stat};
use crate::index::Compare;
use crate::watch::Watcher;

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
    /// The bytes of the files a snapshot holds, as the size cap counts them.
    pub(crate) bytes: u64,
}

/// The `.gitignore` rules in force in one directory: its own file's, then its parents'.
struct Rules {
    own: Option<Gitignore>,
    parent: Option<Rc<Rules>>,
}

impl Rules {
    /// Whether `path` is ignored: the nearest `.gitignore` with an opinion decides.
    fn ignores(&self, path: &Path, is_dir: bool) -> bool {
        let mut rules = Some(self);
        while let Some(r) = rules {
            if let Some(own) = &r.own {
                let m = own.matched(path, is_dir);
                if m.is_ignore() {
                    return true;
                }
                if m.is_whitelist() {
                    return false;
                }
            }
            rules = r.parent.as_deref();
        }
        false
    }
}

/// A directory being read: its entries in git's path order (a directory sorts as its name
/// followed by `/`), so that the walk meets files in the order of an index.
struct Frame {
    /// Workspace-relative, `/`-separated, ending in `/` (empty for the root).
    rel: Vec<u8>,
    rules: Rc<Rules>,
    entries: std::vec::IntoIter<(Vec<u8>, std::fs::DirEntry, std::fs::FileType)>,
    /// Something a snapshot holds (or a nested repository) lies below it.
    holds: bool,
}

/// Where the walk reports what it sees besides the survey.
pub(crate) struct Observers<'a> {
    /// Watches every directory before its entries are read.
    pub(crate) watcher: Option<&'a mut Watcher>,
    /// Compares every file with an index, in index order.
    pub(crate) compare: Option<&'a mut Compare>,
}

/// Walks `workspace`, feeding `prints` and the observers; fails with `Disabled` once the
/// files add up to more than `cap` bytes.
pub(crate) fn survey(
    workspace: &Path,
    cap: u64,
    mut prints: Builder,
    mut seen: Observers<'_>,
) -> Result<Survey, CheckpointError> {
    let mut nested_repos: Vec<Vec<u8>> = Vec::new();
    let mut empty_dirs: Vec<Vec<u8>> = Vec::new();
    let mut total: u64 = 0;
    let root_rules = Rc::new(Rules {
        own: None,
        parent: None,
    });
    let root = open(
        workspace,
        workspace,
        Vec::new(),
        root_rules,
        &mut prints,
        &mut seen,
    );
    let mut stack = vec![root];
    while let Some(frame) = stack.last_mut() {
        let Some((key, entry, kind)) = frame.entries.next() else {
            close_dir(&mut stack, &mut empty_dirs);
            continue;
        };
        let path = entry.path();
        if kind.is_dir() {
            if frame.rules.ignores(&path, true) {
                continue;
            }
            let mut rel = frame.rel.clone();
            rel.extend_from_slice(&key);
            if path.join(".git").symlink_metadata().is_ok() {
                // Not empty: git skips a nested repository and restores leave it alone.
                frame.holds = true;
                rel.pop();
                nested_repos.push(rel);
                continue;
            }
            let rules = Rc::clone(&frame.rules);
            let child = open(workspace, &path, rel, rules, &mut prints, &mut seen);
            stack.push(child);
            continue;
        }
        let (file, symlink) = (kind.is_file(), kind.is_symlink());
        if !file && !symlink || frame.rules.ignores(&path, false) {
            continue;
        }
        frame.holds = true;
        total += file_seen(
            &frame.rel,
            &key,
            &entry,
            &path,
            symlink,
            &mut prints,
            &mut seen,
        );
        if total > cap {
            return Err(over_cap(workspace, cap));
        }
    }
    nested_repos.sort();
    empty_dirs.sort();
    let prints = prints.finish(&(&nested_repos, &empty_dirs));
    Ok(Survey {
        nested_repos,
        empty_dirs,
        prints,
        bytes: total,
    })
}

/// Done with a directory: empty unless something below it is held.
fn close_dir(stack: &mut Vec<Frame>, empty_dirs: &mut Vec<Vec<u8>>) {
    if let Some(done) = stack.pop() {
        match stack.last_mut() {
            Some(parent) if done.holds => parent.holds = true,
            Some(_) => {
                let mut dir = done.rel;
                dir.pop();
                empty_dirs.push(dir);
            }
            None => {}
        }
    }
}

/// Why the walk stopped: the workspace holds more than the size cap.
fn over_cap(workspace: &Path, cap: u64) -> CheckpointError {
    CheckpointError::Disabled {
        reason: format!(
            "{} holds more than {} of files that .gitignore does not exclude, above the \
             checkpoint size cap; no snapshot was taken and file changes cannot be undone \
             with /restore or /undo — add large paths to .gitignore or raise \
             max_workspace_bytes",
            workspace.display(),
            human_bytes(cap)
        ),
    }
}

/// A file or link the walk holds (`key` in the directory `dir_rel`), fed to the
/// fingerprints and the index comparison; returns the bytes it adds to the size cap's count
/// (a link's and an unreadable file's are none).
fn file_seen(
    dir_rel: &[u8],
    key: &[u8],
    entry: &std::fs::DirEntry,
    path: &Path,
    symlink: bool,
    prints: &mut Builder,
    seen: &mut Observers<'_>,
) -> u64 {
    let meta = entry.metadata();
    if let Some(compare) = seen.compare.as_deref_mut() {
        let mut rel = Vec::with_capacity(dir_rel.len() + key.len());
        rel.extend_from_slice(dir_rel);
        rel.extend_from_slice(key);
        let stat = meta.as_ref().ok().and_then(Stat::of);
        compare.file(&rel, stat.as_ref());
    }
    let Ok(meta) = meta else {
        prints.broken();
        return 0;
    };
    if symlink {
        match std::fs::read_link(path) {
            Ok(target) => prints.add(path, &meta, Some(&target)),
            Err(_) => prints.broken(),
        }
        return 0;
    }
    prints.add(path, &meta, None);
    meta.len()
}

/// Watches `dir`, then reads its entries (`.git` left out) in git's path order. A directory
/// that vanished or cannot be read mid-walk is git's business, not the cap's; but a walk that
/// missed something cannot vouch for the workspace.
fn open(
    workspace: &Path,
    dir: &Path,
    rel: Vec<u8>,
    parent: Rc<Rules>,
    prints: &mut Builder,
    seen: &mut Observers<'_>,
) -> Frame {
    if let Some(w) = seen.watcher.as_deref_mut() {
        w.watch(dir, dir.strip_prefix(workspace).unwrap_or(Path::new("")));
    }
    let rules = Rc::new(Rules {
        own: gitignore(dir),
        parent: Some(parent),
    });
    let mut entries = Vec::new();
    match std::fs::read_dir(dir) {
        Ok(read) => {
            for entry in read {
                let Ok(entry) = entry else {
                    prints.broken();
                    continue;
                };
                if entry.file_name() == ".git" {
                    continue;
                }
                let Ok(kind) = entry.file_type() else {
                    prints.broken();
                    continue;
                };
                let mut key = relative_bytes(Path::new(&entry.file_name()));
                if kind.is_dir() {
                    key.push(b'/');
                }
                entries.push((key, entry, kind));
            }
        }
        Err(_) => prints.broken(),
    }
    entries.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    Frame {
        rel,
        rules,
        entries: entries.into_iter(),
        holds: false,
    }
}

/// The rules of `dir/.gitignore`, when it has one.
fn gitignore(dir: &Path) -> Option<Gitignore> {
    let file = dir.join(".gitignore");
    if !file.is_file() {
        return None;
    }
    let mut builder = GitignoreBuilder::new(dir);
    // A partly invalid file still yields its valid patterns, as git reads it.
    let _ = builder.add(&file);
    builder.build().ok().filter(|g| !g.is_empty())
}

/// A relative path as git spells it: its bytes, `/`-separated.
#[cfg(unix)]
pub(crate) fn relative_bytes(path: &Path) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt;
    path.as_os_str().as_bytes().to_vec()
}

#[cfg(not(unix))]
pub(crate) fn relative_bytes(path: &Path) -> Vec<u8> {
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
        let none = || Observers {
            watcher: None,
            compare: None,
        };
        let survey = survey(dir.path(), 100, prints(), none()).unwrap();
        assert_eq!(survey.nested_repos, vec![b"vendor/lib".to_vec()]);
        assert_eq!(survey.prints.files, 2, "a.txt and the symlink");
        assert!(survey.empty_dirs.is_empty(), "{:?}", survey.empty_dirs);
        assert!(survey.prints.current.is_some());
        let err = super::survey(dir.path(), 3, prints(), none()).unwrap_err();
        assert!(matches!(err, CheckpointError::Disabled { .. }), "{err}");
    }
}
