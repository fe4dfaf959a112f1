//! The scheduling rules, as pure functions of the swarm's state and the clock: which
//! tasks may start now (dependencies passed, no backoff pending, dispatch cap not hit,
//! no overlap of files with a running task, free worker slots), which must be skipped
//! because a dependency failed, and how long a retry waits.

use std::collections::{HashMap, HashSet};

use atto_planner::overlap::overlaps;

use crate::task::{SwarmState, SwarmTask, TaskStatus};

/// Longest retry delay, in backoff units (seconds in real runs).
pub const MAX_BACKOFF_UNITS: u64 = 60;

/// The seed's backoff: `min(2^attempt, 60)` units plus `jitter` (the caller draws it,
/// below one unit), in milliseconds for a unit of `unit_ms`.
pub fn backoff_ms(attempt: u32, unit_ms: u64, jitter_ms: u64) -> u64 {
    let units = 1u64
        .checked_shl(attempt.min(63))
        .unwrap_or(u64::MAX)
        .min(MAX_BACKOFF_UNITS);
    units.saturating_mul(unit_ms).saturating_add(jitter_ms)
}

/// A task a worker has now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Running {
    /// Task id.
    pub task_id: String,
    /// The files it is to change (its target files).
    pub files: Vec<String>,
    /// The files it only reads (its relevant files).
    pub reads: Vec<String>,
    /// Whether its worker may write.
    pub writes: bool,
}

impl Running {
    /// The running record of `task`.
    pub fn of(task: &SwarmTask) -> Running {
        Running {
            task_id: task.id.clone(),
            files: task.target_files.clone(),
            reads: task.relevant_files.clone(),
            writes: task.writes(),
        }
    }
}

/// Whether two tasks may not run at the same time: one writes a file the other writes or
/// reads (the files [`overlap`](atto_planner::overlap)), or a writer named no target files
/// (it might touch anything, so it runs alone). Files both only read never hold them apart.
pub fn conflicts(a: &Running, b: &Running) -> bool {
    if !a.writes && !b.writes {
        return false;
    }
    if (a.writes && a.files.is_empty()) || (b.writes && b.files.is_empty()) {
        return true;
    }
    writes_into(a, b) || writes_into(b, a)
}

/// Whether `writer` writes a file `other` writes or reads.
fn writes_into(writer: &Running, other: &Running) -> bool {
    if !writer.writes {
        return false;
    }
    let touched = other.files.iter().chain(&other.reads);
    writer
        .files
        .iter()
        .any(|f| touched.clone().any(|t| overlaps(f, t)))
}

/// What the scheduler is told besides the state.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Workers that may run at once.
    pub max_workers: usize,
    /// Dispatches one task may have in all.
    pub max_dispatches: u32,
}

/// The tasks to start now, in the decomposer's order.
pub fn ready(
    state: &SwarmState,
    running: &[Running],
    not_before: &HashMap<String, u64>,
    now_ms: u64,
    limits: Limits,
) -> Vec<String> {
    let passed: HashSet<&str> = state
        .tasks
        .iter()
        .filter(|t| t.status == TaskStatus::Passed)
        .map(|t| t.id.as_str())
        .collect();
    let mut busy: Vec<Running> = running.to_vec();
    let mut out = Vec::new();
    for task in &state.tasks {
        if busy.len() >= limits.max_workers {
            break;
        }
        if task.status != TaskStatus::Pending
            || busy.iter().any(|r| r.task_id == task.id)
            || task.dispatches() >= limits.max_dispatches
            || not_before.get(&task.id).is_some_and(|&t| t > now_ms)
            || !task
                .dependencies
                .iter()
                .all(|d| passed.contains(d.as_str()))
        {
            continue;
        }
        let candidate = Running::of(task);
        if busy.iter().any(|r| conflicts(r, &candidate)) {
            continue;
        }
        out.push(task.id.clone());
        busy.push(candidate);
    }
    out
}

/// Pending tasks that can never run because a dependency failed or was skipped, with
/// the reason. A dependency waiting for a person holds its dependents back instead.
pub fn cascade(state: &SwarmState) -> Vec<(String, String)> {
    let status: HashMap<&str, TaskStatus> = state
        .tasks
        .iter()
        .map(|t| (t.id.as_str(), t.status))
        .collect();
    let mut out = Vec::new();
    for task in &state.tasks {
        if task.status != TaskStatus::Pending {
            continue;
        }
        if let Some(dep) = task.dependencies.iter().find(|d| {
            matches!(
                status.get(d.as_str()),
                Some(TaskStatus::Failed | TaskStatus::Skipped)
            )
        }) {
            let how = status.get(dep.as_str()).map_or("failed", |s| s.as_str());
            out.push((task.id.clone(), format!("its dependency {dep} {how}")));
        }
    }
    out
}

/// The longest chain of dependent tasks (in tasks), for status views and benchmarks.
pub fn depth(state: &SwarmState, id: &str) -> usize {
    fn go<'a>(state: &'a SwarmState, id: &'a str, seen: &mut Vec<&'a str>) -> usize {
        if seen.contains(&id) {
            return 0;
        }
        seen.push(id);
        let d = state.task(id).map_or(0, |t| {
            t.dependencies
                .iter()
                .map(|d| 1 + go(state, d, seen))
                .max()
                .unwrap_or(0)
        });
        seen.pop();
        d
    }
    go(state, id, &mut Vec::new())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use atto_quality::TaskKind;

    use super::*;
    use crate::task::Attempt;

    fn task(id: &str, files: &[&str], deps: &[&str]) -> SwarmTask {
        SwarmTask {
            id: id.into(),
            kind: TaskKind::Implement,
            description: format!("do {id}"),
            target_files: files.iter().map(|s| (*s).to_owned()).collect(),
            dependencies: deps.iter().map(|s| (*s).to_owned()).collect(),
            ..SwarmTask::default()
        }
    }

    fn state(tasks: Vec<SwarmTask>) -> SwarmState {
        SwarmState {
            tasks,
            ..SwarmState::default()
        }
    }

    const LIMITS: Limits = Limits {
        max_workers: 4,
        max_dispatches: 5,
    };

    #[test]
    fn the_backoff_doubles_up_to_a_minute() {
        assert_eq!(backoff_ms(1, 1000, 0), 2000);
        assert_eq!(backoff_ms(2, 1000, 250), 4250);
        assert_eq!(backoff_ms(6, 1000, 0), 60_000);
        assert_eq!(backoff_ms(200, 1000, 0), 60_000);
    }

    #[test]
    fn overlapping_files_never_run_together() {
        let s = state(vec![
            task("a", &["x.py"], &[]),
            task("b", &["x.py", "y.py"], &[]),
            task("c", &["z.py"], &[]),
        ]);
        assert_eq!(ready(&s, &[], &HashMap::new(), 0, LIMITS), vec!["a", "c"]);
        let running = [Running::of(&s.tasks[0])];
        assert_eq!(ready(&s, &running, &HashMap::new(), 0, LIMITS), vec!["c"]);
    }

    #[test]
    fn files_only_read_by_both_do_not_serialise_them() {
        let mut a = task("a", &["a.py"], &[]);
        a.relevant_files = vec!["models.py".into()];
        let mut b = task("b", &["b.py"], &[]);
        b.relevant_files = vec!["models.py".into()];
        // c writes what a and b only read.
        let c = task("c", &["models.py"], &[]);
        let s = state(vec![a, b, c]);
        assert_eq!(ready(&s, &[], &HashMap::new(), 0, LIMITS), vec!["a", "b"]);
        let running = [Running::of(&s.tasks[2])];
        assert!(ready(&s, &running, &HashMap::new(), 0, LIMITS).is_empty());
    }

    #[test]
    fn a_writer_without_files_runs_alone_but_readers_share() {
        let mut research = task("r", &["x.py"], &[]);
        research.kind = TaskKind::Research;
        let s = state(vec![
            task("w", &[], &[]),
            research,
            task("c", &["z.py"], &[]),
        ]);
        assert_eq!(ready(&s, &[], &HashMap::new(), 0, LIMITS), vec!["w"]);
        let s2 = state(vec![s.tasks[1].clone(), s.tasks[2].clone()]);
        assert_eq!(ready(&s2, &[], &HashMap::new(), 0, LIMITS), vec!["r", "c"]);
    }

    #[test]
    fn dependencies_backoff_slots_and_dispatch_caps_hold_tasks_back() {
        let mut s = state(vec![
            task("a", &["a"], &[]),
            task("b", &["b"], &["a"]),
            task("c", &["c"], &[]),
            task("d", &["d"], &[]),
        ]);
        let mut wait = HashMap::new();
        wait.insert("c".to_owned(), 5000);
        assert_eq!(ready(&s, &[], &wait, 4999, LIMITS), vec!["a", "d"]);
        assert_eq!(ready(&s, &[], &wait, 5000, LIMITS), vec!["a", "c", "d"]);
        s.tasks[0].status = TaskStatus::Passed;
        let two = Limits {
            max_workers: 2,
            ..LIMITS
        };
        assert_eq!(ready(&s, &[], &HashMap::new(), 0, two), vec!["b", "c"]);
        s.tasks[1].attempts = vec![Attempt::default(); 5];
        assert_eq!(ready(&s, &[], &HashMap::new(), 0, LIMITS), vec!["c", "d"]);
    }

    #[test]
    fn failures_cascade_but_a_task_awaiting_a_person_holds_its_dependents() {
        let mut s = state(vec![
            task("a", &["a"], &[]),
            task("b", &["b"], &["a"]),
            task("c", &["c"], &["b"]),
        ]);
        s.tasks[0].status = TaskStatus::AwaitingIntervention;
        assert!(cascade(&s).is_empty());
        s.tasks[0].status = TaskStatus::Failed;
        assert_eq!(
            cascade(&s),
            vec![("b".into(), "its dependency a failed".into())]
        );
        s.tasks[1].status = TaskStatus::Skipped;
        assert_eq!(
            cascade(&s),
            vec![("c".into(), "its dependency b skipped".into())]
        );
        assert_eq!(depth(&s, "c"), 2);
    }
}
