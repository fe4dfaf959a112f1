//! The structured planner's events as text: the "Task Plan Generated" block, revisions
//! with their diff, step progress, decision prompts and the closing summary.

use atto_present::planner as present;
use atto_protocol::{Event, StepStatus, TaskPlanStatus};

/// The text for a planner event; `None` for other events.
pub(super) fn text(event: &Event) -> Option<String> {
    plan_text(event).or_else(|| step_text(event))
}

/// The plan as a whole: drafted, shown, revised, confirmed or rejected, and the planner's
/// settings.
fn plan_text(event: &Event) -> Option<String> {
    Some(match event {
        Event::PlanGenerated { plan, attempts } => {
            let tries = present::tries(*attempts);
            format!(
                "{}{tries}\nRefine it in plain words (\"remove step 2\", \"merge 2 and 3\"), then \
                 /approve or /reject.\n",
                present::plan_block(plan)
            )
        }
        Event::TaskPlanShown { plan } => present::plan_block(plan),
        Event::PlanGenerationFailed { error, .. } => format!("plan: {error}\n"),
        Event::PlanGenerationCancelled { revision, .. } => {
            format!("{}\n", present::cancelled_line(*revision))
        }
        Event::PlanRevised {
            request,
            source,
            diff,
            ..
        } => format!("{}\n{diff}", present::revision_heading(*source, request)),
        Event::PlanConfirmed { steps, .. } => format!("{}\n", present::confirmed_line(*steps)),
        Event::PlanRejected { reason, .. } => {
            format!("{}\n", present::rejected_line(reason.as_deref()))
        }
        Event::PlannerSettingsChanged { .. } => format!("{}\n", present::settings_line(event)?),
        _ => return None,
    })
}

/// A confirmed plan's run: each step's progress, the decisions it asks for, and the
/// closing summary.
fn step_text(event: &Event) -> Option<String> {
    Some(match event {
        Event::PlanDecisionRequired {
            number,
            question,
            options,
        } => {
            let list: Vec<String> = options
                .iter()
                .enumerate()
                .map(|(i, o)| format!("  [{}] {o}", i + 1))
                .collect();
            format!(
                "step {number} needs a decision: {question}\n{}\n",
                list.join("\n")
            )
        }
        Event::PlanStepStarted {
            number,
            description,
            checkpoint,
        } => match checkpoint {
            Some(id) => format!("▶ step {number}: {description} (checkpoint {id})\n"),
            None => format!("▶ step {number}: {description}\n"),
        },
        Event::PlanStepCompleted {
            number,
            summary,
            quality,
        } => {
            format!(
                "✓ step {number} completed: {summary}\n{}",
                quality.as_ref().map_or_else(String::new, evidence)
            )
        }
        Event::PlanStepRetrying {
            number,
            attempt,
            quality,
        } => format!(
            "↻ step {number} did not pass its checks; attempt {attempt}:\n{}",
            evidence(quality)
        ),
        Event::PlanStepFailed {
            number,
            error,
            rolled_back,
            quality,
        } => {
            let after = if *rolled_back {
                "; its file changes were rolled back and the plan stopped"
            } else {
                ""
            };
            format!(
                "✗ step {number} failed: {error}{after}\n{}",
                quality.as_ref().map_or_else(String::new, evidence)
            )
        }
        Event::PlanStepSkipped { number, reason } => format!("- step {number} skipped: {reason}\n"),
        Event::PlanSummary {
            status, outcomes, ..
        } => summary(*status, outcomes),
        _ => return None,
    })
}

/// The closing summary: how the plan ended and each step's outcome.
fn summary(status: TaskPlanStatus, outcomes: &[atto_protocol::StepOutcome]) -> String {
    let status = match status {
        TaskPlanStatus::Completed => "completed",
        TaskPlanStatus::Failed => "failed",
        TaskPlanStatus::Cancelled => "cancelled",
        TaskPlanStatus::Rejected => "rejected",
        TaskPlanStatus::Running | TaskPlanStatus::AwaitingConfirmation => "unfinished",
    };
    let mut out = format!("plan {status}:\n");
    for o in outcomes {
        let word = match o.status {
            StepStatus::Pending => "not run",
            other => other.as_str(),
        };
        let result = o
            .result
            .as_deref()
            .map(|r| format!(" — {r}"))
            .unwrap_or_default();
        out.push_str(&format!(
            "  {}. [{word}] {}{result}\n",
            o.number, o.description
        ));
    }
    out
}

/// A quality verdict's evidence, one indented line each: score, findings, checks run.
fn evidence(q: &atto_protocol::QualityCheck) -> String {
    let mut out = String::new();
    if let Some(score) = q.score {
        out.push_str(&format!("  score {score}/5\n"));
    }
    for line in q.findings.iter().chain(&q.checks) {
        out.push_str(&format!("  {line}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cancelled_plan_request_says_what_was_kept() {
        let drafted = Event::PlanGenerationCancelled {
            attempts: 1,
            revision: false,
        };
        assert_eq!(
            text(&drafted).as_deref(),
            Some("plan: interrupted; nothing was planned or run\n")
        );
        let revised = Event::PlanGenerationCancelled {
            attempts: 2,
            revision: true,
        };
        assert!(
            text(&revised)
                .unwrap_or_default()
                .contains("the plan is unchanged")
        );
    }
}
