//! Decision points of a task plan through the line session: after `/approve` a step with
//! a decision waits (`plan_decision_required`), the line session reads the answer, an
//! answer that is no option is refused and asked again, and the choice reaches the model
//! in the step's request. Input that ends while a decision waits stops the plan.

use atto_testkit::Script;
use serde_json::json;

use crate::common::{Env, events, of_type, stderr};
use crate::planner::{interrupted, plan_reply, plan_trace, run, step, writing_step};

/// A plan whose first step asks which format to use.
fn plan_with_decision() -> serde_json::Value {
    let mut first = step("sa", "Write the config", &[]);
    first["decision"] = json!({"question": "Which format?", "options": ["json", "toml"]});
    json!({"intent": "config", "steps": [first, step("sb", "Write b.txt", &["sa"])]})
}

#[test]
fn a_decision_is_asked_a_wrong_answer_refused_and_the_choice_reaches_the_step() {
    let mut env = Env::new();
    let mut replies = vec![plan_reply(&plan_with_decision())];
    replies.extend(writing_step(
        "a.txt",
        "format = toml\n",
        "completed",
        "wrote the toml config",
    ));
    replies.extend(writing_step("b.txt", "b\n", "completed", "wrote b"));
    env.serve(Script::new(replies));

    // "yaml" is no option; "2" is the second one.
    let out = run(&env, "/auto \"write the config\"\n/approve\nyaml\n2\n");
    let ev = events(&out);
    let err = stderr(&out);

    let asked = of_type(&ev, "plan_decision_required");
    assert_eq!(asked.len(), 2, "asked again after the wrong answer: {err}");
    assert_eq!(asked[0]["number"], 1);
    assert_eq!(asked[0]["question"], "Which format?");
    assert_eq!(asked[0]["options"], json!(["json", "toml"]));
    let refused: Vec<&str> = of_type(&ev, "error")
        .iter()
        .filter_map(|e| e["message"].as_str())
        .collect();
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert!(
        refused[0].contains("\"yaml\" is not one of the options"),
        "{refused:?}"
    );
    assert!(
        err.contains("answer with an option's number or text"),
        "{err}"
    );

    // The choice is in the first step's request, and only the step after it runs without.
    let reqs = env.requests();
    let first_step = reqs[1].body["messages"].to_string();
    assert!(
        first_step.contains("The user decided \\\"Which format?\\\": toml."),
        "{first_step}"
    );
    let second_step = reqs[3].body["messages"].to_string();
    assert!(second_step.contains("Plan step 2 of 2"), "{second_step}");
    assert_eq!(reqs.len(), 5, "plan, two steps of two requests each");

    assert_eq!(
        plan_trace(&ev),
        [
            "plan_generated",
            "plan_confirmed",
            "plan_decision_required:1",
            "plan_decision_required:1",
            "plan_step_started:1",
            "plan_step_completed:1",
            "plan_step_started:2",
            "plan_step_completed:2",
            "plan_summary",
        ]
    );
    assert_eq!(of_type(&ev, "plan_summary")[0]["status"], "completed");
    assert_eq!(env.read("a.txt"), "format = toml\n");
}

#[test]
fn input_that_ends_at_a_decision_stops_the_plan_without_running_it() {
    let mut env = Env::new();
    env.serve(Script::new(vec![plan_reply(&plan_with_decision())]));
    let out = run(&env, "/auto \"write the config\"\n/approve\n");
    let ev = events(&out);
    let err = stderr(&out);
    assert!(err.contains("no answer (input ended)"), "{err}");
    let summary = of_type(&ev, "plan_summary");
    assert_eq!(summary.len(), 1, "{err}");
    assert_eq!(summary[0]["status"], "cancelled");
    assert!(of_type(&ev, "plan_step_started").is_empty());
    assert_eq!(env.requests().len(), 1, "only the planning request");
}

#[test]
fn ctrl_c_at_a_decision_stops_the_plan_and_the_session_goes_on() {
    let mut env = Env::new();
    env.serve(Script::new(vec![
        plan_reply(&plan_with_decision()),
        atto_testkit::Reply::text("hi"),
    ]));
    // A second after the plan came back, /approve has long been waiting for the decision.
    let (out, _) = interrupted(
        &env,
        "/auto \"write the config\"\n/approve\n",
        1,
        1000,
        "say hi\n",
    );
    let ev = events(&out);
    let err = stderr(&out);
    assert_eq!(of_type(&ev, "plan_decision_required").len(), 1, "{err}");
    let summary = of_type(&ev, "plan_summary");
    assert_eq!(summary.len(), 1, "{err}");
    assert_eq!(summary[0]["status"], "cancelled");
    assert!(of_type(&ev, "plan_step_started").is_empty());
    let done = of_type(&ev, "turn_completed");
    assert_eq!(done.len(), 1, "{err}");
    assert_eq!(done[0]["text"], "hi");
}

#[test]
fn a_waiting_step_plan_is_rejected_whole_and_a_step_number_is_refused() {
    let mut env = Env::new();
    env.serve(Script::new(vec![plan_reply(&plan_with_decision())]));
    let out = run(
        &env,
        "/auto \"write the config\"\n/reject 2\n/reject not now\n",
    );
    let ev = events(&out);
    let err = stderr(&out);
    let errors = of_type(&ev, "error");
    assert!(
        errors.iter().any(|e| e["message"]
            .as_str()
            .unwrap()
            .contains("a step plan is rejected whole")),
        "{errors:?}"
    );
    let rejected = of_type(&ev, "plan_rejected");
    assert_eq!(rejected.len(), 1, "{err}");
    assert_eq!(env.requests().len(), 1, "only the planning request");
}
