//! The audit log (`audit_log`): one row per policy decision, automatic or not, with the rule
//! or reason that decided it. Append and read back only; rows are never updated. What gets
//! logged and when is the policy gate's decision, not this module's.

use rusqlite::{Connection, Row, params};
use serde::Serialize;

use crate::{Store, StoreError};

/// One decision, as logged.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AuditEntry {
    /// When it was decided, unix ms.
    pub at: i64,
    /// The session it happened in, if any.
    pub session_id: Option<String>,
    /// The workspace it happened in, if any.
    pub workspace: Option<String>,
    /// The tool that was called.
    pub tool: String,
    /// The command or path the call targets.
    pub target: Option<String>,
    /// `allow`, `ask`, `deny` or `queue`.
    pub decision: String,
    /// What came of it: `approved`, `refused`, `auto`, ...
    pub outcome: Option<String>,
    /// The rule text or the reason that decided it.
    pub decided_by: String,
    /// The agent/permission mode in force.
    pub mode: Option<String>,
}

impl Store {
    /// Appends one entry to the audit log.
    pub async fn audit(&self, entry: AuditEntry) -> Result<(), StoreError> {
        self.call(move |conn| insert(conn, &entry)).await
    }

    /// [`Store::audit`] for code without an async runtime.
    pub fn audit_blocking(&self, entry: AuditEntry) -> Result<(), StoreError> {
        self.call_blocking(move |conn| insert(conn, &entry))
    }

    /// The `limit` most recent entries, newest first (by `at`, then by insertion order).
    pub async fn recent_audit(&self, limit: u32) -> Result<Vec<AuditEntry>, StoreError> {
        self.call(move |conn| recent(conn, limit)).await
    }

    /// [`Store::recent_audit`] for code without an async runtime.
    pub fn recent_audit_blocking(&self, limit: u32) -> Result<Vec<AuditEntry>, StoreError> {
        self.call_blocking(move |conn| recent(conn, limit))
    }
}

fn insert(conn: &Connection, e: &AuditEntry) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO audit_log \
         (at, session_id, workspace, tool, target, decision, outcome, decided_by, mode) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    )?
    .execute(params![
        e.at,
        e.session_id,
        e.workspace,
        e.tool,
        e.target,
        e.decision,
        e.outcome,
        e.decided_by,
        e.mode
    ])
    .map(drop)
}

fn recent(conn: &Connection, limit: u32) -> rusqlite::Result<Vec<AuditEntry>> {
    let mut stmt = conn.prepare_cached(
        "SELECT at, session_id, workspace, tool, target, decision, outcome, decided_by, mode \
         FROM audit_log ORDER BY at DESC, id DESC LIMIT ?1",
    )?;
    stmt.query_map([limit], from_row)?.collect()
}

fn from_row(row: &Row<'_>) -> rusqlite::Result<AuditEntry> {
    Ok(AuditEntry {
        at: row.get(0)?,
        session_id: row.get(1)?,
        workspace: row.get(2)?,
        tool: row.get(3)?,
        target: row.get(4)?,
        decision: row.get(5)?,
        outcome: row.get(6)?,
        decided_by: row.get(7)?,
        mode: row.get(8)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(at: i64) -> AuditEntry {
        AuditEntry {
            at,
            session_id: None,
            workspace: None,
            tool: "bash".to_owned(),
            target: Some("x".repeat(2000)),
            decision: "allow".to_owned(),
            outcome: Some("auto".to_owned()),
            decided_by: "test".to_owned(),
            mode: None,
        }
    }

    /// A full disk, forced with a page limit on the writer's connection: the write that does
    /// not fit fails as `DiskFull`, everything before it stays, and the store keeps working.
    #[test]
    fn a_full_database_refuses_the_write_and_keeps_earlier_rows() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("atto.db");
        let store = Store::open(&path).unwrap();
        let pages: i64 = store
            .call_blocking(|c| c.pragma_query_value(None, "page_count", |r| r.get(0)))
            .unwrap();
        store
            .call_blocking(move |c| c.pragma_update(None, "max_page_count", pages + 8))
            .unwrap();

        let mut stored = 0;
        let err = loop {
            match store.call_blocking({
                let e = entry(stored);
                move |c| insert(c, &e)
            }) {
                Ok(()) => stored += 1,
                Err(err) => break err,
            }
            assert!(stored < 10_000, "the page limit never bit");
        };
        assert!(matches!(err, StoreError::DiskFull { .. }), "{err:?}");
        let text = err.to_string();
        assert!(text.contains("is full") && text.contains(&path.display().to_string()));
        assert!(stored > 0, "some rows must have fit before the limit");
        assert_eq!(
            store.recent_audit_blocking(u32::MAX).unwrap().len(),
            stored as usize
        );
        drop(store);

        let reopened = Store::open(&path).unwrap();
        assert_eq!(
            reopened.recent_audit_blocking(u32::MAX).unwrap().len(),
            stored as usize
        );
    }
}
