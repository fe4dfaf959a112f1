//! The structured planner through the line session: `/auto` drafts a plan, plain lines
//! refine it (one edit by atto's parser, one by the model), `/approve` runs the steps in
//! dependency order with a checkpoint each; a failing step is rolled back and stops the
//! plan, or (auto-rollback off) skips only its dependents. Bad plans from the model are
//! re-asked a bounded number of times, then fail clearly.

use std::io::Write as _;
use std::process::Output;

use atto_testkit::{Reply, Script};
use serde_json::{Value, json};

use crate::common::{
    Env, call, calls, events, of_type, run_line_session, spawn_line_session, stderr,
};

pub(crate) fn plan_reply(plan: &Value) -> Reply {
    Reply::text(plan.to_string())
}

pub(crate) fn step(id: &str, description: &str, deps: &[&str]) -> Value {
    json!({"id": id, "description": description, "dependencies": deps, "complexity": 2,
           "token_budget": 5000, "kind": "IMPLEMENT", "files": [format!("{}.txt", &id[1..])]})
}

/// A step's two replies: its calls (ending with the report), then its closing text.
pub(crate) fn step_replies(step_calls: Vec<atto_testkit::ScriptToolCall>) -> [Reply; 2] {
    [calls(step_calls), Reply::text("Step done.")]
}

/// A step that writes `content` to `path`, then reports `status` with `summary`.
pub(crate) fn writing_step(path: &str, content: &str, status: &str, summary: &str) -> [Reply; 2] {
    step_replies(vec![write(path, content), report(status, summary)])
}

pub(crate) fn write(path: &str, content: &str) -> atto_testkit::ScriptToolCall {
    call("write_file", json!({"path": path, "content": content}))
}

pub(crate) fn report(status: &str, summary: &str) -> atto_testkit::ScriptToolCall {
    call(
        "plan_step_result",
        json!({"status": status, "summary": summary}),
    )
}

/// The line session's flags here: auto-safe, stream-json events on stdout.
const STREAM_JSON: &[&str] = &[
    "--permission",
    "auto-safe",
    "--output-format",
    "stream-json",
];

/// The line session with stream-json events on stdout.
pub(crate) fn run(env: &Env, lines: &str) -> Output {
    run_model(env, "m", lines)
}

/// [`run`] with another model id (over the chat wire).
pub(crate) fn run_model(env: &Env, model: &str, lines: &str) -> Output {
    run_line_session(env, model, STREAM_JSON, lines)
}

/// The planner's events in order, as "type:number" where there is a number.
pub(crate) fn plan_trace(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .filter(|e| {
            let t = e["type"].as_str().unwrap_or("");
            t.starts_with("plan_") && t != "plan_revised"
        })
        .map(|e| match e["number"].as_u64() {
            Some(n) => format!("{}:{n}", e["type"].as_str().unwrap_or("")),
            None => e["type"].as_str().unwrap_or("").to_owned(),
        })
        .collect()
}

/// The status of each step in a `plan_summary` event, in step order.
fn outcome_statuses(summary: &Value) -> Vec<&str> {
    summary["outcomes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["status"].as_str().unwrap())
        .collect()
}

#[test]
fn a_plan_is_refined_approved_and_run_with_rollback_then_with_skipping() {
    let mut env = Env::new();
    env.write("a.txt", "original a\n");
    let generated = json!({"intent": "create three files", "risk": "low",
        "estimated_duration_secs": 30,
        "steps": [step("sa", "Write a.txt", &[]), step("sb", "Write b.txt", &["sa"]),
                  step("sc", "Write c.txt", &["sb"])]});
    // After "add rate limiting after step 2": sa, sb, s4 (after sb), sc (after sb). The model
    // then makes c.txt depend on a.txt only.
    let revised = json!({"intent": "create three files", "risk": "low",
        "estimated_duration_secs": 30,
        "steps": [step("sa", "Write a.txt", &[]), step("sb", "Write b.txt", &["sa"]),
                  {"id": "s4", "description": "Rate limiting", "dependencies": ["sb"],
                   "kind": "IMPLEMENT"},
                  step("sc", "Write c.txt", &["sa"])]});
    let mut replies = vec![plan_reply(&generated), plan_reply(&revised)];
    // Run 1, auto-rollback on: step 1 works, step 2 breaks a.txt, writes b.txt, fails.
    replies.extend(writing_step("a.txt", "a\n", "completed", "wrote a"));
    replies.extend(step_replies(vec![
        write("a.txt", "broken\n"),
        write("b.txt", "b\n"),
        report("failed", "b cannot be written"),
    ]));
    // Run 2, auto-rollback off: the same plan; step 2 fails, its dependent (3) is skipped,
    // the independent step 4 still runs.
    replies.push(plan_reply(&revised));
    replies.extend(writing_step("a.txt", "a\n", "completed", "wrote a"));
    replies.extend(writing_step("b.txt", "b\n", "failed", "b is wrong"));
    replies.extend(writing_step("c.txt", "c\n", "completed", "wrote c"));
    env.serve(Script::new(replies));

    let out = run(
        &env,
        "/auto \"Create a.txt, b.txt and c.txt\"\nadd rate limiting after step 2\nmake c.txt \
         depend only on a.txt\n/show-plan\n/approve\n/auto-rollback off\n/auto \"Create a.txt, \
         b.txt and c.txt\"\n/approve\n",
    );
    let ev = events(&out);
    let err = stderr(&out);

    // Two refinements: the parser's, then the model's, each with a diff.
    let revisions = of_type(&ev, "plan_revised");
    assert_eq!(revisions.len(), 2, "{err}");
    assert_eq!(revisions[0]["source"], "parser");
    assert!(
        revisions[0]["diff"]
            .as_str()
            .unwrap()
            .contains("+3. [IMPLEMENT] Rate limiting (after 2)")
    );
    assert_eq!(revisions[1]["source"], "model");
    assert!(
        revisions[1]["diff"]
            .as_str()
            .unwrap()
            .contains("+4. [IMPLEMENT] Write c.txt (after 1)")
    );
    let shown = of_type(&ev, "task_plan_shown");
    assert_eq!(shown.len(), 1);
    assert_eq!(shown[0]["plan"]["steps"].as_array().unwrap().len(), 4);

    // The planning request has no tools; the revision request carries the plan and the ask.
    let reqs = env.requests();
    assert!(reqs[0].body["tools"].as_array().is_none_or(Vec::is_empty));
    let revision = reqs[1].body["messages"].to_string();
    assert!(
        revision.contains("Revise it as the user asks: make c.txt depend only on a.txt"),
        "{revision}"
    );
    assert!(
        revision.contains("Rate limiting"),
        "the parser's edit went to the model: {revision}"
    );
    // A step's turn offers the report tool and says which step it is.
    let step_req = reqs[2].body.to_string();
    assert!(step_req.contains("plan_step_result"));
    assert!(
        step_req.contains("Plan step 1 of 4 [IMPLEMENT]: Write a.txt"),
        "{step_req}"
    );

    let trace = plan_trace(&ev);
    let first_summary = trace.iter().position(|t| t == "plan_summary").unwrap();
    assert_eq!(
        trace[..=first_summary],
        [
            "plan_generated",
            "plan_confirmed",
            "plan_step_started:1",
            "plan_step_completed:1",
            "plan_step_started:2",
            "plan_step_failed:2",
            "plan_summary",
        ],
        "{trace:?}"
    );
    let failed = &of_type(&ev, "plan_step_failed")[0];
    assert_eq!(failed["rolled_back"], true);
    assert_eq!(failed["error"], "b cannot be written");
    let summaries = of_type(&ev, "plan_summary");
    assert_eq!(summaries[0]["status"], "failed");
    assert_eq!(
        outcome_statuses(summaries[0]),
        ["completed", "failed", "pending", "pending"]
    );

    // Run 2: without rollback only the dependent of the failed step is skipped.
    assert_eq!(
        trace[first_summary + 1..],
        [
            "plan_generated",
            "plan_confirmed",
            "plan_step_started:1",
            "plan_step_completed:1",
            "plan_step_started:2",
            "plan_step_failed:2",
            "plan_step_skipped:3",
            "plan_step_started:4",
            "plan_step_completed:4",
            "plan_summary",
        ],
        "{trace:?}"
    );
    assert_eq!(of_type(&ev, "plan_step_failed")[1]["rolled_back"], false);
    assert_eq!(summaries[1]["status"], "failed");
    assert_eq!(
        outcome_statuses(summaries[1]),
        ["completed", "failed", "skipped", "completed"]
    );
    assert_eq!(
        env.read("b.txt"),
        "b\n",
        "no rollback: the failed step's file stays"
    );
    assert_eq!(env.read("c.txt"), "c\n");
    assert_eq!(
        env.requests().len(),
        13,
        "every scripted reply was used, no more"
    );
}

#[test]
fn a_rolled_back_step_restores_the_files_it_changed() {
    let mut env = Env::new();
    env.write("a.txt", "original a\n");
    let plan = json!({"intent": "edit", "steps": [step("sa", "Change a.txt", &[]),
        step("sb", "Add b.txt", &["sa"])]});
    let mut replies = vec![plan_reply(&plan)];
    replies.extend(writing_step("a.txt", "a\n", "completed", "ok"));
    replies.extend(step_replies(vec![
        write("a.txt", "broken\n"),
        write("b.txt", "b\n"),
        report("failed", "no"),
    ]));
    env.serve(Script::new(replies));
    let out = run(&env, "/auto \"edit\"\n/approve\n");
    let ev = events(&out);
    assert_eq!(
        of_type(&ev, "plan_step_failed")[0]["rolled_back"],
        true,
        "{}",
        stderr(&out)
    );
    assert_eq!(env.read("a.txt"), "a\n", "back to what step 1 left");
    assert!(
        !env.repo().join("b.txt").exists(),
        "step 2's new file is gone"
    );
    assert_eq!(of_type(&ev, "restored").len(), 1);
}

#[test]
fn bad_plans_are_re_asked_twice_then_fail_clearly() {
    let mut env = Env::new();
    let cycle =
        json!({"intent": "x", "steps": [step("sa", "A", &["sb"]), step("sb", "B", &["sa"])]});
    let huge: Vec<Value> = (0..500)
        .map(|i| step(&format!("s{i}"), "step", &[]))
        .collect();
    env.serve(Script::new(vec![
        Reply::text("{\"name\": \"not a plan\"}"),
        plan_reply(&cycle),
        plan_reply(&json!({"intent": "x", "steps": huge})),
    ]));
    let out = run(&env, "/auto \"do it\"\n/show-plan\n");
    let ev = events(&out);
    let failed = of_type(&ev, "plan_generation_failed");
    assert_eq!(failed.len(), 1, "{}", stderr(&out));
    assert_eq!(failed[0]["attempts"], 3);
    assert!(failed[0]["error"].as_str().unwrap().contains("500 steps"));
    assert!(of_type(&ev, "plan_generated").is_empty());
    let reqs = env.requests();
    assert_eq!(reqs.len(), 3, "bounded: no fourth request");
    let second = reqs[1].body["messages"].to_string();
    assert!(
        second.contains("not a plan"),
        "the re-ask quotes the error: {second}"
    );
    let third = reqs[2].body["messages"].to_string();
    assert!(third.contains("cycle"), "{third}");
    // Nothing waits: /show-plan answers with plan mode's (empty) queue.
    assert_eq!(of_type(&ev, "plan").len(), 1);
}

/// The line session (stream-json) fed `first`; once the model has had `requests`
/// requests and `settle_ms` more have passed, Ctrl-C, then `rest` and the end of input.
/// Returns the output and how long the session took from the Ctrl-C to its end.
pub(crate) fn interrupted(
    env: &Env,
    first: &str,
    requests: usize,
    settle_ms: u64,
    rest: &str,
) -> (Output, std::time::Duration) {
    use std::time::{Duration, Instant};
    let mut child = spawn_line_session(env, "m", STREAM_JSON);
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(first.as_bytes()).unwrap();
    let start = Instant::now();
    while env.requests().len() < requests {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "only {} model requests",
            env.requests().len()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // The line session is waiting for the answer (and so handles Ctrl-C) by now.
    std::thread::sleep(Duration::from_millis(settle_ms));
    let interrupted = Instant::now();
    let ok = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(ok.success());
    // A person types the next line after pressing Ctrl-C, not in the same instant.
    std::thread::sleep(Duration::from_millis(300));
    stdin.write_all(rest.as_bytes()).unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    (out, interrupted.elapsed())
}

#[test]
fn an_interrupt_stops_plan_generation_at_once_and_the_session_goes_on() {
    let mut env = Env::new();
    let plan = json!({"intent": "x", "steps": [step("sa", "A", &[])]});
    // The planning reply would take a minute; the interrupt must not wait for it.
    let slow = Reply {
        delay_ms: 60_000,
        ..plan_reply(&plan)
    };
    env.serve(Script::new(vec![slow, Reply::text("still here")]));
    let (out, took) = interrupted(&env, "/auto \"write a file\"\n", 1, 300, "say hi\n");
    let err = stderr(&out);
    assert!(
        took < std::time::Duration::from_secs(15),
        "the interrupt waited for the model: {took:?}"
    );
    let ev = events(&out);
    let cancelled = of_type(&ev, "plan_generation_cancelled");
    assert_eq!(cancelled.len(), 1, "{err}");
    assert_eq!(cancelled[0]["revision"], false);
    assert_eq!(cancelled[0]["attempts"], 1);
    assert!(of_type(&ev, "plan_generated").is_empty());
    assert!(of_type(&ev, "plan_generation_failed").is_empty());
    // Usable afterwards: the next prompt is a normal turn with the next reply.
    let done = of_type(&ev, "turn_completed");
    assert_eq!(done.len(), 1, "{err}");
    assert_eq!(done[0]["status"], "completed");
    assert_eq!(done[0]["text"], "still here");
    assert_eq!(env.requests().len(), 2);
}

#[test]
fn an_interrupted_revision_leaves_the_waiting_plan_as_it_was() {
    let mut env = Env::new();
    let plan = json!({"intent": "x", "steps": [step("sa", "A", &[])]});
    let revised = json!({"intent": "x", "steps": [step("sa", "A", &[]), step("sb", "B", &[])]});
    let slow = Reply {
        delay_ms: 60_000,
        ..plan_reply(&revised)
    };
    env.serve(Script::new(vec![plan_reply(&plan), slow]));
    let (out, took) = interrupted(
        &env,
        "/auto \"write a file\"\nmake it much better\n",
        2,
        300,
        "/show-plan\n",
    );
    let err = stderr(&out);
    assert!(took < std::time::Duration::from_secs(15), "{took:?}");
    let ev = events(&out);
    let cancelled = of_type(&ev, "plan_generation_cancelled");
    assert_eq!(cancelled.len(), 1, "{err}");
    assert_eq!(cancelled[0]["revision"], true);
    assert!(of_type(&ev, "plan_revised").is_empty());
    let shown = of_type(&ev, "task_plan_shown");
    assert_eq!(shown.len(), 1, "the plan still waits: {err}");
    assert_eq!(shown[0]["plan"]["steps"].as_array().unwrap().len(), 1);
}
