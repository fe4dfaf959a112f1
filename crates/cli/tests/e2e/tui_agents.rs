//! Subagents in the terminal UI, through the front door: the scripted model spawns a
//! verify subagent, the child asks to run a test command, and the approval dialog names
//! the child. The user refuses; the child's next request carries the refusal, the run ends
//! with the child's report, and `/agents` lists the child and opens its transcript.

use atto_testkit::Reply;
use serde_json::json;

use crate::common::{Env, call, calls};
use crate::tui_harness::{start_atto, tool_results};

/// Text only the child's requests carry: the start of its first prompt.
const CHILD: &str = "You are a subagent";

/// The indices of the recorded requests whose body contains `needle`.
fn requests_with(env: &Env, needle: &str) -> Vec<usize> {
    env.requests()
        .iter()
        .enumerate()
        .filter(|(_, r)| r.body.to_string().contains(needle))
        .map(|(i, _)| i)
        .collect()
}

#[test]
fn a_subagents_approval_names_it_and_a_refusal_reaches_it() {
    let mut env = Env::new();
    let replies = vec![
        // The session: delegate. A verify child runs in debug mode, where a test command
        // exists but, being WARN, still asks in interactive mode.
        calls(vec![call(
            "spawn_agent",
            json!({"task": "count the files", "role": "verify"}),
        )]),
        Reply {
            when: Some(CHILD.into()),
            ..calls(vec![call("bash", json!({"command": "pytest -q"}))])
        },
        Reply {
            when: Some(CHILD.into()),
            ..Reply::text(
                "## Summary\nThe test run was refused, so nothing was counted.\n\n\
                 ## Files Modified\n- none\n\n## Key Decisions\n- none\n\n\
                 ## Remaining Work\n- run the tests\n\n## Confidence: 0.2",
            )
        },
        Reply::text("The subagent could not run the tests."),
    ];
    let tmux = start_atto(&mut env, replies, &["--permission", "interactive"]);
    tmux.line("count the files with a subagent");

    // The session's own call asks first and names no subagent.
    let screen = tmux.wait_for("approve spawn_agent");
    assert!(!screen.contains("for subagent"), "{screen}");
    tmux.keys(&["y"]);

    // The child's call: the dialog says which subagent asks.
    let screen = tmux.wait_for("(verify: count the files) asks");
    let asker = screen
        .lines()
        .find(|l| l.contains("(verify: count the files) asks"))
        .unwrap();
    let id = asker
        .split("subagent ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap()
        .to_owned();
    assert_eq!(id.len(), 8, "the short id: {asker}");
    assert!(
        screen.contains(&format!("approve bash for subagent {id}?")),
        "{screen}"
    );
    assert!(screen.contains("$ pytest -q"), "{screen}");
    assert!(
        tmux.status_line().contains("1 subagent running"),
        "{}",
        tmux.status_line()
    );

    // Refused, with a reason: the child's next request carries both.
    tmux.keys(&["n"]);
    tmux.line("not now");
    let screen = tmux.wait_for("The subagent could not run the tests.");
    let child = requests_with(&env, CHILD);
    assert_eq!(child.len(), 2, "the child asked the model twice");
    let results = tool_results(&env, child[1]);
    assert!(
        results
            .iter()
            .any(|r| r.contains("the user declined this bash call") && r.contains("not now")),
        "{results:?}"
    );
    // The session received the child's report as the tool's result.
    let last = env.requests().len() - 1;
    assert!(!child.contains(&last));
    let results = tool_results(&env, last);
    assert!(
        results
            .iter()
            .any(|r| r.contains("The test run was refused, so nothing was counted.")),
        "{results:?}"
    );
    assert!(
        screen.contains(&format!("◆ subagent {id} (verify) completed")),
        "{screen}"
    );
    assert!(!tmux.status_line().contains("running"), "{screen}");

    // `/agents` lists it; Enter opens what the screen has of it; Esc goes back, then out.
    tmux.line("/agents");
    let screen = tmux.wait_for("1 subagent · 0 running");
    assert!(
        screen.contains(&format!("› {id} verify    completed")),
        "{screen}"
    );
    assert!(screen.contains("count the files"), "{screen}");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for(&format!("subagent {id} · verify · completed"));
    assert!(screen.contains("• bash pytest -q"), "{screen}");
    assert!(
        screen.contains("The test run was refused, so nothing was counted."),
        "{screen}"
    );
    tmux.keys(&["Escape"]);
    tmux.wait_for("1 subagent · 0 running");
    tmux.keys(&["Escape"]);
    tmux.wait("the panel closed", |s| {
        !s.contains("1 subagent · 0 running")
    });
    tmux.exit_and_check_shell();
}
