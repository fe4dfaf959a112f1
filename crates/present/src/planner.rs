//! How a task plan reads as text: the autonomous-agent spec's "Task Plan Generated" block
//! (intent, risk, duration, files affected, numbered steps as `TaskPlan::step_lines` gives
//! them). A revision's diff comes with its event (the planner writes it). Front ends print
//! these; they decide nothing.

use std::collections::BTreeSet;

use atto_protocol::{Event, RevisionSource, RiskLevel, TaskPlan};

/// The whole plan as the spec presents it for confirmation.
pub fn plan_block(plan: &TaskPlan) -> String {
    let files: BTreeSet<&str> = plan
        .steps
        .iter()
        .flat_map(|s| s.files.iter().map(String::as_str))
        .collect();
    let risk = match plan.risk {
        RiskLevel::Low => "LOW",
        RiskLevel::Medium => "MEDIUM",
        RiskLevel::High => "HIGH",
    };
    let mut out = format!(
        "Task Plan Generated\n{}\nIntent: {}\nRisk Level: {risk} | Estimated Duration: {}s | \
         Files Affected: {}\n",
        "━".repeat(60),
        plan.intent,
        plan.estimated_duration_secs,
        files.len()
    );
    if !files.is_empty() {
        out.push_str(&format!(
            "  {}\n",
            files.into_iter().collect::<Vec<_>>().join(", ")
        ));
    }
    out.push_str("\nSteps:\n");
    for line in plan.step_lines() {
        out.push_str(&format!("  {line}\n"));
    }
    out
}

/// The planner's settings in one line, as both front ends say them, from
/// `Event::PlannerSettingsChanged`; `None` for other events.
pub fn settings_line(event: &Event) -> Option<String> {
    let Event::PlannerSettingsChanged {
        auto_rollback_on_failure,
        detect,
        threshold,
        parallel,
    } = event
    else {
        return None;
    };
    let on = |b: bool| if b { "on" } else { "off" };
    Some(format!(
        "planner: auto-rollback {}, plan detection {} (threshold {}), parallel steps {}",
        on(*auto_rollback_on_failure),
        on(*detect),
        threshold,
        on(*parallel)
    ))
}

/// ` (after 3 model requests)` when drafting a plan took more than one request, else
/// nothing.
pub fn tries(attempts: u32) -> String {
    if attempts > 1 {
        format!(" (after {attempts} model requests)")
    } else {
        String::new()
    }
}

/// What an interrupted plan request kept: the plan as it was (a revision), or nothing.
pub fn cancelled_line(revision: bool) -> &'static str {
    if revision {
        "plan: revision interrupted; the plan is unchanged"
    } else {
        "plan: interrupted; nothing was planned or run"
    }
}

/// An approved plan starting its steps.
pub fn confirmed_line(steps: u32) -> String {
    format!("plan approved: running {steps} step(s)")
}

/// A rejected plan, with the person's reason when they gave one.
pub fn rejected_line(reason: Option<&str>) -> String {
    match reason {
        Some(reason) => format!("plan rejected: {reason}"),
        None => "plan rejected; nothing ran".to_owned(),
    }
}

/// The heading of a revision: who changed the plan, and what was asked.
pub fn revision_heading(source: RevisionSource, request: &str) -> String {
    let by = match source {
        RevisionSource::Parser => "edited",
        RevisionSource::Model => "revised by the model",
    };
    format!("plan {by}: {request}")
}
