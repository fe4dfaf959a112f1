//! Restoring a snapshot: take a safety snapshot, diff its tree against the target's, delete
//! what the target lacks, and check out only what differs. Unchanged files are not rewritten
//! (their mtimes stay, so builds stay warm); ignored files and the user's `.git` are never
//! touched, because they are in neither tree. `git clean` is never used.

use std::path::Path;

use crate::error::CheckpointError;
use crate::git::split_nul;
use crate::record::State;
use crate::{Changes, Checkpoints, Entry, RestoreReport, SnapshotLabel};

impl Checkpoints {
    /// Makes the workspace match snapshot `id`, after recording the current state as a safety
    /// snapshot (restore that one to undo this restore).
    pub fn restore(&self, id: u32) -> Result<RestoreReport, CheckpointError> {
        let mut state = self.lock();
        self.reload(&mut state)?;
        self.restore_locked(&mut state, id)
    }

    /// [`Checkpoints::restore`] for a caller holding the lock, with a freshly read list.
    pub(crate) fn restore_locked(
        &self,
        state: &mut State,
        id: u32,
    ) -> Result<RestoreReport, CheckpointError> {
        let note = format!("safety snapshot before restoring checkpoint {id}");
        let (safety, target) = self.safety_snapshot(state, id, note)?;
        self.apply(state, &safety.tree, &target.tree, safety.id, None)
    }

    /// Finds snapshot `id` in the freshly read list and records the workspace as it is now
    /// (the safety snapshot a restore can be undone with); returns both.
    fn safety_snapshot(
        &self,
        state: &mut State,
        id: u32,
        note: String,
    ) -> Result<(Entry, Entry), CheckpointError> {
        let entries = state.entries();
        let target = entries
            .iter()
            .find(|e| e.id == id)
            .ok_or(CheckpointError::UnknownId { id })?
            .clone();
        let label = SnapshotLabel {
            turn: entries.first().map_or(0, |e| e.turn),
            tool: Some("restore".into()),
            note,
        };
        let (safety, _) = self.record(state, &label, Changes::Skip)?;
        Ok((safety, target))
    }

    /// Restores only `paths` (workspace-relative, `/`-separated) from snapshot `id`: each one
    /// the snapshot has is written back, each one it did not have is deleted; every other
    /// file stays as it is. A safety snapshot of the current state is taken first, as by
    /// [`Checkpoints::restore`]. Used to undo one plan step's files while the steps that ran
    /// beside it keep theirs.
    pub fn restore_paths(
        &self,
        id: u32,
        paths: &[String],
    ) -> Result<RestoreReport, CheckpointError> {
        let mut state = self.lock();
        self.reload(&mut state)?;
        let note = format!("safety snapshot before restoring some files of checkpoint {id}");
        let (safety, target) = self.safety_snapshot(&mut state, id, note)?;
        if paths.is_empty() {
            return Ok(RestoreReport {
                safety_snapshot: safety.id,
                ..RestoreReport::default()
            });
        }
        self.apply(
            &mut state,
            &safety.tree,
            &target.tree,
            safety.id,
            Some(paths),
        )
    }

    /// Makes the files that differ between `current_tree` (the workspace now) and
    /// `target_tree` match the target; with `only`, just those paths.
    fn apply(
        &self,
        state: &mut State,
        current_tree: &str,
        target_tree: &str,
        safety_snapshot: u32,
        only: Option<&[String]>,
    ) -> Result<RestoreReport, CheckpointError> {
        let mut report = RestoreReport {
            safety_snapshot,
            ..RestoreReport::default()
        };
        if current_tree == target_tree {
            return Ok(report);
        }
        // From here on files change: no fingerprint stands for the newest snapshot any more.
        state.forget_fingerprint();
        let mut args: Vec<&str> = vec![
            // Paths are file names, never patterns.
            "--literal-pathspecs",
            "diff-tree",
            "-r",
            "-z",
            "--name-status",
            "--no-renames",
            current_tree,
            target_tree,
        ];
        if let Some(paths) = only {
            args.push("--");
            args.extend(paths.iter().map(String::as_str));
        }
        let out = self.git.run(&args)?;
        let fields = split_nul(&out);
        let mut write = Vec::new();
        for pair in fields.chunks(2) {
            let [status, path] = pair else {
                return Err(CheckpointError::Corrupt {
                    what: "diff-tree --name-status output".into(),
                    side: self.git.side().to_path_buf(),
                });
            };
            match status.as_str() {
                "D" => report.deleted.push(path.clone()),
                status => write.push((status == "A", path.clone())),
            }
        }
        // Deletions first: a file may give way to a directory of the same name, or back.
        for path in &report.deleted {
            self.delete(path)?;
        }
        for (created, path) in write {
            // Everything not ignored was in the safety snapshot, so a file standing where the
            // target wants to create one is ignored (or in a nested repository): leave it.
            if created && self.workspace.join(&path).symlink_metadata().is_ok() {
                report.kept.push(path);
            } else {
                report.restored.push(path);
            }
        }
        // One-tree merge: entries whose content matches keep their stat data, so the next
        // `git add -A` does not rehash the whole workspace. After a partial restore the index
        // no longer matches the other files; the forgotten fingerprint makes the next
        // snapshot stage them again.
        self.git.run(&["read-tree", "-m", target_tree])?;
        if !report.restored.is_empty() {
            let mut input = report.restored.join("\0").into_bytes();
            input.push(0);
            self.git.run_with_input(
                &["checkout-index", "-f", "-u", "-z", "--stdin"],
                Some(&input),
            )?;
        }
        Ok(report)
    }

    /// Removes one file the target snapshot does not have, then any directories it leaves empty.
    fn delete(&self, path: &str) -> Result<(), CheckpointError> {
        let full = self.workspace.join(path);
        match std::fs::remove_file(&full) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(CheckpointError::io(full, e)),
        }
        let mut dir = full.parent();
        while let Some(d) = dir {
            if d == self.workspace || !d.starts_with(&self.workspace) || !remove_if_empty(d) {
                break;
            }
            dir = d.parent();
        }
        Ok(())
    }
}

fn remove_if_empty(dir: &Path) -> bool {
    std::fs::remove_dir(dir).is_ok()
}
