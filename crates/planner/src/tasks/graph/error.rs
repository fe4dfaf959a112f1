//! Why a task operation was refused: [`TaskError`] and the one-line messages it renders.
//! Owns only the wording; which operations are refused, and when, is decided in `graph`.

use atto_protocol::TaskState;

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
