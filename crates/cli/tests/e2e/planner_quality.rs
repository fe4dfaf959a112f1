//! `/auto` steps through the quality pipeline: a step that reports itself completed but
//! left a file that does not compile is tried again, told exactly where the error is; a
//! judge (when a model is named for it) scores the work and its feedback reaches the
//! retry; when the retries run out the step fails and is rolled back.

use atto_testkit::{Reply, Script};
use serde_json::{Value, json};

use crate::common::{Env, call, events, of_type, stderr};
use crate::planner::{plan_reply, report, run, step_replies, write};

fn one_step_plan(kind: &str, file: &str) -> Value {
    json!({"intent": "write the app", "risk": "low", "estimated_duration_secs": 30,
        "steps": [{"id": "s1", "description": format!("Write {file} with a main function"),
                   "dependencies": [], "complexity": 2, "token_budget": 20000,
                   "kind": kind, "files": [file]}]})
}

fn swarm_yaml(env: &Env, text: &str) {
    env.write(".atto/swarm.yaml", text);
}

const BROKEN: &str = "def main():\n    print('hi')\n      return 1\n";
const FIXED: &str = "def main():\n    print('hi')\n    return 1\n";

#[test]
fn a_step_that_does_not_compile_is_retried_with_the_error_and_then_passes() {
    let mut env = Env::new();
    let mut replies = vec![plan_reply(&one_step_plan("IMPLEMENT", "app.py"))];
    replies.extend(step_replies(vec![
        write("app.py", BROKEN),
        report("completed", "wrote app.py"),
    ]));
    replies.extend(step_replies(vec![
        write("app.py", FIXED),
        report("completed", "fixed the indentation"),
    ]));
    env.serve(Script::new(replies));
    let out = run(&env, "/auto \"write app.py\"\n/approve\n");
    let ev = events(&out);
    let retrying = of_type(&ev, "plan_step_retrying");
    assert_eq!(retrying.len(), 1, "{}", stderr(&out));
    assert_eq!(retrying[0]["attempt"], 2);
    let findings = retrying[0]["quality"]["findings"].to_string();
    assert!(findings.contains("app.py:3"), "{findings}");
    // The retry's prompt carries the seed's block with the error's place.
    let requests = env.requests();
    let retry_prompt = requests[3].body["messages"].to_string();
    assert!(
        retry_prompt.contains("## Previous Attempt (attempt 2/3, score: 1/5)"),
        "{retry_prompt}"
    );
    assert!(
        retry_prompt.contains("### Compilation Errors"),
        "{retry_prompt}"
    );
    assert!(retry_prompt.contains("app.py:3 — "), "{retry_prompt}");
    let done = of_type(&ev, "plan_step_completed");
    assert_eq!(done.len(), 1);
    assert_eq!(done[0]["quality"]["verdict"], "pass");
    assert_eq!(env.read("app.py"), FIXED);
}

#[test]
fn when_the_retries_run_out_the_step_fails_and_is_rolled_back() {
    let mut env = Env::new();
    env.write("app.py", "print('before')\n");
    swarm_yaml(&env, "swarm:\n  max_verification_retries: 0\n");
    let mut replies = vec![plan_reply(&one_step_plan("IMPLEMENT", "app.py"))];
    replies.extend(step_replies(vec![
        write("app.py", BROKEN),
        report("completed", "wrote app.py"),
    ]));
    env.serve(Script::new(replies));
    let out = run(&env, "/auto \"write app.py\"\n/approve\n");
    let ev = events(&out);
    assert!(of_type(&ev, "plan_step_retrying").is_empty());
    let failed = of_type(&ev, "plan_step_failed");
    assert_eq!(failed.len(), 1, "{}", stderr(&out));
    assert_eq!(failed[0]["rolled_back"], true);
    assert_eq!(failed[0]["quality"]["verdict"], "fail");
    assert!(failed[0]["error"].as_str().unwrap().contains("app.py:3"));
    assert_eq!(env.read("app.py"), "print('before')\n");
}

#[test]
fn the_judge_scores_the_step_and_its_feedback_reaches_the_retry() {
    let mut env = Env::new();
    swarm_yaml(&env, "swarm:\n  quality_gate_model: m\n");
    let mut replies = vec![plan_reply(&one_step_plan("IMPLEMENT", "app.py"))];
    replies.extend(step_replies(vec![
        write("app.py", FIXED),
        report("completed", "wrote app.py"),
    ]));
    replies.push(Reply::text(
        "SCORE: 2\nFEEDBACK: main returns 1 but the task wants a greeting function too",
    ));
    replies.extend(step_replies(vec![
        write(
            "app.py",
            "def greet():\n    return 'hi'\n\n\ndef main():\n    return greet()\n",
        ),
        report("completed", "added greet"),
    ]));
    replies.push(Reply::text("SCORE: 4\nFEEDBACK: fine"));
    env.serve(Script::new(replies));
    let out = run(&env, "/auto \"write app.py\"\n/approve\n");
    let ev = events(&out);
    let requests = env.requests();
    // The judge's request: low temperature, bounded output, the worker's tool actions.
    let judge = &requests[3].body;
    assert_eq!(
        judge["temperature"].as_f64().map(|t| (t * 10.0).round()),
        Some(1.0)
    );
    assert_eq!(judge["max_tokens"], 800);
    let judged = judge["messages"].to_string();
    assert!(judged.contains("## Tool Actions"), "{judged}");
    assert!(judged.contains("write_file"), "{judged}");
    let retry_prompt = requests[4].body["messages"].to_string();
    assert!(retry_prompt.contains("score: 2/5"), "{retry_prompt}");
    assert!(
        retry_prompt.contains("the task wants a greeting function too"),
        "{retry_prompt}"
    );
    let done = of_type(&ev, "plan_step_completed");
    assert_eq!(done.len(), 1, "{}", stderr(&out));
    assert_eq!(done[0]["quality"]["score"], 4);
}

#[test]
fn a_judge_that_cannot_answer_gives_three_but_two_for_a_test_step() {
    // Implement step: the judge's garbled answer is a neutral 3, which passes.
    let mut env = Env::new();
    swarm_yaml(
        &env,
        "swarm:\n  quality_gate_model: m\n  enable_verification: false\n",
    );
    let mut replies = vec![plan_reply(&one_step_plan("IMPLEMENT", "app.py"))];
    replies.extend(step_replies(vec![
        write("app.py", FIXED),
        report("completed", "wrote app.py"),
    ]));
    replies.push(Reply::text("I think it is fine."));
    env.serve(Script::new(replies));
    let out = run(&env, "/auto \"write app.py\"\n/approve\n");
    let ev = events(&out);
    let done = of_type(&ev, "plan_step_completed");
    assert_eq!(done.len(), 1, "{}", stderr(&out));
    assert_eq!(done[0]["quality"]["score"], 3);
    assert!(
        done[0]["quality"]["findings"]
            .to_string()
            .contains("judge: ")
    );

    // Test step: the same answer is a fail-safe 2, below the test threshold of 4.
    let mut env = Env::new();
    swarm_yaml(
        &env,
        "swarm:\n  quality_gate_model: m\n  enable_verification: false\n  \
         test_require_execution_evidence: false\n  max_verification_retries: 0\n",
    );
    let mut replies = vec![plan_reply(&one_step_plan("TEST", "test_app.py"))];
    replies.extend(step_replies(vec![
        write("test_app.py", "def test_ok():\n    assert True\n"),
        report("completed", "wrote the test"),
    ]));
    replies.push(Reply::text("no idea"));
    env.serve(Script::new(replies));
    let out = run(&env, "/auto \"test app.py\"\n/approve\n");
    let ev = events(&out);
    let failed = of_type(&ev, "plan_step_failed");
    assert_eq!(failed.len(), 1, "{}", stderr(&out));
    assert_eq!(failed[0]["quality"]["score"], 2);
}

#[test]
fn a_denied_test_command_is_no_evidence_that_the_tests_ran() {
    let mut env = Env::new();
    swarm_yaml(
        &env,
        "swarm:\n  enable_verification: false\n  max_verification_retries: 0\n",
    );
    let mut replies = vec![plan_reply(&one_step_plan("TEST", "test_app.py"))];
    // The command names pytest, but policy refuses it (BLOCK): nothing ran.
    let refused = call(
        "bash",
        json!({"command": "python3 -m pytest -q; rm -rf / --no-preserve-root"}),
    );
    replies.extend(step_replies(vec![
        write("test_app.py", "def test_ok():\n    assert True\n"),
        refused,
        report("completed", "the tests pass"),
    ]));
    env.serve(Script::new(replies));
    let out = run(&env, "/auto \"test app.py\"\n/approve\n");
    let ev = events(&out);
    let denied = of_type(&ev, "tool_call_finished")
        .into_iter()
        .filter(|e| e["name"] == "bash" && e["status"] == "denied")
        .count();
    assert_eq!(denied, 1, "{}", stderr(&out));
    let failed = of_type(&ev, "plan_step_failed");
    assert_eq!(failed.len(), 1, "{}\n{ev:?}", stderr(&out));
    let findings = failed[0]["quality"]["findings"].to_string();
    assert!(findings.contains("no test run shows"), "{findings}");
}
