//! The engine's side of file checkpoints: when to snapshot (before each mutating call; the
//! first one of a turn marks the turn's boundary) and running the side repository's git
//! work off the async runtime. A snapshot that fails before a call is that call's problem
//! ([`SessionCheckpoints::before_call`] says why; the orchestrator refuses or asks); checkpoints
//! switched off as a whole (too large, no git) are said once, loudly. What a snapshot is
//! and how restoring works belong to `atto-checkpoint`.

use std::sync::Arc;

use atto_checkpoint::{CheckpointError, Checkpoints, RestoreReport, Snapshot, SnapshotLabel};
use atto_protocol::{CheckpointInfo, Event};
use tokio::sync::mpsc;

/// How many checkpoints `/restore list` shows by default.
pub(crate) const DEFAULT_LIST: u32 = 20;

/// Checkpoints of one session's workspace.
pub(crate) struct SessionCheckpoints {
    inner: Option<Arc<Checkpoints>>,
    events: mpsc::UnboundedSender<Event>,
    /// Checkpoints were switched off (too large, git missing); said once, loudly.
    off: bool,
    /// The turn the last snapshot was taken in, and whether it was the turn's first.
    last_turn: Option<u32>,
    /// Turns that took a snapshot, newest last.
    changed_turns: Vec<u32>,
    /// The turn the last `/undo` went back before: the next one goes further back.
    undone_to: Option<u32>,
    /// The snapshot holding each thread's files as this run left them.
    left: std::collections::HashMap<String, u32>,
    /// The newest turn's first snapshot and its end-of-turn snapshot.
    turn_window: TurnWindow,
    /// The mutating calls since [`SessionCheckpoints::watch`], while a parallel plan step's calls run.
    watched: Option<Watched>,
}

/// A turn's first snapshot and the one at its end, each as (turn, id).
#[derive(Debug, Default, Clone, Copy)]
struct TurnWindow {
    start: Option<(u32, u32)>,
    end: Option<(u32, u32)>,
}

/// What the keeper saw of the mutating calls of one parallel step's reply.
#[derive(Debug, Default)]
pub(crate) struct Watched {
    /// How many mutating calls started.
    pub calls: usize,
    /// The snapshot taken before the first of them, when one was taken.
    pub first: Option<u32>,
}

impl SessionCheckpoints {
    pub(crate) fn new(
        inner: Option<Arc<Checkpoints>>,
        events: mpsc::UnboundedSender<Event>,
    ) -> Self {
        Self {
            inner,
            events,
            off: false,
            last_turn: None,
            changed_turns: Vec::new(),
            undone_to: None,
            left: std::collections::HashMap::new(),
            turn_window: TurnWindow::default(),
            watched: None,
        }
    }

    /// Records the workspace before a mutating call of `turn`. The first of a turn is the
    /// turn's boundary: the state the turn started from, which `/undo` returns to. `Err`
    /// says why no checkpoint could be taken (not when checkpoints are off as a whole:
    /// that was said once at the start).
    pub(crate) async fn before_call(
        &mut self,
        turn: u32,
        tool: &str,
        target: &str,
    ) -> Result<(), String> {
        let first = self.last_turn != Some(turn);
        let note = if first {
            format!("start of turn {turn}, before {tool} {target}")
        } else {
            format!("before {tool} {target}")
        };
        let label = SnapshotLabel {
            turn,
            tool: Some(tool.to_owned()),
            note,
        };
        let taken = match self.try_take(label).await {
            Ok(taken) => taken,
            Err(why) => return Err(why),
        };
        if let Some(watched) = &mut self.watched {
            watched.calls += 1;
            if watched.first.is_none() {
                watched.first = taken.as_ref().map(|snapshot| snapshot.id);
            }
        }
        if let Some(snapshot) = &taken {
            self.last_turn = Some(turn);
            if first {
                self.changed_turns.push(turn);
                self.turn_window = TurnWindow {
                    start: Some((turn, snapshot.id)),
                    end: None,
                };
            }
        }
        Ok(())
    }

    /// Records the workspace at the end of `turn` if the turn took a snapshot before a
    /// call: the end of its last call's window. Free when nothing changed since.
    pub(crate) async fn after_turn(&mut self, turn: u32) {
        if self.last_turn == Some(turn)
            && let Some(end) = self
                .take(SnapshotLabel {
                    turn,
                    tool: None,
                    note: format!("end of turn {turn}"),
                })
                .await
        {
            self.turn_window.end = Some((turn, end.id));
        }
    }

    /// Every path that changed between this session's first snapshot of `turn` and the
    /// one at its end: what the turn's calls changed, commands included. One git process
    /// when something changed, none otherwise.
    pub(crate) async fn changed_in_turn(&self, turn: u32) -> Vec<String> {
        let (Some((start_turn, first)), Some((end_turn, last))) =
            (self.turn_window.start, self.turn_window.end)
        else {
            return Vec::new();
        };
        let Some(inner) = self.inner.clone() else {
            return Vec::new();
        };
        if start_turn != turn || end_turn != turn || first == last {
            return Vec::new();
        }
        blocking(move || inner.changed_between(first, last))
            .await
            .unwrap_or_default()
    }

    /// Starts counting mutating calls and remembering the snapshot before the first one:
    /// one parallel plan step's reply is about to run its calls.
    pub(crate) fn watch(&mut self) {
        self.watched = Some(Watched::default());
    }

    /// Stops watching; what was seen since [`SessionCheckpoints::watch`].
    pub(crate) fn unwatch(&mut self) -> Watched {
        self.watched.take().unwrap_or_default()
    }

    /// The paths that changed since snapshot `since` (taken in `turn`), found by
    /// snapshotting the workspace now: what calls that do not report their paths (`bash`)
    /// changed, as long as nothing else ran since. Free when nothing changed; empty when
    /// no snapshot could be taken or compared (with a warning).
    pub(crate) async fn changed_since(&mut self, turn: u32, since: u32, step: u32) -> Vec<String> {
        let label = SnapshotLabel {
            turn,
            tool: None,
            note: format!("after the calls of plan step {step}"),
        };
        let (Some(after), Some(inner)) = (self.take(label).await, self.inner.clone()) else {
            return Vec::new();
        };
        match blocking(move || inner.changed_between(since, after.id)).await {
            Ok(paths) => paths,
            Err(err) => {
                self.warn(format!(
                    "could not tell which files plan step {step}'s commands changed ({err}); \
                     if the step fails, they are not rolled back"
                ));
                Vec::new()
            }
        }
    }

    /// Records the workspace before applying approved plan changes.
    pub(crate) async fn before_plan(&mut self, turn: u32) {
        let label = SnapshotLabel {
            turn,
            tool: Some("approve".into()),
            note: "before applying approved plan changes".into(),
        };
        if self.take(label).await.is_some() {
            self.changed_turns.push(turn);
        }
    }

    /// Records the workspace before plan step `number` runs; the checkpoint's number, to
    /// roll the step back to.
    pub(crate) async fn before_step(&mut self, turn: u32, number: u32) -> Option<u32> {
        let label = SnapshotLabel {
            turn,
            tool: Some("plan_step".into()),
            note: format!("before plan step {number}"),
        };
        self.take(label).await.map(|snapshot| snapshot.id)
    }

    /// Records the workspace before plan steps `numbers` run together; the checkpoint's
    /// number, to roll a failed one's files back to.
    pub(crate) async fn before_batch(&mut self, turn: u32, numbers: &[u32]) -> Option<u32> {
        let list: Vec<String> = numbers.iter().map(u32::to_string).collect();
        let label = SnapshotLabel {
            turn,
            tool: Some("plan_step".into()),
            note: format!("before plan steps {} (run together)", list.join(", ")),
        };
        self.take(label).await.map(|snapshot| snapshot.id)
    }

    /// Records the files as thread `thread` leaves them, so switching back can offer them.
    pub(crate) async fn leaving_thread(&mut self, turn: u32, thread: &str) {
        let label = SnapshotLabel {
            turn,
            tool: None,
            note: leaving_note(thread),
        };
        // Unchanged files reuse the last snapshot (with its own note): remember the id.
        if let Some(snapshot) = self.take(label).await {
            self.left.insert(thread.to_owned(), snapshot.id);
        }
    }

    /// Remembers checkpoint `id` as holding the files as `thread` left them (a restore's
    /// safety snapshot, when the files moved with the conversation).
    pub(crate) fn left_at(&mut self, thread: &str, id: u32) {
        self.left.insert(thread.to_owned(), id);
    }

    /// Records the files after a rewind, under the turn the conversation went back to: the
    /// next turn's first snapshot then never matches an older one of the same number, so
    /// it marks that turn's start.
    pub(crate) async fn after_rewind(&mut self, turn: u32, prompt: u32) {
        let label = SnapshotLabel {
            turn,
            tool: None,
            note: format!("files after rewinding to before prompt {prompt}"),
        };
        self.take(label).await;
    }

    /// For each time in `times` (Unix milliseconds), the oldest checkpoint taken at or after
    /// it, by any session: every change atto makes is preceded by a snapshot, so that one
    /// holds the files as they were at that time (an edit made by hand meanwhile aside).
    /// `None` where nothing was recorded since: nothing atto did changed the files.
    pub(crate) async fn first_since(&self, times: Vec<i64>) -> Result<Vec<Option<u32>>, String> {
        let Some(inner) = self.inner.clone() else {
            return Ok(vec![None; times.len()]);
        };
        let list = blocking(move || inner.list(usize::MAX)).await?;
        Ok(times
            .iter()
            .map(|at| {
                list.iter()
                    .filter(|s| s.created_at_ms >= *at)
                    .map(|s| s.id)
                    .min()
            })
            .collect())
    }

    /// The checkpoint holding the files as `thread` last left them, if any.
    pub(crate) async fn left_by(&self, thread: &str) -> Option<u32> {
        if let Some(id) = self.left.get(thread) {
            return Some(*id);
        }
        // Left in an earlier run of this session: found by its note.
        let inner = Arc::clone(self.inner.as_ref()?);
        let list = blocking(move || inner.list(usize::MAX)).await.ok()?;
        let note = leaving_note(thread);
        list.iter().find(|s| s.note == note).map(|s| s.id)
    }

    /// A snapshot where failing is not a call's problem (plan steps, thread switches):
    /// a failure is a warning.
    async fn take(&mut self, label: SnapshotLabel) -> Option<Snapshot> {
        match self.try_take(label).await {
            Ok(taken) => taken,
            Err(why) => {
                self.warn(format!("no checkpoint was taken: {why}"));
                None
            }
        }
    }

    /// `Ok(None)`: checkpoints are off for this session (said once). `Err`: this snapshot
    /// failed, and why.
    async fn try_take(&mut self, label: SnapshotLabel) -> Result<Option<Snapshot>, String> {
        if self.off {
            return Ok(None);
        }
        let Some(inner) = self.inner.as_ref().map(Arc::clone) else {
            return Ok(None);
        };
        let result = tokio::task::spawn_blocking(move || inner.snapshot_quick(&label)).await;
        match result {
            Ok(Ok(snapshot)) => Ok(Some(snapshot)),
            Ok(Err(
                err @ (CheckpointError::Disabled { .. } | CheckpointError::GitMissing { .. }),
            )) => {
                self.off = true;
                self.warn(format!(
                    "{err}. File changes in this session cannot be undone with /restore or /undo."
                ));
                Ok(None)
            }
            Ok(Err(err)) => Err(err.to_string()),
            Err(join) => Err(format!("internal error: {join}")),
        }
    }

    fn warn(&self, message: String) {
        let _ = self.events.send(Event::Warning { message });
    }

    fn get(&self) -> Result<Arc<Checkpoints>, String> {
        self.inner.clone().ok_or_else(|| {
            "file checkpoints are not available in this session (no data directory)".to_owned()
        })
    }

    /// This session's id, as its snapshots record it.
    fn session(&self) -> Option<String> {
        self.inner.as_ref()?.session().map(str::to_owned)
    }

    /// `/restore list [N]` (this session's checkpoints) or `/restore list all [N]`
    /// (every session's in this workspace, each marked with its session). Each row
    /// names the tool whose changes restoring it undoes and the files they touched.
    pub(crate) async fn list(&self, limit: u32, all: bool) -> Result<Vec<CheckpointInfo>, String> {
        let inner = self.get()?;
        let own = self.session();
        let n = usize::try_from(limit).unwrap_or(usize::MAX);
        let list = blocking(move || inner.list(usize::MAX)).await?;
        // Newest first: what happened after checkpoint i is what checkpoint i - 1 records
        // as changed.
        let mut rows: Vec<CheckpointInfo> = Vec::with_capacity(list.len());
        for (i, snapshot) in list.iter().enumerate() {
            let undone = match i {
                0 => Vec::new(),
                _ => list[i - 1].files_changed.clone(),
            };
            let mut row = info(snapshot.clone());
            row.files_changed = undone;
            row.other_session = snapshot.session.clone().filter(|s| Some(s) != own.as_ref());
            let mine = row.other_session.is_none();
            if all || mine {
                rows.push(row);
            }
        }
        rows.truncate(n);
        Ok(rows)
    }

    /// `/restore N`: any checkpoint of this workspace; one another session took is said
    /// to be that session's.
    pub(crate) async fn restore(&self, id: u32) -> Result<RestoreReport, String> {
        let inner = self.get()?;
        let own = self.session();
        let owner = {
            let inner = Arc::clone(&inner);
            blocking(move || inner.list(usize::MAX)).await?
        }
        .into_iter()
        .find(|s| s.id == id)
        .and_then(|s| s.session)
        .filter(|s| Some(s) != own.as_ref());
        if let Some(owner) = owner {
            self.warn(format!(
                "checkpoint {id} was taken by another session ({}); restoring it brings back \
                 the files as that session left them",
                &owner[..owner.len().min(13)]
            ));
        }
        blocking(move || inner.restore(id)).await
    }

    /// Restores only `paths` from checkpoint `id` (a failed plan step's files, while the
    /// steps that ran beside it keep theirs).
    pub(crate) async fn restore_paths(
        &self,
        id: u32,
        paths: Vec<String>,
    ) -> Result<RestoreReport, String> {
        let inner = self.get()?;
        blocking(move || inner.restore_paths(id, &paths)).await
    }

    /// The text `paths` had at checkpoint `id` (what a step's files held before it ran);
    /// empty when there are no checkpoints.
    pub(crate) async fn read_at(
        &self,
        id: u32,
        paths: Vec<String>,
    ) -> std::collections::BTreeMap<String, String> {
        let Ok(inner) = self.get() else {
            return std::collections::BTreeMap::new();
        };
        blocking(move || inner.read_at(id, &paths))
            .await
            .unwrap_or_default()
    }

    /// `/undo`: puts back what the newest turn of this session that changed files (and is
    /// not undone yet) changed; each `/undo` goes one turn further back. Only the paths
    /// this session's calls changed are restored — what other sessions changed in the
    /// same workspace meanwhile stays — and other sessions' checkpoints are never undone.
    pub(crate) async fn undo(&mut self) -> Result<(u32, RestoreReport), String> {
        let inner = self.get()?;
        let Some(own) = self.session() else {
            return Err("this session's checkpoints are not known; use /restore list".into());
        };
        let below = self.undone_to.unwrap_or(u32::MAX);
        // Oldest first, every session's: a call's changes are the difference between the
        // snapshot before it and the next snapshot anyone took.
        let mut all = {
            let inner = Arc::clone(&inner);
            blocking(move || inner.list(usize::MAX)).await?
        };
        all.sort_by_key(|s| s.id);
        let mine = |s: &Snapshot| s.session.as_deref() == Some(own.as_str()) && s.tool.is_some();
        let turn = all
            .iter()
            .filter(|s| mine(s) && s.turn < below)
            .map(|s| s.turn)
            .max()
            .ok_or(if below == u32::MAX {
                "this session has changed no files yet, so there is nothing to undo"
            } else {
                "there is nothing further back to undo in this session"
            })?;
        let calls: Vec<u32> = all
            .iter()
            .filter(|s| mine(s) && s.turn == turn)
            .map(|s| s.id)
            .collect();
        let Some(&first) = calls.first() else {
            return Err("the turn's checkpoints could not be read".into());
        };
        let now = self
            .try_take(SnapshotLabel {
                turn,
                tool: None,
                note: format!("before /undo of turn {turn}"),
            })
            .await?
            .map(|s| s.id);
        // Each call's window ends at this session's next snapshot (the next call, the end
        // of the turn) or, for a turn cut short, now.
        let own_ids: Vec<u32> = all
            .iter()
            .filter(|s| s.session.as_deref() == Some(own.as_str()))
            .map(|s| s.id)
            .collect();
        let mut paths: Vec<std::path::PathBuf> = Vec::new();
        for call in calls {
            let Some(next) = own_ids.iter().copied().find(|id| *id > call).or(now) else {
                continue;
            };
            let inner = Arc::clone(&inner);
            let changed = blocking(move || inner.changed_paths_between(call, next)).await?;
            for path in changed {
                if !paths.contains(&path) {
                    paths.push(path);
                }
            }
        }
        let report = blocking(move || inner.restore_paths(first, &paths)).await?;
        self.undone_to = Some(turn);
        self.changed_turns.retain(|t| *t < turn);
        Ok((turn, report))
    }
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, CheckpointError> + Send + 'static,
) -> Result<T, String> {
    match tokio::task::spawn_blocking(f).await {
        Ok(result) => result.map_err(|e| e.to_string()),
        Err(join) => Err(format!(
            "the checkpoint operation failed (internal error: {join})"
        )),
    }
}

fn leaving_note(thread: &str) -> String {
    format!("files of thread {thread} when the session left it")
}

fn info(s: Snapshot) -> CheckpointInfo {
    CheckpointInfo {
        id: s.id,
        turn: s.turn,
        tool: s.tool,
        note: s.note,
        created_at: s.created_at_ms,
        files_changed: s.files_changed,
        other_session: None,
    }
}
