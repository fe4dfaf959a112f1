// Tests may unwrap: a failed unwrap is a failed test, with its location.
#![allow(clippy::unwrap_used, clippy::expect_used)]

//! Grants and the audit log through the public handle, async and blocking.

use atto_store::{AuditEntry, NewGrant, Store, StoreError};

fn grant(rule: &str, decision: &str, project: Option<&str>) -> NewGrant {
    NewGrant {
        rule: rule.to_owned(),
        decision: decision.to_owned(),
        scope: if project.is_some() { "project" } else { "user" }.to_owned(),
        project: project.map(str::to_owned),
    }
}

fn entry(at: i64, tool: &str, decision: &str) -> AuditEntry {
    AuditEntry {
        at,
        session_id: Some("s-1".to_owned()),
        workspace: Some("/w/a".to_owned()),
        tool: tool.to_owned(),
        target: Some("npm run test:unit".to_owned()),
        decision: decision.to_owned(),
        outcome: Some("approved".to_owned()),
        decided_by: "bash(npm run test:*)".to_owned(),
        mode: Some("interactive".to_owned()),
    }
}

fn open() -> (tempfile::TempDir, Store) {
    let tmp = tempfile::tempdir().unwrap();
    let store = Store::open(&tmp.path().join("atto.db")).unwrap();
    (tmp, store)
}

#[tokio::test]
async fn grants_are_listed_for_the_user_and_this_project_only() {
    let (_tmp, store) = open();
    let user = store
        .add_grant(grant("mcp_github_*", "allow", None))
        .await
        .unwrap();
    let mine = store
        .add_grant(grant("edit_file(src/**)", "allow", Some("/w/a")))
        .await
        .unwrap();
    let theirs = store
        .add_grant(grant("bash(rm *)", "deny", Some("/w/b")))
        .await
        .unwrap();
    let mine_too = store
        .add_grant(grant("bash(npm run test:*)", "ask", Some("/w/a")))
        .await
        .unwrap();

    assert_eq!(user.scope, "user");
    assert_eq!(user.project, None);
    assert_eq!(mine.project.as_deref(), Some("/w/a"));
    assert_eq!((mine.uses, mine.last_used_at), (0, None));
    assert!(
        mine.created_at > 1_600_000_000_000,
        "unix ms, got {}",
        mine.created_at
    );

    let ids = |rows: Vec<atto_store::GrantRow>| rows.iter().map(|g| g.id).collect::<Vec<_>>();
    assert_eq!(
        ids(store.grants_for("/w/a").await.unwrap()),
        [user.id, mine.id, mine_too.id]
    );
    assert_eq!(
        ids(store.grants_for("/w/b").await.unwrap()),
        [user.id, theirs.id]
    );
    assert_eq!(ids(store.grants_for("/w/c").await.unwrap()), [user.id]);
    // The blocking twin reads the same rows, whole.
    assert_eq!(
        store.grants_for_blocking("/w/a").unwrap(),
        store.grants_for("/w/a").await.unwrap()
    );
}

#[tokio::test]
async fn a_grant_can_be_revoked_once() {
    let (_tmp, store) = open();
    let g = store
        .add_grant(grant("bash(ls*)", "allow", None))
        .await
        .unwrap();
    let keep = store
        .add_grant(grant("bash(cat*)", "allow", None))
        .await
        .unwrap();
    assert!(store.revoke_grant(g.id).await.unwrap());
    assert!(!store.revoke_grant(g.id).await.unwrap());
    assert!(!store.revoke_grant_blocking(9999).unwrap());
    let left = store.grants_for("/w").await.unwrap();
    assert_eq!(left, [keep]);
}

#[tokio::test]
async fn each_use_is_counted_with_its_time() {
    let (_tmp, store) = open();
    let g = store
        .add_grant(grant("bash(ls*)", "allow", None))
        .await
        .unwrap();
    store.record_grant_use(g.id, 1_000).await.unwrap();
    store.record_grant_use(g.id, 2_000).await.unwrap();
    // A grant revoked while in use is not an error.
    store.record_grant_use(g.id + 100, 3_000).await.unwrap();
    let row = &store.grants_for("/w").await.unwrap()[0];
    assert_eq!((row.uses, row.last_used_at), (2, Some(2_000)));
}

#[tokio::test]
async fn bad_grants_are_refused_before_anything_is_stored() {
    let (_tmp, store) = open();
    let mut bad = grant("bash(ls*)", "always", None);
    let err = store.add_grant(bad.clone()).await.unwrap_err();
    assert!(matches!(err, StoreError::Invalid { .. }), "{err:?}");
    assert!(err.to_string().contains("\"always\""), "{err}");
    bad.decision = "allow".to_owned();
    bad.scope = "project".to_owned();
    assert!(store.add_grant_blocking(bad).is_err());
    assert!(store.grants_for("/w").await.unwrap().is_empty());
}

#[tokio::test]
async fn the_audit_log_reads_back_newest_first() {
    let (_tmp, store) = open();
    store.audit(entry(10, "bash", "allow")).await.unwrap();
    store.audit(entry(30, "edit_file", "ask")).await.unwrap();
    store.audit(entry(20, "write_file", "deny")).await.unwrap();
    store.audit_blocking(entry(30, "bash", "queue")).unwrap();

    let recent = store.recent_audit(3).await.unwrap();
    let seen: Vec<(i64, &str)> = recent.iter().map(|e| (e.at, e.tool.as_str())).collect();
    // Same time: the later insert first.
    assert_eq!(seen, [(30, "bash"), (30, "edit_file"), (20, "write_file")]);
    assert_eq!(recent[2], entry(20, "write_file", "deny"));
    assert_eq!(store.recent_audit_blocking(100).unwrap().len(), 4);
    assert!(store.recent_audit(0).await.unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn grants_added_at_once_through_clones_all_land() {
    let (_tmp, store) = open();
    let tasks: Vec<_> = (0..4)
        .map(|t| {
            let store = store.clone();
            tokio::spawn(async move {
                let mut ids = Vec::new();
                for i in 0..25 {
                    let g = grant(&format!("bash(task{t} step{i}*)"), "allow", Some("/w"));
                    ids.push(store.add_grant(g).await.unwrap().id);
                    store.audit(entry(i, "bash", "allow")).await.unwrap();
                }
                ids
            })
        })
        .collect();
    let mut ids = Vec::new();
    for task in tasks {
        ids.extend(task.await.unwrap());
    }
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 100);
    let stored = store.grants_for("/w").await.unwrap();
    assert_eq!(stored.len(), 100);
    for t in 0..4 {
        let n = stored
            .iter()
            .filter(|g| g.rule.starts_with(&format!("bash(task{t} ")))
            .count();
        assert_eq!(n, 25, "task {t}");
    }
    assert_eq!(store.recent_audit(1000).await.unwrap().len(), 100);
}

#[test]
fn rows_serialize_as_plain_json() {
    let (_tmp, store) = open();
    let g = store
        .add_grant_blocking(grant("bash(ls*)", "allow", None))
        .unwrap();
    let json = serde_json::to_value(&g).unwrap();
    assert_eq!(json["rule"], "bash(ls*)");
    assert_eq!(json["project"], serde_json::Value::Null);
    assert_eq!(json["uses"], 0);
}
