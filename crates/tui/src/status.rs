//! The status line: agent mode (a coloured badge; blue Plan as in the seeds), permission
//! mode, model, tokens and cost, context use, the active goal, the pending-plan count, the
//! task plan's progress ("plan 2/5", "plan awaiting approval"), the subagents still
//! running, the swarm's progress ("swarm 1/4"), sandbox and reasoning effort. On a narrow terminal it compacts by dropping the least important facts first,
//! so it always fits one row; the permission mode and the sandbox, which say what may run
//! unasked and what holds it, go last. The sandbox shows what the session has shown to
//! apply ("sandbox ?" until it says), never what a kernel probe hoped for.

use atto_protocol::{AgentMode, PermissionMode, TaskPlanStatus};
use ratatui::text::{Line, Span};

use crate::app::permission_name;
use crate::app::{App, Phase, SandboxState, Totals};
use crate::view::text::{truncate, width};

/// One fact and how readily it is dropped (higher goes first).
struct Part {
    drop_rank: u8,
    span: Span<'static>,
}

/// The badge text of a mode: YOLO is build with yolo permissions.
pub fn mode_label(mode: AgentMode, permission: PermissionMode) -> &'static str {
    match (mode, permission) {
        (AgentMode::Build, PermissionMode::Yolo) => "YOLO",
        (mode, _) => match mode {
            AgentMode::Build => "BUILD",
            AgentMode::Plan => "PLAN",
            AgentMode::Review => "REVIEW",
            AgentMode::Debug => "DEBUG",
        },
    }
}

/// "950", "12.3k", "4.1M".
pub fn tokens(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        1_000..1_000_000 => format!("{:.1}k", n as f64 / 1_000.0),
        _ => format!("{:.1}M", n as f64 / 1_000_000.0),
    }
}

/// The status line for a terminal `cols` wide.
pub fn line(app: &App, cols: u16) -> Line<'static> {
    let theme = app.theme();
    let info = app.info();
    let cols = usize::from(cols);
    let mut parts = vec![Part {
        drop_rank: 0,
        span: Span::styled(
            format!(" {} ", mode_label(info.mode, info.permission)),
            theme.mode_badge(info.mode, info.permission),
        ),
    }];
    activity(app, &mut parts);
    let mut add = |drop_rank: u8, span: Span<'static>| parts.push(Part { drop_rank, span });
    // What may run unasked and whether the sandbox holds it matter most: like the badge,
    // they go only when nothing else is left to drop.
    add(0, Span::raw(permission_name(info.permission)));
    let sandbox = app.sandbox();
    add(0, sandbox_span(&sandbox, theme));
    if let SandboxState::Off {
        reason: Some(reason),
    } = &sandbox
    {
        add(7, Span::styled(truncate(reason, 40), theme.warn()));
    }
    add(3, Span::raw(truncate(&info.model, 28)));
    usage(app, &mut parts);
    let mut add = |drop_rank: u8, span: Span<'static>| parts.push(Part { drop_rank, span });
    if let Some(goal) = app.current_goal() {
        let budget = goal
            .token_budget
            .map_or_else(String::new, |b| format!("/{}", tokens(b)));
        add(
            4,
            Span::raw(format!(
                "goal: {} ({}{budget})",
                truncate(&goal.objective, 24),
                tokens(goal.tokens_used)
            )),
        );
    }
    if let Some(effort) = app.effort() {
        add(5, Span::raw(format!("effort: {effort}")));
    }
    add(8, Span::styled("? keys", theme.dim()));
    fit(parts, cols, theme)
}

/// What is under way, all dropped early on a narrow terminal: the turn, the subagents,
/// the swarm, the plan's pending changes, the task plan and a decision waiting.
fn activity(app: &App, parts: &mut Vec<Part>) {
    let theme = app.theme();
    let mut add = |drop_rank: u8, span: Span<'static>| parts.push(Part { drop_rank, span });
    if app.turn_running() {
        add(1, Span::styled("working…", theme.dim()));
    }
    match app.agents_running() {
        0 => {}
        1 => add(1, Span::styled("1 subagent running", theme.user())),
        n => add(
            1,
            Span::styled(format!("{n} subagents running"), theme.user()),
        ),
    }
    if let Some(swarm) = app.swarm().filter(|s| s.running()) {
        let (passed, total) = swarm.progress();
        let (text, style) = match swarm.phase {
            Phase::Starting | Phase::Planning => ("swarm planning…".to_owned(), theme.dim()),
            Phase::AwaitingConfirmation => ("swarm plan waits (F3)".to_owned(), theme.warn()),
            Phase::Stopping => ("swarm stopping…".to_owned(), theme.warn()),
            _ => (format!("swarm {passed}/{total}"), theme.user()),
        };
        add(1, Span::styled(text, style));
    }
    if app.pending_changes() > 0 {
        add(
            1,
            Span::styled(
                format!("plan: {} pending", app.pending_changes()),
                theme.warn(),
            ),
        );
    }
    if let Some(plan) = app.task_plan() {
        match plan.status {
            TaskPlanStatus::AwaitingConfirmation => {
                add(1, Span::styled("plan awaiting approval", theme.warn()));
            }
            TaskPlanStatus::Running => {
                let (reached, total) = crate::view::steps::progress(plan);
                add(
                    1,
                    Span::styled(format!("plan {reached}/{total}"), theme.user()),
                );
            }
            TaskPlanStatus::Completed
            | TaskPlanStatus::Failed
            | TaskPlanStatus::Cancelled
            | TaskPlanStatus::Rejected => {}
        }
    }
    if let Some(number) = app.decision_waiting()
        && app.decision.is_none()
    {
        // The dialog was dismissed: the next prompt answers it.
        add(
            1,
            Span::styled(
                format!("step {number} waits: type the choice"),
                theme.warn(),
            ),
        );
    }
}

/// What the session spent: tokens and cost, and how full the context is.
fn usage(app: &App, parts: &mut Vec<Part>) {
    let theme = app.theme();
    let mut add = |drop_rank: u8, span: Span<'static>| parts.push(Part { drop_rank, span });
    let totals = app.totals();
    if totals.tokens > 0 || totals.cost_usd > 0.0 {
        add(
            2,
            Span::raw(format!("{} tok {}", tokens(totals.tokens), cost(totals))),
        );
    }
    if totals.context_tokens > 0 {
        let text = match totals.context_window {
            Some(window) if window > 0 => format!(
                "ctx {}/{} {:.0}%",
                tokens(totals.context_tokens),
                tokens(window),
                totals.context_tokens as f64 * 100.0 / window as f64
            ),
            _ => format!("ctx {}", tokens(totals.context_tokens)),
        };
        add(6, Span::styled(text, theme.dim()));
    }
}

/// "$0.0420"; "cost ?" when no call had a known price; "≥$0.0420" when some had none.
pub fn cost(totals: Totals) -> String {
    match (totals.cost_unknown, totals.cost_usd == 0.0) {
        (true, true) => "cost ?".to_owned(),
        (true, false) => format!("≥${:.4}", totals.cost_usd),
        (false, _) => format!("${:.4}", totals.cost_usd),
    }
}

/// "sandbox on", "sandbox off", or "sandbox ?" until the session has said.
fn sandbox_span(state: &SandboxState, theme: crate::view::Theme) -> Span<'static> {
    match state {
        SandboxState::On => Span::styled("sandbox on", theme.dim()),
        SandboxState::Unknown => Span::styled("sandbox ?", theme.dim()),
        SandboxState::Off { .. } => Span::styled("sandbox off", theme.warn()),
    }
}

/// Drops the most droppable parts until the rest fits, then joins them with " · ".
fn fit(mut parts: Vec<Part>, cols: usize, theme: crate::view::Theme) -> Line<'static> {
    let total = |parts: &[Part]| -> usize {
        parts.iter().map(|p| width(&p.span.content)).sum::<usize>()
            + 3 * parts.len().saturating_sub(1)
    };
    while total(&parts) > cols && parts.len() > 1 {
        let worst = parts
            .iter()
            .enumerate()
            .max_by_key(|(i, p)| (p.drop_rank, *i))
            .map_or(0, |(i, _)| i);
        parts.remove(worst);
    }
    let mut spans = Vec::with_capacity(parts.len() * 2);
    for (i, part) in parts.into_iter().enumerate() {
        if i > 0 {
            spans.push(Span::styled(" · ", theme.dim()));
        }
        let mut span = part.span;
        if width(&span.content) > cols {
            span.content = truncate(&span.content, cols).into();
        }
        spans.push(span);
    }
    Line::from(spans)
}
