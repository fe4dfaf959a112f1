//! Creating the bare side repository by writing its few files instead of running
//! `git init --bare` (a process costs more than the rest of an unchanged snapshot), and the
//! side repository's own settings files: `info/exclude` and `info/attributes`.
//!
//! Crash safety: every file is written to a temporary name and renamed into place, and `HEAD`
//! comes last, because git only takes a directory with a `HEAD` for a repository. Each open
//! checks every piece and adds what is missing, so an interrupted creation is finished by the
//! next open. Two processes creating the repository at once write the same files, each to its
//! own temporary name, so whichever rename lands last leaves the same content. What a snapshot holds is decided elsewhere (`walk`, `lib`).

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::error::CheckpointError;

/// Makes sure `side` is a complete bare repository. Returns true when it holds no refs
/// (created just now), so the caller knows the snapshot list is empty without asking git.
pub(crate) fn ensure(side: &Path) -> Result<bool, CheckpointError> {
    for dir in ["objects", "refs/heads", "refs/tags", crate::git::INDEX_DIR] {
        let dir = side.join(dir);
        std::fs::create_dir_all(&dir).map_err(|e| CheckpointError::io(&dir, e))?;
    }
    let config = side.join("config");
    if !config.is_file() {
        write_atomically(&config, config_text(side))?;
    }
    remove_stale_indexes(&side.join(crate::git::INDEX_DIR));
    remove_stale_objects(&side.join("objects"));
    let head = side.join("HEAD");
    if head.is_file() {
        return Ok(false);
    }
    let empty = !side.join("packed-refs").exists() && !side.join("refs/atto").exists();
    write_atomically(&head, "ref: refs/heads/main\n")?;
    Ok(empty)
}

/// Private index files (see `git`) untouched for two days: left by processes that ended
/// without cleaning up. A live handle whose file goes only rebuilds it on its next snapshot.
fn remove_stale_indexes(dir: &Path) {
    const STALE: Duration = Duration::from_secs(2 * 24 * 60 * 60);
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|m| m.elapsed().ok())
            .is_some_and(|age| age > STALE);
        if old {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Objects left half-written by a process that was killed while writing one (see `object`):
/// an hour is far longer than any write takes.
fn remove_stale_objects(dir: &Path) {
    const STALE: Duration = Duration::from_secs(60 * 60);
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let ours = entry
            .file_name()
            .to_str()
            .is_some_and(|n| n.starts_with(crate::object::TEMP_PREFIX));
        let old = || {
            entry
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|m| m.elapsed().ok())
                .is_some_and(|age| age > STALE)
        };
        if ours && old() {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// What `git init --bare` would write on this machine, minus what the side repo never uses.
fn config_text(side: &Path) -> String {
    let mut text = format!(
        "[core]\n\trepositoryformatversion = 0\n\tfilemode = {}\n\tbare = true\n",
        cfg!(unix)
    );
    // git init probes this the same way: does the upper-cased name reach the same entry?
    // The side directory's name ends in ".git", so upper-casing always changes it.
    let upper = side
        .file_name()
        .map(|n| n.to_string_lossy().to_uppercase())
        .map(|n| side.with_file_name(n));
    if upper.is_some_and(|u| u.exists()) {
        text.push_str("\tignorecase = true\n");
    }
    text
}

/// Writes `<side>/info/exclude` so git skips the user's `.git` and nested repositories (which
/// git would otherwise record as gitlinks, or refuse when they have no commit), and
/// `<side>/info/attributes`, which outranks the workspace's `.gitattributes`, so snapshots
/// hold files byte for byte: no line-ending conversion, `ident` expansion or re-encoding.
/// Rewrites a file only when its content changes. Names are bytes; a name holding a newline
/// cannot be written as a pattern and is left out (git then refuses or records that nested
/// repository, and the snapshot says so).
pub(crate) fn write_info(side: &Path, nested_repos: &[Vec<u8>]) -> Result<(), CheckpointError> {
    // atto's own half-written files (a file tool's write in flight, in this process or
    // another) are never part of a snapshot: they vanish a moment later.
    let mut exclude =
        b"# written by atto: never snapshot git metadata or atto's writes in flight\n.git\n.atto-write-*\n"
            .to_vec();
    for repo in nested_repos.iter().filter(|r| !r.contains(&b'\n')) {
        exclude.push(b'/');
        exclude.extend(escape_pattern(repo));
        exclude.extend(b"/\n");
    }
    let attributes: &[u8] = b"# written by atto: snapshots hold files byte for byte\n\
                      * -text -ident -filter -working-tree-encoding\n";
    let dir = side.join("info");
    for (name, text) in [("exclude", exclude.as_slice()), ("attributes", attributes)] {
        let path = dir.join(name);
        if std::fs::read(&path).is_ok_and(|old| old == text) {
            continue;
        }
        std::fs::create_dir_all(&dir).map_err(|e| CheckpointError::io(&dir, e))?;
        write_atomically(&path, text)?;
    }
    Ok(())
}

/// Writes `text` to a temporary sibling of `path`, then renames it over `path`: readers see
/// the old file or the new one, never half of one.
pub(crate) fn write_atomically(path: &Path, text: impl AsRef<[u8]>) -> Result<(), CheckpointError> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(
        ".tmp-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::write(&tmp, text).map_err(|e| CheckpointError::io(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        CheckpointError::io(path, e)
    })
}

/// Escapes a literal path (bytes) for a gitignore pattern.
fn escape_pattern(path: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(path.len());
    for (i, &b) in path.iter().enumerate() {
        let special = matches!(b, b'*' | b'?' | b'[' | b']' | b'\\' | b' ')
            || (i == 0 && matches!(b, b'#' | b'!'));
        if special {
            out.push(b'\\');
        }
        out.push(b);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_are_escaped() {
        assert_eq!(escape_pattern(b"a b/[x]*"), b"a\\ b/\\[x\\]\\*");
        assert_eq!(escape_pattern(b"#x/!y\xff"), b"\\#x/!y\xff");
    }

    #[test]
    fn objects_a_killed_writer_left_are_swept_once_old() {
        let dir = tempfile::tempdir().unwrap();
        let side = dir.path().join("0123abcd.git");
        ensure(&side).unwrap();
        let objects = side.join("objects");
        let old = objects.join(format!("{}1_0000", crate::object::TEMP_PREFIX));
        let fresh = objects.join(format!("{}2_0000", crate::object::TEMP_PREFIX));
        let other = objects.join("tmp_obj_git");
        for path in [&old, &fresh, &other] {
            std::fs::write(path, "x").unwrap();
        }
        let day_ago = std::time::SystemTime::now() - Duration::from_secs(24 * 60 * 60);
        for path in [&old, &other] {
            std::fs::File::options()
                .write(true)
                .open(path)
                .unwrap()
                .set_modified(day_ago)
                .unwrap();
        }
        ensure(&side).unwrap();
        assert!(!old.exists(), "an hour old: swept");
        assert!(fresh.exists(), "may be a write under way");
        assert!(other.exists(), "not atto's");
    }

    #[test]
    fn ensure_creates_then_completes_a_repository() {
        let dir = tempfile::tempdir().unwrap();
        let side = dir.path().join("0123abcd.git");
        assert!(ensure(&side).unwrap(), "new repositories hold no refs");
        assert_eq!(
            std::fs::read_to_string(side.join("HEAD")).unwrap(),
            "ref: refs/heads/main\n"
        );
        assert!(!ensure(&side).unwrap(), "an existing one is left as it is");
        // A creation interrupted before HEAD and a directory were written.
        std::fs::remove_file(side.join("HEAD")).unwrap();
        std::fs::remove_dir_all(side.join("refs")).unwrap();
        assert!(ensure(&side).unwrap());
        assert!(side.join("refs/heads").is_dir() && side.join("HEAD").is_file());
        let leftovers: Vec<_> = std::fs::read_dir(&side)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().contains(".tmp-"))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
    }
}
