//! What a session records about how it runs, set after it is created: the agent mode and
//! permission mode it last ran in (so a resume restores them) and its label. Reading them
//! back is part of [`crate::SessionRow`] (see `sessions`). The values are the front ends'
//! words; this module does not check them.

use rusqlite::{Connection, params};

use crate::{Store, StoreError};

impl Store {
    /// Records the agent mode and permission mode session `id` runs in, for a resume to
    /// restore; `None` leaves that mode as stored. Fails with [`StoreError::NotFound`] (and
    /// records nothing) if the session is not stored.
    pub async fn set_session_modes(
        &self,
        id: &str,
        agent_mode: Option<&str>,
        permission_mode: Option<&str>,
    ) -> Result<(), StoreError> {
        let (id, agent, permission) = owned(id, agent_mode, permission_mode);
        self.call(move |conn| set_modes(conn, &id, agent.as_deref(), permission.as_deref()))
            .await?
    }

    /// Records the model pinned with `/model` in session `id` (`auto` for routing, `None`
    /// for the session's own), so a resume keeps it.
    pub async fn set_session_model(&self, id: &str, model: Option<&str>) -> Result<(), StoreError> {
        let (id, model) = (id.to_owned(), model.map(str::to_owned));
        self.call(move |conn| {
            conn.execute(
                "UPDATE sessions SET pinned_model = ?2 WHERE id = ?1",
                rusqlite::params![id, model],
            )
            .map(drop)
        })
        .await
    }

    /// [`Store::set_session_modes`] for code without an async runtime.
    pub fn set_session_modes_blocking(
        &self,
        id: &str,
        agent_mode: Option<&str>,
        permission_mode: Option<&str>,
    ) -> Result<(), StoreError> {
        let (id, agent, permission) = owned(id, agent_mode, permission_mode);
        self.call_blocking(move |conn| {
            set_modes(conn, &id, agent.as_deref(), permission.as_deref())
        })?
    }

    /// Names session `id` (`None` removes the name). Fails with [`StoreError::NotFound`] if
    /// the session is not stored.
    pub async fn set_session_label(&self, id: &str, label: Option<&str>) -> Result<(), StoreError> {
        let (id, label) = (id.to_owned(), label.map(str::to_owned));
        self.call(move |conn| set_label(conn, &id, label.as_deref()))
            .await?
    }

    /// [`Store::set_session_label`] for code without an async runtime.
    pub fn set_session_label_blocking(
        &self,
        id: &str,
        label: Option<&str>,
    ) -> Result<(), StoreError> {
        let (id, label) = (id.to_owned(), label.map(str::to_owned));
        self.call_blocking(move |conn| set_label(conn, &id, label.as_deref()))?
    }
}

fn owned(
    id: &str,
    agent_mode: Option<&str>,
    permission_mode: Option<&str>,
) -> (String, Option<String>, Option<String>) {
    (
        id.to_owned(),
        agent_mode.map(str::to_owned),
        permission_mode.map(str::to_owned),
    )
}

fn set_modes(
    conn: &Connection,
    id: &str,
    agent_mode: Option<&str>,
    permission_mode: Option<&str>,
) -> rusqlite::Result<Result<(), StoreError>> {
    let changed = conn
        .prepare_cached(
            "UPDATE sessions SET agent_mode = COALESCE(?2, agent_mode), \
             permission_mode = COALESCE(?3, permission_mode) WHERE id = ?1",
        )?
        .execute(params![id, agent_mode, permission_mode])?;
    Ok(found(changed, id, "its modes were not recorded"))
}

fn set_label(
    conn: &Connection,
    id: &str,
    label: Option<&str>,
) -> rusqlite::Result<Result<(), StoreError>> {
    let changed = conn
        .prepare_cached("UPDATE sessions SET label = ?2 WHERE id = ?1")?
        .execute(params![id, label])?;
    Ok(found(changed, id, "its label was not changed"))
}

/// `Ok` if an update touched the session, else why nothing happened.
fn found(changed: usize, id: &str, not_done: &str) -> Result<(), StoreError> {
    if changed == 0 {
        return Err(StoreError::NotFound(format!(
            "session {id} is not stored, so {not_done}; `atto sessions` lists the stored ones"
        )));
    }
    Ok(())
}
