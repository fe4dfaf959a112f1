//! Goals and tasks through the line session: `/goal` sets an objective atto keeps working
//! toward until the model reports it met, the model tracks its steps with task tools, and
//! both survive a resume.

use atto_testkit::{Reply, Script};
use serde_json::json;

use crate::common::{Env, call, line_session, stderr};

#[test]
fn an_active_goal_keeps_the_work_going_until_the_model_reports_it_met() {
    let mut env = Env::new();
    env.serve(Script {
        replies: vec![
            Reply {
                text: Some("Planning.".into()),
                tool_calls: vec![
                    call("task_create", json!({"title": "write a.txt"})),
                    call(
                        "task_create",
                        json!({"title": "check it", "depends_on": [1]}),
                    ),
                ],
                ..Reply::default()
            },
            // Stops without reporting on the goal: atto continues.
            Reply::text("I made a plan."),
            Reply {
                text: Some("Doing it.".into()),
                tool_calls: vec![
                    call("write_file", json!({"path": "a.txt", "content": "done\n"})),
                    call("task_update", json!({"number": 1, "state": "completed"})),
                    call("task_list", json!({})),
                    call(
                        "goal_update",
                        json!({"status": "complete", "note": "a.txt says done"}),
                    ),
                ],
                ..Reply::default()
            },
            Reply::text("Goal met."),
        ],
        ..Script::default()
    });
    let err = line_session(
        &env,
        "/goal make a.txt say done --budget 100000\nstart\n/goals\n",
    );
    assert_eq!(env.read("a.txt"), "done\n");
    assert!(err.contains("is still active: continuing (1/10)"), "{err}");
    assert!(
        err.contains("[complete] make a.txt say done · "),
        "the goal was not completed: {err}"
    );
    let reqs = env.requests();
    assert_eq!(reqs.len(), 4, "one continuation, then the model finished");
    let continued = reqs[2].body["messages"].to_string();
    assert!(
        continued.contains("The session goal \\\"make a.txt say done\\\" is still active"),
        "{continued}"
    );
    // The task tools answered with the dependency rule applied.
    let last = reqs[3].body["messages"].to_string();
    assert!(last.contains("1. [completed] write a.txt"), "{last}");
    assert!(last.contains("2. [pending] check it (after 1)"), "{last}");

    // Goals and tasks are in the database: a resumed session lists them.
    let out = env
        .atto()
        .args(["-c", "--base-url", &env.base("chat"), "--model", "m"])
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write as _;
            child.stdin.take().unwrap().write_all(b"/goals\n")?;
            child.wait_with_output()
        })
        .unwrap();
    let err = stderr(&out);
    assert!(err.contains("[complete] make a.txt say done"), "{err}");
}

#[test]
fn goal_commands_change_status_and_bad_ones_are_one_line_errors() {
    let mut env = Env::new();
    env.serve(Script::default());
    let err = line_session(
        &env,
        "/goal first objective\n/goal pause\n/goals add \"second\"\n/goals done 2\n/goals done 9\n/goal resume\n/goal clear\n/goals\n",
    );
    assert!(err.contains("[paused] first objective"), "{err}");
    assert!(err.contains("[complete] second"), "{err}");
    assert!(
        err.lines().filter(|l| l.starts_with("error: ")).count() == 1,
        "only /goals done 9 fails: {err}"
    );
    // After clear, the cleared goal is gone; the completed one stays listed.
    let last = err.lines().last().unwrap_or("");
    assert!(last.contains("[complete] second"), "{err}");
    assert!(err.contains("[active] first objective"), "resume: {err}");
}

/// A reply that writes a file and reports `tokens` of usage.
fn costly_write(n: usize, tokens: u64) -> Reply {
    Reply {
        tool_calls: vec![call(
            "write_file",
            json!({"path": format!("f{n}.txt"), "content": "x\n"}),
        )],
        usage: Some(atto_testkit::ScriptUsage {
            input_tokens: tokens - 100,
            output_tokens: 100,
            ..Default::default()
        }),
        ..Reply::default()
    }
}

#[test]
fn a_goal_budget_stops_the_work_between_model_calls() {
    let mut env = Env::new();
    let mut replies: Vec<Reply> = (0..8).map(|n| costly_write(n, 2100)).collect();
    replies.push(Reply::text("resumed and done"));
    env.serve(Script {
        replies,
        ..Script::default()
    });
    let err = line_session(&env, "/goal write files --budget 5000\nstart\n/goals\n");
    let reqs = env.requests();
    // 2,100 tokens a call: after three calls (6,300) the budget is spent, and no fourth
    // call is sent.
    assert_eq!(reqs.len(), 3, "{err}");
    // The third call may produce no more than the budget has left (5,000 - 4,200).
    let max = reqs[2].body["max_tokens"].as_u64().unwrap();
    assert!(max <= 800, "third call allowed {max} output tokens");
    assert!(err.contains("budget_limited"), "{err}");
    assert!(err.contains("[budget_limited] write files"), "{err}");

    // Raising the budget makes room to resume the goal.
    let out = crate::common::run_line_session(
        &env,
        "m",
        &["-c", "--permission", "auto-safe"],
        "/goal budget 50000\n/goal resume\n/goals\n",
    );
    let err = stderr(&out);
    assert!(
        err.contains("[active] write files · 6300 tokens of 50000"),
        "{err}"
    );
}

#[test]
fn a_provider_usage_limit_stops_the_goal_as_usage_limited() {
    let mut env = Env::new();
    env.serve(Script {
        replies: vec![Reply {
            fault: Some(atto_testkit::Fault::Status {
                status: 402,
                body: Some(r#"{"error":{"message":"You exceeded your current quota"}}"#.into()),
                retry_after: None,
            }),
            ..Reply::default()
        }],
        ..Script::default()
    });
    let err = line_session(&env, "/goal ship it\nstart\n/goals\n");
    assert!(err.contains("usage_limited"), "{err}");
    assert!(err.contains("[usage_limited] ship it"), "{err}");
}

#[test]
fn a_goal_is_in_the_first_request_and_idle_replies_are_not_continued() {
    let mut env = Env::new();
    env.serve(Script {
        replies: vec![
            // A reply that does nothing toward the goal: nothing to continue.
            Reply::text("I would rather chat."),
            // The next prompt works, then stops twice without a tool call: one
            // continuation, then the turn ends.
            Reply {
                tool_calls: vec![call(
                    "write_file",
                    json!({"path": "a.txt", "content": "x\n"}),
                )],
                ..Reply::default()
            },
            Reply::text("Wrote it."),
            Reply::text("Still here."),
            Reply::text("never asked for"),
        ],
        ..Script::default()
    });
    let err = line_session(
        &env,
        "/goal make a.txt say done --budget 100000\nhello\nwrite it\n",
    );
    let reqs = env.requests();
    assert_eq!(reqs.len(), 4, "no continuation of an idle reply: {err}");
    let first = reqs[0].body["messages"].to_string();
    assert!(
        first.contains("Session goal (active): \\\"make a.txt say done\\\""),
        "{first}"
    );
    assert!(err.contains("continuing (1/10)"), "{err}");
    assert!(!err.contains("continuing (2/10)"), "{err}");
}
