//! The task graph: a session's tasks, their dependencies and states, and the rules of the
//! module docs of `tasks` (unblocking, failed dependencies, restoring stored tasks).

use std::collections::{BTreeSet, HashMap};

use atto_protocol::{Task, TaskState};

use crate::time::now_ms;

/// Why a task operation was refused. Every message is one line: what is wrong, that
/// nothing was changed, and what to do instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TaskError {
    /// No task has this number.
    #[error("{}", no_such_task(*number, *count))]
    NoSuchTask {
        /// The number asked for.
        number: u32,
        /// How many tasks there are.
        count: usize,
    },
    /// A new task names a dependency that does not exist.
    #[error(
        "task {number} does not exist, so nothing can depend on it; the task was not added. \
         Add task {number} first or leave it out of the dependencies."
    )]
    UnknownDependency {
        /// The missing dependency.
        number: u32,
    },
    /// A new task names itself as a dependency.
    #[error(
        "task {number} cannot depend on itself; the task was not added. Leave {number} out of \
         its dependencies."
    )]
    SelfDependency {
        /// The new task's number.
        number: u32,
    },
    /// A new task has an empty title.
    #[error("a task needs a title; the task was not added. Say in a few words what to do.")]
    EmptyTitle,
    /// The task waits for dependencies that are not completed or skipped.
    #[error(
        "task {number} is blocked by {}; nothing was changed. Finish those first (retry a \
         failed one), or skip task {number}.",
        waiting_list(waiting)
    )]
    Blocked {
        /// The blocked task.
        number: u32,
        /// Its unsatisfied dependencies, by number, with their states.
        waiting: Vec<(u32, TaskState)>,
    },
    /// The task's state does not allow the operation.
    #[error(
        "task {number} is {}, so it cannot be {action}; nothing was changed. {}",
        words(*state),
        next_step(*state)
    )]
    WrongState {
        /// The task.
        number: u32,
        /// Its state.
        state: TaskState,
        /// What was asked, as a past participle (`started`, `completed`, `retried`, …).
        action: &'static str,
    },
    /// `finish` was given a state a task does not finish in.
    #[error(
        "'{}' is not a way to finish a task; nothing was changed. Use completed, failed or \
         skipped.",
        words(*state)
    )]
    NotAFinish {
        /// The state given.
        state: TaskState,
    },
    /// Stored tasks depend on each other in a cycle.
    #[error(
        "the stored tasks {} depend on each other in a cycle; they were not loaded. Remove one \
         of those dependencies with the sqlite3 tool, or start a new session.",
        cycle_path(numbers)
    )]
    Cycle {
        /// The cycle, starting and ending with the same task.
        numbers: Vec<u32>,
    },
    /// Stored tasks contradict each other (a number used twice, an unknown dependency).
    #[error(
        "the stored tasks cannot be used: {0}; they were not loaded. Repair or delete those \
         rows with the sqlite3 tool, or start a new session."
    )]
    Stored(String),
}

fn no_such_task(number: u32, count: usize) -> String {
    let range = match count {
        0 => "there are no tasks yet".to_owned(),
        1 => "there is only task 1".to_owned(),
        n => format!("tasks are numbered 1 to {n}"),
    };
    format!(
        "there is no task {number} ({range}); nothing was changed. List the tasks to see their numbers."
    )
}

fn waiting_list(waiting: &[(u32, TaskState)]) -> String {
    let names: Vec<String> = waiting
        .iter()
        .map(|(n, s)| format!("task {n} ({})", words(*s)))
        .collect();
    names.join(", ")
}

fn cycle_path(numbers: &[u32]) -> String {
    let names: Vec<String> = numbers.iter().map(u32::to_string).collect();
    names.join(" → ")
}

/// A state as a message says it.
fn words(state: TaskState) -> &'static str {
    match state {
        TaskState::InProgress => "in progress",
        other => other.as_str(),
    }
}

fn next_step(state: TaskState) -> &'static str {
    match state {
        TaskState::Pending => "Start it, finish it or skip it.",
        TaskState::Blocked => "Finish its dependencies first, or skip it.",
        TaskState::InProgress => "Finish it as completed, failed or skipped.",
        TaskState::Failed => "Retry it to try again.",
        TaskState::Completed | TaskState::Skipped => {
            "It is finished; add a new task for more work."
        }
    }
}

/// Whether a dependency in this state lets its dependents start.
fn satisfied(state: TaskState) -> bool {
    matches!(state, TaskState::Completed | TaskState::Skipped)
}

/// What finishing a task did to the others.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Finished {
    /// Tasks that went from blocked to pending, in number order.
    pub unblocked: Vec<u32>,
    /// When the task failed: every unfinished task that (directly or through others)
    /// depends on it and so cannot start unless it is retried, in number order.
    pub stranded: Vec<u32>,
}

/// A session's tasks and the dependencies between them. The rules are in the
/// [`tasks`](crate::tasks) module docs.
#[derive(Debug, Clone, Default)]
pub struct TaskGraph {
    /// In number order.
    tasks: Vec<Task>,
    /// Numbers of the tasks changed since the last [`TaskGraph::take_changed`].
    changed: BTreeSet<u32>,
}

impl TaskGraph {
    /// An empty graph.
    pub fn new() -> TaskGraph {
        TaskGraph::default()
    }

    /// Rebuilds the graph from stored tasks (in any order). Refuses numbers used twice or
    /// 0, ids used twice, dependencies on unknown tasks or on the task itself, and cycles.
    /// A pending task whose dependencies are not all satisfied becomes blocked and a blocked
    /// one whose dependencies are becomes pending (the store may hold a state saved before
    /// its dependency's finish was); those count as changed.
    pub fn from_tasks(mut tasks: Vec<Task>) -> Result<TaskGraph, TaskError> {
        tasks.sort_by_key(|t| t.number);
        let mut numbers: HashMap<&str, u32> = HashMap::with_capacity(tasks.len());
        for pair in tasks.windows(2) {
            if pair[0].number == pair[1].number {
                return Err(TaskError::Stored(format!(
                    "number {} is used by both {} and {}",
                    pair[0].number, pair[0].id, pair[1].id
                )));
            }
        }
        for t in &tasks {
            if t.number == 0 {
                return Err(TaskError::Stored(format!("task {} has number 0", t.id)));
            }
            if numbers.insert(&t.id, t.number).is_some() {
                return Err(TaskError::Stored(format!("id {} is used twice", t.id)));
            }
        }
        let mut deps: Vec<Vec<u32>> = Vec::with_capacity(tasks.len());
        for t in &tasks {
            let mut mine = Vec::with_capacity(t.depends_on.len());
            for id in &t.depends_on {
                match numbers.get(id.as_str()) {
                    Some(&n) if n == t.number => {
                        return Err(TaskError::Stored(format!(
                            "task {} depends on itself",
                            t.number
                        )));
                    }
                    Some(&n) => mine.push(n),
                    None => {
                        return Err(TaskError::Stored(format!(
                            "task {} depends on {id}, which is not one of them",
                            t.number
                        )));
                    }
                }
            }
            deps.push(mine);
        }
        let mut graph = TaskGraph {
            tasks,
            changed: BTreeSet::new(),
        };
        if let Some(numbers) = graph.find_cycle() {
            return Err(TaskError::Cycle { numbers });
        }
        for (i, mut mine) in deps.into_iter().enumerate() {
            mine.sort_unstable();
            mine.dedup();
            let ids: Vec<String> = mine
                .iter()
                .filter_map(|n| graph.get(*n))
                .map(|t| t.id.clone())
                .collect();
            graph.tasks[i].depends_on = ids;
        }
        graph.repair_blocking();
        Ok(graph)
    }

    /// Adds a task that depends on the tasks numbered `depends_on` (repeats ignored). It
    /// starts pending if they are all completed or skipped, blocked otherwise.
    pub fn add(
        &mut self,
        title: &str,
        detail: &str,
        depends_on: &[u32],
    ) -> Result<&Task, TaskError> {
        let title = title.trim();
        if title.is_empty() {
            return Err(TaskError::EmptyTitle);
        }
        let number = self.tasks.last().map_or(1, |t| t.number.saturating_add(1));
        let mut deps = depends_on.to_vec();
        deps.sort_unstable();
        deps.dedup();
        let mut ids = Vec::with_capacity(deps.len());
        let mut ready = true;
        for &dep in &deps {
            if dep == number {
                return Err(TaskError::SelfDependency { number });
            }
            let Some(task) = self.get(dep) else {
                return Err(TaskError::UnknownDependency { number: dep });
            };
            ready &= satisfied(task.state);
            ids.push(task.id.clone());
        }
        let now = now_ms();
        self.tasks.push(Task {
            id: uuid::Uuid::now_v7().to_string(),
            number,
            title: title.to_owned(),
            detail: detail.trim().to_owned(),
            state: if ready {
                TaskState::Pending
            } else {
                TaskState::Blocked
            },
            depends_on: ids,
            created_at: now,
            updated_at: now,
            result: None,
        });
        self.changed.insert(number);
        let last = self.tasks.len() - 1;
        Ok(&self.tasks[last])
    }

    /// Marks a pending task as in progress. A blocked task is refused with the
    /// dependencies it waits for.
    pub fn start(&mut self, number: u32) -> Result<&Task, TaskError> {
        let i = self.index(number)?;
        match self.tasks[i].state {
            TaskState::Pending => {}
            TaskState::Blocked => return Err(self.blocked(i)),
            state => {
                return Err(TaskError::WrongState {
                    number,
                    state,
                    action: "started",
                });
            }
        }
        self.set_state(i, TaskState::InProgress, None);
        Ok(&self.tasks[i])
    }

    /// Finishes a task as completed, failed or skipped, with what came of it. Dependents
    /// whose dependencies are now all completed or skipped become pending; when the task
    /// failed, the tasks it strands are reported.
    pub fn finish(
        &mut self,
        number: u32,
        state: TaskState,
        result: Option<String>,
    ) -> Result<Finished, TaskError> {
        let i = self.index(number)?;
        let action = match state {
            TaskState::Completed => "completed",
            TaskState::Failed => "failed",
            TaskState::Skipped => "skipped",
            TaskState::Pending | TaskState::Blocked | TaskState::InProgress => {
                return Err(TaskError::NotAFinish { state });
            }
        };
        let current = self.tasks[i].state;
        if current.is_finished() {
            return Err(TaskError::WrongState {
                number,
                state: current,
                action,
            });
        }
        if current == TaskState::Blocked && state != TaskState::Skipped {
            return Err(self.blocked(i));
        }
        self.set_state(i, state, result);
        let id = self.tasks[i].id.clone();
        let mut finished = Finished::default();
        if satisfied(state) {
            for j in 0..self.tasks.len() {
                let t = &self.tasks[j];
                if t.state == TaskState::Blocked
                    && t.depends_on.contains(&id)
                    && self.waiting(j).is_empty()
                {
                    finished.unblocked.push(t.number);
                    self.set_state(j, TaskState::Pending, None);
                }
            }
        } else {
            finished.stranded = self.dependents(&id);
        }
        Ok(finished)
    }

    /// Puts a failed task back to pending (its dependencies were satisfied when it was
    /// tried), clearing its result; its dependents stay blocked until it is completed.
    pub fn retry(&mut self, number: u32) -> Result<&Task, TaskError> {
        let i = self.index(number)?;
        let state = self.tasks[i].state;
        if state != TaskState::Failed {
            return Err(TaskError::WrongState {
                number,
                state,
                action: "retried",
            });
        }
        let next = if self.waiting(i).is_empty() {
            TaskState::Pending
        } else {
            TaskState::Blocked
        };
        self.set_state(i, next, None);
        Ok(&self.tasks[i])
    }

    /// The pending tasks, in number order: what can be started now.
    pub fn ready(&self) -> Vec<&Task> {
        self.tasks
            .iter()
            .filter(|t| t.state == TaskState::Pending)
            .collect()
    }

    /// The task numbered `number`.
    pub fn get(&self, number: u32) -> Option<&Task> {
        self.index(number).ok().map(|i| &self.tasks[i])
    }

    /// Every task, in number order.
    pub fn list(&self) -> &[Task] {
        &self.tasks
    }

    /// The dependencies of task `number` that are not completed or skipped, by number, with
    /// their states (empty for an unknown task).
    pub fn waiting_for(&self, number: u32) -> Vec<(u32, TaskState)> {
        self.index(number)
            .map_or_else(|_| Vec::new(), |i| self.waiting(i))
    }

    /// The tasks added or changed since the last call, in number order: what to save.
    pub fn take_changed(&mut self) -> Vec<Task> {
        let changed = std::mem::take(&mut self.changed);
        changed
            .into_iter()
            .filter_map(|n| self.get(n).cloned())
            .collect()
    }

    fn index(&self, number: u32) -> Result<usize, TaskError> {
        self.tasks
            .binary_search_by_key(&number, |t| t.number)
            .map_err(|_| TaskError::NoSuchTask {
                number,
                count: self.tasks.len(),
            })
    }

    fn set_state(&mut self, i: usize, state: TaskState, result: Option<String>) {
        let task = &mut self.tasks[i];
        task.state = state;
        task.result = result;
        task.updated_at = now_ms();
        self.changed.insert(task.number);
    }

    fn waiting(&self, i: usize) -> Vec<(u32, TaskState)> {
        self.tasks[i]
            .depends_on
            .iter()
            .filter_map(|id| self.tasks.iter().find(|t| &t.id == id))
            .filter(|t| !satisfied(t.state))
            .map(|t| (t.number, t.state))
            .collect()
    }

    fn blocked(&self, i: usize) -> TaskError {
        TaskError::Blocked {
            number: self.tasks[i].number,
            waiting: self.waiting(i),
        }
    }

    /// Unfinished tasks depending on task `id`, directly or through others, by number.
    fn dependents(&self, id: &str) -> Vec<u32> {
        let mut found: BTreeSet<u32> = BTreeSet::new();
        let mut frontier = vec![id.to_owned()];
        while let Some(id) = frontier.pop() {
            for t in &self.tasks {
                if !t.state.is_finished() && t.depends_on.contains(&id) && found.insert(t.number) {
                    frontier.push(t.id.clone());
                }
            }
        }
        found.into_iter().collect()
    }

    /// Makes pending and blocked agree with the dependencies (after loading).
    fn repair_blocking(&mut self) {
        for i in 0..self.tasks.len() {
            let ready = self.waiting(i).is_empty();
            match self.tasks[i].state {
                TaskState::Pending if !ready => self.set_state(i, TaskState::Blocked, None),
                TaskState::Blocked if ready => self.set_state(i, TaskState::Pending, None),
                _ => {}
            }
        }
    }

    /// A dependency cycle, as numbers from a task back to itself, if there is one.
    fn find_cycle(&self) -> Option<Vec<u32>> {
        #[derive(Clone, Copy, PartialEq)]
        enum Mark {
            New,
            OnPath,
            Done,
        }
        let index: HashMap<&str, usize> = self
            .tasks
            .iter()
            .enumerate()
            .map(|(i, t)| (t.id.as_str(), i))
            .collect();
        let edges: Vec<Vec<usize>> = self
            .tasks
            .iter()
            .map(|t| {
                t.depends_on
                    .iter()
                    .filter_map(|id| index.get(id.as_str()).copied())
                    .collect()
            })
            .collect();
        let mut marks = vec![Mark::New; self.tasks.len()];
        for root in 0..self.tasks.len() {
            if marks[root] != Mark::New {
                continue;
            }
            // Depth-first without recursion: (task, next edge to follow).
            let mut path: Vec<(usize, usize)> = vec![(root, 0)];
            marks[root] = Mark::OnPath;
            while let Some(top) = path.last_mut() {
                let (node, edge) = *top;
                top.1 += 1;
                let Some(&dep) = edges[node].get(edge) else {
                    marks[node] = Mark::Done;
                    path.pop();
                    continue;
                };
                match marks[dep] {
                    Mark::Done => {}
                    Mark::New => {
                        marks[dep] = Mark::OnPath;
                        path.push((dep, 0));
                    }
                    Mark::OnPath => {
                        let start = path.iter().position(|(n, _)| *n == dep).unwrap_or(0);
                        let mut cycle: Vec<u32> = path[start..]
                            .iter()
                            .map(|(n, _)| self.tasks[*n].number)
                            .collect();
                        cycle.push(self.tasks[dep].number);
                        return Some(cycle);
                    }
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use TaskState::{Blocked, Completed, Failed, InProgress, Pending, Skipped};

    fn numbers(tasks: &[&Task]) -> Vec<u32> {
        tasks.iter().map(|t| t.number).collect()
    }

    fn states(graph: &TaskGraph) -> Vec<TaskState> {
        graph.list().iter().map(|t| t.state).collect()
    }

    /// A graph of tasks added in order, each with the given dependencies.
    fn graph(deps: &[&[u32]]) -> TaskGraph {
        let mut g = TaskGraph::new();
        for (i, d) in deps.iter().enumerate() {
            g.add(&format!("task {}", i + 1), "", d).unwrap();
        }
        g
    }

    #[test]
    fn tasks_are_numbered_in_order_and_start_pending_or_blocked() {
        let mut g = TaskGraph::new();
        let first = g.add("  write the parser ", " details\n", &[]).unwrap();
        assert_eq!((first.number, first.state), (1, Pending));
        assert_eq!(
            (first.title.as_str(), first.detail.as_str()),
            ("write the parser", "details")
        );
        let first_id = first.id.clone();
        g.add("write the printer", "", &[]).unwrap();
        let third = g.add("test both", "", &[2, 1, 2]).unwrap();
        assert_eq!((third.number, third.state), (3, Blocked));
        let second_id = g.get(2).unwrap().id.clone();
        assert_eq!(
            g.get(3).unwrap().depends_on,
            [first_id, second_id],
            "in number order, repeats dropped"
        );
        assert_eq!(numbers(&g.ready()), [1, 2]);
        assert!(g.get(4).is_none());
        assert_ne!(g.get(1).unwrap().id, g.get(2).unwrap().id);
    }

    #[test]
    fn a_task_with_bad_dependencies_or_no_title_is_not_added() {
        let mut g = graph(&[&[], &[1]]);
        let cases: [(&str, &[u32], TaskError, &str); 4] = [
            (
                "x",
                &[1, 7],
                TaskError::UnknownDependency { number: 7 },
                "task 7 does not exist",
            ),
            (
                "x",
                &[3],
                TaskError::SelfDependency { number: 3 },
                "cannot depend on itself",
            ),
            (
                "x",
                &[0],
                TaskError::UnknownDependency { number: 0 },
                "task 0 does not exist",
            ),
            (" \n", &[], TaskError::EmptyTitle, "needs a title"),
        ];
        for (title, deps, want, text) in cases {
            let err = g.add(title, "", deps).unwrap_err();
            assert_eq!(err, want);
            let msg = err.to_string();
            assert!(msg.contains(text) && msg.contains("was not added"), "{msg}");
            assert!(!msg.contains('\n'), "one line: {msg}");
            assert_eq!(g.list().len(), 2);
        }
        assert_eq!(
            g.add("x", "", &[2]).unwrap().number,
            3,
            "no number was used up"
        );
    }

    #[test]
    fn only_a_pending_task_starts_and_a_blocked_one_names_what_it_waits_for() {
        let mut g = graph(&[&[], &[], &[1, 2]]);
        assert_eq!(g.start(2).unwrap().state, InProgress);
        let err = g.start(3).unwrap_err();
        assert_eq!(
            err,
            TaskError::Blocked {
                number: 3,
                waiting: vec![(1, Pending), (2, InProgress)]
            }
        );
        assert_eq!(
            err.to_string(),
            "task 3 is blocked by task 1 (pending), task 2 (in progress); nothing was \
             changed. Finish those first (retry a failed one), or skip task 3."
        );
        let err = g.start(2).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("task 2 is in progress, so it cannot be started"),
            "{err}"
        );
        g.finish(1, Completed, None).unwrap();
        let err = g.start(1).unwrap_err();
        assert!(err.to_string().contains("add a new task"), "{err}");
        assert_eq!(
            g.start(9).unwrap_err().to_string(),
            "there is no task 9 (tasks are numbered 1 to 3); nothing was changed. List the \
             tasks to see their numbers."
        );
        assert_eq!(g.waiting_for(3), [(2, InProgress)]);
        assert!(
            TaskGraph::new()
                .start(1)
                .unwrap_err()
                .to_string()
                .contains("there are no tasks yet")
        );
    }

    #[test]
    fn a_chain_unblocks_one_link_at_a_time() {
        // 1 ← 2 ← 3: each waits for the one before.
        let mut g = graph(&[&[], &[1], &[2]]);
        assert_eq!(states(&g), [Pending, Blocked, Blocked]);
        g.start(1).unwrap();
        let done = g
            .finish(1, Completed, Some("parser written".to_owned()))
            .unwrap();
        assert_eq!(
            done,
            Finished {
                unblocked: vec![2],
                stranded: vec![]
            }
        );
        assert_eq!(states(&g), [Completed, Pending, Blocked]);
        assert_eq!(g.get(1).unwrap().result.as_deref(), Some("parser written"));
        assert_eq!(numbers(&g.ready()), [2]);
        g.start(2).unwrap();
        assert_eq!(g.finish(2, Completed, None).unwrap().unblocked, [3]);
        assert_eq!(numbers(&g.ready()), [3]);
        assert!(g.finish(3, Completed, None).unwrap().unblocked.is_empty());
        assert!(g.ready().is_empty());
    }

    #[test]
    fn a_task_with_several_dependencies_waits_for_all_of_them() {
        // 4 needs 2 and 3, which both need 1.
        let mut g = graph(&[&[], &[1], &[1], &[2, 3]]);
        assert_eq!(g.finish(1, Completed, None).unwrap().unblocked, [2, 3]);
        assert!(g.finish(2, Completed, None).unwrap().unblocked.is_empty());
        assert_eq!(g.get(4).unwrap().state, Blocked);
        assert_eq!(g.finish(3, Completed, None).unwrap().unblocked, [4]);
    }

    #[test]
    fn skipping_counts_as_out_of_the_way_even_for_a_blocked_task() {
        let mut g = graph(&[&[], &[1], &[2]]);
        // Task 2 is blocked but may be skipped; that frees task 3 although 1 is not done.
        let done = g.finish(2, Skipped, Some("not needed".to_owned())).unwrap();
        assert_eq!(done.unblocked, [3]);
        assert_eq!(states(&g), [Pending, Skipped, Pending]);
        let mut g = graph(&[&[], &[1]]);
        assert_eq!(g.finish(1, Skipped, None).unwrap().unblocked, [2]);
    }

    #[test]
    fn a_failed_dependency_strands_its_dependents_until_retried() {
        // 2 and 4 need 1; 3 needs 2; 5 is independent.
        let mut g = graph(&[&[], &[1], &[2], &[1], &[]]);
        g.start(1).unwrap();
        let done = g.finish(1, Failed, Some("tests fail".to_owned())).unwrap();
        assert_eq!(
            done,
            Finished {
                unblocked: vec![],
                stranded: vec![2, 3, 4]
            }
        );
        assert_eq!(states(&g), [Failed, Blocked, Blocked, Blocked, Pending]);
        let err = g.start(2).unwrap_err();
        assert_eq!(
            err,
            TaskError::Blocked {
                number: 2,
                waiting: vec![(1, Failed)]
            }
        );
        for state in [Completed, Failed] {
            assert_eq!(g.finish(2, state, None).unwrap_err(), err);
        }
        // Skipping a stranded task frees its own dependents.
        assert_eq!(
            g.finish(4, Skipped, None).unwrap().stranded,
            Vec::<u32>::new()
        );

        let retried = g.retry(1).unwrap();
        assert_eq!((retried.state, retried.result.clone()), (Pending, None));
        assert_eq!(
            g.get(2).unwrap().state,
            Blocked,
            "still waits for the retry"
        );
        g.start(1).unwrap();
        assert_eq!(g.finish(1, Completed, None).unwrap().unblocked, [2]);
        let err = g.retry(1).unwrap_err();
        assert!(err.to_string().contains("cannot be retried"), "{err}");
    }

    #[test]
    fn finishing_takes_only_finishing_states_and_happens_once() {
        let mut g = graph(&[&[]]);
        for state in [Pending, Blocked, InProgress] {
            let err = g.finish(1, state, None).unwrap_err();
            assert_eq!(err, TaskError::NotAFinish { state });
            assert!(
                err.to_string().contains("Use completed, failed or skipped"),
                "{err}"
            );
        }
        assert_eq!(g.get(1).unwrap().state, Pending);
        // A pending task may be completed without being started.
        g.finish(1, Completed, None).unwrap();
        let err = g.finish(1, Skipped, None).unwrap_err();
        assert_eq!(
            err,
            TaskError::WrongState {
                number: 1,
                state: Completed,
                action: "skipped"
            }
        );
        assert_eq!(
            err.to_string(),
            "task 1 is completed, so it cannot be skipped; nothing was changed. It is \
             finished; add a new task for more work."
        );
    }

    #[test]
    fn changes_are_handed_out_once_for_saving() {
        let mut g = graph(&[&[], &[1], &[]]);
        assert_eq!(g.take_changed().len(), 3);
        assert!(g.take_changed().is_empty());
        g.finish(1, Completed, None).unwrap();
        let changed: Vec<(u32, TaskState)> = g
            .take_changed()
            .iter()
            .map(|t| (t.number, t.state))
            .collect();
        assert_eq!(changed, [(1, Completed), (2, Pending)]);
        assert!(g.start(9).is_err());
        assert!(g.take_changed().is_empty(), "a refusal changes nothing");
    }

    fn stored(number: u32, state: TaskState, deps: &[u32]) -> Task {
        Task {
            id: format!("t{number}"),
            number,
            title: format!("task {number}"),
            detail: String::new(),
            state,
            depends_on: deps.iter().map(|d| format!("t{d}")).collect(),
            created_at: 1,
            updated_at: 1,
            result: None,
        }
    }

    #[test]
    fn stored_tasks_rebuild_the_same_graph_in_any_order() {
        let mut g = graph(&[&[], &[1], &[1, 2]]);
        g.finish(1, Completed, None).unwrap();
        g.start(2).unwrap();
        let mut tasks = g.list().to_vec();
        tasks.reverse();
        let mut back = TaskGraph::from_tasks(tasks).unwrap();
        assert_eq!(back.list(), g.list());
        assert!(back.take_changed().is_empty());
        assert_eq!(back.add("next", "", &[3]).unwrap().number, 4);
        assert_eq!(back.finish(2, Completed, None).unwrap().unblocked, [3]);
    }

    #[test]
    fn stored_states_that_disagree_with_their_dependencies_are_repaired() {
        // Saved before task 1's completion reached the store, and the other way round.
        let tasks = vec![
            stored(1, Completed, &[]),
            stored(2, Blocked, &[1]),
            stored(3, Pending, &[2]),
            stored(4, InProgress, &[]),
        ];
        let mut g = TaskGraph::from_tasks(tasks).unwrap();
        assert_eq!(states(&g), [Completed, Pending, Blocked, InProgress]);
        let repaired: Vec<u32> = g.take_changed().iter().map(|t| t.number).collect();
        assert_eq!(repaired, [2, 3]);
    }

    #[test]
    fn stored_tasks_that_contradict_each_other_are_refused() {
        let cycle = vec![
            stored(1, Blocked, &[3]),
            stored(2, Blocked, &[1]),
            stored(3, Blocked, &[2]),
            stored(4, Pending, &[]),
        ];
        let err = TaskGraph::from_tasks(cycle).unwrap_err();
        assert_eq!(
            err,
            TaskError::Cycle {
                numbers: vec![1, 3, 2, 1]
            }
        );
        assert!(
            err.to_string()
                .contains("tasks 1 → 3 → 2 → 1 depend on each other"),
            "{err}"
        );

        let mut twice = stored(2, Pending, &[]);
        twice.id = "t1".to_owned();
        let mut zero = stored(1, Pending, &[]);
        zero.number = 0;
        let cases = [
            (
                vec![stored(1, Pending, &[]), stored(2, Blocked, &[7])],
                "depends on t7",
            ),
            (vec![stored(1, Blocked, &[1])], "task 1 depends on itself"),
            (
                vec![stored(1, Pending, &[]), stored(1, Pending, &[])],
                "number 1 is used by both",
            ),
            (vec![stored(1, Pending, &[]), twice], "id t1 is used twice"),
            (vec![zero], "has number 0"),
        ];
        for (tasks, part) in cases {
            let err = TaskGraph::from_tasks(tasks).unwrap_err();
            let text = err.to_string();
            assert!(matches!(err, TaskError::Stored(_)), "{err:?}");
            assert!(
                text.contains(part) && text.contains("were not loaded"),
                "{text}"
            );
        }
    }
}
