//! The terminal itself: raw mode, the alternate screen, bracketed paste and mouse capture,
//! and putting all of it back. Restoring happens on drop, from a panic hook (before the
//! panic message prints, so it is readable), and when `run` sees SIGTERM or SIGHUP. This
//! module draws nothing and reads no input.

use std::io::{self, Stdout, Write};
use std::sync::Once;
use std::sync::atomic::{AtomicBool, Ordering};

use crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture,
    KeyboardEnhancementFlags, PopKeyboardEnhancementFlags, PushKeyboardEnhancementFlags,
};
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use crossterm::{cursor, execute};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;

/// The ratatui terminal atto draws on.
pub type Backend = CrosstermBackend<Stdout>;

/// Whether the terminal is in atto's full-screen state, so restoring twice is harmless.
static ACTIVE: AtomicBool = AtomicBool::new(false);
static PANIC_HOOK: Once = Once::new();

/// The terminal in full-screen mode; restores it when dropped.
pub struct Term {
    terminal: Terminal<Backend>,
}

impl Term {
    /// Enters raw mode and the alternate screen, with bracketed paste and mouse capture.
    /// On failure the terminal is put back before the error returns.
    pub fn enter() -> io::Result<Term> {
        install_panic_hook();
        ACTIVE.store(true, Ordering::SeqCst);
        let entered = enable_raw_mode().and_then(|()| {
            execute!(
                io::stdout(),
                EnterAlternateScreen,
                EnableBracketedPaste,
                EnableMouseCapture
            )
        });
        if let Err(err) = entered {
            restore();
            return Err(err);
        }
        // Terminals that speak the kitty keyboard protocol then report Shift+Enter apart
        // from Enter; the others ignore the request (Alt+Enter works everywhere). Not
        // asking first whether it is supported: that query can wait on a silent terminal.
        let _ = execute!(
            io::stdout(),
            PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES)
        );
        match Terminal::new(CrosstermBackend::new(io::stdout())) {
            Ok(terminal) => Ok(Term { terminal }),
            Err(err) => {
                restore();
                Err(err)
            }
        }
    }

    /// The ratatui terminal, to draw frames on.
    pub fn terminal(&mut self) -> &mut Terminal<Backend> {
        &mut self.terminal
    }
}

impl Drop for Term {
    fn drop(&mut self) {
        restore();
    }
}

/// Puts the terminal back as it was: cooked mode, main screen, no paste brackets, no mouse
/// reports, a visible cursor. Safe to call any number of times, from any thread.
pub fn restore() {
    if !ACTIVE.swap(false, Ordering::SeqCst) {
        return;
    }
    let mut out = io::stdout();
    // Every step is attempted even if an earlier one fails: a half-restored terminal is
    // still better than none.
    let _ = execute!(out, PopKeyboardEnhancementFlags);
    let _ = execute!(out, DisableMouseCapture);
    let _ = execute!(out, DisableBracketedPaste);
    let _ = execute!(out, LeaveAlternateScreen);
    let _ = execute!(out, cursor::Show);
    let _ = disable_raw_mode();
    let _ = out.flush();
}

/// Restores the terminal before the default hook prints the panic, so the message lands
/// on the normal screen in cooked mode.
fn install_panic_hook() {
    PANIC_HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore();
            previous(info);
        }));
    });
}
