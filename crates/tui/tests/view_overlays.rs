//! Snapshot tests of what is drawn over the transcript: the approval dialog (a WARN
//! command, long subjects, the reason and edit fields), the plan-step decision dialog, the
//! keys help and the completion menu.

// Tests assert by unwrapping; a panic is the failure report.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod screen;

use atto_protocol::Event;
use atto_tui::app::{ApprovalDialog, DialogInput};
use atto_tui::view::{ComposerView, draw};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::style::{Color, Modifier};
use screen::*;
use serde_json::json;

#[test]
fn approval_dialog_for_a_warn_command() {
    let mut app = app();
    app.on_event(&Event::ToolCallStarted {
        call_id: "c9".into(),
        name: "bash".into(),
        arguments: json!({"command": warn_request().subject}),
        kind: kind_of("bash"),
        title: String::new(),
    });
    app.on_event(&Event::ApprovalRequired(warn_request()));
    let term = terminal(&mut app, &EMPTY, 80, 24);
    let text = text_of(&term);
    insta::assert_snapshot!("approval_warn", text);
    // The whole command is there, wrapped, not cut.
    let flat: String = text.split_whitespace().collect();
    assert!(flat.contains("--prefix\"$HOME/.local\""));
    let (x, y) = find(&text, " WARN ");
    assert_eq!(term.backend().buffer()[(x + 1, y)].bg, Color::Yellow);

    app.approval.as_mut().unwrap().input = Some(DialogInput::Reason("use the package".into()));
    let text = screen(&mut app, &EMPTY, 80, 24);
    assert!(text.contains("reason for the model"));
    assert!(text.contains("use the package"));
}

#[test]
fn long_approval_subjects_scroll_and_say_so() {
    let mut app = app();
    let mut req = warn_request();
    req.subject = (1..=40)
        .map(|i| format!("echo line{i}"))
        .collect::<Vec<_>>()
        .join(" && \\\n");
    app.on_event(&Event::ApprovalRequired(req));
    let text = screen(&mut app, &EMPTY, 60, 15);
    insta::assert_snapshot!("approval_scroll", text);
    assert!(text.contains("more lines (PgDn)"));
    app.scroll(-100);
    let text = screen(&mut app, &EMPTY, 60, 15);
    assert!(text.contains("echo line40"));
}

#[test]
fn dialog_input_edit_is_shown() {
    let mut app = app();
    app.approval = Some(ApprovalDialog {
        request: warn_request(),
        input: Some(DialogInput::Edit("curl -fsSL https://example.com/x".into())),
        swarm_task: None,
    });
    let text = screen(&mut app, &EMPTY, 80, 24);
    assert!(text.contains("run instead"));
    assert!(text.contains("curl -fsSL https://example.com/x▏"));
}

#[test]
fn keys_help_overlay() {
    let mut app = app();
    app.show_keys = true;
    let text = screen(&mut app, &EMPTY, 80, 24);
    insta::assert_snapshot!("keys_help", text);
    assert!(text.contains("Esc Esc"));
}

#[test]
fn completion_menu_and_cursor() {
    let mut app = app();
    let completions = vec![
        (
            "/approve".to_owned(),
            "[N|2,4|3-5] run pending changes".to_owned(),
        ),
        ("/agents".to_owned(), "list agents".to_owned()),
    ];
    let composer = ComposerView {
        text: "/a",
        cursor: 2,
        completions: &completions,
        selected: 1,
        ..EMPTY
    };
    let mut term = Terminal::new(TestBackend::new(60, 12)).unwrap();
    term.draw(|f| draw(f, &mut app, &composer)).unwrap();
    let text = text_of(&term);
    insta::assert_snapshot!("completion_menu", text);
    let (x, y) = find(&text, "/agents");
    assert!(
        term.backend().buffer()[(x, y)]
            .modifier
            .contains(Modifier::REVERSED)
    );
    term.backend_mut().assert_cursor_position((4, 10));
}

#[test]
fn decision_dialog() {
    let mut app = app();
    plan_mid_run(&mut app);
    app.on_event(&Event::PlanDecisionRequired {
        number: 3,
        question: "Which store keeps the buckets?".into(),
        options: vec![
            "in-memory map (lost on restart)".into(),
            "redis".into(),
            "sqlite".into(),
        ],
    });
    app.decision_select(1);
    let term = terminal(&mut app, &EMPTY, 80, 24);
    let text = text_of(&term);
    insta::assert_snapshot!("decision_dialog", text);
    assert!(text.contains("Which store keeps the buckets?"));
    assert!(text.contains("1. in-memory map (lost on restart)"));
    assert!(
        text.contains(
            "↑/↓ choose · Enter confirm · 1-9 pick · Esc dismiss (type the choice instead)"
        )
    );
    let buf = term.backend().buffer();
    let (x, y) = find(&text, "2. redis");
    assert!(
        buf[(x, y)].modifier.contains(Modifier::REVERSED),
        "selected"
    );
    let (x, y) = find(&text, "3. sqlite");
    assert!(!buf[(x, y)].modifier.contains(Modifier::REVERSED));
    assert_eq!(app.decision_choice(), Some((3, "2".to_owned())));
    // Dismissed, the status line says what the next prompt does.
    app.dismiss_decision();
    let text = screen(&mut app, &EMPTY, 100, 24);
    assert!(text.contains("step 3 waits: type the choice"), "{text}");
    assert!(!text.contains("DECIDE"));
    // Many options in a short terminal: the highlight stays in view, the rest counted.
    app.on_event(&Event::PlanDecisionRequired {
        number: 3,
        question: "Which store keeps the buckets?".into(),
        options: (1..=12).map(|i| format!("store {i}")).collect(),
    });
    app.decision_pick(9);
    let text = screen(&mut app, &EMPTY, 60, 15);
    assert!(text.contains("› 9. store 9"), "{text}");
    assert!(text.contains("more"), "{text}");
    assert!(text.contains("Esc"), "{text}");
}

#[test]
fn yolo_question_says_what_yolo_gives_up() {
    let mut app = app();
    assert_eq!(app.cycle_mode(), None);
    let text = screen(&mut app, &EMPTY, 80, 24);
    insta::assert_snapshot!("yolo_question", text);
    assert!(text.contains("enter YOLO?"), "{text}");
    assert!(text.contains("without the OS sandbox"), "{text}");
    assert!(text.contains("y enter YOLO"), "{text}");
    // The badge still says BUILD: nothing changed until `y`.
    assert!(
        text.lines().last().unwrap_or("").contains("BUILD"),
        "{text}"
    );
    app.decline_yolo();
    let text = screen(&mut app, &EMPTY, 80, 24);
    assert!(!text.contains("enter YOLO?"), "{text}");
}

#[test]
fn help_wraps_with_its_columns_kept_and_nothing_drawn_over_it() {
    let mut app = app();
    app.push_help();
    assert!(
        !app.show_keys,
        "the keys go in the transcript, not a box on top"
    );
    let text = screen(&mut app, &EMPTY, 40, 120);
    insta::assert_snapshot!("help_40", text);
    for box_char in ['┌', '│', '└'] {
        assert!(!text.contains(box_char), "{text}");
    }
    let rows: Vec<&str> = text.lines().take_while(|l| !l.starts_with('─')).collect();
    // Every row of the help is indented but its two headings: wrapped text stays in its
    // column instead of falling back to the margin.
    for row in rows.iter().filter(|r| !r.is_empty()) {
        assert!(
            row.starts_with("  ") || ["commands:", "keys:"].contains(row),
            "{row:?} in\n{text}"
        );
    }
    // A key's description continues under the description, not under the key.
    let tab = rows
        .iter()
        .position(|r| r.trim_start().starts_with("Tab "))
        .unwrap();
    let column = rows[tab].find("complete").unwrap();
    let next = rows[tab + 1];
    assert_eq!(next.len() - next.trim_start().len(), column, "{text}");
}

#[test]
fn menus_leave_nothing_beside_them_and_nothing_behind_when_closed() {
    let mut app = app();
    for i in 0..30 {
        app.push_notice(&format!("{i:02} {}", "transcript text ".repeat(8)));
    }
    let completions = vec![
        ("@src/main.rs".to_owned(), "file".to_owned()),
        ("@src/lib.rs".to_owned(), "file".to_owned()),
    ];
    let open = ComposerView {
        text: "@src",
        cursor: 4,
        completions: &completions,
        selected: 0,
        ..EMPTY
    };
    let closed = ComposerView {
        text: "@src/main.rs",
        cursor: 12,
        ..EMPTY
    };
    // One terminal, drawn with the menu open and then closed, as the real one is.
    let mut term = Terminal::new(TestBackend::new(120, 24)).unwrap();
    term.draw(|f| draw(f, &mut app, &open)).unwrap();
    let text = text_of(&term);
    for row in text.lines().filter(|r| r.contains("@src/")) {
        assert!(
            !row.contains("transcript"),
            "beside the menu: {row:?}\n{text}"
        );
    }
    term.draw(|f| draw(f, &mut app, &closed)).unwrap();
    let after = text_of(&term);
    let fresh = screen(&mut app, &closed, 120, 24);
    assert_eq!(after, fresh, "stale cells after the menu closed");
    assert!(!after.contains("@src/lib.rs"), "{after}");
}

#[test]
fn the_approval_dialog_offers_edit_only_for_commands() {
    let legend = |tool: &str, subject: &str| {
        let mut app = app();
        let mut req = warn_request();
        req.tool = tool.into();
        req.kind = kind_of(tool);
        req.subject = subject.into();
        app.on_event(&Event::ApprovalRequired(req));
        let text = screen(&mut app, &EMPTY, 100, 24);
        text.lines()
            .find(|l| l.contains("y yes"))
            .unwrap_or_default()
            .to_owned()
    };
    assert!(legend("bash", "ls").contains("e edit"));
    for tool in ["write_file", "edit_file", "web_fetch"] {
        let row = legend(tool, "a.txt");
        assert!(row.contains("A always (project)"), "{tool}: {row}");
        assert!(!row.contains("e edit"), "{tool}: {row}");
    }
}

#[test]
fn rewind_picker_lists_the_prompts_then_what_goes_back() {
    use atto_protocol::{Op, PromptInfo, RewindScope};
    let mut app = app();
    let prompt = |number: u32, text: &str, checkpoint| PromptInfo {
        number,
        text: text.into(),
        checkpoint,
    };
    app.on_event(&Event::PromptList {
        prompts: vec![
            prompt(1, "add a rate limiter", Some(4)),
            prompt(2, "now test it\nwith redis", Some(9)),
            prompt(3, "explain the tests", None),
        ],
    });
    let text = text_of(&terminal(&mut app, &EMPTY, 80, 24));
    insta::assert_snapshot!("rewind_prompts", text);
    assert!(text.contains("› 3. explain the tests"), "{text}");
    assert!(text.contains("2. now test it …"), "{text}");

    app.rewind_move(-1);
    assert_eq!(
        app.rewind_enter(),
        None,
        "the first Enter chooses the prompt"
    );
    let text = text_of(&terminal(&mut app, &EMPTY, 80, 24));
    insta::assert_snapshot!("rewind_scopes", text);
    assert!(text.contains("Prompt 2: what goes back?"), "{text}");
    assert!(text.contains("Esc back to the prompts"), "{text}");

    // Esc goes back a step, then closes.
    app.rewind_back();
    assert!(app.rewind.as_ref().is_some_and(|d| d.scope.is_none()));
    assert_eq!(app.rewind_enter(), None);
    app.rewind_move(1);
    assert_eq!(
        app.rewind_enter(),
        Some(Op::Rewind {
            prompt: 2,
            scope: RewindScope::Conversation
        })
    );
    assert!(app.rewind.is_none(), "sending closes the picker");
}

#[test]
fn a_rewind_of_a_prompt_without_file_changes_says_there_are_none() {
    use atto_protocol::PromptInfo;
    let mut app = app();
    app.on_event(&Event::PromptList {
        prompts: vec![PromptInfo {
            number: 1,
            text: "explain".into(),
            checkpoint: None,
        }],
    });
    app.rewind_enter();
    let text = text_of(&terminal(&mut app, &EMPTY, 80, 24));
    assert!(
        text.contains("code only: the files go back, the conversation stays (atto changed no"),
        "{text}"
    );
    app.rewind_back();
    app.rewind_back();
    assert!(app.rewind.is_none());
}
