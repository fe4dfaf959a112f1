//! The key table: which action each key means in each situation, including the Esc
//! cancel stack, Tab's three meanings, Ctrl-C, the approval dialog's letters and the
//! agents list's arrows and Enter.

use atto_tui::keys::{Action, Context, Dialog, action};
use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn with(code: KeyCode, modifiers: KeyModifiers) -> KeyEvent {
    KeyEvent::new(code, modifiers)
}

/// An idle screen: empty composer, nothing open, no turn.
fn idle() -> Context {
    Context {
        composer_empty: true,
        ..Context::default()
    }
}

#[test]
fn esc_is_a_cancel_stack() {
    let typing = Context {
        composer_empty: false,
        ..idle()
    };
    let table: &[(&str, Context, Action)] = &[
        (
            "menu first",
            Context {
                menu_open: true,
                turn_running: true,
                ..typing
            },
            Action::CloseMenu,
        ),
        (
            "then a panel or keys overlay",
            Context {
                overlay_open: true,
                turn_running: true,
                ..idle()
            },
            Action::CloseOverlay,
        ),
        (
            "then the running turn",
            Context {
                turn_running: true,
                queued: true,
                ..typing
            },
            Action::Interrupt,
        ),
        (
            "then a queued draft, when nothing is typed",
            Context {
                queued: true,
                ..idle()
            },
            Action::DiscardQueued,
        ),
        (
            "typed text is cleared before queued drafts go",
            Context {
                queued: true,
                ..typing
            },
            Action::ClearInput,
        ),
        ("then the input", typing, Action::ClearInput),
        ("nothing to cancel arms a rewind", idle(), Action::ArmEsc),
        (
            "Esc Esc rewinds",
            Context {
                esc_armed: true,
                ..idle()
            },
            Action::Rewind,
        ),
    ];
    for (why, cx, want) in table {
        assert_eq!(action(&key(KeyCode::Esc), cx), *want, "{why}");
    }
}

#[test]
fn tab_completes_queues_or_cycles_modes() {
    let table: &[(&str, Context, Action)] = &[
        (
            "menu open: accept",
            Context {
                menu_open: true,
                composer_empty: false,
                ..idle()
            },
            Action::Accept,
        ),
        ("idle composer: next mode", idle(), Action::CycleMode),
        (
            "idle composer during a turn: next mode too",
            Context {
                turn_running: true,
                ..idle()
            },
            Action::CycleMode,
        ),
        (
            "a draft during a turn: queue it",
            Context {
                turn_running: true,
                composer_empty: false,
                ..idle()
            },
            Action::Queue,
        ),
        (
            "text typed, no turn: nothing",
            Context {
                composer_empty: false,
                ..idle()
            },
            Action::None,
        ),
    ];
    for (why, cx, want) in table {
        assert_eq!(action(&key(KeyCode::Tab), cx), *want, "{why}");
    }
    assert_eq!(action(&key(KeyCode::BackTab), &idle()), Action::CycleEffort);
}

#[test]
fn enter_sends_accepts_or_breaks_the_line() {
    let typing = Context {
        composer_empty: false,
        ..idle()
    };
    assert_eq!(action(&key(KeyCode::Enter), &typing), Action::Submit);
    let menu = Context {
        menu_open: true,
        ..typing
    };
    assert_eq!(action(&key(KeyCode::Enter), &menu), Action::AcceptAndSubmit);
    for m in [KeyModifiers::SHIFT, KeyModifiers::ALT] {
        assert_eq!(action(&with(KeyCode::Enter, m), &menu), Action::Newline);
    }
    assert_eq!(
        action(&with(KeyCode::Char('j'), KeyModifiers::CONTROL), &typing),
        Action::Newline
    );
}

#[test]
fn ctrl_c_cancels_clears_then_exits_on_the_second_press() {
    let ctrl_c = with(KeyCode::Char('c'), KeyModifiers::CONTROL);
    let running = Context {
        turn_running: true,
        dialog: Dialog::Choosing,
        ..idle()
    };
    assert_eq!(action(&ctrl_c, &running), Action::Interrupt);
    let typing = Context {
        composer_empty: false,
        ..idle()
    };
    assert_eq!(action(&ctrl_c, &typing), Action::ClearInput);
    assert_eq!(action(&ctrl_c, &idle()), Action::ArmQuit);
    let armed = Context {
        ctrl_c_armed: true,
        ..idle()
    };
    assert_eq!(action(&ctrl_c, &armed), Action::Quit);
}

#[test]
fn arrows_drive_the_menu_when_open_else_history() {
    let menu = Context {
        menu_open: true,
        composer_empty: false,
        ..idle()
    };
    assert_eq!(action(&key(KeyCode::Up), &menu), Action::MenuUp);
    assert_eq!(action(&key(KeyCode::Down), &menu), Action::MenuDown);
    assert_eq!(action(&key(KeyCode::Up), &idle()), Action::Up);
    assert_eq!(action(&key(KeyCode::Down), &idle()), Action::Down);
    assert_eq!(
        action(&with(KeyCode::Left, KeyModifiers::CONTROL), &idle()),
        Action::WordLeft
    );
    assert_eq!(
        action(&with(KeyCode::Right, KeyModifiers::ALT), &idle()),
        Action::WordRight
    );
}

#[test]
fn the_agents_list_takes_arrows_and_enter_only_on_an_empty_composer() {
    let list = Context {
        agents_list: true,
        overlay_open: true,
        ..idle()
    };
    let typing = Context {
        composer_empty: false,
        ..list
    };
    let menu = Context {
        menu_open: true,
        ..typing
    };
    let table: &[(&str, KeyCode, Context, Action)] = &[
        ("up moves up", KeyCode::Up, list, Action::SelectAgent(-1)),
        (
            "down moves down",
            KeyCode::Down,
            list,
            Action::SelectAgent(1),
        ),
        ("enter opens", KeyCode::Enter, list, Action::OpenAgent),
        (
            "esc closes (or goes back)",
            KeyCode::Esc,
            list,
            Action::CloseOverlay,
        ),
        (
            "typing: up is the composer's",
            KeyCode::Up,
            typing,
            Action::Up,
        ),
        (
            "typing: enter sends",
            KeyCode::Enter,
            typing,
            Action::Submit,
        ),
        ("menu first", KeyCode::Down, menu, Action::MenuDown),
        (
            "another panel: history",
            KeyCode::Up,
            Context {
                agents_list: false,
                ..list
            },
            Action::Up,
        ),
        (
            "an approval over the list takes its keys",
            KeyCode::Enter,
            Context {
                dialog: Dialog::Choosing,
                ..list
            },
            Action::None,
        ),
    ];
    for (why, code, cx, want) in table {
        assert_eq!(action(&key(*code), cx), *want, "{why}");
    }
    assert_eq!(
        action(&with(KeyCode::Enter, KeyModifiers::ALT), &list),
        Action::Newline
    );
}

#[test]
fn question_mark_shows_keys_only_on_an_empty_composer() {
    assert_eq!(
        action(&key(KeyCode::Char('?')), &idle()),
        Action::ToggleKeys
    );
    let typing = Context {
        composer_empty: false,
        ..idle()
    };
    assert_eq!(
        action(&key(KeyCode::Char('?')), &typing),
        Action::Insert('?')
    );
}

#[test]
fn scrolling_folding_and_panels() {
    let table: &[(KeyEvent, Action)] = &[
        (key(KeyCode::PageUp), Action::Page(1)),
        (key(KeyCode::PageDown), Action::Page(-1)),
        (with(KeyCode::End, KeyModifiers::CONTROL), Action::Bottom),
        (
            with(KeyCode::Char('o'), KeyModifiers::CONTROL),
            Action::ToggleFold,
        ),
        (key(KeyCode::F(2)), Action::TogglePlan),
        (
            with(KeyCode::Char('p'), KeyModifiers::CONTROL),
            Action::TogglePlan,
        ),
    ];
    for (k, want) in table {
        assert_eq!(action(k, &idle()), *want, "{k:?}");
    }
}

#[test]
fn the_approval_dialog_takes_its_letters() {
    let cx = Context {
        dialog: Dialog::Choosing,
        turn_running: true,
        composer_empty: false,
        ..Context::default()
    };
    let table: &[(KeyCode, Action)] = &[
        (KeyCode::Char('y'), Action::Approve),
        (KeyCode::Char('n'), Action::StartReason),
        (KeyCode::Char('a'), Action::AlwaysSession),
        (KeyCode::Char('A'), Action::AlwaysProject),
        (KeyCode::Char('e'), Action::StartEdit),
        (KeyCode::Esc, Action::Deny),
        // Enter alone must not approve by accident; other letters do nothing.
        (KeyCode::Enter, Action::None),
        (KeyCode::Char('x'), Action::None),
        (KeyCode::Tab, Action::None),
    ];
    for (code, want) in table {
        assert_eq!(action(&key(*code), &cx), *want, "{code:?}");
    }
    // Shift+a arrives as 'A' with SHIFT in most terminals.
    assert_eq!(
        action(&with(KeyCode::Char('A'), KeyModifiers::SHIFT), &cx),
        Action::AlwaysProject
    );
}

#[test]
fn the_dialog_takes_typed_text_for_a_reason_or_an_edit() {
    let cx = Context {
        dialog: Dialog::Typing,
        ..idle()
    };
    assert_eq!(action(&key(KeyCode::Char('y')), &cx), Action::Insert('y'));
    assert_eq!(action(&key(KeyCode::Enter), &cx), Action::DialogSubmit);
    assert_eq!(action(&key(KeyCode::Esc), &cx), Action::DialogBack);
    assert_eq!(action(&key(KeyCode::Backspace), &cx), Action::Backspace);
    assert_eq!(
        action(&with(KeyCode::Char('c'), KeyModifiers::CONTROL), &cx),
        Action::DialogBack
    );
}

#[test]
fn key_releases_are_ignored() {
    let mut release = key(KeyCode::Char('x'));
    release.kind = KeyEventKind::Release;
    assert_eq!(action(&release, &idle()), Action::None);
}

#[test]
fn a_decision_point_takes_arrows_digits_enter_and_esc() {
    let cx = Context {
        dialog: Dialog::Decision,
        turn_running: true,
        ..idle()
    };
    let table: &[(KeyCode, Action)] = &[
        (KeyCode::Up, Action::DecisionMove(-1)),
        (KeyCode::Down, Action::DecisionMove(1)),
        (KeyCode::Char('1'), Action::DecisionPick(1)),
        (KeyCode::Char('9'), Action::DecisionPick(9)),
        (KeyCode::Enter, Action::DecisionSubmit),
        (KeyCode::Esc, Action::DecisionDismiss),
        // Letters are not answers here: nothing is typed behind the dialog.
        (KeyCode::Char('y'), Action::None),
        (KeyCode::Char('0'), Action::None),
    ];
    for (code, expected) in table {
        assert_eq!(&action(&key(*code), &cx), expected, "{code:?}");
    }
    // Ctrl-C still cancels the running plan step.
    assert_eq!(
        action(&with(KeyCode::Char('c'), KeyModifiers::CONTROL), &cx),
        Action::Interrupt
    );
}

#[test]
fn entering_yolo_asks_first_and_only_y_enters() {
    let asking = Context {
        dialog: Dialog::ConfirmYolo,
        ..idle()
    };
    let table: &[(KeyEvent, Action)] = &[
        (key(KeyCode::Char('y')), Action::EnterYolo),
        (key(KeyCode::Char('Y')), Action::EnterYolo),
        // Tab pressed twice for completion goes round the cycle, past YOLO.
        (key(KeyCode::Tab), Action::SkipYolo),
        (key(KeyCode::Esc), Action::DeclineYolo),
        (key(KeyCode::Char('n')), Action::DeclineYolo),
        (
            with(KeyCode::Char('c'), KeyModifiers::CONTROL),
            Action::DeclineYolo,
        ),
        (key(KeyCode::Enter), Action::None),
        (key(KeyCode::Char('a')), Action::None),
    ];
    for (k, want) in table {
        assert_eq!(action(k, &asking), *want, "{k:?}");
    }
}

#[test]
fn esc_esc_opens_the_rewind_picker_which_takes_arrows_enter_and_esc() {
    let armed = Context {
        esc_armed: true,
        ..idle()
    };
    assert_eq!(action(&key(KeyCode::Esc), &idle()), Action::ArmEsc);
    assert_eq!(action(&key(KeyCode::Esc), &armed), Action::Rewind);
    let picker = Context {
        dialog: Dialog::Rewind,
        ..idle()
    };
    let table = [
        (KeyCode::Up, Action::RewindMove(-1)),
        (KeyCode::Char('k'), Action::RewindMove(-1)),
        (KeyCode::Down, Action::RewindMove(1)),
        (KeyCode::Char('j'), Action::RewindMove(1)),
        (KeyCode::Enter, Action::RewindEnter),
        (KeyCode::Esc, Action::RewindBack),
        (KeyCode::Char('x'), Action::None),
        (KeyCode::Tab, Action::None),
    ];
    for (code, want) in table {
        assert_eq!(action(&key(code), &picker), want, "{code:?}");
    }
}
