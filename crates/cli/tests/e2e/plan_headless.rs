//! `atto plan show|approve|reject`: a pending plan queued by `atto exec --mode plan` is
//! reviewed afterwards from the command line with no model configured (no key, no base
//! URL), and the files, the exit codes and the plan's state show what was decided.

use std::process::Output;

use atto_testkit::{Reply, Script, ScriptToolCall};
use serde_json::{Value, json};

use crate::common::{Env, events, of_type, stderr};

fn call(name: &str, arguments: Value) -> ScriptToolCall {
    ScriptToolCall {
        id: None,
        name: name.into(),
        arguments,
        raw_arguments: None,
    }
}

/// Serves a first reply that makes `calls`, a second that sums up, and a third for a
/// later turn.
fn serve(env: &mut Env, calls: Vec<ScriptToolCall>) {
    env.serve(Script {
        replies: vec![
            Reply {
                text: Some("Proposing the changes.".into()),
                tool_calls: calls,
                ..Reply::default()
            },
            Reply::text("Queued the changes for your approval."),
            Reply::text("Understood."),
        ],
        ..Script::default()
    });
}

/// `atto exec --mode plan` against the scripted server, as stream-json.
fn exec_plan(env: &Env, task: &str) -> Output {
    env.atto()
        .args(["exec", "--mode", "plan", "--permission", "auto-safe"])
        .args(["--output-format", "stream-json"])
        .args(["--base-url", &env.base("chat"), "--model", "m", task])
        .output()
        .unwrap()
}

/// `atto plan ARGS…`, with no provider, key or base URL anywhere.
fn plan(env: &Env, args: &[&str]) -> Output {
    env.atto().arg("plan").args(args).output().unwrap()
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Exit 2 with exactly one line on stderr, starting `atto: `; returns that line.
fn usage_error(output: &Output) -> String {
    let err = stderr(output);
    assert_eq!(output.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.starts_with("atto: "), "{err}");
    err
}

/// The plan as `atto plan show --output-format json` prints it.
fn plan_json(env: &Env, session: &str) -> Value {
    let out = plan(
        env,
        &["show", "--session", session, "--output-format", "json"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let event: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(event["type"], "plan", "{event}");
    event
}

fn statuses(event: &Value) -> Vec<String> {
    event["plan"]["proposed_changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["status"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_plan_queued_by_exec_is_shown_approved_in_part_and_rejected_without_a_model() {
    let mut env = Env::new();
    env.write("a.txt", "one\ntwo\n");
    serve(
        &mut env,
        vec![
            call(
                "write_file",
                json!({"path": "new.txt", "content": "fresh\n"}),
            ),
            call(
                "edit_file",
                json!({"path": "a.txt", "old_string": "one", "new_string": "ONE"}),
            ),
            call("write_file", json!({"path": "c.txt", "content": "three\n"})),
        ],
    );

    // exec in plan mode: the three writes are queued, reported as queued, and not run.
    let exec = exec_plan(&env, "Create new.txt, capitalise a.txt, add c.txt");
    assert_eq!(exec.status.code(), Some(0), "{}", stderr(&exec));
    let evs = events(&exec);
    let finished = of_type(&evs, "tool_call_finished");
    assert_eq!(finished.len(), 3);
    assert!(finished.iter().all(|e| e["status"] == "queued"), "{evs:?}");
    let queued: Vec<u64> = of_type(&evs, "change_queued")
        .iter()
        .map(|e| e["change"]["order"].as_u64().unwrap())
        .collect();
    assert_eq!(queued, [1, 2, 3]);
    let result = evs.last().unwrap();
    assert_eq!(result["type"], "result");
    assert_eq!(result["status"], "completed");
    let session = result["session_id"].as_str().unwrap().to_owned();
    // The model was told each change is queued, not applied.
    let body = &env.requests()[1].body;
    let told: Vec<&str> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(told.len(), 3, "{body}");
    for note in told {
        assert!(
            note.starts_with("[PLAN MODE] Change queued for approval"),
            "{note}"
        );
        assert!(note.contains("It has NOT been applied"), "{note}");
    }
    assert!(!env.repo().join("new.txt").exists());
    assert!(!env.repo().join("c.txt").exists());
    assert_eq!(env.read("a.txt"), "one\ntwo\n");

    // show (the latest session by default): every change, in order, with its diff.
    let show = plan(&env, &["show"]);
    assert_eq!(show.status.code(), Some(0), "{}", stderr(&show));
    let text = stdout(&show);
    assert!(text.contains("3 change(s), 3 pending"), "{text}");
    for line in [
        "1. write_file new.txt [pending]",
        "2. edit_file a.txt [pending]",
        "3. write_file c.txt [pending]",
        "+fresh",
        "-one",
        "+ONE",
    ] {
        assert!(text.contains(line), "{line:?} missing from:\n{text}");
    }

    // A selection beyond the plan: exit 2, one line, nothing run or decided.
    let err = usage_error(&plan(&env, &["approve", "99"]));
    assert!(err.contains("3 pending change(s)"), "{err}");
    assert!(!env.repo().join("new.txt").exists());
    assert_eq!(env.read("a.txt"), "one\ntwo\n");
    assert_eq!(
        statuses(&plan_json(&env, "latest")),
        ["pending", "pending", "pending"]
    );

    // approve 2: the first two run, the third waits. The session is named by a prefix.
    let approve = plan(&env, &["approve", "2", "--session", &session[..8]]);
    assert_eq!(approve.status.code(), Some(0), "{}", stderr(&approve));
    let text = stdout(&approve);
    assert!(text.contains("1. write_file new.txt: applied"), "{text}");
    assert!(text.contains("2. edit_file a.txt: applied"), "{text}");
    assert!(text.contains("plan: 2 applied, 1 pending"), "{text}");
    assert_eq!(env.read("new.txt"), "fresh\n");
    assert_eq!(env.read("a.txt"), "ONE\ntwo\n");
    assert!(!env.repo().join("c.txt").exists());
    assert_eq!(
        statuses(&plan_json(&env, &session)),
        ["applied", "applied", "pending"]
    );

    // reject the rest, with a reason kept on the change.
    let reject = plan(&env, &["reject", "--reason", "no"]);
    assert_eq!(reject.status.code(), Some(0), "{}", stderr(&reject));
    let text = stdout(&reject);
    assert!(
        text.contains("3. write_file c.txt: rejected — rejected by the user: no"),
        "{text}"
    );
    assert!(!env.repo().join("c.txt").exists());

    // Nothing is pending now: show says so, deciding again is bad usage.
    let show = plan(&env, &["show"]);
    assert_eq!(show.status.code(), Some(0), "{}", stderr(&show));
    assert!(
        stdout(&show).starts_with("no pending plan"),
        "{}",
        stdout(&show)
    );
    assert!(plan_json(&env, "latest")["plan"].is_null());
    let err = usage_error(&plan(&env, &["approve"]));
    assert!(err.contains("no pending plan"), "{err}");
    assert_eq!(env.read("a.txt"), "ONE\ntwo\n");

    // Only exec talked to the model.
    assert_eq!(env.requests().len(), 2);

    // The conversation goes on: the model hears what was decided, and why.
    let next = env
        .atto()
        .args(["exec", "--continue", "--base-url", &env.base("chat")])
        .args(["--model", "m", "What now?"])
        .output()
        .unwrap();
    assert_eq!(next.status.code(), Some(0), "{}", stderr(&next));
    let told = env.requests()[2].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .unwrap()["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(told.starts_with("What now?"), "{told}");
    for says in [
        "[PLAN REVIEW]",
        "change 1 (write_file new.txt): applied",
        "change 2 (edit_file a.txt): applied",
        "change 3 (write_file c.txt): rejected — rejected by the user: no",
    ] {
        assert!(told.contains(says), "{says:?} missing from:\n{told}");
    }
}

#[test]
fn a_file_changed_since_the_plan_is_a_conflict_and_exits_1() {
    let mut env = Env::new();
    env.write("a.txt", "one\n");
    serve(
        &mut env,
        vec![
            call(
                "edit_file",
                json!({"path": "a.txt", "old_string": "one", "new_string": "ONE"}),
            ),
            call("write_file", json!({"path": "b.txt", "content": "bee\n"})),
        ],
    );
    let exec = exec_plan(&env, "Capitalise a.txt and add b.txt");
    assert_eq!(exec.status.code(), Some(0), "{}", stderr(&exec));
    env.write("a.txt", "one, edited by hand\n");

    let approve = plan(&env, &["approve", "--output-format", "json"]);
    assert_eq!(approve.status.code(), Some(1), "{}", stderr(&approve));
    let decided: Value = serde_json::from_str(stdout(&approve).trim()).unwrap();
    assert_eq!(decided["type"], "plan_decided", "{decided}");
    let outcomes: Vec<(&str, &str)> = decided["outcomes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| (o["target"].as_str().unwrap(), o["status"].as_str().unwrap()))
        .collect();
    assert_eq!(outcomes, [("a.txt", "conflict"), ("b.txt", "applied")]);
    // The hand edit is kept; the conflicting change stays pending for another decision.
    assert_eq!(env.read("a.txt"), "one, edited by hand\n");
    assert_eq!(env.read("b.txt"), "bee\n");
    assert_eq!(
        statuses(&plan_json(&env, "latest")),
        ["conflict", "applied"]
    );
}

#[test]
fn approving_is_not_above_policy_a_deny_rule_still_refuses_and_exits_1() {
    let mut env = Env::new();
    serve(
        &mut env,
        vec![
            call("write_file", json!({"path": "ok.txt", "content": "fine\n"})),
            call(
                "write_file",
                json!({"path": "secret.txt", "content": "no\n"}),
            ),
        ],
    );
    let exec = exec_plan(&env, "Write ok.txt and secret.txt");
    assert_eq!(exec.status.code(), Some(0), "{}", stderr(&exec));
    // The project forbids the second write after it was queued.
    env.write(
        ".atto/config.toml",
        "[permissions]\ndeny = [\"write_file(secret.txt)\"]\n",
    );

    let approve = plan(&env, &["approve"]);
    assert_eq!(approve.status.code(), Some(1), "{}", stderr(&approve));
    let text = stdout(&approve);
    assert!(text.contains("1. write_file ok.txt: applied"), "{text}");
    assert!(text.contains("2. write_file secret.txt: failed"), "{text}");
    assert_eq!(env.read("ok.txt"), "fine\n");
    assert!(!env.repo().join("secret.txt").exists());
}

#[test]
fn bad_selections_and_unknown_sessions_are_one_line_and_change_nothing() {
    let mut env = Env::new();
    env.write("a.txt", "one\n");
    serve(
        &mut env,
        vec![call(
            "write_file",
            json!({"path": "a.txt", "content": "replaced\n"}),
        )],
    );
    let exec = exec_plan(&env, "Replace a.txt");
    assert_eq!(exec.status.code(), Some(0), "{}", stderr(&exec));

    let err = usage_error(&plan(&env, &["show", "--session", "nope"]));
    assert!(err.contains("no session matches 'nope'"), "{err}");
    let err = usage_error(&plan(&env, &["approve", "--session", "nope"]));
    assert!(err.contains("no session matches 'nope'"), "{err}");
    let err = usage_error(&plan(&env, &["approve", "0"]));
    assert!(err.contains("approves nothing"), "{err}");
    let err = usage_error(&plan(&env, &["approve", "two"]));
    assert!(err.contains("'two'"), "{err}");
    let err = usage_error(&plan(&env, &["reject", "5-3"]));
    assert!(err.contains("'5-3'"), "{err}");
    let err = usage_error(&plan(&env, &["reject", "2"]));
    assert!(err.contains("there is no change 2"), "{err}");
    // A session is picked with --session: -r given to the session options is refused.
    let resumed = env
        .atto()
        .args(["-r", "latest", "plan", "approve"])
        .output()
        .unwrap();
    let err = usage_error(&resumed);
    assert!(err.contains("--session"), "{err}");

    assert_eq!(env.read("a.txt"), "one\n");
    assert_eq!(statuses(&plan_json(&env, "latest")), ["pending"]);
}
