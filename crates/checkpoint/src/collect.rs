//! Collecting the side repository: the retention policy (snapshots older than
//! [`Limits::keep_days`](crate::Limits) go, and the oldest go while the repository is above
//! [`Limits::max_bytes`](crate::Limits); the newest always stays), packing what is left with
//! the objects snapshots borrow from the user's repository copied in (so no rewrite, re-clone
//! or deletion of that repository can take them away), and dropping what no snapshot uses.
//!
//! Two locks in the side repository make this safe beside any number of writers:
//! - `atto-collect.lock`, taken without waiting: one collector at a time; another one that
//!   finds it held does nothing.
//! - `atto-objects.lock`: every operation on a handle holds it shared (see
//!   [`Checkpoints::lock`]); packing and dropping objects hold it exclusively. A snapshot
//!   writes its objects and then claims its ref; between the two nothing references them, so
//!   they may be dropped only when no snapshot is under way (and git's own writes race with
//!   `repack -d` removing the directories it emptied). So a snapshot that starts while a
//!   collection packs waits for it.
//!
//! After objects were dropped, `atto-collected` is rewritten: a handle that finds it changed
//! forgets the trees it kept in memory and its last snapshot (see `record`), because they may
//! stand on objects that are gone. This module does not decide when to collect: a handle does
//! every [`Limits::collect_every`](crate::Limits) snapshots, in the background, and the CLI
//! does on request.

use std::fs::File;
use std::path::Path;
use std::time::SystemTime;

use crate::error::CheckpointError;
use crate::meta::{self, Entry};
use crate::{Checkpoints, now_ms};

/// Held by the one collector at work.
const COLLECT_LOCK: &str = "atto-collect.lock";
/// Held shared by every operation, exclusively while objects are dropped.
pub(crate) const OBJECTS_LOCK: &str = "atto-objects.lock";
/// Rewritten after objects were dropped.
const COLLECTED: &str = "atto-collected";
const DAY_MS: i64 = 24 * 60 * 60 * 1000;
/// Packing rounds, each dropping half of the older snapshots, before a collection settles
/// for a repository still above the size cap.
const MAX_ROUNDS: usize = 8;

/// What a collection did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Collected {
    /// The snapshots it dropped, by id.
    pub dropped: Vec<u32>,
    /// How many snapshots are left.
    pub kept: usize,
    /// The side repository's object store before and after, in bytes.
    pub bytes_before: u64,
    pub bytes_after: u64,
}

/// A lock file in the side repository, opened (created on first use).
pub(crate) fn lock_file(side: &Path, name: &str) -> std::io::Result<File> {
    File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(side.join(name))
}

/// When objects were last dropped, as the marker's modification time.
pub(crate) fn mark(side: &Path) -> Option<SystemTime> {
    std::fs::metadata(side.join(COLLECTED))
        .and_then(|m| m.modified())
        .ok()
}

impl Checkpoints {
    /// Applies the retention policy and packs the side repository (see the module doc);
    /// `None` when another process is collecting it. Slow on big workspaces (git packs every
    /// object): run it off the hot path. Snapshots wait for it only while it drops objects.
    pub fn collect(&self) -> Result<Option<Collected>, CheckpointError> {
        let side = self.git.side();
        let lock = lock_file(side, COLLECT_LOCK).map_err(|e| CheckpointError::io(side, e))?;
        if lock.try_lock().is_err() {
            return Ok(None);
        }
        let bytes_before = self.side_bytes()?;
        let mut entries = {
            let mut state = self.lock();
            self.reload(&mut state)?.to_vec()
        };
        let mut dropped = Vec::new();
        if let Some(newest) = entries.first() {
            let oldest_ms = newest.created_at_ms - i64::from(self.limits.keep_days) * DAY_MS;
            let old: Vec<Entry> = entries
                .iter()
                .skip(1)
                .filter(|e| e.created_at_ms < oldest_ms)
                .cloned()
                .collect();
            self.drop_snapshots(&old, &mut entries, &mut dropped)?;
        }
        self.pack()?;
        let mut bytes_after = self.side_bytes()?;
        let mut rounds = 0;
        while bytes_after > self.limits.max_bytes && entries.len() > 1 && rounds < MAX_ROUNDS {
            rounds += 1;
            // The older half, oldest first; the newest always stays.
            let older = entries.len() - 1;
            let doomed = entries[entries.len() - older.div_ceil(2)..].to_vec();
            self.drop_snapshots(&doomed, &mut entries, &mut dropped)?;
            self.pack()?;
            bytes_after = self.side_bytes()?;
        }
        // This handle's own memory of trees and its last snapshot goes too (see `record`).
        self.lock().forget_collected();
        dropped.sort_unstable();
        Ok(Some(Collected {
            dropped,
            kept: entries.len(),
            bytes_before,
            bytes_after,
        }))
    }

    /// The bytes of the side repository's objects (loose and packed), as git counts them.
    pub fn side_bytes(&self) -> Result<u64, CheckpointError> {
        let out = self.git.run(&["count-objects", "-v"])?;
        let text = String::from_utf8_lossy(&out);
        let kib: u64 = text
            .lines()
            .filter_map(|l| l.split_once(": "))
            .filter(|(k, _)| matches!(*k, "size" | "size-pack" | "size-garbage"))
            .filter_map(|(_, v)| v.trim().parse::<u64>().ok())
            .sum();
        Ok(kib * 1024)
    }

    /// Deletes the refs of `doomed`, removing them from `entries` and adding their ids to
    /// `dropped`. A ref another process changed meanwhile stays (its old value is checked).
    fn drop_snapshots(
        &self,
        doomed: &[Entry],
        entries: &mut Vec<Entry>,
        dropped: &mut Vec<u32>,
    ) -> Result<(), CheckpointError> {
        if doomed.is_empty() {
            return Ok(());
        }
        let input: String = doomed
            .iter()
            .map(|e| format!("delete {} {}\n", meta::ref_name(e.id), e.commit))
            .collect();
        self.git
            .run_with_input(&["update-ref", "--stdin"], Some(input.as_bytes()))?;
        let ids: Vec<u32> = doomed.iter().map(|e| e.id).collect();
        entries.retain(|e| !ids.contains(&e.id));
        dropped.extend(ids);
        Ok(())
    }

    /// Packs every object a snapshot reaches — borrowed ones included, since `repack` runs
    /// without `-l` — and drops what none reaches, with no snapshot under way: `repack -d`
    /// removes the fan-out directories it empties, under a git process that is about to write
    /// an object there, and `prune` drops objects a snapshot under way wrote but has not yet
    /// claimed with its ref.
    fn pack(&self) -> Result<(), CheckpointError> {
        let side = self.git.side();
        self.git.run(&["pack-refs", "--all", "--prune"])?;
        let objects = lock_file(side, OBJECTS_LOCK).map_err(|e| CheckpointError::io(side, e))?;
        objects.lock().map_err(|e| CheckpointError::io(side, e))?;
        // `-A` leaves what no snapshot reaches loose, for `prune` to drop.
        let packed = self.git.run(&["repack", "-A", "-d", "-q"]);
        let pruned = packed.and_then(|_| self.git.run(&["prune", "--expire=now"]));
        // Rewritten even when a step failed part-way: some objects may be gone.
        let marked = std::fs::write(side.join(COLLECTED), now_ms().to_string());
        drop(objects);
        pruned?;
        marked.map_err(|e| CheckpointError::io(side.join(COLLECTED), e))
    }
}
