//! Self-correction through the front door: a scripted model whose calls fail, against a
//! real temp workspace; assertions on the files, on what the model was sent back, and on
//! the `correction_*` events.

// Tests assert by unwrapping; a panic is the failure report.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use atto_core::{AgentHandle, Limits};
use atto_protocol::{DangerLevel, Event, FinalResult, Op, ToolCallStatus, TurnStatus};
use atto_testkit::{Reply, ScriptToolCall};
use atto_tools::{BoxFuture, Tool, ToolContext, ToolError, ToolOutput, ToolRegistry};
use serde_json::{Value, json};

mod common;

use common::{Fixture, call, calls, text};

const GREETING: &str = "hello world\n";

fn raw_call(name: &str, raw: &str) -> ScriptToolCall {
    ScriptToolCall {
        raw_arguments: Some(raw.into()),
        ..call(name, Value::Null)
    }
}

/// An edit of greet.txt whose old_string is nowhere in it.
fn missed_edit(old: &str) -> ScriptToolCall {
    call(
        "edit_file",
        json!({"path": "greet.txt", "old_string": old, "new_string": "bye"}),
    )
}

/// A workspace holding greet.txt, and a model answering with `replies`.
async fn fixture(replies: Vec<Reply>) -> Fixture {
    let f = common::fixture(replies).await;
    std::fs::write(f.workspace.join("greet.txt"), GREETING).unwrap();
    f
}

fn start(f: &Fixture, tools: ToolRegistry) -> AgentHandle {
    common::start(f, tools, Limits::default())
}

/// Runs one prompt; its events up to and including TurnCompleted.
async fn run(handle: &mut AgentHandle, prompt: &str) -> (Vec<Event>, FinalResult) {
    handle
        .submit(Op::UserInput {
            text: prompt.into(),
        })
        .unwrap();
    common::turn_events(handle).await
}

/// The tool results the model was sent, in order, from the last request it got.
fn tool_results(f: &Fixture) -> Vec<String> {
    let reqs = f.server.requests();
    reqs.last().unwrap().body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap().to_owned())
        .collect()
}

fn finished(events: &[Event]) -> Vec<(ToolCallStatus, String)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::ToolCallFinished {
                status, summary, ..
            } => Some((*status, summary.clone())),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missed_edit_becomes_a_self_correct_attempt_that_then_succeeds() {
    let f = fixture(vec![
        calls(vec![missed_edit("goodbye moon")]),
        calls(vec![call("read_file", json!({"path": "greet.txt"}))]),
        calls(vec![call(
            "edit_file",
            json!({"path": "greet.txt", "old_string": "hello world", "new_string": "hi there"}),
        )]),
        text("done"),
    ])
    .await;
    let mut handle = start(&f, ToolRegistry::builtin());
    let (events, result) = run(&mut handle, "say hi instead").await;
    assert_eq!(result.status, TurnStatus::Completed);
    assert_eq!(
        std::fs::read_to_string(f.workspace.join("greet.txt")).unwrap(),
        "hi there\n"
    );

    let results = tool_results(&f);
    let first = &results[0];
    assert!(
        first.starts_with(
            "SELF_CORRECT_ATTEMPT: The edit_file call failed with error: edit_file: greet.txt \
             was not changed: old_string was not found"
        ),
        "{first}"
    );
    assert!(first.contains(
        "The previous approach failed. Here's a more direct strategy:\nRead greet.txt again \
         with read_file"
    ));
    assert!(first.contains("Please generate new tool calls using the suggested approach."));
    assert!(first.contains("attempt 1 of 3"));

    // The user sees what failed; the prompt to the model is the model's.
    let shown = finished(&events);
    assert_eq!(shown[0].0, ToolCallStatus::Error);
    assert!(
        shown[0]
            .1
            .starts_with("edit_file: greet.txt was not changed"),
        "{shown:?}"
    );
    assert!(!shown[0].1.contains("SELF_CORRECT_ATTEMPT"), "{shown:?}");

    let corrections: Vec<&Event> = events
        .iter()
        .filter(|e| {
            matches!(
                e,
                Event::CorrectionAttempt { .. }
                    | Event::CorrectionSuccess { .. }
                    | Event::CorrectionFailed { .. }
            )
        })
        .collect();
    assert!(
        matches!(
            &corrections[..],
            [
                Event::CorrectionAttempt { tool, error, strategy, attempt: 1, max: 3 },
                Event::CorrectionSuccess { tool: fixed, attempts: 1 },
            ] if tool == "edit_file"
                && fixed == "edit_file"
                && error.starts_with("edit_file: greet.txt was not changed")
                && strategy.starts_with("Read greet.txt again")
        ),
        "{corrections:?}"
    );
    // The success is reported after the edit that made it, not after the re-read.
    let success = events
        .iter()
        .position(|e| matches!(e, Event::CorrectionSuccess { .. }))
        .unwrap();
    assert!(matches!(
        &events[success - 1],
        Event::ToolCallFinished { name, status: ToolCallStatus::Ok, .. } if name == "edit_file"
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_identical_failing_call_is_refused_instead_of_run_again() {
    // The repeats send the same object with other key order and spacing.
    let same = r#"{ "new_string": "bye", "old_string": "goodbye moon", "path": "greet.txt" }"#;
    let f = fixture(vec![
        calls(vec![missed_edit("goodbye moon")]),
        calls(vec![raw_call("edit_file", same)]),
        calls(vec![raw_call("edit_file", same)]),
        text("giving up"),
    ])
    .await;
    let mut handle = start(&f, ToolRegistry::builtin());
    let (events, result) = run(&mut handle, "say bye").await;
    assert_eq!(result.status, TurnStatus::Completed);
    assert_eq!(
        std::fs::read_to_string(f.workspace.join("greet.txt")).unwrap(),
        GREETING
    );

    let results = tool_results(&f);
    assert_eq!(results.len(), 3);
    assert!(results[0].starts_with("SELF_CORRECT_ATTEMPT: "));
    for repeat in &results[1..] {
        assert!(
            repeat.starts_with(
                "this exact edit_file call (same arguments) already failed earlier in this \
                 turn with: edit_file: greet.txt was not changed: old_string was not found"
            ),
            "{repeat}"
        );
        assert!(repeat.contains("It was not run again"));
        assert!(repeat.contains("Try something different"));
    }
    let shown = finished(&events);
    assert_eq!(shown.len(), 3);
    for (status, summary) in &shown[1..] {
        assert_eq!(*status, ToolCallStatus::Error);
        assert!(
            summary.starts_with("this exact edit_file call"),
            "{summary}"
        );
    }
    // A refused repeat is not another correction attempt.
    let attempts = events
        .iter()
        .filter(|e| matches!(e, Event::CorrectionAttempt { .. }))
        .count();
    assert_eq!(attempts, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fourth_correction_tells_the_model_to_stop() {
    let f = fixture(vec![
        calls(vec![missed_edit("one")]),
        calls(vec![missed_edit("two")]),
        calls(vec![missed_edit("three")]),
        calls(vec![missed_edit("four")]),
        text("I could not make the edit"),
    ])
    .await;
    let mut handle = start(&f, ToolRegistry::builtin());
    let (events, result) = run(&mut handle, "say bye").await;
    assert_eq!(result.status, TurnStatus::Completed);
    assert_eq!(
        std::fs::read_to_string(f.workspace.join("greet.txt")).unwrap(),
        GREETING
    );

    let results = tool_results(&f);
    assert_eq!(results.len(), 4);
    for (n, content) in results[..3].iter().enumerate() {
        assert!(content.starts_with("SELF_CORRECT_ATTEMPT: "), "{content}");
        assert!(
            content.contains(&format!("attempt {} of 3", n + 1)),
            "{content}"
        );
    }
    let last = &results[3];
    assert!(!last.contains("SELF_CORRECT_ATTEMPT"), "{last}");
    assert!(
        last.starts_with("edit_file: greet.txt was not changed"),
        "{last}"
    );
    assert!(
        last.contains("Self-correction is exhausted for this request (\"say bye\")"),
        "{last}"
    );
    assert!(last.contains("Stop and report to the user"), "{last}");
    // The chain of attempts, for the report.
    assert!(last.contains("\n1. (+"), "{last}");
    assert!(last.contains("\n3. (+"), "{last}");

    let attempts: Vec<u32> = events
        .iter()
        .filter_map(|e| match e {
            Event::CorrectionAttempt { attempt, .. } => Some(*attempt),
            _ => None,
        })
        .collect();
    assert_eq!(attempts, [1, 2, 3]);
    assert!(events.iter().any(|e| matches!(
        e,
        Event::CorrectionFailed { tool, attempts: 3 } if tool == "edit_file"
    )));
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::CorrectionSuccess { .. }))
    );
}

/// A tool that always fails and counts its runs, to see which calls really ran.
struct Flaky(Arc<AtomicUsize>);

impl Tool for Flaky {
    fn name(&self) -> &'static str {
        "flaky"
    }
    fn description(&self) -> &'static str {
        "always fails"
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {}})
    }
    fn danger(&self) -> DangerLevel {
        DangerLevel::Safe
    }
    fn mutates(&self, _args: &Value) -> bool {
        false
    }
    fn run<'a>(
        &'a self,
        _args: Value,
        _ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Box::pin(async { Err(ToolError::Internal("the service is down".into())) })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repeat_runs_again_once_the_workspace_changed() {
    let f = fixture(vec![
        calls(vec![call("flaky", json!({"n": 1}))]),
        calls(vec![call("flaky", json!({"n": 1}))]),
        calls(vec![call("flaky", json!({"n": 2}))]),
        calls(vec![call(
            "write_file",
            json!({"path": "fixed.txt", "content": "ok\n"}),
        )]),
        calls(vec![call("flaky", json!({"n": 1}))]),
        text("done"),
    ])
    .await;
    let runs = Arc::new(AtomicUsize::new(0));
    let mut tools = ToolRegistry::builtin();
    tools.register(Arc::new(Flaky(Arc::clone(&runs))));
    let mut handle = start(&f, tools);
    let (_, result) = run(&mut handle, "call flaky").await;
    assert_eq!(result.status, TurnStatus::Completed);
    // The identical second call did not run; other arguments did, and so did the repeat
    // after a change to the workspace.
    assert_eq!(runs.load(Ordering::SeqCst), 3);
    let results = tool_results(&f);
    assert!(results[0].contains("the service is down"));
    assert!(results[1].starts_with("this exact flaky call"));
    assert!(results[2].contains("the service is down"));
    assert!(results[4].contains("the service is down"), "{}", results[4]);
    // An error without a better route is passed on as it is.
    assert!(!results[0].contains("SELF_CORRECT_ATTEMPT"));
}
