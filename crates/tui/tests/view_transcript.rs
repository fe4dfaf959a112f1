//! Snapshot tests of the transcript (ratatui `TestBackend` + insta): a streamed Markdown
//! answer, tool cards and diffs, hostile tool output, the structured planner's entries
//! (plan block, revision diff, step progress, summary) and the "↓ N new lines" marker.

// Tests assert by unwrapping; a panic is the failure report.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod screen;

use atto_protocol::{AgentMode, Event, TurnStatus};
use ratatui::style::Color;
use screen::*;
use serde_json::json;

const ANSWER: &str = "## Fix\n\nThe bug is in `parse`: it **drops** the last line.\n\n\
- read the file\n- split on `\\n`\n  1. keep the tail\n\n> note: tests cover it\n\n\
```rust\nfn parse(s: &str) -> Vec<&str> {\n    s.lines().collect() // keeps tail\n}\n```\n\nDone.";

#[test]
fn streamed_markdown_answer() {
    let mut app = app();
    app.push_user("why does parse lose lines?");
    app.on_event(&Event::TurnStarted {
        turn: 1,
        mode: AgentMode::Build,
        complexity: None,
        model: None,
        route: None,
    });
    app.on_event(&Event::ThinkingDelta {
        text: "Look at parse.\nIt splits.".into(),
    });
    // Mid-stream frame: the open code fence renders as code already.
    stream(&mut app, &ANSWER[..ANSWER.find("collect").unwrap()]);
    insta::assert_snapshot!("streaming_mid_answer", screen(&mut app, &EMPTY, 80, 24));
    stream(&mut app, &ANSWER[ANSWER.find("collect").unwrap()..]);
    app.on_event(&Event::TurnCompleted {
        turn: 1,
        result: result(TurnStatus::Completed),
    });
    let term = terminal(&mut app, &EMPTY, 80, 30);
    insta::assert_snapshot!("streamed_answer", text_of(&term));
    // The code block's keyword is coloured.
    let buf = term.backend().buffer();
    let (x, y) = find(&text_of(&term), "fn parse");
    assert_eq!(buf[(x, y)].fg, Color::Magenta);
}

#[test]
fn tool_card_folds_long_output() {
    let mut app = app();
    let out: String = (1..=9).map(|i| format!("test t{i} ... ok\n")).collect();
    tool(
        &mut app,
        "c1",
        "bash",
        json!({"command": "cargo test -q"}),
        &out,
    );
    app.on_event(&Event::ToolCallStarted {
        call_id: "c2".into(),
        name: "read_file".into(),
        arguments: json!({"path": "src/lib.rs"}),
        kind: Default::default(),
        title: String::new(),
    });
    let folded = screen(&mut app, &EMPTY, 80, 24);
    insta::assert_snapshot!("tool_card", folded);
    assert!(folded.contains("… 5 more lines (Ctrl-O)"));
    assert!(folded.contains("● read_file src/lib.rs · running…"));
    app.toggle_fold();
    let open = screen(&mut app, &EMPTY, 80, 24);
    assert!(open.contains("test t9 ... ok"));
    assert!(!open.contains("more lines"));
}

#[test]
fn edits_show_as_coloured_diffs() {
    let mut app = app();
    tool(
        &mut app,
        "e1",
        "edit_file",
        json!({"path": "src/parse.rs", "old_string": "fn parse() {\n    old();\n}\n",
               "new_string": "fn parse() {\n    new();\n}\n"}),
        "edited src/parse.rs",
    );
    tool(
        &mut app,
        "w1",
        "write_file",
        json!({"path": "notes.md", "content": "# Notes\nfirst\n"}),
        "wrote notes.md",
    );
    let term = terminal(&mut app, &EMPTY, 80, 24);
    let text = text_of(&term);
    insta::assert_snapshot!("diff", text);
    let buf = term.backend().buffer();
    let (x, y) = find(&text, "-    old();");
    assert_eq!(buf[(x, y)].fg, Color::Red);
    let (x, y) = find(&text, "+    new();");
    assert_eq!(buf[(x, y)].fg, Color::Green);
}

#[test]
fn hostile_tool_output_is_sanitized() {
    let mut app = app();
    tool(
        &mut app,
        "x1",
        "bash",
        json!({"command": "cat bin.dat"}),
        "\u{1b}[2J\u{1b}[H\u{1b}[31mred\u{1b}[0m\tcol\r\nbad \u{fffd}\u{fffd} bytes\u{7}\n\u{1b}]0;pwned\u{7}end",
    );
    let term = terminal(&mut app, &EMPTY, 60, 12);
    let text = text_of(&term);
    insta::assert_snapshot!("hostile_output", text);
    assert!(text.contains("│ red    col"));
    assert!(text.contains("bad \u{fffd}\u{fffd} bytes"));
    assert!(!text.contains('\u{1b}') && !text.contains("pwned"));
}

#[test]
fn task_plan_block() {
    let mut app = app();
    app.push_user("/auto rate-limit the API");
    app.on_event(&Event::PlanGenerated {
        plan: task_plan(),
        attempts: 2,
    });
    let term = terminal(&mut app, &EMPTY, 80, 30);
    let text = text_of(&term);
    insta::assert_snapshot!("task_plan_block", text);
    assert!(text.contains("◆ Task Plan Generated · after 2 model requests"));
    assert!(text.contains("src/limit.rs, src/server.rs"));
    assert!(text.contains("? Which store keeps the buckets?"));
    assert!(text.contains("plan awaiting approval"), "status line");
    let buf = term.backend().buffer();
    let (x, y) = find(&text, " MEDIUM ");
    assert_eq!(buf[(x + 1, y)].bg, Color::Yellow, "risk is coloured");
    let (x, y) = find(&text, "after 1 · complexity");
    assert_eq!(buf[(x, y)].fg, Color::Yellow, "dependencies stand out");
}

#[test]
fn plan_revision_diff() {
    let mut app = app();
    let before = task_plan();
    let mut after = task_plan();
    after.steps.remove(4);
    after.steps[3].description = "Test bursts, refill and the 429 answer".into();
    app.on_event(&Event::PlanGenerated {
        plan: before.clone(),
        attempts: 1,
    });
    app.on_event(&Event::PlanRevised {
        plan: after.clone(),
        request: "drop the docs step; test the 429 answer too".into(),
        source: atto_protocol::RevisionSource::Model,
        diff: atto_planner::plan::diff(&before, &after),
    });
    let term = terminal(&mut app, &EMPTY, 100, 16);
    let text = text_of(&term);
    insta::assert_snapshot!("plan_revision", text);
    assert!(text.contains("✎ plan revised by the model: drop the docs step"));
    let buf = term.backend().buffer();
    let (x, y) = find(&text, "+4. [TEST] Test bursts, refill");
    assert_eq!(buf[(x, y)].fg, Color::Green);
    let (x, y) = find(&text, "-5. [DOCUMENT]");
    assert_eq!(buf[(x, y)].fg, Color::Red);
}

#[test]
fn plan_steps_progress_and_summary() {
    use atto_protocol::{StepOutcome, StepStatus, TaskPlanStatus};
    let mut app = app();
    plan_mid_run(&mut app);
    app.on_event(&usage(30_000));
    app.on_event(&Event::PlanStepFailed {
        number: 3,
        error: "the router tests fail:\nexpected 429, got 200\nat tests/limit.rs:12\nand more\nand more"
            .into(),
        rolled_back: false,
        quality: None,
    });
    for n in [4, 5] {
        app.on_event(&Event::PlanStepSkipped {
            number: n,
            reason: "it depends on step 3, which failed".into(),
        });
    }
    let outcome = |n: u32, what: &str, status, result: &str| StepOutcome {
        number: n,
        description: what.into(),
        status,
        result: Some(result.into()),
    };
    app.on_event(&Event::PlanSummary {
        plan_id: "plan-7".into(),
        status: TaskPlanStatus::Failed,
        outcomes: vec![
            outcome(
                1,
                "Read the request handlers and the config loader",
                StepStatus::Completed,
                "step 1 done",
            ),
            outcome(
                2,
                "Choose where the limiter sits",
                StepStatus::Completed,
                "step 2 done",
            ),
            outcome(
                3,
                "Add a token-bucket limiter to the router",
                StepStatus::Failed,
                "the router tests fail:",
            ),
            outcome(
                4,
                "Test bursts and refill",
                StepStatus::Skipped,
                "it depends on step 3, which failed",
            ),
            outcome(
                5,
                "Document the new settings",
                StepStatus::Skipped,
                "it depends on step 3, which failed",
            ),
        ],
    });
    let term = terminal(&mut app, &EMPTY, 80, 34);
    let text = text_of(&term);
    insta::assert_snapshot!("plan_run", text);
    assert!(text.contains("✓ step 2/5 Choose where the limiter sits · done · 900/3.0k tokens"));
    assert!(
        text.contains("✗ step 3/5 Add a token-bucket limiter to the router · failed · 30.0k/12.0k")
    );
    assert!(text.contains("… 2 more lines (Ctrl-O)"));
    assert!(text.contains("■ plan failed · 2 done · 1 failed · 2 skipped"));
    let buf = term.backend().buffer();
    let (x, y) = find(&text, "✗ step 3/5");
    assert_eq!(buf[(x, y)].fg, Color::Red);
    let (x, y) = find(&text, "30.0k/12.0k");
    assert_eq!(buf[(x, y)].fg, Color::Yellow, "over its budget");
    app.toggle_fold();
    assert!(screen(&mut app, &EMPTY, 80, 34).contains("│ and more"));
}

#[test]
fn new_output_below_a_scrolled_view_shows_a_marker() {
    let mut app = busy_app();
    for i in 0..20 {
        app.push_notice(&format!("note {i}"));
    }
    app.scroll(6);
    let before = screen(&mut app, &EMPTY, 80, 24);
    let top = before.lines().next().unwrap().to_owned();
    assert!(!before.contains("new line"), "{before}");
    stream(&mut app, "More output arrives\n\nwhile the user reads.");
    app.on_event(&Event::TurnCompleted {
        turn: 1,
        result: result(TurnStatus::Completed),
    });
    let after = screen(&mut app, &EMPTY, 80, 24);
    insta::assert_snapshot!("new_lines_marker", after);
    assert_eq!(after.lines().next().unwrap(), top, "the view did not move");
    assert_eq!(app.new_lines(), 6);
    assert!(after.contains("↓ 6 new lines · Ctrl-End follows"));
    app.scroll_to_bottom();
    let bottom = screen(&mut app, &EMPTY, 80, 24);
    assert!(bottom.contains("while the user reads."));
    assert!(!bottom.contains("new lines"));
}
