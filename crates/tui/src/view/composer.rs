//! Drawing the composer: the draft wrapped at the terminal width with the cursor placed,
//! only the rows around the cursor when the draft is taller than its cap (a 1 MB paste
//! costs a window, not the whole text), the queued drafts and the completion menu.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};

use super::{ComposerView, Theme};
use crate::view::text::{sanitize, truncate, width};

/// Bytes of draft on each side of the cursor laid out per frame.
const WINDOW: usize = 16 * 1024;
/// Completion rows shown at once.
const MENU_ROWS: usize = 8;

pub(super) struct Rendered {
    pub lines: Vec<Line<'static>>,
    /// Cursor (column, row) within the rendered lines.
    pub cursor: Option<(u16, u16)>,
}

/// The composer's rows (at most `cap`) for a terminal `cols` wide.
pub(super) fn render(view: &ComposerView<'_>, cols: usize, cap: usize, theme: Theme) -> Rendered {
    let prompt = Span::styled("› ", theme.user());
    let inner = cols.saturating_sub(2).max(1);
    if view.text.is_empty() {
        let hint = truncate(view.placeholder, inner);
        return Rendered {
            lines: vec![Line::from(vec![prompt, Span::styled(hint, theme.dim())])],
            cursor: Some((2, 0)),
        };
    }
    let cursor = view.text.floor_char_boundary(view.cursor);
    let start = view.text.floor_char_boundary(cursor.saturating_sub(WINDOW));
    let end = view.text.floor_char_boundary(cursor.saturating_add(WINDOW));
    let window = &view.text[start..end];
    let rel = cursor - start;

    let mut rows: Vec<String> = vec![String::new()];
    let mut col = 0usize;
    let mut at: Option<(usize, usize)> = None;
    for (i, c) in window.char_indices() {
        if i == rel {
            at = Some((rows.len() - 1, col));
        }
        if c == '\n' {
            rows.push(String::new());
            col = 0;
            continue;
        }
        let shown = if c == '\t' {
            "    ".into()
        } else {
            sanitize(c.encode_utf8(&mut [0; 4])).into_owned()
        };
        let w = width(&shown);
        if col + w > inner && col > 0 {
            rows.push(String::new());
            col = 0;
            if i == rel {
                at = Some((rows.len() - 1, 0));
            }
        }
        if let Some(row) = rows.last_mut() {
            row.push_str(&shown);
        }
        col += w;
    }
    let (mut crow, mut ccol) = at.unwrap_or((rows.len() - 1, col));
    if ccol >= inner {
        rows.push(String::new());
        crow = rows.len() - 1;
        ccol = 0;
    }
    let first = if rows.len() > cap {
        crow.saturating_sub(cap - 1)
    } else {
        0
    };
    let lines = rows
        .into_iter()
        .enumerate()
        .skip(first)
        .take(cap)
        .map(|(i, row)| {
            let lead = if i == 0 && start == 0 {
                prompt.clone()
            } else if i == first && (first > 0 || start > 0) {
                Span::styled("… ", theme.dim())
            } else {
                Span::raw("  ")
            };
            Line::from(vec![lead, Span::raw(row)])
        })
        .collect();
    let col = u16::try_from(ccol + 2).unwrap_or(u16::MAX);
    let row = u16::try_from(crow - first).unwrap_or(u16::MAX);
    Rendered {
        lines,
        cursor: Some((col, row)),
    }
}

/// Queued drafts, one row each, or one summary row when more than `budget` wait.
pub(super) fn queued(
    queued: &[String],
    budget: usize,
    cols: usize,
    theme: Theme,
) -> Vec<Line<'static>> {
    if queued.len() > budget {
        let text = format!(
            "{} drafts queued for when the turn ends · /queue lists them · Esc drops the last",
            queued.len()
        );
        return vec![Line::from(Span::styled(truncate(&text, cols), theme.dim()))];
    }
    queued
        .iter()
        .map(|draft| {
            let first = draft.lines().next().unwrap_or("");
            let text = format!("queued: {}", sanitize(first));
            Line::from(Span::styled(truncate(&text, cols), theme.dim()))
        })
        .collect()
}

/// The completion menu, at the bottom of `area` (just above the composer), on rows of its
/// own: what they held is cleared across the full width.
pub(super) fn draw_menu(frame: &mut Frame<'_>, area: Rect, view: &ComposerView<'_>, theme: Theme) {
    let rows = view
        .completions
        .len()
        .min(MENU_ROWS)
        .min(usize::from(area.height));
    if rows == 0 {
        return;
    }
    let selected = view.selected.min(view.completions.len() - 1);
    let first = (selected + 1).saturating_sub(rows);
    let w = usize::from(area.width.min(72));
    let name_w = view
        .completions
        .iter()
        .map(|(insert, _)| width(insert))
        .max()
        .unwrap_or(0)
        .min(w / 2);
    let lines: Vec<Line<'static>> = view
        .completions
        .iter()
        .enumerate()
        .skip(first)
        .take(rows)
        .map(|(i, (insert, hint))| {
            let name = truncate(&sanitize(insert), name_w);
            let gap = name_w.saturating_sub(width(&name));
            let pad = w.saturating_sub(name_w + 3);
            let hint = truncate(&sanitize(hint), pad);
            let text = format!(" {name}{:gap$}  {hint:<pad$}", "");
            let style = if i == selected {
                theme.selected()
            } else {
                theme.text()
            };
            Line::from(vec![Span::styled(text, style)])
        })
        .collect();
    let h = u16::try_from(rows).unwrap_or(1);
    let rows = Rect {
        x: area.x,
        y: area.y + area.height - h,
        width: area.width,
        height: h,
    };
    // The whole rows, not just the menu's width: transcript text cut off beside the menu
    // reads as fragments of something else.
    frame.render_widget(Clear, rows);
    let menu = Rect {
        width: u16::try_from(w).unwrap_or(area.width),
        ..rows
    };
    frame.render_widget(Paragraph::new(lines), menu);
}
