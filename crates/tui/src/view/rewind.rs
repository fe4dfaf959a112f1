//! The rewind picker, drawn over the transcript like the decision dialog: first the
//! conversation's prompts (newest highlighted), then, for the chosen one, what goes back.
//! Rows that do not fit are windowed around the highlight.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::app::{App, RewindDialog, SCOPES, scope_label};
use crate::view::Theme;
use crate::view::text::wrap;

/// Draws `app.rewind` (if any) centred in `area`.
pub fn draw(frame: &mut Frame<'_>, area: Rect, app: &App) {
    let Some(dialog) = &app.rewind else {
        return;
    };
    if area.width < 4 || area.height < 3 {
        return;
    }
    let theme = app.theme();
    let outer_w = area.width.min(80);
    let inner_w = usize::from(outer_w - 2).max(1);
    let room = usize::from(area.height - 2);
    let title = Line::from(vec![
        Span::styled(" REWIND ", theme.risk("WARN")),
        Span::raw(" back to just before a prompt "),
    ]);
    super::popup(
        frame,
        area,
        outer_w,
        title,
        body(dialog, inner_w, room, theme),
        theme,
    );
}

fn body(dialog: &RewindDialog, width: usize, room: usize, theme: Theme) -> Vec<Line<'static>> {
    let (question, rows, selected) = match dialog.scope {
        None => (
            "Go back to just before which prompt?".to_owned(),
            dialog.prompts.iter().map(prompt_row).collect::<Vec<_>>(),
            dialog.selected,
        ),
        Some((_, at)) => {
            let prompt = dialog.prompt().map_or(0, |p| p.number);
            let files = dialog.prompt().and_then(|p| p.checkpoint);
            let rows = SCOPES
                .iter()
                .map(|s| {
                    let mut row = scope_label(*s).to_owned();
                    if files.is_none() && *s != atto_protocol::RewindScope::Conversation {
                        row.push_str(" (atto changed no files since)");
                    }
                    row
                })
                .collect();
            (format!("Prompt {prompt}: what goes back?"), rows, at)
        }
    };
    let mut out = wrap(&[Span::styled(question, theme.heading())], width, &[], &[]);
    out.push(Line::default());
    let options: Vec<Vec<Line<'static>>> = rows
        .iter()
        .enumerate()
        .map(|(i, row)| {
            let (marker, style) = if i == selected {
                ("› ", theme.selected())
            } else {
                ("  ", theme.text())
            };
            wrap(
                &[Span::styled(row.clone(), style)],
                width,
                &[Span::styled(marker, theme.key())],
                &[Span::raw("  ")],
            )
        })
        .collect();
    let legend = legend(dialog.scope.is_some(), width, theme);
    let left = room.saturating_sub(out.len() + legend.len() + 1).max(1);
    out.extend(super::decision::window(&options, selected, left, theme));
    out.push(Line::default());
    out.extend(legend);
    out.truncate(room.max(1));
    out
}

/// A prompt's row: its number and first line.
fn prompt_row(p: &atto_protocol::PromptInfo) -> String {
    let first = p.text.lines().next().unwrap_or("");
    let more = if p.text.lines().nth(1).is_some() {
        " …"
    } else {
        ""
    };
    format!("{}. {first}{more}", p.number)
}

fn legend(scopes: bool, width: usize, theme: Theme) -> Vec<Line<'static>> {
    let key = |k: &'static str| Span::styled(k, theme.key());
    let text = |t: &'static str| Span::raw(t);
    let back = if scopes {
        " back to the prompts"
    } else {
        " cancel"
    };
    let spans = [
        key("↑/↓"),
        text(" choose · "),
        key("Enter"),
        text(" confirm · "),
        key("Esc"),
        text(back),
    ];
    wrap(&spans, width, &[], &[])
}
