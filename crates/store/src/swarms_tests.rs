#![allow(clippy::unwrap_used)]

use std::time::Duration;

use super::*;
use crate::{SessionRef, StoreErrorKind};

/// UUIDv7-shaped ids: the first two made in the same minute, the third a week later.
const A: &str = "019abc12-3456-7def-8000-00000000000a";
const B: &str = "019abc12-3499-7def-8000-00000000000b";
const C: &str = "019f0000-0000-7000-8000-00000000000c";

fn temp_store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("atto.db")).unwrap();
    (dir, store)
}

async fn save(store: &Store, id: &str, workspace: &str, goal: &str) {
    store
        .save_swarm(id, workspace, goal, "running", r#"{"tasks":[]}"#)
        .await
        .unwrap();
    // Saves in the same millisecond would tie on `updated_at`.
    std::thread::sleep(Duration::from_millis(2));
}

#[tokio::test]
async fn a_swarm_is_saved_and_read_back() {
    let (_dir, store) = temp_store();
    assert_eq!(store.swarm(A).await.unwrap(), None);
    store
        .save_swarm(A, "/w", "add a parser", "planned", r#"{"id":"a"}"#)
        .await
        .unwrap();
    let row = store.swarm(A).await.unwrap().unwrap();
    assert_eq!(
        (
            row.id.as_str(),
            row.workspace.as_str(),
            row.goal.as_str(),
            row.status.as_str(),
            row.state.as_str()
        ),
        (A, "/w", "add a parser", "planned", r#"{"id":"a"}"#)
    );
    assert!(row.created_at > 0);
    assert_eq!(row.created_at, row.updated_at);
}

#[tokio::test]
async fn saving_again_replaces_the_state_and_keeps_created_at() {
    let (_dir, store) = temp_store();
    save(&store, A, "/w", "add a parser").await;
    // Pretend it was first saved long ago.
    store
        .call(|conn| conn.execute("UPDATE swarms SET created_at = 7, updated_at = 8", []))
        .await
        .unwrap();
    store
        .save_swarm(A, "/w", "add a parser", "finished", r#"{"done":true}"#)
        .await
        .unwrap();
    let row = store.swarm(A).await.unwrap().unwrap();
    assert_eq!(row.created_at, 7);
    assert!(row.updated_at > 8);
    assert_eq!(row.status, "finished");
    assert_eq!(row.state, r#"{"done":true}"#);
    assert_eq!(store.list_swarms("/w", 10).await.unwrap().len(), 1);
}

#[tokio::test]
async fn a_swarm_keeps_its_workspace_and_its_state_must_be_json() {
    let (_dir, store) = temp_store();
    save(&store, A, "/w", "g").await;
    let moved = store
        .save_swarm(A, "/elsewhere", "g", "running", "{}")
        .await
        .unwrap_err();
    assert_eq!(moved.kind(), StoreErrorKind::Refused);
    assert!(moved.to_string().contains("another workspace"), "{moved}");
    let garbled = store
        .save_swarm(B, "/w", "g", "running", "{not json")
        .await
        .unwrap_err();
    assert_eq!(garbled.kind(), StoreErrorKind::Refused);
    assert!(garbled.to_string().contains("not JSON"), "{garbled}");
    assert_eq!(store.swarm(B).await.unwrap(), None);
    assert_eq!(store.swarm(A).await.unwrap().unwrap().workspace, "/w");
}

#[tokio::test]
async fn a_unique_prefix_names_a_swarm_and_an_ambiguous_one_lists_them() {
    let (_dir, store) = temp_store();
    save(&store, A, "/w", "add a parser").await;
    save(
        &store,
        B,
        "/w",
        "fix the flaky test in the scheduler module, and then some",
    )
    .await;
    save(&store, C, "/v", "write docs").await;
    save(&store, "abc", "/w", "a short id").await;

    let id = |row: Option<SwarmRow>| row.map(|r| r.id);
    assert_eq!(id(store.swarm("019f").await.unwrap()).as_deref(), Some(C));
    assert_eq!(
        id(store.swarm(" 019F0000 ").await.unwrap()).as_deref(),
        Some(C)
    );
    assert_eq!(
        id(store.swarm("019abc12-345").await.unwrap()).as_deref(),
        Some(A)
    );
    assert_eq!(id(store.swarm(B).await.unwrap()).as_deref(), Some(B));
    // A whole id names its swarm, however short.
    assert_eq!(
        id(store.swarm("abc").await.unwrap()).as_deref(),
        Some("abc")
    );
    assert_eq!(store.swarm("0123").await.unwrap(), None);

    let ambiguous = store.swarm("019abc12-34").await.unwrap_err();
    assert_eq!(ambiguous.kind(), StoreErrorKind::Refused);
    let text = ambiguous.to_string();
    assert!(
        text.contains("'019abc12-34' matches more than one swarm"),
        "{text}"
    );
    assert!(text.contains("019abc12-345 (\"add a parser\")"), "{text}");
    assert!(
        text.contains("019abc12-349 (\"fix the flaky test in the scheduler mod…\")"),
        "{text}"
    );
    assert!(!text.contains(C), "{text}");

    let short = store.swarm("019").await.unwrap_err();
    assert_eq!(short.kind(), StoreErrorKind::Refused);
    assert!(
        short.to_string().contains("at least 4 characters"),
        "{short}"
    );
    assert!(store.swarm("").await.is_err());
}

#[tokio::test]
async fn the_latest_swarm_is_the_last_saved_in_that_workspace() {
    let (_dir, store) = temp_store();
    assert_eq!(store.latest_swarm("/w").await.unwrap(), None);
    save(&store, A, "/w", "first").await;
    save(&store, B, "/v", "elsewhere").await;
    save(&store, C, "/w", "second").await;
    let latest = |ws: &'static str| {
        let store = store.clone();
        async move { store.latest_swarm(ws).await.unwrap().map(|r| r.id) }
    };
    assert_eq!(latest("/w").await.as_deref(), Some(C));
    assert_eq!(latest("/v").await.as_deref(), Some(B));
    // Saving the older one again makes it the latest.
    save(&store, A, "/w", "first").await;
    assert_eq!(latest("/w").await.as_deref(), Some(A));
    let ids = |rows: Vec<SwarmRow>| rows.into_iter().map(|r| r.id).collect::<Vec<_>>();
    assert_eq!(ids(store.list_swarms("/w", 10).await.unwrap()), [A, C]);
    assert_eq!(ids(store.list_swarms("/w", 1).await.unwrap()), [A]);
    assert!(store.list_swarms("/nowhere", 10).await.unwrap().is_empty());
}

/// A database as the previous release left it (schema 8, no `swarms`), holding a session,
/// gains the table when opened, keeps the session, and stores swarms.
#[tokio::test]
async fn opening_an_older_database_adds_the_swarms_table() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("atto.db");
    let conn = Connection::open(&path).unwrap();
    for &(version, sql) in crate::migrate::MIGRATIONS
        .iter()
        .take_while(|(v, _)| *v <= 8)
    {
        conn.execute_batch(sql).unwrap();
        conn.pragma_update(None, "user_version", version).unwrap();
    }
    conn.execute(
        "INSERT INTO sessions (id, workspace, created_at, updated_at, title) \
         VALUES ('s-old', '/w', 5, 6, 'fix the build')",
        [],
    )
    .unwrap();
    drop(conn);

    let store = Store::open(&path).unwrap();
    let version: i64 = store
        .call(|conn| conn.pragma_query_value(None, "user_version", |r| r.get(0)))
        .await
        .unwrap();
    assert_eq!(version, i64::from(crate::SCHEMA_VERSION));
    let old = store
        .find_session_blocking("/w", &SessionRef::Id("s-old".into()))
        .unwrap();
    assert_eq!(old.title.as_deref(), Some("fix the build"));
    assert_eq!(store.latest_swarm("/w").await.unwrap(), None);
    save(&store, A, "/w", "after the upgrade").await;
    assert_eq!(store.latest_swarm("/w").await.unwrap().unwrap().id, A);
}
