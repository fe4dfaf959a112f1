//! The task graph: a session's tasks, their dependencies and states, and the rules of the
//! module docs of `tasks` (unblocking, failed dependencies, restoring stored tasks). What a
//! refusal says is in `error`.

mod error;

pub use error::TaskError;

use std::collections::{BTreeSet, HashMap};

use atto_protocol::{Task, TaskState};

use super::now_ms;

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
mod tests;
