//! The agents panel: every subagent of the session as a tree (nested children indented
//! under their parent), one selectable row each with its id, role, status, tokens of
//! budget, time, cost and task; and, on Enter, one child's transcript as far as this front
//! end has it: its facts, the activity lines its progress events carried, and its closure
//! report once it ended. A child's own messages stay in its session; the panel says so.

use ratatui::text::{Line, Span};

use crate::app::{App, Subagent, short_id};
use crate::status::tokens;
use crate::transcript::{cost, duration, status_style};
use crate::view::Theme;
use crate::view::text::{sanitize, wrap};

/// The list, wrapped to `width`, and the line where the selected row starts.
pub(super) fn list(app: &App, width: usize) -> (Vec<Line<'static>>, Option<usize>) {
    let theme = app.theme();
    let agents = app.agents();
    if agents.is_empty() {
        let text = "no subagents in this session (/spawn \"task\" starts one; the model can \
                    too, with spawn_agent)";
        return (
            wrap(&[Span::styled(text, theme.dim())], width, &[], &[]),
            None,
        );
    }
    let running = app.agents_running();
    let heading = format!(
        "{} subagent{} · {running} running",
        agents.len(),
        if agents.len() == 1 { "" } else { "s" }
    );
    let mut out = wrap(&[Span::styled(heading, theme.heading())], width, &[], &[]);
    let selected = app.agent_selected();
    let mut focus = None;
    for (i, agent) in agents.iter().enumerate() {
        if i == selected {
            focus = Some(out.len());
        }
        out.extend(row(agent, i == selected, width, theme));
    }
    out.push(Line::default());
    out.extend(wrap(
        &[Span::styled(
            "↑/↓ choose · Enter opens its transcript · Esc closes",
            theme.key(),
        )],
        width,
        &[],
        &[],
    ));
    (out, focus)
}

/// One subagent's row: `› 1a2b3c4d verify    running   1.2k/20.0k tok · 3.4 s · cost
/// unknown · the task`, wrapped under its id.
fn row(agent: &Subagent, selected: bool, width: usize, theme: Theme) -> Vec<Line<'static>> {
    let a = &agent.info;
    let indent = "  ".repeat(a.depth.saturating_sub(1) as usize);
    let marker = if selected { "› " } else { "  " };
    let facts = format!(
        " · {}/{} tok · {} · {} · ",
        tokens(a.tokens_used),
        tokens(a.budget_tokens),
        duration(a.elapsed_ms),
        cost(a.cost_usd)
    );
    let head = format!("{} {:<9} ", sanitize(short_id(&a.id)), a.role.as_str());
    let spans = if selected {
        let all = format!("{head}{:<9}{facts}{}", a.status, a.task);
        vec![Span::styled(all, theme.selected())]
    } else {
        vec![
            Span::styled(head, theme.text()),
            Span::styled(format!("{:<9}", a.status), status_style(&a.status, theme)),
            Span::styled(facts, theme.dim()),
            Span::raw(a.task.clone()),
        ]
    };
    let first = [Span::styled(marker, theme.key()), Span::raw(indent.clone())];
    let rest = [Span::raw(format!("  {indent}  "))];
    wrap(&spans, width, &first, &rest)
}

/// The opened subagent's transcript as far as this front end has it.
pub(super) fn transcript(app: &App, width: usize) -> Vec<Line<'static>> {
    let theme = app.theme();
    let Some(agent) = app.opened_agent() else {
        let text = "no subagent is open (Esc goes back to the list)";
        return wrap(&[Span::styled(text, theme.dim())], width, &[], &[]);
    };
    let mut out = facts(agent, width, theme);
    out.push(Line::default());
    out.extend(activity(agent, width, theme));
    out.push(Line::default());
    out.push(Line::from(Span::styled("report", theme.heading())));
    out.extend(report(agent, width, theme));
    out.push(Line::default());
    out.extend(wrap(
        &[Span::styled(
            "Esc back to the list · PgUp/PgDn scroll",
            theme.key(),
        )],
        width,
        &[],
        &[],
    ));
    out
}

/// What the child is: its id, role, status, task, model and spending, the files it may
/// change and why atto stopped it.
fn facts(agent: &Subagent, width: usize, theme: Theme) -> Vec<Line<'static>> {
    let a = &agent.info;
    let mut out = Vec::new();
    let mut para = |spans: &[Span<'_>], indent: &'static str| {
        out.extend(wrap(spans, width, &[], &[Span::raw(indent)]));
    };
    para(
        &[
            Span::styled(format!("subagent {} · ", short_id(&a.id)), theme.heading()),
            Span::styled(a.role.as_str(), theme.heading()),
            Span::raw(" · "),
            Span::styled(a.status.clone(), status_style(&a.status, theme)),
        ],
        "  ",
    );
    para(
        &[
            Span::styled("task: ", theme.dim()),
            Span::raw(a.task.clone()),
        ],
        "      ",
    );
    let parent = if a.depth > 1 {
        format!(" · child of {}", short_id(&a.parent))
    } else {
        String::new()
    };
    para(
        &[Span::styled(
            format!(
                "model {} · {} of {} tokens · {} · {} · depth {}{parent}",
                a.model,
                tokens(a.tokens_used),
                tokens(a.budget_tokens),
                cost(a.cost_usd),
                duration(a.elapsed_ms),
                a.depth
            ),
            theme.dim(),
        )],
        "  ",
    );
    if !agent.files.is_empty() {
        para(
            &[Span::styled(
                format!("may change: {}", agent.files.join(", ")),
                theme.dim(),
            )],
            "  ",
        );
    }
    if let Some(why) = &agent.forced_stop {
        para(
            &[Span::styled(
                format!("stopped by atto: {why}"),
                theme.warn(),
            )],
            "  ",
        );
    }
    out
}

/// The child's closure report, or that it is still running.
fn report(agent: &Subagent, width: usize, theme: Theme) -> Vec<Line<'static>> {
    match &agent.report {
        Some(report) => crate::markdown::render(report, width, theme),
        None => wrap(
            &[Span::styled(
                "still running: its closure report comes when it ends",
                theme.dim(),
            )],
            width,
            &[],
            &[],
        ),
    }
}

/// "activity": each tool call it started, as its progress events said.
fn activity(agent: &Subagent, width: usize, theme: Theme) -> Vec<Line<'static>> {
    let mut out = vec![Line::from(vec![
        Span::styled("activity", theme.heading()),
        Span::styled(
            " (its tool calls as they started; its messages stay in its session)",
            theme.dim(),
        ),
    ])];
    let wrap_dim = |text: String| wrap(&[Span::styled(text, theme.dim())], width, &[], &[]);
    if agent.activity_dropped > 0 {
        out.extend(wrap_dim(format!(
            "  … {} earlier lines not kept",
            agent.activity_dropped
        )));
    }
    if agent.activity.is_empty() {
        out.extend(wrap_dim("  none reported".to_owned()));
    }
    for line in &agent.activity {
        out.extend(wrap(
            &[Span::raw(line.clone())],
            width,
            &[Span::styled("  • ", theme.marker())],
            &[Span::raw("    ")],
        ));
    }
    out
}
