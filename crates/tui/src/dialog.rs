//! The approval dialog, drawn over the transcript: which subagent or swarm task asks (when
//! a child's or a swarm worker's call waits, on a row that never scrolls away), exactly what would run (the whole
//! command or diff, wrapped, scrollable and never cut silently), the risk level, the
//! classifier's reasons, the rule an "always" answer saves and its scope, the key legend,
//! and the reason or edit field while one is typed.

use atto_protocol::ToolKind;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::app::{App, ApprovalDialog, DialogInput, short_id};
use crate::highlight::diff_style;
use crate::view::Theme;
use crate::view::text::{sanitize, wrap};

/// Draws the dialog of `app.approval` (if any) centred in `area`.
pub fn draw(frame: &mut Frame<'_>, area: Rect, app: &mut App) {
    let theme = app.theme();
    let Some(dialog) = app.approval.clone() else {
        return;
    };
    if area.width < 4 || area.height < 3 {
        return;
    }
    let outer_w = area.width.min(100);
    let inner_w = usize::from(outer_w.saturating_sub(2)).max(1);
    // Who asks stays put above; what would run, why, and the rule "always" saves scroll
    // together; the key legend (and the field being typed) stays put below them.
    let head = asker_lines(&dialog, inner_w, theme);
    let mut scrolled = subject_lines(&dialog, inner_w, theme);
    scrolled.extend(context_lines(&dialog, inner_w, theme));
    let fixed = legend_lines(&dialog, inner_w, theme);
    let max_inner_h = usize::from(area.height.saturating_sub(2));
    let inner_h = (head.len() + scrolled.len() + fixed.len())
        .min(max_inner_h)
        .max(1);
    let scroll = app.dialog_scroll_mut();
    let body = if head.len() + fixed.len() < inner_h {
        let mut lines = head;
        let room = inner_h - lines.len() - fixed.len();
        lines.extend(window(&scrolled, room, scroll, theme));
        lines.extend(fixed);
        lines
    } else {
        // Too small for fixed rows: everything scrolls together.
        let mut all = head;
        all.extend(scrolled);
        all.extend(fixed);
        window(&all, inner_h, scroll, theme)
    };
    let req = &dialog.request;
    let mut title = vec![
        Span::styled(format!(" {} ", sanitize(&req.risk)), theme.risk(&req.risk)),
        Span::raw(" approve "),
        Span::styled(sanitize(&req.tool).into_owned(), theme.tool()),
    ];
    if let Some(task) = &dialog.swarm_task {
        title.push(Span::raw(format!(" for swarm task {}", sanitize(task))));
    } else if let Some(tag) = &req.subagent {
        title.push(Span::raw(format!(
            " for subagent {}",
            sanitize(short_id(&tag.id))
        )));
    }
    title.push(Span::raw("? "));
    let title = Line::from(title);
    crate::view::popup(frame, area, outer_w, title, body, theme);
}

/// `room` lines of `lines` from `scroll`, with markers for what is above and below so
/// nothing is hidden without saying so. Clamps `scroll`.
fn window(
    lines: &[Line<'static>],
    room: usize,
    scroll: &mut usize,
    theme: Theme,
) -> Vec<Line<'static>> {
    if lines.len() <= room {
        *scroll = 0;
        return lines.to_vec();
    }
    // Rows go to the markers: "above" only once scrolled, "below" until the end.
    let mut body = room.saturating_sub(1).max(1);
    if *scroll > 0 {
        body = room.saturating_sub(2).max(1);
    }
    *scroll = (*scroll).min(lines.len() - body);
    let above = *scroll > 0 && room >= 3;
    if !above {
        body = room.saturating_sub(1).max(1);
    }
    let below = lines.len().saturating_sub(*scroll + body);
    let mut out = Vec::with_capacity(room);
    if above {
        out.push(marker(format!("↑ {} lines above (PgUp)", *scroll), theme));
    }
    out.extend_from_slice(&lines[*scroll..(*scroll + body).min(lines.len())]);
    if below > 0 {
        out.push(marker(format!("↓ {below} more lines (PgDn)"), theme));
    }
    out.truncate(room);
    out
}

fn marker(text: String, theme: Theme) -> Line<'static> {
    Line::from(Span::styled(text, theme.dim()))
}

/// "subagent 1a2b3c4d (verify: run the tests) asks", and a blank row, when a subagent's
/// call waits; nothing for the session's own calls.
fn asker_lines(dialog: &ApprovalDialog, width: usize, theme: Theme) -> Vec<Line<'static>> {
    if let Some(task) = &dialog.swarm_task {
        let spans = [
            Span::styled(format!("swarm task {}", sanitize(task)), theme.warn()),
            Span::raw(" asks (its worker waits; no rule is saved for workers)"),
        ];
        let mut out = wrap(&spans, width, &[], &[Span::raw("  ")]);
        out.push(Line::default());
        return out;
    }
    let Some(tag) = &dialog.request.subagent else {
        return Vec::new();
    };
    let spans = [
        Span::styled(
            format!("subagent {}", sanitize(short_id(&tag.id))),
            theme.warn(),
        ),
        Span::raw(format!(
            " ({}: {}) asks",
            tag.role.as_str(),
            sanitize(&tag.task)
        )),
    ];
    let mut out = wrap(&spans, width, &[], &[Span::raw("  ")]);
    out.push(Line::default());
    out
}

/// What would run: `$ command` for commands, coloured diff lines for file changes.
fn subject_lines(dialog: &ApprovalDialog, width: usize, theme: Theme) -> Vec<Line<'static>> {
    let req = &dialog.request;
    let subject = sanitize(&req.subject);
    let mut out = Vec::new();
    if req.kind == ToolKind::Execute {
        let spans = [Span::styled(subject.into_owned(), theme.code())];
        out.extend(wrap(
            &spans,
            width,
            &[Span::styled("$ ", theme.dim())],
            &[Span::raw("  ")],
        ));
        return out;
    }
    // A file change's subject is its diff, or a write's header and whole new content.
    let writes = req.kind == ToolKind::Edit && req.arguments.get("content").is_some();
    let diffish = req.kind == ToolKind::Edit || crate::highlight::looks_like_diff(&subject);
    for (i, line) in subject.lines().enumerate() {
        // The first line of a write is its header ("write a.py (12 bytes):"); its content
        // follows unmarked, so colour it as added.
        let style = if !diffish || i == 0 {
            theme.text()
        } else if writes {
            theme.diff_add()
        } else {
            diff_style(line, theme)
        };
        out.extend(wrap(
            &[Span::styled(line.to_owned(), style)],
            width,
            &[],
            &[],
        ));
    }
    out
}

/// Why it asks and what "always" would save.
fn context_lines(dialog: &ApprovalDialog, width: usize, theme: Theme) -> Vec<Line<'static>> {
    let req = &dialog.request;
    let mut out = vec![Line::default()];
    if !req.reasons.is_empty() {
        out.push(Line::from(Span::styled("why it asks:", theme.dim())));
        for reason in &req.reasons {
            let spans = [Span::raw(sanitize(reason).into_owned())];
            out.extend(wrap(
                &spans,
                width,
                &[Span::raw("  • ")],
                &[Span::raw("    ")],
            ));
        }
    }
    if dialog.swarm_task.is_some() {
        // A worker's answer is once only: no rule to show.
        return out;
    }
    let rule = sanitize(&req.suggested_rule).into_owned();
    let spans = [
        Span::styled("always saves ", theme.dim()),
        Span::styled(rule, theme.code()),
        Span::styled(
            " — a: this session only · A: this project, every session",
            theme.dim(),
        ),
    ];
    out.extend(wrap(&spans, width, &[], &[Span::raw("  ")]));
    out
}

/// The keys, and the reason or command being typed.
fn legend_lines(dialog: &ApprovalDialog, width: usize, theme: Theme) -> Vec<Line<'static>> {
    let req = &dialog.request;
    let mut out = Vec::new();
    let key = |k: &'static str| Span::styled(k, theme.key());
    let text = |t: &'static str| Span::raw(t);
    let mut legend = if dialog.swarm_task.is_some() {
        vec![key("y"), text(" yes  "), key("n"), text(" no (+reason)")]
    } else {
        vec![
            key("y"),
            text(" yes  "),
            key("n"),
            text(" no (+reason)  "),
            key("a"),
            text(" always (session)  "),
            key("A"),
            text(" always (project)"),
        ]
    };
    if req.kind == ToolKind::Execute && dialog.swarm_task.is_none() {
        legend.extend([text("  "), key("e"), text(" edit")]);
    }
    out.extend(wrap(&legend, width, &[], &[]));
    if let Some(input) = &dialog.input {
        let (label, value) = match input {
            DialogInput::Reason(r) => ("reason for the model (Enter sends, empty: none): ", r),
            DialogInput::Edit(c) => ("run instead (Enter runs, Esc back): ", c),
        };
        let spans = [
            Span::styled(label, theme.key()),
            Span::raw(sanitize(value).into_owned()),
            Span::styled("▏", theme.key()),
        ];
        out.extend(wrap(&spans, width, &[], &[Span::raw("  ")]));
    }
    out
}
