//! Remembered grants (`remembered_permissions`): storing, listing, revoking and counting the
//! uses of rules like `bash(npm run test:*)` at project or user scope. It checks only the
//! enumerated columns; what a rule means, whether it matches a call and which grant wins are
//! the policy crate's business. Session-scope grants never reach the store.

use rusqlite::{Connection, Row, params};
use serde::Serialize;

use crate::{Store, StoreError};

/// A stored grant.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct GrantRow {
    /// The row id, shown to users for `/grants revoke N`.
    pub id: i64,
    /// The rule, e.g. `bash(npm run test:*)`, `edit_file(src/**)`, `mcp_github_*`.
    pub rule: String,
    /// `allow`, `ask` or `deny`.
    pub decision: String,
    /// `project` or `user`.
    pub scope: String,
    /// The canonical workspace path for project scope; `None` for user scope.
    pub project: Option<String>,
    /// When it was granted, unix ms.
    pub created_at: i64,
    /// When it last decided a call, unix ms.
    pub last_used_at: Option<i64>,
    /// How many calls it has decided.
    pub uses: i64,
}

/// A grant to store.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NewGrant {
    /// The rule, e.g. `bash(npm run test:*)`.
    pub rule: String,
    /// `allow`, `ask` or `deny`.
    pub decision: String,
    /// `project` or `user`.
    pub scope: String,
    /// The canonical workspace path; required for project scope, absent for user scope.
    pub project: Option<String>,
}

const DECISIONS: [&str; 3] = ["allow", "ask", "deny"];

impl NewGrant {
    /// Checks the columns the store enumerates (the table's CHECK constraints say the same).
    fn validate(&self) -> Result<(), StoreError> {
        let invalid = |what: String, hint| Err(StoreError::Invalid { what, hint });
        if self.rule.trim().is_empty() {
            return invalid(
                "a grant needs a rule and this one is empty".to_owned(),
                "Give a rule such as `bash(npm run test:*)`.",
            );
        }
        if !DECISIONS.contains(&self.decision.as_str()) {
            return invalid(
                format!("grant decision {:?} is unknown", self.decision),
                "Use allow, ask or deny.",
            );
        }
        match (self.scope.as_str(), self.project.as_deref()) {
            ("user", None) => Ok(()),
            ("user", Some(_)) => invalid(
                "a user-scope grant was given a project".to_owned(),
                "Leave the project out for user scope, or use project scope.",
            ),
            ("project", Some(p)) if !p.is_empty() => Ok(()),
            ("project", _) => invalid(
                "a project-scope grant was given no project".to_owned(),
                "Pass the canonical workspace path as the project.",
            ),
            ("session", _) => invalid(
                "session-scope grants are not stored".to_owned(),
                "Keep session grants in memory for the session's lifetime.",
            ),
            (other, _) => invalid(
                format!("grant scope {other:?} is unknown"),
                "Use project or user (session grants stay in memory).",
            ),
        }
    }
}

impl Store {
    /// The grants that apply in `project`: user-scope ones and this project's, oldest first.
    pub async fn grants_for(&self, project: &str) -> Result<Vec<GrantRow>, StoreError> {
        let project = project.to_owned();
        self.call(move |conn| select_for(conn, &project)).await
    }

    /// [`Store::grants_for`] for code without an async runtime.
    pub fn grants_for_blocking(&self, project: &str) -> Result<Vec<GrantRow>, StoreError> {
        let project = project.to_owned();
        self.call_blocking(move |conn| select_for(conn, &project))
    }

    /// Stores a grant and returns it as stored. Refuses unknown decisions and scopes, and a
    /// project given for user scope or missing for project scope.
    pub async fn add_grant(&self, grant: NewGrant) -> Result<GrantRow, StoreError> {
        grant.validate()?;
        let now = crate::now_ms();
        self.call(move |conn| insert(conn, &grant, now)).await
    }

    /// [`Store::add_grant`] for code without an async runtime.
    pub fn add_grant_blocking(&self, grant: NewGrant) -> Result<GrantRow, StoreError> {
        grant.validate()?;
        let now = crate::now_ms();
        self.call_blocking(move |conn| insert(conn, &grant, now))
    }

    /// Removes grant `id`; `false` if there was none.
    pub async fn revoke_grant(&self, id: i64) -> Result<bool, StoreError> {
        self.call(move |conn| delete(conn, id)).await
    }

    /// [`Store::revoke_grant`] for code without an async runtime.
    pub fn revoke_grant_blocking(&self, id: i64) -> Result<bool, StoreError> {
        self.call_blocking(move |conn| delete(conn, id))
    }

    /// Counts one use of grant `id` at `at` (unix ms). A grant revoked meanwhile is skipped.
    pub async fn record_grant_use(&self, id: i64, at: i64) -> Result<(), StoreError> {
        self.call(move |conn| {
            conn.prepare_cached(
                "UPDATE remembered_permissions SET uses = uses + 1, last_used_at = ?2 \
                 WHERE id = ?1",
            )?
            .execute(params![id, at])
            .map(drop)
        })
        .await
    }
}

const COLUMNS: &str = "id, rule, decision, scope, project, created_at, last_used_at, uses";

fn select_for(conn: &Connection, project: &str) -> rusqlite::Result<Vec<GrantRow>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM remembered_permissions \
         WHERE scope = 'user' OR (scope = 'project' AND project = ?1) \
         ORDER BY created_at, id"
    ))?;
    stmt.query_map([project], from_row)?.collect()
}

fn insert(conn: &Connection, grant: &NewGrant, now: i64) -> rusqlite::Result<GrantRow> {
    conn.prepare_cached(&format!(
        "INSERT INTO remembered_permissions (rule, decision, scope, project, created_at) \
         VALUES (?1, ?2, ?3, ?4, ?5) RETURNING {COLUMNS}"
    ))?
    .query_row(
        params![grant.rule, grant.decision, grant.scope, grant.project, now],
        from_row,
    )
}

fn delete(conn: &Connection, id: i64) -> rusqlite::Result<bool> {
    let n = conn
        .prepare_cached("DELETE FROM remembered_permissions WHERE id = ?1")?
        .execute([id])?;
    Ok(n > 0)
}

fn from_row(row: &Row<'_>) -> rusqlite::Result<GrantRow> {
    Ok(GrantRow {
        id: row.get(0)?,
        rule: row.get(1)?,
        decision: row.get(2)?,
        scope: row.get(3)?,
        project: row.get(4)?,
        created_at: row.get(5)?,
        last_used_at: row.get(6)?,
        uses: row.get(7)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grant(decision: &str, scope: &str, project: Option<&str>) -> NewGrant {
        NewGrant {
            rule: "bash(npm run test:*)".to_owned(),
            decision: decision.to_owned(),
            scope: scope.to_owned(),
            project: project.map(str::to_owned),
        }
    }

    #[test]
    fn only_the_enumerated_values_pass() {
        let cases = [
            (grant("allow", "user", None), true),
            (grant("deny", "project", Some("/w")), true),
            (grant("ask", "user", None), true),
            (grant("always", "user", None), false),
            (grant("Allow", "user", None), false),
            (grant("allow", "session", None), false),
            (grant("allow", "global", None), false),
            (grant("allow", "project", None), false),
            (grant("allow", "project", Some("")), false),
            (grant("allow", "user", Some("/w")), false),
            (
                NewGrant {
                    rule: "  ".to_owned(),
                    ..grant("allow", "user", None)
                },
                false,
            ),
        ];
        for (g, ok) in cases {
            let got = g.validate();
            assert_eq!(got.is_ok(), ok, "{g:?} -> {got:?}");
            if let Err(e) = got {
                assert!(e.to_string().contains("nothing was stored"), "{e}");
            }
        }
    }
}
