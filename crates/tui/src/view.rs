//! Draws the whole screen from an `App` and the composer's state: the transcript (only its
//! visible slice), an optional panel, the queued drafts, the composer with its completion
//! menu, the status line, and the approval dialog, a swarm task's intervention, decision,
//! YOLO question, rewind picker or keys help as overlays.
//!
//! Layout compacts on small terminals (the seeds' small-screen behaviour): the status line
//! sheds facts, queued drafts collapse to one summary row, the composer's cap shrinks, and
//! panels give way, so the transcript, composer and status line stay visible down to a
//! few rows. Never mutates what the app means, only its render caches and scroll clamps.

pub mod steps;
pub mod text;
pub mod theme;

mod composer;
mod confirm;
mod decision;
pub mod intervention;
mod learning;
mod rewind;
mod swarm_trust;

pub use theme::Theme;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use crate::app::App;

/// What the composer shows; owned by the input side, read here.
#[derive(Debug, Clone, Copy)]
pub struct ComposerView<'a> {
    /// The draft.
    pub text: &'a str,
    /// Byte offset of the cursor in `text`.
    pub cursor: usize,
    /// Completion menu rows: (text to insert, hint).
    pub completions: &'a [(String, String)],
    /// The highlighted completion.
    pub selected: usize,
    /// Drafts waiting for the running turn to end.
    pub queued: &'a [String],
    /// Shown dim while the draft is empty.
    pub placeholder: &'a str,
}

/// Width at which a panel moves to the side of the transcript.
const SIDE_PANEL_MIN_WIDTH: u16 = 110;

/// Draws one frame.
pub fn draw(frame: &mut Frame<'_>, app: &mut App, composer: &ComposerView<'_>) {
    let area = frame.area();
    if area.width < 8 || area.height < 2 {
        let msg = text::truncate("terminal too small", usize::from(area.width));
        frame.render_widget(Paragraph::new(msg), area);
        return;
    }
    let theme = app.theme();
    let mut rest = area;
    // Status line: the bottom row.
    let status_row = take_bottom(&mut rest, 1);
    frame.render_widget(
        Paragraph::new(crate::status::line(app, area.width)),
        status_row,
    );

    // Composer: grows with its lines, capped by the height.
    let cap = usize::from((area.height / 3).clamp(1, 10));
    let input = composer::render(composer, usize::from(area.width), cap, theme);
    let rule = area.height >= 12;
    let comp_h = u16::try_from(input.lines.len()).unwrap_or(1) + u16::from(rule);
    let comp_h = comp_h.min(rest.height.saturating_sub(1).max(1));
    let comp_area = take_bottom(&mut rest, comp_h);

    // Queued drafts: listed when there is room, else one summary row.
    if !composer.queued.is_empty() && rest.height >= 3 {
        let budget = usize::from(rest.height / 4).max(1);
        let rows = composer::queued(composer.queued, budget, usize::from(area.width), theme);
        let h = u16::try_from(rows.len()).unwrap_or(1);
        let q = take_bottom(&mut rest, h);
        frame.render_widget(Paragraph::new(rows), q);
    }

    let above = rest;
    let transcript_area = place_panel(frame, app, area, rest);
    if transcript_area.height > 0 {
        draw_transcript(frame, app, transcript_area);
    }
    let text_area = draw_composer(frame, comp_area, rule, input.lines, theme);
    if !composer.completions.is_empty() {
        composer::draw_menu(frame, above, composer, theme);
    }
    // Dialogs cover everything but the status line: they take the keys while open.
    let over = Rect {
        height: area.height - 1,
        ..area
    };
    if !draw_overlay(frame, app, over, above)
        && let Some((col, row)) = input.cursor
        && row < text_area.height
    {
        frame.set_cursor_position((text_area.x + col, text_area.y + row));
    }
}

/// Draws the open panel beside or below the transcript (on a very short screen in its
/// place) and gives back what is left for the transcript.
fn place_panel(frame: &mut Frame<'_>, app: &mut App, area: Rect, rest: Rect) -> Rect {
    let mut transcript_area = rest;
    if let Some(panel) = app.panel {
        let panel_area = if area.width >= SIDE_PANEL_MIN_WIDTH {
            let w = rest.width * 2 / 5;
            transcript_area.width -= w;
            Rect {
                x: rest.x + rest.width - w,
                width: w,
                ..rest
            }
        } else if rest.height >= 10 {
            // As tall as its content, leaving the transcript at least a third.
            let content =
                crate::panels::lines(app, panel, usize::from(rest.width.saturating_sub(2)));
            let want = u16::try_from(content.len() + 2).unwrap_or(u16::MAX);
            let h = want.min(rest.height - rest.height / 3).max(3);
            take_bottom(&mut transcript_area, h)
        } else {
            transcript_area.height = 0;
            rest
        };
        crate::panels::draw(frame, panel_area, app, panel);
    }
    transcript_area
}

/// The transcript's visible slice, with the new-lines marker while scrolled up.
fn draw_transcript(frame: &mut Frame<'_>, app: &mut App, transcript_area: Rect) {
    app.set_page(transcript_area.height);
    let (transcript, scroll, theme) = app.transcript_mut();
    let lines = transcript.visible(
        usize::from(transcript_area.width),
        usize::from(transcript_area.height),
        scroll,
        theme,
    );
    frame.render_widget(Paragraph::new(lines), transcript_area);
    new_lines_marker(frame, transcript_area, app.new_lines(), theme);
}

/// The composer's rule (when there is room for it) and its text; gives back where the
/// text went, for the cursor.
fn draw_composer(
    frame: &mut Frame<'_>,
    comp_area: Rect,
    rule: bool,
    lines: Vec<Line<'static>>,
    theme: Theme,
) -> Rect {
    if rule {
        let line = "─".repeat(usize::from(comp_area.width));
        frame.render_widget(
            Paragraph::new(Line::from(Span::styled(line, theme.border()))),
            Rect {
                height: 1,
                ..comp_area
            },
        );
    }
    let text_area = Rect {
        y: comp_area.y + u16::from(rule),
        height: comp_area.height - u16::from(rule),
        ..comp_area
    };
    frame.render_widget(Paragraph::new(lines), text_area);
    text_area
}

/// The one overlay that is open, most urgent first (the keys help over the screen above
/// the composer); false when none is, and the composer has the cursor.
fn draw_overlay(frame: &mut Frame<'_>, app: &mut App, over: Rect, above: Rect) -> bool {
    if app.approval.is_some() {
        crate::dialog::draw(frame, over, app);
    } else if app.intervention().is_some() {
        intervention::draw(frame, over, app);
    } else if app.decision.is_some() {
        decision::draw(frame, over, app);
    } else if app.rewind.is_some() {
        rewind::draw(frame, over, app);
    } else if app.yolo_confirm_open() {
        confirm::draw(frame, over, app);
    } else if app.learning_review().is_some() {
        learning::draw(frame, over, app);
    } else if app.swarm_trust_question().is_some() {
        swarm_trust::draw(frame, over, app);
    } else if app.show_keys {
        draw_keys(frame, above, app.theme());
    } else {
        return false;
    }
    true
}

/// "↓ N new lines" on the transcript's last row, right-aligned, while scrolled up and
/// output arrived below.
fn new_lines_marker(frame: &mut Frame<'_>, area: Rect, new: usize, theme: Theme) {
    if new == 0 || area.height == 0 {
        return;
    }
    let plural = if new == 1 { "" } else { "s" };
    let full = format!(" ↓ {new} new line{plural} · Ctrl-End follows ");
    let short = format!(" ↓ {new} new ");
    let label = [full, short]
        .into_iter()
        .find(|l| text::width(l) <= usize::from(area.width))
        .unwrap_or_default();
    let w = u16::try_from(text::width(&label)).unwrap_or(area.width);
    if w == 0 {
        return;
    }
    let rect = Rect {
        x: area.x + area.width - w,
        y: area.y + area.height - 1,
        width: w,
        height: 1,
    };
    frame.render_widget(Clear, rect);
    frame.render_widget(
        Paragraph::new(Line::from(Span::styled(label, theme.selected()))),
        rect,
    );
}

/// Takes `h` rows off the bottom of `area`.
fn take_bottom(area: &mut Rect, h: u16) -> Rect {
    let h = h.min(area.height);
    area.height -= h;
    Rect {
        y: area.y + area.height,
        height: h,
        ..*area
    }
}

/// The keys, as `?` shows them.
const KEYS: &[(&str, &str)] = &[
    ("Enter", "send (queues while a turn runs)"),
    ("Shift/Alt+Enter", "new line"),
    ("Tab", "complete, or cycle Plan → Build → YOLO (asks)"),
    ("Shift+Tab", "cycle reasoning effort"),
    (
        "Esc",
        "close menu · cancel turn · drop queued draft · clear",
    ),
    ("Esc Esc", "rewind to before a prompt (/rewind)"),
    ("Ctrl-C", "cancel the turn, stop the swarm; twice quits"),
    ("↑ / ↓", "history"),
    ("PgUp / PgDn", "scroll (mouse wheel too)"),
    ("Ctrl-O", "expand or fold tool output"),
    ("F2 / Ctrl-P", "pending-plan panel"),
    ("F3", "swarm overlay (/swarm); Enter/y runs its plan"),
    (
        "↑ ↓ Enter",
        "in /agents: choose a subagent, open its transcript",
    ),
    ("/queue", "show queued drafts"),
    ("y n a A e", "answer an approval"),
    ("g f s", "a stuck swarm task: guidance, fixed, skip"),
    ("y n s", "a proposed learning: validate, reject, skip"),
];

/// The keys as text, one "  key   what it does" row each, for `/help`.
pub fn keys_text() -> String {
    let width = KEYS.iter().map(|(k, _)| text::width(k)).max().unwrap_or(0);
    KEYS.iter()
        .map(|(k, what)| format!("  {k:<width$}  {what}"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn draw_keys(frame: &mut Frame<'_>, area: Rect, theme: Theme) {
    let w = area.width.min(64);
    let h = (u16::try_from(KEYS.len()).unwrap_or(u16::MAX) + 2).min(area.height);
    if w < 10 || h < 3 {
        return;
    }
    let inner = usize::from(w - 2);
    let lines: Vec<Line<'static>> = KEYS
        .iter()
        .map(|(k, what)| {
            let key = format!("{k:<16}");
            let rest = text::truncate(what, inner.saturating_sub(16));
            Line::from(vec![Span::styled(key, theme.key()), Span::raw(rest)])
        })
        .collect();
    popup(
        frame,
        area,
        w,
        Line::from(" keys · Esc closes "),
        lines,
        theme,
    );
}

/// Draws `body` in a bordered box titled `title`, `width` wide (at most `area`'s) and as
/// tall as the body (at most `area`'s height), centred in `area` over what lies below.
pub(crate) fn popup(
    frame: &mut Frame<'_>,
    area: Rect,
    width: u16,
    title: Line<'static>,
    body: Vec<Line<'static>>,
    theme: Theme,
) {
    let height = u16::try_from(body.len() + 2)
        .unwrap_or(u16::MAX)
        .min(area.height);
    let width = width.min(area.width);
    let rect = Rect {
        x: area.x + (area.width - width) / 2,
        y: area.y + (area.height - height) / 2,
        width,
        height,
    };
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.border())
        .title(title);
    frame.render_widget(Clear, rect);
    frame.render_widget(Paragraph::new(body).block(block), rect);
}
