//! The intervention dialog, drawn over the transcript like the approval dialog: a swarm
//! task out of attempts, what it was, how it failed (mode, model, last error, the
//! compilation errors as `file:line — message`), and the three answers: guidance typed
//! here (the task is retried with it), "fixed" (checked again, no worker) or skip.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::app::{App, Intervention};
use crate::view::Theme;
use crate::view::text::wrap;

/// Compilation errors listed before the rest are counted.
const ERRORS_SHOWN: usize = 8;

/// Draws the showing intervention (if any) centred in `area`.
pub fn draw(frame: &mut Frame<'_>, area: Rect, app: &App) {
    let Some(stuck) = app.intervention() else {
        return;
    };
    if area.width < 4 || area.height < 3 {
        return;
    }
    let theme = app.theme();
    let outer_w = area.width.min(90);
    let inner_w = usize::from(outer_w - 2).max(1);
    let guidance = app.swarm().and_then(|s| s.guidance.as_deref());
    let mut body = body(stuck, guidance, inner_w, theme);
    let room = usize::from(area.height - 2);
    if body.len() > room {
        // The legend and the field being typed stay; the errors give way.
        let tail = legend(guidance, inner_w, theme);
        body.truncate(room.saturating_sub(tail.len() + 1));
        body.push(Line::from(Span::styled("  …", theme.dim())));
        body.extend(tail);
        body.truncate(room.max(1));
    }
    let title = Line::from(vec![
        Span::styled(" STUCK ", theme.risk("WARN")),
        Span::raw(format!(" swarm task {} needs a decision ", stuck.task_id)),
    ]);
    super::popup(frame, area, outer_w, title, body, theme);
}

/// The dialog's lines: the task, how it failed, the errors, the legend.
pub fn body(
    stuck: &Intervention,
    guidance: Option<&str>,
    width: usize,
    theme: Theme,
) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    let para = |spans: &[Span<'_>], out: &mut Vec<Line<'static>>| {
        out.extend(wrap(spans, width, &[], &[Span::raw("  ")]));
    };
    para(
        &[Span::styled(stuck.description.clone(), theme.heading())],
        &mut out,
    );
    out.push(Line::default());
    para(
        &[Span::styled(
            format!(
                "{} attempt{} · failed on {} · model {}",
                stuck.attempts,
                if stuck.attempts == 1 { "" } else { "s" },
                stuck.failure_mode,
                stuck.model
            ),
            theme.dim(),
        )],
        &mut out,
    );
    if !stuck.last_error.is_empty() {
        para(
            &[
                Span::styled("last error: ", theme.dim()),
                Span::styled(stuck.last_error.clone(), theme.error()),
            ],
            &mut out,
        );
    }
    if !stuck.compilation_errors.is_empty() {
        out.push(Line::from(Span::styled("compilation errors:", theme.dim())));
        for e in stuck.compilation_errors.iter().take(ERRORS_SHOWN) {
            out.extend(wrap(
                &[Span::styled(e.line_text(), theme.code())],
                width,
                &[Span::raw("  ")],
                &[Span::raw("    ")],
            ));
        }
        let more = stuck.compilation_errors.len().saturating_sub(ERRORS_SHOWN);
        if more > 0 {
            out.push(Line::from(Span::styled(
                format!("  … {more} more"),
                theme.dim(),
            )));
        }
    }
    out.push(Line::default());
    out.extend(legend(guidance, width, theme));
    out
}

/// The three answers, or the guidance being typed.
fn legend(guidance: Option<&str>, width: usize, theme: Theme) -> Vec<Line<'static>> {
    let key = |k: &'static str| Span::styled(k, theme.key());
    let text = |t: &'static str| Span::raw(t);
    match guidance {
        None => wrap(
            &[
                key("g"),
                text(" guidance (retry with what you type)  "),
                key("f"),
                text(" fixed (check again, no worker)  "),
                key("s"),
                text(" skip (its dependents are skipped)"),
            ],
            width,
            &[],
            &[],
        ),
        Some(typed) => wrap(
            &[
                Span::styled("guidance (Enter retries with it, Esc back): ", theme.key()),
                Span::raw(typed.to_owned()),
                Span::styled("▏", theme.key()),
            ],
            width,
            &[],
            &[Span::raw("  ")],
        ),
    }
}
