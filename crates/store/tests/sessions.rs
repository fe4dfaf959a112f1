// Tests may unwrap: a failed unwrap is a failed test, with its location.
#![allow(clippy::unwrap_used, clippy::expect_used)]

//! What a session records about itself, through the public handle: the modes it ran in
//! (restored on resume, kept by a fork), its label, the session it was forked from and
//! where, and whether the model ever answered in it.

use atto_store::{NewSession, SessionRef, SessionRow, Store, StoreError};

async fn session(store: &Store, id: &str) {
    store
        .create_session(NewSession {
            id: id.to_owned(),
            workspace: "/w".to_owned(),
            provider: None,
            model: None,
            spawned_by: None,
        })
        .await
        .unwrap();
}

fn find(store: &Store, id: &str) -> SessionRow {
    store
        .find_session_blocking("/w", &SessionRef::Id(id.to_owned()))
        .unwrap()
}

const USER: &str = r#"{"type":"user","text":"hi"}"#;
const REPLY: &str = r#"{"type":"assistant","parts":[]}"#;

#[tokio::test]
async fn modes_are_recorded_updated_in_part_and_kept_by_a_fork() {
    let tmp = tempfile::tempdir().unwrap();
    let store = Store::open(&tmp.path().join("atto.db")).unwrap();
    session(&store, "s1").await;
    let fresh = find(&store, "s1");
    assert_eq!((fresh.agent_mode, fresh.permission_mode), (None, None));

    store
        .set_session_modes("s1", Some("plan"), Some("ask"))
        .await
        .unwrap();
    // `None` leaves a mode as it is.
    store
        .set_session_modes_blocking("s1", Some("build"), None)
        .unwrap();
    let s1 = find(&store, "s1");
    assert_eq!(s1.agent_mode.as_deref(), Some("build"));
    assert_eq!(s1.permission_mode.as_deref(), Some("ask"));
    let latest = store
        .find_session_blocking("/w", &SessionRef::Latest)
        .unwrap();
    assert_eq!(latest.agent_mode.as_deref(), Some("build"));

    store
        .fork_session_blocking("s1", "s2", Some("try b".to_owned()))
        .unwrap();
    let s2 = find(&store, "s2");
    assert_eq!(s2.agent_mode.as_deref(), Some("build"));
    assert_eq!(s2.permission_mode.as_deref(), Some("ask"));

    let err = store
        .set_session_modes("nobody", Some("plan"), None)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, StoreError::NotFound(text) if text.contains("session nobody is not stored")),
        "{err:?}"
    );
}

#[tokio::test]
async fn a_fork_shows_its_parent_fork_point_and_label_and_labels_can_change() {
    let tmp = tempfile::tempdir().unwrap();
    let store = Store::open(&tmp.path().join("atto.db")).unwrap();
    session(&store, "s1").await;
    store
        .append_message("s1", 1, USER.to_owned(), Some("hi".to_owned()))
        .await
        .unwrap();
    store
        .append_message("s1", 2, REPLY.to_owned(), None)
        .await
        .unwrap();
    assert_eq!(
        store
            .fork_session_blocking("s1", "s2", Some("try b".to_owned()))
            .unwrap(),
        2
    );
    let s1 = find(&store, "s1");
    assert_eq!(
        (s1.parent_session, s1.fork_point, s1.label),
        (None, None, None)
    );
    let s2 = find(&store, "s2");
    assert_eq!(s2.parent_session.as_deref(), Some("s1"));
    assert_eq!(s2.fork_point, Some(2));
    assert_eq!(s2.label.as_deref(), Some("try b"));
    // Exported as JSON, the fork says where it came from.
    let json = serde_json::to_value(&s2).unwrap();
    assert_eq!(json["parent_session"], "s1");
    assert_eq!(json["fork_point"], 2);
    assert_eq!(json["label"], "try b");

    store.set_session_label("s1", Some("main")).await.unwrap();
    store.set_session_label_blocking("s2", None).unwrap();
    assert_eq!(find(&store, "s1").label.as_deref(), Some("main"));
    assert_eq!(find(&store, "s2").label, None);
    let err = store
        .set_session_label_blocking("nobody", Some("x"))
        .unwrap_err();
    assert!(matches!(err, StoreError::NotFound(_)), "{err:?}");
}

#[tokio::test]
async fn a_session_the_model_never_answered_is_told_apart() {
    let tmp = tempfile::tempdir().unwrap();
    let store = Store::open(&tmp.path().join("atto.db")).unwrap();
    session(&store, "s1").await;
    assert!(!find(&store, "s1").answered, "no messages at all");
    store
        .append_message("s1", 1, USER.to_owned(), Some("hi".to_owned()))
        .await
        .unwrap();
    // A body that is not JSON must not break the list.
    store
        .append_message("s1", 2, "not json".to_owned(), None)
        .await
        .unwrap();
    let asked = find(&store, "s1");
    assert_eq!((asked.messages, asked.answered), (2, false));

    // A reply in a branch that is now current counts too.
    store
        .create_thread("s1", "t2", "s1", 1, None)
        .await
        .unwrap();
    store
        .append_message("t2", 2, REPLY.to_owned(), None)
        .await
        .unwrap();
    assert!(find(&store, "s1").answered);
    let listed = store.sessions_blocking("/w", 10).unwrap();
    assert!(listed[0].answered);
}
