//! One multi-turn task per wire format: the scripted model reads, edits and runs code in
//! a real git repository; the test checks the files, the events and what atto sent.

use atto_testkit::{Reply, Script, ScriptToolCall};
use serde_json::{Value, json};

use crate::common::{Env, events, of_type, stderr};

const CALC_PY: &str = "def add(a, b):\n    return a - b\n\n\nprint(add(2, 3))\n";

fn call(id: &str, name: &str, arguments: Value) -> ScriptToolCall {
    ScriptToolCall {
        id: Some(id.to_owned()),
        name: name.to_owned(),
        arguments,
        raw_arguments: None,
    }
}

fn task_script() -> Script {
    Script {
        replies: vec![
            Reply {
                text: Some("Reading calc.py.".into()),
                tool_calls: vec![call("c1", "read_file", json!({"path": "calc.py"}))],
                ..Reply::default()
            },
            Reply {
                text: Some("add() subtracts; fixing it.".into()),
                tool_calls: vec![call(
                    "c2",
                    "edit_file",
                    json!({"path": "calc.py", "old_string": "return a - b", "new_string": "return a + b"}),
                )],
                ..Reply::default()
            },
            Reply {
                tool_calls: vec![call("c3", "bash", json!({"command": "python3 calc.py"}))],
                ..Reply::default()
            },
            Reply {
                text: Some("Fixed: calc.py prints 5.".into()),
                ..Reply::default()
            },
        ],
        ..Script::default()
    }
}

/// The tool results atto sent back, as (call id, content) pairs, per wire format.
fn tool_results(wire: &str, body: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    match wire {
        "chat" => {
            for m in body["messages"].as_array().unwrap() {
                if m["role"] == "tool" {
                    out.push((
                        m["tool_call_id"].as_str().unwrap().to_owned(),
                        m["content"].as_str().unwrap().to_owned(),
                    ));
                }
            }
        }
        "responses" => {
            for item in body["input"].as_array().unwrap() {
                if item["type"] == "function_call_output" {
                    out.push((
                        item["call_id"].as_str().unwrap().to_owned(),
                        item["output"].as_str().unwrap().to_owned(),
                    ));
                }
            }
        }
        _ => {
            for m in body["messages"].as_array().unwrap() {
                let Some(blocks) = m["content"].as_array() else {
                    continue;
                };
                for b in blocks {
                    if b["type"] == "tool_result" {
                        let content = match &b["content"] {
                            Value::String(s) => s.clone(),
                            other => other.to_string(),
                        };
                        out.push((b["tool_use_id"].as_str().unwrap().to_owned(), content));
                    }
                }
            }
        }
    }
    out
}

fn system_prompt(wire: &str, body: &Value) -> String {
    match wire {
        "chat" => body["messages"][0]["content"].as_str().unwrap().to_owned(),
        "responses" => body["instructions"].as_str().unwrap().to_owned(),
        _ => match &body["system"] {
            Value::String(s) => s.clone(),
            Value::Array(blocks) => blocks[0]["text"].as_str().unwrap().to_owned(),
            other => panic!("unexpected system {other}"),
        },
    }
}

fn tool_names(wire: &str, body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let name = match wire {
                "chat" => &t["function"]["name"],
                _ => &t["name"],
            };
            name.as_str().unwrap().to_owned()
        })
        .collect()
}

fn run_task(wire: &str) {
    let mut env = Env::new();
    env.write("calc.py", CALC_PY);
    env.write("AGENTS.md", "Always run the code after changing it.\n");
    env.serve(task_script());
    let out = env.exec(wire, "fix calc.py");
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));

    // The file really changed, and the user's repository is otherwise untouched.
    assert_eq!(
        env.read("calc.py"),
        CALC_PY.replace("a - b", "a + b"),
        "events: {}",
        String::from_utf8_lossy(&out.stdout)
    );

    let evs = events(&out);
    assert!(
        evs.iter()
            .all(|e| e["schema"] == "atto.exec" && e["schema_version"] == 1)
    );
    assert_eq!(evs[0]["type"], "session_started");
    let started = of_type(&evs, "tool_call_started");
    let names: Vec<_> = started
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["read_file", "edit_file", "bash"]);
    let finished = of_type(&evs, "tool_call_finished");
    assert!(finished.iter().all(|e| e["status"] == "ok"), "{finished:?}");
    assert!(finished[2]["summary"].as_str().unwrap().contains('5'));
    assert_eq!(of_type(&evs, "usage").len(), 4);
    let text: String = of_type(&evs, "text_delta")
        .iter()
        .map(|e| e["text"].as_str().unwrap())
        .collect();
    assert!(text.contains("Fixed: calc.py prints 5."), "{text}");
    let result = evs.last().unwrap();
    assert_eq!(result["type"], "result");
    assert_eq!(result["status"], "completed");
    assert_eq!(result["rounds"], 4);
    assert_eq!(result["files_changed"], json!(["calc.py"]));
    assert!(
        result["cost_usd"].is_null(),
        "unknown model must have unknown cost"
    );

    // What atto sent: system prompt with project rules, all tools, results fed back by id.
    let reqs = env.requests();
    assert_eq!(reqs.len(), 4);
    let first = &reqs[0].body;
    assert_eq!(first["stream"], true);
    assert_eq!(first["model"], "scripted-model");
    let system = system_prompt(wire, first);
    assert!(system.contains("Always run the code after changing it."));
    let tools = tool_names(wire, first);
    for t in [
        "read_file",
        "write_file",
        "edit_file",
        "bash",
        "grep",
        "glob",
    ] {
        assert!(
            tools.iter().any(|n| n == t),
            "{t} not advertised: {tools:?}"
        );
    }
    let last = &reqs[3].body;
    let results = tool_results(wire, last);
    let ids: Vec<_> = results.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(
        ids,
        ["c1", "c2", "c3"],
        "tool results fed back with the right ids"
    );
    assert!(
        results[0].1.contains("return a - b"),
        "read result: {}",
        results[0].1
    );
    assert!(results[2].1.contains('5'), "bash result: {}", results[2].1);
    // The stable prefix is byte-identical across requests.
    assert_eq!(system_prompt(wire, &reqs[3].body), system);
}

#[test]
fn chat_completions_task() {
    run_task("chat");
}

#[test]
fn responses_task() {
    run_task("responses");
}

#[test]
fn anthropic_messages_task() {
    run_task("anthropic");
}
