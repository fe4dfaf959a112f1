//! Sessions and their messages: creating a session, appending each message as it happens
//! (so a killed process loses at most the reply being streamed), listing sessions of a
//! workspace, finding one by id, prefix or "latest", and loading its history. Messages are
//! stored as the caller's JSON; this module does not know their shape.

use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;

use crate::{Store, StoreError};

/// A session as listed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionRow {
    pub id: String,
    pub workspace: String,
    pub created_at: i64,
    pub updated_at: i64,
    pub title: Option<String>,
    pub provider: Option<String>,
    pub model: Option<String>,
    pub messages: i64,
}

/// What a new session records.
#[derive(Debug, Clone)]
pub struct NewSession {
    pub id: String,
    pub workspace: String,
    pub provider: Option<String>,
    pub model: Option<String>,
}

/// How a session is named on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionRef {
    /// The most recently updated session in this workspace.
    Latest,
    /// A full id or a unique prefix of one.
    Id(String),
}

impl Store {
    /// Records a new session with its first thread (which shares the session's id).
    pub async fn create_session(&self, s: NewSession) -> Result<(), StoreError> {
        let now = crate::now_ms();
        self.call(move |conn| {
            let tx = conn.unchecked_transaction()?;
            tx.execute(
                "INSERT INTO sessions (id, workspace, created_at, updated_at, provider, model) \
                 VALUES (?1, ?2, ?3, ?3, ?4, ?5)",
                params![s.id, s.workspace, now, s.provider, s.model],
            )?;
            tx.execute(
                "INSERT INTO threads (id, session_id, created_at) VALUES (?1, ?1, ?2)",
                params![s.id, now],
            )?;
            tx.commit()
        })
        .await
    }

    /// Appends message `seq` of `thread` (committed before this returns). The first user
    /// message becomes the session's title.
    pub async fn append_message(
        &self,
        thread: &str,
        seq: i64,
        body: String,
        title: Option<String>,
    ) -> Result<(), StoreError> {
        let thread = thread.to_owned();
        let now = crate::now_ms();
        self.call(move |conn| {
            let tx = conn.unchecked_transaction()?;
            tx.prepare_cached(
                "INSERT INTO messages (thread_id, seq, body, created_at) VALUES (?1, ?2, ?3, ?4)",
            )?
            .execute(params![thread, seq, body, now])?;
            tx.prepare_cached(
                "UPDATE sessions SET updated_at = ?2, title = COALESCE(title, ?3) \
                 WHERE id = (SELECT session_id FROM threads WHERE id = ?1)",
            )?
            .execute(params![thread, now, title])?;
            tx.commit()
        })
        .await
    }

    /// Sessions of `workspace`, newest first (at most `limit`).
    pub fn sessions_blocking(
        &self,
        workspace: &str,
        limit: u32,
    ) -> Result<Vec<SessionRow>, StoreError> {
        let workspace = workspace.to_owned();
        self.call_blocking(move |conn| {
            let mut stmt = conn.prepare(&format!(
                "{SELECT} WHERE s.workspace = ?1 ORDER BY s.updated_at DESC, s.rowid DESC LIMIT ?2"
            ))?;
            let rows = stmt.query_map(params![workspace, limit], row)?;
            rows.collect()
        })
    }

    /// Finds a session: `latest` in `workspace`, or an id or unique id prefix (any workspace).
    pub fn find_session_blocking(
        &self,
        workspace: &str,
        which: &SessionRef,
    ) -> Result<SessionRow, StoreError> {
        let workspace = workspace.to_owned();
        let which = which.clone();
        self.call_blocking(move |conn| find(conn, &workspace, &which))?
    }

    /// The messages of `thread`, in order, as stored JSON.
    pub fn messages_blocking(&self, thread: &str) -> Result<Vec<String>, StoreError> {
        let thread = thread.to_owned();
        self.call_blocking(move |conn| {
            let mut stmt =
                conn.prepare_cached("SELECT body FROM messages WHERE thread_id = ?1 ORDER BY seq")?;
            let rows = stmt.query_map(params![thread], |r| r.get(0))?;
            rows.collect()
        })
    }
}

impl Store {
    /// Copies session `source` into a new session `id` that records its parent and fork
    /// point (the number of messages copied). The source is unchanged.
    pub fn fork_session_blocking(
        &self,
        source: &str,
        id: &str,
        label: Option<String>,
    ) -> Result<i64, StoreError> {
        let source = source.to_owned();
        let id = id.to_owned();
        let now = crate::now_ms();
        self.call_blocking(move |conn| {
            let tx = conn.unchecked_transaction()?;
            let copied: i64 = tx.query_row(
                "SELECT COUNT(*) FROM messages WHERE thread_id = ?1",
                params![source],
                |r| r.get(0),
            )?;
            tx.execute(
                "INSERT INTO sessions (id, workspace, created_at, updated_at, title, provider, \
                 model, parent_session, fork_point, label) \
                 SELECT ?2, workspace, ?3, ?3, title, provider, model, id, ?4, ?5 \
                 FROM sessions WHERE id = ?1",
                params![source, id, now, copied, label],
            )?;
            tx.execute(
                "INSERT INTO threads (id, session_id, label, created_at) VALUES (?1, ?1, ?2, ?3)",
                params![id, label, now],
            )?;
            tx.execute(
                "INSERT INTO messages (thread_id, seq, body, created_at) \
                 SELECT ?2, seq, body, created_at FROM messages WHERE thread_id = ?1",
                params![source, id],
            )?;
            tx.commit()?;
            Ok(copied)
        })
    }
}

const SELECT: &str = "SELECT s.id, s.workspace, s.created_at, s.updated_at, s.title, \
     s.provider, s.model, (SELECT COUNT(*) FROM messages m WHERE m.thread_id = s.id) \
     FROM sessions s";

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<SessionRow> {
    Ok(SessionRow {
        id: r.get(0)?,
        workspace: r.get(1)?,
        created_at: r.get(2)?,
        updated_at: r.get(3)?,
        title: r.get(4)?,
        provider: r.get(5)?,
        model: r.get(6)?,
        messages: r.get(7)?,
    })
}

fn find(
    conn: &Connection,
    workspace: &str,
    which: &SessionRef,
) -> rusqlite::Result<Result<SessionRow, StoreError>> {
    match which {
        SessionRef::Latest => {
            let found = conn
                .query_row(
                    &format!(
                        "{SELECT} WHERE s.workspace = ?1 ORDER BY s.updated_at DESC, \
                         s.rowid DESC LIMIT 1"
                    ),
                    params![workspace],
                    row,
                )
                .optional()?;
            Ok(found.ok_or_else(|| {
                StoreError::NotFound(format!(
                    "no saved session in {workspace}; `atto sessions` lists them"
                ))
            }))
        }
        SessionRef::Id(prefix) => {
            let pattern = format!("{}%", prefix.replace(['%', '_'], ""));
            let mut stmt = conn.prepare(&format!("{SELECT} WHERE s.id LIKE ?1 LIMIT 2"))?;
            let rows: Vec<SessionRow> = stmt
                .query_map(params![pattern], row)?
                .collect::<rusqlite::Result<_>>()?;
            Ok(match rows.len() {
                1 => rows
                    .into_iter()
                    .next()
                    .ok_or_else(|| unreachable_none(prefix)),
                0 => Err(StoreError::NotFound(format!(
                    "no session matches '{prefix}'; `atto sessions` lists them"
                ))),
                _ => Err(StoreError::NotFound(format!(
                    "'{prefix}' matches more than one session; give more of the id"
                ))),
            })
        }
    }
}

/// A vector of length one always yields its item; this keeps the code free of unwrap.
fn unreachable_none(prefix: &str) -> StoreError {
    StoreError::NotFound(format!("no session matches '{prefix}'"))
}
