//! Seeding a new side repository from the user's own git repository, read-only, so that the
//! first snapshot of a large checkout hashes only the files that differ from the user's index
//! instead of every file: the side repository borrows the user's objects (an `alternates`
//! entry naming their object directory) and its first private index is a copy of the user's
//! index, stat data included. Nothing is ever written under the user's `.git`.
//!
//! A copied index is only as good as git's reading of it under the side repository's settings,
//! so it is used only when every entry is one `git add -A` there treats as the user's git does:
//! no split or sparse index, no conflicts, no entries marked assume-unchanged, skip-worktree or
//! intent-to-add, no submodules, and a SHA-1 repository whose top is the workspace itself.
//! Anything else leaves the side repository unseeded: the first snapshot is slower, not wrong.
//!
//! Borrowed objects stay in the user's repository. Snapshots only borrow what the user's index
//! held when the side repository was created (committed or staged content), which git keeps as
//! long as it is reachable; [`crate::Checkpoints::collect`] copies every object a snapshot still
//! uses into the side repository, so a rewritten and pruned history cannot take them away.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

/// The user's repository as far as seeding needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UserRepo {
    /// Their index file.
    pub(crate) index: PathBuf,
    /// Their object directory (shared by every worktree of the repository).
    pub(crate) objects: PathBuf,
}

/// The user's repository when `workspace` is the top of its work tree (`.git` a directory, or
/// a `gitdir:` file as in linked worktrees) and its index can seed a side repository.
pub(crate) fn user_repo(workspace: &Path) -> Option<UserRepo> {
    let dot_git = workspace.join(".git");
    let meta = std::fs::symlink_metadata(&dot_git).ok()?;
    let git_dir = if meta.is_dir() {
        dot_git
    } else if meta.is_file() {
        let text = std::fs::read_to_string(&dot_git).ok()?;
        let target = PathBuf::from(text.strip_prefix("gitdir:")?.trim());
        if target.is_absolute() {
            target
        } else {
            workspace.join(target)
        }
    } else {
        return None;
    };
    // A linked worktree keeps its objects (and config) in the common directory.
    let common = match std::fs::read_to_string(git_dir.join("commondir")) {
        Ok(text) => {
            let dir = PathBuf::from(text.trim());
            if dir.is_absolute() {
                dir
            } else {
                git_dir.join(dir)
            }
        }
        Err(_) => git_dir.clone(),
    };
    if !sha1_repository(&common.join("config")) {
        return None;
    }
    let repo = UserRepo {
        index: git_dir.join("index"),
        objects: common.join("objects").canonicalize().ok()?,
    };
    let file = std::fs::File::open(&repo.index).ok()?;
    usable_index(BufReader::with_capacity(1 << 16, file)).then_some(repo)
}

/// Whether the repository's config names no other object format than SHA-1 (the side
/// repository's), and no working tree elsewhere (`core.worktree`).
fn sha1_repository(config: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(config) else {
        return false;
    };
    !text.lines().any(|line| {
        let line = line.trim().to_ascii_lowercase();
        let key = line.split('=').next().unwrap_or_default().trim();
        key == "objectformat" || key == "worktree"
    })
}

/// Reads an index file through, one entry at a time, and says whether every entry and
/// extension is one the side repository can take over as it is (see the module doc).
pub(crate) fn usable_index(r: impl BufRead) -> bool {
    let Some(mut reader) = crate::index::Reader::new(r) else {
        return false;
    };
    while let Some(entry) = reader.next_entry() {
        if entry.unusual {
            return false;
        }
    }
    reader.finish()
}

/// Copies the index file `from` to `to`, keeping its modification time (git trusts an
/// entry's stat data only when the file is older than the index), and says whether the copy
/// is one `git add -A` treats as it treats a fresh index ([`usable_index`]). False, and
/// nothing left at `to`, otherwise.
pub fn copy_index(from: &Path, to: &Path) -> bool {
    let usable = crate::git::copy_keeping_mtime(from, to).is_ok()
        && std::fs::File::open(to).is_ok_and(|f| usable_index(BufReader::new(f)));
    if !usable {
        let _ = std::fs::remove_file(to);
    }
    usable
}

/// Makes the side repository borrow objects from `objects` (writes `objects/info/alternates`
/// when it does not say so already).
pub(crate) fn borrow_objects(side: &Path, objects: &Path) -> std::io::Result<()> {
    let dir = side.join("objects/info");
    let path = dir.join("alternates");
    let line = format!("{}\n", objects.display());
    if std::fs::read_to_string(&path).is_ok_and(|old| old.lines().any(|l| l == line.trim_end())) {
        return Ok(());
    }
    std::fs::create_dir_all(&dir)?;
    crate::side::write_atomically(&path, line).map_err(std::io::Error::other)
}

#[cfg(test)]
mod tests {
    use std::process::Command;

    use super::*;

    fn git(dir: &Path, args: &[&str]) {
        let ok = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(args)
            .current_dir(dir)
            .status()
            .unwrap()
            .success();
        assert!(ok, "git {args:?}");
    }

    fn repo() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        git(dir.path(), &["init", "-q"]);
        for (name, text) in [("a.txt", "a\n"), ("src/b.rs", "b\n"), ("src/deep/c", "c\n")] {
            let path = dir.path().join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        git(dir.path(), &["add", "-A"]);
        git(dir.path(), &["commit", "-qm", "one"]);
        dir
    }

    #[test]
    fn plain_indexes_of_every_version_are_usable() {
        let dir = repo();
        for version in ["2", "3", "4"] {
            git(dir.path(), &["update-index", "--index-version", version]);
            assert!(user_repo(dir.path()).is_some(), "index version {version}");
        }
        // Staged and unstaged changes are ordinary entries.
        std::fs::write(dir.path().join("a.txt"), "staged\n").unwrap();
        git(dir.path(), &["add", "a.txt"]);
        std::fs::write(dir.path().join("a.txt"), "unstaged\n").unwrap();
        let found = user_repo(dir.path()).unwrap();
        assert_eq!(found.index, dir.path().join(".git/index"));
    }

    #[test]
    fn indexes_git_would_read_differently_are_refused() {
        let cases: &[&[&str]] = &[
            &["update-index", "--assume-unchanged", "a.txt"],
            &["update-index", "--skip-worktree", "src/b.rs"],
            &["update-index", "--split-index"],
        ];
        for case in cases {
            let dir = repo();
            git(dir.path(), case);
            assert_eq!(user_repo(dir.path()), None, "{case:?}");
        }
        let dir = repo();
        std::fs::write(dir.path().join("new.txt"), "n\n").unwrap();
        git(dir.path(), &["add", "-N", "new.txt"]);
        assert_eq!(user_repo(dir.path()), None, "intent to add");
        let truncated = std::fs::read(repo().path().join(".git/index")).unwrap();
        assert!(!usable_index(&truncated[..truncated.len() - 30]));
        assert!(usable_index(&truncated[..]));
    }

    #[test]
    fn a_subdirectory_of_a_repository_is_not_its_top() {
        let dir = repo();
        assert_eq!(user_repo(&dir.path().join("src")), None);
        assert_eq!(user_repo(tempfile::tempdir().unwrap().path()), None);
    }
}
