//! Snapshot tests of the whole screen: panels (pending plan, thread tree, task plan steps,
//! scrolling), the status line per mode and with a plan running, layouts at 80×24, 60×15
//! and 20×5, NO_COLOR, and a huge paste.

// Tests assert by unwrapping; a panic is the failure report.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod screen;

use atto_protocol::{
    AgentMode, ChangeStatus, Event, PendingPlan, PermissionMode, PlanStatus, ProposedChange,
    ThreadInfo, ToolCallStatus, Usage,
};
use atto_tui::app::{App, Panel, SandboxState};
use atto_tui::view::{ComposerView, Theme};
use ratatui::style::{Color, Modifier};
use screen::*;
use serde_json::json;

fn change(order: u32, tool: &str, path: &str, status: ChangeStatus) -> ProposedChange {
    ProposedChange {
        id: format!("ch{order}"),
        tool: tool.into(),
        args: json!({"path": path}),
        reason: format!("step {order}"),
        order,
        proposed_at: 0,
        tool_call_id: format!("t{order}"),
        path: Some(path.into()),
        base_hash: None,
        status,
        result: None,
    }
}

fn plan_event() -> Event {
    Event::Plan {
        plan: Some(PendingPlan {
            id: "0123456789abcdef".into(),
            task: "add a greeting".into(),
            created_at: 0,
            updated_at: 0,
            proposed_changes: vec![
                change(1, "write_file", "hello.py", ChangeStatus::Pending),
                change(2, "edit_file", "main.py", ChangeStatus::Pending),
            ],
            exploration_summary: String::new(),
            status: PlanStatus::Pending,
            session_id: "s".into(),
        }),
        previews: vec![
            "--- /dev/null\n+++ b/hello.py\n@@ -0,0 +1,2 @@\n+def hello():\n+    print(\"hi\")"
                .into(),
            "--- a/main.py\n+++ b/main.py\n@@ -1,2 +1,2 @@\n-import os\n+import hello\n main()"
                .into(),
        ],
    }
}

#[test]
fn pending_plan_panel() {
    let mut app = app();
    app.on_event(&plan_event());
    app.panel = Some(Panel::Plan);
    let text = screen(&mut app, &EMPTY, 80, 40);
    insta::assert_snapshot!("plan_panel", text);
    assert!(text.contains("/approve N · /reject N"));
    assert!(text.contains("plan: 2 pending"));
    let wide = screen(&mut app, &EMPTY, 130, 30);
    insta::assert_snapshot!("plan_panel_side", wide);
}

#[test]
fn thread_tree_panel() {
    let t = |id: &str, parent: Option<&str>, label: Option<&str>, current| ThreadInfo {
        id: id.into(),
        parent: parent.map(Into::into),
        label: label.map(Into::into),
        messages: 4,
        current,
    };
    let mut app = app();
    app.on_event(&Event::ThreadList {
        threads: vec![
            t("main", None, None, false),
            t(
                "fork-a1b2c3d4",
                Some("main"),
                Some("Try React approach"),
                false,
            ),
            t(
                "fork-e5f6g7h8",
                Some("fork-a1b2c3d4"),
                Some("With TypeScript"),
                true,
            ),
            t(
                "fork-i9j0k1l2",
                Some("main"),
                Some("Try Vue approach"),
                false,
            ),
        ],
    });
    app.panel = Some(Panel::Threads);
    let text = screen(&mut app, &EMPTY, 80, 24);
    insta::assert_snapshot!("thread_tree", text);
    assert!(text.contains("│   └── fork-e5f6g7h8 \"With TypeScript\" (4 messages) ← current"));
}

fn status_row(app: &mut App, w: u16) -> (String, Color, Modifier) {
    let term = terminal(app, &EMPTY, w, 6);
    let text = text_of(&term);
    let row = text.lines().last().unwrap().to_owned();
    let cell = &term.backend().buffer()[(1, 5)];
    (row, cell.bg, cell.modifier)
}

#[test]
fn status_line_in_each_mode() {
    let modes = [
        (
            "build",
            AgentMode::Build,
            PermissionMode::Interactive,
            Color::Green,
        ),
        (
            "plan",
            AgentMode::Plan,
            PermissionMode::Interactive,
            Color::Blue,
        ),
        (
            "review",
            AgentMode::Review,
            PermissionMode::Strict,
            Color::Magenta,
        ),
        (
            "debug",
            AgentMode::Debug,
            PermissionMode::AutoSafe,
            Color::Yellow,
        ),
        ("yolo", AgentMode::Build, PermissionMode::Yolo, Color::Red),
    ];
    let mut rows = String::new();
    for (name, mode, permission, color) in modes {
        let mut app = app();
        app.on_event(&Event::ModeChanged { mode, permission });
        app.on_event(&Event::Usage {
            model: "test-model".into(),
            usage: Usage {
                input_tokens: 12_000,
                output_tokens: 800,
                cache_read_tokens: 500,
                cache_write_tokens: 0,
            },
            cost_usd: Some(0.042),
        });
        app.set_effort(Some("high".into()));
        let (row, bg, _) = status_row(&mut app, 120);
        assert_eq!(bg, color, "{name}");
        assert!(row.contains(&name.to_uppercase()), "{row}");
        rows.push_str(&format!("{name:>6}: {row}\n"));
    }
    insta::assert_snapshot!("status_modes", rows);
}

#[test]
fn status_line_shows_context_use_against_the_window() {
    let mut app = app();
    app.on_event(&Event::Usage {
        model: "gpt-4o".into(),
        usage: Usage {
            input_tokens: 12_000,
            output_tokens: 800,
            cache_read_tokens: 500,
            cache_write_tokens: 0,
        },
        cost_usd: Some(0.042),
    });
    let (row, _, _) = status_row(&mut app, 120);
    assert!(row.contains("ctx 12.5k ·"), "unknown window: {row}");
    app.on_event(&Event::ContextReport {
        context: atto_protocol::ContextUse {
            model: "gpt-4o".into(),
            window: Some(128_000),
            used_tokens: 12_600,
            system_tokens: 700,
            tools_tokens: 2_100,
            history_tokens: 9_800,
            messages: 9,
            compact_at: Some(102_400),
            last_input_tokens: Some(12_500),
        },
        asked: false,
    });
    let (row, _, _) = status_row(&mut app, 120);
    assert!(row.contains("ctx 12.5k/128.0k 10%"), "{row}");
}

#[test]
fn layouts_80x24_and_60x15() {
    let queued = vec!["then run the tests".to_owned(), "and commit".to_owned()];
    let composer = ComposerView {
        text: "also add a docstring\nplease",
        cursor: 5,
        queued: &queued,
        ..EMPTY
    };
    let mut app = busy_app();
    let big = screen(&mut app, &composer, 80, 24);
    insta::assert_snapshot!("layout_80x24", big);
    let small = screen(&mut app, &composer, 60, 15);
    insta::assert_snapshot!("layout_60x15", small);
    for text in [&big, &small] {
        assert!(text.contains("› also add a docstring"), "composer visible");
        assert!(text.contains("PLAN"), "status visible");
        assert!(
            text.contains("Now I will propose the change."),
            "transcript visible"
        );
    }
}

#[test]
fn tiny_terminal_still_shows_the_essentials() {
    let mut app = busy_app();
    let composer = ComposerView {
        text: "hi",
        cursor: 2,
        ..EMPTY
    };
    let text = screen(&mut app, &composer, 20, 5);
    insta::assert_snapshot!("tiny_20x5", text);
    let rows: Vec<&str> = text.lines().collect();
    assert!(rows[4].starts_with(" PLAN "), "{text}");
    assert!(rows[3].starts_with("› hi"), "{text}");
    // With a dialog and a panel open too.
    app.on_event(&Event::ApprovalRequired(warn_request()));
    app.panel = Some(Panel::Plan);
    let text = screen(&mut app, &composer, 20, 5);
    assert!(text.contains("WARN"), "{text}");
    // A plan decision instead: still asked.
    app.approval = None;
    plan_mid_run(&mut app);
    app.on_event(&Event::PlanDecisionRequired {
        number: 3,
        question: "Which store?".into(),
        options: vec!["redis".into(), "sqlite".into()],
    });
    let text = screen(&mut app, &composer, 20, 5);
    assert!(text.contains("DECIDE"), "{text}");
    // Smaller than anything sensible: one line saying so.
    assert_eq!(screen(&mut app, &composer, 6, 1).trim(), "termi…");
}

#[test]
fn no_color_uses_modifiers_only() {
    let mut app = busy_app();
    app.set_theme(Theme::plain());
    app.on_event(&Event::ModeChanged {
        mode: AgentMode::Plan,
        permission: PermissionMode::Interactive,
    });
    tool(
        &mut app,
        "e1",
        "edit_file",
        json!({"path": "a.py", "old_string": "a\n", "new_string": "b\n"}),
        "",
    );
    app.on_event(&Event::ApprovalRequired(warn_request()));
    let term = terminal(&mut app, &EMPTY, 80, 24);
    insta::assert_snapshot!("no_color", text_of(&term));
    let buf = term.backend().buffer();
    for cell in buf.content() {
        assert_eq!(cell.fg, Color::Reset, "fg colour on {:?}", cell.symbol());
        assert_eq!(cell.bg, Color::Reset, "bg colour on {:?}", cell.symbol());
    }
    let status = &buf[(1, 23)];
    assert!(status.modifier.contains(Modifier::REVERSED));
}

#[test]
fn a_large_paste_draws_a_window_around_the_cursor() {
    let mut app = app();
    let paste = "x".repeat(1 << 20);
    let composer = ComposerView {
        text: &paste,
        cursor: paste.len(),
        ..EMPTY
    };
    let started = std::time::Instant::now();
    let text = screen(&mut app, &composer, 80, 24);
    assert!(started.elapsed() < std::time::Duration::from_secs(2));
    let rows: Vec<&str> = text.lines().collect();
    // Capped at a third of the screen, ending at the cursor's row.
    assert!(rows[15].starts_with("… xxx"), "{text}");
    assert!(rows[22].starts_with("  xxxx"), "{text}");
}

#[test]
fn tasks_panel_mid_run() {
    let mut app = app();
    plan_mid_run(&mut app);
    app.on_event(&Event::PlanStepSkipped {
        number: 5,
        reason: "skipped by the user".into(),
    });
    app.on_event(&Event::Goals {
        goals: vec![atto_protocol::Goal {
            id: "g1".into(),
            objective: "ship rate limiting".into(),
            status: atto_protocol::GoalStatus::Active,
            token_budget: Some(200_000),
            tokens_used: 3_300,
            time_used_ms: 95_000,
            created_at: 0,
            updated_at: 0,
        }],
        current: Some("g1".into()),
    });
    app.panel = Some(Panel::Tasks);
    let term = terminal(&mut app, &EMPTY, 80, 30);
    let text = text_of(&term);
    insta::assert_snapshot!("tasks_panel", text);
    assert!(text.contains("task plan 3/4 · running"));
    assert!(text.contains("▶  3. running  Add a token-bucket limiter to the router (after 2)"));
    assert!(text.contains("[active] ship rate limiting"));
    assert!(text.contains("plan 3/4"), "status line");
    let buf = term.backend().buffer();
    for (needle, color) in [
        ("✓  1. done", Color::Green),
        ("▶  3. running", Color::Cyan),
        ("○  4. pending", Color::Reset),
    ] {
        let (x, y) = find(&text, needle);
        assert_eq!(buf[(x, y)].fg, color, "{needle}");
    }
    let (x, y) = find(&text, "–  5. skipped");
    assert!(buf[(x, y)].modifier.contains(Modifier::DIM));
}

#[test]
fn a_long_panel_scrolls() {
    let mut app = app();
    let checkpoints = (1..=40)
        .map(|i| atto_protocol::CheckpointInfo {
            id: i,
            turn: i,
            tool: Some("edit_file".into()),
            note: format!("before edit {i}"),
            created_at: 0,
            files_changed: vec![format!("src/f{i}.rs")],
            other_session: None,
        })
        .collect();
    app.on_event(&Event::CheckpointList { checkpoints });
    app.panel = Some(Panel::Checkpoints);
    let top = screen(&mut app, &EMPTY, 80, 24);
    assert!(
        top.contains("… 30 more lines (PgDn / wheel scrolls)"),
        "{top}"
    );
    app.scroll(-10);
    let text = screen(&mut app, &EMPTY, 80, 24);
    insta::assert_snapshot!("panel_scrolled", text);
    assert!(text.contains("↑ 10 lines above (PgUp)"));
    assert!(text.contains("  11  turn 11"));
    // Past the end it stops at the last line.
    app.scroll(-1000);
    let end = screen(&mut app, &EMPTY, 80, 24);
    assert!(end.contains("/restore N brings the files back"), "{end}");
    assert!(!end.contains("more lines"), "{end}");
    app.scroll(1000);
    assert_eq!(app.panel_scroll(), 0);
}

fn unpriced_call(app: &mut App) {
    app.on_event(&Event::Usage {
        model: "test-model".into(),
        usage: Usage {
            input_tokens: 12_000,
            output_tokens: 800,
            cache_read_tokens: 0,
            cache_write_tokens: 0,
        },
        cost_usd: None,
    });
}

fn bash_finished(app: &mut App, sandboxed: Option<bool>) {
    app.on_event(&Event::ToolCallFinished {
        call_id: "b1".into(),
        name: "bash".into(),
        status: ToolCallStatus::Ok,
        duration_ms: 5,
        summary: "exit code: 0\n(no output)".into(),
        sandboxed,
        exit_code: Some(0),
    });
}

#[test]
fn narrow_status_line_keeps_permission_and_sandbox_and_says_cost_plainly() {
    let mut rows = String::new();
    let mut row = |name: &str, app: &mut App, w: u16| {
        let (row, _, _) = status_row(app, w);
        rows.push_str(&format!("{name:>9}: {row}\n"));
        row
    };
    // A busy session at 40 columns: until the session says, the sandbox is "?".
    let mut app = app();
    app.on_event(&Event::TurnStarted {
        turn: 1,
        mode: AgentMode::Build,
        complexity: None,
        model: None,
        route: None,
    });
    unpriced_call(&mut app);
    app.set_effort(Some("high".into()));
    let line = row("unknown", &mut app, 40);
    assert!(line.contains("interactive"), "{line}");
    assert!(line.contains("sandbox ?"), "{line}");
    let wide = row("wide", &mut app, 120);
    assert!(wide.contains("cost ?"), "{wide}");
    assert!(!wide.contains("$?"), "{wide}");
    // A command that ran sandboxed proves it; one that did not, before that, disproves it.
    bash_finished(&mut app, Some(true));
    assert!(row("ran boxed", &mut app, 40).contains("sandbox on"));
    let mut unboxed = self::app();
    bash_finished(&mut unboxed, Some(false));
    assert!(row("ran bare", &mut unboxed, 40).contains("sandbox off"));
    // YOLO runs commands bare whatever else is known.
    app.on_event(&Event::ModeChanged {
        mode: AgentMode::Build,
        permission: PermissionMode::Yolo,
    });
    let line = row("yolo", &mut app, 40);
    assert!(line.contains("yolo · sandbox off"), "{line}");
    // The session's own report, with its reason where there is room.
    let mut reported = self::app();
    reported.set_sandbox(SandboxState::reported(false, Some("landlock is disabled")));
    let line = row("reported", &mut reported, 80);
    assert!(
        line.contains("sandbox off · landlock is disabled"),
        "{line}"
    );
    insta::assert_snapshot!("status_narrow", rows);
}
