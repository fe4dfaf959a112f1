//! Modes over ACP: the client switches atto into plan mode, the changes the model
//! proposes arrive as pending tool calls with their diffs, and the client approves one
//! and rejects the other; goals arrive as plan entries.

use atto_testkit::{Reply, Script};
use serde_json::{Value, json};

use super::{have_client, opening, prompt, query, run};
use crate::common::{Env, call};

#[test]
fn plan_mode_queues_changes_as_pending_tool_calls_the_client_approves_or_rejects() {
    if !have_client("plan_mode_queues_changes") {
        return;
    }
    let mut env = Env::new();
    env.serve(Script::new(vec![
        Reply {
            text: Some("two changes".into()),
            tool_calls: vec![
                call(
                    "write_file",
                    json!({"path": "kept.txt", "content": "hello\n"}),
                ),
                call(
                    "write_file",
                    json!({"path": "dropped.txt", "content": "no\n"}),
                ),
            ],
            ..Reply::default()
        },
        Reply::text("planned"),
    ]));
    let mut steps = opening();
    steps.push(json!({"op": "set_mode", "mode": "plan"}));
    steps.push(prompt("add two files"));
    steps.push(json!({"op": "set_mode", "mode": "chaos"}));
    let seen = run(
        &env,
        &["--permission", "auto-safe"],
        json!({"steps": steps, "permissions": ["allow_once", "reject_once"]}),
    );
    seen.result(2);
    let switched = seen.updates_of("current_mode_update");
    assert_eq!(switched[0]["currentModeId"], "plan", "{}", seen.dump());
    assert_eq!(seen.result(3)["stopReason"], "end_turn");
    let bad_mode = seen.error(4);
    assert_eq!(bad_mode["code"], -32602);

    // Each proposed change is a pending tool call with its diff, then a question.
    let proposed: Vec<&Value> = seen
        .updates()
        .into_iter()
        .filter(|u| {
            u["title"]
                .as_str()
                .is_some_and(|t| t.starts_with("proposed change"))
        })
        .collect();
    assert_eq!(proposed.len(), 2, "{}", seen.dump());
    assert_eq!(proposed[0]["title"], "proposed change 1: Write kept.txt");
    assert_eq!(proposed[0]["status"], "pending");
    assert_eq!(proposed[0]["content"][0]["type"], "diff");
    assert_eq!(proposed[0]["content"][0]["newText"], "hello\n");
    let asked = seen.permissions();
    assert_eq!(asked.len(), 2, "{}", seen.dump());
    assert_eq!(
        asked[0]["toolCall"]["toolCallId"],
        proposed[0]["toolCallId"]
    );
    assert_eq!(asked[0]["options"][0]["name"], "Apply this change");
    // The question carries the change, so the editor shows the diff it approves.
    let diff = &asked[0]["toolCall"]["content"][0];
    assert_eq!(diff["type"], "diff", "{}", asked[0]);
    assert_eq!(diff["newText"], "hello\n");
    assert_eq!(diff["path"], proposed[0]["content"][0]["path"]);

    // Approved: applied; rejected: not; both tool calls end so.
    assert_eq!(env.read("kept.txt"), "hello\n");
    assert!(!env.repo().join("dropped.txt").exists());
    let ended = |id: &Value| -> String {
        seen.updates_of("tool_call_update")
            .iter()
            .filter(|u| &u["toolCallId"] == id)
            .filter_map(|u| u["status"].as_str())
            .next_back()
            .unwrap_or("")
            .to_owned()
    };
    assert_eq!(ended(&proposed[0]["toolCallId"]), "completed");
    assert_eq!(ended(&proposed[1]["toolCallId"]), "failed");
    let statuses = query(&env, "select status from proposed_changes order by ord");
    assert_eq!(statuses, ["applied", "rejected"]);
}

#[test]
fn a_goal_set_by_slash_command_arrives_as_a_plan_entry() {
    if !have_client("a_goal_set_by_slash_command") {
        return;
    }
    let mut env = Env::new();
    env.serve(Script::new(vec![Reply::text("unused")]));
    let mut steps = opening();
    steps.push(prompt("/goal ship the parser"));
    steps.push(prompt("/nonsense"));
    let seen = run(
        &env,
        &["--permission", "auto-safe"],
        json!({"steps": steps}),
    );
    assert_eq!(seen.result(2)["stopReason"], "end_turn");
    let plans = seen.updates_of("plan");
    let entry = &plans.last().unwrap_or_else(|| panic!("{}", seen.dump()))["entries"][0];
    assert_eq!(entry["content"], "goal: ship the parser");
    assert_eq!(entry["status"], "in_progress");
    assert_eq!(entry["priority"], "high");
    // An unknown command is one line of text, and the prompt still ends.
    assert_eq!(seen.result(3)["stopReason"], "end_turn");
    assert!(
        seen.text_of("agent_message_chunk").contains("atto: "),
        "{}",
        seen.dump()
    );
    assert!(env.requests().is_empty());
}

#[test]
fn a_step_plan_s_steps_are_plan_entries_and_its_decision_is_asked_of_the_client() {
    if !have_client("a_step_plan_s_decision") {
        return;
    }
    use crate::planner::{plan_reply, step, writing_step};
    let mut first = step("sa", "Write the config", &[]);
    first["decision"] = json!({"question": "Which format?", "options": ["json", "toml"]});
    let plan = json!({"intent": "config", "steps": [first, step("sb", "Write b.txt", &["sa"])]});
    let mut env = Env::new();
    let mut replies = vec![plan_reply(&plan)];
    replies.extend(writing_step(
        "a.txt",
        "format = toml\n",
        "completed",
        "wrote toml",
    ));
    replies.extend(writing_step("b.txt", "b\n", "completed", "wrote b"));
    env.serve(Script::new(replies));
    let mut steps = opening();
    steps.push(prompt("/auto \"write the config\""));
    steps.push(json!({"op": "wait", "text": "Write the config"}));
    steps.push(prompt("/approve"));
    steps.push(json!({"op": "wait", "text": "wrote b"}));
    let seen = run(
        &env,
        &["--permission", "auto-safe"],
        json!({"steps": steps, "permissions": ["2"]}),
    );
    assert_eq!(seen.result(2)["stopReason"], "end_turn");
    assert_eq!(seen.result(4)["stopReason"], "end_turn");
    seen.result(5);
    // The decision, asked with the choices as options.
    let asked = seen.permissions();
    assert_eq!(asked.len(), 1, "{}", seen.dump());
    let options: Vec<&str> = asked[0]["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["name"].as_str().unwrap())
        .collect();
    assert_eq!(options, ["json", "toml", "Stop the plan"]);
    assert_eq!(env.read("a.txt"), "format = toml\n");
    let sent = env.requests()[1].body["messages"].to_string();
    assert!(sent.contains("Which format?\\\": toml"), "{sent}");
    // The steps as plan entries: drafted pending, then both completed.
    let plans = seen.updates_of("plan");
    assert_eq!(plans[0]["entries"][0]["content"], "1. Write the config");
    assert_eq!(plans[0]["entries"][0]["status"], "pending");
    let last = &plans.last().unwrap()["entries"];
    assert_eq!(last[0]["status"], "completed", "{}", seen.dump());
}

#[test]
fn proposed_changes_nobody_decides_stay_pending_in_the_stored_plan() {
    if !have_client("proposed_changes_nobody_decides") {
        return;
    }
    let mut env = Env::new();
    env.serve(Script::new(vec![
        Reply {
            tool_calls: vec![
                call("write_file", json!({"path": "one.txt", "content": "1\n"})),
                call("write_file", json!({"path": "two.txt", "content": "2\n"})),
            ],
            ..Reply::default()
        },
        Reply::text("planned"),
    ]));
    let mut steps = opening();
    steps.push(prompt("add two files"));
    let seen = run(
        &env,
        &["--permission", "auto-safe", "--mode", "plan"],
        json!({"steps": steps, "permissions": ["cancelled"]}),
    );
    assert_eq!(seen.result(1)["modes"]["currentModeId"], "plan");
    assert_eq!(seen.result(2)["stopReason"], "end_turn");
    // The first question went unanswered: the second is not asked, nothing is applied.
    assert_eq!(seen.permissions().len(), 1, "{}", seen.dump());
    assert!(!env.repo().join("one.txt").exists());
    assert!(!env.repo().join("two.txt").exists());
    let statuses = query(&env, "select status from proposed_changes order by ord");
    assert_eq!(statuses, ["pending", "pending"]);
}
