//! The planner's task plans (`task_plans`): saving a plan as it changes and reading back a
//! session's newest one, so a plan waiting for confirmation survives a restart. It stores
//! what it is given; whether a plan is valid is atto-core's to decide.

use std::path::Path;

use atto_protocol::{TaskPlan, TaskPlanStatus};
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use crate::{Store, StoreError};

impl Store {
    /// Stores a plan of session `session_id`, or replaces it if its id is stored already
    /// (its `created_at` stays as first saved). The session must be stored already.
    pub async fn save_task_plan(
        &self,
        plan: &TaskPlan,
        session_id: &str,
    ) -> Result<(), StoreError> {
        let (plan, session) = (plan.clone(), session_id.to_owned());
        self.call(move |conn| save(conn, &plan, &session)).await?
    }

    /// The session's most recently changed plan, if any.
    pub async fn latest_task_plan(&self, session_id: &str) -> Result<Option<TaskPlan>, StoreError> {
        let (session, path) = (session_id.to_owned(), self.path().to_path_buf());
        self.call(move |conn| latest(conn, &path, &session)).await?
    }
}

fn status_str(status: TaskPlanStatus) -> &'static str {
    match status {
        TaskPlanStatus::AwaitingConfirmation => "awaiting_confirmation",
        TaskPlanStatus::Running => "running",
        TaskPlanStatus::Completed => "completed",
        TaskPlanStatus::Failed => "failed",
        TaskPlanStatus::Cancelled => "cancelled",
        TaskPlanStatus::Rejected => "rejected",
    }
}

fn save(
    conn: &mut Connection,
    plan: &TaskPlan,
    session: &str,
) -> rusqlite::Result<Result<(), StoreError>> {
    // The check and the write see the same database: the write lock is taken first.
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let found = tx
        .prepare_cached("SELECT 1 FROM sessions WHERE id = ?1")?
        .query_row(params![session], |_| Ok(()))
        .optional()?;
    if found.is_none() {
        return Ok(Err(StoreError::NotFound(format!(
            "session {session} is not stored, so its task plan was not stored either"
        ))));
    }
    let json = match serde_json::to_string(plan) {
        Ok(json) => json,
        Err(err) => {
            return Ok(Err(StoreError::Invalid {
                what: format!("task plan {} cannot be written as JSON ({err})", plan.id),
                hint: "This is a bug in atto; please report it.",
            }));
        }
    };
    let now = crate::now_ms();
    let changed = tx.execute(
        "INSERT INTO task_plans (id, session_id, status, plan, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?5)
         ON CONFLICT (id) DO UPDATE SET status = ?3, plan = ?4, updated_at = ?5
         WHERE session_id = ?2",
        params![plan.id, session, status_str(plan.status), json, now],
    )?;
    if changed == 0 {
        return Ok(Err(StoreError::Invalid {
            what: format!(
                "task plan {} is stored for another session than {session}",
                plan.id
            ),
            hint: "Give it a new id.",
        }));
    }
    tx.commit()?;
    Ok(Ok(()))
}

fn latest(
    conn: &mut Connection,
    path: &Path,
    session: &str,
) -> rusqlite::Result<Result<Option<TaskPlan>, StoreError>> {
    let row: Option<(String, String)> = conn
        .prepare_cached(
            "SELECT id, plan FROM task_plans WHERE session_id = ?1
             ORDER BY updated_at DESC, rowid DESC LIMIT 1",
        )?
        .query_row(params![session], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?;
    let Some((id, json)) = row else {
        return Ok(Ok(None));
    };
    Ok(serde_json::from_str(&json)
        .map(Some)
        .map_err(|e| StoreError::Unreadable {
            path: path.to_path_buf(),
            what: format!("task plan {id} of session {session}"),
            detail: e.to_string(),
        }))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use atto_protocol::{PlanStep, RiskLevel, StepKind, StepStatus};

    use super::*;
    use crate::NewSession;

    fn plan(id: &str, status: TaskPlanStatus) -> TaskPlan {
        TaskPlan {
            id: id.into(),
            task: "t".into(),
            intent: "i".into(),
            risk: RiskLevel::Low,
            estimated_duration_secs: 5,
            steps: vec![PlanStep {
                id: "s1".into(),
                number: 1,
                description: "d".into(),
                dependencies: vec![],
                complexity: 1,
                token_budget: 10,
                kind: StepKind::Test,
                files: vec![],
                decision: None,
                status: StepStatus::Pending,
                checkpoint: None,
                result: None,
            }],
            status,
        }
    }

    #[tokio::test]
    async fn a_plan_is_saved_updated_and_read_back_newest_first() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("atto.db")).unwrap();
        assert!(
            store
                .save_task_plan(&plan("p1", TaskPlanStatus::Running), "s")
                .await
                .is_err()
        );
        store
            .create_session(NewSession {
                id: "s".into(),
                workspace: "/w".into(),
                provider: None,
                model: None,
                spawned_by: None,
            })
            .await
            .unwrap();
        assert_eq!(store.latest_task_plan("s").await.unwrap(), None);
        store
            .save_task_plan(&plan("p1", TaskPlanStatus::AwaitingConfirmation), "s")
            .await
            .unwrap();
        let mut done = plan("p1", TaskPlanStatus::Completed);
        done.steps[0].status = StepStatus::Completed;
        store.save_task_plan(&done, "s").await.unwrap();
        assert_eq!(store.latest_task_plan("s").await.unwrap(), Some(done));
    }
}
