//! The grant table of one session tree: config rules, stored grants and the grants given
//! while the tree runs, in one place every session of the tree reads at each decision.
//! A grant the user revokes is gone for the root and for every subagent at once, started
//! before or after. Owns the table and its revocation (the stored row with it); does not
//! own deciding (`atto-policy`) or the audit log.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use atto_policy::gate::Grant;
use atto_store::Store;

/// What `/grants` shows about a grant beyond its rule.
#[derive(Debug, Clone, Default)]
pub(super) struct GrantMeta {
    pub created_at: Option<i64>,
    pub last_used_at: Option<i64>,
    pub uses: u64,
}

/// The grants in force with what `/grants` shows about each, in the same order.
pub(super) struct Entries {
    pub grants: Vec<Grant>,
    pub meta: Vec<GrantMeta>,
}

/// The grant table shared by every session of a tree; cloning shares it.
#[derive(Clone)]
pub(crate) struct GrantTable {
    entries: Arc<Mutex<Entries>>,
    /// Where stored grants are revoked; `None` runs without a database.
    store: Option<Store>,
}

impl GrantTable {
    pub(crate) fn new(grants: Vec<Grant>, store: Option<Store>) -> Self {
        let meta = vec![GrantMeta::default(); grants.len()];
        Self {
            entries: Arc::new(Mutex::new(Entries { grants, meta })),
            store,
        }
    }

    /// The table, for one decision or change. Never held across an await.
    pub(super) fn lock(&self) -> MutexGuard<'_, Entries> {
        // A panic elsewhere cannot leave the table half-changed: every change is one push
        // or one remove of both vectors under this lock.
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Removes grant `number` (as `/grants` lists it) for the whole tree, and its stored
    /// row. Config rules stay: they live in a file.
    pub(crate) async fn revoke(&self, number: u32) -> Result<String, String> {
        let index = usize::try_from(number).unwrap_or(0).wrapping_sub(1);
        let chosen = {
            let entries = self.lock();
            match entries.grants.get(index) {
                None => {
                    return Err(format!(
                        "there is no grant {number}; /grants lists {} grant(s)",
                        entries.grants.len()
                    ));
                }
                Some(g) if g.id.is_none() && g.origin != "session grant" => {
                    return Err(format!(
                        "grant {number} ({}) comes from the {}; edit that file to remove it",
                        g.rule, g.origin
                    ));
                }
                Some(g) => g.clone(),
            }
        };
        if let Some(id) = chosen.id {
            let Some(store) = &self.store else {
                return Err("the database is not available; nothing was revoked".to_owned());
            };
            store
                .revoke_grant(id)
                .await
                .map_err(|e| format!("could not revoke the grant: {e}"))?;
        }
        // Found again, not by its number: the table may have changed during the await.
        let mut entries = self.lock();
        let same = |g: &Grant| {
            g.id == chosen.id
                && g.origin == chosen.origin
                && g.action == chosen.action
                && g.rule.text() == chosen.rule.text()
        };
        if let Some(at) = entries.grants.iter().position(same) {
            entries.grants.remove(at);
            entries.meta.remove(at);
        }
        Ok(format!("revoked grant {number}: {}", chosen.rule))
    }
}
