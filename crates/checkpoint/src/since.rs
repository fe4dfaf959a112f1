//! Where a snapshot learns what changed since the last one, cheapest first: this process's own
//! watcher (armed by its last walk), else the watch daemon (see `daemon`) — for a process's
//! first snapshot, from the record the last process left (see `link`) —, else nobody, and the
//! snapshot walks. Also keeps the daemon's record current after each snapshot, and starts a
//! daemon when a large workspace had to be walked and none answered. It does not look at the
//! workspace itself (`update` and `walk` do).

use std::path::PathBuf;

use crate::Checkpoints;
use crate::link::{self, Answer, Record};
use crate::record::State;
use crate::update::{RecordedTree, Source};
use crate::watch::Since;

impl Checkpoints {
    /// The paths changed since this handle's base, and who named them; `Err` says why a walk
    /// is needed. For a process's first snapshot, sets the base from the daemon's record.
    pub(crate) fn changed(&self, state: &mut State) -> Result<(Vec<PathBuf>, Source), String> {
        let side = self.git.side();
        if state.watcher.is_some() {
            // The daemon's point first: every change before it is among the paths taken next.
            state.pending = self.daemon_clock(state);
        }
        if let Some(watcher) = &mut state.watcher {
            return match watcher.take() {
                Since::Paths(paths) => Ok((paths, Source::Process)),
                Since::Unknown(why) => Err(why.into()),
            };
        }
        let unwatched = state.unwatched;
        let first = move || {
            if unwatched {
                "no file watcher".to_owned()
            } else {
                "first snapshot of this process".to_owned()
            }
        };
        let point = match (state.point, state.base.is_some()) {
            (Some(point), true) => point,
            (_, false) if !state.recalled => {
                state.recalled = true;
                let Some(record) = Record::load(side) else {
                    return Err(first());
                };
                // A pruned snapshot's tree may be gone from the side repository.
                if !state.entries().iter().any(|e| e.tree == record.tree) {
                    return Err(first());
                }
                state.base = Some(RecordedTree {
                    tree: record.tree,
                    empty_dirs: record.empty_dirs,
                    bytes: record.bytes,
                });
                record.clock
            }
            _ => return Err(first()),
        };
        match self.ask_daemon(state, |side, timeout| link::since(side, point, timeout)) {
            Answer::Paths { now, paths } => {
                state.pending = Some(now);
                Ok((paths, Source::Daemon))
            }
            Answer::Unknown(why) => {
                state.base = None;
                Err(format!("the watch daemon cannot tell: {why}"))
            }
            Answer::Absent => {
                state.base = None;
                Err(first())
            }
            Answer::Silent => {
                state.base = None;
                Err("the watch daemon did not answer".to_owned())
            }
        }
    }

    /// Asks the watch daemon through `ask`, unless it already failed to answer this process
    /// once: a stuck daemon must not cost every snapshot its timeout.
    fn ask_daemon(
        &self,
        state: &mut State,
        ask: impl FnOnce(&std::path::Path, std::time::Duration) -> Answer,
    ) -> Answer {
        if state.daemon_silent {
            return Answer::Silent;
        }
        let answer = ask(self.git.side(), self.limits.daemon_timeout);
        state.daemon_silent = answer == Answer::Silent;
        answer
    }

    /// A point in the running daemon's stream, when one answers.
    fn daemon_clock(&self, state: &mut State) -> Option<link::Clock> {
        match self.ask_daemon(state, link::clock) {
            Answer::Paths { now, .. } => Some(now),
            Answer::Unknown(_) | Answer::Absent | Answer::Silent => None,
        }
    }

    /// Before a walk: the daemon's point, when one runs, so that the walk's snapshot can be
    /// recorded against it.
    pub(crate) fn point_before_walk(&self, state: &mut State) {
        if state.pending.is_none() {
            state.pending = self.daemon_clock(state);
        }
    }

    /// After a snapshot: its base stands for every change before the point taken at its start;
    /// record that for the next process. A large workspace that had to be walked with no
    /// daemon to ask gets one, once per process, when the embedding binary said how.
    pub(crate) fn after_snapshot(&self, state: &mut State, walked: bool) {
        state.point = state.pending.take();
        let side = self.git.side();
        if let (Some(clock), Some(base)) = (state.point, &state.base) {
            Record {
                clock,
                tree: base.tree.clone(),
                empty_dirs: base.empty_dirs.clone(),
                bytes: base.bytes,
            }
            .save(side);
        }
        let large = state.walked_files >= self.limits.watch_from_files;
        if walked
            && large
            && state.point.is_none()
            && !state.started_daemon
            && let Some(how) = &self.watch_daemon
        {
            state.started_daemon = link::start(how, side, &self.workspace);
        }
    }

    /// A failed snapshot vouches for nothing: no point, no base to record.
    pub(crate) fn forget_point(&self, state: &mut State) {
        state.point = None;
        state.pending = None;
    }
}
