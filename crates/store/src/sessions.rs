//! Sessions and their messages: creating a session, appending each message as it happens
//! (so a killed process loses at most the reply being streamed), listing sessions of a
//! workspace, finding one by id, unique prefix (see `ids`) or "latest", loading its history,
//! and forking it (its modes and label are set in `session_settings`). Messages are stored
//! as the caller's JSON; all this module knows of their shape is that a model reply has
//! `"type": "assistant"` (`atto_protocol::Message`), which tells a session the model never
//! answered from one it did.

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use serde::Serialize;

use crate::ids::{IdKind, resolve, short_id};
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
    /// The thread a resume continues.
    pub current_thread: String,
    /// The shortest prefix of `id`, 8 characters at least, that no other session's id
    /// starts with: what to show and what `atto -r` accepts (see [`crate::short_form`]).
    pub short_id: String,
    /// The session this one was forked from, if it was.
    pub parent_session: Option<String>,
    /// How many of the parent's messages the fork copied.
    pub fork_point: Option<i64>,
    /// The name given to it (by a fork, or [`Store::set_session_label`]).
    pub label: Option<String>,
    /// The agent mode it last ran in (`None`: not recorded).
    pub agent_mode: Option<String>,
    /// The permission mode it last ran in (`None`: not recorded).
    pub permission_mode: Option<String>,
    /// The session that spawned it, for a subagent.
    pub spawned_by: Option<String>,
    /// The model `/model` pinned in it (`auto` for routing).
    pub pinned_model: Option<String>,
    /// Whether the model ever replied in it (in its first or its current thread); a session
    /// that never reached the model has only the user's messages.
    pub answered: bool,
}

/// What a new session records.
#[derive(Debug, Clone)]
pub struct NewSession {
    pub id: String,
    pub workspace: String,
    pub provider: Option<String>,
    pub model: Option<String>,
    /// The session that spawned it, for a subagent.
    pub spawned_by: Option<String>,
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
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            tx.execute(
                "INSERT INTO sessions (id, workspace, created_at, updated_at, provider, model, \
                 spawned_by) VALUES (?1, ?2, ?3, ?3, ?4, ?5, ?6)",
                params![s.id, s.workspace, now, s.provider, s.model, s.spawned_by],
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
        self.append_message_at(thread, seq, body, title, None).await
    }

    /// [`Store::append_message`] for a message first recorded at `recorded_at` (Unix
    /// milliseconds; `None` is now): a compacted version of a thread keeps the times of the
    /// messages it copies, which `/rewind` uses to find the files as they were before a prompt.
    pub async fn append_message_at(
        &self,
        thread: &str,
        seq: i64,
        body: String,
        title: Option<String>,
        recorded_at: Option<i64>,
    ) -> Result<(), StoreError> {
        let thread = thread.to_owned();
        let now = crate::now_ms();
        let at = recorded_at.unwrap_or(now);
        self.call(move |conn| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            tx.prepare_cached(
                "INSERT INTO messages (thread_id, seq, body, created_at) VALUES (?1, ?2, ?3, ?4)",
            )?
            .execute(params![thread, seq, body, at])?;
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
            let rows = stmt
                .query_map(params![workspace, limit], row)?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            rows.into_iter().map(|r| with_short_id(conn, r)).collect()
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
    /// point (the number of messages copied) and keeps its modes. The source is unchanged.
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
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let current: String = tx.query_row(
                "SELECT COALESCE(current_thread, id) FROM sessions WHERE id = ?1",
                params![source],
                |r| r.get(0),
            )?;
            let bodies = history(&tx, &current)?;
            let copied = i64::try_from(bodies.len()).unwrap_or(i64::MAX);
            tx.execute(
                "INSERT INTO sessions (id, workspace, created_at, updated_at, title, provider, \
                 model, parent_session, fork_point, label, agent_mode, permission_mode) \
                 SELECT ?2, workspace, ?3, ?3, title, provider, model, id, ?4, ?5, agent_mode, \
                 permission_mode FROM sessions WHERE id = ?1",
                params![source, id, now, copied, label],
            )?;
            tx.execute(
                "INSERT INTO threads (id, session_id, label, created_at) VALUES (?1, ?1, ?2, ?3)",
                params![id, label, now],
            )?;
            let mut insert = tx.prepare_cached(
                "INSERT INTO messages (thread_id, seq, body, created_at) VALUES (?1, ?2, ?3, ?4)",
            )?;
            for (n, body) in bodies.iter().enumerate() {
                let seq = i64::try_from(n + 1).unwrap_or(i64::MAX);
                insert.execute(params![id, seq, body, now])?;
            }
            drop(insert);
            tx.commit()?;
            Ok(copied)
        })
    }
}

const SELECT: &str = "SELECT s.id, s.workspace, s.created_at, s.updated_at, s.title, \
     s.provider, s.model, (SELECT COUNT(*) FROM messages m WHERE m.thread_id = s.id), \
     COALESCE(s.current_thread, s.id), s.parent_session, s.fork_point, s.label, s.agent_mode, \
     s.permission_mode, EXISTS (SELECT 1 FROM messages m \
         WHERE m.thread_id IN (s.id, COALESCE(s.current_thread, s.id)) \
         AND CASE WHEN json_valid(m.body) THEN json_extract(m.body, '$.type') = 'assistant' \
             ELSE 0 END), s.spawned_by, s.pinned_model \
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
        current_thread: r.get(8)?,
        short_id: String::new(),
        parent_session: r.get(9)?,
        fork_point: r.get(10)?,
        label: r.get(11)?,
        agent_mode: r.get(12)?,
        permission_mode: r.get(13)?,
        answered: r.get(14)?,
        spawned_by: r.get(15)?,
        pinned_model: r.get(16)?,
    })
}

fn with_short_id(conn: &Connection, mut row: SessionRow) -> rusqlite::Result<SessionRow> {
    row.short_id = short_id(conn, IdKind::Session, &row.id)?;
    Ok(row)
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
                        "{SELECT} WHERE s.workspace = ?1 AND s.spawned_by IS NULL \
                         ORDER BY s.updated_at DESC, s.rowid DESC LIMIT 1"
                    ),
                    params![workspace],
                    row,
                )
                .optional()?;
            match found {
                Some(found) => Ok(Ok(with_short_id(conn, found)?)),
                None => Ok(Err(StoreError::NotFound(format!(
                    "no saved session in {workspace}; `atto sessions` lists them"
                )))),
            }
        }
        SessionRef::Id(prefix) => {
            let describe = |id: &str| title_of(conn, id);
            let id = match resolve(conn, IdKind::Session, prefix, describe)? {
                Ok(id) => id,
                Err(err) => return Ok(Err(err)),
            };
            let found = conn.query_row(&format!("{SELECT} WHERE s.id = ?1"), params![id], row)?;
            Ok(Ok(with_short_id(conn, found)?))
        }
    }
}

/// A session's title, for telling sessions apart in a message; `None` if it has none or
/// cannot be read.
fn title_of(conn: &Connection, id: &str) -> Option<String> {
    conn.query_row(
        "SELECT title FROM sessions WHERE id = ?1",
        params![id],
        |r| r.get::<_, Option<String>>(0),
    )
    .ok()
    .flatten()
    .map(|t| format!("\"{t}\""))
}

/// A thread of a session, as `/threads` shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ThreadRow {
    pub id: String,
    pub parent: Option<String>,
    /// The last parent message this thread shares.
    pub fork_seq: Option<i64>,
    pub label: Option<String>,
    pub created_at: i64,
    /// Messages in the thread's history: shared ones plus its own.
    pub messages: i64,
    /// The thread this one is a compacted version of (its messages stay there).
    pub replaces: Option<String>,
}

/// Makes `thread` the current thread of `session`.
fn make_current(conn: &Connection, session: &str, thread: &str) -> rusqlite::Result<()> {
    conn.execute(
        "UPDATE sessions SET current_thread = ?2 WHERE id = ?1",
        params![session, thread],
    )
    .map(drop)
}

impl Store {
    /// Creates thread `id` branching from `parent` after its message `fork_seq`, and makes it
    /// the session's current thread.
    pub async fn create_thread(
        &self,
        session: &str,
        id: &str,
        parent: &str,
        fork_seq: i64,
        label: Option<String>,
    ) -> Result<(), StoreError> {
        let (session, id, parent) = (session.to_owned(), id.to_owned(), parent.to_owned());
        let now = crate::now_ms();
        self.call(move |conn| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            tx.execute(
                "INSERT INTO threads (id, session_id, parent_thread, fork_seq, label, created_at) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![id, session, parent, fork_seq, label, now],
            )?;
            make_current(&tx, &session, &id)?;
            tx.commit()
        })
        .await
    }

    /// Creates thread `id` as a new version of `replaces` (a compacted conversation): it
    /// shares none of its messages, which stay as they are. Makes it the session's current
    /// thread.
    pub async fn create_thread_version(
        &self,
        session: &str,
        id: &str,
        replaces: &str,
        label: Option<String>,
    ) -> Result<(), StoreError> {
        let (session, id, replaces) = (session.to_owned(), id.to_owned(), replaces.to_owned());
        let now = crate::now_ms();
        self.call(move |conn| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            tx.execute(
                "INSERT INTO threads (id, session_id, replaces, label, created_at) \
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![id, session, replaces, label, now],
            )?;
            make_current(&tx, &session, &id)?;
            tx.commit()
        })
        .await
    }

    /// Creates thread `id` as a new version of `replaces` that keeps its first `keep`
    /// messages (shared, not copied) and none after: a conversation rewound to before a
    /// prompt. Going back from it returns to `replaces` whole. Makes it current.
    pub async fn create_rewound_thread(
        &self,
        session: &str,
        id: &str,
        replaces: &str,
        keep: i64,
        label: Option<String>,
    ) -> Result<(), StoreError> {
        let (session, id, replaces) = (session.to_owned(), id.to_owned(), replaces.to_owned());
        let now = crate::now_ms();
        self.call(move |conn| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            tx.execute(
                "INSERT INTO threads (id, session_id, parent_thread, fork_seq, replaces, label, \
                 created_at) VALUES (?1, ?2, ?3, ?4, ?3, ?5, ?6)",
                params![id, session, replaces, keep, label, now],
            )?;
            make_current(&tx, &session, &id)?;
            tx.commit()
        })
        .await
    }

    /// When each message of `thread`'s whole history was recorded (Unix milliseconds), in
    /// the order [`Store::thread_history`] returns them.
    pub async fn thread_history_times(&self, thread: &str) -> Result<Vec<i64>, StoreError> {
        let thread = thread.to_owned();
        self.call(move |conn| {
            Ok(history_rows(conn, &thread)?
                .into_iter()
                .map(|(_, at)| at)
                .collect())
        })
        .await
    }

    /// Makes `thread` the session's current thread (what a resume continues).
    pub async fn set_current_thread(&self, session: &str, thread: &str) -> Result<(), StoreError> {
        let (session, thread) = (session.to_owned(), thread.to_owned());
        self.call(move |conn| make_current(conn, &session, &thread))
            .await
    }

    /// The threads of a session, oldest first.
    pub async fn threads(&self, session: &str) -> Result<Vec<ThreadRow>, StoreError> {
        let session = session.to_owned();
        self.call(move |conn| {
            let mut stmt = conn.prepare(
                "SELECT t.id, t.parent_thread, t.fork_seq, t.label, t.created_at, \
                 COALESCE(t.fork_seq, 0) + \
                 (SELECT COUNT(*) FROM messages m WHERE m.thread_id = t.id), t.replaces \
                 FROM threads t WHERE t.session_id = ?1 ORDER BY t.created_at, t.rowid",
            )?;
            let rows = stmt.query_map(params![session], |r| {
                Ok(ThreadRow {
                    id: r.get(0)?,
                    parent: r.get(1)?,
                    fork_seq: r.get(2)?,
                    label: r.get(3)?,
                    created_at: r.get(4)?,
                    messages: r.get(5)?,
                    replaces: r.get(6)?,
                })
            })?;
            rows.collect()
        })
        .await
    }

    /// The whole history of `thread`: the messages it shares with its ancestors up to each
    /// fork point, then its own. Threads share, never copy, what came before a fork.
    pub async fn thread_history(&self, thread: &str) -> Result<Vec<String>, StoreError> {
        let thread = thread.to_owned();
        self.call(move |conn| history(conn, &thread)).await
    }

    /// [`Store::thread_history`] for code without an async runtime.
    pub fn thread_history_blocking(&self, thread: &str) -> Result<Vec<String>, StoreError> {
        let thread = thread.to_owned();
        self.call_blocking(move |conn| history(conn, &thread))
    }
}

fn history(conn: &Connection, thread: &str) -> rusqlite::Result<Vec<String>> {
    Ok(history_rows(conn, thread)?
        .into_iter()
        .map(|(body, _)| body)
        .collect())
}

/// Each message of `thread`'s whole history with the time it was recorded.
fn history_rows(conn: &Connection, thread: &str) -> rusqlite::Result<Vec<(String, i64)>> {
    // Walk up to the root: (thread, last seq it contributes).
    let mut chain: Vec<(String, Option<i64>)> = vec![(thread.to_owned(), None)];
    let mut current = thread.to_owned();
    while let Some((parent, fork_seq)) = conn
        .query_row(
            "SELECT parent_thread, fork_seq FROM threads WHERE id = ?1 AND parent_thread IS NOT NULL",
            params![current],
            |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)),
        )
        .optional()?
    {
        chain.push((parent.clone(), Some(fork_seq)));
        current = parent;
        if chain.len() > 10_000 {
            break; // a cycle would be corruption; stop rather than loop forever
        }
    }
    let mut out = Vec::new();
    let mut from = 0i64;
    for (id, upto) in chain.into_iter().rev() {
        let mut stmt = conn.prepare_cached(
            "SELECT body, created_at FROM messages WHERE thread_id = ?1 AND seq > ?2 AND seq <= ?3 \
             ORDER BY seq",
        )?;
        let limit = upto.unwrap_or(i64::MAX);
        let rows = stmt.query_map(params![id, from, limit], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?))
        })?;
        for row in rows {
            out.push(row?);
        }
        from = limit;
    }
    Ok(out)
}
