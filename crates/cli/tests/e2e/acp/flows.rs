//! The ACP conversation as an editor has it: capabilities, a prompt streamed as chunks,
//! prompt content blocks, an edit whose diff arrives in its tool call, approvals answered
//! (allow once, reject, no answer before the deadline), a cancel mid-turn, and loading a
//! session `atto exec` made.

use atto_testkit::{Reply, Script};
use serde_json::{Value, json};

use super::{have_client, opening, prompt, query, run};
use crate::common::{Env, call, events};

#[test]
fn a_prompt_streams_thought_and_answer_chunks_after_honest_capabilities() {
    if !have_client("a_prompt_streams") {
        return;
    }
    let mut env = Env::new();
    env.serve(Script::new(vec![
        Reply {
            thinking: Some("pondering the question".into()),
            text: Some("Hello from atto, streamed in pieces".into()),
            ..Reply::default()
        },
        Reply::text("read both"),
    ]));
    let mut steps = opening();
    steps.push(prompt("say hello"));
    steps.push(json!({"op": "prompt", "prompt": [
        {"type": "text", "text": "look at these"},
        {"type": "resource_link", "uri": "file:///elsewhere/linked.rs", "name": "linked.rs"},
        {"type": "resource", "resource": {
            "uri": "file:///elsewhere/notes.txt", "mimeType": "text/plain",
            "text": "EMBEDDED-NOTE-CONTENT"}}
    ]}));
    steps.push(json!({"op": "prompt", "prompt": [
        {"type": "image", "data": "aGk=", "mimeType": "image/png"}
    ]}));
    let seen = run(
        &env,
        &["--permission", "auto-safe"],
        json!({"steps": steps}),
    );

    let init = seen.result(0);
    assert_eq!(init["protocolVersion"], 1);
    let caps = &init["agentCapabilities"];
    assert_eq!(caps["loadSession"], true);
    assert_eq!(caps["promptCapabilities"]["embeddedContext"], true);
    assert_eq!(caps["promptCapabilities"]["image"], false);
    assert_eq!(caps["mcpCapabilities"]["http"], true);
    assert_eq!(caps["mcpCapabilities"]["sse"], false);
    assert_eq!(init["authMethods"], json!([]));
    let new = seen.result(1);
    assert_eq!(new["modes"]["currentModeId"], "build");
    let modes: Vec<&str> = new["modes"]["availableModes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(modes, ["build", "plan", "review", "debug"]);
    let commands = seen.updates_of("available_commands_update");
    let names: Vec<&str> = commands[0]["availableCommands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    for name in ["approve", "reject", "show-plan", "mode", "undo", "goal"] {
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }

    assert_eq!(seen.result(2)["stopReason"], "end_turn");
    // Streamed: more than one chunk, which together are the whole answer.
    assert!(
        seen.updates_of("agent_message_chunk").len() > 1,
        "{}",
        seen.dump()
    );
    assert!(
        seen.text_of("agent_message_chunk")
            .starts_with("Hello from atto, streamed in pieces"),
        "{}",
        seen.dump()
    );
    assert_eq!(
        seen.text_of("agent_thought_chunk"),
        "pondering the question"
    );

    // Links are named, embedded text goes to the model whole.
    assert_eq!(seen.result(3)["stopReason"], "end_turn");
    let sent = env.requests()[1].body.to_string();
    assert!(sent.contains("EMBEDDED-NOTE-CONTENT"), "{sent}");
    assert!(sent.contains("file:///elsewhere/linked.rs"), "{sent}");
    // An image is refused with a clear error (the capabilities said so); no model call.
    let refused = seen.error(4);
    assert_eq!(refused["code"], -32602, "{refused}");
    assert!(
        refused["data"].as_str().unwrap().contains("no images"),
        "{refused}"
    );
    assert_eq!(env.requests().len(), 2);
}

#[test]
fn an_edit_arrives_as_a_tool_call_with_its_kind_location_and_diff() {
    if !have_client("an_edit_arrives_with_its_diff") {
        return;
    }
    let mut env = Env::new();
    env.write("src/lib.rs", "fn one() {}\nfn keep() {}\n");
    env.serve(Script::new(vec![
        Reply {
            tool_calls: vec![call(
                "edit_file",
                json!({"path": "src/lib.rs", "old_string": "fn one() {}", "new_string": "fn two() {}"}),
            )],
            ..Reply::default()
        },
        Reply::text("renamed"),
    ]));
    let mut steps = opening();
    steps.push(prompt("rename one to two"));
    let seen = run(
        &env,
        &["--permission", "auto-safe"],
        json!({"steps": steps}),
    );
    assert_eq!(seen.result(2)["stopReason"], "end_turn");
    assert_eq!(env.read("src/lib.rs"), "fn two() {}\nfn keep() {}\n");

    let started = seen.updates_of("tool_call");
    assert_eq!(started.len(), 1, "{}", seen.dump());
    let call = started[0];
    assert_eq!(call["kind"], "edit");
    assert_eq!(call["title"], "Edit src/lib.rs");
    let path = env.repo().join("src/lib.rs").canonicalize().unwrap();
    assert_eq!(call["locations"][0]["path"], json!(path));
    let id = call["toolCallId"].clone();
    let finished: Vec<&Value> = seen
        .updates_of("tool_call_update")
        .into_iter()
        .filter(|u| u["toolCallId"] == id)
        .collect();
    let last = finished.last().unwrap();
    assert_eq!(last["status"], "completed", "{}", seen.dump());
    let diff = last["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "diff")
        .unwrap_or_else(|| panic!("no diff in {last}"));
    assert_eq!(diff["path"], json!(path));
    assert_eq!(diff["oldText"], "fn one() {}");
    assert_eq!(diff["newText"], "fn two() {}");
}

/// A scripted run of two commands that need approval in strict mode, then an answer.
fn two_commands(env: &mut Env) {
    env.serve(Script::new(vec![
        Reply {
            tool_calls: vec![call("bash", json!({"command": "echo yes > allowed.txt"}))],
            ..Reply::default()
        },
        Reply {
            tool_calls: vec![call("bash", json!({"command": "echo no > rejected.txt"}))],
            ..Reply::default()
        },
        Reply::text("done"),
    ]));
}

#[test]
fn approvals_become_permission_requests_answered_through_the_gate_and_audited() {
    if !have_client("approvals_become_permission_requests") {
        return;
    }
    let mut env = Env::new();
    two_commands(&mut env);
    let mut steps = opening();
    steps.push(prompt("make two files"));
    let seen = run(
        &env,
        &["--permission", "strict"],
        json!({"steps": steps, "permissions": ["allow_once", "reject_once"]}),
    );
    assert_eq!(seen.result(2)["stopReason"], "end_turn");
    let asked = seen.permissions();
    assert_eq!(asked.len(), 2, "{}", seen.dump());
    let options: Vec<(&str, &str)> = asked[0]["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| (o["optionId"].as_str().unwrap(), o["kind"].as_str().unwrap()))
        .collect();
    assert_eq!(
        options,
        [
            ("allow_once", "allow_once"),
            ("allow_session", "allow_always"),
            ("allow_project", "allow_always"),
            ("reject_once", "reject_once"),
        ]
    );
    assert!(
        asked[0]["toolCall"]["title"]
            .as_str()
            .unwrap()
            .contains("echo yes > allowed.txt"),
        "{}",
        asked[0]
    );
    // The allowed command ran, the rejected one did not, and the model was told.
    assert_eq!(env.read("allowed.txt"), "yes\n");
    assert!(!env.repo().join("rejected.txt").exists());
    let told = env.requests()[2].body.to_string();
    assert!(told.contains("declined"), "{told}");
    // Same audit as the terminal UI.
    let outcomes = query(
        &env,
        "select tool || ':' || outcome from audit_log where tool = 'bash' order by id",
    );
    assert_eq!(outcomes, ["bash:approved", "bash:declined"], "{outcomes:?}");
    // The tool calls ended as they did.
    let statuses: Vec<&str> = seen
        .updates_of("tool_call_update")
        .iter()
        .filter_map(|u| u["status"].as_str())
        .filter(|s| *s == "completed" || *s == "failed")
        .collect();
    assert_eq!(statuses, ["completed", "failed"], "{}", seen.dump());
}

/// The updates of one tool call, in order.
fn updates_for<'a>(seen: &'a super::Seen, id: &Value) -> Vec<&'a Value> {
    seen.updates()
        .into_iter()
        .filter(|u| u["toolCallId"] == *id)
        .collect()
}

/// The `diff` block of a tool call's content.
fn diff_in(content: &Value) -> Option<&Value> {
    content.as_array()?.iter().find(|c| c["type"] == "diff")
}

#[test]
fn an_edit_awaiting_approval_shows_its_diff_and_a_rejected_one_never_runs() {
    if !have_client("an_edit_awaiting_approval_shows_its_diff") {
        return;
    }
    let mut env = Env::new();
    env.write("src/lib.rs", "fn one() {}\nfn keep() {}\n");
    env.serve(Script::new(vec![
        Reply {
            tool_calls: vec![call(
                "edit_file",
                json!({"path": "src/lib.rs", "old_string": "fn one() {}", "new_string": "fn two() {}"}),
            )],
            ..Reply::default()
        },
        Reply {
            tool_calls: vec![call(
                "edit_file",
                json!({"path": "src/lib.rs", "old_string": "fn keep() {}", "new_string": "fn gone() {}"}),
            )],
            ..Reply::default()
        },
        Reply::text("done"),
    ]));
    let mut steps = opening();
    steps.push(prompt("rename both"));
    let seen = run(
        &env,
        &["--permission", "strict"],
        json!({"steps": steps, "permissions": ["allow_once", "reject_once"]}),
    );
    assert_eq!(seen.result(2)["stopReason"], "end_turn");
    assert_eq!(env.read("src/lib.rs"), "fn two() {}\nfn keep() {}\n");
    let path = json!(env.repo().join("src/lib.rs").canonicalize().unwrap());

    // Announced before the question, complete: pending, where, what.
    let started = seen.updates_of("tool_call");
    assert_eq!(started.len(), 2, "{}", seen.dump());
    for (call, (old, new)) in started.iter().zip([
        ("fn one() {}", "fn two() {}"),
        ("fn keep() {}", "fn gone() {}"),
    ]) {
        assert_eq!(call["status"], "pending", "{call}");
        assert_eq!(call["kind"], "edit", "{call}");
        assert_eq!(call["title"], "Edit src/lib.rs", "{call}");
        assert_eq!(call["locations"][0]["path"], path, "{call}");
        let diff = diff_in(&call["content"]).unwrap_or_else(|| panic!("no diff in {call}"));
        assert_eq!(diff["path"], path);
        assert_eq!(diff["oldText"], old);
        assert_eq!(diff["newText"], new);
    }

    // The question carries the diff, so the editor can show it at approval time.
    let asked = seen.permissions();
    assert_eq!(asked.len(), 2, "{}", seen.dump());
    let diff = diff_in(&asked[1]["toolCall"]["content"])
        .unwrap_or_else(|| panic!("no diff in {}", asked[1]));
    assert_eq!(diff["path"], path);
    assert_eq!(diff["oldText"], "fn keep() {}");
    assert_eq!(diff["newText"], "fn gone() {}");
    assert!(
        !asked[1]["toolCall"]["title"]
            .as_str()
            .unwrap()
            .ends_with(':'),
        "{}",
        asked[1]
    );

    // The allowed call ran; the rejected one went from pending straight to failed.
    let statuses = |id: &Value| -> Vec<String> {
        updates_for(&seen, id)
            .iter()
            .filter_map(|u| u["status"].as_str().map(str::to_owned))
            .collect()
    };
    assert_eq!(
        statuses(&started[0]["toolCallId"])
            .last()
            .map(String::as_str),
        Some("completed"),
        "{}",
        seen.dump()
    );
    let rejected = statuses(&started[1]["toolCallId"]);
    assert!(
        !rejected.iter().any(|s| s == "in_progress"),
        "{rejected:?}\n{}",
        seen.dump()
    );
    assert_eq!(rejected.last().map(String::as_str), Some("failed"));
}

#[test]
fn a_client_that_never_answers_is_a_deny_after_the_approval_deadline() {
    if !have_client("a_client_that_never_answers") {
        return;
    }
    let mut env = Env::new();
    let config = env.dir.path().join("home/.config/atto/config.toml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.insert_str(0, "approval_timeout_secs = 1\n");
    std::fs::write(&config, text).unwrap();
    env.serve(Script::new(vec![
        Reply {
            tool_calls: vec![call("bash", json!({"command": "echo x > late.txt"}))],
            ..Reply::default()
        },
        Reply::text("gave up"),
    ]));
    let mut steps = opening();
    steps.push(prompt("make a file"));
    let seen = run(
        &env,
        &["--permission", "strict"],
        json!({"steps": steps, "permissions": ["ignore"]}),
    );
    assert_eq!(seen.result(2)["stopReason"], "end_turn");
    assert_eq!(seen.permissions().len(), 1);
    assert!(!env.repo().join("late.txt").exists());
    let told = env.requests()[1].body.to_string();
    assert!(told.contains("no one answered"), "{told}");
}

#[test]
fn a_cancel_mid_turn_stops_it_and_the_prompt_ends_cancelled() {
    if !have_client("a_cancel_mid_turn") {
        return;
    }
    let mut env = Env::new();
    env.write("a.txt", "a\n");
    env.serve(Script::new(vec![
        Reply {
            text: Some("reading first".into()),
            tool_calls: vec![call("read_file", json!({"path": "a.txt"}))],
            ..Reply::default()
        },
        Reply {
            delay_ms: 30_000,
            ..Reply::text("far too late")
        },
        Reply::text("after the cancel"),
    ]));
    let mut steps = opening();
    steps.push(json!({"op": "prompt", "text": "read a", "cancelOn": "tool_call_update"}));
    steps.push(prompt("still there?"));
    let seen = run(
        &env,
        &["--permission", "auto-safe"],
        json!({"steps": steps}),
    );
    assert_eq!(seen.result(2)["stopReason"], "cancelled", "{}", seen.dump());
    let cancel_at = seen.entries.iter().find(|e| e["kind"] == "cancel").unwrap()["ms"]
        .as_u64()
        .unwrap();
    let answered_at = seen
        .entries
        .iter()
        .find(|e| e["kind"] == "result" && e["step"] == 2)
        .unwrap()["ms"]
        .as_u64()
        .unwrap();
    assert!(
        answered_at - cancel_at < 10_000,
        "the cancel took {} ms",
        answered_at - cancel_at
    );
    // The session goes on.
    assert_eq!(seen.result(3)["stopReason"], "end_turn");
    assert!(
        seen.text_of("agent_message_chunk")
            .contains("after the cancel")
    );
}

#[test]
fn session_load_replays_a_session_made_by_atto_exec_and_continues_it() {
    if !have_client("session_load_replays") {
        return;
    }
    let mut env = Env::new();
    env.write("a.txt", "alpha\n");
    env.serve(Script::new(vec![
        Reply {
            text: Some("let me look".into()),
            tool_calls: vec![call("read_file", json!({"path": "a.txt"}))],
            ..Reply::default()
        },
        Reply::text("it says alpha"),
        Reply::text("still alpha"),
    ]));
    let out = env.exec("chat", "what is in a.txt?");
    assert_eq!(out.status.code(), Some(0));
    let evs = events(&out);
    let id = evs.last().unwrap()["session_id"]
        .as_str()
        .unwrap()
        .to_owned();

    let seen = run(
        &env,
        &["--permission", "auto-safe"],
        json!({"steps": [
            {"op": "initialize"},
            {"op": "load", "sessionId": id},
            prompt("and now?"),
        ]}),
    );
    let loaded = seen.result(1);
    assert_eq!(loaded["modes"]["currentModeId"], "build");
    // The history, replayed before the load was answered, in order.
    let load_at = seen
        .entries
        .iter()
        .position(|e| e["kind"] == "result" && e["step"] == 1)
        .unwrap();
    let replayed: Vec<&Value> = seen.entries[..load_at]
        .iter()
        .filter(|e| e["kind"] == "update")
        .map(|e| &e["params"]["update"])
        .collect();
    let kinds: Vec<&str> = replayed
        .iter()
        .filter_map(|u| u["sessionUpdate"].as_str())
        .collect();
    assert_eq!(
        kinds,
        [
            "user_message_chunk",
            "agent_message_chunk",
            "tool_call",
            "tool_call_update",
            "agent_message_chunk"
        ],
        "{}",
        seen.dump()
    );
    assert_eq!(replayed[0]["content"]["text"], "what is in a.txt?");
    assert_eq!(replayed[2]["kind"], "read");
    assert_eq!(replayed[3]["status"], "completed");
    assert_eq!(replayed[4]["content"]["text"], "it says alpha");
    // The next prompt continues the stored conversation.
    assert_eq!(seen.result(2)["stopReason"], "end_turn");
    let sent = env.requests()[2].body.to_string();
    assert!(sent.contains("it says alpha"), "{sent}");
    let bodies = query(
        &env,
        &format!(
            "select m.body from messages m join threads t on m.thread_id = t.id \
             where t.session_id = '{id}' order by m.seq"
        ),
    );
    assert_eq!(bodies.len(), 6, "{bodies:?}");
    assert!(bodies[4].contains("and now?"), "{bodies:?}");
    assert!(bodies[5].contains("still alpha"), "{bodies:?}");
}
