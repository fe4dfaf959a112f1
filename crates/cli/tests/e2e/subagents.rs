//! Subagents end to end: a child's budget is carved from its parent's and handed back,
//! read-only children overlap, writers stay in their files and take turns, modes hold,
//! approvals reach the user, and a killed run leaves both sessions resumable. The tree's
//! cap and a child's wrap-up and time limit are in `limits`.

use std::time::Duration;

use atto_testkit::{Reply, Script, ScriptUsage};
use serde_json::{Value, json};

use crate::common::{Env, call, calls, events, of_type, stderr};

mod limits;

/// Text only a child's requests carry (its first prompt), followed by its task.
fn child_of(task: &str) -> String {
    format!("Task: {task}")
}

fn text(t: &str) -> Reply {
    Reply {
        text: Some(t.to_owned()),
        ..Reply::default()
    }
}

fn when(reply: Reply, task: &str) -> Reply {
    Reply {
        when: Some(child_of(task)),
        ..reply
    }
}

fn spawn(args: Value) -> Reply {
    calls(vec![call("spawn_agent", args)])
}

/// The user-visible texts of request `r` (chat wire): every message's content.
fn body_text(r: &atto_testkit::RecordedRequest) -> String {
    r.body.to_string()
}

fn run(env: &Env, flags: &[&str], task: &str) -> std::process::Output {
    let mut all = vec!["--output-format", "stream-json"];
    all.extend_from_slice(flags);
    env.exec_with(&all, task).output().unwrap()
}

const REPORT: &str = "Looked at hello.txt.\n\n## Summary\nThe greeting is hello.\n\n## Files \
                      Modified\n- ghost.rs\n\n## Key Decisions\n- read only\n\n## Remaining \
                      Work\n- none\n\n## Confidence: 0.9";

#[test]
fn a_child_works_in_its_own_context_reports_back_and_returns_its_unspent_budget() {
    let mut env = Env::new();
    env.write("hello.txt", "hello\n");
    env.serve(Script {
        replies: vec![
            spawn(json!({"task": "find the greeting", "role": "explore"})),
            calls(vec![call("read_file", json!({"path": "hello.txt"}))]),
            text(REPORT),
            text("The child says hello."),
        ],
        ..Script::default()
    });
    let out = run(
        &env,
        &[
            "--permission",
            "auto-safe",
            "--max-budget-tokens",
            "1000000",
        ],
        "what does the greeting say?",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let evs = events(&out);
    let started = of_type(&evs, "subagent_started");
    assert_eq!(started.len(), 1, "{evs:?}");
    // 15% of what the parent had left after its first call (120 tokens) of the 1M cap.
    assert_eq!(started[0]["budget_tokens"], 149_982);
    assert_eq!(started[0]["role"], "explore");
    assert_eq!(started[0]["depth"], 1);
    let finished = of_type(&evs, "subagent_finished");
    assert_eq!(finished.len(), 1);
    assert_eq!(finished[0]["status"], "completed");
    assert_eq!(finished[0]["tokens_used"], 240, "two child calls of 120");

    let requests = env.requests();
    assert_eq!(requests.len(), 4);
    // The child starts fresh: its task and the report format, not the parent's prompt;
    // and it is offered read-only tools only.
    let child = body_text(&requests[1]);
    assert!(child.contains("Task: find the greeting"), "{child}");
    assert!(child.contains("## Confidence"), "{child}");
    assert!(!child.contains("what does the greeting say?"), "{child}");
    let tools: Vec<&str> = requests[1].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(tools.contains(&"read_file"), "{tools:?}");
    assert!(
        !tools.contains(&"write_file") && !tools.contains(&"bash"),
        "{tools:?}"
    );
    // Its output is bounded by its budget, never by more.
    assert!(requests[1].body["max_tokens"].as_u64().unwrap() <= 149_982);

    // The parent gets the report as the tool result, with the files from the
    // checkpoints (none), not the child's claim.
    let results = crate::common::tool_results(&env, 3);
    let report = &results[0];
    assert!(
        report.contains("## Summary\nThe greeting is hello."),
        "{report}"
    );
    assert!(report.contains("- none (from the checkpoints)"), "{report}");
    assert!(report.contains("also named ghost.rs"), "{report}");
    assert!(report.contains("## Confidence: 0.90"), "{report}");

    // The turn's cost covers the child's calls: 2 parent + 2 child calls of 120.
    let done = of_type(&evs, "turn_completed");
    let usage = &done[0]["usage"];
    let total = usage["input_tokens"].as_u64().unwrap() + usage["output_tokens"].as_u64().unwrap();
    assert_eq!(total, 480, "{usage}");
}

#[test]
fn read_only_children_run_at_once() {
    let mut env = Env::new();
    env.serve(Script {
        replies: vec![
            calls(vec![
                call("spawn_agent", json!({"task": "look at alpha"})),
                call("spawn_agent", json!({"task": "look at beta"})),
            ]),
            Reply {
                delay_ms: 1500,
                ..when(text("alpha seen"), "look at alpha")
            },
            Reply {
                delay_ms: 1500,
                ..when(text("beta seen"), "look at beta")
            },
            text("both seen"),
        ],
        ..Script::default()
    });
    let out = run(&env, &["--permission", "auto-safe"], "look at both");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let requests = env.requests();
    assert_eq!(requests.len(), 4);
    // Both children asked before either got its (1.5 s late) answer.
    let gap = requests[2]
        .received_at_unix_ns
        .abs_diff(requests[1].received_at_unix_ns);
    assert!(
        gap < 1_000_000_000,
        "the children ran one after the other ({gap} ns apart)"
    );
    let results = crate::common::tool_results(&env, 3);
    assert!(results[0].contains("alpha seen") && results[1].contains("beta seen"));
}

#[test]
fn writers_stay_in_their_files_and_take_turns() {
    let mut env = Env::new();
    env.serve(Script {
        replies: vec![
            calls(vec![
                call(
                    "spawn_agent",
                    json!({"task": "write alpha", "role": "implement", "files": ["a.txt"]}),
                ),
                call(
                    "spawn_agent",
                    json!({"task": "write beta", "role": "implement", "files": ["a.txt", "b.txt"]}),
                ),
            ]),
            Reply {
                delay_ms: 600,
                ..when(
                    calls(vec![
                        call("write_file", json!({"path": "b.txt", "content": "alpha\n"})),
                        call("write_file", json!({"path": "a.txt", "content": "alpha\n"})),
                    ]),
                    "write alpha",
                )
            },
            when(text("alpha done"), "write alpha"),
            when(
                calls(vec![call(
                    "write_file",
                    json!({"path": "b.txt", "content": "beta\n"}),
                )]),
                "write beta",
            ),
            when(text("beta done"), "write beta"),
            text("both written"),
        ],
        ..Script::default()
    });
    let out = run(&env, &["--permission", "auto-safe"], "write both");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(env.read("a.txt"), "alpha\n");
    assert_eq!(env.read("b.txt"), "beta\n");
    let requests = env.requests();
    let of = |task: &str| -> Vec<u128> {
        requests
            .iter()
            .filter(|r| body_text(r).contains(&child_of(task)))
            .map(|r| r.received_at_unix_ns)
            .collect()
    };
    let (alpha, beta) = (of("write alpha"), of("write beta"));
    assert_eq!((alpha.len(), beta.len()), (2, 2));
    assert!(
        alpha.iter().max() < beta.iter().min(),
        "writers with overlapping files must not run at once"
    );
    // Alpha's write outside its files was refused and it was told why.
    let alpha_results = body_text(
        requests
            .iter()
            .filter(|r| body_text(r).contains(&child_of("write alpha")))
            .nth(1)
            .unwrap(),
    );
    assert!(
        alpha_results.contains("may change only its own files (a.txt)"),
        "{alpha_results}"
    );
    let evs = events(&out);
    let files: Vec<Value> = of_type(&evs, "subagent_finished")
        .iter()
        .map(|e| e["files_modified"].clone())
        .collect();
    assert_eq!(files, vec![json!(["a.txt"]), json!(["b.txt"])]);
}

#[test]
fn plan_and_review_modes_start_no_writer_and_a_read_only_child_cannot_write() {
    let mut env = Env::new();
    env.serve(Script {
        replies: vec![
            spawn(json!({"task": "change things", "role": "implement"})),
            spawn(json!({"task": "sneaky explorer"})),
            when(
                calls(vec![call(
                    "write_file",
                    json!({"path": "x.txt", "content": "x"}),
                )]),
                "sneaky explorer",
            ),
            when(text("could not write"), "sneaky explorer"),
            text("planned"),
            spawn(json!({"task": "review writer", "role": "implement"})),
            text("reviewed"),
        ],
        ..Script::default()
    });
    let out = run(
        &env,
        &["--permission", "auto-safe", "--mode", "plan"],
        "plan it",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let results = crate::common::tool_results(&env, 1);
    assert!(results[0].contains("PLAN mode"), "{results:?}");
    // The explorer runs in review mode: no write tool offered, and a write is refused.
    let requests = env.requests();
    let explorer = body_text(&requests[3]);
    assert!(explorer.contains("REVIEW mode is read-only"), "{explorer}");
    assert!(!env.repo().join("x.txt").exists());
    let evs = events(&out);
    assert_eq!(
        of_type(&evs, "change_queued").len(),
        0,
        "nothing queued by a child"
    );

    let out = run(
        &env,
        &["--permission", "auto-safe", "--mode", "review"],
        "review it",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let results = crate::common::tool_results(&env, 6);
    assert!(results[0].contains("REVIEW mode"), "{results:?}");
    assert!(of_type(&events(&out), "subagent_started").is_empty());
}

#[test]
fn a_childs_approval_reaches_the_stream_labelled_and_a_denial_reaches_the_child() {
    use std::io::{BufRead as _, BufReader, Write as _};
    let mut env = Env::new();
    let cmd = "python3 -c 'print(40 + 2)'";
    env.serve(Script {
        replies: vec![
            spawn(json!({"task": "compute", "role": "implement"})),
            calls(vec![call("bash", json!({"command": cmd}))]),
            text("I was not allowed to run it"),
            text("the child could not compute"),
        ],
        ..Script::default()
    });
    let mut child = env
        .exec_with(
            &[
                "--input-format",
                "stream-json",
                "--output-format",
                "stream-json",
            ],
            "delegate",
        )
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let mut asks = Vec::new();
    let mut started_id = String::new();
    for line in stdout.lines() {
        let event: Value = serde_json::from_str(&line.unwrap()).unwrap();
        if event["type"] == "subagent_started" {
            started_id = event["id"].as_str().unwrap().to_owned();
        }
        if event["type"] == "approval_required" {
            // The spawn itself asks (LOW, interactive); the child's command asks next.
            let answer = if event["tool"] == "spawn_agent" {
                json!({"type": "approval", "id": event["id"], "decision": "yes"})
            } else {
                json!({"type": "approval", "id": event["id"], "decision": "no", "reason": "not now"})
            };
            writeln!(stdin, "{answer}").unwrap();
            stdin.flush().unwrap();
            asks.push(event);
        }
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(asks.len(), 2, "{asks:?}");
    assert!(asks[0].get("subagent").is_none());
    assert_eq!(asks[1]["subagent"]["id"], started_id.as_str());
    assert_eq!(asks[1]["subagent"]["role"], "implement");
    assert_eq!(asks[1]["subject"], cmd);
    // The denial reached the child as a refusal of its call.
    let results = crate::common::tool_results(&env, 2);
    assert!(results[0].contains("not now"), "{results:?}");
}

#[test]
fn a_run_killed_while_its_child_works_leaves_both_sessions_resumable() {
    use std::io::{BufRead as _, BufReader};
    let mut env = Env::new();
    env.write("notes.txt", "kept\n");
    env.serve(Script {
        replies: vec![
            spawn(json!({"task": "long job", "role": "implement"})),
            calls(vec![call("read_file", json!({"path": "notes.txt"}))]),
            calls(vec![call("bash", json!({"command": "sleep 30.3"}))]),
            text("parent resumed"),
            text("child resumed"),
            text("latest resumed"),
        ],
        ..Script::default()
    });
    let mut run = env
        .exec_with(
            &[
                "--permission",
                "auto-safe",
                "--output-format",
                "stream-json",
            ],
            "start the long job",
        )
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let stdout = BufReader::new(run.stdout.take().unwrap());
    let (mut parent, mut kid) = (String::new(), String::new());
    for line in stdout.lines() {
        let event: Value = serde_json::from_str(&line.unwrap()).unwrap();
        if event["type"] == "subagent_started" {
            parent = event["parent"].as_str().unwrap().to_owned();
            kid = event["id"].as_str().unwrap().to_owned();
        }
        // The child's read is shown as done: it must survive the kill.
        if event["type"] == "subagent_progress"
            && event["activity"]
                .as_str()
                .is_some_and(|a| a.starts_with("bash"))
        {
            break;
        }
    }
    assert!(!kid.is_empty());
    std::thread::sleep(Duration::from_millis(300));
    run.kill().unwrap();
    run.wait().unwrap();
    let _ = std::process::Command::new("pkill")
        .args(["-f", "sleep 30.3"])
        .status();

    let resumed = env
        .exec_with(&["--permission", "auto-safe", "--resume", &parent], "go on")
        .output()
        .unwrap();
    assert_eq!(resumed.status.code(), Some(0), "{}", stderr(&resumed));
    let requests = env.requests();
    let parent_view = body_text(&requests[3]);
    assert!(parent_view.contains("start the long job"), "{parent_view}");
    assert!(parent_view.contains("spawn_agent"), "{parent_view}");

    let resumed = env
        .exec_with(&["--permission", "auto-safe", "--resume", &kid], "go on")
        .output()
        .unwrap();
    assert_eq!(resumed.status.code(), Some(0), "{}", stderr(&resumed));
    let kid_view = body_text(&env.requests()[4]);
    assert!(kid_view.contains("Task: long job"), "{kid_view}");
    assert!(
        kid_view.contains("kept"),
        "the child's finished read is kept: {kid_view}"
    );
    // "The latest session" is the parent, never its child (resumed last).
    let latest = env
        .exec_with(&["--permission", "auto-safe", "-c"], "and again")
        .output()
        .unwrap();
    assert_eq!(latest.status.code(), Some(0), "{}", stderr(&latest));
    let latest_view = body_text(&env.requests()[5]);
    assert!(latest_view.contains("start the long job"), "{latest_view}");
    assert!(!latest_view.contains("Task: long job"), "{latest_view}");
    let list = env.atto().arg("sessions").output().unwrap();
    let list = String::from_utf8_lossy(&list.stdout);
    assert!(list.contains("(subagent of "), "{list}");
}

#[test]
fn a_custom_agent_brings_its_instructions_and_only_its_tools() {
    let mut env = Env::new();
    env.write(
        ".atto/agents/finder.md",
        "---\nname: finder\ndescription: finds handlers\ntools: [grep, read_file]\n---\nAlways \
         search src/ first.\n",
    );
    crate::repo_trust::trust(&env, ".atto/agents/finder.md");
    env.serve(Script {
        replies: vec![
            spawn(json!({"task": "find the handlers", "agent": "finder"})),
            text("## Summary\nnone found\n\n## Confidence: 0.5"),
            text("no handlers"),
        ],
        ..Script::default()
    });
    let out = run(&env, &["--permission", "auto-safe"], "find handlers");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let requests = env.requests();
    // The parent is told the agent exists.
    assert!(body_text(&requests[0]).contains("finder (finds handlers)"));
    let child = &requests[1];
    assert!(body_text(child).contains("Always search src/ first."));
    let mut tools: Vec<&str> = child.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    tools.sort_unstable();
    assert_eq!(tools, vec!["grep", "read_file"]);
}

#[test]
fn spawn_and_agents_in_the_line_session() {
    let mut env = Env::new();
    env.serve(Script {
        replies: vec![
            text("## Summary\nthe tests live in tests/\n\n## Confidence: 0.8"),
            text("noted"),
        ],
        ..Script::default()
    });
    let err = crate::common::line_session(
        &env,
        "/spawn --role explore \"where are the tests?\"\n/agents\nwhat did it find?\n",
    );
    assert!(
        err.contains("started with 200000 tokens: where are the tests?"),
        "{err}"
    );
    assert!(err.contains("the tests live in tests/"), "{err}");
    assert!(err.contains("explore   completed"), "{err}");
    // The report is noted for the next prompt.
    let next = body_text(&env.requests()[1]);
    assert!(next.contains("The user ran a subagent"), "{next}");
    assert!(next.contains("the tests live in tests/"), "{next}");
}

#[test]
fn a_child_at_the_depth_limit_is_not_offered_spawn_agent_and_its_refusal_names_the_limit() {
    let mut env = Env::new();
    env.serve(Script {
        replies: vec![
            spawn(json!({"task": "level one", "role": "explore"})),
            when(
                spawn(json!({"task": "level two", "role": "explore"})),
                "level one",
            ),
            when(
                spawn(json!({"task": "level three", "role": "explore"})),
                "level two",
            ),
            when(
                spawn(json!({"task": "level four", "role": "explore"})),
                "level three",
            ),
            when(text("three done"), "level three"),
            text("two done"),
            text("one done"),
            text("all done"),
        ],
        ..Script::default()
    });
    let out = run(
        &env,
        &["--permission", "auto-safe"],
        "go deeper than allowed",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let requests = env.requests();
    let leaf: Vec<&atto_testkit::RecordedRequest> = requests
        .iter()
        .filter(|r| body_text(r).contains(&child_of("level three")))
        .collect();
    assert_eq!(leaf.len(), 2, "{}", stderr(&out));
    let offered: Vec<&str> = leaf[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(!offered.contains(&"spawn_agent"), "{offered:?}");
    // The refusal says why, and lists only the tools the child was offered.
    let results: Vec<&str> = leaf[1].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    let refusal = results.last().unwrap();
    assert!(refusal.contains("deepest level"), "{refusal}");
    for name in ["write_file", "edit_file", "bash", "spawn_agent"] {
        assert!(
            !refusal.contains(&format!("{name},")) && !refusal.ends_with(&format!("{name}.")),
            "{name} is not the child's: {refusal}"
        );
    }
}

#[test]
fn the_report_check_fails_a_report_that_names_a_file_never_written() {
    let mut env = Env::new();
    env.write("hello.txt", "hello\n");
    env.serve(Script {
        replies: vec![
            spawn(json!({"task": "find the greeting", "role": "explore"})),
            text(REPORT),
            text("The child says hello."),
        ],
        ..Script::default()
    });
    let out = run(&env, &["--permission", "auto-safe"], "what does it say?");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let evs = events(&out);
    let finished = of_type(&evs, "subagent_finished");
    let report = finished[0]["report"].as_str().unwrap();
    let check = report.split("## Quality check (by atto)").nth(1).unwrap();
    assert!(!check.contains("hold up"), "{report}");
    assert!(
        check.contains("ghost.rs") && check.contains("FAILED"),
        "{report}"
    );
    assert_eq!(
        finished[0]["quality"]["verdict"], "fail",
        "{:?}",
        finished[0]
    );
}

#[test]
fn a_read_only_child_starts_headless_without_a_question() {
    let mut env = Env::new();
    env.write("hello.txt", "hello\n");
    env.serve(Script {
        replies: vec![
            spawn(json!({"task": "find the greeting", "role": "review"})),
            when(
                calls(vec![call("read_file", json!({"path": "hello.txt"}))]),
                "find the greeting",
            ),
            when(text(REPORT), "find the greeting"),
            text("The child says hello."),
        ],
        ..Script::default()
    });
    // The default permission mode, headless: what would ask is denied.
    let out = run(&env, &[], "what does it say?");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let evs = events(&out);
    assert!(of_type(&evs, "approval_required").is_empty(), "{evs:?}");
    let finished = of_type(&evs, "subagent_finished");
    assert_eq!(finished.len(), 1, "{evs:?}");
    assert_eq!(finished[0]["status"], "completed", "{:?}", finished[0]);
}

#[test]
fn the_line_session_prints_a_childs_report_once() {
    let mut env = Env::new();
    env.serve(Script {
        replies: vec![
            spawn(json!({"task": "find the tests", "role": "explore"})),
            when(
                text("## Summary\nthe tests live in tests/\n\n## Confidence: 0.8"),
                "find the tests",
            ),
            text("done"),
        ],
        ..Script::default()
    });
    let err = crate::common::line_session(&env, "where are the tests?\n");
    assert_eq!(err.matches("the tests live in tests/").count(), 1, "{err}");
    assert!(err.contains("→ spawn_agent"), "{err}");
}
