//! Context engineering through the front door: the cached prefix stays byte-identical
//! over a long session on every wire, Anthropic's cache breakpoints and OpenAI's cache key
//! are sent, cache reads show in `/cost`, each prompt carries its turn facts, and
//! compaction keeps a 300-round session under the model's window with the plan, tasks,
//! goal and the user's constraints pinned verbatim — losing nothing when the summary fails
//! or the provider says the request does not fit. (The repository map is in `overview`.)

use std::process::{Output, Stdio};

use atto_testkit::{Fault, Reply, Script, ScriptUsage};
use serde_json::{Value, json};

use crate::common::{Env, call, calls, feed_to_the_end, stderr};

/// The line session on `wire` as `model` (auto-safe), fed `lines`; asserts exit 0.
pub(crate) fn session(env: &Env, wire: &str, model: &str, extra: &[&str], lines: &str) -> Output {
    let child = env
        .atto()
        .args([
            "--base-url",
            &env.base(wire),
            "--wire",
            wire,
            "--model",
            model,
        ])
        .args(["--permission", "auto-safe"])
        .args(extra)
        .env("OPENAI_API_KEY", "sk-test")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    feed_to_the_end(child, lines)
}

/// Appends `text` to the test's user config.
fn configure(env: &Env, text: &str) {
    let path = env.dir.path().join("home/.config/atto/config.toml");
    let mut config = std::fs::read_to_string(&path).unwrap();
    config.push_str(text);
    std::fs::write(path, config).unwrap();
}

/// The stable prefix of a request on `wire`: system prompt and tool schemas, as JSON text.
fn prefix(wire: &str, body: &Value) -> String {
    let system = match wire {
        "chat" => body["messages"][0].clone(),
        "responses" => body["instructions"].clone(),
        _ => body["system"].clone(),
    };
    format!("{system}\n{}", body["tools"])
}

/// The conversation of a request, without cache breakpoints (they move to the newest
/// message by design) and without the system message.
fn conversation(wire: &str, body: &Value) -> Vec<String> {
    let items = match wire {
        "responses" => body["input"].as_array().unwrap().clone(),
        _ => body["messages"].as_array().unwrap().clone(),
    };
    items
        .iter()
        .filter(|m| m["role"] != "system")
        .map(|m| {
            let mut m = m.clone();
            if let Some(blocks) = m["content"].as_array_mut() {
                for b in blocks {
                    if let Some(b) = b.as_object_mut() {
                        b.remove("cache_control");
                    }
                }
            }
            m.to_string()
        })
        .collect()
}

#[test]
fn the_prefix_is_byte_identical_over_twenty_requests_on_every_wire() {
    for (wire, model) in [
        ("chat", "gpt-4o"),
        ("responses", "gpt-4o"),
        ("anthropic", "claude-sonnet-4-5"),
    ] {
        let mut env = Env::new();
        env.write("notes.txt", "alpha\nbeta\n");
        let mut replies = Vec::new();
        for i in 0..10 {
            replies.push(Reply {
                usage: Some(ScriptUsage {
                    input_tokens: 100,
                    output_tokens: 20,
                    cache_read_tokens: if i == 0 { 0 } else { 900 },
                    cache_write_tokens: if i == 0 { 900 } else { 0 },
                }),
                ..calls(vec![call("read_file", json!({"path": "notes.txt"}))])
            });
            replies.push(Reply::text(format!("read it, round {i}")));
        }
        env.serve(Script {
            replies,
            ..Script::default()
        });
        let prompts: String = (0..10)
            .map(|i| format!("look at notes, take {i}\n"))
            .collect();
        let extra: &[&str] = if wire == "chat" {
            &["--provider", "openai"]
        } else {
            &[]
        };
        let out = session(&env, wire, model, extra, &format!("{prompts}/cost\n"));
        let reqs = env.requests();
        assert_eq!(reqs.len(), 20, "{wire}: {}", stderr(&out));
        let first = prefix(wire, &reqs[0].body);
        assert!(first.len() > 2000, "{wire}: {first}");
        for (n, r) in reqs.iter().enumerate() {
            assert_eq!(
                prefix(wire, &r.body),
                first,
                "{wire}: request {n}'s prefix differs"
            );
            // The history only grows: each request starts with the one before it.
            if n > 0 {
                let before = conversation(wire, &reqs[n - 1].body);
                let now = conversation(wire, &r.body);
                assert_eq!(now[..before.len()], before[..], "{wire}: request {n}");
            }
        }
        // The volatile turn facts ride on the prompt, after the prefix.
        let body = reqs[19].body.to_string();
        assert!(
            body.contains(&format!("model: {model}</turn_meta>")),
            "{wire}"
        );
        assert!(!first.contains("turn_meta"), "{wire}");
        match wire {
            "anthropic" => {
                let body = &reqs[19].body;
                assert_eq!(body["system"][0]["cache_control"]["type"], "ephemeral");
                let last = body["messages"].as_array().unwrap().last().unwrap();
                let block = last["content"].as_array().unwrap().last().unwrap();
                assert_eq!(block["cache_control"]["type"], "ephemeral", "{last}");
                assert!(
                    reqs.iter()
                        .all(|r| r.body.get("prompt_cache_key").is_none())
                );
            }
            _ => {
                let key = reqs[0].body["prompt_cache_key"]
                    .as_str()
                    .unwrap()
                    .to_owned();
                assert!(key.starts_with("atto-"), "{key}");
                assert!(
                    reqs.iter()
                        .all(|r| r.body["prompt_cache_key"] == key.as_str())
                );
            }
        }
        // Ten calls read 900 cached tokens each of 1,000 input; one wrote them.
        let err = stderr(&out);
        let cost = err
            .lines()
            .find(|l| l.starts_with(&format!("{model}: 20 call(s)")))
            .unwrap_or_else(|| panic!("{wire}: no /cost line in {err}"));
        assert!(cost.contains("cache read"), "{cost}");
        assert!(cost.contains("8100 cache read"), "{wire}: {cost}");
        if wire == "anthropic" {
            assert!(cost.contains("900 cache write"), "{cost}");
        }
        // 8,100 of 10,100 input tokens (11,000 with Anthropic's cache writes) were reads.
        let rate = if wire == "anthropic" { "74%" } else { "80%" };
        assert!(
            cost.contains(&format!("cache hit rate {rate}")),
            "{wire}: {cost}"
        );
    }
}

/// A file of `bytes` bytes of numbered lines.
fn big_file(env: &Env, name: &str, bytes: usize) {
    let mut text = String::new();
    let mut n = 0;
    while text.len() < bytes {
        n += 1;
        text.push_str(&format!(
            "line {n}: the quick brown fox jumps over the lazy dog\n"
        ));
    }
    env.write(name, &text);
}

const SUMMARY_ASK: &str = "Summarise the conversation above.";

/// A summary reply, served only to summary requests.
fn summary(text: &str) -> Reply {
    Reply {
        when: Some(SUMMARY_ASK.to_owned()),
        ..Reply::text(text)
    }
}

const CONSTRAINT: &str = "Never edit files under vendor/ without asking me first.";

#[test]
fn a_300_round_session_stays_in_the_window_and_keeps_its_pins_verbatim() {
    let mut env = Env::new();
    big_file(&env, "big.txt", 6_000);
    configure(
        &env,
        "[limits]\nmax_rounds = 400\n[providers.local.models.m]\ncontext_window = 60000\n",
    );
    let mut replies: Vec<Reply> = (0..60)
        .map(|i| {
            summary(&format!(
                "SUMMARY {i}: read big.txt many times; nothing changed."
            ))
        })
        .collect();
    // Turn 1: a task plan.
    replies.push(calls(vec![
        call("task_create", json!({"title": "Read the inputs"})),
        call(
            "task_create",
            json!({"title": "Migrate the parser", "depends_on": [1]}),
        ),
        call(
            "task_create",
            json!({"title": "Run the test suite", "depends_on": [2]}),
        ),
    ]));
    replies.push(calls(vec![call(
        "task_update",
        json!({"number": 1, "state": "in_progress"}),
    )]));
    replies.push(Reply::text("Planned."));
    // Turn 2: the user's constraint.
    replies.push(Reply::text("Understood."));
    // Turn 3: 300 rounds of large tool outputs.
    for _ in 0..300 {
        replies.push(calls(vec![call("read_file", json!({"path": "big.txt"}))]));
    }
    replies.push(calls(vec![call(
        "goal_update",
        json!({"status": "complete"}),
    )]));
    replies.push(Reply::text("Done."));
    env.serve(Script {
        replies,
        ..Script::default()
    });
    let lines = format!(
        "Plan the migration.\n{CONSTRAINT} Keep going.\n/goal Finish the parser migration \
         --budget 9000000\nDo the migration.\n/context\n"
    );
    let out = session(&env, "chat", "m", &[], &lines);
    let err = stderr(&out);
    let reqs = env.requests();
    let work: Vec<&Value> = reqs
        .iter()
        .map(|r| &r.body)
        .filter(|b| !b.to_string().contains(SUMMARY_ASK))
        .collect();
    assert_eq!(work.len(), 306, "{err}");
    // No request ever passed the window (60,000 tokens at three bytes a token).
    for (n, r) in reqs.iter().enumerate() {
        let bytes = r.body.to_string().len();
        assert!(bytes / 3 <= 60_000, "request {n} has {bytes} bytes");
    }
    let compactions = err.matches("context compacted").count();
    assert!(compactions >= 3, "{compactions} compactions: {err}");
    // After them, the last request still carries every pin verbatim.
    let last = work.last().unwrap().to_string();
    assert!(last.contains(CONSTRAINT), "the turn-2 constraint was lost");
    assert!(
        last.contains("Finish the parser migration"),
        "the goal was lost"
    );
    assert!(
        last.contains("token budget 9000000"),
        "the goal's budget was lost"
    );
    assert!(
        last.contains("1. [in_progress] Read the inputs"),
        "task states lost"
    );
    let tasks = last.split("## Tasks").nth(1).unwrap_or_default();
    assert!(
        last.contains("2. [blocked] Migrate the parser (after 1)"),
        "DAG lost: {tasks:.300}"
    );
    assert!(
        last.contains("3. [blocked] Run the test suite (after 2)"),
        "DAG lost"
    );
    assert!(last.contains("SUMMARY "), "no summary in {last}");
    // The summary requests saw the pins of the earlier compaction.
    let summaries: Vec<String> = reqs
        .iter()
        .map(|r| r.body.to_string())
        .filter(|b| b.contains(SUMMARY_ASK))
        .collect();
    assert!(summaries.len() >= 3);
    assert!(summaries.last().unwrap().contains("EARLIER COMPACTION"));
    // /context answers with the window from config.
    assert!(err.contains("context window of m: 60000 tokens"), "{err}");
}

/// The messages of one thread in the store, in order.
fn thread_rows(env: &Env, thread: &str) -> Vec<(i64, String)> {
    let db = rusqlite::Connection::open(env.dir.path().join("home/atto-data/atto.db")).unwrap();
    let mut stmt = db
        .prepare("SELECT seq, body FROM messages WHERE thread_id = ?1 ORDER BY seq")
        .unwrap();
    stmt.query_map([thread], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// Every thread of the store: (id, replaces).
fn threads(env: &Env) -> Vec<(String, Option<String>)> {
    let db = rusqlite::Connection::open(env.dir.path().join("home/atto-data/atto.db")).unwrap();
    let mut stmt = db
        .prepare("SELECT id, replaces FROM threads ORDER BY created_at, rowid")
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

#[test]
fn a_failed_summary_loses_nothing_and_rollback_returns_to_the_originals() {
    let failures: Vec<(&str, Reply)> = vec![
        (
            "the summary request failed",
            Reply {
                when: Some(SUMMARY_ASK.to_owned()),
                fault: Some(Fault::Status {
                    status: 400,
                    body: None,
                    retry_after: None,
                }),
                ..Reply::default()
            },
        ),
        ("the summary came back empty", summary("")),
        (
            "the summary was too long",
            summary(&"words ".repeat(20_000)),
        ),
    ];
    for (why, failing) in failures {
        let mut env = Env::new();
        big_file(&env, "big.txt", 4_000);
        configure(
            &env,
            "[providers.local.models.m]\ncontext_window = 100000\n",
        );
        let mut replies = vec![failing];
        for _ in 0..4 {
            replies.push(calls(vec![call("read_file", json!({"path": "big.txt"}))]));
        }
        replies.push(Reply::text("Read it all."));
        replies.push(Reply::text("Still here."));
        env.serve(Script {
            replies,
            ..Script::default()
        });
        // Run once, then compact by hand in a second run of the same session, so the store
        // can be read in between.
        let first = session(
            &env,
            "chat",
            "m",
            &[],
            &format!("{CONSTRAINT} Read big.txt.\n"),
        );
        let main = threads(&env)[0].0.clone();
        let before = thread_rows(&env, &main);
        assert_eq!(before.len(), 10, "{}", stderr(&first));
        let out = session(
            &env,
            "chat",
            "m",
            &["--continue"],
            "/compact the parser work\n/threads\nanything else?\n/rollback\n",
        );
        let err = stderr(&out);
        assert!(
            err.contains(&format!("old tool outputs elided ({why}")),
            "{why}: {err}"
        );
        // The original thread's rows are exactly as they were.
        assert_eq!(thread_rows(&env, &main), before, "{why}");
        // The compacted version holds every message, with the oldest outputs elided.
        let all = threads(&env);
        let (version, replaces) = &all[1];
        assert_eq!(replaces.as_deref(), Some(main.as_str()));
        let rows = thread_rows(&env, version);
        assert_eq!(
            rows.len(),
            1 + 10 + 2,
            "{why}: compaction note, the originals, one turn"
        );
        assert!(
            rows[0].1.contains(CONSTRAINT),
            "{why}: the constraint is pinned"
        );
        assert!(
            rows.iter()
                .any(|(_, b)| b.contains("was elided to save context"))
        );
        // The next request carried the compacted conversation.
        let reqs = env.requests();
        let last = reqs.last().unwrap().body.to_string();
        assert!(last.contains("old tool outputs were elided"), "{why}");
        assert!(last.contains("anything else?"));
        // /rollback returns to the originals.
        assert!(err.contains("now in thread main"), "{why}: {err}");
    }
}

#[test]
fn a_context_overflow_compacts_and_the_request_is_sent_again() {
    let mut env = Env::new();
    big_file(&env, "big.txt", 4_000);
    let overflow = r#"{"error":{"message":"This model's maximum context length is 8192 tokens","type":"invalid_request_error","code":"context_length_exceeded"}}"#;
    env.serve(Script {
        replies: vec![
            summary("SUMMARY: read big.txt three times."),
            calls(vec![call("read_file", json!({"path": "big.txt"}))]),
            calls(vec![call("read_file", json!({"path": "big.txt"}))]),
            calls(vec![call("read_file", json!({"path": "big.txt"}))]),
            Reply {
                fault: Some(Fault::Status {
                    status: 400,
                    body: Some(overflow.to_owned()),
                    retry_after: None,
                }),
                ..Reply::default()
            },
            Reply::text("done after compaction"),
        ],
        ..Script::default()
    });
    // A model whose window atto does not know: only the provider's error compacts.
    let out = env.exec("chat", &format!("{CONSTRAINT} Read big.txt three times."));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let events = crate::common::events(&out);
    let compacted = crate::common::of_type(&events, "context_compacted");
    assert_eq!(compacted.len(), 1, "{}", stderr(&out));
    assert_eq!(compacted[0]["trigger"], "overflow");
    assert_eq!(compacted[0]["summarized"], true);
    let reqs = env.requests();
    // The rejected request, the summary request, then the same step again, smaller.
    let rejected = reqs[3].body.to_string();
    let retried = reqs[5].body.to_string();
    assert!(reqs[4].body.to_string().contains(SUMMARY_ASK));
    assert!(
        retried.len() < rejected.len(),
        "{} !< {}",
        retried.len(),
        rejected.len()
    );
    assert!(retried.contains("SUMMARY: read big.txt three times."));
    assert!(retried.contains(CONSTRAINT), "pinned");
    let result = events.last().unwrap();
    assert_eq!(result["status"], "completed", "{result}");
}

#[test]
fn a_compaction_that_cannot_help_is_not_repeated_every_step() {
    let mut env = Env::new();
    env.write("a.txt", "a\n");
    // A window the prompt and tool schemas alone nearly fill: no compaction gets under it.
    configure(
        &env,
        "[providers.local.models.scripted-model]\ncontext_window = 3000\n",
    );
    let mut replies: Vec<Reply> = (0..5).map(|i| summary(&format!("S{i}"))).collect();
    for _ in 0..5 {
        replies.push(calls(vec![call("read_file", json!({"path": "a.txt"}))]));
    }
    replies.push(Reply::text("done"));
    env.serve(Script {
        replies,
        ..Script::default()
    });
    let out = env.exec("chat", "read a.txt five times");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let events = crate::common::events(&out);
    let compacted = crate::common::of_type(&events, "context_compacted");
    assert_eq!(compacted.len(), 1, "{}", stderr(&out));
    let summaries = env
        .requests()
        .iter()
        .filter(|r| r.body.to_string().contains(SUMMARY_ASK))
        .count();
    assert!(summaries <= 1, "{summaries} summary requests");
}
