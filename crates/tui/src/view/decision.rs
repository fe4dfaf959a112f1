//! The decision dialog, drawn over the transcript like the approval dialog: a plan step's
//! question, its numbered options with the highlighted one marked, and the key legend.
//! Options that do not fit are windowed around the highlight, with counts above and below.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::app::{App, DecisionDialog};
use crate::view::Theme;
use crate::view::text::wrap;

/// Draws `app.decision` (if any) centred in `area`.
pub fn draw(frame: &mut Frame<'_>, area: Rect, app: &App) {
    let Some(dialog) = &app.decision else {
        return;
    };
    if area.width < 4 || area.height < 3 {
        return;
    }
    let theme = app.theme();
    let outer_w = area.width.min(80);
    let inner_w = usize::from(outer_w - 2).max(1);
    let room = usize::from(area.height - 2);
    let body = body(dialog, inner_w, room, theme);
    let title = Line::from(vec![
        Span::styled(" DECIDE ", theme.risk("WARN")),
        Span::raw(format!(" step {} ", dialog.number)),
    ]);
    super::popup(frame, area, outer_w, title, body, theme);
}

/// The question, the options (windowed to fit `room` rows with the rest) and the legend.
fn body(dialog: &DecisionDialog, width: usize, room: usize, theme: Theme) -> Vec<Line<'static>> {
    let mut head = wrap(
        &[Span::styled(dialog.question.clone(), theme.heading())],
        width,
        &[],
        &[],
    );
    head.push(Line::default());
    let legend = legend(width, theme);
    let options: Vec<Vec<Line<'static>>> = dialog
        .options
        .iter()
        .enumerate()
        .map(|(i, option)| {
            let chosen = i == dialog.selected;
            let (marker, style) = if chosen {
                ("› ", theme.selected())
            } else {
                ("  ", theme.text())
            };
            let spans = [Span::styled(format!("{}. {option}", i + 1), style)];
            wrap(
                &spans,
                width,
                &[Span::styled(marker, theme.key())],
                &[Span::raw("     ")],
            )
        })
        .collect();
    let total: usize = options.iter().map(Vec::len).sum();
    // The question gives way first, then the blank line, so the options stay visible.
    let mut fixed = legend.len() + 1;
    if total + fixed + head.len() <= room {
        let mut out = head;
        out.extend(options.into_iter().flatten());
        out.push(Line::default());
        out.extend(legend);
        return out;
    }
    fixed = legend.len();
    let head_room = room.saturating_sub(fixed + total.min(3)).min(head.len());
    let mut out: Vec<Line<'static>> = head.into_iter().take(head_room).collect();
    let left = room.saturating_sub(out.len() + fixed).max(1);
    out.extend(window(&options, dialog.selected, left, theme));
    out.extend(legend);
    out.truncate(room.max(1));
    out
}

/// Options around the selected one, in at most `room` rows, marking what is cut (the
/// rewind picker's rows too).
pub(super) fn window(
    options: &[Vec<Line<'static>>],
    selected: usize,
    room: usize,
    theme: Theme,
) -> Vec<Line<'static>> {
    let total: usize = options.iter().map(Vec::len).sum();
    if total <= room {
        return options.iter().flatten().cloned().collect();
    }
    // Show whole options from the selected one outwards, keeping two rows for markers.
    let body = room.saturating_sub(2).max(1);
    let (mut lo, mut hi) = (selected, selected + 1);
    let mut used = options.get(selected).map_or(0, Vec::len);
    loop {
        let grew_down = hi < options.len() && used + options[hi].len() <= body;
        if grew_down {
            used += options[hi].len();
            hi += 1;
        }
        let grew_up = lo > 0 && used + options[lo - 1].len() <= body;
        if grew_up {
            lo -= 1;
            used += options[lo].len();
        }
        if !grew_down && !grew_up {
            break;
        }
    }
    let mut out = Vec::with_capacity(room);
    if lo > 0 && room >= 3 {
        out.push(Line::from(Span::styled(
            format!("  ↑ {lo} more"),
            theme.dim(),
        )));
    }
    out.extend(options[lo..hi].iter().flatten().take(body).cloned());
    if hi < options.len() && room >= 2 {
        out.push(Line::from(Span::styled(
            format!("  ↓ {} more", options.len() - hi),
            theme.dim(),
        )));
    }
    out
}

fn legend(width: usize, theme: Theme) -> Vec<Line<'static>> {
    let key = |k: &'static str| Span::styled(k, theme.key());
    let text = |t: &'static str| Span::raw(t);
    let spans = [
        key("↑/↓"),
        text(" choose · "),
        key("Enter"),
        text(" confirm · "),
        key("1-9"),
        text(" pick · "),
        key("Esc"),
        text(" dismiss (type the choice instead)"),
    ];
    wrap(&spans, width, &[], &[])
}
