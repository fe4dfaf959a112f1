//! How a task plan's steps look wherever they are drawn (the transcript's plan block and
//! progress lines, the Tasks panel, the status line): one glyph, word and style per step
//! state, and the step's facts (kind, dependencies, complexity, budget) as spans.

use atto_protocol::{PlanStep, RiskLevel, StepStatus, TaskPlan};
use ratatui::style::Style;
use ratatui::text::Span;

use crate::status::tokens;
use crate::view::Theme;

/// The glyph before a step: pending, running, done, failed, skipped.
pub fn glyph(status: StepStatus) -> &'static str {
    match status {
        StepStatus::Pending => "○",
        StepStatus::InProgress => "▶",
        StepStatus::Completed => "✓",
        StepStatus::Failed => "✗",
        StepStatus::Skipped => "–",
    }
}

/// The state as a short word.
pub fn word(status: StepStatus) -> &'static str {
    match status {
        StepStatus::Pending => "pending",
        StepStatus::InProgress => "running",
        StepStatus::Completed => "done",
        StepStatus::Failed => "failed",
        StepStatus::Skipped => "skipped",
    }
}

/// The state's colour (or, without colour, its emphasis).
pub fn style(status: StepStatus, theme: Theme) -> Style {
    match status {
        StepStatus::Pending => theme.text(),
        StepStatus::InProgress => theme.user(),
        StepStatus::Completed => theme.ok(),
        StepStatus::Failed => theme.error(),
        StepStatus::Skipped => theme.dim(),
    }
}

/// "LOW", "MEDIUM", "HIGH" (coloured by `Theme::risk`).
pub fn risk_label(risk: RiskLevel) -> &'static str {
    match risk {
        RiskLevel::Low => "LOW",
        RiskLevel::Medium => "MEDIUM",
        RiskLevel::High => "HIGH",
    }
}

/// "2m 30s", "45s", "1h 05m".
pub fn seconds(secs: u64) -> String {
    match secs {
        0..60 => format!("{secs}s"),
        60..3600 => format!("{}m {:02}s", secs / 60, secs % 60),
        _ => format!("{}h {:02}m", secs / 3600, (secs % 3600) / 60),
    }
}

/// The numbers of the steps `step` waits for.
pub fn dependencies(plan: &TaskPlan, step: &PlanStep) -> Vec<u32> {
    step.dependencies
        .iter()
        .filter_map(|d| plan.steps.iter().find(|o| &o.id == d))
        .map(|o| o.number)
        .collect()
}

/// A step's facts after its description: "[IMPLEMENT] · after 1, 2 · complexity 3/5 ·
/// 8.0k tokens", as styled spans.
pub fn facts(plan: &TaskPlan, step: &PlanStep, theme: Theme) -> Vec<Span<'static>> {
    let mut spans = vec![
        Span::styled(format!(" [{}]", step.kind.name()), theme.tool()),
        Span::styled(" · ", theme.dim()),
    ];
    let deps = dependencies(plan, step);
    if !deps.is_empty() {
        let list: Vec<String> = deps.iter().map(u32::to_string).collect();
        spans.push(Span::styled(
            format!("after {} · ", list.join(", ")),
            theme.warn(),
        ));
    }
    spans.push(Span::styled(
        format!(
            "complexity {}/5 · {} tokens",
            step.complexity,
            tokens(step.token_budget)
        ),
        theme.dim(),
    ));
    spans
}

/// Steps reached (done, failed, or running now) and the steps that run at all (skipped
/// ones left out): the status line's "plan 2/5" while step 2 of 5 runs.
pub fn progress(plan: &TaskPlan) -> (usize, usize) {
    let count = |f: fn(StepStatus) -> bool| plan.steps.iter().filter(|s| f(s.status)).count();
    let reached = count(|s| {
        matches!(
            s,
            StepStatus::InProgress | StepStatus::Completed | StepStatus::Failed
        )
    });
    (reached, count(|s| s != StepStatus::Skipped))
}
