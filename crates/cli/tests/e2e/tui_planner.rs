//! Step plans in the terminal UI: `/auto` shows the plan, a plain line refines it,
//! `/approve` runs it, and a decision point is answered in its dialog with a digit key.

use serde_json::json;

use crate::common::Env;
use crate::planner::{plan_reply, step, writing_step};
use crate::tui_harness::{start_atto, user_messages};

#[test]
fn a_plan_is_refined_approved_and_its_decision_answered_with_a_key() {
    let mut env = Env::new();
    let mut first = step("sa", "Write the config", &[]);
    first["decision"] = json!({"question": "Which format?", "options": ["json", "toml"]});
    let plan = json!({"intent": "config", "risk": "low", "estimated_duration_secs": 60,
        "steps": [first, step("sb", "Write b.txt", &["sa"]), step("sc", "Write c.txt", &[])]});
    let mut replies = vec![plan_reply(&plan)];
    replies.extend(writing_step(
        "a.txt",
        "format = toml\n",
        "completed",
        "wrote a",
    ));
    replies.extend(writing_step("b.txt", "b\n", "completed", "wrote b"));
    let tmux = start_atto(&mut env, replies, &["--permission", "auto-safe"]);

    tmux.line("/auto \"write the config\"");
    let shown = tmux.wait_for("Which format?");
    assert!(shown.contains("Write the config"), "{shown}");
    // atto's own parser takes this edit: no model call, a diff of the plan.
    tmux.line("remove step 3");
    tmux.wait("the revision diff", |s| {
        s.contains("- ") && s.contains("Write c.txt")
    });
    assert_eq!(env.requests().len(), 1);

    tmux.line("/approve");
    let dialog = tmux.wait_for("1-9 pick");
    assert!(dialog.contains("toml"), "{dialog}");
    tmux.keys(&["2"]);
    tmux.wait("both steps to run", |_| env.repo().join("b.txt").exists());
    assert_eq!(
        std::fs::read_to_string(env.repo().join("a.txt")).unwrap(),
        "format = toml\n"
    );
    assert!(!env.repo().join("c.txt").exists(), "the removed step ran");
    // The choice reached the model in the first step's request.
    let step_one = user_messages(&env, 1).join("\n");
    assert!(step_one.contains("toml"), "{step_one}");
    tmux.exit_and_check_shell();
}
