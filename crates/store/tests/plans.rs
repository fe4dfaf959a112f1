// Tests may unwrap: a failed unwrap is a failed test, with its location.
#![allow(clippy::unwrap_used, clippy::expect_used)]

//! Plan mode's pending plans through the public handle: queueing changes, recording
//! decisions, reading back the open plan and the history, damaged rows, and durability
//! across closing and reopening the database file.

use atto_protocol::{ChangeStatus, PendingPlan, PlanStatus, ProposedChange};
use atto_store::StoreError;
use rusqlite::Connection;
use serde_json::json;

mod common;
use common::{open, session, tamper, temp_store};

fn plan(id: &str, session: &str, created_at: i64) -> PendingPlan {
    PendingPlan {
        id: id.to_owned(),
        task: format!("task of {id}"),
        created_at,
        updated_at: created_at,
        proposed_changes: Vec::new(),
        exploration_summary: "read_file src/lib.rs; grep fn main".to_owned(),
        status: PlanStatus::Pending,
        session_id: session.to_owned(),
    }
}

fn change(plan: &str, order: u32, proposed_at: i64) -> ProposedChange {
    ProposedChange {
        id: format!("{plan}-c{order}"),
        tool: "edit_file".to_owned(),
        args: json!({
            "path": format!("src/f{order}.rs"),
            "old_string": "a\n\"quoted\" ünïcode ✓",
            "new_string": "b",
            "nested": {"list": [1, 2.5, null, true], "empty": {}},
        }),
        reason: format!("step {order}"),
        order,
        proposed_at,
        tool_call_id: format!("call_{order}"),
        path: Some(format!("src/f{order}.rs")),
        base_hash: Some(format!("sha256:{order:064}")),
        status: ChangeStatus::Pending,
        result: None,
    }
}

fn command(plan: &str, order: u32, proposed_at: i64) -> ProposedChange {
    ProposedChange {
        tool: "bash".to_owned(),
        args: json!({"command": "cargo fmt"}),
        path: None,
        base_hash: None,
        ..change(plan, order, proposed_at)
    }
}

/// A plan with changes 1..=n, as `open_plan` should return it once they are added.
fn with_changes(mut p: PendingPlan, changes: Vec<ProposedChange>) -> PendingPlan {
    p.updated_at = changes.last().map_or(p.updated_at, |c| c.proposed_at);
    p.proposed_changes = changes;
    p
}

#[tokio::test]
async fn changes_added_one_by_one_come_back_in_order_with_their_args() {
    let (_tmp, store) = temp_store();
    let empty = plan("p1", "s1", 100);
    store.create_plan(&empty).await.unwrap();
    assert_eq!(store.open_plan("s1").await.unwrap(), Some(empty.clone()));

    let changes = vec![
        change("p1", 1, 101),
        command("p1", 2, 102),
        change("p1", 3, 103),
    ];
    for c in &changes {
        store.add_change("p1", c).await.unwrap();
    }
    let got = store.open_plan("s1").await.unwrap().unwrap();
    let orders: Vec<u32> = got.proposed_changes.iter().map(|c| c.order).collect();
    assert_eq!(orders, [1, 2, 3]);
    assert_eq!(got.proposed_changes[0].args, changes[0].args);
    assert_eq!(got.proposed_changes[1].path, None);
    assert_eq!(got.updated_at, 103, "updated_at follows the last change");
    assert_eq!(got, with_changes(empty, changes));
}

#[test]
fn a_plan_created_with_changes_comes_back_whole() {
    let (_tmp, store) = temp_store();
    let mut decided = change("p1", 2, 12);
    decided.status = ChangeStatus::Conflict;
    decided.result = Some("src/f2.rs changed on disk since it was proposed".to_owned());
    let mut p = plan("p1", "s1", 10);
    p.status = PlanStatus::PartiallyApproved;
    // Stored out of order: the store orders by position, not by insertion.
    p.proposed_changes = vec![decided, change("p1", 1, 11)];
    store.create_plan_blocking(&p).unwrap();
    let got = store.open_plan_blocking("s1").unwrap().unwrap();
    p.proposed_changes.reverse();
    assert_eq!(got, p);
}

#[test]
fn a_partial_decision_keeps_the_plan_open() {
    let (_tmp, store) = temp_store();
    store.create_plan_blocking(&plan("p1", "s1", 10)).unwrap();
    for n in 1..=3 {
        store
            .add_change_blocking("p1", &change("p1", n, 10 + i64::from(n)))
            .unwrap();
    }
    store
        .update_plan_blocking(
            "p1",
            PlanStatus::PartiallyApproved,
            &[
                ("p1-c1".to_owned(), ChangeStatus::Applied, Some("ok".into())),
                ("p1-c2".to_owned(), ChangeStatus::Applied, None),
            ],
            50,
        )
        .unwrap();
    let got = store.open_plan_blocking("s1").unwrap().unwrap();
    assert_eq!(got.status, PlanStatus::PartiallyApproved);
    assert_eq!(got.updated_at, 50);
    let states: Vec<(ChangeStatus, Option<&str>)> = got
        .proposed_changes
        .iter()
        .map(|c| (c.status, c.result.as_deref()))
        .collect();
    assert_eq!(
        states,
        [
            (ChangeStatus::Applied, Some("ok")),
            (ChangeStatus::Applied, None),
            (ChangeStatus::Pending, None),
        ]
    );
}

#[tokio::test]
async fn a_fully_decided_plan_is_no_longer_open_but_stays_in_the_history() {
    let (_tmp, store) = temp_store();
    for (id, at, status, outcome) in [
        ("old", 10, PlanStatus::Approved, ChangeStatus::Applied),
        ("new", 20, PlanStatus::Rejected, ChangeStatus::Rejected),
    ] {
        store.create_plan(&plan(id, "s1", at)).await.unwrap();
        store.add_change(id, &change(id, 1, at + 1)).await.unwrap();
        store.add_change(id, &command(id, 2, at + 2)).await.unwrap();
        let decisions: Vec<_> = (1..=2)
            .map(|n| (format!("{id}-c{n}"), outcome, None))
            .collect();
        store
            .update_plan(id, status, &decisions, at + 5)
            .await
            .unwrap();
    }
    assert_eq!(store.open_plan("s1").await.unwrap(), None);
    let history = store.plans("s1").await.unwrap();
    let summary: Vec<(&str, PlanStatus, usize)> = history
        .iter()
        .map(|p| (p.id.as_str(), p.status, p.proposed_changes.len()))
        .collect();
    assert_eq!(
        summary,
        [
            ("new", PlanStatus::Rejected, 2),
            ("old", PlanStatus::Approved, 2)
        ]
    );
    assert!(
        history[0]
            .proposed_changes
            .iter()
            .all(|c| c.status == ChangeStatus::Rejected)
    );
    assert_eq!(store.plans_blocking("s1").unwrap(), history);
}

#[test]
fn only_the_newest_open_plan_of_the_session_itself_is_returned() {
    let (_tmp, store) = temp_store();
    store.create_plan_blocking(&plan("a", "s1", 10)).unwrap();
    store.create_plan_blocking(&plan("b", "s1", 20)).unwrap();
    store
        .create_plan_blocking(&plan("other", "s2", 30))
        .unwrap();
    store
        .add_change_blocking("other", &change("other", 1, 31))
        .unwrap();
    assert_eq!(store.open_plan_blocking("s1").unwrap().unwrap().id, "b");
    let s1: Vec<String> = store
        .plans_blocking("s1")
        .unwrap()
        .into_iter()
        .map(|p| p.id)
        .collect();
    assert_eq!(s1, ["b", "a"]);
    assert_eq!(store.open_plan_blocking("s2").unwrap().unwrap().id, "other");
    assert_eq!(store.open_plan_blocking("s3").unwrap(), None);
    assert!(store.plans_blocking("s3").unwrap().is_empty());
}

#[test]
fn a_plan_survives_closing_and_reopening_the_database() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("atto.db");
    let store = open(&path);
    session(&store, "s1");
    let p = plan("p1", "s1", 10);
    store.create_plan_blocking(&p).unwrap();
    let changes = vec![change("p1", 1, 11), command("p1", 2, 12)];
    for c in &changes {
        store.add_change_blocking("p1", c).unwrap();
    }
    drop(store);

    let store = open(&path);
    assert_eq!(
        store.open_plan_blocking("s1").unwrap(),
        Some(with_changes(p, changes))
    );
}

#[test]
fn a_damaged_row_is_a_clear_error_and_changes_nothing() {
    let (tmp, store) = temp_store();
    let path = tmp.path().join("atto.db");
    store.create_plan_blocking(&plan("p1", "s1", 10)).unwrap();
    for n in 1..=3 {
        store
            .add_change_blocking("p1", &change("p1", n, 10 + i64::from(n)))
            .unwrap();
    }
    // Each damage is met before the ones made earlier, so each case sees its own.
    let cases = [
        (
            "UPDATE proposed_changes SET status = 'queued' WHERE id = 'p1-c3'",
            "change 3 (id p1-c3) of plan p1",
            "unknown change status 'queued'",
        ),
        (
            "UPDATE proposed_changes SET args = '{\"path\": ' WHERE id = 'p1-c2'",
            "change 2 (id p1-c2) of plan p1",
            "not JSON",
        ),
        (
            "UPDATE pending_plans SET status = 'paused' WHERE id = 'p1'",
            "plan p1",
            "unknown plan status 'paused'",
        ),
    ];
    for (sql, what, detail) in cases {
        tamper(&path, sql);
        for err in [
            store.open_plan_blocking("s1").unwrap_err(),
            store.plans_blocking("s1").unwrap_err(),
        ] {
            assert!(matches!(err, StoreError::Unreadable { .. }), "{err:?}");
            let text = err.to_string();
            for part in [what, detail, "nothing was changed"] {
                assert!(text.contains(part), "{part:?} missing in: {text}");
            }
            assert!(text.contains(&path.display().to_string()), "{text}");
        }
    }
    // Reading changed nothing: the damaged rows are as they were left.
    let conn = Connection::open(&path).unwrap();
    let (args, status): (String, String) = conn
        .query_row(
            "SELECT args, (SELECT status FROM pending_plans WHERE id = 'p1') \
             FROM proposed_changes WHERE id = 'p1-c2'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!((args.as_str(), status.as_str()), ("{\"path\": ", "paused"));
}

#[test]
fn a_decision_naming_an_unknown_change_records_nothing() {
    let (_tmp, store) = temp_store();
    store.create_plan_blocking(&plan("p1", "s1", 10)).unwrap();
    store
        .add_change_blocking("p1", &change("p1", 1, 11))
        .unwrap();
    store.create_plan_blocking(&plan("p2", "s1", 20)).unwrap();
    store
        .add_change_blocking("p2", &change("p2", 1, 21))
        .unwrap();
    let before = store.plans_blocking("s1").unwrap();

    // p2-c1 exists, but in another plan: the whole update is undone.
    let err = store
        .update_plan_blocking(
            "p1",
            PlanStatus::Approved,
            &[
                ("p1-c1".to_owned(), ChangeStatus::Applied, None),
                ("p2-c1".to_owned(), ChangeStatus::Applied, None),
            ],
            99,
        )
        .unwrap_err();
    assert!(matches!(err, StoreError::NotFound(_)), "{err:?}");
    let text = err.to_string();
    assert!(
        text.contains("p2-c1") && text.contains("no decision was recorded"),
        "{text}"
    );
    assert_eq!(store.plans_blocking("s1").unwrap(), before);

    let err = store
        .update_plan_blocking("nope", PlanStatus::Approved, &[], 99)
        .unwrap_err();
    assert!(matches!(err, StoreError::NotFound(_)), "{err:?}");
    assert_eq!(store.plans_blocking("s1").unwrap(), before);
}

#[test]
fn a_change_for_a_missing_plan_or_a_plan_for_a_missing_session_is_refused() {
    let (_tmp, store) = temp_store();
    let err = store
        .add_change_blocking("nope", &change("nope", 1, 1))
        .unwrap_err();
    assert!(matches!(err, StoreError::NotFound(_)), "{err:?}");
    assert!(
        err.to_string().contains("the change was not queued"),
        "{err}"
    );

    let mut p = plan("p1", "ghost", 1);
    p.proposed_changes = vec![change("p1", 1, 1)];
    let err = store.create_plan_blocking(&p).unwrap_err();
    assert!(matches!(err, StoreError::NotFound(_)), "{err:?}");
    assert!(err.to_string().contains("session ghost"), "{err}");
    assert!(store.plans_blocking("ghost").unwrap().is_empty());
}
