// Tests may unwrap: a failed unwrap is a failed test, with its location.
#![allow(clippy::unwrap_used, clippy::expect_used)]

//! Short ids through the public handle: sessions and plans made within the same minute
//! (UUIDv7 ids that share their first 8 characters) get short forms that tell them apart,
//! every short form resolves back to its id, and a prefix that fits several says which.

use atto_protocol::{PendingPlan, PlanStatus};
use atto_store::{IdKind, NewSession, SessionRef, Store, StoreError};

/// UUIDv7-shaped ids: the first two made in the same minute, the third a week later.
const A: &str = "019abc12-3456-7def-8000-00000000000a";
const B: &str = "019abc12-3499-7def-8000-00000000000b";
const C: &str = "019f0000-0000-7000-8000-00000000000c";

async fn session(store: &Store, id: &str, title: &str) {
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
    store
        .append_message(id, 1, "{}".to_owned(), Some(title.to_owned()))
        .await
        .unwrap();
}

fn not_found(err: StoreError) -> String {
    match err {
        StoreError::NotFound(text) => text,
        other => panic!("expected NotFound, got {other:?}"),
    }
}

#[tokio::test]
async fn sessions_made_in_the_same_minute_get_short_ids_that_resolve_back() {
    let tmp = tempfile::tempdir().unwrap();
    let store = Store::open(&tmp.path().join("atto.db")).unwrap();
    session(&store, A, "fix the build").await;
    session(&store, B, "write docs").await;
    session(&store, C, "later work").await;

    let listed = store.sessions_blocking("/w", 10).unwrap();
    let short = |id: &str| {
        listed
            .iter()
            .find(|s| s.id == id)
            .map(|s| s.short_id.clone())
            .unwrap()
    };
    // A and B share "019abc12-34": one character more tells them apart.
    assert_eq!(short(A), "019abc12-345");
    assert_eq!(short(B), "019abc12-349");
    assert_eq!(short(C), "019f0000");
    assert_eq!(
        store.short_id_blocking(IdKind::Session, A).unwrap(),
        short(A)
    );
    assert_eq!(
        store.short_id(IdKind::Session, C).await.unwrap(),
        "019f0000"
    );
    assert_eq!(
        store
            .short_ids_blocking(IdKind::Session, &[A.to_owned(), C.to_owned()])
            .unwrap(),
        [short(A), short(C)]
    );

    // Every short form, and any longer prefix, the full id and upper case find the session.
    for (prefix, id) in [
        (short(A), A),
        (short(B), B),
        (short(C), C),
        ("019abc12-3456-7".to_owned(), A),
        (B.to_owned(), B),
        ("019F0".to_owned(), C),
    ] {
        let found = store
            .find_session_blocking("/elsewhere", &SessionRef::Id(prefix.clone()))
            .unwrap();
        assert_eq!(found.id, id, "{prefix}");
        assert_eq!(found.short_id, short(id));
        assert_eq!(
            store.resolve_id_blocking(IdKind::Session, &prefix).unwrap(),
            id
        );
    }
    let latest = store
        .find_session_blocking("/w", &SessionRef::Latest)
        .unwrap();
    assert_eq!(latest.short_id, short(latest.id.as_str()));

    // The 8-character form the old message printed is ambiguous: the error names both.
    let text = not_found(
        store
            .find_session_blocking("/w", &SessionRef::Id("019abc12".to_owned()))
            .unwrap_err(),
    );
    assert!(
        text.contains("'019abc12' matches more than one session")
            && text.contains("019abc12-345 (\"fix the build\")")
            && text.contains("019abc12-349 (\"write docs\")")
            && !text.contains("019f0000")
            && text.contains("Give more of the id"),
        "{text}"
    );
    let text = not_found(
        store
            .find_session_blocking("/w", &SessionRef::Id("nope".to_owned()))
            .unwrap_err(),
    );
    assert!(text.contains("no session matches 'nope'"), "{text}");
    let text = not_found(
        store
            .find_session_blocking("/w", &SessionRef::Id(" ".to_owned()))
            .unwrap_err(),
    );
    assert!(text.contains("no session id given"), "{text}");
}

#[tokio::test]
async fn an_ambiguous_prefix_lists_five_candidates_and_says_there_are_more() {
    let tmp = tempfile::tempdir().unwrap();
    let store = Store::open(&tmp.path().join("atto.db")).unwrap();
    for i in 0..7 {
        session(
            &store,
            &format!("019abc12-0000-7000-8000-00000000000{i}"),
            "t",
        )
        .await;
    }
    let text = not_found(
        store
            .resolve_id_blocking(IdKind::Session, "019abc12")
            .unwrap_err(),
    );
    assert_eq!(
        text.matches("019abc12-0000-7000-8000-0000000000").count(),
        5,
        "{text}"
    );
    assert!(text.contains(", and more"), "{text}");
}

#[tokio::test]
async fn plan_ids_get_short_forms_among_plans_only() {
    let tmp = tempfile::tempdir().unwrap();
    let store = Store::open(&tmp.path().join("atto.db")).unwrap();
    session(&store, A, "t").await;
    for id in [B, C] {
        let plan = PendingPlan {
            id: id.to_owned(),
            task: "t".to_owned(),
            created_at: 1,
            updated_at: 1,
            proposed_changes: Vec::new(),
            exploration_summary: String::new(),
            status: PlanStatus::Pending,
            session_id: A.to_owned(),
        };
        store.create_plan(&plan).await.unwrap();
    }
    // B shares nothing past 8 characters with the other plan; session A does not count.
    assert_eq!(
        store.short_id_blocking(IdKind::Plan, B).unwrap(),
        "019abc12"
    );
    assert_eq!(store.resolve_id_blocking(IdKind::Plan, "019a").unwrap(), B);
    assert_eq!(
        store.short_id_blocking(IdKind::Session, A).unwrap(),
        "019abc12"
    );
    let text = not_found(
        store
            .resolve_id_blocking(IdKind::TaskPlan, "019a")
            .unwrap_err(),
    );
    assert!(text.contains("no task plan matches '019a'"), "{text}");
}
