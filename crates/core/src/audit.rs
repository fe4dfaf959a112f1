//! The audit trail of policy decisions and the durable side of grants, written through
//! the store. Every decision is recorded before the call it allows runs. A decision that
//! could not be recorded fails closed: [`Audit::failure`] says why, the gate refuses the
//! call and the turn stops (retryable). Other store failures (a grant's use count, a
//! saved grant) are reported once and do not stop the session.

use atto_policy::gate::Decision;
use atto_protocol::{Event, GrantScope, PermissionMode};
use atto_store::{AuditEntry, GrantRow, NewGrant, Store};
use tokio::sync::mpsc;

pub(crate) struct Audit {
    pub store: Option<Store>,
    pub session_id: String,
    pub workspace: String,
    pub mode: PermissionMode,
    pub events: mpsc::UnboundedSender<Event>,
    warned: bool,
    /// Why the last decision could not be recorded, once one could not.
    failure: Option<String>,
}

impl Audit {
    pub(crate) fn new(
        store: Option<Store>,
        session_id: String,
        workspace: String,
        mode: PermissionMode,
        events: mpsc::UnboundedSender<Event>,
    ) -> Self {
        Self {
            store,
            session_id,
            workspace,
            mode,
            events,
            warned: false,
            failure: None,
        }
    }

    /// Why decisions can no longer be recorded, if they cannot: nothing may run then.
    pub(crate) fn failure(&self) -> Option<&str> {
        self.failure.as_deref()
    }

    pub(crate) fn warn(&self, message: String) {
        let _ = self.events.send(Event::Warning { message });
    }

    fn store_failed(&mut self, what: &str, err: &atto_store::StoreError) {
        if !self.warned {
            self.warned = true;
            self.warn(format!("could not {what}: {err}"));
        }
    }

    /// Records one decision and how it ended.
    pub(crate) async fn record(&mut self, tool: &str, target: &str, d: &Decision, outcome: &str) {
        self.record_as(tool, target, d.action.as_str(), &d.decided_by, outcome)
            .await;
    }

    /// Records a decision the agent mode made (`queue`, or `deny` by the mode table).
    pub(crate) async fn record_as(
        &mut self,
        tool: &str,
        target: &str,
        decision: &str,
        decided_by: &str,
        outcome: &str,
    ) {
        let Some(store) = self.store.clone() else {
            return;
        };
        let entry = AuditEntry {
            at: atto_protocol::time::now_ms(),
            session_id: Some(self.session_id.clone()),
            workspace: Some(self.workspace.clone()),
            tool: tool.to_owned(),
            target: (!target.is_empty()).then(|| target.to_owned()),
            decision: decision.to_owned(),
            outcome: Some(outcome.to_owned()),
            decided_by: decided_by.to_owned(),
            mode: Some(atto_policy::gate::permission_name(self.mode).to_owned()),
        };
        if let Err(err) = store.audit(entry).await {
            self.store_failed("write the audit log", &err);
            self.failure = Some(err.to_string());
        }
    }

    /// Counts a use of a stored grant.
    pub(crate) async fn grant_used(&mut self, id: i64) {
        let Some(store) = self.store.clone() else {
            return;
        };
        if let Err(err) = store
            .record_grant_use(id, atto_protocol::time::now_ms())
            .await
        {
            self.store_failed("record a grant's use", &err);
        }
    }

    /// Saves an allow grant for the project or the user; `None` if it could not be
    /// saved (it still holds for this session, and the user is told).
    pub(crate) async fn store_grant(&mut self, rule: &str, scope: GrantScope) -> Option<i64> {
        let Some(store) = self.store.clone() else {
            self.warn(format!(
                "the grant {rule} holds for this session only: the database is not available"
            ));
            return None;
        };
        let (scope, project) = match scope {
            GrantScope::Project => ("project", Some(self.workspace.clone())),
            GrantScope::User | GrantScope::Session => ("user", None),
        };
        let grant = NewGrant {
            rule: rule.to_owned(),
            decision: "allow".to_owned(),
            scope: scope.to_owned(),
            project,
        };
        match store.add_grant(grant).await {
            Ok(row) => Some(row.id),
            Err(err) => {
                self.warn(format!(
                    "could not save the grant {rule} ({err}); it holds for this session only"
                ));
                None
            }
        }
    }
}

impl Audit {
    /// The stored grants for this workspace and user (empty without a database).
    pub(crate) async fn stored_grants(&mut self) -> Vec<GrantRow> {
        let Some(store) = self.store.clone() else {
            return Vec::new();
        };
        match store.grants_for(&self.workspace).await {
            Ok(rows) => rows,
            Err(err) => {
                self.store_failed("read the saved grants", &err);
                Vec::new()
            }
        }
    }
}
