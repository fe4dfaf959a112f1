//! Writing a computed patch to disk all or nothing: each file is written atomically, and
//! when one write fails, the files already written get their old text back (and files
//! that were created, with the directories made for them, are removed).
//!
//! What the files should hold is `apply`'s business; this module only moves bytes.

use crate::ToolError;
use crate::beneath;

/// One file to bring from `before` to `after`.
#[derive(Debug)]
pub(crate) struct Target {
    /// The file, as the kernel resolved it beneath the workspace.
    pub place: beneath::Target,
    pub before: Option<String>,
    pub after: Option<String>,
    /// Permission bits to give the file when it is (re)created: its own from before, or
    /// for a move's new file the moved file's.
    pub mode: Option<u32>,
}

/// Brings every target to its `after` state, or none: see the module docs. `step` does
/// one target's change (the real one is [`write_one`]); tests pass one that fails.
pub(crate) fn commit(
    targets: &[Target],
    mut step: impl FnMut(&Target) -> Result<(), ToolError>,
) -> Result<(), ToolError> {
    let mut done: Vec<&Target> = Vec::new();
    for target in targets {
        if target.before == target.after {
            continue;
        }
        if let Err(e) = step(target) {
            let rel = target.place.rel();
            let mut reason = format!("writing {rel} failed ({e})");
            let unrestored = rollback(&done);
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
        done.push(target);
    }
    Ok(())
}

/// Writes or deletes one target on disk.
pub(crate) fn write_one(target: &Target) -> Result<(), ToolError> {
    set(target, target.after.as_deref())
}

/// Puts the done targets back as they were, last first; what could not be restored.
fn rollback(done: &[&Target]) -> Vec<String> {
    let mut unrestored = Vec::new();
    for target in done.iter().rev() {
        if let Err(e) = set(target, target.before.as_deref()) {
            unrestored.push(e.to_string());
        }
        if target.after.is_some() {
            // Deepest first; a directory something else now uses is not empty and stays.
            target.place.remove_made_dirs();
        }
    }
    unrestored
}

/// Makes the target hold `text`, or not exist when `text` is `None`, through the
/// directory handle it was resolved to.
fn set(target: &Target, text: Option<&str>) -> Result<(), ToolError> {
    let io = |action| {
        move |source| ToolError::Io {
            action,
            path: target.place.rel().to_owned(),
            source,
        }
    };
    match text {
        Some(text) => target
            .place
            .write_atomic(text.as_bytes(), target.mode)
            .map(drop)
            .map_err(io("write")),
        None => match target.place.remove() {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io("delete")(e)),
            _ => Ok(()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn a_failed_write_restores_what_was_written() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().canonicalize().unwrap();
        let root = beneath::Workspace::open(&ws).unwrap();
        fs::write(ws.join("kept.txt"), "old\n").unwrap();
        fs::write(ws.join("gone.txt"), "bye\n").unwrap();
        let target = |rel: &str, before: Option<&str>, after: Option<&str>| Target {
            place: root.resolve(rel).unwrap(),
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
        let e = commit(&targets, |t| {
            if t.place.rel() == "last.txt" {
                Err(ToolError::Internal("disk full".into()))
            } else {
                write_one(t)
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
        commit(&targets, write_one).unwrap();
        assert_eq!(fs::read_to_string(ws.join("kept.txt")).unwrap(), "new\n");
        assert_eq!(
            fs::read_to_string(ws.join("new/deep/made.txt")).unwrap(),
            "made\n"
        );
        assert!(!ws.join("gone.txt").exists());
        assert_eq!(fs::read_to_string(ws.join("last.txt")).unwrap(), "never\n");
    }
}
