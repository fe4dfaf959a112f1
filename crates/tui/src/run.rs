//! The event loop: owns the terminal, waits on key presses, engine events, a swarm's
//! events (`swarm`), resizes and signals in one `select!`, and redraws only when something
//! visible changed. While a
//! turn runs a light tick keeps the elapsed time moving; when idle nothing wakes the loop,
//! so it costs no CPU. Nothing here touches the disk or the network: the engine does
//! that behind the `AgentHandle`, and the `@path` index is built on its own thread.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use atto_present::commands::{self, Command, State};
use atto_protocol::AgentHandle;
use atto_protocol::swarm::{SwarmEvent, SwarmInput};
use atto_protocol::{Event, Op};
use crossterm::event::{Event as TermEvent, EventStream, MouseEventKind};
use futures_util::{FutureExt, StreamExt};
use tokio::signal::unix::{Signal, SignalKind, signal};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};

use crate::app::{App, AppInfo, Panel};
use crate::composer::Composer;
use crate::composer::files::FileIndex;
use crate::keys::{self, WHEEL_LINES};
use crate::term::Term;
use crate::view::{self, ComposerView};

mod act;
mod swarm;

/// The composer's text when nothing is typed; also how a launch benchmark knows the
/// interface is ready.
pub const PLACEHOLDER: &str = "Ask atto · / commands · @ files · ? keys";

/// Most engine events folded in before a frame is drawn, so a flood of deltas cannot
/// starve key presses.
const MAX_EVENTS_PER_FRAME: usize = 1024;
/// How often the screen refreshes while a turn runs (elapsed time, spinner).
const TICK: Duration = Duration::from_millis(250);
/// How long, after leaving, atto waits for the session to finish saving.
const SHUTDOWN_WAIT: Duration = Duration::from_secs(5);

/// Starts a swarm on a task for `/swarm "task"`: its events, and the channel for the
/// person's answers. Built by the binary (the coordinator needs the session's flags,
/// config and models); `Err` says why it could not start.
pub type SwarmLauncher = Arc<
    dyn Fn(String) -> Result<(UnboundedReceiver<SwarmEvent>, UnboundedSender<SwarmInput>), String>
        + Send
        + Sync,
>;

/// How to start the interface.
pub struct TuiOptions {
    /// A prompt to send as soon as the session is up.
    pub first_prompt: Option<String>,
    /// Whether trust mode starts on (for `/trust` toggling).
    pub trust: bool,
    /// What the status line shows before the engine says more.
    pub info: AppInfo,
    /// The workspace root, indexed for `@path` completion.
    pub workspace: PathBuf,
    /// Said first in the transcript (what the launch did, e.g. a fork).
    pub notice: Option<String>,
    /// Starts swarms for `/swarm "task"`; `None`: this front end cannot.
    pub swarm: Option<SwarmLauncher>,
}

/// Why the interface stopped early.
#[derive(Debug, thiserror::Error)]
pub enum TuiError {
    /// The terminal could not be set up, read or drawn on.
    #[error("terminal error: {0} (try `atto --plain` for the line session)")]
    Terminal(#[from] std::io::Error),
}

/// The interface's state between events.
struct Ui {
    app: App,
    composer: Composer,
    ops: atto_protocol::OpSender,
    /// What the slash-command parser needs to know (trust, mode).
    state: State,
    esc_armed: bool,
    ctrl_c_armed: bool,
    quit: bool,
    /// Starts swarms (`/swarm "task"`).
    launcher: Option<SwarmLauncher>,
    /// The running swarm's answers channel.
    swarm_input: Option<UnboundedSender<SwarmInput>>,
    /// A just-launched swarm's events, handed to the loop after the key that started it.
    swarm_started: Option<UnboundedReceiver<SwarmEvent>>,
}

/// Runs the full-screen interface until `/exit`, a second Ctrl-C, a signal, or the end of
/// the session. The terminal is restored on every way out.
pub async fn run(mut handle: AgentHandle, mut opts: TuiOptions) -> Result<(), TuiError> {
    let first_prompt = opts.first_prompt.take();
    let mut ui = Ui::new(handle.op_sender(), opts);
    let mut term = Term::enter()?;
    let mut input = EventStream::new();
    let mut terminate = signal(SignalKind::terminate()).ok();
    let mut hangup = signal(SignalKind::hangup()).ok();
    let mut interrupt = signal(SignalKind::interrupt()).ok();
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    if let Some(prompt) = first_prompt {
        ui.send_prompt(prompt);
    }
    draw(&mut term, &mut ui)?;
    let mut session_ended = false;
    let mut swarm_events: Option<UnboundedReceiver<SwarmEvent>> = None;
    while !ui.quit {
        if let Some(events) = ui.swarm_started.take() {
            swarm_events = Some(events);
        }
        let dirty = tokio::select! {
            event = input.next() => match event {
                Some(Ok(event)) => ui.on_input(event),
                Some(Err(err)) => return Err(err.into()),
                None => break,
            },
            event = handle.next_event() => match event {
                Some(event) => {
                    let batch = ui.on_engine_batch(&event, &mut handle);
                    session_ended = batch.session_ended;
                    batch.dirty
                }
                None => {
                    session_ended = true;
                    false
                }
            },
            event = swarm::next(&mut swarm_events) => match event {
                Some(event) => ui.on_swarm_batch(&event, &mut swarm_events),
                None => {
                    swarm_events = None;
                    ui.swarm_closed();
                    true
                }
            },
            _ = tick.tick(), if ui.app.turn_running() => true,
            // SIGINT from outside (the terminal's Ctrl-C arrives as a key in raw mode).
            () = recv(&mut interrupt) => ui.on_interrupt_signal(),
            () = recv(&mut terminate) => { ui.quit = true; false }
            () = recv(&mut hangup) => { ui.quit = true; false }
        };
        if session_ended {
            break;
        }
        if dirty && !ui.quit {
            draw(&mut term, &mut ui)?;
        }
    }
    leave(&ui, term, handle, swarm_events).await;
    Ok(())
}

/// Stops the turn and the session, restores the terminal, then waits (bounded) for a
/// running swarm and the session to finish saving.
async fn leave(
    ui: &Ui,
    term: Term,
    mut handle: AgentHandle,
    swarm_events: Option<UnboundedReceiver<SwarmEvent>>,
) {
    if ui.app.turn_running() {
        let _ = ui.ops.submit(Op::Interrupt);
    }
    let _ = ui.ops.submit(Op::Shutdown);
    drop(term);
    // A swarm still running stops its workers and saves its state, resumable.
    if let Some(mut events) = swarm_events.filter(|_| ui.app.swarm_running()) {
        if let Some(input) = &ui.swarm_input {
            let _ = input.send(SwarmInput::Interrupt);
        }
        let _ = tokio::time::timeout(SHUTDOWN_WAIT, async {
            while events.recv().await.is_some() {}
        })
        .await;
    }
    // Let the session finish saving; its last words are no longer shown.
    let _ = tokio::time::timeout(SHUTDOWN_WAIT, async {
        while handle.next_event().await.is_some() {}
    })
    .await;
}

/// What folding in a batch of engine events did.
struct EngineBatch {
    /// The screen must be redrawn.
    dirty: bool,
    /// The session's event stream closed.
    session_ended: bool,
}

/// Waits for a signal, or forever when it could not be registered.
async fn recv(signal: &mut Option<Signal>) {
    match signal {
        Some(signal) => {
            if signal.recv().await.is_none() {
                std::future::pending::<()>().await;
            }
        }
        None => std::future::pending::<()>().await,
    }
}

fn draw(term: &mut Term, ui: &mut Ui) -> Result<(), TuiError> {
    let composer = &ui.composer;
    let view = ComposerView {
        text: composer.text(),
        cursor: composer.cursor(),
        completions: composer.completions(),
        selected: composer.selected(),
        queued: composer.queued(),
        placeholder: PLACEHOLDER,
    };
    let app = &mut ui.app;
    term.terminal()
        .draw(|frame| view::draw(frame, app, &view))?;
    Ok(())
}

impl Ui {
    /// The interface's state at launch, with the launch's notice said first.
    fn new(ops: atto_protocol::OpSender, opts: TuiOptions) -> Self {
        let mode = opts.info.mode;
        let mut ui = Ui {
            app: App::new(opts.info),
            composer: Composer::new(FileIndex::build(opts.workspace)),
            ops,
            state: State {
                trust: opts.trust,
                mode,
            },
            esc_armed: false,
            ctrl_c_armed: false,
            quit: false,
            launcher: opts.swarm,
            swarm_input: None,
            swarm_started: None,
        };
        if let Some(notice) = &opts.notice {
            ui.app.push_notice(notice);
        }
        ui
    }

    /// An engine event and everything already waiting behind it, folded in before one
    /// draw.
    fn on_engine_batch(&mut self, first: &Event, handle: &mut AgentHandle) -> EngineBatch {
        let mut dirty = self.on_engine(first);
        let mut session_ended = false;
        // Fold in everything already waiting, then draw once.
        for _ in 0..MAX_EVENTS_PER_FRAME {
            match handle.next_event().now_or_never() {
                Some(Some(event)) => dirty |= self.on_engine(&event),
                Some(None) => {
                    session_ended = true;
                    break;
                }
                None => break,
            }
        }
        EngineBatch {
            dirty,
            session_ended,
        }
    }

    /// A swarm event and everything already waiting behind it; true when the screen must
    /// be redrawn.
    fn on_swarm_batch(
        &mut self,
        first: &SwarmEvent,
        events: &mut Option<UnboundedReceiver<SwarmEvent>>,
    ) -> bool {
        let mut dirty = self.on_swarm(first);
        for _ in 0..MAX_EVENTS_PER_FRAME {
            match events.as_mut().map(UnboundedReceiver::try_recv) {
                Some(Ok(event)) => dirty |= self.on_swarm(&event),
                _ => break,
            }
        }
        dirty
    }

    /// SIGINT from outside: stops the turn, else the swarm, else leaves.
    fn on_interrupt_signal(&mut self) -> bool {
        if self.app.turn_running() {
            self.apply(keys::Action::Interrupt)
        } else if self.context().swarm_running {
            self.apply(keys::Action::InterruptSwarm)
        } else {
            self.quit = true;
            false
        }
    }

    /// A terminal event; true when the screen must be redrawn.
    fn on_input(&mut self, event: TermEvent) -> bool {
        match event {
            TermEvent::Key(key) => {
                let action = keys::action(&key, &self.context());
                self.esc_armed = false;
                self.ctrl_c_armed = false;
                self.apply(action)
            }
            TermEvent::Paste(text) => {
                self.paste(&text);
                true
            }
            TermEvent::Mouse(mouse) => match mouse.kind {
                MouseEventKind::ScrollUp => self.apply(keys::Action::Scroll(WHEEL_LINES)),
                MouseEventKind::ScrollDown => self.apply(keys::Action::Scroll(-WHEEL_LINES)),
                _ => false,
            },
            TermEvent::Resize(..) => true,
            TermEvent::FocusGained | TermEvent::FocusLost => false,
        }
    }

    /// An engine event; true when the screen must be redrawn.
    fn on_engine(&mut self, event: &Event) -> bool {
        match event {
            Event::ModeChanged { mode, .. } => self.state.mode = *mode,
            Event::TrustChanged { on } => self.state.trust = *on,
            _ => {}
        }
        let mut changed = self.app.on_event(event);
        // A rewound conversation gives its prompt back for editing.
        if let Event::Rewound { scope, text, .. } = event
            && *scope != atto_protocol::RewindScope::Code
        {
            self.composer.set_text(text);
        }
        // A dialog left open when its turn ended (cancelled while asking) answers nothing.
        if matches!(event, Event::TurnCompleted { .. })
            && self
                .app
                .approval
                .take_if(|d| d.swarm_task.is_none())
                .is_some()
        {
            changed = true;
        }
        if let Event::TurnCompleted { result, .. } = event
            && !result.files_changed.is_empty()
        {
            // The turn added or removed files: `@` should offer what is there now. A turn
            // that changed nothing costs no walk of a large workspace.
            self.composer.refresh_files();
        }
        if matches!(event, Event::TurnCompleted { .. })
            && !self.app.turn_running()
            && let Some(next) = self.composer.pop_queued()
        {
            self.send_prompt(next);
            changed = true;
        }
        changed
    }

    fn context(&self) -> keys::Context {
        let dialog = match &self.app.approval {
            None if self.app.intervention().is_some() => {
                if self.app.swarm().is_some_and(|s| s.guidance.is_some()) {
                    keys::Dialog::Typing
                } else {
                    keys::Dialog::Intervention
                }
            }
            None if self.app.decision.is_some() => keys::Dialog::Decision,
            None if self.app.rewind.is_some() => keys::Dialog::Rewind,
            None if self.app.yolo_confirm_open() => keys::Dialog::ConfirmYolo,
            None if self.app.learning_review().is_some() => keys::Dialog::Learning,
            None if self.app.swarm_trust_question().is_some() => keys::Dialog::SwarmTrust,
            None => keys::Dialog::Closed,
            Some(d) if d.input.is_some() => keys::Dialog::Typing,
            Some(_) => keys::Dialog::Choosing,
        };
        keys::Context {
            dialog,
            menu_open: self.composer.menu_open(),
            overlay_open: self.app.panel.is_some() || self.app.show_keys,
            agents_list: self.app.panel == Some(Panel::Agents) && !self.app.show_keys,
            swarm_plan: self.app.panel == Some(Panel::Swarm)
                && !self.app.show_keys
                && self.app.swarm_plan_waiting(),
            swarm_running: self
                .app
                .swarm()
                .is_some_and(|s| s.running() && s.phase != crate::app::Phase::Stopping),
            composer_empty: self.composer.is_empty(),
            turn_running: self.app.turn_running(),
            queued: !self.composer.queued().is_empty(),
            esc_armed: self.esc_armed,
            ctrl_c_armed: self.ctrl_c_armed,
        }
    }

    /// Sends the composer's text: a slash command, a queued draft while a turn runs, or a
    /// prompt.
    fn submit(&mut self) {
        let Some(text) = self.composer.submit() else {
            return;
        };
        if text.starts_with('/') {
            self.command(&text);
        } else if let Some((number, choice)) = self.app.answer_decision(&text) {
            // A step waits for its decision point: the line typed is the choice.
            self.app.push_user(&text);
            self.send(Op::PlanDecision { number, choice });
        } else if self.app.turn_running() {
            self.composer.queue(text);
        } else {
            self.send_prompt(text);
        }
    }

    fn send_prompt(&mut self, text: String) {
        self.app.push_user(&text);
        self.send(Op::UserInput { text });
    }

    fn send(&mut self, op: Op) {
        if self.ops.submit(op).is_err() {
            self.app.push_error(
                "the session has ended; nothing was sent. Press Ctrl-C twice to leave.",
            );
        }
    }

    /// A slash command, through the shared parser; `/queue` is answered here, `/swarm`
    /// starts or shows a swarm (`swarm`). A command
    /// whose answer a panel shows (`/agents` among them) opens that panel; `/agents` also
    /// shows what the events already told, before its answer arrives.
    fn command(&mut self, line: &str) {
        if line.split_whitespace().next() == Some("/swarm") {
            self.swarm_command(line);
            return;
        }
        if line.split_whitespace().next() == Some("/queue") {
            let queued = self.composer.queued();
            let text = if queued.is_empty() {
                "no drafts queued (Enter while a turn runs queues one)".to_owned()
            } else {
                let mut text = format!("{} queued:", queued.len());
                for (n, draft) in queued.iter().enumerate() {
                    text.push_str(&format!("\n  {}. {}", n + 1, first_line(draft)));
                }
                text
            };
            self.app.push_notice(&text);
            return;
        }
        match commands::parse(line, &self.state) {
            Ok(Command::Exit) => self.quit = true,
            Ok(Command::Help) => self.app.push_help(),
            Ok(Command::Op(op)) => {
                let panel = match &op {
                    Op::ShowPlan => Some(Panel::Plan),
                    Op::ListThreads => Some(Panel::Threads),
                    Op::ListCheckpoints { .. } => Some(Panel::Checkpoints),
                    Op::ListGrants => Some(Panel::Grants),
                    Op::ListAgents => Some(Panel::Agents),
                    _ => None,
                };
                if panel.is_some() {
                    self.app.panel = panel;
                }
                if panel == Some(Panel::Agents) {
                    // Opens on the row last chosen, scrolled into view.
                    self.app.select_agent(0);
                }
                self.send(op);
            }
            Err(message) => self.app.push_notice(&message),
        }
    }
}

/// The first line of `text`, shortened for a one-line list.
fn first_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or("");
    let mut short: String = line.chars().take(70).collect();
    if short.len() < line.len() || text.lines().nth(1).is_some() {
        short.push('…');
    }
    short
}
