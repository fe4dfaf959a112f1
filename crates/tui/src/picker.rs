//! The resume picker: `atto -r` with no id shows this workspace's saved sessions, newest
//! first, and returns the one chosen (↑/↓ or j/k, Enter; Esc or q cancels). It runs before
//! any session starts, on its own full screen; the caller lists the sessions (the store
//! is not read here) and starts the chosen one.

use crossterm::event::{Event as TermEvent, EventStream, KeyCode, KeyEvent, KeyEventKind};
use futures_util::StreamExt;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{List, ListItem, ListState, Paragraph};

use crate::run::TuiError;
use crate::term::Term;

/// One saved session as the picker lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionChoice {
    /// Session id (what `-r` takes).
    pub id: String,
    /// When it was last used, already formatted.
    pub updated: String,
    /// How many messages it holds.
    pub messages: i64,
    /// Its first prompt, or a stand-in.
    pub title: String,
}

/// What a key did to the picker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Still choosing.
    Pending,
    /// This session id was chosen.
    Chosen(String),
    /// The user backed out.
    Cancelled,
}

/// The picker's state: the list and the highlight.
pub struct Picker {
    title: String,
    items: Vec<SessionChoice>,
    state: ListState,
}

impl Picker {
    /// A picker over `items` (newest first), the first one highlighted.
    pub fn new(title: &str, items: Vec<SessionChoice>) -> Picker {
        let mut state = ListState::default();
        state.select((!items.is_empty()).then_some(0));
        Picker {
            title: title.to_owned(),
            items,
            state,
        }
    }

    /// The highlighted row.
    pub fn selected(&self) -> Option<usize> {
        self.state.selected()
    }

    /// Applies one key press.
    pub fn on_key(&mut self, key: &KeyEvent) -> Outcome {
        if key.kind == KeyEventKind::Release {
            return Outcome::Pending;
        }
        let last = self.items.len().saturating_sub(1);
        let at = self.state.selected().unwrap_or(0);
        match key.code {
            KeyCode::Esc | KeyCode::Char('q') => return Outcome::Cancelled,
            KeyCode::Char('c')
                if key
                    .modifiers
                    .contains(crossterm::event::KeyModifiers::CONTROL) =>
            {
                return Outcome::Cancelled;
            }
            KeyCode::Enter => {
                return self
                    .items
                    .get(at)
                    .map_or(Outcome::Cancelled, |c| Outcome::Chosen(c.id.clone()));
            }
            KeyCode::Up | KeyCode::Char('k') => self.state.select(Some(at.saturating_sub(1))),
            KeyCode::Down | KeyCode::Char('j') => self.state.select(Some((at + 1).min(last))),
            KeyCode::Home => self.state.select(Some(0)),
            KeyCode::End => self.state.select(Some(last)),
            KeyCode::PageUp => self.state.select(Some(at.saturating_sub(10))),
            KeyCode::PageDown => self.state.select(Some((at + 10).min(last))),
            _ => {}
        }
        Outcome::Pending
    }

    /// Draws the list, a title line and a key hint.
    pub fn draw(&mut self, frame: &mut Frame<'_>) {
        let [head, body, foot] = Layout::vertical([
            Constraint::Length(1),
            Constraint::Min(0),
            Constraint::Length(1),
        ])
        .areas(frame.area());
        frame.render_widget(
            Paragraph::new(Line::from(Span::styled(
                self.title.clone(),
                Style::default().add_modifier(Modifier::BOLD),
            ))),
            head,
        );
        let rows: Vec<ListItem<'_>> = self
            .items
            .iter()
            .map(|c| {
                let short: String = c.id.chars().take(13).collect();
                ListItem::new(Line::from(vec![
                    Span::raw(format!("{short}  {}  {:>5} msgs  ", c.updated, c.messages)),
                    Span::styled(
                        c.title.replace(['\n', '\r'], " "),
                        Style::default().add_modifier(Modifier::BOLD),
                    ),
                ]))
            })
            .collect();
        let list = List::new(rows)
            .highlight_style(Style::default().add_modifier(Modifier::REVERSED))
            .highlight_symbol("> ");
        frame.render_stateful_widget(list, body, &mut self.state);
        frame.render_widget(
            Paragraph::new("↑/↓ choose · Enter resume · Esc cancel"),
            foot,
        );
    }
}

/// Shows the picker full screen until a session is chosen (`Some(id)`) or the user backs
/// out (`None`). With no sessions it returns `None` without touching the terminal.
pub async fn pick(title: &str, items: Vec<SessionChoice>) -> Result<Option<String>, TuiError> {
    if items.is_empty() {
        return Ok(None);
    }
    let mut picker = Picker::new(title, items);
    let mut term = Term::enter()?;
    let mut input = EventStream::new();
    term.terminal().draw(|f| picker.draw(f))?;
    while let Some(event) = input.next().await {
        match event? {
            TermEvent::Key(key) => match picker.on_key(&key) {
                Outcome::Pending => {}
                Outcome::Chosen(id) => return Ok(Some(id)),
                Outcome::Cancelled => return Ok(None),
            },
            TermEvent::Resize(..) => {}
            _ => continue,
        }
        term.terminal().draw(|f| picker.draw(f))?;
    }
    Ok(None)
}
