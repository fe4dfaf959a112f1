//! `CheckpointError`: everything that can stop a snapshot or a restore. Each message says what
//! happened, what was not done, and what to do next; none of them is a panic.

use std::path::PathBuf;

/// Why a checkpoint operation did not happen.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    /// The `git` binary could not be started.
    #[error(
        "checkpoints need the `git` program, which could not be started ({detail}); \
         no snapshot was taken — install git or put it on PATH"
    )]
    GitMissing {
        /// The operating system's reason.
        detail: String,
    },
    /// A git command ran and failed.
    #[error(
        "checkpoint step `git {command}` failed: {stderr}; the workspace files were not changed by it"
    )]
    GitFailed {
        /// The git subcommand and its main arguments.
        command: String,
        /// git's stderr, folded into one line.
        stderr: String,
    },
    /// Checkpoints are switched off for this workspace (for example, it is too large).
    #[error("CHECKPOINTS ARE OFF for this workspace: {reason}")]
    Disabled {
        /// Why, and what to do about it.
        reason: String,
    },
    /// No checkpoint has this id (never taken, or pruned).
    #[error("no checkpoint {id}; /restore list shows them")]
    UnknownId {
        /// The id that was asked for.
        id: u32,
    },
    /// No checkpoint was taken during this turn, so there is nothing to undo.
    #[error(
        "no checkpoint was taken in turn {turn}, so there are no file changes to undo; /restore list shows the checkpoints"
    )]
    NoCheckpointInTurn {
        /// The turn that was asked for.
        turn: u32,
    },
    /// A snapshot's content is gone from the side repository (it borrowed objects from the
    /// user's repository, which was rewritten or deleted before they were copied in).
    #[error(
        "checkpoint {id} can no longer be restored: {why}; no file was changed — pick a later \
         checkpoint (/restore list), and let `atto checkpoints gc` copy in what newer ones \
         borrow before the repository changes again"
    )]
    Unrestorable {
        /// The checkpoint asked for.
        id: u32,
        /// What is missing.
        why: String,
    },
    /// A file or directory of the workspace or the data dir could not be read or written.
    #[error("checkpoint I/O on {path}: {source}")]
    Io {
        /// The path involved.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A restore failed part-way. Every path it had changed was put back as the safety
    /// snapshot holds it, unless `not_put_back` says otherwise.
    #[error("{summary}")]
    RestoreFailed {
        /// The snapshot being restored.
        target: u32,
        /// The safety snapshot: the workspace as it was before the restore.
        safety: u32,
        /// The path the restore stopped at, and why; nothing was changed at it.
        failed: (PathBuf, String),
        /// How many paths the restore had changed before it stopped.
        changed: usize,
        /// Paths that could not be put back (left as the target has them), and why.
        not_put_back: Vec<(PathBuf, String)>,
        /// All of the above in one message.
        summary: String,
    },
    /// git printed something this crate could not understand.
    #[error(
        "unexpected output from git ({what}); the side repository may be damaged — delete {side} to start over"
    )]
    Corrupt {
        /// What could not be parsed.
        what: String,
        /// The side repository.
        side: PathBuf,
    },
}

impl CheckpointError {
    pub(crate) fn restore_failed(
        target: u32,
        safety: u32,
        failed: (PathBuf, String),
        changed: usize,
        not_put_back: Vec<(PathBuf, String)>,
    ) -> Self {
        let mut summary = format!(
            "restoring checkpoint {target} failed at {}: {}",
            failed.0.display(),
            failed.1
        );
        if not_put_back.is_empty() {
            summary.push_str(&format!(
                "; the {changed} path(s) it had changed were put back, so the workspace is as                  it was before (checkpoint {safety} holds that state) — fix the cause and run                  /restore {target} again"
            ));
        } else {
            let list: Vec<String> = not_put_back
                .iter()
                .map(|(path, why)| format!("{} ({why})", path.display()))
                .collect();
            summary.push_str(&format!(
                "; of the {changed} path(s) it had changed, these could not be put back and                  are left as checkpoint {target} has them: {}; the others are as before —                  checkpoint {safety} holds the state before the restore: /restore {safety}                  returns to it",
                list.join(", ")
            ));
        }
        Self::RestoreFailed {
            target,
            safety,
            failed,
            changed,
            not_put_back,
            summary,
        }
    }

    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io {
            path: path.into(),
            source,
        }
    }
}
