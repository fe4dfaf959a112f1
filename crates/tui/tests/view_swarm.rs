//! The swarm on screen, folded from `swarm.*` events: the overlay (header with id, phase,
//! `passed/total` and the budget against the cap; tasks indented by dependency depth with
//! their glyphs, attempts and scores; a running task's model and activity; a retry's delay
//! and reason), the plan waiting for a yes, a worker's approval (yes or no only, queued
//! behind the session's own), the intervention dialog and its keys, the question asked
//! before a swarm file that is not trusted is used, and the status line.

// Tests assert by unwrapping; a panic is the failure report.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod screen;

use atto_protocol::quality::{CompileError, Severity, TaskKind, Verdict};
use atto_protocol::swarm::{SwarmEvent, SwarmTask, TaskStatus};
use atto_protocol::{ApprovalDecision, ApprovalRequest, Event};
use atto_tui::app::{App, Panel, Phase};
use atto_tui::keys::{Action, Context, Dialog, action};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use screen::*;

const SWARM_ID: &str = "5a1b2c3d-0000-7000-8000-000000000001";

fn task(id: &str, kind: TaskKind, deps: &[&str], description: &str) -> SwarmTask {
    SwarmTask {
        id: id.into(),
        kind,
        description: description.into(),
        dependencies: deps.iter().map(|d| (*d).to_owned()).collect(),
        target_files: vec![format!("{id}.py")],
        ..SwarmTask::default()
    }
}

/// Four tasks: two roots, a test after the first, docs after both roots.
fn plan() -> Vec<SwarmTask> {
    vec![
        task(
            "task-1",
            TaskKind::Implement,
            &[],
            "Add slugify(text) to text_utils.py",
        ),
        task(
            "task-2",
            TaskKind::Implement,
            &[],
            "Create counter.py with count_words",
        ),
        task(
            "task-3",
            TaskKind::Test,
            &["task-1"],
            "Test slugify with pytest",
        ),
        task(
            "task-4",
            TaskKind::Document,
            &["task-3", "task-2"],
            "Document the helpers in README.md",
        ),
    ]
}

fn started(app: &mut App) {
    app.start_swarm("add slugs, a counter, tests and docs");
    app.on_swarm_event(&SwarmEvent::Started {
        swarm_id: SWARM_ID.into(),
        goal: "add slugs, a counter, tests and docs".into(),
        resumed: false,
    });
    app.on_swarm_event(&SwarmEvent::Decomposed {
        tasks: plan(),
        attempts: 1,
    });
}

/// The plan confirmed; task-1 passed with score 4, task-2 is retrying after a syntax
/// error, task-3 runs with activity, task-4 waits; budget half used.
fn mid_run(app: &mut App) {
    started(app);
    app.on_swarm_event(&SwarmEvent::Plan { tasks: plan() });
    app.swarm_plan_answered(true);
    let ev = |e: SwarmEvent, app: &mut App| {
        app.on_swarm_event(&e);
    };
    ev(
        SwarmEvent::TaskStarted {
            task_id: "task-1".into(),
            attempt: 1,
            model: "gpt-worker".into(),
            pid: Some(42),
        },
        app,
    );
    ev(
        SwarmEvent::TaskStarted {
            task_id: "task-2".into(),
            attempt: 1,
            model: "gpt-worker".into(),
            pid: Some(43),
        },
        app,
    );
    ev(
        SwarmEvent::TaskChecked {
            task_id: "task-1".into(),
            attempt: 1,
            verdict: Verdict::Pass,
            score: Some(4),
            findings: vec![],
        },
        app,
    );
    ev(
        SwarmEvent::TaskPassed {
            task_id: "task-1".into(),
            attempts: 1,
            score: Some(4),
            files: vec!["text_utils.py".into()],
        },
        app,
    );
    ev(
        SwarmEvent::TaskRetrying {
            task_id: "task-2".into(),
            attempt: 2,
            delay_ms: 2_300,
            reason: "counter.py:3 — IndentationError: unexpected indent\nmore".into(),
        },
        app,
    );
    ev(
        SwarmEvent::TaskStarted {
            task_id: "task-3".into(),
            attempt: 1,
            model: "gpt-tester".into(),
            pid: None,
        },
        app,
    );
    ev(
        SwarmEvent::TaskActivity {
            task_id: "task-3".into(),
            activity: "bash: python3 -m pytest -q".into(),
        },
        app,
    );
    ev(
        SwarmEvent::Budget {
            tokens: 50_000,
            max_tokens: Some(100_000),
            cost_usd: Some(0.0123),
            max_usd: Some(5.0),
        },
        app,
    );
}

fn overlay(app: &mut App, w: u16, h: u16) -> String {
    app.panel = Some(Panel::Swarm);
    screen(app, &EMPTY, w, h)
}

/// The overlay's rows, the panel border stripped.
fn rows(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| {
            let inner = l.trim_start_matches('│').trim_end().trim_end_matches('│');
            (inner.len() < l.len()).then(|| inner.trim_end().to_owned())
        })
        .collect()
}

#[test]
fn the_overlay_shows_the_tree_workers_retries_and_budget() {
    let mut app = app();
    mid_run(&mut app);
    let text = overlay(&mut app, 100, 34);
    insta::assert_snapshot!("swarm_overlay", text);
    let rows = rows(&text);
    let row = |needle: &str| {
        rows.iter()
            .find(|r| r.contains(needle))
            .unwrap_or_else(|| panic!("no row with {needle:?}:\n{text}"))
            .clone()
    };
    assert!(
        row("swarm 5a1b2c3d").contains("swarm 5a1b2c3d · running · 1/4 passed"),
        "{text}"
    );
    assert!(
        row("tokens").contains("tokens 50.0k of 100.0k · $0.0123 of $5.00"),
        "{text}"
    );
    // Roots at depth 0, the test under task-1 one deeper, the docs (after the test) two.
    assert!(
        row("task-1 [").starts_with("✓ task-1 [implement] passed · 1 attempt · score 4/5"),
        "{text}"
    );
    assert!(row("task-2 [").starts_with("· task-2 [implement] pending · 1 attempt"));
    assert!(
        row("task-3 [").starts_with("  ▶ task-3 [test] running · 1 attempt · after task-1"),
        "{text}"
    );
    assert!(
        row("task-4 [").starts_with("    · task-4 [document] pending · after task-3, task-2"),
        "{text}"
    );
    // The running worker's model and latest activity, under its task.
    assert!(
        row("gpt-tester").starts_with("      gpt-tester · bash: python3 -m pytest -q"),
        "{text}"
    );
    // The retry: attempt, delay, first line of the reason.
    let retry = row("↻");
    assert!(
        retry.contains("↻ attempt 2 in 2.3 s: counter.py:3 — IndentationError: unexpected indent"),
        "{retry}"
    );
    assert!(!retry.contains("more"), "{retry}");
    // The status line counts passed tasks.
    let status = text.lines().last().unwrap();
    assert!(status.contains("swarm 1/4"), "{status}");
}

#[test]
fn the_transcript_tells_the_start_the_ends_and_the_summary() {
    let mut app = app();
    mid_run(&mut app);
    app.on_swarm_event(&SwarmEvent::TaskSkipped {
        task_id: "task-4".into(),
        reason: "task-2 failed".into(),
    });
    app.on_swarm_event(&SwarmEvent::Finished {
        swarm_id: SWARM_ID.into(),
        status: "interrupted".into(),
        passed: 1,
        failed: 0,
        skipped: 1,
        tokens: 61_000,
        cost_usd: None,
        report: "/home/me/.atto/swarms/5a1b/report.md".into(),
        error: None,
    });
    app.panel = None;
    let text = screen(&mut app, &EMPTY, 160, 20);
    assert!(text.contains("swarm 5a1b2c3d started"), "{text}");
    assert!(
        text.contains("swarm: ✓ task-1 passed (1 attempt, score 4/5)"),
        "{text}"
    );
    assert!(
        text.contains("swarm: ⊘ task-4 skipped: task-2 failed"),
        "{text}"
    );
    assert!(
        text.contains(
            "swarm 5a1b2c3d interrupted: 1 passed, 0 failed, 1 skipped · 61.0k tokens · cost \
             unknown · report /home/me/.atto/swarms/5a1b/report.md"
        ),
        "{text}"
    );
    assert!(
        text.contains("the swarm can be resumed with atto swarm --resume 5a1b2c3d"),
        "{text}"
    );
    assert!(!app.swarm_running());
    // Ended: the status line no longer counts it; the overlay keeps the last state.
    assert!(!text.lines().last().unwrap().contains("swarm"), "{text}");
    let text = overlay(&mut app, 100, 30);
    assert!(
        text.contains("swarm 5a1b2c3d · interrupted · 1/4 passed"),
        "{text}"
    );
    assert!(
        text.contains("report: /home/me/.atto/swarms/5a1b/report.md"),
        "{text}"
    );
    // The summary's totals against the caps the budget events said.
    assert!(
        text.contains("tokens 61.0k of 100.0k · cost unknown (cap $5.00)"),
        "{text}"
    );
    // No worker runs after the end: the interrupted task waits for a resume.
    assert!(text.contains("  · task-3 [test] pending"), "{text}");
    assert!(!text.contains("gpt-tester ·"), "{text}");
}

#[test]
fn a_summary_without_budget_events_says_no_caps() {
    let mut app = app();
    started(&mut app);
    app.on_swarm_event(&SwarmEvent::Finished {
        swarm_id: SWARM_ID.into(),
        status: "failed".into(),
        passed: 0,
        failed: 0,
        skipped: 0,
        tokens: 1_200,
        cost_usd: Some(0.002),
        report: "/r/report.md".into(),
        error: None,
    });
    let text = overlay(&mut app, 100, 30);
    let budget = rows(&text)
        .into_iter()
        .find(|r| r.starts_with("tokens"))
        .unwrap();
    assert_eq!(budget, "tokens 1.2k · $0.0020");
    assert!(
        text.contains("swarm 5a1b2c3d · failed · 0/4 passed"),
        "{text}"
    );
}

#[test]
fn the_plan_is_asked_in_the_overlay() {
    let mut app = app();
    started(&mut app);
    app.panel = None;
    assert_eq!(app.swarm().unwrap().phase, Phase::Planning);
    app.on_swarm_event(&SwarmEvent::Plan { tasks: plan() });
    // The overlay opens to ask.
    assert_eq!(app.panel, Some(Panel::Swarm));
    assert!(app.swarm_plan_waiting());
    let text = screen(&mut app, &EMPTY, 100, 30);
    insta::assert_snapshot!("swarm_plan", text);
    assert!(
        text.contains("Run these 4 tasks? Enter or y runs them · n or Esc declines"),
        "{text}"
    );
    assert!(text.contains("swarm · Esc declines"), "{text}");
    assert!(
        text.lines()
            .last()
            .unwrap()
            .contains("swarm plan waits (F3)"),
        "{text}"
    );
    app.swarm_plan_answered(true);
    assert!(!app.swarm_plan_waiting());
    assert_eq!(app.swarm().unwrap().phase, Phase::Running);
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

#[test]
fn plan_keys_ctrl_c_and_f3() {
    let plan = Context {
        composer_empty: true,
        overlay_open: true,
        swarm_plan: true,
        swarm_running: true,
        ..Context::default()
    };
    let typing = Context {
        composer_empty: false,
        ..plan
    };
    let table: &[(&str, Context, KeyEvent, Action)] = &[
        (
            "Enter runs",
            plan,
            key(KeyCode::Enter),
            Action::SwarmConfirm(true),
        ),
        (
            "y runs",
            plan,
            key(KeyCode::Char('y')),
            Action::SwarmConfirm(true),
        ),
        (
            "n declines",
            plan,
            key(KeyCode::Char('n')),
            Action::SwarmConfirm(false),
        ),
        (
            "Esc declines",
            plan,
            key(KeyCode::Esc),
            Action::SwarmConfirm(false),
        ),
        // With a draft in the composer the keys type and send as always.
        (
            "y types",
            typing,
            key(KeyCode::Char('y')),
            Action::Insert('y'),
        ),
        ("Enter sends", typing, key(KeyCode::Enter), Action::Submit),
        (
            "F3 toggles the overlay",
            Context::default(),
            key(KeyCode::F(3)),
            Action::ToggleSwarm,
        ),
        (
            "Ctrl-C stops a running swarm",
            Context {
                composer_empty: true,
                swarm_running: true,
                ..Context::default()
            },
            KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL),
            Action::InterruptSwarm,
        ),
        (
            "…after the turn, which it cancels first",
            Context {
                composer_empty: true,
                swarm_running: true,
                turn_running: true,
                ..Context::default()
            },
            KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL),
            Action::Interrupt,
        ),
        (
            "once stopping, Ctrl-C arms quitting again",
            Context {
                composer_empty: true,
                ..Context::default()
            },
            KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL),
            Action::ArmQuit,
        ),
    ];
    for (what, cx, k, want) in table {
        assert_eq!(&action(k, cx), want, "{what}");
    }
}

fn stuck() -> SwarmEvent {
    SwarmEvent::InterventionNeeded {
        task_id: "task-2".into(),
        description: "Create counter.py with count_words(text) returning the number of words"
            .into(),
        attempts: 3,
        last_error: "the compile check failed: counter.py:3".into(),
        compilation_errors: vec![
            CompileError {
                file: "counter.py".into(),
                line: Some(3),
                message: "IndentationError: unexpected indent".into(),
                severity: Severity::Error,
            },
            CompileError {
                file: "counter_test.py".into(),
                line: None,
                message: "cannot import count_words".into(),
                severity: Severity::Error,
            },
        ],
        failure_mode: "quality".into(),
        model: "gpt-worker".into(),
    }
}

#[test]
fn a_stuck_task_opens_the_intervention_dialog() {
    let mut app = app();
    mid_run(&mut app);
    app.panel = None;
    app.on_swarm_event(&stuck());
    let showing = app.intervention().unwrap();
    assert_eq!(showing.task_id, "task-2");
    let text = screen(&mut app, &EMPTY, 100, 30);
    insta::assert_snapshot!("swarm_intervention", text);
    assert!(
        text.contains("STUCK  swarm task task-2 needs a decision"),
        "{text}"
    );
    assert!(
        text.contains("3 attempts · failed on quality · model gpt-worker"),
        "{text}"
    );
    assert!(
        text.contains("last error: the compile check failed: counter.py:3"),
        "{text}"
    );
    // Compilation errors with file:line.
    assert!(
        text.contains("counter.py:3 — IndentationError: unexpected indent"),
        "{text}"
    );
    assert!(
        text.contains("counter_test.py — cannot import count_words"),
        "{text}"
    );
    assert!(
        text.contains("g guidance (retry with what you type)  f fixed (check again, no worker)"),
        "{text}"
    );
    // Typing guidance shows the field instead of the letters.
    app.set_guidance(Some("keep four spaces".into()));
    let text = screen(&mut app, &EMPTY, 100, 30);
    assert!(
        text.contains("guidance (Enter retries with it, Esc back): keep four spaces▏"),
        "{text}"
    );
    assert!(!text.contains("f fixed"), "{text}");
    // Answered: the dialog closes, the task id is what the answer goes to.
    assert_eq!(app.take_intervention().as_deref(), Some("task-2"));
    assert!(app.intervention().is_none());
    assert!(app.swarm().unwrap().guidance.is_none());
}

#[test]
fn the_intervention_dialog_takes_g_f_s_and_guidance_is_typed() {
    let cx = Context {
        dialog: Dialog::Intervention,
        composer_empty: true,
        ..Context::default()
    };
    for (code, want) in [
        (KeyCode::Char('g'), Action::StartGuidance),
        (KeyCode::Char('f'), Action::InterventionFixed),
        (KeyCode::Char('s'), Action::InterventionSkip),
        (KeyCode::Char('y'), Action::None),
        (KeyCode::Enter, Action::None),
        (KeyCode::Esc, Action::None),
    ] {
        assert_eq!(action(&key(code), &cx), want, "{code:?}");
    }
    // Guidance is typed like a dialog's reason.
    let typing = Context {
        dialog: Dialog::Typing,
        ..cx
    };
    assert_eq!(
        action(&key(KeyCode::Char('s')), &typing),
        Action::Insert('s')
    );
    assert_eq!(action(&key(KeyCode::Enter), &typing), Action::DialogSubmit);
    assert_eq!(action(&key(KeyCode::Esc), &typing), Action::DialogBack);
}

#[test]
fn a_stuck_task_that_ends_otherwise_asks_nothing_more() {
    let mut app = app();
    mid_run(&mut app);
    app.on_swarm_event(&stuck());
    assert!(app.intervention().is_some());
    app.on_swarm_event(&SwarmEvent::TaskSkipped {
        task_id: "task-2".into(),
        reason: "skipped by the user".into(),
    });
    assert!(app.intervention().is_none());
    let row = app
        .swarm()
        .unwrap()
        .tasks
        .iter()
        .find(|t| t.id == "task-2")
        .unwrap()
        .clone();
    assert_eq!(row.status, TaskStatus::Skipped);
}

fn worker_request(id: &str) -> ApprovalRequest {
    ApprovalRequest {
        id: id.into(),
        call_id: "call_1".into(),
        tool: "bash".into(),
        kind: atto_protocol::ToolKind::Execute,
        subject: "curl https://example.com".into(),
        risk: "WARN".into(),
        reasons: vec!["curl: downloads from the network".into()],
        suggested_rule: "bash(curl*)".into(),
        unsandboxed: false,
        protected: false,
        subagent: None,
        arguments: serde_json::Value::Null,
    }
}

fn asked(task: &str, id: &str) -> SwarmEvent {
    SwarmEvent::Permission {
        task_id: task.into(),
        request: worker_request(id),
        tier: "asked".into(),
        decision: None,
    }
}

#[test]
fn a_workers_approval_is_asked_yes_or_no_and_waits_behind_the_sessions() {
    let mut app = app();
    mid_run(&mut app);
    app.panel = None;
    // Answered by the mailbox: nothing to ask, a denial is the task's activity.
    app.on_swarm_event(&SwarmEvent::Permission {
        task_id: "task-3".into(),
        request: worker_request("w0"),
        tier: "auto_denied".into(),
        decision: Some(ApprovalDecision::No { reason: None }),
    });
    assert!(app.approval.is_none());
    let text = overlay(&mut app, 100, 34);
    assert!(
        text.contains("gpt-tester · denied bash: curl https://example.com"),
        "{text}"
    );
    app.panel = None;
    app.on_swarm_event(&asked("task-3", "w1"));
    let dialog = app.approval.clone().unwrap();
    assert_eq!(dialog.swarm_task.as_deref(), Some("task-3"));
    let text = screen(&mut app, &EMPTY, 100, 30);
    insta::assert_snapshot!("swarm_approval", text);
    assert!(
        text.contains("approve bash for swarm task task-3?"),
        "{text}"
    );
    assert!(text.contains("swarm task task-3 asks"), "{text}");
    assert!(text.contains("y yes  n no (+reason)"), "{text}");
    // No rule can be saved for a worker: no "always", no edit.
    assert!(!text.contains("always"), "{text}");
    assert!(!text.contains(" e edit"), "{text}");

    // The session asks too: its question shows; the worker's waits and comes back.
    app.on_event(&Event::ApprovalRequired(warn_request()));
    assert_eq!(app.approval.as_ref().unwrap().swarm_task, None);
    // The session's turn ending closes only the session's question.
    app.on_event(&Event::TurnCompleted {
        turn: 1,
        result: result(atto_protocol::TurnStatus::Cancelled),
    });
    let back = app.approval.clone().unwrap();
    assert_eq!(back.swarm_task.as_deref(), Some("task-3"));
    assert_eq!(back.request.id, "w1");
    // A second worker question waits until the first is answered.
    app.on_swarm_event(&asked("task-3", "w2"));
    assert_eq!(app.approval.as_ref().unwrap().request.id, "w1");
    app.approval = None;
    app.promote_swarm_question();
    assert_eq!(app.approval.as_ref().unwrap().request.id, "w2");
    // The task ends: its question answers nothing now.
    app.on_swarm_event(&SwarmEvent::TaskFailed {
        task_id: "task-3".into(),
        attempts: 1,
        reason: "worker crashed".into(),
    });
    assert!(app.approval.is_none());
}

#[test]
fn a_swarm_that_never_reports_its_end_is_said_lost() {
    let mut app = app();
    app.start_swarm("do it");
    app.on_swarm_event(&SwarmEvent::Notice {
        text: "the swarm did not start: no swarm.yaml".into(),
    });
    app.swarm_closed();
    assert!(!app.swarm_running());
    assert_eq!(app.swarm().unwrap().phase, Phase::Lost);
    let text = screen(&mut app, &EMPTY, 100, 30);
    assert!(
        text.contains("swarm: the swarm did not start: no swarm.yaml"),
        "{text}"
    );
    assert!(
        text.contains("the swarm stopped without its summary"),
        "{text}"
    );
    assert!(text.contains("stopped without a summary"), "{text}");
}

#[test]
fn a_long_task_row_continues_under_its_id() {
    let mut app = app();
    mid_run(&mut app);
    let text = overlay(&mut app, 60, 40);
    let rows = rows(&text);
    let at = rows
        .iter()
        .position(|r| r.starts_with("    · task-4 [document]"))
        .unwrap_or_else(|| panic!("{text}"));
    // Depth 2 (four spaces), then two more past the glyph.
    let next = &rows[at + 1];
    assert!(
        next.starts_with("      ") && !next.starts_with("       "),
        "{text}"
    );
    assert!(text.contains("README.md"), "{text}");
}

#[test]
fn a_swarm_stopped_while_planning_asks_no_plan() {
    let mut app = app();
    started(&mut app);
    app.swarm_stopping();
    app.panel = None;
    app.on_swarm_event(&SwarmEvent::Plan { tasks: plan() });
    assert!(!app.swarm_plan_waiting());
    assert_eq!(app.panel, None);
    assert_eq!(app.swarm().unwrap().phase, Phase::Stopping);
    let text = screen(&mut app, &EMPTY, 100, 30);
    assert!(
        text.contains(
            "stopping the swarm's workers; the swarm can be resumed with atto swarm --resume \
             5a1b2c3d"
        ),
        "{text}"
    );
    assert!(
        text.lines().last().unwrap().contains("swarm stopping…"),
        "{text}"
    );
}

/// What the session sends when the swarm file is not trusted (as `swarm_trust` words it).
fn trust_needed() -> SwarmEvent {
    SwarmEvent::TrustNeeded {
        question: vec![
            "/ws/.atto/swarm.yaml sets line 3: worker_command (settings that start processes or \
             choose models), and that content is not trusted."
                .into(),
            "its workers would start with: sh -c 'echo ran >> mark; exec \"$0\" \"$@\"' {atto} \
             exec {args}"
                .into(),
            "--- /ws/.atto/swarm.yaml\nswarm:\n  worker_command: [sh, -c, 'echo ran >> mark'] \
             \n---"
                .into(),
        ],
    }
}

#[test]
fn a_swarm_file_not_trusted_is_asked_in_a_dialog_before_anything_starts() {
    let mut app = app();
    app.start_swarm("add slugs");
    app.on_swarm_event(&trust_needed());
    assert!(app.swarm_trust_question().is_some());
    let text = screen(&mut app, &EMPTY, 100, 30);
    insta::assert_snapshot!("swarm_trust", text);
    assert!(text.contains("TRUST  Trust this swarm file?"), "{text}");
    assert!(text.contains("sets line 3: worker_command"), "{text}");
    assert!(
        text.contains("its workers would start with: sh -c"),
        "{text}"
    );
    // The file's text, one line per line.
    assert!(text.contains("--- /ws/.atto/swarm.yaml"), "{text}");
    assert!(text.contains("  worker_command: [sh, -c,"), "{text}");
    assert!(
        text.contains("y trust it as it is now and start  n/Esc start nothing"),
        "{text}"
    );
    // Too little room: the text gives way, says so, and the answers stay.
    let text = screen(&mut app, &EMPTY, 100, 9);
    assert!(text.contains("… (the rest: read the file"), "{text}");
    assert!(text.contains("y trust it as it is now"), "{text}");
    // Answered once: an answer is due once, then the dialog is gone.
    assert!(app.take_swarm_trust_question());
    assert!(!app.take_swarm_trust_question());
    assert!(app.swarm_trust_question().is_none());
    // A swarm thread that ended (refused) leaves no question behind.
    app.on_swarm_event(&trust_needed());
    app.swarm_closed();
    assert!(app.swarm_trust_question().is_none());
}

#[test]
fn the_swarm_trust_dialog_takes_only_y_as_yes() {
    let cx = Context {
        dialog: Dialog::SwarmTrust,
        composer_empty: true,
        ..Context::default()
    };
    for (code, want) in [
        (KeyCode::Char('y'), Action::SwarmTrust(true)),
        (KeyCode::Char('Y'), Action::SwarmTrust(true)),
        (KeyCode::Char('n'), Action::SwarmTrust(false)),
        (KeyCode::Esc, Action::SwarmTrust(false)),
        (KeyCode::Enter, Action::None),
        (KeyCode::Char('a'), Action::None),
    ] {
        assert_eq!(action(&key(code), &cx), want, "{code:?}");
    }
}
