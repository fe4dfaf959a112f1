//! Writing a computed patch to disk all or nothing: each file is written atomically, and
//! when one write fails, the files already written get their old text back (and files
//! that were created, with the directories made for them, are removed).
//!
//! What the files should hold is `apply`'s business; this module only moves bytes.

use std::fs::{self, Permissions};
use std::path::{Path, PathBuf};

use crate::fs_tools::atomic_write;
use crate::{ToolError, paths};

/// One file to bring from `before` to `after`.
#[derive(Debug)]
pub(crate) struct Target {
    pub abs: PathBuf,
    pub before: Option<String>,
    pub after: Option<String>,
    /// Permissions to give the file when it is (re)created: its own from before, or for
    /// a move's new file the moved file's.
    pub mode: Option<Permissions>,
}

/// Brings every target to its `after` state, or none: see the module docs. `step` does
/// one target's change (the real one is [`write_one`]); tests pass one that fails.
pub(crate) fn commit(
    ws: &Path,
    targets: &[Target],
    mut step: impl FnMut(&Path, &Target) -> Result<(), ToolError>,
) -> Result<(), ToolError> {
    let mut done: Vec<(&Target, Vec<PathBuf>)> = Vec::new();
    for target in targets {
        if target.before == target.after {
            continue;
        }
        let made_dirs = if target.after.is_some() {
            missing_dirs(&target.abs)
        } else {
            Vec::new()
        };
        if let Err(e) = step(ws, target) {
            let rel = paths::relative(ws, &target.abs);
            let mut reason = format!("writing {rel} failed ({e})");
            let unrestored = rollback(ws, &done);
            if done.is_empty() {
                reason.push_str("; no file had been written yet");
            } else if unrestored.is_empty() {
                reason.push_str("; the files already written were restored");
            } else {
                reason = format!(
                    "{reason}, and restoring what was already written failed too: {}. Check \
                     these files before going on",
                    unrestored.join("; ")
                );
            }
            return Err(ToolError::PatchFailed {
                reason,
                stale_file: None,
            });
        }
        done.push((target, made_dirs));
    }
    Ok(())
}

/// Writes or deletes one target on disk.
pub(crate) fn write_one(ws: &Path, target: &Target) -> Result<(), ToolError> {
    set(
        ws,
        &target.abs,
        target.after.as_deref(),
        target.mode.as_ref(),
    )
}

/// Puts the done targets back as they were, last first; what could not be restored.
fn rollback(ws: &Path, done: &[(&Target, Vec<PathBuf>)]) -> Vec<String> {
    let mut unrestored = Vec::new();
    for (target, made_dirs) in done.iter().rev() {
        if let Err(e) = set(
            ws,
            &target.abs,
            target.before.as_deref(),
            target.mode.as_ref(),
        ) {
            unrestored.push(e.to_string());
        }
        // Deepest first; a directory something else now uses is not empty and stays.
        for dir in made_dirs {
            let _ = fs::remove_dir(dir);
        }
    }
    unrestored
}

/// Makes `abs` hold `text`, or not exist when `text` is `None`.
fn set(
    ws: &Path,
    abs: &Path,
    text: Option<&str>,
    mode: Option<&Permissions>,
) -> Result<(), ToolError> {
    let rel = paths::relative(ws, abs);
    let io = |action| {
        let rel = rel.clone();
        move |source| ToolError::Io {
            action,
            path: rel,
            source,
        }
    };
    match text {
        Some(text) => {
            let created = atomic_write(ws, abs, text.as_bytes())?;
            if let (true, Some(mode)) = (created, mode) {
                fs::set_permissions(abs, mode.clone()).map_err(io("set permissions of"))?;
            }
            Ok(())
        }
        None => match fs::remove_file(abs) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io("delete")(e)),
            _ => Ok(()),
        },
    }
}

/// The ancestors of `abs` that do not exist yet, deepest first.
fn missing_dirs(abs: &Path) -> Vec<PathBuf> {
    abs.ancestors()
        .skip(1)
        .take_while(|dir| !dir.exists())
        .map(Path::to_path_buf)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_write_restores_what_was_written() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().canonicalize().unwrap();
        fs::write(ws.join("kept.txt"), "old\n").unwrap();
        fs::write(ws.join("gone.txt"), "bye\n").unwrap();
        let target = |rel: &str, before: Option<&str>, after: Option<&str>| Target {
            abs: ws.join(rel),
            before: before.map(str::to_owned),
            after: after.map(str::to_owned),
            mode: None,
        };
        let targets = [
            target("kept.txt", Some("old\n"), Some("new\n")),
            target("new/deep/made.txt", None, Some("made\n")),
            target("gone.txt", Some("bye\n"), None),
            target("last.txt", None, Some("never\n")),
        ];
        let e = commit(&ws, &targets, |ws, t| {
            if t.abs.ends_with("last.txt") {
                Err(ToolError::Internal("disk full".into()))
            } else {
                write_one(ws, t)
            }
        })
        .unwrap_err()
        .to_string();
        assert!(e.contains("writing last.txt failed"), "{e}");
        assert!(e.contains("disk full"), "{e}");
        assert!(e.contains("the files already written were restored"), "{e}");
        assert_eq!(fs::read_to_string(ws.join("kept.txt")).unwrap(), "old\n");
        assert_eq!(fs::read_to_string(ws.join("gone.txt")).unwrap(), "bye\n");
        assert!(!ws.join("new").exists());
        assert!(!ws.join("last.txt").exists());

        // Without the failure, everything lands.
        commit(&ws, &targets, write_one).unwrap();
        assert_eq!(fs::read_to_string(ws.join("kept.txt")).unwrap(), "new\n");
        assert_eq!(
            fs::read_to_string(ws.join("new/deep/made.txt")).unwrap(),
            "made\n"
        );
        assert!(!ws.join("gone.txt").exists());
        assert_eq!(fs::read_to_string(ws.join("last.txt")).unwrap(), "never\n");
    }
}
