// Tests assert by unwrapping; a panic is the failure report.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;

use super::*;

fn edit_fallback(path: &str) -> Fallback {
    Fallback {
        original_tool: "edit_file".into(),
        original_error: format!("edit_file: {path} was not changed: old_string was not found"),
        suggested_approach: format!("Read {path} again with read_file."),
        fallback_tools: vec!["read_file".into(), "edit_file".into(), "write_file".into()],
    }
}

fn failed(args: Value, fallback: Option<Fallback>) -> CallEnding {
    CallEnding {
        args: Some(args),
        status: ToolCallStatus::Error,
        mutates: true,
        fallback,
        exit_code: None,
        ran: true,
    }
}

fn ok(mutates: bool) -> CallEnding {
    CallEnding {
        args: Some(json!({})),
        status: ToolCallStatus::Ok,
        mutates,
        fallback: None,
        exit_code: None,
        ran: true,
    }
}

/// A bash call of `command` that exited with `code`.
fn command(command: &str, code: i32) -> CallEnding {
    CallEnding {
        args: Some(json!({ "command": command })),
        status: ToolCallStatus::Ok,
        mutates: true,
        fallback: None,
        exit_code: Some(code),
        ran: true,
    }
}

#[test]
fn three_attempts_then_the_model_is_told_to_stop() {
    let mut c = Corrections::new("fix the greeting", Tally::default());
    for n in 1..=3_u32 {
        let facts = failed(
            json!({"path": "a.txt", "n": n}),
            Some(edit_fallback("a.txt")),
        );
        let v = c.finished("edit_file", "edit_file: a.txt was not changed", &facts);
        let content = v.content.unwrap();
        assert!(content.starts_with("SELF_CORRECT_ATTEMPT: "), "{content}");
        assert!(content.contains("Here's a more direct strategy:\nRead a.txt again"));
        assert!(content.contains(&format!("attempt {n} of 3")), "{content}");
        assert!(matches!(
            &v.events[..],
            [Event::CorrectionAttempt { attempt, max: 3, tool, .. }]
                if *attempt == n && tool == "edit_file"
        ));
    }
    let facts = failed(json!({"n": 4}), Some(edit_fallback("a.txt")));
    let v = c.finished("edit_file", "edit_file: a.txt was not changed", &facts);
    let content = v.content.unwrap();
    assert!(!content.contains("SELF_CORRECT_ATTEMPT"), "{content}");
    assert!(
        content.contains("Self-correction is exhausted"),
        "{content}"
    );
    assert!(content.contains("\"fix the greeting\""), "{content}");
    assert!(content.contains("3. (+0 s) edit_file:"), "{content}");
    assert!(content.contains("Stop and report to the user"), "{content}");
    assert!(matches!(
        &v.events[..],
        [Event::CorrectionFailed { attempts: 3, .. }]
    ));
    // Reported once; later failures are still told to stop.
    let facts = failed(json!({"n": 5}), Some(edit_fallback("a.txt")));
    let v = c.finished("edit_file", "again", &facts);
    assert!(v.events.is_empty());
    assert!(v.content.unwrap().contains("exhausted"));
}

#[test]
fn failures_without_a_better_route_are_left_alone() {
    let mut c = Corrections::new("run the tests", Tally::default());
    let v = c.finished(
        "bash",
        "exit code 1",
        &failed(json!({"command": "x"}), None),
    );
    assert!(v.content.is_none() && v.events.is_empty());
}

#[test]
fn requests_are_keyed_by_their_text() {
    assert_eq!(request_key("fix it"), request_key("  fix it\n"));
    assert_ne!(request_key("fix it"), request_key("fix them"));
    let c = Corrections::new("fix it", Tally::default());
    assert_eq!(c.current, request_key("fix it"));
    assert_eq!(c.requests.len(), 1);
    // A new request starts with no attempts used.
    let mut used = Corrections::new("fix it", Tally::default());
    for n in 0..3 {
        used.finished(
            "edit_file",
            "e",
            &failed(json!({ "n": n }), Some(edit_fallback("a"))),
        );
    }
    let mut fresh = Corrections::new("fix them", Tally::default());
    let v = fresh.finished(
        "edit_file",
        "e",
        &failed(json!({}), Some(edit_fallback("a"))),
    );
    assert!(v.content.unwrap().contains("attempt 1 of 3"));
}

#[test]
fn repeats_are_found_by_parsed_arguments() {
    let mut c = Corrections::new("task", Tally::default());
    let first = arguments(r#"{"path": "a.txt", "old_string": "x", "new_string": "y"}"#);
    c.finished(
        "edit_file",
        "edit_file: a.txt was not changed: old_string was not found\ncandidates...",
        &CallEnding {
            args: first,
            status: ToolCallStatus::Error,
            mutates: true,
            fallback: None,
            exit_code: None,
            ran: true,
        },
    );
    // Same object, other key order and spacing.
    let again = arguments(r#"{"new_string":"y","old_string":"x","path":"a.txt"}"#).unwrap();
    let refusal = c.repeated("edit_file", &again).unwrap();
    assert!(
        refusal.contains("with: edit_file: a.txt was not changed: old_string was not found."),
        "{refusal}"
    );
    assert!(!refusal.contains("candidates"));
    assert!(c.repeated("write_file", &again).is_none());
    let other = json!({"path": "a.txt", "old_string": "x", "new_string": "z"});
    assert!(c.repeated("edit_file", &other).is_none());
}

#[test]
fn which_outcomes_count_as_failed_for_repeats() {
    let cases = [
        (ToolCallStatus::Error, true),
        (ToolCallStatus::Denied, true),
        (ToolCallStatus::Ok, false),
        (ToolCallStatus::Queued, false),
        (ToolCallStatus::Cancelled, false),
        (ToolCallStatus::InvalidArguments, false),
    ];
    for (status, remembered) in cases {
        let mut c = Corrections::new("task", Tally::default());
        let args = json!({"command": "rm -rf /"});
        c.finished(
            "bash",
            "no",
            &CallEnding::answered(&args.to_string(), status),
        );
        assert_eq!(
            c.repeated("bash", &args).is_some(),
            remembered,
            "{status:?}"
        );
    }
    // Empty argument text reads as `{}`, as the orchestrator reads it.
    let mut c = Corrections::new("task", Tally::default());
    c.finished(
        "list_files",
        "no",
        &CallEnding::answered(" ", ToolCallStatus::Denied),
    );
    assert!(c.repeated("list_files", &json!({})).is_some());
}

#[test]
fn a_successful_change_forgets_earlier_failures() {
    let mut c = Corrections::new("task", Tally::default());
    let args = json!({"command": "cargo test"});
    c.finished("bash", "tests failed", &failed(args.clone(), None));
    c.finished("read_file", "text", &ok(false));
    assert!(c.repeated("bash", &args).is_some());
    c.finished("edit_file", "edited", &ok(true));
    assert!(c.repeated("bash", &args).is_none());
}

#[test]
fn success_after_an_attempt_is_reported_once() {
    let mut c = Corrections::new("task", Tally::default());
    c.finished(
        "edit_file",
        "e",
        &failed(json!({}), Some(edit_fallback("a.txt"))),
    );
    // Reading the file again is a step of the new route, not its success.
    assert!(
        c.finished("read_file", "text", &ok(false))
            .events
            .is_empty()
    );
    let v = c.finished("write_file", "wrote a.txt", &ok(true));
    assert!(matches!(
        &v.events[..],
        [Event::CorrectionSuccess { tool, attempts: 1 }] if tool == "edit_file"
    ));
    assert!(
        c.finished("edit_file", "edited", &ok(true))
            .events
            .is_empty()
    );
}

#[test]
fn a_diagnosed_failure_gets_its_fix_and_a_test_failure_is_left_alone() {
    let mut c = Corrections::new("run it", Tally::default());
    let v = c.finished(
        "bash",
        "bash: line 1: python: command not found",
        &command("python main.py", 127),
    );
    let content = v.content.unwrap();
    assert!(
        content.starts_with(
            "bash: line 1: python: command not found\n\n[atto] Diagnosis (COMMAND_NOT_FOUND)"
        ),
        "{content}"
    );
    assert!(
        content.contains("Suggestion: `python` is not available here (try python3)"),
        "{content}"
    );
    // A failing test run is the command's own verdict.
    let v = c.finished("bash", "1 failed, 2 passed", &command("pytest", 1));
    assert!(v.content.is_none());
    // With a better route, the diagnosis joins the self-correction prompt.
    let mut c = Corrections::new("fix", Tally::default());
    let v = c.finished(
        "edit_file",
        "edit_file: a.txt was not changed: old_string was not found in a.txt",
        &failed(json!({"path": "a.txt"}), Some(edit_fallback("a.txt"))),
    );
    let content = v.content.unwrap();
    assert!(content.starts_with("SELF_CORRECT_ATTEMPT: "), "{content}");
    assert!(
        content.contains(
            "\nDiagnosis (EDIT_NO_MATCH): the text to replace is not in the file as given.\n"
        ),
        "{content}"
    );
}

/// The seed's repeat detection, counted across the session's turns and started again
/// when the tool works; the order to stop wins over the warning.
#[test]
fn a_tool_that_failed_three_times_is_told_to_change_approach() {
    let warning = "This tool has failed 3 times. Consider a different approach.";
    let mut c = Corrections::new("first", Tally::default());
    for n in 0..2 {
        let v = c.finished(
            "grep",
            "internal error in the tool: x",
            &failed(json!({"n": n}), None),
        );
        assert!(
            v.content
                .is_none_or(|t| !t.contains("Consider a different"))
        );
    }
    // The next turn goes on counting.
    let mut c = Corrections::new("second", c.into_tally());
    let v = c.finished(
        "grep",
        "internal error in the tool: x",
        &failed(json!({"n": 3}), None),
    );
    let content = v.content.unwrap();
    assert!(
        content.starts_with("internal error in the tool: x\n\nThis tool has failed 3 times"),
        "{content}"
    );
    assert!(content.ends_with(warning), "{content}");
    let v = c.finished("grep", "internal error", &failed(json!({"n": 4}), None));
    assert!(v.content.unwrap().contains("has failed 4 times"));
    // Working once starts the count again.
    c.finished("grep", "3 matches", &ok(false));
    let v = c.finished("grep", "internal error", &failed(json!({"n": 5}), None));
    assert!(v.content.is_none());
    // Other tools keep their own count.
    let v = c.finished("glob", "internal error", &failed(json!({}), None));
    assert!(v.content.is_none());
}

#[test]
fn a_related_call_that_works_after_a_failure_is_a_workaround_once_per_turn() {
    let mut c = Corrections::new("run main", Tally::default());
    c.finished(
        "bash",
        "bash: python: command not found",
        &command("python main.py", 127),
    );
    c.finished(
        "bash",
        "bash: python: command not found",
        &command("python -u main.py", 127),
    );
    // An unrelated command that works fixes nothing.
    let v = c.finished("bash", "a.txt", &command("ls", 0));
    assert!(v.workaround.is_none());
    let v = c.finished("bash", "5", &command("python3 main.py", 0));
    assert_eq!(
        v.workaround,
        Some(Workaround {
            tool: "bash".into(),
            category: FailureCategory::CommandNotFound,
            failed: "python -u main.py".into(),
            worked: "python3 main.py".into(),
            error: "bash: python: command not found".into(),
            failures: 2,
        })
    );
    // The same lesson again this turn is not proposed twice.
    c.finished(
        "bash",
        "bash: python: command not found",
        &command("python other.py", 127),
    );
    let v = c.finished("bash", "ok", &command("python3 other.py", 0));
    assert!(v.workaround.is_none());
    // Slips the model makes anywhere teach nothing about the project.
    let mut c = Corrections::new("edit", Tally::default());
    c.finished(
        "edit_file",
        "edit_file: a.txt was not changed: old_string was not found",
        &failed(json!({"path": "a.txt", "old_string": "x"}), None),
    );
    let v = c.finished(
        "edit_file",
        "edited a.txt",
        &CallEnding {
            args: Some(json!({"path": "a.txt", "old_string": "y"})),
            ..ok(true)
        },
    );
    assert!(v.workaround.is_none());
    // Calls answered without running are neither counted nor diagnosed.
    let mut c = Corrections::new("x", Tally::default());
    for _ in 0..4 {
        let v = c.finished(
            "read_file",
            "not found: a",
            &CallEnding::answered("{\"path\": \"a\"}", ToolCallStatus::Error),
        );
        assert!(v.content.is_none());
    }
}

#[test]
fn a_call_to_an_mcp_server_that_restarts_may_be_made_again() {
    let mut c = Corrections::new("read it", Tally::default());
    let args = json!({"path": "/w/a.txt"});
    let down = "MCP server 'fs' is down: it stopped. atto starts it again on the next call \
                (in 0.5s at the earliest).";
    c.finished("mcp__fs__read_text_file", down, &failed(args.clone(), None));
    assert_eq!(c.repeated("mcp__fs__read_text_file", &args), None);
    // A failure that is the call's own is still refused when repeated.
    c.finished(
        "mcp__fs__read_text_file",
        "ENOENT: no such file",
        &failed(args.clone(), None),
    );
    assert!(c.repeated("mcp__fs__read_text_file", &args).is_some());
}
