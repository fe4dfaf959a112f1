//! A person in a swarm's loop end to end: a stuck task fails without intervention and
//! waits for guidance with it, the mailbox approves what a writing task may do and passes
//! the rest on, and on the terminal a second stuck task waits for the first answer.

use super::*;

#[test]
fn without_intervention_a_stuck_task_fails_and_its_dependents_are_skipped() {
    let mut env = Env::new();
    stuck_project(
        &mut env,
        "swarm:\n  quality_gates: false\n  worker_retries: 1\n",
        2,
        Vec::new(),
    );
    let out = run(&env, &["--yes", "make the app"]);
    let ev = events(&out);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(of_type(&ev, "swarm.task.intervention_needed").is_empty());
    let failed = of_type(&ev, "swarm.task.failed");
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0]["attempts"], 2);
    let skipped = of_type(&ev, "swarm.task.skipped");
    assert_eq!(skipped[0]["task_id"], "task-2");
    assert!(
        skipped[0]["reason"]
            .as_str()
            .unwrap()
            .contains("task-1 failed")
    );
    let done = finished(&ev);
    assert_eq!(
        (
            done["passed"].as_u64(),
            done["failed"].as_u64(),
            done["skipped"].as_u64()
        ),
        (Some(0), Some(1), Some(1))
    );
}

#[test]
fn with_intervention_a_stuck_task_waits_for_a_person_whose_guidance_is_used() {
    let mut env = Env::new();
    let fixed = worker(
        "task-1",
        "implement",
        vec![write("app.py", COUNTER)],
        "Fixed it.",
    );
    let mut extra: Vec<Reply> = fixed
        .into_iter()
        .map(|r| Reply {
            when: Some("keep every line at four spaces".into()),
            ..r
        })
        .collect();
    extra.extend(worker(
        "task-2",
        "document",
        vec![write("NOTES.md", "Run python app.py\n")],
        "Wrote notes.",
    ));
    stuck_project(
        &mut env,
        "swarm:\n  quality_gates: false\n  worker_retries: 1\n  enable_user_intervention: true\n  user_intervention_threshold: 2\n",
        2,
        extra,
    );
    let (ev, code, err) = converse(&env, &["--yes", "make the app"], |e| {
        if e["type"] == "swarm.task.intervention_needed" {
            // The seed's payload.
            assert_eq!(e["task_id"], "task-1");
            assert_eq!(e["attempts"], 2);
            assert_eq!(e["failure_mode"], "quality");
            assert_eq!(e["model"], "m");
            assert!(e["compilation_errors"][0]["line"] == 3, "{e}");
            assert!(!e["description"].as_str().unwrap().is_empty());
            vec![
                json!({"type": "intervention", "task_id": "task-1", "action": "guidance",
                        "text": "keep every line at four spaces"})
                .to_string(),
            ]
        } else {
            Vec::new()
        }
    });
    assert_eq!(code, Some(0), "{err}\n{ev:?}");
    assert_eq!(of_type(&ev, "swarm.task.intervention_needed").len(), 1);
    // The dependent waited instead of being skipped.
    assert!(of_type(&ev, "swarm.task.skipped").is_empty(), "{ev:?}");
    assert_eq!(finished(&ev)["passed"], 2);
    assert_eq!(env.read("app.py"), COUNTER);
}

#[test]
fn the_mailbox_approves_writes_of_writing_tasks_and_passes_the_rest_to_the_person() {
    let mut env = Env::new();
    env.write(".atto/swarm.yaml", "swarm:\n  quality_gates: false\n");
    let mut replies = vec![decomposition(json!([
        {"id": "task-1", "type": "implement", "target_files": ["hello.py"],
         "description": "Create hello.py that prints hello world when it is run with python from the command line."}
    ]))];
    replies.extend(worker(
        "task-1",
        "implement",
        vec![
            write("hello.py", "print('hello world')\n"),
            bash("git push origin main"),
        ],
        "Done.",
    ));
    env.serve(Script::new(replies));
    // Interactive permissions: the workers' writes and commands ask, and the mailbox
    // answers or passes them on.
    let cmd = swarm_with(&env, "interactive", 10, &["--yes", "say hello"]);
    let (seen, code, err) = converse_with(cmd, |e| {
        if e["type"] == "swarm.permission" && e["tier"] == "asked" {
            vec![
                json!({"type": "approval", "task_id": e["task_id"], "id": e["request"]["id"],
                        "decision": "no", "reason": "not in this swarm"})
                .to_string(),
            ]
        } else {
            Vec::new()
        }
    });
    assert_eq!(code, Some(0), "{err}\n{seen:?}");
    let perms = of_type(&seen, "swarm.permission");
    let tiers: Vec<(&str, &str)> = perms
        .iter()
        .map(|p| {
            (
                p["request"]["tool"].as_str().unwrap(),
                p["tier"].as_str().unwrap(),
            )
        })
        .collect();
    assert!(
        tiers.contains(&("write_file", "auto_approved")),
        "{tiers:?}"
    );
    assert!(tiers.contains(&("bash", "asked")), "{tiers:?}");
    assert_eq!(env.read("hello.py"), "print('hello world')\n");
    // The person's "no" reached the worker's model.
    let told = env
        .requests()
        .iter()
        .any(|r| r.body["messages"].to_string().contains("not in this swarm"));
    assert!(told, "the refusal did not reach the worker");
}

#[test]
fn on_the_terminal_a_second_stuck_task_waits_until_the_first_is_answered() {
    use crate::tui_harness::{Tmux, atto_line};
    let mut env = Env::new();
    env.write(
        ".atto/swarm.yaml",
        "swarm:\n  quality_gates: false\n  enable_task_enrichment: false\n  worker_retries: 0\n  enable_user_intervention: true\n  user_intervention_threshold: 1\n",
    );
    crate::repo_trust::trust(&env, ".atto/swarm.yaml");
    let mut replies = vec![decomposition(json!([
        {"id": "task-1", "type": "implement", "target_files": ["one.py"],
         "description": "Create one.py with a count_words(text) function that returns how many words the text has."},
        {"id": "task-2", "type": "implement", "target_files": ["two.py"],
         "description": "Create two.py with a count_words(text) function that returns how many words the text has."}
    ]))];
    for (id, file) in [("task-1", "one.py"), ("task-2", "two.py")] {
        replies.extend(worker(
            id,
            "implement",
            vec![write(file, COUNTER_BROKEN)],
            "Wrote it.",
        ));
    }
    env.serve(Script::new(replies));
    let tmux = Tmux::start(&env);
    tmux.line(&atto_line(
        &env,
        &[
            "swarm",
            "--yes",
            "--permission",
            "auto-safe",
            "'count words twice'",
        ],
    ));
    tmux.wait("the first question", |s| s.contains("is stuck. [g]uidance"));
    // Both workers fail at about the same time: the second question must not be printed
    // over the first while it waits.
    std::thread::sleep(std::time::Duration::from_secs(3));
    let screen = tmux.screen();
    assert_eq!(screen.matches("is stuck after").count(), 1, "{screen}");
    assert_eq!(
        screen.matches("is stuck. [g]uidance").count(),
        1,
        "{screen}"
    );
    // The question says where the code does not compile, once.
    assert_eq!(screen.matches(".py:3 — SyntaxError").count(), 1, "{screen}");
    tmux.line("s");
    let screen = tmux.wait("the second question", |s| {
        s.matches("is stuck. [g]uidance").count() == 2
    });
    assert_eq!(screen.matches("is stuck after").count(), 2, "{screen}");
    tmux.line("s");
    tmux.wait_for("skipped · ");
}
