//! Killing atto with SIGKILL at 50 random points of a scripted session — while it streams,
//! runs tools and writes — never loses what it had reported as finished, and the killed
//! session resumes and completes. The points are drawn afresh each run from a seed that is
//! printed (set `ATTO_CRASH_SEED` to repeat a run).

use std::collections::HashSet;
use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::{Duration, Instant};

use atto_testkit::{Reply, Script, ScriptToolCall, StreamOptions};
use serde_json::{Value, json};

use crate::common::{Env, stderr};

fn call(name: &str, arguments: Value) -> ScriptToolCall {
    ScriptToolCall {
        id: None,
        name: name.into(),
        arguments,
        raw_arguments: None,
    }
}

fn session_script() -> Script {
    let step = |text: &str, calls: Vec<ScriptToolCall>| Reply {
        text: Some(text.into()),
        tool_calls: calls,
        delay_ms: 15,
        ..Reply::default()
    };
    Script {
        replies: vec![
            step(
                "Writing two files.",
                vec![
                    call("write_file", json!({"path": "a.txt", "content": "alpha"})),
                    call("write_file", json!({"path": "b.txt", "content": "beta"})),
                ],
            ),
            step(
                "Running a command.",
                vec![call("bash", json!({"command": "sleep 0.05; echo ran"}))],
            ),
            step(
                "Reading both.",
                vec![
                    call("read_file", json!({"path": "a.txt"})),
                    call("read_file", json!({"path": "b.txt"})),
                ],
            ),
            step("All done, the files are in place.", Vec::new()),
        ],
        // Small HTTP chunks, so kills also land in the middle of a streamed reply.
        options: StreamOptions {
            chunk_bytes: Some(64),
            ..StreamOptions::default()
        },
    }
}

/// Starts a session, kills it after `after`, and returns the stream-json lines it wrote.
fn run_and_kill(env: &Env, base: &str, after: Option<Duration>) -> Vec<Value> {
    let mut child = env
        .atto()
        .args([
            "exec",
            "--permission",
            "auto-safe",
            "--output-format",
            "stream-json",
        ])
        .args(["--base-url", base, "--model", "m", "make the files"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
            .filter_map(|l| serde_json::from_str::<Value>(&l).ok())
            .collect::<Vec<_>>()
    });
    if let Some(after) = after {
        std::thread::sleep(after);
        let _ = child.kill(); // SIGKILL
    }
    let _ = child.wait();
    reader.join().unwrap()
}

fn exported(env: &Env, id: &str) -> Vec<Value> {
    let out = env
        .atto()
        .args(["sessions", "export", id, "--format", "json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    doc["messages"].as_array().unwrap().clone()
}

#[test]
fn sigkill_at_fifty_points_loses_nothing_reported_and_resumes() {
    let mut env = Env::new();
    // One whole run first, to learn how long a session takes here.
    env.serve(session_script());
    let started = Instant::now();
    let whole = run_and_kill(&env, &env.base("chat"), None);
    let total = started.elapsed();
    assert_eq!(whole.last().unwrap()["status"], "completed", "{whole:?}");

    let seed = std::env::var("ATTO_CRASH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| fastrand::u64(..));
    eprintln!("crash test: kill points drawn with ATTO_CRASH_SEED={seed}");
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut killed_mid_tools = 0;
    for i in 0..50u32 {
        env.serve(session_script());
        let base = env.base("chat");
        // A random point of the whole run, from process start to its end.
        let after = total.mul_f64(rng.f64()) + Duration::from_millis(2);
        let seen = run_and_kill(&env, &base, Some(after));
        let Some(started) = seen.iter().find(|e| e["type"] == "session_started") else {
            continue; // killed before the session existed: nothing was reported
        };
        let id = started["session_id"].as_str().unwrap().to_owned();
        let stored = exported(&env, &id);
        let stored_results: HashSet<&str> = stored
            .iter()
            .filter(|m| m["type"] == "tool_result")
            .map(|m| m["call_id"].as_str().unwrap())
            .collect();
        let finished: Vec<&str> = seen
            .iter()
            .filter(|e| e["type"] == "tool_call_finished")
            .map(|e| e["call_id"].as_str().unwrap())
            .collect();
        for call_id in &finished {
            assert!(
                stored_results.contains(call_id),
                "kill {i} at {after:?} (seed {seed}): {call_id} was reported finished but not \
                 stored"
            );
        }
        let started_calls = seen
            .iter()
            .filter(|e| e["type"] == "tool_call_started")
            .count();
        if started_calls > finished.len() {
            killed_mid_tools += 1;
        }
        if seen.iter().any(|e| e["type"] == "turn_started") {
            assert!(
                stored.iter().any(|m| m["type"] == "user"),
                "kill {i}: the prompt was not stored"
            );
        }

        // The killed session resumes and completes.
        env.serve(Script {
            replies: vec![Reply::text("Resumed and finished.")],
            ..Script::default()
        });
        let out = env
            .atto()
            .args(["exec", "--resume", &id, "--output-format", "json"])
            .args(["--base-url", &env.base("chat"), "--model", "m", "continue"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "kill {i}: {}", stderr(&out));
        let result: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(result["status"], "completed");
        // Every tool call in the resumed history has a result (repaired if the kill
        // interrupted it), so a real provider would accept it.
        let body = &env.requests()[0].body;
        let messages = body["messages"].as_array().unwrap();
        let calls: Vec<&str> = messages
            .iter()
            .filter_map(|m| m["tool_calls"].as_array())
            .flatten()
            .map(|c| c["id"].as_str().unwrap())
            .collect();
        let answered: HashSet<&str> = messages
            .iter()
            .filter(|m| m["role"] == "tool")
            .map(|m| m["tool_call_id"].as_str().unwrap())
            .collect();
        for c in calls {
            assert!(
                answered.contains(c),
                "kill {i}: call {c} has no result on resume"
            );
        }
    }
    // 50 uniform draws over the run: some land while tools run unless the tools are a
    // sliver of it, which the script's sleeping command rules out.
    assert!(
        killed_mid_tools > 0,
        "no kill landed while tools ran (seed {seed})"
    );
}
