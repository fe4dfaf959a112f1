//! Tests of the task graph: numbering, dependencies, unblocking, failed and skipped
//! dependencies, which state may follow which, handing out changes, restoring stored
//! tasks, and what each refusal says.

use super::*;

use TaskState::{Blocked, Completed, Failed, InProgress, Pending, Skipped};

fn numbers(tasks: &[&Task]) -> Vec<u32> {
    tasks.iter().map(|t| t.number).collect()
}

fn states(graph: &TaskGraph) -> Vec<TaskState> {
    graph.list().iter().map(|t| t.state).collect()
}

/// A graph of tasks added in order, each with the given dependencies.
fn graph(deps: &[&[u32]]) -> TaskGraph {
    let mut g = TaskGraph::new();
    for (i, d) in deps.iter().enumerate() {
        g.add(&format!("task {}", i + 1), "", d).unwrap();
    }
    g
}

#[test]
fn tasks_are_numbered_in_order_and_start_pending_or_blocked() {
    let mut g = TaskGraph::new();
    let first = g.add("  write the parser ", " details\n", &[]).unwrap();
    assert_eq!((first.number, first.state), (1, Pending));
    assert_eq!(
        (first.title.as_str(), first.detail.as_str()),
        ("write the parser", "details")
    );
    let first_id = first.id.clone();
    g.add("write the printer", "", &[]).unwrap();
    let third = g.add("test both", "", &[2, 1, 2]).unwrap();
    assert_eq!((third.number, third.state), (3, Blocked));
    let second_id = g.get(2).unwrap().id.clone();
    assert_eq!(
        g.get(3).unwrap().depends_on,
        [first_id, second_id],
        "in number order, repeats dropped"
    );
    assert_eq!(numbers(&g.ready()), [1, 2]);
    assert!(g.get(4).is_none());
    assert_ne!(g.get(1).unwrap().id, g.get(2).unwrap().id);
}

#[test]
fn a_task_with_bad_dependencies_or_no_title_is_not_added() {
    let mut g = graph(&[&[], &[1]]);
    let cases: [(&str, &[u32], TaskError, &str); 4] = [
        (
            "x",
            &[1, 7],
            TaskError::UnknownDependency { number: 7 },
            "task 7 does not exist",
        ),
        (
            "x",
            &[3],
            TaskError::SelfDependency { number: 3 },
            "cannot depend on itself",
        ),
        (
            "x",
            &[0],
            TaskError::UnknownDependency { number: 0 },
            "task 0 does not exist",
        ),
        (" \n", &[], TaskError::EmptyTitle, "needs a title"),
    ];
    for (title, deps, want, text) in cases {
        let err = g.add(title, "", deps).unwrap_err();
        assert_eq!(err, want);
        let msg = err.to_string();
        assert!(msg.contains(text) && msg.contains("was not added"), "{msg}");
        assert!(!msg.contains('\n'), "one line: {msg}");
        assert_eq!(g.list().len(), 2);
    }
    assert_eq!(
        g.add("x", "", &[2]).unwrap().number,
        3,
        "no number was used up"
    );
}

#[test]
fn only_a_pending_task_starts_and_a_blocked_one_names_what_it_waits_for() {
    let mut g = graph(&[&[], &[], &[1, 2]]);
    assert_eq!(g.start(2).unwrap().state, InProgress);
    let err = g.start(3).unwrap_err();
    assert_eq!(
        err,
        TaskError::Blocked {
            number: 3,
            waiting: vec![(1, Pending), (2, InProgress)]
        }
    );
    assert_eq!(
        err.to_string(),
        "task 3 is blocked by task 1 (pending), task 2 (in progress); nothing was \
         changed. Finish those first (retry a failed one), or skip task 3."
    );
    let err = g.start(2).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("task 2 is in progress, so it cannot be started"),
        "{err}"
    );
    g.finish(1, Completed, None).unwrap();
    let err = g.start(1).unwrap_err();
    assert!(err.to_string().contains("add a new task"), "{err}");
    assert_eq!(
        g.start(9).unwrap_err().to_string(),
        "there is no task 9 (tasks are numbered 1 to 3); nothing was changed. List the \
         tasks to see their numbers."
    );
    assert_eq!(g.waiting_for(3), [(2, InProgress)]);
    assert!(
        TaskGraph::new()
            .start(1)
            .unwrap_err()
            .to_string()
            .contains("there are no tasks yet")
    );
}

#[test]
fn a_chain_unblocks_one_link_at_a_time() {
    // 1 ← 2 ← 3: each waits for the one before.
    let mut g = graph(&[&[], &[1], &[2]]);
    assert_eq!(states(&g), [Pending, Blocked, Blocked]);
    g.start(1).unwrap();
    let done = g
        .finish(1, Completed, Some("parser written".to_owned()))
        .unwrap();
    assert_eq!(
        done,
        Finished {
            unblocked: vec![2],
            stranded: vec![]
        }
    );
    assert_eq!(states(&g), [Completed, Pending, Blocked]);
    assert_eq!(g.get(1).unwrap().result.as_deref(), Some("parser written"));
    assert_eq!(numbers(&g.ready()), [2]);
    g.start(2).unwrap();
    assert_eq!(g.finish(2, Completed, None).unwrap().unblocked, [3]);
    assert_eq!(numbers(&g.ready()), [3]);
    assert!(g.finish(3, Completed, None).unwrap().unblocked.is_empty());
    assert!(g.ready().is_empty());
}

#[test]
fn a_task_with_several_dependencies_waits_for_all_of_them() {
    // 4 needs 2 and 3, which both need 1.
    let mut g = graph(&[&[], &[1], &[1], &[2, 3]]);
    assert_eq!(g.finish(1, Completed, None).unwrap().unblocked, [2, 3]);
    assert!(g.finish(2, Completed, None).unwrap().unblocked.is_empty());
    assert_eq!(g.get(4).unwrap().state, Blocked);
    assert_eq!(g.finish(3, Completed, None).unwrap().unblocked, [4]);
}

#[test]
fn skipping_counts_as_out_of_the_way_even_for_a_blocked_task() {
    let mut g = graph(&[&[], &[1], &[2]]);
    // Task 2 is blocked but may be skipped; that frees task 3 although 1 is not done.
    let done = g.finish(2, Skipped, Some("not needed".to_owned())).unwrap();
    assert_eq!(done.unblocked, [3]);
    assert_eq!(states(&g), [Pending, Skipped, Pending]);
    let mut g = graph(&[&[], &[1]]);
    assert_eq!(g.finish(1, Skipped, None).unwrap().unblocked, [2]);
}

#[test]
fn a_failed_dependency_strands_its_dependents_until_retried() {
    // 2 and 4 need 1; 3 needs 2; 5 is independent.
    let mut g = graph(&[&[], &[1], &[2], &[1], &[]]);
    g.start(1).unwrap();
    let done = g.finish(1, Failed, Some("tests fail".to_owned())).unwrap();
    assert_eq!(
        done,
        Finished {
            unblocked: vec![],
            stranded: vec![2, 3, 4]
        }
    );
    assert_eq!(states(&g), [Failed, Blocked, Blocked, Blocked, Pending]);
    let err = g.start(2).unwrap_err();
    assert_eq!(
        err,
        TaskError::Blocked {
            number: 2,
            waiting: vec![(1, Failed)]
        }
    );
    for state in [Completed, Failed] {
        assert_eq!(g.finish(2, state, None).unwrap_err(), err);
    }
    // Skipping a stranded task frees its own dependents.
    assert_eq!(
        g.finish(4, Skipped, None).unwrap().stranded,
        Vec::<u32>::new()
    );

    let retried = g.retry(1).unwrap();
    assert_eq!((retried.state, retried.result.clone()), (Pending, None));
    assert_eq!(
        g.get(2).unwrap().state,
        Blocked,
        "still waits for the retry"
    );
    g.start(1).unwrap();
    assert_eq!(g.finish(1, Completed, None).unwrap().unblocked, [2]);
    let err = g.retry(1).unwrap_err();
    assert!(err.to_string().contains("cannot be retried"), "{err}");
}

#[test]
fn finishing_takes_only_finishing_states_and_happens_once() {
    let mut g = graph(&[&[]]);
    for state in [Pending, Blocked, InProgress] {
        let err = g.finish(1, state, None).unwrap_err();
        assert_eq!(err, TaskError::NotAFinish { state });
        assert!(
            err.to_string().contains("Use completed, failed or skipped"),
            "{err}"
        );
    }
    assert_eq!(g.get(1).unwrap().state, Pending);
    // A pending task may be completed without being started.
    g.finish(1, Completed, None).unwrap();
    let err = g.finish(1, Skipped, None).unwrap_err();
    assert_eq!(
        err,
        TaskError::WrongState {
            number: 1,
            state: Completed,
            action: "skipped"
        }
    );
    assert_eq!(
        err.to_string(),
        "task 1 is completed, so it cannot be skipped; nothing was changed. It is \
         finished; add a new task for more work."
    );
}

#[test]
fn changes_are_handed_out_once_for_saving() {
    let mut g = graph(&[&[], &[1], &[]]);
    assert_eq!(g.take_changed().len(), 3);
    assert!(g.take_changed().is_empty());
    g.finish(1, Completed, None).unwrap();
    let changed: Vec<(u32, TaskState)> = g
        .take_changed()
        .iter()
        .map(|t| (t.number, t.state))
        .collect();
    assert_eq!(changed, [(1, Completed), (2, Pending)]);
    assert!(g.start(9).is_err());
    assert!(g.take_changed().is_empty(), "a refusal changes nothing");
}

fn stored(number: u32, state: TaskState, deps: &[u32]) -> Task {
    Task {
        id: format!("t{number}"),
        number,
        title: format!("task {number}"),
        detail: String::new(),
        state,
        depends_on: deps.iter().map(|d| format!("t{d}")).collect(),
        created_at: 1,
        updated_at: 1,
        result: None,
    }
}

#[test]
fn stored_tasks_rebuild_the_same_graph_in_any_order() {
    let mut g = graph(&[&[], &[1], &[1, 2]]);
    g.finish(1, Completed, None).unwrap();
    g.start(2).unwrap();
    let mut tasks = g.list().to_vec();
    tasks.reverse();
    let mut back = TaskGraph::from_tasks(tasks).unwrap();
    assert_eq!(back.list(), g.list());
    assert!(back.take_changed().is_empty());
    assert_eq!(back.add("next", "", &[3]).unwrap().number, 4);
    assert_eq!(back.finish(2, Completed, None).unwrap().unblocked, [3]);
}

#[test]
fn stored_states_that_disagree_with_their_dependencies_are_repaired() {
    // Saved before task 1's completion reached the store, and the other way round.
    let tasks = vec![
        stored(1, Completed, &[]),
        stored(2, Blocked, &[1]),
        stored(3, Pending, &[2]),
        stored(4, InProgress, &[]),
    ];
    let mut g = TaskGraph::from_tasks(tasks).unwrap();
    assert_eq!(states(&g), [Completed, Pending, Blocked, InProgress]);
    let repaired: Vec<u32> = g.take_changed().iter().map(|t| t.number).collect();
    assert_eq!(repaired, [2, 3]);
}

#[test]
fn stored_tasks_that_contradict_each_other_are_refused() {
    let cycle = vec![
        stored(1, Blocked, &[3]),
        stored(2, Blocked, &[1]),
        stored(3, Blocked, &[2]),
        stored(4, Pending, &[]),
    ];
    let err = TaskGraph::from_tasks(cycle).unwrap_err();
    assert_eq!(
        err,
        TaskError::Cycle {
            numbers: vec![1, 3, 2, 1]
        }
    );
    assert!(
        err.to_string()
            .contains("tasks 1 → 3 → 2 → 1 depend on each other"),
        "{err}"
    );

    let mut twice = stored(2, Pending, &[]);
    twice.id = "t1".to_owned();
    let mut zero = stored(1, Pending, &[]);
    zero.number = 0;
    let cases = [
        (
            vec![stored(1, Pending, &[]), stored(2, Blocked, &[7])],
            "depends on t7",
        ),
        (vec![stored(1, Blocked, &[1])], "task 1 depends on itself"),
        (
            vec![stored(1, Pending, &[]), stored(1, Pending, &[])],
            "number 1 is used by both",
        ),
        (vec![stored(1, Pending, &[]), twice], "id t1 is used twice"),
        (vec![zero], "has number 0"),
    ];
    for (tasks, part) in cases {
        let err = TaskGraph::from_tasks(tasks).unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, TaskError::Stored(_)), "{err:?}");
        assert!(
            text.contains(part) && text.contains("were not loaded"),
            "{text}"
        );
    }
}
