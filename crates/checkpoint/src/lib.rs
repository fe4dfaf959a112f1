//! File checkpoints: snapshots of a workspace kept in a side git repository under the data
//! dir, so every file change the agent makes (through file tools or `bash`) can be undone.
//!
//! This crate owns the side repository: where it lives, what a snapshot holds, listing,
//! restoring and pruning. It does not decide *when* to snapshot (the engine does: before each
//! mutating tool call and at turn boundaries) and stores nothing in the session database;
//! everything it needs is in the side repository itself.
//!
//! Layout: `<data_dir>/checkpoints/<hash of the canonical workspace path>.git`, a bare repo
//! with one private index per open handle (`atto-indexes/`), the last one published
//! (`atto-index`) and the newest snapshot's stat fingerprint (`atto-fingerprint`). Each
//! snapshot is a parentless commit of the whole workspace tree under
//! `refs/atto/checkpoints/<id>`, its message holding turn, tool, session, time and note.
//! Any number of atto processes may snapshot one workspace at once (see `record` and `git`).
//! Parentless commits plus one ref each make pruning a ref deletion: no history
//! rewrite, and [`Checkpoints::collect`] can reclaim what pruned snapshots held (see `collect`).
//!
//! Cost. Snapshots run before every mutating tool call, so each git process counts, and so
//! does every walk of a large workspace. The side repository is created without git and, in
//! a git workspace, starts from a copy of the user's index while borrowing their objects (see
//! `seed`), so its first snapshot hashes only what differs from the user's index. The
//! snapshot list is read once and then kept up to date in memory. A process's first snapshot
//! walks the workspace's metadata; a stat fingerprint (see `fingerprint`) lets it skip
//! `git add` and `write-tree` when nothing changed, and in a large workspace the walk's
//! comparison with the index (see `index`) names to git only what differs. That walk arms a
//! file watcher (see
//! `watch`): later snapshots of a large workspace edit the last snapshot's trees along the
//! paths it saw change, writing the new tree objects without git and without any index (see
//! `update`, `object`), and walk again only when it cannot tell (overflow, directories created
//! or moved, `.gitignore` edits). A process's first snapshot asks the watch daemon instead of walking
//! when one has watched since the last process's snapshots (see `daemon`, `link`, `since`).
//! Each snapshot records which way it looked (`Snapshot::scan`).

mod apply;
mod beneath;
mod check;
mod collect;
mod daemon;
mod error;
mod fingerprint;
mod git;
mod index;
mod link;
mod meta;
mod object;
mod plan;
mod record;
mod restore;
mod seed;
mod side;
mod since;
mod update;
mod walk;
mod watch;

/// Entry points for the fuzz targets under `fuzz/`: the readers of bytes this crate does
/// not control (the user's git index, tree objects, the watch daemon's answers), called
/// as the product calls them. Not an API for other crates.
#[doc(hidden)]
pub mod fuzzing {
    /// Whether seeding would take over the index in `bytes` (`seed::usable_index`).
    pub fn usable_index(bytes: &[u8]) -> bool {
        crate::seed::usable_index(bytes)
    }

    /// What the reader made of a whole index.
    #[derive(Debug)]
    pub struct IndexRead {
        /// The entries' paths, in order, as the first walk reads them.
        pub paths: Vec<Vec<u8>>,
        /// The root of the cache tree, when it is valid.
        pub tree: Option<[u8; 20]>,
    }

    /// The index in `bytes` read through as the first walk reads it; `None` when unsound.
    pub fn index_paths(bytes: &[u8]) -> Option<IndexRead> {
        let mut reader = crate::index::Reader::new(bytes)?;
        let mut paths = Vec::new();
        while let Some(entry) = reader.next_entry() {
            paths.push(entry.path);
        }
        let tree = reader.finish_with_tree()?;
        Some(IndexRead { paths, tree })
    }

    /// A tree object parsed and written back in git's order, as a snapshot edits trees.
    pub fn tree_round_trip(data: &[u8]) -> Option<Vec<u8>> {
        let mut entries = crate::object::parse_tree(data)?;
        Some(crate::object::format_tree(&mut entries))
    }

    /// Whether the process would take `reply` as a well-formed watch daemon answer.
    pub fn daemon_answer_is_whole(reply: &[u8]) -> bool {
        crate::link::parse(reply).is_some()
    }
}

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{SystemTime, UNIX_EPOCH};

pub use collect::Collected;
pub use daemon::{WatchOptions, WatchStop, run_watch_daemon};
pub use error::CheckpointError;
use git::{Git, path_of, split_nul_bytes};
pub use link::WatchDaemon;
use meta::Entry;
use record::State;
pub use seed::copy_index;

/// Caps that keep checkpoints from filling the disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// How many snapshots to keep; older ones are pruned.
    pub max_snapshots: usize,
    /// Snapshots older than this many days are pruned (the newest one is always kept).
    pub keep_days: u32,
    /// Above this many bytes of side repository, a collection drops the oldest snapshots
    /// (the newest one is always kept) until it fits; see [`Checkpoints::collect`].
    pub max_bytes: u64,
    /// Every this many snapshots, a handle collects the side repository in the background
    /// (see [`Checkpoints::collect`]); `0` never does.
    pub collect_every: u32,
    /// Above this many bytes of non-ignored files, snapshots are refused (`Disabled`).
    pub max_workspace_bytes: u64,
    /// From this many files on, a walk compares every file with the index (see `index`) and
    /// leaves a watch daemon behind for the next process (see `daemon`); below, `add -A`
    /// costs less. Later snapshots of any workspace take what changed from the process's own
    /// file watcher (see `watch`).
    pub watch_from_files: u64,
    /// A watch daemon that has not answered within this is treated as absent, and the
    /// snapshot walks (a stuck daemon must not stall every snapshot for long).
    pub daemon_timeout: std::time::Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_snapshots: 200,
            keep_days: 7,
            max_bytes: 300 * 1024 * 1024,
            collect_every: 100,
            max_workspace_bytes: 500 * 1024 * 1024,
            watch_from_files: 1_000,
            daemon_timeout: std::time::Duration::from_secs(1),
        }
    }
}

/// Why a snapshot is being taken.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SnapshotLabel {
    /// The turn it belongs to.
    pub turn: u32,
    /// The mutating tool about to run, if any (`None` at a turn boundary).
    pub tool: Option<String>,
    /// Free text shown by `/restore list`.
    pub note: String,
}

/// One recorded state of the workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// 1-based, increasing; what `/restore N` takes.
    pub id: u32,
    /// The commit in the side repository.
    pub commit: String,
    /// The turn it was taken in.
    pub turn: u32,
    /// The tool it was taken before, if any.
    pub tool: Option<String>,
    /// The session that took it (see [`Checkpoints::for_session`]); `None` when taken by a
    /// handle without one, or before sessions were recorded.
    pub session: Option<String>,
    /// The label's note.
    pub note: String,
    /// Wall-clock time it was taken, Unix milliseconds.
    pub created_at_ms: i64,
    /// Paths (`/`-separated, relative to the workspace) that differ from the previous
    /// snapshot; empty for the oldest snapshot still kept.
    pub files_changed: Vec<String>,
    /// How it learned what changed: `walk` (every file's metadata read, with the reason the
    /// watcher could not answer), `watcher` (only the paths this process's file watcher
    /// reported were looked at) or `watch daemon` (the same, from the daemon that outlives
    /// processes). Empty for snapshots recorded before this was kept.
    pub scan: String,
}

/// What a restore did.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RestoreReport {
    /// The snapshot of the state just before the restore; restoring it undoes the restore.
    pub safety_snapshot: u32,
    /// Files written back (changed since, or deleted since and recreated).
    pub restored: Vec<String>,
    /// Files created since the snapshot, now removed.
    pub deleted: Vec<String>,
    /// Files in the snapshot that were left alone because a file now ignored (or inside a
    /// nested repository) sits at that path.
    pub kept: Vec<String>,
    /// Every path restored or deleted, exactly (file names are bytes; the lists above are
    /// for display and replace bytes that are not UTF-8).
    pub changed: Vec<PathBuf>,
}

/// Checkpoints of one workspace. Cheap to share between threads (`Arc<Checkpoints>`) or to
/// clone: clones share one cache and one lock, and operations on a workspace run one at a time.
#[derive(Debug, Clone)]
pub struct Checkpoints {
    git: Git,
    workspace: PathBuf,
    limits: Limits,
    /// What this handle knows about the side repository. Held for a whole operation, because
    /// every operation also uses the one private index file.
    state: Arc<Mutex<State>>,
    /// The session recorded in every snapshot this handle takes.
    session: Option<Arc<str>>,
    /// How to start a watch daemon, when the embedding binary can run one.
    watch_daemon: Option<Arc<WatchDaemon>>,
}

/// Whether a snapshot lists the paths it changed (one more git process when it did).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Changes {
    List,
    Skip,
}

impl Checkpoints {
    /// Opens (creating on first use) the side repository for `workspace` under `data_dir`.
    /// Starts no git process.
    pub fn open(
        data_dir: &Path,
        workspace: &Path,
        limits: Limits,
    ) -> Result<Self, CheckpointError> {
        let workspace = workspace
            .canonicalize()
            .map_err(|e| CheckpointError::io(workspace, e))?;
        let dir = data_dir.join("checkpoints");
        std::fs::create_dir_all(&dir).map_err(|e| CheckpointError::io(&dir, e))?;
        let side = dir.join(format!(
            "{:016x}.git",
            fnv1a(workspace.as_os_str().as_encoded_bytes())
        ));
        let empty = side::ensure(&side)?;
        Ok(Self {
            git: Git::new(side, workspace.clone()),
            workspace,
            limits,
            state: Arc::new(Mutex::new(State::new(empty))),
            session: None,
            watch_daemon: None,
        })
    }

    /// A handle on the same side repository (sharing this one's cache and lock) whose
    /// snapshots record `session` as the session that took them, so that
    /// [`Checkpoints::list_for_session`] and [`Checkpoints::undo_session_turn`] can tell one
    /// session's checkpoints from another's.
    #[must_use]
    pub fn for_session(&self, session: &str) -> Self {
        Self {
            session: Some(Arc::from(session)),
            ..self.clone()
        }
    }

    /// A handle that, after a snapshot had to walk a large workspace, starts a watch daemon
    /// (see [`run_watch_daemon`]) with `how`, so that the next process's first snapshot asks
    /// it what changed instead of walking again.
    #[must_use]
    pub fn with_watch_daemon(self, how: WatchDaemon) -> Self {
        Self {
            watch_daemon: Some(Arc::new(how)),
            ..self
        }
    }

    /// The session this handle records, if any.
    pub fn session(&self) -> Option<&str> {
        self.session.as_deref()
    }

    /// The side repository (for diagnostics and "delete this to start over" messages).
    pub fn side_repo(&self) -> &Path {
        self.git.side()
    }

    /// How many git processes this handle (and its clones) started: what a snapshot costs,
    /// for tests and benchmarks.
    pub fn git_calls(&self) -> u64 {
        self.git.calls()
    }

    /// Records the current workspace. A state identical to the newest snapshot of the same
    /// turn returns that snapshot instead of recording it twice; under a new turn number it
    /// is recorded (cheaply: same tree) so that every turn has a snapshot marking its start.
    ///
    /// Cost: as [`Checkpoints::snapshot_quick`], plus one git process to fill in
    /// `files_changed` when the snapshot differs from the one before it.
    pub fn snapshot(&self, label: &SnapshotLabel) -> Result<Snapshot, CheckpointError> {
        self.take(label, Changes::List)
    }

    /// [`Checkpoints::snapshot`] without `files_changed` (left empty; [`Checkpoints::list`]
    /// fills it in): the call for the hot path before every mutating tool. A workspace whose
    /// files all look as they did at the newest snapshot (see the stat fingerprint) costs no
    /// git process in the same turn and two under a new turn; otherwise four.
    pub fn snapshot_quick(&self, label: &SnapshotLabel) -> Result<Snapshot, CheckpointError> {
        self.take(label, Changes::Skip)
    }

    /// The newest `n` snapshots of every session, newest first.
    pub fn list(&self, n: usize) -> Result<Vec<Snapshot>, CheckpointError> {
        self.list_where(n, |_| true)
    }

    /// The newest `n` snapshots taken by `session`, newest first. `files_changed` is still
    /// what differs from the snapshot just before each one, whichever session took that.
    pub fn list_for_session(
        &self,
        session: &str,
        n: usize,
    ) -> Result<Vec<Snapshot>, CheckpointError> {
        self.list_where(n, |e| e.session.as_deref() == Some(session))
    }

    fn list_where(
        &self,
        n: usize,
        keep: impl Fn(&Entry) -> bool,
    ) -> Result<Vec<Snapshot>, CheckpointError> {
        let mut state = self.lock();
        let entries = self.reload(&mut state)?;
        let shown: Vec<usize> = (0..entries.len())
            .filter(|&i| keep(&entries[i]))
            .take(n)
            .collect();
        let pairs: Vec<(&str, &str)> = shown
            .iter()
            .map(|&i| {
                let older = entries.get(i + 1).map_or("", |e| e.tree.as_str());
                (entries[i].tree.as_str(), older)
            })
            .collect();
        let changes = self.changes(&pairs)?;
        Ok(shown
            .iter()
            .zip(changes)
            .map(|(&i, changed)| to_snapshot(&entries[i], changed))
            .collect())
    }

    /// The paths (`/`-separated, relative to the workspace) that differ between snapshots
    /// `older` and `newer`, as `files_changed` lists them: what one command changed, when
    /// the two snapshots frame it. Costs no git process when both hold the same tree, one
    /// otherwise.
    /// Paths whose names are not UTF-8 are shown with replacement characters: use
    /// [`Checkpoints::changed_paths_between`] for the exact names.
    pub fn changed_between(&self, older: u32, newer: u32) -> Result<Vec<String>, CheckpointError> {
        let paths = self.changed_paths_between(older, newer)?;
        Ok(paths
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect())
    }

    /// [`Checkpoints::changed_between`] with exact names: what a command changed, byte for
    /// byte, workspace-relative.
    pub fn changed_paths_between(
        &self,
        older: u32,
        newer: u32,
    ) -> Result<Vec<PathBuf>, CheckpointError> {
        let mut state = self.lock();
        let trees = |entries: &[Entry]| {
            let tree = |id| entries.iter().find(|e| e.id == id).map(|e| e.tree.clone());
            Some((tree(older)?, tree(newer)?))
        };
        // The list in memory is up to date unless another process took snapshots.
        let (old_tree, new_tree) = match trees(state.entries()) {
            Some(found) => found,
            None => {
                let entries = self.reload(&mut state)?;
                let (old_tree, new_tree) = trees(entries).ok_or_else(|| {
                    let missing = if entries.iter().any(|e| e.id == older) {
                        newer
                    } else {
                        older
                    };
                    CheckpointError::UnknownId { id: missing }
                })?;
                (old_tree, new_tree)
            }
        };
        let changed = self.changes(&[(&new_tree, &old_tree)])?;
        let paths = changed.into_iter().next().unwrap_or_default();
        Ok(paths.iter().map(|p| path_of(p)).collect())
    }

    /// The text of `paths` (workspace-relative) as snapshot `id` holds them; a path the
    /// snapshot does not hold, or that is not text, is left out. One git process.
    pub fn read_at(
        &self,
        id: u32,
        paths: &[String],
    ) -> Result<std::collections::BTreeMap<String, String>, CheckpointError> {
        let mut found = std::collections::BTreeMap::new();
        let names: Vec<String> = paths
            .iter()
            .filter(|p| !p.contains('\n'))
            .map(|p| format!("{}:{p}", meta::ref_name(id)))
            .collect();
        let wanted: Vec<&str> = names.iter().map(String::as_str).collect();
        let contents = plan::contents_in_order(&self.git, &wanted)?;
        let kept = paths.iter().filter(|p| !p.contains('\n'));
        for (path, body) in kept.zip(contents) {
            if let Some(text) = body.and_then(|b| String::from_utf8(b).ok()) {
                found.insert(path.clone(), text);
            }
        }
        Ok(found)
    }

    /// Restores the state before turn `turn`'s first change: its first snapshot, whichever
    /// session took it. Sessions number their turns alike, so with more than one session
    /// on a workspace prefer [`Checkpoints::undo_session_turn`].
    pub fn undo_last_turn(&self, turn: u32) -> Result<RestoreReport, CheckpointError> {
        self.undo_where(turn, |_| true)
    }

    /// Restores the state before turn `turn` of `session` changed anything: the first
    /// snapshot that session took in that turn. Other sessions' snapshots are not considered.
    pub fn undo_session_turn(
        &self,
        session: &str,
        turn: u32,
    ) -> Result<RestoreReport, CheckpointError> {
        self.undo_where(turn, |e| e.session.as_deref() == Some(session))
    }

    fn undo_where(
        &self,
        turn: u32,
        keep: impl Fn(&Entry) -> bool,
    ) -> Result<RestoreReport, CheckpointError> {
        let mut state = self.lock();
        let first = self
            .reload(&mut state)?
            .iter()
            .filter(|e| e.turn == turn && keep(e))
            .map(|e| e.id)
            .min()
            .ok_or(CheckpointError::NoCheckpointInTurn { turn })?;
        self.restore_locked(&mut state, first)
    }

    fn take(&self, label: &SnapshotLabel, changes: Changes) -> Result<Snapshot, CheckpointError> {
        let mut state = self.lock();
        let (entry, changed) = self.record(&mut state, label, changes)?;
        Ok(to_snapshot(&entry, changed))
    }

    /// The lock on this workspace's state, and a shared hold on the side repository's
    /// objects, so that a collection (see `collect`) drops none while this operation may
    /// still reference them. After a panic mid-operation the cache may be half updated, so
    /// it is dropped and read again from the side repository.
    fn lock(&self) -> Locked<'_> {
        let state = self.state.lock().unwrap_or_else(|poisoned| {
            self.state.clear_poison();
            let mut state = poisoned.into_inner();
            *state = State::new(false);
            state
        });
        // Without the lock file (a read-only side repository) nothing can collect either.
        let objects = collect::lock_file(self.git.side(), collect::OBJECTS_LOCK)
            .ok()
            .filter(|f| f.lock_shared().is_ok());
        Locked {
            state,
            _objects: objects,
        }
    }

    /// Paths differing between each `(new, old)` tree pair, in one git call; none for a pair
    /// whose old tree is `""` (no snapshot before it).
    fn changes(&self, pairs: &[(&str, &str)]) -> Result<Vec<Vec<Vec<u8>>>, CheckpointError> {
        let mut result = vec![Vec::new(); pairs.len()];
        let differs = |(a, b): &(&str, &str)| a != b && !b.is_empty();
        let input: String = pairs
            .iter()
            .filter(|pair| differs(pair))
            .map(|(a, b)| format!("{a} {b}\n"))
            .collect();
        if input.is_empty() {
            return Ok(result);
        }
        let out = self.git.run_with_input(
            &[
                "diff-tree",
                "--stdin",
                "-r",
                "-z",
                "--name-only",
                "--no-renames",
            ],
            Some(input.as_bytes()),
        )?;
        // Output: "<new> <old>\n" then NUL-terminated paths, per pair that differs.
        let headers: Vec<String> = pairs.iter().map(|(a, b)| format!("{a} {b}\n")).collect();
        let mut rest = out.as_slice();
        let mut current = None;
        while !rest.is_empty() {
            let next = (current.map_or(0, |c| c + 1)..pairs.len())
                .find(|&i| differs(&pairs[i]) && rest.starts_with(headers[i].as_bytes()));
            if let Some(i) = next {
                current = Some(i);
                rest = &rest[headers[i].len()..];
                continue;
            }
            let end = rest.iter().position(|b| *b == 0).unwrap_or(rest.len());
            let (Some(i), Some(path)) = (current, split_nul_bytes(&rest[..end]).pop()) else {
                return Err(CheckpointError::Corrupt {
                    what: "diff-tree --stdin output".into(),
                    side: self.git.side().to_path_buf(),
                });
            };
            result[i].push(path.to_vec());
            rest = rest.get(end + 1..).unwrap_or_default();
        }
        Ok(result)
    }
}

/// A handle's state, locked, with the side repository's objects held (see
/// [`Checkpoints::lock`]).
struct Locked<'a> {
    state: MutexGuard<'a, State>,
    _objects: Option<std::fs::File>,
}

impl std::ops::Deref for Locked<'_> {
    type Target = State;
    fn deref(&self) -> &State {
        &self.state
    }
}

impl std::ops::DerefMut for Locked<'_> {
    fn deref_mut(&mut self) -> &mut State {
        &mut self.state
    }
}

/// `files_changed` is for display: names that are not UTF-8 get replacement characters.
fn to_snapshot(e: &Entry, files_changed: Vec<Vec<u8>>) -> Snapshot {
    let files_changed = files_changed
        .iter()
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect();
    Snapshot {
        id: e.id,
        commit: e.commit.clone(),
        turn: e.turn,
        tool: e.tool.clone(),
        session: e.session.clone(),
        note: e.note.clone(),
        created_at_ms: e.created_at_ms,
        files_changed,
        scan: e.scan.clone(),
    }
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// FNV-1a: a hash that, unlike std's `DefaultHasher`, is the same in every Rust release, so a
/// workspace finds its side repository again after an upgrade.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}
