//! Reasoning effort through the line session: `/effort high` puts `reasoning_effort` in
//! every following request (the planner's and a turn's alike), `/effort default` takes it
//! out again, and a model that takes no effort answers so and keeps its requests as they
//! were.

use atto_testkit::{Reply, Script};
use serde_json::json;

use crate::common::{Env, events, of_type, stderr};
use crate::planner::{plan_reply, run_model, step};

#[test]
fn the_effort_reaches_plan_and_turn_requests_until_it_is_reset() {
    let mut env = Env::new();
    let plan = json!({"intent": "x", "steps": [step("sa", "A", &[])]});
    env.serve(Script::new(vec![plan_reply(&plan), Reply::text("hi")]));
    let out = run_model(
        &env,
        "o3-mini",
        "/effort high\n/auto \"plan it\"\n/reject\n/effort default\nsay hi\n",
    );
    // The plain line after the reset is a turn: the plan was rejected first.
    let ev = events(&out);
    let err = stderr(&out);
    let changed = of_type(&ev, "effort_changed");
    assert_eq!(changed.len(), 2, "{err}");
    assert_eq!(changed[0]["effort"], "high");
    assert_eq!(changed[0]["supported"], true);
    assert_eq!(changed[0]["model"], "o3-mini");
    assert!(changed[1].get("effort").is_none(), "{}", changed[1]);

    let reqs = env.requests();
    assert_eq!(reqs.len(), 2, "{err}");
    assert_eq!(
        reqs[0].body["reasoning_effort"], "high",
        "the planning request"
    );
    assert!(
        reqs[1].body.get("reasoning_effort").is_none(),
        "after /effort default: {}",
        reqs[1].body
    );
}

#[test]
fn a_turn_carries_the_effort_and_a_model_without_one_is_left_alone() {
    let mut env = Env::new();
    env.serve(Script::new(vec![Reply::text("ok")]));
    let out = run_model(&env, "gpt-5", "/effort low\nsay hi\n");
    assert_eq!(of_type(&events(&out), "turn_completed").len(), 1);
    assert_eq!(env.requests()[0].body["reasoning_effort"], "low");

    let mut env = Env::new();
    env.serve(Script::new(vec![Reply::text("ok")]));
    let out = run_model(&env, "gpt-4o", "/effort high\nsay hi\n");
    let ev = events(&out);
    let changed = of_type(&ev, "effort_changed");
    assert_eq!(changed.len(), 1);
    assert_eq!(changed[0]["supported"], false);
    assert!(changed[0].get("effort").is_none());
    let body = &env.requests()[0].body;
    assert!(body.get("reasoning_effort").is_none(), "unchanged: {body}");
    assert_eq!(body["model"], "gpt-4o");
}
