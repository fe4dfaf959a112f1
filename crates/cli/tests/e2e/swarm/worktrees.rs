//! Worktree isolation end to end: attempts work apart and only passed work is merged
//! back; a merge conflict goes to a person.

use super::*;

#[test]
fn with_worktree_isolation_attempts_work_apart_and_only_passed_work_is_merged_back() {
    let mut env = Env::new();
    env.write("shared.txt", "one\ntwo\nthree\nfour\nfive\n");
    env.write(
        ".atto/swarm.yaml",
        "swarm:\n  quality_gates: false\n  isolation: worktree\n",
    );
    let mut replies = vec![decomposition(json!([
        {"id": "task-1", "type": "implement", "target_files": ["a.py"],
         "description": "Create a.py defining the constant A = 1 and note it on the first line of shared.txt."},
        {"id": "task-2", "type": "implement", "target_files": ["b.py"],
         "description": "Create b.py defining the constant B = 2 and note it on the last line of shared.txt."}
    ]))];
    // task-1 first leaves a broken a.py: that attempt's worktree is dropped.
    replies.extend(worker(
        "task-1",
        "implement",
        vec![
            write("a.py", COUNTER_BROKEN),
            write("shared.txt", "BROKEN\n"),
        ],
        "Done.",
    ));
    replies.extend(worker(
        "task-1",
        "implement",
        vec![
            write("a.py", "A = 1\n"),
            call(
                "edit_file",
                json!({"path": "shared.txt", "old_string": "one\n", "new_string": "one A\n"}),
            ),
        ],
        "Done.",
    ));
    replies.extend(worker(
        "task-2",
        "implement",
        vec![
            write("b.py", "B = 2\n"),
            write("shared.txt", "one\ntwo\nthree\nfour\nfive B\n"),
        ],
        "Done.",
    ));
    env.serve(Script::new(replies));
    let out = run(&env, &["--yes", "two constants"]);
    let ev = events(&out);
    assert_eq!(out.status.code(), Some(0), "{}\n{ev:?}", stderr(&out));
    assert_eq!(finished(&ev)["passed"], 2);
    // Both passed attempts merged, line by line; the failed one never reached the workspace.
    assert_eq!(
        env.read("shared.txt"),
        "one A\ntwo\nthree\nfour\nfive B\n",
        "{ev:?}"
    );
    assert_eq!(env.read("a.py"), "A = 1\n");
    assert_eq!(env.read("b.py"), "B = 2\n");
    // No worktree is left registered.
    let list = Command::new("git")
        .args(["worktree", "list", "--porcelain"])
        .current_dir(env.repo())
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&list.stdout);
    assert_eq!(listed.matches("worktree ").count(), 1, "{listed}");
}

#[test]
fn a_merge_conflict_goes_to_a_person() {
    let mut env = Env::new();
    env.write("shared.txt", "one\n");
    env.write(
        ".atto/swarm.yaml",
        "swarm:\n  quality_gates: false\n  isolation: worktree\n  enable_user_intervention: true\n",
    );
    let mut replies = vec![decomposition(json!([
        {"id": "task-1", "type": "implement", "target_files": ["a.py"],
         "description": "Create a.py defining the constant A = 1 and write its name into shared.txt as its only line."},
        {"id": "task-2", "type": "implement", "target_files": ["b.py"],
         "description": "Create b.py defining the constant B = 2 and write its name into shared.txt as its only line."}
    ]))];
    replies.extend(worker(
        "task-1",
        "implement",
        vec![write("a.py", "A = 1\n"), write("shared.txt", "A\n")],
        "Done.",
    ));
    let mut second = worker(
        "task-2",
        "implement",
        vec![write("b.py", "B = 2\n"), write("shared.txt", "B\n")],
        "Done.",
    );
    second[1].delay_ms = 1500; // finishes after task-1 merged
    replies.extend(second);
    env.serve(Script::new(replies));
    let (ev, code, err) = converse(&env, &["--yes", "two constants"], |e| {
        if e["type"] == "swarm.task.intervention_needed" {
            assert_eq!(e["task_id"], "task-2");
            assert_eq!(e["failure_mode"], "conflict");
            assert!(
                e["last_error"].as_str().unwrap().contains("shared.txt"),
                "{e}"
            );
            vec![json!({"type": "intervention", "task_id": "task-2", "action": "skip"}).to_string()]
        } else {
            Vec::new()
        }
    });
    assert_eq!(code, Some(1), "{err}\n{ev:?}");
    assert_eq!(
        of_type(&ev, "swarm.task.intervention_needed").len(),
        1,
        "{ev:?}"
    );
    // Nothing of the conflicting attempt was written.
    assert_eq!(env.read("shared.txt"), "A\n");
    assert!(!env.repo().join("b.py").exists());
}
