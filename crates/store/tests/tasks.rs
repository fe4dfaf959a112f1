// Tests may unwrap: a failed unwrap is a failed test, with its location.
#![allow(clippy::unwrap_used, clippy::expect_used)]

//! Tasks and goals through the public handle: round trips, dependencies replaced on save,
//! refusals that store nothing, damaged rows, and durability across closing and reopening
//! the database file. (Rows going with their session is checked in the migration's unit
//! tests: the store has no way to delete a session.)

use atto_protocol::{Goal, GoalStatus, Task, TaskState};
use atto_store::StoreError;
use rusqlite::Connection;

mod common;
use common::{open, session, tamper, temp_store};

fn task(id: &str, number: u32, depends_on: &[&str]) -> Task {
    Task {
        id: id.to_owned(),
        number,
        title: format!("step {number}: \"quoted\" ünïcode ✓"),
        detail: format!("detail of {id}\nsecond line"),
        state: if depends_on.is_empty() {
            TaskState::Pending
        } else {
            TaskState::Blocked
        },
        depends_on: depends_on.iter().map(|d| (*d).to_owned()).collect(),
        created_at: 100 + i64::from(number),
        updated_at: 100 + i64::from(number),
        result: None,
    }
}

fn goal(id: &str, created_at: i64, budget: Option<u64>) -> Goal {
    Goal {
        id: id.to_owned(),
        objective: format!("objective of {id}"),
        status: GoalStatus::Active,
        token_budget: budget,
        tokens_used: 0,
        time_used_ms: 0,
        created_at,
        updated_at: created_at,
    }
}

#[tokio::test]
async fn tasks_come_back_in_number_order_with_their_dependencies() {
    let (_tmp, store) = temp_store();
    let tasks = [
        task("t1", 1, &[]),
        task("t2", 2, &[]),
        task("t3", 3, &["t1", "t2"]),
        task("t4", 4, &["t3"]),
    ];
    // Saved out of number order (each after its dependencies).
    for t in [&tasks[1], &tasks[0], &tasks[2], &tasks[3]] {
        store.save_task(t, "s1").await.unwrap();
    }
    assert_eq!(store.tasks("s1").await.unwrap(), tasks);
    assert!(store.tasks("s2").await.unwrap().is_empty());

    // Dependencies come back in the order of their numbers, however they were given.
    let mut reordered = tasks[2].clone();
    reordered.depends_on = vec!["t2".to_owned(), "t1".to_owned(), "t2".to_owned()];
    store.save_task(&reordered, "s1").await.unwrap();
    assert_eq!(store.tasks("s1").await.unwrap()[2].depends_on, ["t1", "t2"]);
}

#[test]
fn saving_again_updates_the_task_and_replaces_its_dependencies() {
    let (_tmp, store) = temp_store();
    for t in [
        task("t1", 1, &[]),
        task("t2", 2, &[]),
        task("t3", 3, &["t1"]),
    ] {
        store.save_task_blocking(&t, "s1").unwrap();
    }
    let mut t3 = task("t3", 3, &["t2"]);
    t3.state = TaskState::Failed;
    t3.result = Some("cargo test: 2 failures".to_owned());
    t3.title = "renamed".to_owned();
    t3.created_at = 999;
    t3.updated_at = 500;
    store.save_task_blocking(&t3, "s1").unwrap();
    let got = store.tasks_blocking("s1").unwrap();
    assert_eq!(got.len(), 3);
    assert_eq!(got[2].depends_on, ["t2"], "t1 was dropped, t2 added");
    assert_eq!(got[2].state, TaskState::Failed);
    assert_eq!(got[2].result.as_deref(), Some("cargo test: 2 failures"));
    assert_eq!(got[2].title, "renamed");
    assert_eq!(got[2].updated_at, 500);
    assert_eq!(got[2].created_at, 103, "created_at stays as first saved");

    t3.depends_on.clear();
    store.save_task_blocking(&t3, "s1").unwrap();
    assert!(store.tasks_blocking("s1").unwrap()[2].depends_on.is_empty());
}

#[test]
fn a_refused_task_stores_nothing_and_says_why() {
    let (_tmp, store) = temp_store();
    store.save_task_blocking(&task("t1", 1, &[]), "s1").unwrap();
    store.save_task_blocking(&task("o1", 1, &[]), "s2").unwrap();
    let before = store.tasks_blocking("s1").unwrap();

    let cases: [(Task, &str, &str); 6] = [
        (task("t2", 2, &["t1", "nope"]), "Invalid", "depends on nope"),
        (
            task("t2", 2, &["o1"]),
            "Invalid",
            "not a stored task of session s1",
        ),
        (task("t2", 2, &["t2"]), "Invalid", "depends on itself"),
        (task("t2", 1, &[]), "Invalid", "task t1 already is"),
        (task("o1", 2, &[]), "Invalid", "another session than s1"),
        (task("t2", 0, &[]), "Invalid", "number 0"),
    ];
    for (t, variant, part) in cases {
        let err = store.save_task_blocking(&t, "s1").unwrap_err();
        assert!(format!("{err:?}").starts_with(variant), "{err:?}");
        let text = err.to_string();
        assert!(
            text.contains(part) && text.contains("nothing was stored"),
            "{part:?} missing in: {text}"
        );
        assert_eq!(store.tasks_blocking("s1").unwrap(), before, "{text}");
    }
    assert_eq!(store.tasks_blocking("s2").unwrap(), [task("o1", 1, &[])]);

    let err = store
        .save_task_blocking(&task("g1", 1, &[]), "ghost")
        .unwrap_err();
    assert!(matches!(err, StoreError::NotFound(_)), "{err:?}");
    assert!(err.to_string().contains("session ghost"), "{err}");
    assert!(store.tasks_blocking("ghost").unwrap().is_empty());
}

#[tokio::test]
async fn goals_come_back_newest_first_and_can_be_updated_and_deleted() {
    let (_tmp, store) = temp_store();
    let (g1, g2, g3) = (
        goal("g1", 10, None),
        goal("g2", 20, Some(50_000)),
        goal("g3", 20, Some(0)),
    );
    for g in [&g1, &g2, &g3] {
        store.save_goal(g, "s1").await.unwrap();
    }
    store
        .save_goal(&goal("other", 30, None), "s2")
        .await
        .unwrap();
    // Same created_at: the one saved later is newer.
    assert_eq!(
        store.goals("s1").await.unwrap(),
        [g3.clone(), g2.clone(), g1.clone()]
    );

    let mut spent = g2.clone();
    spent.status = GoalStatus::BudgetLimited;
    spent.tokens_used = 50_123;
    spent.time_used_ms = 61_000;
    spent.updated_at = 40;
    spent.created_at = 1;
    store.save_goal(&spent, "s1").await.unwrap();
    spent.created_at = 20;
    assert_eq!(
        store.goals("s1").await.unwrap(),
        [g3.clone(), spent, g1.clone()],
        "updated in place, created_at kept"
    );

    assert!(store.delete_goal("g3", "s1").await.unwrap());
    assert!(
        !store.delete_goal("g3", "s1").await.unwrap(),
        "already gone"
    );
    assert!(
        !store.delete_goal("other", "s1").await.unwrap(),
        "a goal of another session is not deleted"
    );
    assert_eq!(store.goals("s1").await.unwrap().len(), 2);
    assert_eq!(store.goals("s2").await.unwrap().len(), 1);
}

#[test]
fn a_refused_goal_stores_nothing_and_says_why() {
    let (_tmp, store) = temp_store();
    store
        .save_goal_blocking(&goal("g1", 10, None), "s1")
        .unwrap();

    let err = store
        .save_goal_blocking(&goal("g1", 10, None), "s2")
        .unwrap_err();
    assert!(matches!(err, StoreError::Invalid { .. }), "{err:?}");
    assert!(err.to_string().contains("another session than s2"), "{err}");

    let huge = goal("g2", 11, Some(u64::MAX));
    let err = store.save_goal_blocking(&huge, "s1").unwrap_err();
    assert!(matches!(err, StoreError::Invalid { .. }), "{err:?}");
    let text = err.to_string();
    assert!(
        text.contains("token budget 18446744073709551615 is too large")
            && text.contains("nothing was stored"),
        "{text}"
    );

    let err = store
        .save_goal_blocking(&goal("g3", 12, None), "ghost")
        .unwrap_err();
    assert!(matches!(err, StoreError::NotFound(_)), "{err:?}");
    assert_eq!(store.goals_blocking("s1").unwrap(), [goal("g1", 10, None)]);
    assert!(store.goals_blocking("s2").unwrap().is_empty());
}

#[test]
fn tasks_and_goals_survive_closing_and_reopening_the_database() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("atto.db");
    let store = open(&path);
    session(&store, "s1");
    let tasks = [task("t1", 1, &[]), task("t2", 2, &["t1"])];
    for t in &tasks {
        store.save_task_blocking(t, "s1").unwrap();
    }
    let g = Goal {
        tokens_used: 1234,
        time_used_ms: 5678,
        status: GoalStatus::Paused,
        ..goal("g1", 10, Some(9000))
    };
    store.save_goal_blocking(&g, "s1").unwrap();
    drop(store);

    let store = open(&path);
    assert_eq!(store.tasks_blocking("s1").unwrap(), tasks);
    assert_eq!(store.goals_blocking("s1").unwrap(), [g]);
}

#[test]
fn a_damaged_row_is_a_clear_error_and_changes_nothing() {
    let (tmp, store) = temp_store();
    let path = tmp.path().join("atto.db");
    for t in [task("t1", 1, &[]), task("t2", 2, &["t1"])] {
        store.save_task_blocking(&t, "s1").unwrap();
    }
    store
        .save_goal_blocking(&goal("g1", 10, Some(5)), "s1")
        .unwrap();

    let task_cases = [
        (
            "UPDATE tasks SET state = 'done' WHERE id = 't2'",
            "task 2 (id t2) of session s1",
            "unknown task state 'done'",
        ),
        (
            "UPDATE tasks SET number = -1 WHERE id = 't1'",
            "task -1 (id t1) of session s1",
            "number -1 is out of range",
        ),
    ];
    let goal_cases = [
        (
            "UPDATE goals SET tokens_used = -3 WHERE id = 'g1'",
            "goal g1 of session s1",
            "tokens used -3 is negative",
        ),
        (
            "UPDATE goals SET status = 'finished' WHERE id = 'g1'",
            "goal g1 of session s1",
            "unknown goal status 'finished'",
        ),
    ];
    let check = |err: StoreError, what: &str, detail: &str| {
        assert!(matches!(err, StoreError::Unreadable { .. }), "{err:?}");
        let text = err.to_string();
        for part in [what, detail, "nothing was changed"] {
            assert!(text.contains(part), "{part:?} missing in: {text}");
        }
        assert!(text.contains(&path.display().to_string()), "{text}");
    };
    for (sql, what, detail) in task_cases {
        tamper(&path, sql);
        check(store.tasks_blocking("s1").unwrap_err(), what, detail);
    }
    for (sql, what, detail) in goal_cases {
        tamper(&path, sql);
        check(store.goals_blocking("s1").unwrap_err(), what, detail);
    }
    // Other sessions read fine, and reading changed nothing.
    assert!(store.tasks_blocking("s2").unwrap().is_empty());
    let conn = Connection::open(&path).unwrap();
    let (state, status): (String, String) = conn
        .query_row(
            "SELECT state, (SELECT status FROM goals WHERE id = 'g1') FROM tasks WHERE id = 't2'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!((state.as_str(), status.as_str()), ("done", "finished"));
}
