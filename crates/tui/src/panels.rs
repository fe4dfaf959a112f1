//! Panels: the pending plan with per-change diffs, the task plan's steps with their live
//! states above goals and tasks, the thread tree, checkpoints, grants, and the subagents
//! with one child's transcript (`agents`), and the session's swarm (`swarm`). Each shows
//! the same data its slash command prints (`/show-plan`, `/goals`, `/threads`, `/restore
//! list`, `/grants`, `/agents`; `atto swarm status` for the swarm), as the last answer and
//! events left it. A panel scrolls on its own (`App::scroll` while it
//! is open, and to the selected row of the agents list); what is cut above or below is
//! counted on its first or last row.

mod agents;
mod swarm;

use atto_present as present;
use atto_protocol::{ChangeStatus, StepStatus, TaskPlan, TaskPlanStatus, ThreadInfo};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};

use crate::app::{App, Panel};
use crate::highlight::diff_style;
use crate::view::Theme;
use crate::view::steps;
use crate::view::text::{sanitize, wrap};

/// The panel's title.
pub fn title(panel: Panel) -> &'static str {
    match panel {
        Panel::Plan => "pending plan",
        Panel::Tasks => "plan steps · goals",
        Panel::Threads => "threads",
        Panel::Checkpoints => "checkpoints",
        Panel::Grants => "grants",
        Panel::Agents => "subagents",
        Panel::Agent => "subagent transcript",
        Panel::Swarm => "swarm",
    }
}

/// Draws `panel` in `area` with a border, from its scroll offset (clamped here); what is
/// cut above or below is counted, with the keys that scroll to it.
pub fn draw(frame: &mut Frame<'_>, area: Rect, app: &mut App, panel: Panel) {
    let theme = app.theme();
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.border())
        .title(format!(
            " {} · Esc {} ",
            title(panel),
            // A subagent's transcript goes back to the list it was opened from; a plan
            // waiting in the swarm overlay is declined.
            match panel {
                Panel::Agent => "back",
                Panel::Swarm if app.swarm_plan_waiting() => "declines",
                _ => "closes",
            }
        ));
    let inner = block.inner(area);
    let (lines, focus) = content(app, panel, usize::from(inner.width.max(1)));
    let room = usize::from(inner.height);
    if app.take_follow_selection()
        && let Some(focus) = focus
    {
        follow(app.panel_scroll_mut(), focus, room);
    }
    let lines = window(lines, room, app.panel_scroll_mut(), theme);
    frame.render_widget(Paragraph::new(lines).block(block), area);
}

/// `room` rows of `lines` from `scroll` (clamped): "↑ N lines above" on the first row once
/// scrolled, "… N more lines" on the last while more follow.
fn window(
    mut lines: Vec<Line<'static>>,
    room: usize,
    scroll: &mut usize,
    theme: Theme,
) -> Vec<Line<'static>> {
    if lines.len() <= room || room == 0 {
        *scroll = 0;
        return lines;
    }
    let marker = |text: String| Line::from(Span::styled(text, theme.dim()));
    // The last offset shows the end with only the "above" row taken.
    let max = lines.len() - room.saturating_sub(1).max(1);
    *scroll = (*scroll).min(max);
    let above = *scroll > 0 && room >= 2;
    let top = *scroll;
    let mut body = room - usize::from(above);
    let below = lines.len().saturating_sub(top + body);
    if below > 0 {
        body = body.saturating_sub(1);
    }
    let hidden_below = lines.len() - (top + body).min(lines.len());
    let mut out = Vec::with_capacity(room);
    if above {
        out.push(marker(format!("↑ {top} lines above (PgUp)")));
    }
    out.extend(lines.drain(top..(top + body).min(lines.len())));
    if hidden_below > 0 {
        out.push(marker(format!(
            "… {hidden_below} more lines (PgDn / wheel scrolls)"
        )));
    }
    out
}

/// Scrolls so that line `focus` is among the `room` rows `window` shows, whatever
/// markers it adds above and below; going up, the line above it shows too (the list's
/// heading above its first row).
fn follow(scroll: &mut usize, focus: usize, room: usize) {
    let body = room.saturating_sub(2).max(1);
    if focus <= *scroll {
        *scroll = focus.saturating_sub(1);
    } else if focus >= *scroll + body {
        *scroll = focus + 1 - body;
    }
}

/// The panel's content, wrapped to `width`.
pub fn lines(app: &App, panel: Panel, width: usize) -> Vec<Line<'static>> {
    content(app, panel, width).0
}

/// The panel's content, wrapped to `width`, and the line of its selected row (the agents
/// list has one).
fn content(app: &App, panel: Panel, width: usize) -> (Vec<Line<'static>>, Option<usize>) {
    let theme = app.theme();
    let rows: Vec<(String, ratatui::style::Style)> = match panel {
        Panel::Agents => return agents::list(app, width),
        Panel::Agent => return (agents::transcript(app, width), None),
        Panel::Swarm => return (swarm::lines(app, width), None),
        Panel::Plan => plan(app, theme),
        Panel::Tasks => {
            let mut rows = app
                .task_plan()
                .map_or_else(Vec::new, |p| task_plan(p, theme));
            if !rows.is_empty() {
                rows.push((String::new(), theme.text()));
            }
            rows.extend(goals(app, theme));
            rows
        }
        Panel::Threads => threads(app.threads(), theme),
        Panel::Checkpoints => checkpoints(app, theme),
        Panel::Grants => grants(app, theme),
    };
    let mut out = Vec::with_capacity(rows.len());
    for (text, style) in rows {
        let indent: String = text.chars().take_while(|c| *c == ' ').collect();
        let spans = [Span::styled(sanitize(&text).into_owned(), style)];
        out.extend(wrap(&spans, width, &[], &[Span::raw(indent)]));
    }
    (out, None)
}

pub(crate) type Rows = Vec<(String, ratatui::style::Style)>;

/// The task plan's steps, each with its state: a heading with progress, one row per
/// step (glyph, number, description, state, kind and dependencies), and the decision a
/// step waits on.
fn task_plan(plan: &TaskPlan, theme: Theme) -> Rows {
    let (reached, total) = steps::progress(plan);
    let status = match plan.status {
        TaskPlanStatus::AwaitingConfirmation => "awaiting approval (/approve · /reject)",
        TaskPlanStatus::Running => "running",
        TaskPlanStatus::Completed => "completed",
        TaskPlanStatus::Failed => "failed",
        TaskPlanStatus::Cancelled => "cancelled",
        TaskPlanStatus::Rejected => "rejected",
    };
    let mut rows = vec![(
        format!("task plan {reached}/{total} · {status}"),
        theme.heading(),
    )];
    rows.push((format!("intent: {}", plan.intent), theme.dim()));
    for s in &plan.steps {
        let deps = steps::dependencies(plan, s);
        let after = if deps.is_empty() {
            String::new()
        } else {
            let list: Vec<String> = deps.iter().map(u32::to_string).collect();
            format!(" (after {})", list.join(", "))
        };
        rows.push((
            format!(
                "{} {:>2}. {:<8} {}{after}",
                steps::glyph(s.status),
                s.number,
                steps::word(s.status),
                s.description
            ),
            steps::style(s.status, theme),
        ));
        if let Some(d) = &s.decision
            && s.status == StepStatus::Pending
        {
            let choice = d.choice.as_ref().map_or_else(
                || format!("({})", d.options.join(" / ")),
                |c| format!("→ {c}"),
            );
            rows.push((
                format!("              ? {} {choice}", d.question),
                theme.warn(),
            ));
        }
        if s.status == StepStatus::Failed
            && let Some(why) = &s.result
        {
            rows.push((
                format!("              {}", why.lines().next().unwrap_or("")),
                theme.dim(),
            ));
        }
    }
    rows
}

/// The task plan waiting or running (what `/show-plan` answers with while one is), then
/// plan mode's pending changes.
fn plan(app: &App, theme: Theme) -> Rows {
    let waiting = app.task_plan().filter(|p| {
        matches!(
            p.status,
            TaskPlanStatus::AwaitingConfirmation | TaskPlanStatus::Running
        )
    });
    let Some(task) = waiting else {
        return pending_plan(app, theme);
    };
    let mut rows = task_plan(task, theme);
    if app.plan().0.is_some() {
        rows.push((String::new(), theme.text()));
        rows.extend(pending_plan(app, theme));
    }
    rows
}

fn pending_plan(app: &App, theme: Theme) -> Rows {
    let (plan, previews) = app.plan();
    let Some(plan) = plan else {
        let text = if app.pending_changes() > 0 {
            format!(
                "{} change(s) queued; /show-plan loads them here",
                app.pending_changes()
            )
        } else {
            present::NO_PENDING_PLAN.to_owned()
        };
        return vec![(text, theme.dim())];
    };
    let [heading, task] = present::plan_heading(plan);
    let mut rows = vec![(heading, theme.heading()), (task, theme.dim())];
    for (i, change) in plan.proposed_changes.iter().enumerate() {
        let status_style = match change.status {
            ChangeStatus::Pending => theme.warn(),
            ChangeStatus::Applied => theme.ok(),
            ChangeStatus::Failed | ChangeStatus::Conflict => theme.error(),
            ChangeStatus::Rejected => theme.dim(),
        };
        rows.push((String::new(), theme.text()));
        rows.push((
            present::change_line(change, &(app.info().change_target)(change)),
            status_style,
        ));
        if !change.reason.is_empty() {
            rows.push((format!("   reason: {}", change.reason), theme.dim()));
        }
        for line in previews.get(i).map_or("", String::as_str).lines() {
            rows.push((format!("   {line}"), diff_style(line, theme)));
        }
    }
    if plan.proposed_changes.iter().any(|c| c.status.is_open()) {
        rows.push((String::new(), theme.text()));
        rows.push((
            "/approve N · /reject N  (/approve runs all pending; 2,4 or 3-5 picks)".to_owned(),
            theme.key(),
        ));
    }
    rows
}

fn goals(app: &App, theme: Theme) -> Rows {
    let (goals, current) = app.goals();
    if goals.is_empty() {
        return vec![(present::NO_GOALS.to_owned(), theme.dim())];
    }
    present::goal_rows(goals, current)
        .into_iter()
        .map(|(row, g)| {
            let style = if !g.status.is_open() {
                theme.dim()
            } else if Some(g.id.as_str()) == current {
                theme.user()
            } else {
                theme.text()
            };
            (row, style)
        })
        .collect()
}

/// The `/threads` tree with box-drawing branches; the current thread is highlighted.
fn threads(threads: &[ThreadInfo], theme: Theme) -> Rows {
    if threads.is_empty() {
        return vec![("no threads listed yet (/threads)".to_owned(), theme.dim())];
    }
    present::thread_rows(threads)
        .into_iter()
        .map(|(row, t)| {
            (
                row,
                if t.current {
                    theme.user()
                } else {
                    theme.text()
                },
            )
        })
        .collect()
}

fn checkpoints(app: &App, theme: Theme) -> Rows {
    let list = app.checkpoints();
    if list.is_empty() {
        return vec![(present::NO_CHECKPOINTS.to_owned(), theme.dim())];
    }
    let mut rows: Rows = list
        .iter()
        .map(|c| (present::checkpoint_line(c), theme.text()))
        .collect();
    rows.push((present::RESTORE_HINT.to_owned(), theme.key()));
    rows
}

fn grants(app: &App, theme: Theme) -> Rows {
    let list = app.grants();
    if list.is_empty() {
        return vec![(
            "no grants (answer \"always\" at an approval, or add [permissions] rules to the config)"
                .to_owned(),
            theme.dim(),
        )];
    }
    let when = |ms: Option<i64>| ms.map_or_else(|| "-".to_owned(), atto_protocol::time::utc_minute);
    let mut rows = Vec::new();
    for g in list {
        let style = match g.decision.as_str() {
            "allow" => theme.ok(),
            "deny" => theme.error(),
            _ => theme.warn(),
        };
        rows.push((
            format!(
                "{:>3}  {:<5} {}  [{}]",
                g.number, g.decision, g.rule, g.scope
            ),
            style,
        ));
        rows.push((
            format!(
                "     created {} · last used {} · {} uses{}",
                when(g.created_at),
                when(g.last_used_at),
                g.uses,
                if g.revocable {
                    ""
                } else {
                    " · edit the config to remove"
                }
            ),
            theme.dim(),
        ));
    }
    rows.push(("/grants revoke N removes grant N".to_owned(), theme.key()));
    rows
}
