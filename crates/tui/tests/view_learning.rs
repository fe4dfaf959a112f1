//! The learning dialog and learning lines: a proposal made during a turn waits until the
//! turn ends, then asks with Y / N / S; an answer (or a change from elsewhere) takes it off
//! the queue; recalled learnings and `/learnings` answers read as lines in the transcript.

// Tests assert by unwrapping; a panic is the failure report.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod screen;

use atto_protocol::{
    Event, Learning, LearningKind, LearningRef, LearningScope, LearningSource, LearningStatus,
    TurnStatus,
};
use atto_tui::keys::{self, Action, Context, Dialog};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use screen::*;

fn proposal(id: i64, description: &str) -> Learning {
    Learning {
        id,
        kind: LearningKind::Workaround,
        status: LearningStatus::Proposed,
        scope: LearningScope::Project,
        description: description.to_owned(),
        details: "The failing call (once) said: bash: line 1: python: command not found".to_owned(),
        keywords: vec!["python3".into(), "main".into()],
        actions: vec!["bash".into()],
        categories: vec!["COMMAND_NOT_FOUND".into()],
        confidence: 0.5,
        source: LearningSource::ToolFailure,
        source_ref: Some("bash failed (COMMAND_NOT_FOUND), then worked".into()),
        session_id: Some("0190f3a2-7c41-7000-8000-00001a2b3c4d".into()),
        created_at: 0,
        used: 0,
        helpful: 0,
    }
}

const LESSON: &str =
    "bash: `python3 main.py` worked where `python main.py` failed (COMMAND_NOT_FOUND)";

#[test]
fn a_proposal_waits_for_the_turn_then_asks_y_n_s() {
    let mut app = app();
    app.on_event(&Event::TurnStarted {
        turn: 1,
        mode: atto_protocol::AgentMode::Build,
        complexity: None,
        model: None,
        route: None,
    });
    app.on_event(&Event::LearningProposed {
        learning: proposal(7, LESSON),
    });
    app.on_event(&Event::LearningProposed {
        learning: proposal(8, "second lesson"),
    });
    // Not while the turn runs: keys typed now are for the composer.
    assert!(app.learning_review().is_none());
    let text = screen(&mut app, &EMPTY, 100, 30);
    assert!(!text.contains(" LEARN "), "{text}");
    assert!(
        text.contains("learning #7 proposed (WORKAROUND, confidence 0.50)"),
        "{text}"
    );

    app.on_event(&Event::TurnCompleted {
        turn: 1,
        result: result(TurnStatus::Completed),
    });
    assert_eq!(app.learning_review().map(|l| l.id), Some(7));
    let text = screen(&mut app, &EMPTY, 100, 30);
    insta::assert_snapshot!("learning_dialog", text);
    assert!(text.contains("keep learning #7 (WORKAROUND)?"), "{text}");
    assert!(
        text.contains("y validate  n reject  s skip for now"),
        "{text}"
    );
    assert!(text.contains("1 more waiting"), "{text}");

    // Answered elsewhere (/learnings validate 7): off the queue, the next one asks.
    let mut validated = proposal(7, LESSON);
    validated.status = LearningStatus::Validated;
    app.on_event(&Event::LearningUpdated {
        learning: validated,
    });
    assert_eq!(app.learning_review().map(|l| l.id), Some(8));
    // Taking it (y, n or s) empties the queue.
    assert_eq!(app.take_learning_review().map(|l| l.id), Some(8));
    assert!(app.learning_review().is_none());
    let text = screen(&mut app, &EMPTY, 100, 30);
    assert!(!text.contains(" LEARN "), "{text}");
    assert!(text.contains("learning #7 is validated"), "{text}");
}

#[test]
fn an_approval_comes_before_the_learning_dialog() {
    let mut app = app();
    app.on_event(&Event::LearningProposed {
        learning: proposal(3, LESSON),
    });
    app.on_event(&Event::ApprovalRequired(warn_request()));
    assert!(app.learning_review().is_none());
    let text = screen(&mut app, &EMPTY, 100, 30);
    assert!(!text.contains(" LEARN "), "{text}");
}

#[test]
fn the_dialog_fits_a_small_screen_keeping_its_keys() {
    let mut app = app();
    let mut long = proposal(4, &"a very long lesson ".repeat(20));
    long.details = "detail line\n".repeat(30);
    app.on_event(&Event::LearningProposed { learning: long });
    let text = screen(&mut app, &EMPTY, 50, 12);
    assert!(text.contains("s skip"), "{text}");
    assert!(text.contains("LEARN"), "{text}");
}

#[test]
fn a_validated_proposal_does_not_ask_and_recalls_and_lists_read_as_lines() {
    let mut app = app();
    let mut kept = proposal(5, "Run tests from the repo root");
    kept.status = LearningStatus::Validated;
    kept.source = LearningSource::User;
    app.on_event(&Event::LearningProposed {
        learning: kept.clone(),
    });
    assert!(app.learning_review().is_none());
    app.on_event(&Event::LearningsUsed {
        turn: 2,
        learnings: vec![LearningRef {
            id: 5,
            kind: LearningKind::BestPractice,
            description: "Run tests from the repo root".into(),
        }],
    });
    app.on_event(&Event::LearningList {
        learnings: vec![kept],
        detailed: false,
    });
    let text = screen(&mut app, &EMPTY, 100, 30);
    assert!(text.contains("learning #5 kept"), "{text}");
    assert!(
        text.contains("recalled 1 learning(s): #5 Run tests from the repo root"),
        "{text}"
    );
    assert!(
        text.contains("#5 [validated] WORKAROUND 0.50  Run tests from the repo root"),
        "{text}"
    );
}

#[test]
fn the_learning_dialog_takes_y_n_s_in_either_case() {
    let cx = Context {
        dialog: Dialog::Learning,
        ..Context::default()
    };
    let key = |code| keys::action(&KeyEvent::new(code, KeyModifiers::NONE), &cx);
    let cases = [
        (KeyCode::Char('y'), Action::LearningValidate),
        (KeyCode::Char('Y'), Action::LearningValidate),
        (KeyCode::Char('n'), Action::LearningReject),
        (KeyCode::Char('N'), Action::LearningReject),
        (KeyCode::Char('s'), Action::LearningSkip),
        (KeyCode::Char('S'), Action::LearningSkip),
        (KeyCode::Esc, Action::LearningSkip),
        (KeyCode::Char('x'), Action::None),
        (KeyCode::Enter, Action::None),
    ];
    for (code, want) in cases {
        assert_eq!(key(code), want, "{code:?}");
    }
}
