//! Which action a key press means, given what is on screen. A pure table: no state is
//! changed here, so every rule (the Esc cancel stack, Tab cycling modes only when the
//! composer is idle, the YOLO question, the approval and learning dialogs' letters, the
//! agents list's arrows and Enter, the swarm's plan question and stuck-task letters, Ctrl-C
//! stopping a swarm, the rewind picker's arrows, Enter and Esc) is tested as data. `run` carries the actions out.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

/// What is on screen when a key arrives.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Context {
    /// The approval dialog is showing, and whether it is taking typed text.
    pub dialog: Dialog,
    /// The completion menu is open.
    pub menu_open: bool,
    /// A panel or the keys overlay is open.
    pub overlay_open: bool,
    /// The agents panel's list is showing (its arrows and Enter work on an empty composer).
    pub agents_list: bool,
    /// The swarm overlay shows a plan waiting for a yes.
    pub swarm_plan: bool,
    /// A swarm runs and has not been asked to stop.
    pub swarm_running: bool,
    /// Nothing is typed in the composer.
    pub composer_empty: bool,
    /// A turn is running.
    pub turn_running: bool,
    /// Drafts are queued for after the turn.
    pub queued: bool,
    /// The previous key was an Esc that had nothing to cancel.
    pub esc_armed: bool,
    /// The previous key was a Ctrl-C that had nothing to cancel.
    pub ctrl_c_armed: bool,
}

/// The approval dialog's state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Dialog {
    /// No dialog.
    #[default]
    Closed,
    /// Waiting for y / n / a / A / e.
    Choosing,
    /// Typing a reason or an edited command.
    Typing,
    /// A plan step's decision point waits for a choice (no approval is showing).
    Decision,
    /// Tab asked whether to enter YOLO: `y` enters, Tab skips to Plan, Esc stays.
    ConfirmYolo,
    /// A swarm task is stuck: `g` (type guidance), `f` (fixed), `s` (skip). Its guidance
    /// is typed as `Typing`.
    Intervention,
    /// A proposed learning waits for y / n / s.
    Learning,
    /// The rewind picker: a prompt, then what goes back.
    Rewind,
    /// The swarm's file is not trusted: `y` trusts it and the swarm starts, `n` or Esc
    /// starts nothing.
    SwarmTrust,
}

/// What a key press asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Nothing.
    None,
    /// Type a character.
    Insert(char),
    /// Start a new line in the composer.
    Newline,
    /// Delete before the cursor.
    Backspace,
    /// Delete under the cursor.
    Delete,
    /// Delete the word before the cursor.
    DeleteWord,
    /// Cursor moves.
    Left,
    /// See `Left`.
    Right,
    /// See `Left`.
    WordLeft,
    /// See `Left`.
    WordRight,
    /// See `Left`.
    Home,
    /// See `Left`.
    End,
    /// Line up, or history.
    Up,
    /// Line down, or history.
    Down,
    /// Completion menu highlight.
    MenuUp,
    /// See `MenuUp`.
    MenuDown,
    /// Put the highlighted completion in.
    Accept,
    /// Put the highlighted completion in, then send if it is a complete command.
    AcceptAndSubmit,
    /// Send the input (or queue it while a turn runs).
    Submit,
    /// Queue the input as the next message (Tab while a turn runs).
    Queue,
    /// Plan → Build → YOLO → Plan; the step into YOLO asks first.
    CycleMode,
    /// YOLO question: enter YOLO.
    EnterYolo,
    /// YOLO question: skip YOLO, on to Plan.
    SkipYolo,
    /// YOLO question: stay in the mode as it is.
    DeclineYolo,
    /// Next reasoning effort.
    CycleEffort,
    /// Close the menu.
    CloseMenu,
    /// Close the open panel or keys overlay.
    CloseOverlay,
    /// Cancel the running turn.
    Interrupt,
    /// Drop the newest queued draft.
    DiscardQueued,
    /// Empty the composer.
    ClearInput,
    /// Esc with nothing to cancel: a second Esc rewinds.
    ArmEsc,
    /// Open the rewind picker (Esc Esc).
    Rewind,
    /// Rewind picker: highlight another row (positive = down).
    RewindMove(i32),
    /// Rewind picker: choose the highlighted prompt, then the highlighted scope.
    RewindEnter,
    /// Rewind picker: back from the scopes to the prompts, or close.
    RewindBack,
    /// Ctrl-C with nothing to cancel: a second one exits.
    ArmQuit,
    /// Leave atto.
    Quit,
    /// Toggle the keys overlay.
    ToggleKeys,
    /// Scroll the transcript by lines (positive = older).
    Scroll(i32),
    /// Scroll by a page (positive = older).
    Page(i32),
    /// Back to the newest output.
    Bottom,
    /// Expand or fold the latest long tool output.
    ToggleFold,
    /// Show or hide the pending-plan panel.
    TogglePlan,
    /// Agents list: move the selection (positive = down).
    SelectAgent(i32),
    /// Agents list: open the selected subagent's transcript.
    OpenAgent,
    /// Approval: run it once.
    Approve,
    /// Approval: refuse, then type an optional reason.
    StartReason,
    /// Approval: refuse now, with no reason.
    Deny,
    /// Approval: always, for this session.
    AlwaysSession,
    /// Approval: always, for this project.
    AlwaysProject,
    /// Approval: edit the command, then run it.
    StartEdit,
    /// Approval: send what was typed (reason or command).
    DialogSubmit,
    /// Approval: stop typing, back to the letters.
    DialogBack,
    /// Decision: highlight another option (positive = down).
    DecisionMove(i32),
    /// Decision: choose option N (1-based) and send it.
    DecisionPick(usize),
    /// Decision: send the highlighted option.
    DecisionSubmit,
    /// Decision: close the dialog; the next line typed is the answer.
    DecisionDismiss,
    /// Show or hide the swarm overlay.
    ToggleSwarm,
    /// Swarm: run the plan shown (`true`) or decline it.
    SwarmConfirm(bool),
    /// Swarm: trust the swarm file shown (`true`) and start, or start nothing.
    SwarmTrust(bool),
    /// Swarm: stop its workers (it stays resumable).
    InterruptSwarm,
    /// Stuck swarm task: type guidance, then Enter retries with it.
    StartGuidance,
    /// Stuck swarm task: the person fixed it; check again.
    InterventionFixed,
    /// Stuck swarm task: skip it.
    InterventionSkip,
    /// Learning: keep it (validate).
    LearningValidate,
    /// Learning: drop it (reject).
    LearningReject,
    /// Learning: decide later (it stays proposed).
    LearningSkip,
}

/// Lines the mouse wheel scrolls per notch.
pub const WHEEL_LINES: i32 = 3;

/// The action for `key` in `cx`.
pub fn action(key: &KeyEvent, cx: &Context) -> Action {
    if key.kind == KeyEventKind::Release {
        return Action::None;
    }
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    let alt = key.modifiers.contains(KeyModifiers::ALT);
    let shift = key.modifiers.contains(KeyModifiers::SHIFT);
    // Keys that mean the same everywhere.
    match key.code {
        KeyCode::Char('c') if ctrl => return ctrl_c(cx),
        KeyCode::PageUp => return Action::Page(1),
        KeyCode::PageDown => return Action::Page(-1),
        _ => {}
    }
    match cx.dialog {
        Dialog::Choosing => return dialog_choice(key),
        Dialog::Typing => return dialog_typing(key, ctrl, alt),
        Dialog::Decision => return decision(key),
        Dialog::ConfirmYolo => return confirm_yolo(key),
        Dialog::Intervention => return intervention(key),
        Dialog::Learning => return learning(key),
        Dialog::Rewind => return rewind(key),
        Dialog::SwarmTrust => return swarm_trust(key),
        Dialog::Closed => {}
    }
    let list = cx.agents_list && cx.composer_empty && !cx.menu_open;
    let plan = cx.swarm_plan && cx.composer_empty && !cx.menu_open;
    match key.code {
        KeyCode::Enter | KeyCode::Char('y') if plan && !(alt || shift || ctrl) => {
            Action::SwarmConfirm(true)
        }
        KeyCode::Esc | KeyCode::Char('n') if plan && !(alt || ctrl) => Action::SwarmConfirm(false),
        KeyCode::Esc => esc(cx),
        KeyCode::Up if list => Action::SelectAgent(-1),
        KeyCode::Down if list => Action::SelectAgent(1),
        KeyCode::Enter if list && !(alt || shift) => Action::OpenAgent,
        KeyCode::Enter if alt || shift => Action::Newline,
        KeyCode::Char('j') if ctrl => Action::Newline,
        KeyCode::Enter if cx.menu_open => Action::AcceptAndSubmit,
        KeyCode::Enter => Action::Submit,
        KeyCode::Tab if cx.menu_open => Action::Accept,
        KeyCode::Tab if cx.turn_running && !cx.composer_empty => Action::Queue,
        KeyCode::Tab if cx.composer_empty => Action::CycleMode,
        KeyCode::BackTab => Action::CycleEffort,
        KeyCode::Tab => Action::None,
        KeyCode::Up if cx.menu_open => Action::MenuUp,
        KeyCode::Down if cx.menu_open => Action::MenuDown,
        KeyCode::Up => Action::Up,
        KeyCode::Down => Action::Down,
        KeyCode::Left if ctrl || alt => Action::WordLeft,
        KeyCode::Right if ctrl || alt => Action::WordRight,
        KeyCode::Left => Action::Left,
        KeyCode::Right => Action::Right,
        KeyCode::Home => Action::Home,
        KeyCode::End if ctrl => Action::Bottom,
        KeyCode::End => Action::End,
        KeyCode::Backspace if ctrl || alt => Action::DeleteWord,
        KeyCode::Backspace => Action::Backspace,
        KeyCode::Delete => Action::Delete,
        KeyCode::F(2) => Action::TogglePlan,
        KeyCode::F(3) => Action::ToggleSwarm,
        KeyCode::Char(c) if ctrl => match c {
            'a' => Action::Home,
            'e' => Action::End,
            'w' => Action::DeleteWord,
            'u' => Action::ClearInput,
            'o' => Action::ToggleFold,
            'p' => Action::TogglePlan,
            'd' if cx.composer_empty => Action::Quit,
            _ => Action::None,
        },
        KeyCode::Char('b') if alt => Action::WordLeft,
        KeyCode::Char('f') if alt => Action::WordRight,
        KeyCode::Char('?') if cx.composer_empty => Action::ToggleKeys,
        KeyCode::Char(c) => Action::Insert(c),
        _ => Action::None,
    }
}

/// Ctrl-C: cancel the turn, else stop the swarm, else clear, else exit on the second
/// press.
fn ctrl_c(cx: &Context) -> Action {
    if cx.turn_running {
        Action::Interrupt
    } else if cx.swarm_running {
        Action::InterruptSwarm
    } else if cx.dialog == Dialog::ConfirmYolo {
        Action::DeclineYolo
    } else if cx.dialog == Dialog::Typing {
        Action::DialogBack
    } else if !cx.composer_empty {
        Action::ClearInput
    } else if cx.ctrl_c_armed {
        Action::Quit
    } else {
        Action::ArmQuit
    }
}

/// Esc, the cancel stack: close the menu or overlay → cancel the running turn → discard a
/// queued draft → clear the input → (a second Esc on nothing) rewind.
fn esc(cx: &Context) -> Action {
    if cx.menu_open {
        Action::CloseMenu
    } else if cx.overlay_open {
        Action::CloseOverlay
    } else if cx.turn_running {
        Action::Interrupt
    } else if cx.queued && cx.composer_empty {
        Action::DiscardQueued
    } else if !cx.composer_empty {
        Action::ClearInput
    } else if cx.esc_armed {
        Action::Rewind
    } else {
        Action::ArmEsc
    }
}

fn dialog_choice(key: &KeyEvent) -> Action {
    match key.code {
        KeyCode::Char('y') => Action::Approve,
        KeyCode::Char('n') => Action::StartReason,
        KeyCode::Char('a') => Action::AlwaysSession,
        KeyCode::Char('A') => Action::AlwaysProject,
        KeyCode::Char('e') => Action::StartEdit,
        KeyCode::Esc => Action::Deny,
        KeyCode::Up => Action::Scroll(1),
        KeyCode::Down => Action::Scroll(-1),
        _ => Action::None,
    }
}

/// A stuck swarm task's letters; F3 still shows or hides the overlay behind it.
fn intervention(key: &KeyEvent) -> Action {
    match key.code {
        KeyCode::Char('g') => Action::StartGuidance,
        KeyCode::Char('f') => Action::InterventionFixed,
        KeyCode::Char('s') => Action::InterventionSkip,
        KeyCode::F(3) => Action::ToggleSwarm,
        _ => Action::None,
    }
}

/// The YOLO question: only `y` enters; Tab goes on round the cycle, so Tab pressed twice
/// for completion never lands in YOLO.
fn confirm_yolo(key: &KeyEvent) -> Action {
    match key.code {
        KeyCode::Char('y' | 'Y') => Action::EnterYolo,
        KeyCode::Tab => Action::SkipYolo,
        KeyCode::Esc | KeyCode::Char('n' | 'N') => Action::DeclineYolo,
        _ => Action::None,
    }
}

/// The swarm-trust question: only `y` trusts; anything that means no starts nothing.
fn swarm_trust(key: &KeyEvent) -> Action {
    match key.code {
        KeyCode::Char('y' | 'Y') => Action::SwarmTrust(true),
        KeyCode::Esc | KeyCode::Char('n' | 'N') => Action::SwarmTrust(false),
        _ => Action::None,
    }
}

/// The learning dialog: the seed's Y / N / S, in either case; Esc skips too.
fn learning(key: &KeyEvent) -> Action {
    match key.code {
        KeyCode::Char('y' | 'Y') => Action::LearningValidate,
        KeyCode::Char('n' | 'N') => Action::LearningReject,
        KeyCode::Char('s' | 'S') | KeyCode::Esc => Action::LearningSkip,
        _ => Action::None,
    }
}

/// The rewind picker: arrows (or j/k), Enter to choose, Esc to go back a step.
fn rewind(key: &KeyEvent) -> Action {
    match key.code {
        KeyCode::Up | KeyCode::Char('k') => Action::RewindMove(-1),
        KeyCode::Down | KeyCode::Char('j') => Action::RewindMove(1),
        KeyCode::Enter => Action::RewindEnter,
        KeyCode::Esc => Action::RewindBack,
        _ => Action::None,
    }
}

fn decision(key: &KeyEvent) -> Action {
    match key.code {
        KeyCode::Up => Action::DecisionMove(-1),
        KeyCode::Down => Action::DecisionMove(1),
        KeyCode::Char(c @ '1'..='9') => Action::DecisionPick(c as usize - '0' as usize),
        KeyCode::Enter => Action::DecisionSubmit,
        KeyCode::Esc => Action::DecisionDismiss,
        _ => Action::None,
    }
}

fn dialog_typing(key: &KeyEvent, ctrl: bool, alt: bool) -> Action {
    match key.code {
        KeyCode::Enter => Action::DialogSubmit,
        KeyCode::Esc => Action::DialogBack,
        KeyCode::Backspace if ctrl || alt => Action::DeleteWord,
        KeyCode::Backspace => Action::Backspace,
        KeyCode::Char('w') if ctrl => Action::DeleteWord,
        KeyCode::Char(c) if !ctrl => Action::Insert(c),
        _ => Action::None,
    }
}
