//! Task decomposition and session objectives (`tasks`, `task_deps`, `goals`): saving a task
//! with its dependencies or a goal as it changes, and reading back a session's tasks (by
//! number) and goals (newest first). It stores what it is given: which state may follow
//! which, when a task unblocks and when a goal runs out of budget are atto-core's to decide
//! (its `tasks` module); the store only refuses what would break the tables' meaning — a
//! number used twice in a session, a dependency on a task of another session.
//!
//! Every write is one transaction, committed before the call returns.

use std::path::Path;

use atto_protocol::{Goal, GoalStatus, Task, TaskState};
use rusqlite::{Connection, OptionalExtension, Row, Transaction, TransactionBehavior, params};

use crate::{Store, StoreError};

impl Store {
    /// Stores a task of session `session_id`, or updates it if its id is stored already
    /// (its `created_at` stays as first saved), and replaces its dependencies with
    /// `task.depends_on`, all in one transaction. The session and every task it depends on
    /// must be stored already; a dependency listed twice is stored once.
    pub async fn save_task(&self, task: &Task, session_id: &str) -> Result<(), StoreError> {
        let (task, session) = (task.clone(), session_id.to_owned());
        self.call(move |conn| save_task(conn, &task, &session))
            .await?
    }

    /// [`Store::save_task`] for code without an async runtime.
    pub fn save_task_blocking(&self, task: &Task, session_id: &str) -> Result<(), StoreError> {
        let (task, session) = (task.clone(), session_id.to_owned());
        self.call_blocking(move |conn| save_task(conn, &task, &session))?
    }

    /// Every task of the session in number order, each with its dependencies in the order
    /// of their numbers.
    pub async fn tasks(&self, session_id: &str) -> Result<Vec<Task>, StoreError> {
        let (session, path) = (session_id.to_owned(), self.path().to_path_buf());
        self.call(move |conn| load_tasks(conn, &path, &session))
            .await?
    }

    /// [`Store::tasks`] for code without an async runtime.
    pub fn tasks_blocking(&self, session_id: &str) -> Result<Vec<Task>, StoreError> {
        let (session, path) = (session_id.to_owned(), self.path().to_path_buf());
        self.call_blocking(move |conn| load_tasks(conn, &path, &session))?
    }

    /// Stores a goal of session `session_id`, or updates it if its id is stored already
    /// (its `created_at` stays as first saved). The session must be stored already.
    pub async fn save_goal(&self, goal: &Goal, session_id: &str) -> Result<(), StoreError> {
        let (goal, session) = (goal.clone(), session_id.to_owned());
        self.call(move |conn| save_goal(conn, &goal, &session))
            .await?
    }

    /// [`Store::save_goal`] for code without an async runtime.
    pub fn save_goal_blocking(&self, goal: &Goal, session_id: &str) -> Result<(), StoreError> {
        let (goal, session) = (goal.clone(), session_id.to_owned());
        self.call_blocking(move |conn| save_goal(conn, &goal, &session))?
    }

    /// Removes goal `goal_id` of the session (`/goal clear`). Returns whether it was stored.
    pub async fn delete_goal(&self, goal_id: &str, session_id: &str) -> Result<bool, StoreError> {
        let (goal, session) = (goal_id.to_owned(), session_id.to_owned());
        self.call(move |conn| delete_goal(conn, &goal, &session))
            .await
    }

    /// [`Store::delete_goal`] for code without an async runtime.
    pub fn delete_goal_blocking(
        &self,
        goal_id: &str,
        session_id: &str,
    ) -> Result<bool, StoreError> {
        let (goal, session) = (goal_id.to_owned(), session_id.to_owned());
        self.call_blocking(move |conn| delete_goal(conn, &goal, &session))
    }

    /// Every goal of the session, newest first.
    pub async fn goals(&self, session_id: &str) -> Result<Vec<Goal>, StoreError> {
        let (session, path) = (session_id.to_owned(), self.path().to_path_buf());
        self.call(move |conn| load_goals(conn, &path, &session))
            .await?
    }

    /// [`Store::goals`] for code without an async runtime.
    pub fn goals_blocking(&self, session_id: &str) -> Result<Vec<Goal>, StoreError> {
        let (session, path) = (session_id.to_owned(), self.path().to_path_buf());
        self.call_blocking(move |conn| load_goals(conn, &path, &session))?
    }
}

/// The outer result is SQLite's; the inner one a refusal this module explains itself.
type Outcome<T> = rusqlite::Result<Result<T, StoreError>>;

fn save_task(conn: &mut Connection, task: &Task, session: &str) -> Outcome<()> {
    if task.number == 0 {
        return Ok(Err(StoreError::Invalid {
            what: format!("task {} has number 0", task.id),
            hint: "Tasks are numbered from 1.",
        }));
    }
    // Returning early drops the transaction, which rolls back what was already written.
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    if let Err(err) = session_exists(&tx, session, &format!("its task {}", task.id))? {
        return Ok(Err(err));
    }
    let holder: Option<String> = tx
        .prepare_cached("SELECT id FROM tasks WHERE session_id = ?1 AND number = ?2 AND id <> ?3")?
        .query_row(params![session, task.number, task.id], |r| r.get(0))
        .optional()?;
    if let Some(holder) = holder {
        return Ok(Err(StoreError::Invalid {
            what: format!(
                "task {} cannot be number {} of session {session}: task {holder} already is",
                task.id, task.number
            ),
            hint: "Give each task of a session its own number.",
        }));
    }
    let written = tx
        .prepare_cached(
            "INSERT INTO tasks \
             (id, session_id, number, title, detail, state, result, created_at, updated_at) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) \
             ON CONFLICT (id) DO UPDATE SET number = excluded.number, title = excluded.title, \
             detail = excluded.detail, state = excluded.state, result = excluded.result, \
             updated_at = excluded.updated_at WHERE tasks.session_id = excluded.session_id",
        )?
        .execute(params![
            task.id,
            session,
            task.number,
            task.title,
            task.detail,
            task.state.as_str(),
            task.result,
            task.created_at,
            task.updated_at
        ])?;
    if written == 0 {
        return Ok(Err(other_session("task", &task.id, session)));
    }
    tx.prepare_cached("DELETE FROM task_deps WHERE task_id = ?1")?
        .execute(params![task.id])?;
    for dep in &task.depends_on {
        if let Err(err) = check_dep(&tx, task, dep, session)? {
            return Ok(Err(err));
        }
        tx.prepare_cached("INSERT OR IGNORE INTO task_deps (task_id, depends_on) VALUES (?1, ?2)")?
            .execute(params![task.id, dep])?;
    }
    tx.commit()?;
    Ok(Ok(()))
}

/// A dependency must name another task of the same session.
fn check_dep(tx: &Transaction<'_>, task: &Task, dep: &str, session: &str) -> Outcome<()> {
    if dep == task.id {
        return Ok(Err(StoreError::Invalid {
            what: format!(
                "task {} (number {}) depends on itself",
                task.id, task.number
            ),
            hint: "A task can depend only on other tasks.",
        }));
    }
    let found = tx
        .prepare_cached("SELECT 1 FROM tasks WHERE id = ?1 AND session_id = ?2")?
        .query_row(params![dep, session], |_| Ok(()))
        .optional()?;
    if found.is_none() {
        return Ok(Err(StoreError::Invalid {
            what: format!(
                "task {} (number {}) depends on {dep}, which is not a stored task of session \
                 {session}",
                task.id, task.number
            ),
            hint: "Save the tasks it depends on first, in the same session.",
        }));
    }
    Ok(Ok(()))
}

fn session_exists(tx: &Transaction<'_>, session: &str, what: &str) -> Outcome<()> {
    let found = tx
        .prepare_cached("SELECT 1 FROM sessions WHERE id = ?1")?
        .query_row(params![session], |_| Ok(()))
        .optional()?;
    Ok(match found {
        Some(()) => Ok(()),
        None => Err(StoreError::NotFound(format!(
            "session {session} is not stored, so {what} was not stored either; start a new \
             session and try again"
        ))),
    })
}

fn other_session(kind: &str, id: &str, session: &str) -> StoreError {
    StoreError::Invalid {
        what: format!("{kind} {id} is stored for another session than {session}"),
        hint: "Give it a new id.",
    }
}

fn load_tasks(conn: &Connection, path: &Path, session: &str) -> Outcome<Vec<Task>> {
    let unreadable = |what: String, detail: String| StoreError::Unreadable {
        path: path.to_path_buf(),
        what,
        detail,
    };
    let mut deps = conn.prepare_cached(
        "SELECT d.depends_on FROM task_deps d LEFT JOIN tasks u ON u.id = d.depends_on \
         WHERE d.task_id = ?1 ORDER BY u.number IS NULL, u.number, d.depends_on",
    )?;
    let mut stmt = conn.prepare_cached(
        "SELECT id, number, title, detail, state, result, created_at, updated_at \
         FROM tasks WHERE session_id = ?1 ORDER BY number",
    )?;
    let mut rows = stmt.query(params![session])?;
    let mut tasks = Vec::new();
    while let Some(r) = rows.next()? {
        let id: String = r.get(0)?;
        let number: i64 = r.get(1)?;
        let what = || format!("task {number} (id {id}) of session {session}");
        let Some(number_u32) = u32::try_from(number).ok().filter(|n| *n >= 1) else {
            return Ok(Err(unreadable(
                what(),
                format!("number {number} is out of range"),
            )));
        };
        let state: String = r.get(4)?;
        let Some(state) = TaskState::parse(&state) else {
            return Ok(Err(unreadable(
                what(),
                format!("unknown task state '{state}'"),
            )));
        };
        let depends_on = deps
            .query_map(params![id], |d| d.get(0))?
            .collect::<rusqlite::Result<Vec<String>>>()?;
        tasks.push(Task {
            number: number_u32,
            title: r.get(2)?,
            detail: r.get(3)?,
            state,
            depends_on,
            result: r.get(5)?,
            created_at: r.get(6)?,
            updated_at: r.get(7)?,
            id,
        });
    }
    Ok(Ok(tasks))
}

fn save_goal(conn: &mut Connection, goal: &Goal, session: &str) -> Outcome<()> {
    let too_large = |field: &str, value: u64| StoreError::Invalid {
        what: format!("goal {}: {field} {value} is too large to store", goal.id),
        hint: "Token counts, budgets and times must stay below 2^63.",
    };
    let budget = match goal.token_budget.map(i64::try_from) {
        None => None,
        Some(Ok(budget)) => Some(budget),
        Some(Err(_)) => {
            return Ok(Err(too_large(
                "token budget",
                goal.token_budget.unwrap_or(0),
            )));
        }
    };
    let Ok(tokens) = i64::try_from(goal.tokens_used) else {
        return Ok(Err(too_large("tokens used", goal.tokens_used)));
    };
    let Ok(time) = i64::try_from(goal.time_used_ms) else {
        return Ok(Err(too_large("time used", goal.time_used_ms)));
    };
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    if let Err(err) = session_exists(&tx, session, &format!("its goal {}", goal.id))? {
        return Ok(Err(err));
    }
    let written = tx
        .prepare_cached(
            "INSERT INTO goals (id, session_id, objective, status, token_budget, tokens_used, \
             time_used_ms, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) \
             ON CONFLICT (id) DO UPDATE SET objective = excluded.objective, \
             status = excluded.status, token_budget = excluded.token_budget, \
             tokens_used = excluded.tokens_used, time_used_ms = excluded.time_used_ms, \
             updated_at = excluded.updated_at WHERE goals.session_id = excluded.session_id",
        )?
        .execute(params![
            goal.id,
            session,
            goal.objective,
            goal.status.as_str(),
            budget,
            tokens,
            time,
            goal.created_at,
            goal.updated_at
        ])?;
    if written == 0 {
        return Ok(Err(other_session("goal", &goal.id, session)));
    }
    tx.commit()?;
    Ok(Ok(()))
}

fn delete_goal(conn: &mut Connection, goal: &str, session: &str) -> rusqlite::Result<bool> {
    let deleted = conn
        .prepare_cached("DELETE FROM goals WHERE id = ?1 AND session_id = ?2")?
        .execute(params![goal, session])?;
    Ok(deleted > 0)
}

fn load_goals(conn: &Connection, path: &Path, session: &str) -> Outcome<Vec<Goal>> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, objective, status, token_budget, tokens_used, time_used_ms, created_at, \
         updated_at FROM goals WHERE session_id = ?1 ORDER BY created_at DESC, rowid DESC",
    )?;
    let mut rows = stmt.query(params![session])?;
    let mut goals = Vec::new();
    while let Some(r) = rows.next()? {
        match goal(r)? {
            Ok(goal) => goals.push(goal),
            Err((id, detail)) => {
                return Ok(Err(StoreError::Unreadable {
                    path: path.to_path_buf(),
                    what: format!("goal {id} of session {session}"),
                    detail,
                }));
            }
        }
    }
    Ok(Ok(goals))
}

/// Reads one goal row; a value that cannot be read gives (id, what is wrong).
fn goal(r: &Row<'_>) -> rusqlite::Result<Result<Goal, (String, String)>> {
    let id: String = r.get(0)?;
    let status: String = r.get(2)?;
    let Some(status) = GoalStatus::parse(&status) else {
        return Ok(Err((id, format!("unknown goal status '{status}'"))));
    };
    let count = |index: usize, name: &str| -> rusqlite::Result<Result<Option<u64>, String>> {
        let value: Option<i64> = r.get(index)?;
        Ok(match value.map(u64::try_from) {
            None => Ok(None),
            Some(Ok(n)) => Ok(Some(n)),
            Some(Err(_)) => Err(format!("{name} {} is negative", value.unwrap_or(0))),
        })
    };
    let (budget, tokens, time) = match (
        count(3, "token budget")?,
        count(4, "tokens used")?,
        count(5, "time used")?,
    ) {
        (Ok(budget), Ok(tokens), Ok(time)) => (budget, tokens, time),
        (Err(detail), _, _) | (_, Err(detail), _) | (_, _, Err(detail)) => {
            return Ok(Err((id, detail)));
        }
    };
    Ok(Ok(Goal {
        objective: r.get(1)?,
        status,
        token_budget: budget,
        tokens_used: tokens.unwrap_or(0),
        time_used_ms: time.unwrap_or(0),
        created_at: r.get(6)?,
        updated_at: r.get(7)?,
        id,
    }))
}
