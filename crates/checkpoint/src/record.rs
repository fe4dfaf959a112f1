//! Taking a snapshot, and the state that keeps it cheap: the snapshot list, read from the side
//! repository once and then kept up to date in memory, and the stat fingerprint known to stand
//! for the newest snapshot.
//!
//! How a snapshot learns what the workspace holds, cheapest first:
//! - the watcher (see `watch`) has been watching since this handle's last snapshot and names
//!   the files that changed: the last snapshot's trees are edited at those paths only and the
//!   new trees written without git (see `update`); git only says which new files an ignore
//!   rule covers, and reads the trees that are not kept in memory yet;
//! - otherwise a walk reads every file's metadata (see `walk`), re-arming the watcher:
//!   - the fingerprint matches and the turn is the same: the newest snapshot is returned;
//!   - the fingerprint matches under a new turn: `commit-tree` of the newest snapshot's tree
//!     and `update-ref`, two processes;
//!   - otherwise, in a large workspace, the walk has compared every file with the private
//!     index (see `index`). When the index records its own tree (a valid cache tree, as a
//!     commit or `write-tree` leaves it), that tree is edited at the entries that differ and
//!     the few new files, as the watcher's paths are (see `update`), and no git process loads
//!     the index. Otherwise git is named those entries and the untracked files
//!     `ls-files --others` finds (`update-index`, `write-tree`), instead of `add -A` reading
//!     every file's metadata a second time; in a small workspace, or when git cannot take the
//!     list, `add -A` and `write-tree`; then the two above when the tree, the empty
//!     directories or the turn are new.
//!
//! Each recorded snapshot says which it was (`atto-scan` in its message).
//!
//! A stale list (another atto process took snapshots) is harmless here: a fingerprint match
//! still proves the workspace holds that snapshot's tree. An id is claimed by creating its ref
//! with `update-ref <ref> <commit> <zero>`, which git makes atomic (create only if absent):
//! when another process claimed it first, the list is read again and the next id is tried,
//! with the same commit, until one is free. So two processes never record under one id, and
//! neither loses its snapshot. An id whose ref stays locked (a lock file left by a crashed
//! process) is passed over. Listing and restoring always read the list again.

use std::time::SystemTime;

use crate::error::CheckpointError;
use crate::fingerprint::{Builder, Fingerprint, Known};
use crate::git::is_lock_busy;
use crate::index::{Compare, Compared};
use crate::link::Clock;
use crate::meta::{self, Entry};
use crate::update::{RecordedTree, Watched};
use crate::watch::Watcher;
use crate::{Changes, Checkpoints, SnapshotLabel, collect, now_ms, side, walk};

/// The object id git uses for "this ref must not exist yet".
const ZERO_OID: &str = "0000000000000000000000000000000000000000";
const DAY_MS: i64 = 24 * 60 * 60 * 1000;
/// Above this many index entries that differ from the workspace, `add -A` is cheaper than
/// naming them.
const MAX_NAMED: usize = 20_000;
/// How many ids one snapshot tries before giving up: each failed try means another process
/// recorded a snapshot in between, so this many only happens under a flood of them.
const CLAIM_TRIES: usize = 64;

/// What a [`Checkpoints`] handle knows about its side repository.
#[derive(Debug)]
pub(crate) struct State {
    /// All snapshots, newest first; `None` until read from the side repository.
    entries: Option<Vec<Entry>>,
    /// The fingerprint standing for the newest snapshot, when one does.
    known: Option<Known>,
    /// The file watcher, once the first walk armed it; `None` before, or where there is none.
    pub(crate) watcher: Option<Watcher>,
    /// No watcher could be started: do not try again for every snapshot.
    pub(crate) unwatched: bool,
    /// What the workspace held at this handle's last snapshot: what the watcher's changes are
    /// relative to.
    pub(crate) base: Option<RecordedTree>,
    /// Trees read or written, kept for snapshots from the watcher (see `update`).
    pub(crate) trees: crate::update::TreeCache,
    /// How many files the last walk saw.
    pub(crate) walked_files: u64,
    /// The watch daemon's point that `base` stands for: every change before it is in `base`.
    pub(crate) point: Option<Clock>,
    /// The daemon's point taken at the start of the snapshot under way.
    pub(crate) pending: Option<Clock>,
    /// When objects were last dropped from the side repository, as this handle last saw it
    /// (see `collect`).
    collected: Option<SystemTime>,
    /// The daemon's record was looked at (once per process, for its first snapshot).
    pub(crate) recalled: bool,
    /// This process started a watch daemon.
    pub(crate) started_daemon: bool,
    /// The watch daemon once took a request and did not answer in time: not asked again.
    pub(crate) daemon_silent: bool,
}

impl State {
    /// `empty`: the side repository was just created, so there is no list to read.
    pub(crate) fn new(empty: bool) -> Self {
        Self {
            entries: empty.then(Vec::new),
            known: None,
            watcher: None,
            unwatched: false,
            base: None,
            trees: crate::update::TreeCache::default(),
            walked_files: 0,
            point: None,
            pending: None,
            collected: None,
            recalled: false,
            started_daemon: false,
            daemon_silent: false,
        }
    }

    pub(crate) fn entries(&self) -> &[Entry] {
        self.entries.as_deref().unwrap_or_default()
    }

    /// Objects were dropped from the side repository: trees kept in memory, and the last
    /// snapshot the watcher's changes are relative to, may stand on some that are gone.
    pub(crate) fn forget_collected(&mut self) {
        self.entries = None;
        self.base = None;
        self.trees = crate::update::TreeCache::default();
    }

    /// The workspace is about to change under the fingerprint (a restore writes files).
    pub(crate) fn forget_fingerprint(&mut self) {
        self.known = None;
    }
}

impl Checkpoints {
    /// Reads the snapshot list from the side repository, keeping the fingerprint if it still
    /// stands for the newest snapshot, else taking the stored one if that does.
    pub(crate) fn reload<'s>(&self, state: &'s mut State) -> Result<&'s [Entry], CheckpointError> {
        let format = format!("--format={}", meta::REF_FORMAT);
        let out = self
            .git
            .run(&["for-each-ref", "--sort=-refname", &format, meta::REF_PREFIX])?;
        let entries = meta::parse_refs(&out);
        let stands = |k: &Known| {
            entries
                .first()
                .is_some_and(|n| n.id == k.id && n.commit == k.commit)
        };
        if !state.known.as_ref().is_some_and(stands) {
            state.known = Known::load(self.git.side()).filter(|k| stands(k));
        }
        Ok(state.entries.insert(entries))
    }

    /// Takes a snapshot (see the module doc for its paths) and returns the newest entry
    /// with, when asked, the paths it changed. The caller holds the lock.
    pub(crate) fn record(
        &self,
        state: &mut State,
        label: &SnapshotLabel,
        changes: Changes,
    ) -> Result<(Entry, Vec<Vec<u8>>), CheckpointError> {
        let collected = collect::mark(self.git.side());
        if collected != state.collected {
            state.collected = collected;
            state.forget_collected();
        }
        if state.entries.is_none() {
            self.reload(state)?;
        }
        let why = match self.watched(state) {
            Ok(Watched::Recorded(base, paths, source)) => {
                let scan = format!("{} ({paths} paths)", source.label());
                if let Err(e) = self.record_base(state, label, &base, &scan) {
                    self.lose_base(state, "the last snapshot from the watcher failed");
                    return Err(e);
                }
                state.base = Some(base);
                self.after_snapshot(state, false);
                return self.finish(state, changes);
            }
            Ok(Watched::Walk(why)) => why,
            Err(e) => {
                self.lose_base(state, "the last snapshot from the watcher failed");
                return Err(e);
            }
        };
        self.point_before_walk(state);
        let result = self.record_walked(state, label, &format!("walk ({why})"));
        if result.is_err() {
            self.lose_base(state, "the last walk failed");
        }
        result?;
        self.after_snapshot(state, true);
        self.finish(state, changes)
    }

    /// Forgets what the watcher's changes were relative to: the next snapshot walks.
    fn lose_base(&self, state: &mut State, why: &'static str) {
        state.base = None;
        self.forget_point(state);
        if let Some(w) = &mut state.watcher {
            w.forget(why);
        }
    }

    /// Records `base` as the newest snapshot unless the newest already holds it in this turn
    /// and session.
    pub(crate) fn record_base(
        &self,
        state: &mut State,
        label: &SnapshotLabel,
        base: &RecordedTree,
        scan: &str,
    ) -> Result<(), CheckpointError> {
        let newest = state.entries().first();
        let same = newest.is_some_and(|p| {
            p.tree == base.tree
                && p.empty_dirs == base.empty_dirs
                && p.turn == label.turn
                && p.session.as_deref() == self.session()
        });
        if same {
            return Ok(());
        }
        // A fingerprint standing for the newest snapshot still stands for an identical one.
        let carried = state.known.as_ref().and_then(|k| {
            let n = newest?;
            let identical = k.id == n.id
                && k.commit == n.commit
                && n.tree == base.tree
                && n.empty_dirs == base.empty_dirs;
            identical.then_some(k.fingerprint)
        });
        self.commit(state, base.tree.clone(), &base.empty_dirs, label, scan)?;
        match carried {
            Some(fingerprint) => self.remember(state, fingerprint),
            None => state.known = None,
        }
        Ok(())
    }

    /// The walk's path: reads every file's metadata (re-arming the watcher), then the
    /// fingerprint decides whether git must look. `scan` goes into a recorded snapshot.
    pub(crate) fn record_walked(
        &self,
        state: &mut State,
        label: &SnapshotLabel,
        scan: &str,
    ) -> Result<(), CheckpointError> {
        let (survey, compare) = self.walk(state)?;
        let prints = &survey.prints;
        let newest = state.entries().first().cloned();
        let known_value = state.known.as_ref().and_then(|k| {
            let n = newest.as_ref()?;
            (k.id == n.id && k.commit == n.commit).then_some(k.fingerprint.value)
        });

        if let (Some(prev), Some(value)) = (&newest, known_value)
            && prints.earlier == Some(value)
        {
            return self.record_unchanged(state, label, scan, prev, value, survey);
        }

        let (tree, files) = self.walked_tree(state, compare, &survey.empty_dirs)?;
        // The fingerprint stands for this tree only if it holds exactly as many files as the
        // walk saw. This catches files git keeps that the walk skips: tracked files that a new
        // `.gitignore` rule matches (`add -A` keeps them), and any disagreement between the
        // walk's ignore rules and git's.
        let trusted = prints.current.filter(|_| files == Some(prints.files));
        let same = newest.as_ref().is_some_and(|p| {
            p.tree == tree
                && p.empty_dirs == survey.empty_dirs
                && p.turn == label.turn
                && p.session.as_deref() == self.session()
        });
        if !same {
            self.commit(state, tree.clone(), &survey.empty_dirs, label, scan)?;
        }
        match trusted {
            Some(fingerprint) => self.remember(state, fingerprint),
            None if !same => state.known = None,
            // Whatever fingerprint already stood for the unchanged newest snapshot still does.
            None => {}
        }
        state.base = Some(RecordedTree {
            tree,
            empty_dirs: survey.empty_dirs,
            bytes: survey.bytes,
        });
        Ok(())
    }

    /// Walks the workspace, re-arming the watcher; a large workspace is compared with the
    /// private index as it is walked (returned to be finished).
    fn walk(&self, state: &mut State) -> Result<(walk::Survey, Option<Compare>), CheckpointError> {
        if state.watcher.is_none() && !state.unwatched {
            state.watcher = Watcher::new();
            state.unwatched = state.watcher.is_none();
        }
        if let Some(w) = &mut state.watcher {
            w.start_walk();
        }
        state.base = None;
        let earlier = state.known.as_ref().map(|k| k.fingerprint.taken_ns);
        // A large workspace compares every file with the private index as it walks, so that
        // git need not scan it again when something changed.
        let threshold = self.limits.watch_from_files;
        self.git.seed_index();
        let large = state.walked_files >= threshold
            || self.git.index_entries().is_some_and(|n| n >= threshold);
        let mut compare = if large {
            Compare::open(self.git.index_path(), MAX_NAMED)
        } else {
            None
        };
        let survey = walk::survey(
            &self.workspace,
            self.limits.max_workspace_bytes,
            Builder::new(SystemTime::now(), earlier),
            walk::Observers {
                watcher: state.watcher.as_mut(),
                compare: compare.as_mut(),
            },
        );
        let survey = match survey {
            Ok(survey) => survey,
            Err(e) => {
                if let Some(w) = &mut state.watcher {
                    w.walk_failed();
                }
                return Err(e);
            }
        };
        side::write_info(self.git.side(), &survey.nested_repos)?;
        state.walked_files = survey.prints.files;
        Ok((survey, compare))
    }

    /// The workspace holds `prev`'s tree (the fingerprint `value` that stood for it
    /// matched): recorded again only for a new turn or session.
    fn record_unchanged(
        &self,
        state: &mut State,
        label: &SnapshotLabel,
        scan: &str,
        prev: &Entry,
        value: u64,
        survey: walk::Survey,
    ) -> Result<(), CheckpointError> {
        let prints = &survey.prints;
        if prev.turn == label.turn && prev.session.as_deref() == self.session() {
            // A fingerprint taken now hashes fewer contents when files have left the racy
            // window since: store it so later walks read less.
            if let Some(fingerprint) = prints.current.filter(|c| c.value != value) {
                self.remember(state, fingerprint);
            }
        } else {
            self.commit(state, prev.tree.clone(), &survey.empty_dirs, label, scan)?;
            match prints.current {
                Some(fingerprint) => self.remember(state, fingerprint),
                None => state.known = None,
            }
        }
        state.base = Some(RecordedTree {
            tree: prev.tree.clone(),
            empty_dirs: survey.empty_dirs,
            bytes: survey.bytes,
        });
        Ok(())
    }

    /// The tree of what the walk found, and how many files it holds when known.
    fn walked_tree(
        &self,
        state: &mut State,
        compare: Option<Compare>,
        empty_dirs: &[Vec<u8>],
    ) -> Result<(String, Option<u64>), CheckpointError> {
        let compared = compare.and_then(Compare::finish);
        // The index's own tree with what differs edited in, when it has one (see
        // `update::edited_index_tree`): no git process loads the index.
        let edited = match &compared {
            Some(compared) => self.edited_index_tree(&mut state.trees, compared, empty_dirs)?,
            None => None,
        };
        if let Some(found) = edited {
            return Ok(found);
        }
        let tree = match self.index_tree(compared.as_ref()) {
            Ok(tree) => tree,
            // The index names objects the side repository lacks (it borrowed them
            // from a user's repository that was rewritten or deleted before a
            // collection copied them in): start again from no index, hashing every
            // file into the side repository.
            Err(CheckpointError::GitFailed { .. }) => {
                self.git.drop_index();
                self.index_tree(None)?
            }
            Err(e) => return Err(e),
        };
        self.git.publish_index();
        Ok((tree, self.git.index_entries()))
    }

    /// The tree of the workspace through the private index: `compared` names what differs
    /// (see `update_named`), else `add -A` looks at every file.
    fn index_tree(&self, compared: Option<&Compared>) -> Result<String, CheckpointError> {
        if let Some(tree) = compared
            .map(|c| self.update_named(c))
            .transpose()?
            .flatten()
        {
            return Ok(tree);
        }
        self.git.run(&["add", "-A", "--", "."])?;
        self.git.line(&["write-tree"])
    }

    /// Brings the private index up to date by naming to git the `changed` entries the walk
    /// found and the files git finds untracked (`ls-files --others`: git alone decides which
    /// no ignore rule covers — asked only when the walk met a file the index lacks), instead of
    /// `add -A` scanning every file again. Returns the new tree, or `None` when `add -A` has to
    /// do it (a nested repository, or a path git would not update in place, such as a file
    /// that became a directory).
    fn update_named(&self, compared: &Compared) -> Result<Option<String>, CheckpointError> {
        let others = if compared.unindexed {
            self.git
                .run(&["ls-files", "-z", "--others", "--exclude-standard"])?
        } else {
            Vec::new()
        };
        if crate::git::split_nul_bytes(&others)
            .iter()
            .any(|p| p.ends_with(b"/"))
        {
            return Ok(None);
        }
        let mut input = others;
        for path in &compared.changed {
            input.extend_from_slice(path);
            input.push(0);
        }
        if !input.is_empty() {
            let updated = self.git.run_with_input(
                &["update-index", "-z", "--add", "--remove", "--stdin"],
                Some(&input),
            );
            match updated {
                Ok(_) => {}
                Err(CheckpointError::GitFailed { .. }) => return Ok(None),
                Err(e) => return Err(e),
            }
        }
        self.git.line(&["write-tree"]).map(Some)
    }

    /// Returns the newest snapshot and what it changed, then prunes.
    fn finish(
        &self,
        state: &mut State,
        changes: Changes,
    ) -> Result<(Entry, Vec<Vec<u8>>), CheckpointError> {
        let entries = state.entries();
        let Some(newest) = entries.first().cloned() else {
            return Err(CheckpointError::Corrupt {
                what: "no snapshot after recording one".into(),
                side: self.git.side().to_path_buf(),
            });
        };
        let changed = match (changes, entries.get(1)) {
            (Changes::List, Some(older)) => self.changes(&[(&newest.tree, &older.tree)])?.remove(0),
            _ => Vec::new(),
        };
        self.prune(state);
        if self.limits.collect_every > 0 && newest.id.is_multiple_of(self.limits.collect_every) {
            let handle = self.clone();
            // In the background: a snapshot does not wait for git to pack. A collection that
            // fails, or that the process exits before finishing, is the next one's to do.
            let _ = std::thread::Builder::new()
                .name("atto-checkpoint-collect".into())
                .spawn(move || drop(handle.collect()));
        }
        Ok((newest, changed))
    }

    /// Records `tree` as a new snapshot, the newest in `state`: claims the next id (see the
    /// module doc), reading the list again after each id another process claimed first.
    fn commit(
        &self,
        state: &mut State,
        tree: String,
        empty_dirs: &[Vec<u8>],
        label: &SnapshotLabel,
        scan: &str,
    ) -> Result<(), CheckpointError> {
        let now = now_ms();
        let commit = self.commit_object(&tree, empty_dirs, label, scan, now)?;
        let mut last_error = None;
        // Ids passed over because a lock file on their ref outlived every retry: left behind
        // by a process that crashed mid-update, it would otherwise block that id for good.
        let mut skip = 0;
        let mut collisions = 0u32;
        for _ in 0..CLAIM_TRIES {
            // Above every id this handle knows and every ref on disk.
            let known = state.entries().iter().map(|e| e.id).max();
            let id = known
                .max(meta::highest_claimed(self.git.side()))
                .map_or(1, |n| n + 1)
                + skip;
            match self
                .git
                .run(&["update-ref", &meta::ref_name(id), &commit, ZERO_OID])
            {
                Ok(_) => {
                    let entry = Entry {
                        id,
                        commit,
                        tree,
                        turn: label.turn,
                        tool: label.tool.clone(),
                        session: self.session.as_deref().map(str::to_owned),
                        note: label.note.clone(),
                        created_at_ms: now,
                        empty_dirs: empty_dirs.to_vec(),
                        scan: scan.to_owned(),
                    };
                    state.entries.get_or_insert_default().insert(0, entry);
                    return Ok(());
                }
                // Another process claimed that id: try the ones above it straight away,
                // spread a little so that processes that collided once do not collide again.
                // The list is read again only after a few misses (reading it costs a git
                // process, and under many writers most of the claims).
                Err(CheckpointError::GitFailed { command, stderr })
                    if stderr.contains("already exists") =>
                {
                    last_error = Some(CheckpointError::GitFailed { command, stderr });
                    collisions += 1;
                    if collisions.is_multiple_of(4) {
                        skip = 0;
                        self.reload(state)?;
                    } else {
                        skip += 1 + fastrand::u32(0..2);
                    }
                }
                Err(CheckpointError::GitFailed { command, stderr }) if is_lock_busy(&stderr) => {
                    last_error = Some(CheckpointError::GitFailed { command, stderr });
                    skip += 1;
                }
                Err(e) => return Err(e),
            }
        }
        Err(last_error.unwrap_or(CheckpointError::Corrupt {
            what: "no id could be claimed".into(),
            side: self.git.side().to_path_buf(),
        }))
    }

    /// Writes the snapshot's commit object for `tree`, its message carrying the label and
    /// the empty directories; returns its id.
    fn commit_object(
        &self,
        tree: &str,
        empty_dirs: &[Vec<u8>],
        label: &SnapshotLabel,
        scan: &str,
        now: i64,
    ) -> Result<String, CheckpointError> {
        let msg = meta::message(meta::Message {
            turn: label.turn,
            tool: label.tool.as_deref(),
            session: self.session.as_deref(),
            note: &label.note,
            now_ms: now,
            empty_dirs,
            scan,
        });
        let commit = self
            .git
            .run_with_input(&["commit-tree", tree, "-F", "-"], Some(msg.as_bytes()))?;
        Ok(String::from_utf8_lossy(&commit).trim().to_owned())
    }

    /// Makes `fingerprint` stand for the newest snapshot, here and for the next process.
    fn remember(&self, state: &mut State, fingerprint: Fingerprint) {
        let Some(newest) = state.entries().first() else {
            return;
        };
        let known = Known {
            id: newest.id,
            commit: newest.commit.clone(),
            fingerprint,
        };
        known.save(self.git.side());
        state.known = Some(known);
    }

    /// Deletes the refs of snapshots beyond the count or age caps; the newest always stays.
    /// A failure leaves extra snapshots behind, which the next snapshot prunes again; it is no
    /// reason to report the snapshot just taken as not taken.
    fn prune(&self, state: &mut State) {
        let Some((newest, older)) = state.entries().split_first() else {
            return;
        };
        let keep = self.limits.max_snapshots.max(1);
        let oldest_ms = newest.created_at_ms - i64::from(self.limits.keep_days) * DAY_MS;
        let doomed: Vec<&Entry> = older
            .iter()
            .enumerate()
            .filter(|(i, e)| i + 1 >= keep || e.created_at_ms < oldest_ms)
            .map(|(_, e)| e)
            .collect();
        if doomed.is_empty() {
            return;
        }
        let input: String = doomed
            .iter()
            .map(|e| format!("delete {} {}\n", meta::ref_name(e.id), e.commit))
            .collect();
        let ids: Vec<u32> = doomed.iter().map(|e| e.id).collect();
        match self
            .git
            .run_with_input(&["update-ref", "--stdin"], Some(input.as_bytes()))
        {
            Ok(_) => {
                if let Some(entries) = &mut state.entries {
                    entries.retain(|e| !ids.contains(&e.id));
                }
            }
            // Some refs may be gone and some not: read the list again next time.
            Err(_) => state.entries = None,
        }
    }
}
