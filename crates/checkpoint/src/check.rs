//! Before a restore writes: every file it is about to overwrite or delete is compared, by
//! content, with what the safety snapshot holds for it. The safety snapshot was built from
//! what a watcher reported, and a watcher can miss an edit (a network or FUSE file system, a
//! write through a shared `mmap` or through a hard link outside the workspace, a daemon that
//! missed events): a file that differs goes into a corrected safety snapshot before anything
//! is written, so undoing the restore brings the edit back. Each file the restore touches is
//! read once, to hash it; only a file that differs is read again, to store it.
//!
//! This module does not write the workspace (`apply` does) and does not decide what the
//! restore changes (`restore` does).

use std::path::PathBuf;

use crate::beneath::{Beneath, Type};
use crate::error::CheckpointError;
use crate::git::path_of;
use crate::object;
use crate::plan::{Change, Kind};
use crate::record::State;
use crate::update::RecordedTree;
use crate::{Checkpoints, Entry, SnapshotLabel};

impl Checkpoints {
    /// When a file in `plan` differs on disk from what `safety` holds, records a safety
    /// snapshot that holds the disk's content and returns it; `None` when all match.
    pub(crate) fn save_unseen(
        &self,
        state: &mut State,
        ws: &Beneath,
        safety: &Entry,
        plan: &[Change],
    ) -> Result<Option<Entry>, CheckpointError> {
        let unseen = unsaved(ws, plan);
        if unseen.is_empty() {
            return Ok(None);
        }
        let label = SnapshotLabel {
            turn: safety.turn,
            tool: safety.tool.clone(),
            note: format!(
                "{}, with {} edit(s) no watcher reported",
                safety.note,
                unseen.len()
            ),
        };
        let base = RecordedTree {
            tree: safety.tree.clone(),
            empty_dirs: safety.empty_dirs.clone(),
            bytes: state.base.as_ref().map_or(0, |b| b.bytes),
        };
        match self.edited_at(&mut state.trees, &base, &unseen)? {
            Ok(now) => {
                let scan = format!("restore check ({} paths no watcher reported)", unseen.len());
                self.record_base(state, &label, &now, &scan)?;
                state.base = Some(now);
            }
            Err(why) => {
                let scan = format!("walk (restore check: {why})");
                self.record_walked(state, &label, &scan)?;
            }
        }
        let newest = state.entries().first().cloned();
        newest.map(Some).ok_or_else(|| CheckpointError::Corrupt {
            what: "no snapshot after recording one".into(),
            side: self.git.side().to_path_buf(),
        })
    }
}

/// The paths in `plan` whose content or kind on disk is not what the change's `from` says
/// the safety snapshot holds (a path that cannot be read counts as differing).
fn unsaved(ws: &Beneath, plan: &[Change]) -> Vec<PathBuf> {
    plan.iter()
        .filter_map(|c| {
            let from = c.from.as_ref()?;
            let rel = path_of(&c.path);
            let on_disk = match from.kind {
                Kind::Symlink => ws
                    .read_link(&rel)
                    .ok()
                    .and_then(|target| object::hash_blob(&target).ok())
                    .map(|oid| (oid, Kind::Symlink)),
                Kind::File | Kind::Executable => ws.open_file(&rel).ok().and_then(|(file, t)| {
                    let kind = match t {
                        Type::File { executable: true } => Kind::Executable,
                        _ => Kind::File,
                    };
                    object::hash_file(file, &rel).ok().map(|oid| (oid, kind))
                }),
            };
            let same = on_disk
                .is_some_and(|(oid, kind)| kind == from.kind && object::hex(&oid) == from.oid);
            (!same).then_some(rel)
        })
        .collect()
}
