//! Snapshot tests of subagents on screen: their start and end in the transcript (nested
//! ones indented, a forced stop with its reason, an unknown cost said as such), the status
//! line's running count, the agents panel (below and beside the transcript, the selected
//! row marked), one child's transcript opened from it, and the approval dialog when a
//! subagent asks.

// Tests assert by unwrapping; a panic is the failure report.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod screen;

use atto_protocol::{Event, SubagentRole, SubagentTag};
use atto_tui::app::Panel;
use ratatui::style::{Color, Modifier};
use screen::*;

#[test]
fn subagents_start_and_end_in_the_transcript() {
    let mut app = app();
    subagents_at_work(&mut app);
    let text = screen(&mut app, &EMPTY, 120, 30);
    insta::assert_snapshot!("subagent_transcript_lines", text);
    assert!(
        text.contains(
            "◇ subagent 1a2b3c4d (explore) started · 50.0k tokens · find the request handlers"
        ),
        "{text}"
    );
    assert!(
        text.contains("◇ subagent aa11bb22 (implement) started · 80.0k tokens · add the rate limiter · may change src/limit.rs"),
        "{text}"
    );
    // The nested reviewer is indented under the session's own children.
    assert!(
        text.contains("\n  ◇ subagent 5e6f7a8b (review) started"),
        "{text}"
    );
    assert!(
        text.contains(
            "◆ subagent 1a2b3c4d (explore) completed · 4.2k of 50.0k tokens · $0.0123 · 3.4 s"
        ),
        "{text}"
    );
    // A price nobody reported is unknown, never $0.
    assert!(
        text.contains(
            "◆ subagent c0ffee99 (verify) stopped · 19.0k of 20.0k tokens · cost unknown · 300.0 s"
        ),
        "{text}"
    );
    assert!(!text.contains("$0.0000"), "{text}");
    assert!(
        text.contains("  stopped by atto: it reached its time limit (300 s)"),
        "{text}"
    );
    let status = text.lines().last().unwrap();
    assert!(status.contains("1 subagent running"), "{status}");
}

#[test]
fn the_status_line_counts_running_subagents_and_drops_the_count_when_none_run() {
    let mut app = app();
    let status = |app: &mut atto_tui::app::App| {
        screen(app, &EMPTY, 120, 6)
            .lines()
            .last()
            .unwrap()
            .to_owned()
    };
    assert!(!status(&mut app).contains("subagent"));
    for id in ["a-00000001", "b-00000002"] {
        app.on_event(&Event::SubagentStarted {
            agent: subagent(id, None, SubagentRole::Explore, "look", 1_000),
            files: vec![],
        });
    }
    let row = status(&mut app);
    insta::assert_snapshot!("subagents_status_line", row);
    assert!(row.contains("2 subagents running"), "{row}");
    app.on_event(&Event::SubagentFinished {
        agent: atto_protocol::SubagentInfo {
            status: "completed".into(),
            ..subagent("a-00000001", None, SubagentRole::Explore, "look", 1_000)
        },
        forced_stop: None,
        files_modified: vec![],
        report: "done".into(),
        quality: None,
    });
    assert!(status(&mut app).contains("1 subagent running"));
    app.on_event(&Event::SubagentFinished {
        agent: atto_protocol::SubagentInfo {
            status: "failed".into(),
            ..subagent("b-00000002", None, SubagentRole::Explore, "look", 1_000)
        },
        forced_stop: Some("it failed: model error".into()),
        files_modified: vec![],
        report: "failed".into(),
        quality: None,
    });
    assert!(!status(&mut app).contains("subagent"));
}

#[test]
fn the_agents_panel_lists_the_tree_and_marks_the_selection() {
    let mut app = app();
    subagents_at_work(&mut app);
    app.panel = Some(Panel::Agents);
    app.select_agent(1);
    let term = terminal(&mut app, &EMPTY, 100, 30);
    let text = text_of(&term);
    insta::assert_snapshot!("agents_panel", text);
    assert!(text.contains("4 subagents · 1 running"), "{text}");
    let rows: Vec<&str> = text
        .lines()
        .filter(|l| l.contains(" tok · "))
        .map(|l| l.trim_start_matches('│'))
        .collect();
    // The tree: the reviewer right below its parent, indented; then the later children.
    assert_eq!(rows.len(), 4, "{text}");
    assert!(
        rows[0].starts_with("  1a2b3c4d explore   completed"),
        "{rows:?}"
    );
    assert!(
        rows[1].starts_with("›   5e6f7a8b review    completed"),
        "{rows:?}"
    );
    assert!(
        rows[2].starts_with("  aa11bb22 implement running"),
        "{rows:?}"
    );
    assert!(
        rows[3].starts_with("  c0ffee99 verify    stopped"),
        "{rows:?}"
    );
    assert!(rows[0].contains("4.2k/50.0k tok · 3.4 s · $0.0123 · find the request handlers"));
    assert!(rows[2].contains("12.5k/80.0k tok · 9.8 s · cost unknown · add the rate limiter"));
    let buf = term.backend().buffer();
    let (x, y) = find(&text, "5e6f7a8b review");
    assert!(
        buf[(x, y)].modifier.contains(Modifier::REVERSED),
        "selected"
    );
    let (x, y) = find(&text, "aa11bb22 implement");
    assert!(!buf[(x, y)].modifier.contains(Modifier::REVERSED));
    let (x, y) = find(&text, "implement running");
    assert_eq!(buf[(x + 10, y)].fg, Color::Cyan, "running is coloured");
    let (x, y) = find(&text, "verify    stopped");
    assert_eq!(buf[(x + 10, y)].fg, Color::Yellow, "stopped is coloured");
    // Beside the transcript on a wide terminal, rows wrap under their id.
    let wide = screen(&mut app, &EMPTY, 130, 30);
    insta::assert_snapshot!("agents_panel_side", wide);
    // The selection stops at both ends.
    app.select_agent(10);
    assert_eq!(app.agent_selected(), 3);
    app.select_agent(-10);
    assert_eq!(app.agent_selected(), 0);
}

#[test]
fn the_agents_panel_keeps_the_selected_row_in_view() {
    let mut app = app();
    for i in 0..30 {
        app.on_event(&Event::SubagentStarted {
            agent: subagent(
                &format!("0190-{i:08}"),
                None,
                SubagentRole::Explore,
                &format!("task number {i}"),
                1_000,
            ),
            files: vec![],
        });
    }
    app.panel = Some(Panel::Agents);
    app.select_agent(25);
    let text = screen(&mut app, &EMPTY, 80, 24);
    assert!(text.contains("› 00000025 explore"), "{text}");
    assert!(text.contains("lines above"), "{text}");
    app.select_agent(-25);
    let text = screen(&mut app, &EMPTY, 80, 24);
    assert!(text.contains("› 00000000 explore"), "{text}");
    assert!(!text.contains("lines above"), "{text}");
}

#[test]
fn enter_opens_a_subagents_transcript_and_esc_goes_back_to_the_list() {
    let mut app = app();
    subagents_at_work(&mut app);
    app.panel = Some(Panel::Agents);
    assert!(app.open_agent());
    assert_eq!(app.panel, Some(Panel::Agent));
    let text = screen(&mut app, &EMPTY, 100, 40);
    insta::assert_snapshot!("agent_transcript", text);
    assert!(
        text.contains("subagent 1a2b3c4d · explore · completed"),
        "{text}"
    );
    assert!(text.contains("• grep fn handle_"), "{text}");
    assert!(text.contains("• read_file src/server.rs"), "{text}");
    assert!(text.contains("handle_get"), "the report: {text}");
    assert!(text.contains("more lines (PgDn"), "{text}");
    app.scroll(-100);
    let text = screen(&mut app, &EMPTY, 100, 40);
    assert!(text.contains("Confidence: 0.8"), "{text}");
    assert!(text.contains("Esc back to the list"), "{text}");
    app.close_overlay();
    assert_eq!(app.panel, Some(Panel::Agents));
    app.close_overlay();
    assert_eq!(app.panel, None);

    // A child still running has no report yet, and says so; one atto stopped says why.
    app.panel = Some(Panel::Agents);
    app.select_agent(2);
    app.open_agent();
    let text = screen(&mut app, &EMPTY, 100, 40);
    assert!(
        text.contains("subagent aa11bb22 · implement · running"),
        "{text}"
    );
    assert!(text.contains("may change: src/limit.rs"), "{text}");
    assert!(
        text.contains("still running: its closure report comes when it ends"),
        "{text}"
    );
    app.close_overlay();
    app.select_agent(1);
    app.open_agent();
    let text = screen(&mut app, &EMPTY, 100, 40);
    assert!(
        text.contains("stopped by atto: it reached its time limit (300 s)"),
        "{text}"
    );
    assert!(text.contains("none reported"), "{text}");
    // The nested one names its parent.
    app.close_overlay();
    app.select_agent(-2);
    app.open_agent();
    let text = screen(&mut app, &EMPTY, 100, 40);
    assert!(text.contains("depth 2 · child of 1a2b3c4d"), "{text}");
}

#[test]
fn an_empty_agents_panel_says_how_to_start_one() {
    let mut app = app();
    app.panel = Some(Panel::Agents);
    assert!(!app.open_agent());
    let text = screen(&mut app, &EMPTY, 80, 24);
    assert!(text.contains("no subagents in this session"), "{text}");
    assert_eq!(app.panel, Some(Panel::Agents));
}

#[test]
fn the_agents_answer_fills_the_panel_with_children_no_event_announced() {
    let mut app = app();
    let mut done = subagent(EXPLORER, None, SubagentRole::Explore, "find it", 5_000);
    done.status = "completed".into();
    done.tokens_used = 2_000;
    app.on_event(&Event::SubagentList { agents: vec![done] });
    app.panel = Some(Panel::Agents);
    let text = screen(&mut app, &EMPTY, 80, 24);
    assert!(
        text.contains("1a2b3c4d explore   completed · 2.0k/5.0k tok"),
        "{text}"
    );
    assert!(text.contains("1 subagent · 0 running"), "{text}");
}

#[test]
fn the_approval_dialog_names_the_subagent_that_asks() {
    let mut app = app();
    subagents_at_work(&mut app);
    let mut req = warn_request();
    req.id = "aa11bb22/a1".into();
    req.subject = "pytest -q".into();
    req.reasons = vec!["pytest runs the project's tests (project code)".into()];
    req.suggested_rule = "bash(pytest*)".into();
    req.subagent = Some(SubagentTag {
        id: WRITER.into(),
        role: SubagentRole::Implement,
        task: "add the rate limiter".into(),
    });
    app.on_event(&Event::ApprovalRequired(req));
    let term = terminal(&mut app, &EMPTY, 80, 24);
    let text = text_of(&term);
    insta::assert_snapshot!("approval_from_subagent", text);
    assert!(
        text.contains("subagent aa11bb22 (implement: add the rate limiter) asks"),
        "{text}"
    );
    assert!(
        text.contains("approve bash for subagent aa11bb22?"),
        "{text}"
    );
    let (x, y) = find(&text, "subagent aa11bb22 (implement:");
    assert_eq!(term.backend().buffer()[(x, y)].fg, Color::Yellow);
    // The session's own calls name no subagent.
    let mut own = screen::app();
    own.on_event(&Event::ApprovalRequired(warn_request()));
    let text = screen(&mut own, &EMPTY, 80, 24);
    assert!(!text.contains("subagent"), "{text}");
    // Scrolled to the end of a long command, the asker stays on screen.
    let mut long = warn_request();
    long.subject = (1..=40)
        .map(|i| format!("echo line{i}"))
        .collect::<Vec<_>>()
        .join(" && \\\n");
    long.subagent = Some(SubagentTag {
        id: WRITER.into(),
        role: SubagentRole::Implement,
        task: "add the rate limiter".into(),
    });
    app.on_event(&Event::ApprovalRequired(long));
    app.scroll(-100);
    let text = screen(&mut app, &EMPTY, 60, 15);
    assert!(text.contains("lines above (PgUp)"), "{text}");
    assert!(text.contains("subagent aa11bb22 (implement"), "{text}");
}

#[test]
fn a_subagents_question_closes_when_it_ends() {
    let mut app = app();
    subagents_at_work(&mut app);
    let mut req = warn_request();
    req.subagent = Some(SubagentTag {
        id: WRITER.into(),
        role: SubagentRole::Implement,
        task: "add the rate limiter".into(),
    });
    app.on_event(&Event::ApprovalRequired(req));
    assert!(app.approval.is_some());
    // Another child ending leaves it open.
    app.on_event(&Event::SubagentFinished {
        agent: subagent(
            VERIFIER,
            None,
            SubagentRole::Verify,
            "run the test suite",
            20_000,
        ),
        forced_stop: None,
        files_modified: vec![],
        report: String::new(),
        quality: None,
    });
    assert!(app.approval.is_some());
    app.on_event(&Event::SubagentFinished {
        agent: atto_protocol::SubagentInfo {
            status: "stopped".into(),
            ..subagent(
                WRITER,
                None,
                SubagentRole::Implement,
                "add the rate limiter",
                80_000,
            )
        },
        forced_stop: Some("its time limit".into()),
        files_modified: vec![],
        report: String::new(),
        quality: None,
    });
    assert!(app.approval.is_none());
}
