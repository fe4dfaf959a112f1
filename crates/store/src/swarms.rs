//! Swarm runs (`swarms`): saving a run's state after every change and reading it back by id,
//! by a unique prefix of one, or as a workspace's latest, so `atto swarm --resume` and
//! `atto swarm status` work across restarts. It stores the JSON text it is given and reads
//! none of it (atto-swarm owns the state's shape); it only checks that the text is JSON.

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use crate::ids::{IdKind, resolve};
use crate::{Store, StoreError};

/// Fewest characters of an id that name a swarm (the whole id always does).
pub const SWARM_PREFIX_MIN: usize = 4;

/// Characters of a goal shown beside a candidate in an ambiguity message.
const GOAL_CHARS: usize = 40;

/// A stored swarm run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SwarmRow {
    /// Its id.
    pub id: String,
    /// The workspace it works in.
    pub workspace: String,
    /// What the user asked.
    pub goal: String,
    /// Where it stands, in the swarm's words.
    pub status: String,
    /// The swarm's whole state as JSON, as last saved.
    pub state: String,
    /// Unix ms it was first saved.
    pub created_at: i64,
    /// Unix ms it was last saved.
    pub updated_at: i64,
}

impl Store {
    /// Stores swarm `id`, or replaces its goal, status and state if it is stored already
    /// (its `created_at` stays as first saved). `state_json` must be JSON; a swarm stays in
    /// the workspace it was first saved for.
    pub async fn save_swarm(
        &self,
        id: &str,
        workspace: &str,
        goal: &str,
        status: &str,
        state_json: &str,
    ) -> Result<(), StoreError> {
        if let Err(err) = serde_json::from_str::<serde::de::IgnoredAny>(state_json) {
            return Err(StoreError::Invalid {
                what: format!("the state of swarm {id} is not JSON ({err})"),
                hint: "This is a bug in atto; please report it.",
            });
        }
        let row = SwarmRow {
            id: id.to_owned(),
            workspace: workspace.to_owned(),
            goal: goal.to_owned(),
            status: status.to_owned(),
            state: state_json.to_owned(),
            created_at: 0,
            updated_at: crate::now_ms(),
        };
        self.call(move |conn| save(conn, &row)).await?
    }

    /// The swarm with this id, or the one whose id starts with `id_or_prefix` (at least
    /// [`SWARM_PREFIX_MIN`] characters; ids are matched as typed, then in lower case);
    /// `None` when no swarm matches. Fails with [`StoreError::NotFound`] when the prefix is
    /// too short or fits several swarms; the message says which.
    pub async fn swarm(&self, id_or_prefix: &str) -> Result<Option<SwarmRow>, StoreError> {
        let typed = id_or_prefix.trim().to_owned();
        self.call(move |conn| find(conn, &typed)).await?
    }

    /// The most recently saved swarm of `workspace`, if any.
    pub async fn latest_swarm(&self, workspace: &str) -> Result<Option<SwarmRow>, StoreError> {
        Ok(self.list_swarms(workspace, 1).await?.pop())
    }

    /// Swarms of `workspace`, most recently saved first (at most `limit`).
    pub async fn list_swarms(
        &self,
        workspace: &str,
        limit: usize,
    ) -> Result<Vec<SwarmRow>, StoreError> {
        let workspace = workspace.to_owned();
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.call(move |conn| {
            let mut stmt = conn.prepare_cached(&format!(
                "{SELECT} WHERE workspace = ?1 ORDER BY updated_at DESC, rowid DESC LIMIT ?2"
            ))?;
            let rows = stmt.query_map(params![workspace, limit], row)?;
            rows.collect()
        })
        .await
    }
}

const SELECT: &str =
    "SELECT id, workspace, goal, status, state, created_at, updated_at FROM swarms";

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<SwarmRow> {
    Ok(SwarmRow {
        id: r.get(0)?,
        workspace: r.get(1)?,
        goal: r.get(2)?,
        status: r.get(3)?,
        state: r.get(4)?,
        created_at: r.get(5)?,
        updated_at: r.get(6)?,
    })
}

fn save(conn: &mut Connection, s: &SwarmRow) -> rusqlite::Result<Result<(), StoreError>> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let changed = tx.execute(
        "INSERT INTO swarms (id, workspace, goal, status, state, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)
         ON CONFLICT (id) DO UPDATE SET goal = ?3, status = ?4, state = ?5, updated_at = ?6
         WHERE workspace = ?2",
        params![s.id, s.workspace, s.goal, s.status, s.state, s.updated_at],
    )?;
    if changed == 0 {
        return Ok(Err(StoreError::Invalid {
            what: format!(
                "swarm {} is stored for another workspace than {}",
                s.id, s.workspace
            ),
            hint: "Give it a new id.",
        }));
    }
    tx.commit()?;
    Ok(Ok(()))
}

fn find(conn: &Connection, typed: &str) -> rusqlite::Result<Result<Option<SwarmRow>, StoreError>> {
    let by_id = |id: &str| {
        conn.prepare_cached(&format!("{SELECT} WHERE id = ?1"))?
            .query_row(params![id], row)
            .optional()
    };
    if let Some(exact) = by_id(typed)? {
        return Ok(Ok(Some(exact)));
    }
    if typed.chars().count() < SWARM_PREFIX_MIN {
        return Ok(Err(StoreError::NotFound(format!(
            "'{typed}' is too short to name a swarm; nothing was opened. Give at least \
             {SWARM_PREFIX_MIN} characters of its id."
        ))));
    }
    if !any_starting_with(conn, typed)? && !any_starting_with(conn, &typed.to_lowercase())? {
        return Ok(Ok(None));
    }
    let describe = |id: &str| goal_of(conn, id);
    match resolve(conn, IdKind::Swarm, typed, describe)? {
        Ok(id) => Ok(Ok(by_id(&id)?)),
        Err(err) => Ok(Err(err)),
    }
}

/// Whether some swarm id starts with `prefix`: the first id not below it does, if any.
fn any_starting_with(conn: &Connection, prefix: &str) -> rusqlite::Result<bool> {
    let first: Option<String> = conn
        .prepare_cached("SELECT id FROM swarms WHERE id >= ?1 ORDER BY id LIMIT 1")?
        .query_row(params![prefix], |r| r.get(0))
        .optional()?;
    Ok(first.is_some_and(|id| id.starts_with(prefix)))
}

/// A swarm's goal, shortened, for telling swarms apart in a message.
fn goal_of(conn: &Connection, id: &str) -> Option<String> {
    let goal: String = conn
        .query_row("SELECT goal FROM swarms WHERE id = ?1", params![id], |r| {
            r.get(0)
        })
        .ok()?;
    let first = goal.lines().next().unwrap_or("").trim();
    if first.chars().count() > GOAL_CHARS {
        let cut: String = first.chars().take(GOAL_CHARS - 1).collect();
        Some(format!("\"{cut}…\""))
    } else {
        Some(format!("\"{first}\""))
    }
}

#[cfg(test)]
#[path = "swarms_tests.rs"]
mod tests;
