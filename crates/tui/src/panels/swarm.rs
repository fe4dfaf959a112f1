//! The swarm overlay: a header (id, phase, `passed/total`, tokens and cost against the
//! caps, tripped models), then the tasks indented by dependency depth as `atto swarm
//! status` prints them, each with its status glyph, kind, attempts, last score and
//! dependencies; under a running task its worker's model and latest activity, under a
//! waiting one its retry (attempt, delay, reason), under an ended one why. While the plan
//! waits it asks for the yes here; the last row says which keys do what.

use atto_protocol::swarm::TaskStatus;
use ratatui::text::{Line, Span};

use super::Rows;
use crate::app::{App, Phase, Swarm, SwarmBudget, SwarmTaskRow};
use crate::status::tokens;
use crate::view::Theme;
use crate::view::text::{sanitize, wrap};

/// The overlay wrapped to `width`: a task's row continues under its id, past the glyph.
pub(super) fn lines(app: &App, width: usize) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    for (text, style) in rows(app, app.theme()) {
        let indent = text.chars().take_while(|c| *c == ' ').count();
        let glyph = text[indent..].starts_with(|c: char| GLYPHS.contains(c));
        let hang = " ".repeat(indent + if glyph { 2 } else { 0 });
        let spans = [Span::styled(sanitize(&text).into_owned(), style)];
        out.extend(wrap(&spans, width, &[], &[Span::raw(hang)]));
    }
    out
}

/// The status glyphs a task's row starts with.
const GLYPHS: &str = "·▶✓✗⊘?";

/// The overlay's rows.
fn rows(app: &App, theme: Theme) -> Rows {
    let Some(s) = app.swarm() else {
        return vec![(
            "no swarm in this session: /swarm \"task\" splits a task among workers".to_owned(),
            theme.dim(),
        )];
    };
    let mut rows = header(s, theme);
    if s.tasks.is_empty() {
        let text = match s.phase {
            Phase::Starting | Phase::Planning => "splitting the task into tasks…",
            _ => "no tasks",
        };
        rows.push((text.to_owned(), theme.dim()));
    } else {
        rows.push((String::new(), theme.text()));
        for t in &s.tasks {
            rows.extend(task(t, theme));
        }
    }
    rows.push((String::new(), theme.text()));
    if s.phase == Phase::AwaitingConfirmation {
        rows.push((
            format!(
                "Run these {} tasks? Enter or y runs them · n or Esc declines",
                s.tasks.len()
            ),
            theme.warn(),
        ));
    } else if s.running() {
        rows.push((
            "F3 or /swarm hides this · Esc closes · Ctrl-C stops the swarm (resumable)".to_owned(),
            theme.key(),
        ));
    } else {
        rows.push((
            "F3 or /swarm hides this · atto swarm status prints it".to_owned(),
            theme.key(),
        ));
    }
    rows
}

/// `swarm 1a2b3c4d · running · 1/2 passed`, the goal, the budget, tripped models.
fn header(s: &Swarm, theme: Theme) -> Rows {
    let (passed, total) = s.progress();
    let (phase, style) = match &s.phase {
        Phase::Starting => ("starting".to_owned(), theme.dim()),
        Phase::Planning => ("planning".to_owned(), theme.dim()),
        Phase::AwaitingConfirmation => ("plan awaiting your yes".to_owned(), theme.warn()),
        Phase::Running => ("running".to_owned(), theme.user()),
        Phase::Stopping => ("stopping".to_owned(), theme.warn()),
        Phase::Finished { status, .. } if status == "finished" => (status.clone(), theme.ok()),
        Phase::Finished { status, .. } => (status.clone(), theme.error()),
        Phase::Lost => ("stopped without a summary".to_owned(), theme.error()),
    };
    let mut rows = vec![(
        format!("swarm {} · {phase} · {passed}/{total} passed", s.short_id()),
        style,
    )];
    rows.push((format!("goal: {}", s.goal), theme.dim()));
    rows.push((budget(s.budget), theme.dim()));
    for (model, health) in &s.tripped {
        rows.push((
            format!("model {model}: circuit breaker tripped (health {health}%), no dispatches"),
            theme.warn(),
        ));
    }
    if let Phase::Finished { report, .. } = &s.phase {
        rows.push((format!("report: {report}"), theme.dim()));
    }
    rows
}

/// `tokens 12.3k of 100.0k · $0.0123 of $5.00`; "no cap" where there is none.
fn budget(b: Option<SwarmBudget>) -> String {
    let Some(b) = b else {
        return "tokens: none counted yet".to_owned();
    };
    if !b.caps_known {
        let cost = b
            .cost_usd
            .map_or_else(|| "cost unknown".to_owned(), |c| format!("${c:.4}"));
        return format!("tokens {} · {cost}", tokens(b.tokens));
    }
    let tokens = match b.max_tokens {
        Some(max) => format!("tokens {} of {}", tokens(b.tokens), tokens(max)),
        None => format!("tokens {} (no cap)", tokens(b.tokens)),
    };
    let cost = match (b.cost_usd, b.max_usd) {
        (Some(c), Some(max)) => format!("${c:.4} of ${max:.2}"),
        (None, Some(max)) => format!("cost unknown (cap ${max:.2})"),
        (Some(c), None) => format!("${c:.4} (no cap)"),
        (None, None) => "cost unknown (no cap)".to_owned(),
    };
    format!("{tokens} · {cost}")
}

/// A task's row, and under it what its worker does, its retry or why it ended.
fn task(t: &SwarmTaskRow, theme: Theme) -> Rows {
    let indent = "  ".repeat(t.depth);
    let mut facts = Vec::new();
    match t.attempts {
        0 => {}
        1 => facts.push("1 attempt".to_owned()),
        n => facts.push(format!("{n} attempts")),
    }
    if let Some(score) = t.score {
        facts.push(format!("score {score}/5"));
    }
    if !t.dependencies.is_empty() {
        facts.push(format!("after {}", t.dependencies.join(", ")));
    }
    let facts = if facts.is_empty() {
        String::new()
    } else {
        format!(" · {}", facts.join(" · "))
    };
    let description = t.description.lines().next().unwrap_or("");
    let mut rows = vec![(
        format!(
            "{indent}{} {} [{}] {}{facts} · {description}",
            t.status.glyph(),
            t.id,
            t.kind.as_str(),
            status_word(t.status)
        ),
        status_style(t.status, theme),
    )];
    let under = format!("{indent}    ");
    match t.status {
        TaskStatus::Running => {
            let model = t.model.as_deref().unwrap_or("worker");
            let doing = t.activity.as_deref().unwrap_or("starting…");
            rows.push((format!("{under}{model} · {doing}"), theme.dim()));
        }
        TaskStatus::Pending => {
            if let Some(r) = &t.retry {
                rows.push((
                    format!(
                        "{under}↻ attempt {} in {:.1} s: {}",
                        r.attempt,
                        r.delay_ms as f64 / 1000.0,
                        r.reason
                    ),
                    theme.warn(),
                ));
            }
        }
        TaskStatus::AwaitingIntervention => {
            rows.push((
                format!("{under}waits for your decision (g guidance · f fixed · s skip)"),
                theme.warn(),
            ));
        }
        TaskStatus::Failed | TaskStatus::Skipped => {
            if let Some(reason) = &t.reason {
                rows.push((format!("{under}{reason}"), theme.dim()));
            }
        }
        TaskStatus::Passed => {}
    }
    rows
}

fn status_word(status: TaskStatus) -> &'static str {
    match status {
        TaskStatus::AwaitingIntervention => "stuck",
        other => other.as_str(),
    }
}

fn status_style(status: TaskStatus, theme: Theme) -> ratatui::style::Style {
    match status {
        TaskStatus::Pending => theme.text(),
        TaskStatus::Running => theme.user(),
        TaskStatus::Passed => theme.ok(),
        TaskStatus::Failed => theme.error(),
        TaskStatus::Skipped => theme.dim(),
        TaskStatus::AwaitingIntervention => theme.warn(),
    }
}
