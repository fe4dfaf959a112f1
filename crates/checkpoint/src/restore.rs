//! Restoring a snapshot, all or nothing: take a safety snapshot, diff its tree against the
//! target's (entries with their modes, paths as bytes), check every file about to be
//! overwritten or deleted against the disk and correct the safety snapshot where a watcher
//! missed an edit (see `check`), delete what the target lacks and
//! write what differs (see `apply`), then create the empty directories the target records
//! and remove the empty ones it does not. When a step fails, every path already changed is put
//! back as the safety snapshot holds it, and the error says exactly what failed and, should
//! putting back fail too, which paths are left in which state. Unchanged files are not
//! rewritten (their mtimes stay, so builds stay warm); ignored files and the user's `.git`
//! are never touched, because they are in neither tree. Neither `git clean` nor
//! `git checkout-index` is used: git only reads the side repository here.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::apply::Writer;
use crate::beneath::{Beneath, Missing, Type};
use crate::error::CheckpointError;
use crate::git::path_of;
use crate::plan::{self, Change};
use crate::record::State;
use crate::{Changes, Checkpoints, Entry, RestoreReport, SnapshotLabel};

impl Checkpoints {
    /// Makes the workspace match snapshot `id`, after recording the current state as a safety
    /// snapshot (restore that one to undo this restore). All or nothing: see
    /// [`CheckpointError::RestoreFailed`].
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
        self.apply(state, &safety, &target, None)
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

    /// Restores only `paths` (workspace-relative; a directory stands for everything under
    /// it) from snapshot `id`: each one the snapshot has is written back, each one it did not
    /// have is deleted; every other file stays as it is. A safety snapshot of the current
    /// state is taken first, as by [`Checkpoints::restore`]. Used to undo one plan step's
    /// files while the steps that ran beside it keep theirs.
    pub fn restore_paths<P: AsRef<Path>>(
        &self,
        id: u32,
        paths: &[P],
    ) -> Result<RestoreReport, CheckpointError> {
        let mut state = self.lock();
        self.reload(&mut state)?;
        let note = format!("safety snapshot before restoring some files of checkpoint {id}");
        let (safety, target) = self.safety_snapshot(&mut state, id, note)?;
        let only: Vec<&Path> = paths.iter().map(AsRef::as_ref).collect();
        self.apply(&mut state, &safety, &target, Some(&only))
    }

    /// The content of every file the steps write, all read before the first write: a
    /// snapshot whose objects are gone (`target`) changes nothing.
    fn target_contents(
        &self,
        steps: &[Change],
        target: u32,
    ) -> Result<HashMap<String, Result<Vec<u8>, String>>, CheckpointError> {
        let oids: Vec<&str> = steps
            .iter()
            .filter_map(|c| c.to.as_ref().map(|b| b.oid.as_str()))
            .collect();
        let contents = plan::contents(&self.git, &oids)?;
        if let Some(Err(why)) = contents.values().find(|c| c.is_err()) {
            return Err(CheckpointError::Unrestorable {
                id: target,
                why: why.clone(),
            });
        }
        Ok(contents)
    }

    /// Makes the paths that differ between the safety snapshot (the workspace now) and the
    /// target match the target; with `only`, just those paths.
    fn apply(
        &self,
        state: &mut State,
        safety: &Entry,
        target: &Entry,
        only: Option<&[&Path]>,
    ) -> Result<RestoreReport, CheckpointError> {
        let mut report = RestoreReport {
            safety_snapshot: safety.id,
            ..RestoreReport::default()
        };
        let same = safety.tree == target.tree && safety.empty_dirs == target.empty_dirs;
        if same || only.is_some_and(<[_]>::is_empty) {
            return Ok(report);
        }
        let ws =
            Beneath::open(&self.workspace).map_err(|e| CheckpointError::io(&self.workspace, e))?;
        let mut plan = self.plan(safety, target, only)?;
        // The safety snapshot came from what a watcher reported: what is about to be
        // overwritten or deleted is checked against the disk first (see `check`).
        let corrected = self.save_unseen(state, &ws, safety, &plan)?;
        if let Some(corrected) = &corrected {
            report.safety_snapshot = corrected.id;
            plan = self.plan(corrected, target, only)?;
        }
        let safety = corrected.as_ref().unwrap_or(safety);
        // From here on files change: no fingerprint stands for the newest snapshot any more.
        state.forget_fingerprint();
        let steps = in_order(plan);
        let contents = self.target_contents(&steps, target.id)?;
        let writer = Writer {
            ws: &ws,
            contents: &contents,
        };
        let mut done: Vec<&Change> = Vec::new();
        for step in &steps {
            let path = path_of(&step.path);
            // Everything not ignored is in the safety snapshot, so something standing where
            // the target creates a path is ignored (or in a nested repository): leave it.
            if step.from.is_none() && ws.lstat(&path).is_ok() {
                report.kept.push(display(&path));
                continue;
            }
            // A failed step changed nothing at its path (writes land by rename, removals
            // are single calls), so only the steps before it are put back.
            if let Err(reason) = writer.put(&step.path, step.from.as_ref(), step.to.as_ref()) {
                return Err(self.roll_back(&ws, target.id, safety.id, &done, (path, reason)));
            }
            done.push(step);
            match step.to {
                Some(_) => report.restored.push(display(&path)),
                None => report.deleted.push(display(&path)),
            }
            report.changed.push(path);
        }
        let mut made = Vec::new();
        if let Err(failed) = apply_dirs(&ws, safety, target, only, &mut report, &mut made) {
            for dir in made.iter().rev() {
                let _ = ws.parent(dir, Missing::Fail).and_then(|p| p.remove_dir());
            }
            return Err(self.roll_back(&ws, target.id, safety.id, &done, failed));
        }
        report.restored.sort();
        report.deleted.sort();
        Ok(report)
    }

    /// The changes that make the workspace, as `safety` holds it, match `target`; with `only`,
    /// just those below the paths named.
    fn plan(
        &self,
        safety: &Entry,
        target: &Entry,
        only: Option<&[&Path]>,
    ) -> Result<Vec<Change>, CheckpointError> {
        let mut plan = if safety.tree == target.tree {
            Vec::new()
        } else {
            // The safety snapshot was just recorded whole: what `diff-tree` cannot read is
            // the target's (trees borrowed from a user's repository that went).
            plan::diff(&self.git, &safety.tree, &target.tree).map_err(|e| match e {
                CheckpointError::GitFailed { stderr, .. } => CheckpointError::Unrestorable {
                    id: target.id,
                    why: format!("its trees are missing from the side repository ({stderr})"),
                },
                e => e,
            })?
        };
        if let Some(only) = only {
            plan.retain(|c| {
                let path = path_of(&c.path);
                only.iter().any(|o| path.starts_with(o))
            });
        }
        Ok(plan)
    }

    /// Puts every path in `done` back as the safety snapshot holds it, newest change first,
    /// and describes what happened.
    fn roll_back(
        &self,
        ws: &Beneath,
        target: u32,
        safety: u32,
        done: &[&Change],
        failed: (PathBuf, String),
    ) -> CheckpointError {
        let oids: Vec<&str> = done
            .iter()
            .filter_map(|c| c.from.as_ref().map(|b| b.oid.as_str()))
            .collect();
        let mut not_put_back = Vec::new();
        match plan::contents(&self.git, &oids) {
            Ok(contents) => {
                let writer = Writer {
                    ws,
                    contents: &contents,
                };
                for step in done.iter().rev() {
                    if let Err(reason) =
                        writer.put(&step.path, step.to.as_ref(), step.from.as_ref())
                    {
                        not_put_back.push((path_of(&step.path), reason));
                    }
                }
            }
            Err(e) => {
                let reason = e.to_string();
                not_put_back = done
                    .iter()
                    .map(|c| (path_of(&c.path), reason.clone()))
                    .collect();
            }
        }
        CheckpointError::restore_failed(target, safety, failed, done.len(), not_put_back)
    }
}

/// After the files: creates the directories the target records as empty that are missing
/// (each one created listed in `made`, workspace-relative, parents first), then removes those
/// the workspace held empty that the target does not record, where they are still empty. All
/// through the workspace's handle: nothing is created or removed through a symbolic link.
fn apply_dirs(
    ws: &Beneath,
    safety: &Entry,
    target: &Entry,
    only: Option<&[&Path]>,
    report: &mut RestoreReport,
    made: &mut Vec<PathBuf>,
) -> Result<(), (PathBuf, String)> {
    let wanted = |d: &&Vec<u8>| only.is_none_or(|o| o.iter().any(|p| path_of(d).starts_with(p)));
    for dir in target.empty_dirs.iter().filter(wanted) {
        let rel = path_of(dir);
        match ws.lstat(&rel) {
            Ok(Type::Dir) => continue,
            Ok(_) => {
                report.kept.push(display(&rel));
                continue;
            }
            Err(_) => {}
        }
        // Parents first: each directory on the way that is missing is created, one that is
        // not a directory (a file, a symbolic link) stops the restore.
        let mut on_the_way: Vec<&Path> = rel
            .ancestors()
            .filter(|a| !a.as_os_str().is_empty())
            .collect();
        on_the_way.reverse();
        for d in on_the_way {
            let fail = |why: String| (rel.clone(), why);
            let parent = ws
                .parent(d, Missing::Fail)
                .map_err(|e| fail(e.to_string()))?;
            match parent.stat() {
                Ok(Type::Dir) => continue,
                Ok(_) => {
                    return Err(fail(format!(
                        "{} is not a directory; nothing is created below it",
                        d.display()
                    )));
                }
                Err(_) => {}
            }
            parent.create_dir().map_err(|e| fail(e.to_string()))?;
            made.push(d.to_path_buf());
        }
        report.restored.push(display(&rel));
        report.changed.push(rel);
    }
    // Deepest first, so a parent can go once its children have.
    for dir in safety.empty_dirs.iter().filter(wanted).rev() {
        if target.empty_dirs.contains(dir) {
            continue;
        }
        let rel = path_of(dir);
        // Still holding ignored files, or files the target put there: it stays.
        if ws
            .parent(&rel, Missing::Fail)
            .and_then(|p| p.remove_dir())
            .is_ok()
        {
            report.deleted.push(display(&rel));
            report.changed.push(rel);
        }
    }
    Ok(())
}

/// A path for the report's display lists.
fn display(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}
/// Deletions first, deepest first: a file may give way to a directory of the same name,
/// or back. Then writes, in path order.
fn in_order(plan: Vec<Change>) -> Vec<Change> {
    let (mut steps, mut writes): (Vec<Change>, Vec<Change>) =
        plan.into_iter().partition(|c| c.to.is_none());
    steps.sort_by(|a, b| b.path.cmp(&a.path));
    writes.sort_by(|a, b| a.path.cmp(&b.path));
    steps.extend(writes);
    steps
}
