//! `/swarm "task"` from a session, through the front door: the terminal UI (the overlay
//! asks for the plan's yes, shows both tasks passed, the transcript gets the summary, and
//! the session stays usable; a worker's approval answered y; a stuck task's dialog
//! answered with `s`; one swarm at a time and Ctrl-C stopping it resumably), and the line
//! session (the plan's y/N read from the piped stdin, progress on stderr, the next line a
//! prompt again). Real coordinator, real `atto exec` workers, the scripted model server
//! answering each worker by the task in its prompt.

use atto_testkit::{Reply, Script};
use serde_json::json;

use crate::common::{Env, line_session};
use crate::swarm::{COUNTER, COUNTER_BROKEN, bash, decomposition, when, worker, write};
use crate::tui_harness::start_atto;

/// Two tasks: app.py, then NOTES.md about it.
fn two_tasks() -> Reply {
    decomposition(json!([
        {"id": "task-1", "type": "implement", "target_files": ["app.py"],
         "description": "Create app.py with a main() function that prints hello and returns 0, callable from the command line."},
        {"id": "task-2", "type": "document", "dependencies": ["task-1"], "target_files": ["NOTES.md"],
         "description": "Write NOTES.md describing how to run app.py from the command line with one example."}
    ]))
}

/// The decomposition and both workers, each doing its task in one go.
fn passing_swarm() -> Vec<Reply> {
    let mut replies = vec![two_tasks()];
    replies.extend(worker(
        "task-1",
        "implement",
        vec![write("app.py", COUNTER)],
        "Wrote app.py.",
    ));
    replies.extend(worker(
        "task-2",
        "document",
        vec![write("NOTES.md", "Run python app.py\n")],
        "Wrote NOTES.md.",
    ));
    replies
}

fn tmux_missing(test: &str) -> bool {
    let missing = std::process::Command::new("tmux")
        .arg("-V")
        .output()
        .is_err();
    if missing {
        atto_testkit::skipped(test, "tmux is not installed (scripts/test.sh installs it)");
    }
    missing
}

#[test]
fn tui_swarm_runs_from_the_session_and_the_overlay_shows_it() {
    if tmux_missing("tui_swarm_runs_from_the_session_and_the_overlay_shows_it") {
        return;
    }
    let mut env = Env::new();
    env.write(".atto/swarm.yaml", "swarm:\n  quality_gates: false\n");
    let mut replies = passing_swarm();
    // The session's own turn afterwards.
    replies.push(when(
        "anything left to do",
        Reply::text("Nothing left: the swarm did it all."),
    ));
    let tmux = start_atto(&mut env, replies, &["--permission", "auto-safe"]);
    tmux.line("/swarm \"make the app and its notes\"");

    // The plan is asked in the overlay, the tree indented by dependency.
    let screen = tmux.wait_for("Run these 2 tasks?");
    assert!(screen.contains("· task-1 [implement] pending"), "{screen}");
    assert!(
        screen.contains("  · task-2 [document] pending · after task-1"),
        "{screen}"
    );
    assert!(tmux.status_line().contains("swarm plan waits"), "{screen}");
    // Nothing runs before the yes.
    assert!(
        !env.requests()
            .iter()
            .any(|r| r.body.to_string().contains("## Task task-1")),
        "a worker ran before the plan was confirmed"
    );
    tmux.keys(&["Enter"]);

    // Both pass; the overlay shows them, the transcript the summary and the report.
    let screen = tmux.wait("both tasks passed and the summary", |s| {
        s.contains("✓ task-1 [implement] passed") && s.contains("finished: 2 passed")
    });
    assert!(screen.contains("✓ task-2 [document] passed"), "{screen}");
    assert!(screen.contains("· 2/2 passed"), "{screen}");
    assert!(
        screen.contains("finished: 2 passed, 0 failed, 0 skipped"),
        "{screen}"
    );
    assert!(screen.contains("report.md"), "{screen}");
    assert_eq!(env.read("app.py"), COUNTER);
    assert_eq!(env.read("NOTES.md"), "Run python app.py\n");

    // Esc closes the overlay; the session goes on; /swarm shows it again.
    tmux.keys(&["Escape"]);
    tmux.wait("the overlay closed", |s| !s.contains("swarm · Esc closes"));
    tmux.line("anything left to do?");
    tmux.wait_for("Nothing left: the swarm did it all.");
    tmux.line("/swarm");
    tmux.wait_for("· 2/2 passed");
    tmux.exit_and_check_shell();
}

#[test]
fn tui_swarm_stuck_task_is_skipped_from_the_intervention_dialog() {
    if tmux_missing("tui_swarm_stuck_task_is_skipped_from_the_intervention_dialog") {
        return;
    }
    let mut env = Env::new();
    env.write(
        ".atto/swarm.yaml",
        "swarm:\n  quality_gates: false\n  worker_retries: 0\n  enable_user_intervention: true\n  user_intervention_threshold: 1\n",
    );
    let mut replies = vec![two_tasks()];
    replies.extend(worker(
        "task-1",
        "implement",
        vec![write("app.py", COUNTER_BROKEN)],
        "Wrote app.py.",
    ));
    let tmux = start_atto(&mut env, replies, &["--permission", "auto-safe"]);
    tmux.line("/swarm \"make the app and its notes\"");
    tmux.wait_for("Run these 2 tasks?");
    tmux.keys(&["y"]);

    // The broken file fails the compile check: a person decides.
    let screen = tmux.wait_settled("swarm task task-1 needs a decision");
    assert!(screen.contains("app.py:3"), "{screen}");
    assert!(screen.contains("s skip"), "{screen}");
    // g starts typing guidance (s is a letter of it then); Esc goes back to the letters.
    tmux.keys(&["g"]);
    tmux.wait_for("guidance (Enter retries with it, Esc back):");
    tmux.type_text("use spaces");
    tmux.wait_for("Esc back): use spaces");
    tmux.keys(&["Escape"]);
    tmux.wait("the letters again", |s| {
        s.contains("s skip") && !s.contains("Esc back): use")
    });
    tmux.keys(&["s"]);

    let screen = tmux.wait_for("finished: 0 passed, 0 failed, 2 skipped");
    assert!(screen.contains("swarm: task-1: skip"), "{screen}");
    assert!(!screen.contains("needs a decision"), "{screen}");
    assert!(screen.contains("⊘ task-2 [document] skipped"), "{screen}");
    // task-2 never ran.
    assert!(
        !env.requests()
            .iter()
            .any(|r| r.body.to_string().contains("## Task task-2")),
        "the dependent of a skipped task ran"
    );
    tmux.exit_and_check_shell();
}

#[test]
fn tui_swarm_a_workers_approval_is_answered_in_the_dialog() {
    if tmux_missing("tui_swarm_a_workers_approval_is_answered_in_the_dialog") {
        return;
    }
    let mut env = Env::new();
    env.write(".atto/swarm.yaml", "swarm:\n  quality_gates: false\n");
    let mut replies = vec![two_tasks()];
    // task-1's worker writes (the mailbox allows it) and runs the tests (WARN in
    // interactive mode: the mailbox passes it to the person).
    replies.extend(worker(
        "task-1",
        "implement",
        vec![write("app.py", COUNTER), bash("pytest -q")],
        "Wrote app.py and ran the tests.",
    ));
    replies.extend(worker(
        "task-2",
        "document",
        vec![write("NOTES.md", "Run python app.py\n")],
        "Wrote NOTES.md.",
    ));
    let tmux = start_atto(&mut env, replies, &["--permission", "interactive"]);
    tmux.line("/swarm \"make the app and its notes\"");
    tmux.wait_for("Run these 2 tasks?");
    tmux.keys(&["Enter"]);

    let screen = tmux.wait_for("approve bash for swarm task task-1?");
    assert!(screen.contains("swarm task task-1 asks"), "{screen}");
    assert!(screen.contains("$ pytest -q"), "{screen}");
    assert!(screen.contains("y yes  n no (+reason)"), "{screen}");
    // "Always" is not an answer a worker takes: the dialog stays.
    tmux.keys(&["a"]);
    tmux.wait_for("a swarm worker's request takes y (once) or n");
    assert!(
        tmux.screen()
            .contains("approve bash for swarm task task-1?")
    );
    tmux.keys(&["y"]);

    let screen = tmux.wait_for("finished: 2 passed");
    assert!(!screen.contains("approve bash"), "{screen}");
    // The worker ran the command: its next request carries the command's result.
    let results: Vec<String> = env
        .requests()
        .iter()
        .filter(|r| r.body.to_string().contains("## Task task-1 (implement)"))
        .flat_map(|r| r.body["messages"].as_array().unwrap().clone())
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].to_string())
        .collect();
    assert!(
        results.iter().any(|r| r.contains("exit code:")),
        "the approved command's result never reached the worker's model: {results:?}"
    );
    assert!(
        !results.iter().any(|r| r.contains("declined")),
        "{results:?}"
    );
    tmux.exit_and_check_shell();
}

#[test]
fn tui_swarm_one_at_a_time_and_ctrl_c_stops_it_resumably() {
    if tmux_missing("tui_swarm_one_at_a_time_and_ctrl_c_stops_it_resumably") {
        return;
    }
    let mut env = Env::new();
    env.write(".atto/swarm.yaml", "swarm:\n  quality_gates: false\n");
    let mut replies = passing_swarm();
    // task-1's worker is slow: the swarm is still running when it is stopped.
    replies[1].delay_ms = 30_000;
    let tmux = start_atto(&mut env, replies, &["--permission", "auto-safe"]);
    tmux.line("/swarm \"make the app and its notes\"");
    tmux.wait_for("Run these 2 tasks?");
    tmux.keys(&["y"]);
    tmux.wait_for("▶ task-1 [implement] running");

    // One swarm at a time.
    tmux.line("/swarm \"something else\"");
    let screen = tmux.wait_for("is still running; one swarm at a time");
    let id = screen
        .lines()
        .find(|l| l.contains("is still running"))
        .and_then(|l| l.strip_prefix("swarm "))
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap()
        .to_owned();

    // Ctrl-C stops the swarm (the session has no turn running) and says how to resume.
    tmux.keys(&["C-c"]);
    let screen = tmux.wait_for("interrupted: 0 passed");
    assert!(
        screen.contains(&format!(
            "stopping the swarm's workers; the swarm can be resumed with atto swarm --resume {id}"
        )),
        "{screen}"
    );
    assert!(
        screen.contains(&format!("swarm {id} interrupted")),
        "{screen}"
    );
    // No worker runs any more: the interrupted task waits to be done again on resume.
    assert!(screen.contains("· task-1 [implement] pending"), "{screen}");
    assert!(screen.contains("tokens "), "{screen}");
    assert!(!screen.contains("none counted"), "{screen}");
    assert!(!tmux.status_line().contains("swarm"), "{screen}");
    // The saved swarm is there to resume.
    let status = env.atto().args(["swarm", "status", &id]).output().unwrap();
    let text = String::from_utf8_lossy(&status.stdout);
    assert!(text.contains("interrupted"), "{text}");
    tmux.exit_and_check_shell();
}

#[test]
fn tui_swarm_in_the_line_session_asks_y_on_stdin_and_goes_on() {
    let mut env = Env::new();
    env.write(".atto/swarm.yaml", "swarm:\n  quality_gates: false\n");
    let mut replies = passing_swarm();
    replies.push(when(
        "anything left to do",
        Reply::text("Nothing left: the swarm did it all."),
    ));
    env.serve(Script::new(replies));
    let err = line_session(
        &env,
        "/swarm \"make the app and its notes\"\ny\nanything left to do?\n",
    );
    assert!(err.contains("plan: 2 tasks"), "{err}");
    assert!(err.contains("Run these 2 tasks? [y/N]"), "{err}");
    assert!(err.contains("✓ task-1 passed (1 attempt)"), "{err}");
    assert!(err.contains("✓ task-2 passed (1 attempt)"), "{err}");
    assert!(
        err.contains("finished: 2 passed, 0 failed, 0 skipped"),
        "{err}"
    );
    assert_eq!(env.read("app.py"), COUNTER);
    assert_eq!(env.read("NOTES.md"), "Run python app.py\n");
    // The line after the answer was a prompt of the session again.
    let last = env.requests().last().unwrap().body.to_string();
    assert!(last.contains("anything left to do?"), "{last}");
}

/// A swarm file whose launch template leaves a mark, then runs the real worker; the mark's
/// path.
fn untrusted_template(env: &Env) -> std::path::PathBuf {
    let mark = env.dir.path().join("template-ran");
    env.write(
        ".atto/swarm.yaml",
        &format!(
            "swarm:\n  quality_gates: false\n  worker_command: [\"sh\", \"-c\", \"echo ran >> {}; exec \\\"$0\\\" \\\"$@\\\"\", \"{{atto}}\", \"exec\", \"{{args}}\"]\n",
            mark.display()
        ),
    );
    mark
}

/// `/swarm` in the terminal UI with a swarm file that is not trusted: asked once, showing
/// the launch template and where it comes from; `n` starts nothing; asked again next
/// time, `y` trusts the file (as `atto trust` would) and the swarm runs.
#[test]
fn tui_swarm_with_an_untrusted_swarm_file_asks_and_trusts_only_on_yes() {
    if tmux_missing("tui_swarm_with_an_untrusted_swarm_file_asks_and_trusts_only_on_yes") {
        return;
    }
    let mut env = Env::new();
    let mark = untrusted_template(&env);
    let tmux = start_atto(&mut env, passing_swarm(), &["--permission", "auto-safe"]);
    tmux.line("/swarm \"make the app and its notes\"");
    let screen = tmux.wait_for("Trust this swarm file");
    assert!(screen.contains("swarm.yaml"), "{screen}");
    assert!(screen.contains("worker_command"), "{screen}");
    assert!(screen.contains("echo ran >>"), "{screen}");
    tmux.keys(&["n"]);
    tmux.wait_for("the swarm did not start");
    assert!(!mark.exists(), "the template ran without trust");
    let list = env.atto().args(["trust", "--list"]).output().unwrap();
    assert!(
        !String::from_utf8_lossy(&list.stdout).contains("swarm.yaml"),
        "trusted on no"
    );

    tmux.line("/swarm \"make the app and its notes\"");
    tmux.wait_for("Trust this swarm file");
    tmux.keys(&["y"]);
    tmux.wait_for("Run these 2 tasks?");
    tmux.keys(&["Enter"]);
    tmux.wait_for("finished: 2 passed");
    assert!(mark.exists(), "the trusted template did not run");
    let list = env.atto().args(["trust", "--list"]).output().unwrap();
    let list = String::from_utf8_lossy(&list.stdout).into_owned();
    assert!(list.contains(".atto/swarm.yaml"), "{list}");
    tmux.exit_and_check_shell();
}
