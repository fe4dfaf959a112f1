//! Plan mode's pending plans (`pending_plans`, `proposed_changes`): storing a plan and each
//! change as it is proposed, recording the user's decisions, and reading back a session's
//! open plan or all of its plans. It stores what it is given: which calls are queued, how a
//! change is applied and what a plan's status becomes after a decision are the engine's to
//! decide.
//!
//! Every write is one transaction, committed before the call returns, so a change the model
//! was told is queued survives atto being killed. Like the session's messages it is written
//! with `synchronous=NORMAL` (see `open`): a power loss may drop the last commits, but only
//! the last ones, so the plan never runs ahead of the conversation that mentions it.

use std::path::Path;

use atto_protocol::{ChangeStatus, PendingPlan, PlanStatus, ProposedChange};
use rusqlite::{Connection, OptionalExtension, Row, TransactionBehavior, params};

use crate::{Store, StoreError};

/// A decision on one change: its id, its new status and what happened, if anything did.
type ChangeUpdate = (String, ChangeStatus, Option<String>);

impl Store {
    /// Stores a new plan of a session together with the changes it already holds, in one
    /// transaction. The session must be stored already.
    pub async fn create_plan(&self, plan: &PendingPlan) -> Result<(), StoreError> {
        let plan = plan.clone();
        self.call(move |conn| create(conn, &plan)).await?
    }

    /// [`Store::create_plan`] for code without an async runtime.
    pub fn create_plan_blocking(&self, plan: &PendingPlan) -> Result<(), StoreError> {
        let plan = plan.clone();
        self.call_blocking(move |conn| create(conn, &plan))?
    }

    /// Appends one proposed change to plan `plan_id` and sets the plan's `updated_at` to the
    /// change's `proposed_at`. Committed before this returns.
    pub async fn add_change(
        &self,
        plan_id: &str,
        change: &ProposedChange,
    ) -> Result<(), StoreError> {
        let (plan_id, change) = (plan_id.to_owned(), change.clone());
        self.call(move |conn| add(conn, &plan_id, &change)).await?
    }

    /// [`Store::add_change`] for code without an async runtime.
    pub fn add_change_blocking(
        &self,
        plan_id: &str,
        change: &ProposedChange,
    ) -> Result<(), StoreError> {
        let (plan_id, change) = (plan_id.to_owned(), change.clone());
        self.call_blocking(move |conn| add(conn, &plan_id, &change))?
    }

    /// Records decisions: each listed change (by id) gets its status and result, and the plan
    /// its `status` and `updated_at`, all in one transaction. If the plan or any listed change
    /// of it is missing, nothing is recorded.
    pub async fn update_plan(
        &self,
        plan_id: &str,
        status: PlanStatus,
        changes: &[(String, ChangeStatus, Option<String>)],
        updated_at: i64,
    ) -> Result<(), StoreError> {
        let (plan_id, changes) = (plan_id.to_owned(), changes.to_vec());
        self.call(move |conn| update(conn, &plan_id, status, &changes, updated_at))
            .await?
    }

    /// [`Store::update_plan`] for code without an async runtime.
    pub fn update_plan_blocking(
        &self,
        plan_id: &str,
        status: PlanStatus,
        changes: &[(String, ChangeStatus, Option<String>)],
        updated_at: i64,
    ) -> Result<(), StoreError> {
        let (plan_id, changes) = (plan_id.to_owned(), changes.to_vec());
        self.call_blocking(move |conn| update(conn, &plan_id, status, &changes, updated_at))?
    }

    /// Records that the model was told what became of these changes.
    pub async fn mark_reported(&self, change_ids: &[String]) -> Result<(), StoreError> {
        let ids = change_ids.to_vec();
        self.call(move |conn| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            {
                let mut stmt =
                    tx.prepare_cached("UPDATE proposed_changes SET reported = 1 WHERE id = ?1")?;
                for id in &ids {
                    stmt.execute(params![id])?;
                }
            }
            tx.commit()
        })
        .await
    }

    /// Ids of the session's decided changes the model has not been told about yet (a
    /// decision made just before atto exited).
    pub async fn unreported_changes(&self, session_id: &str) -> Result<Vec<String>, StoreError> {
        let session = session_id.to_owned();
        self.call(move |conn| {
            conn.prepare_cached(
                "SELECT c.id FROM proposed_changes c JOIN pending_plans p ON p.id = c.plan_id \
                 WHERE p.session_id = ?1 AND c.status <> 'pending' AND c.reported = 0 \
                 ORDER BY p.created_at, c.ord",
            )?
            .query_map(params![session], |r| r.get(0))?
            .collect()
        })
        .await
    }

    /// Records the file state a change is now planned against (after the user saw it
    /// conflict with the file on disk).
    pub async fn rebase_change(&self, change_id: &str, base_hash: &str) -> Result<(), StoreError> {
        let (id, base) = (change_id.to_owned(), base_hash.to_owned());
        self.call(move |conn| {
            conn.prepare_cached("UPDATE proposed_changes SET base_hash = ?2 WHERE id = ?1")?
                .execute(rusqlite::params![id, base])?;
            Ok(())
        })
        .await
    }

    /// The session's newest plan that still waits for decisions (`pending` or
    /// `partially_approved`), with all its changes in order, whatever their status.
    pub async fn open_plan(&self, session_id: &str) -> Result<Option<PendingPlan>, StoreError> {
        let (session_id, path) = (session_id.to_owned(), self.path().to_path_buf());
        self.call(move |conn| open(conn, &path, &session_id))
            .await?
    }

    /// [`Store::open_plan`] for code without an async runtime.
    pub fn open_plan_blocking(&self, session_id: &str) -> Result<Option<PendingPlan>, StoreError> {
        let (session_id, path) = (session_id.to_owned(), self.path().to_path_buf());
        self.call_blocking(move |conn| open(conn, &path, &session_id))?
    }

    /// Every plan of the session, newest first, each with its changes in order.
    pub async fn plans(&self, session_id: &str) -> Result<Vec<PendingPlan>, StoreError> {
        let (session_id, path) = (session_id.to_owned(), self.path().to_path_buf());
        self.call(move |conn| all(conn, &path, &session_id)).await?
    }

    /// [`Store::plans`] for code without an async runtime.
    pub fn plans_blocking(&self, session_id: &str) -> Result<Vec<PendingPlan>, StoreError> {
        let (session_id, path) = (session_id.to_owned(), self.path().to_path_buf());
        self.call_blocking(move |conn| all(conn, &path, &session_id))?
    }
}

/// The outer result is SQLite's; the inner one a refusal this module explains itself.
type Outcome<T> = rusqlite::Result<Result<T, StoreError>>;

fn create(conn: &mut Connection, plan: &PendingPlan) -> Outcome<()> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let session = tx
        .prepare_cached("SELECT 1 FROM sessions WHERE id = ?1")?
        .query_row(params![plan.session_id], |_| Ok(()))
        .optional()?;
    if session.is_none() {
        return Ok(Err(StoreError::NotFound(format!(
            "session {} is not stored, so its plan {} was not stored either; start a new \
             session and plan again",
            plan.session_id, plan.id
        ))));
    }
    tx.prepare_cached(
        "INSERT INTO pending_plans \
         (id, session_id, task, exploration_summary, status, created_at, updated_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?
    .execute(params![
        plan.id,
        plan.session_id,
        plan.task,
        plan.exploration_summary,
        plan.status.as_str(),
        plan.created_at,
        plan.updated_at
    ])?;
    for change in &plan.proposed_changes {
        insert_change(&tx, &plan.id, change)?;
    }
    tx.commit()?;
    Ok(Ok(()))
}

fn add(conn: &mut Connection, plan_id: &str, change: &ProposedChange) -> Outcome<()> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let touched = tx
        .prepare_cached("UPDATE pending_plans SET updated_at = ?2 WHERE id = ?1")?
        .execute(params![plan_id, change.proposed_at])?;
    if touched == 0 {
        return Ok(Err(no_plan(plan_id, "the change was not queued")));
    }
    insert_change(&tx, plan_id, change)?;
    tx.commit()?;
    Ok(Ok(()))
}

fn insert_change(conn: &Connection, plan_id: &str, c: &ProposedChange) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO proposed_changes (id, plan_id, ord, tool, args, reason, proposed_at, \
         tool_call_id, path, base_hash, status, result) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
    )?
    .execute(params![
        c.id,
        plan_id,
        c.order,
        c.tool,
        // `Value`'s `Display` is its compact JSON and cannot fail.
        c.args.to_string(),
        c.reason,
        c.proposed_at,
        c.tool_call_id,
        c.path,
        c.base_hash,
        c.status.as_str(),
        c.result
    ])
    .map(drop)
}

fn update(
    conn: &mut Connection,
    plan_id: &str,
    status: PlanStatus,
    changes: &[ChangeUpdate],
    updated_at: i64,
) -> Outcome<()> {
    // Returning early drops the transaction, which rolls back what was already updated.
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let touched = tx
        .prepare_cached("UPDATE pending_plans SET status = ?2, updated_at = ?3 WHERE id = ?1")?
        .execute(params![plan_id, status.as_str(), updated_at])?;
    if touched == 0 {
        return Ok(Err(no_plan(plan_id, "no decision was recorded")));
    }
    {
        let mut stmt = tx.prepare_cached(
            "UPDATE proposed_changes SET status = ?3, result = ?4, reported = 0 \
             WHERE id = ?1 AND plan_id = ?2",
        )?;
        for (id, change_status, result) in changes {
            if stmt.execute(params![id, plan_id, change_status.as_str(), result])? == 0 {
                return Ok(Err(StoreError::NotFound(format!(
                    "plan {plan_id} has no change {id}; no decision was recorded for this \
                     plan. Reload the plan and decide again"
                ))));
            }
        }
    }
    tx.commit()?;
    Ok(Ok(()))
}

fn no_plan(plan_id: &str, not_done: &str) -> StoreError {
    StoreError::NotFound(format!(
        "no plan {plan_id} is stored; {not_done}. Start a new plan by asking again in plan mode"
    ))
}

/// A plan row before its changes are loaded and its status is checked.
struct PlanRow {
    id: String,
    session_id: String,
    task: String,
    exploration_summary: String,
    status: String,
    created_at: i64,
    updated_at: i64,
}

const PLAN_COLUMNS: &str =
    "id, session_id, task, exploration_summary, status, created_at, updated_at";

fn plan_row(r: &Row<'_>) -> rusqlite::Result<PlanRow> {
    Ok(PlanRow {
        id: r.get(0)?,
        session_id: r.get(1)?,
        task: r.get(2)?,
        exploration_summary: r.get(3)?,
        status: r.get(4)?,
        created_at: r.get(5)?,
        updated_at: r.get(6)?,
    })
}

fn open(conn: &Connection, path: &Path, session_id: &str) -> Outcome<Option<PendingPlan>> {
    // Anything not known to be decided counts: a plan whose status cannot be read is
    // reported rather than passed over, since it may still hold undecided changes.
    let row = conn
        .prepare_cached(&format!(
            "SELECT {PLAN_COLUMNS} FROM pending_plans \
             WHERE session_id = ?1 AND status NOT IN ('approved', 'rejected') \
             ORDER BY created_at DESC, rowid DESC LIMIT 1"
        ))?
        .query_row(params![session_id], plan_row)
        .optional()?;
    match row {
        Some(row) => Ok(load(conn, path, row)?.map(Some)),
        None => Ok(Ok(None)),
    }
}

fn all(conn: &Connection, path: &Path, session_id: &str) -> Outcome<Vec<PendingPlan>> {
    let rows = conn
        .prepare_cached(&format!(
            "SELECT {PLAN_COLUMNS} FROM pending_plans WHERE session_id = ?1 \
             ORDER BY created_at DESC, rowid DESC"
        ))?
        .query_map(params![session_id], plan_row)?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let mut plans = Vec::with_capacity(rows.len());
    for row in rows {
        match load(conn, path, row)? {
            Ok(plan) => plans.push(plan),
            Err(err) => return Ok(Err(err)),
        }
    }
    Ok(Ok(plans))
}

/// Checks a plan row and loads its changes in order.
fn load(conn: &Connection, path: &Path, row: PlanRow) -> Outcome<PendingPlan> {
    let unreadable = |what: String, detail: String| StoreError::Unreadable {
        path: path.to_path_buf(),
        what,
        detail,
    };
    let Some(status) = PlanStatus::parse(&row.status) else {
        return Ok(Err(unreadable(
            format!("plan {}", row.id),
            format!("unknown plan status '{}'", row.status),
        )));
    };
    let mut stmt = conn.prepare_cached(
        "SELECT id, ord, tool, args, reason, proposed_at, tool_call_id, path, base_hash, \
         status, result FROM proposed_changes WHERE plan_id = ?1 ORDER BY ord",
    )?;
    let mut rows = stmt.query(params![row.id])?;
    let mut changes = Vec::new();
    while let Some(r) = rows.next()? {
        match change(r)? {
            Ok(change) => changes.push(change),
            Err((ord, id, detail)) => {
                return Ok(Err(unreadable(
                    format!("change {ord} (id {id}) of plan {}", row.id),
                    detail,
                )));
            }
        }
    }
    Ok(Ok(PendingPlan {
        id: row.id,
        task: row.task,
        created_at: row.created_at,
        updated_at: row.updated_at,
        proposed_changes: changes,
        exploration_summary: row.exploration_summary,
        status,
        session_id: row.session_id,
    }))
}

/// Reads one change row; a value that cannot be read gives (ord, id, what is wrong).
fn change(r: &Row<'_>) -> rusqlite::Result<Result<ProposedChange, (i64, String, String)>> {
    let id: String = r.get(0)?;
    let ord: i64 = r.get(1)?;
    let Ok(order) = u32::try_from(ord) else {
        return Ok(Err((ord, id, format!("position {ord} is out of range"))));
    };
    let args: String = r.get(3)?;
    let args = match serde_json::from_str(&args) {
        Ok(args) => args,
        Err(e) => return Ok(Err((ord, id, format!("its arguments are not JSON: {e}")))),
    };
    let status: String = r.get(9)?;
    let Some(status) = ChangeStatus::parse(&status) else {
        return Ok(Err((ord, id, format!("unknown change status '{status}'"))));
    };
    Ok(Ok(ProposedChange {
        id,
        tool: r.get(2)?,
        args,
        reason: r.get(4)?,
        order,
        proposed_at: r.get(5)?,
        tool_call_id: r.get(6)?,
        path: r.get(7)?,
        base_hash: r.get(8)?,
        status,
        result: r.get(10)?,
    }))
}
