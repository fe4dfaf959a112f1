//! The rules of running an approved plan, without running anything: which step is next
//! (the first pending step, in number order, whose dependencies are all completed or
//! skipped), what a failure skips (every step that waits on the failed one, transitively),
//! the instruction a step's turn gets, and the outcome list of the summary. The session
//! does the running (`session/planning.rs`).
//!
//! Steps run one at a time: every step is a model turn over the one conversation and the
//! one workspace of the session, so two steps at once would interleave their messages and
//! race on the same files and checkpoints.

use std::collections::HashSet;

use atto_protocol::{StepOutcome, StepStatus, TaskPlan, TaskPlanStatus};

use super::schema::kind_name;

/// The index of the next step to run, if any is ready.
pub fn next_ready(plan: &TaskPlan) -> Option<usize> {
    let done: HashSet<&str> = plan
        .steps
        .iter()
        .filter(|s| matches!(s.status, StepStatus::Completed | StepStatus::Skipped))
        .map(|s| s.id.as_str())
        .collect();
    plan.steps.iter().position(|s| {
        s.status == StepStatus::Pending && s.dependencies.iter().all(|d| done.contains(d.as_str()))
    })
}

/// Marks every pending step that waits on step `failed` (directly or through others) as
/// skipped; returns their numbers in order.
pub fn skip_dependents(plan: &mut TaskPlan, failed: usize) -> Vec<u32> {
    let failed_number = plan.steps[failed].number;
    let mut blocked: HashSet<String> = HashSet::from([plan.steps[failed].id.clone()]);
    loop {
        let more: Vec<String> = plan
            .steps
            .iter()
            .filter(|s| !blocked.contains(&s.id) && s.status == StepStatus::Pending)
            .filter(|s| s.dependencies.iter().any(|d| blocked.contains(d)))
            .map(|s| s.id.clone())
            .collect();
        if more.is_empty() {
            break;
        }
        blocked.extend(more);
    }
    let mut skipped = Vec::new();
    for step in &mut plan.steps {
        if step.status == StepStatus::Pending && blocked.contains(&step.id) {
            step.status = StepStatus::Skipped;
            step.result = Some(format!(
                "not run: it depends on step {failed_number}, which failed"
            ));
            skipped.push(step.number);
        }
    }
    skipped
}

/// The plan's status once no step can run any more.
pub fn final_status(plan: &TaskPlan) -> TaskPlanStatus {
    if plan.steps.iter().any(|s| s.status == StepStatus::Failed) {
        TaskPlanStatus::Failed
    } else {
        TaskPlanStatus::Completed
    }
}

/// Each step's outcome, in number order.
pub fn outcomes(plan: &TaskPlan) -> Vec<StepOutcome> {
    plan.steps
        .iter()
        .map(|s| StepOutcome {
            number: s.number,
            description: s.description.clone(),
            status: s.status,
            result: s.result.clone(),
        })
        .collect()
}

/// The user text of the turn that runs step `index`.
pub fn step_prompt(plan: &TaskPlan, index: usize) -> String {
    let step = &plan.steps[index];
    let files = if step.files.is_empty() {
        String::new()
    } else {
        format!(
            "\nFiles it is expected to touch: {}.",
            step.files.join(", ")
        )
    };
    let decision = step
        .decision
        .as_ref()
        .and_then(|d| {
            d.choice
                .as_ref()
                .map(|c| format!("\nThe user decided \"{}\": {c}.", d.question))
        })
        .unwrap_or_default();
    format!(
        "Plan step {} of {} [{}]: {}{files}{decision}\n\nThis is one step of the approved plan \
         for: {}\nDo only this step. When it is done, call plan_step_result with status \
         \"completed\" and a one-line summary; if it cannot be done, call plan_step_result with \
         status \"failed\" and say why. The step may use at most {} tokens.",
        step.number,
        plan.steps.len(),
        kind_name(step.kind),
        step.description,
        plan.task,
        step.token_budget
    )
}

#[cfg(test)]
mod tests {
    use atto_protocol::{PlanStep, RiskLevel, StepKind};

    use super::*;

    fn plan(deps: &[&[u32]]) -> TaskPlan {
        TaskPlan {
            id: "p".into(),
            task: "t".into(),
            intent: "i".into(),
            risk: RiskLevel::Low,
            estimated_duration_secs: 1,
            steps: deps
                .iter()
                .enumerate()
                .map(|(i, d)| PlanStep {
                    id: format!("s{}", i + 1),
                    number: u32::try_from(i + 1).unwrap_or(0),
                    description: format!("step {}", i + 1),
                    dependencies: d.iter().map(|n| format!("s{n}")).collect(),
                    complexity: 1,
                    token_budget: 100,
                    kind: StepKind::Implement,
                    files: Vec::new(),
                    decision: None,
                    status: StepStatus::Pending,
                    checkpoint: None,
                    result: None,
                })
                .collect(),
            status: TaskPlanStatus::Running,
        }
    }

    #[test]
    fn steps_run_when_their_dependencies_are_completed_or_skipped() {
        // 1 waits for 2; 3 waits for 1.
        let mut p = plan(&[&[2], &[], &[1]]);
        assert_eq!(next_ready(&p), Some(1));
        p.steps[1].status = StepStatus::Skipped;
        assert_eq!(next_ready(&p), Some(0));
        p.steps[0].status = StepStatus::InProgress;
        assert_eq!(next_ready(&p), None, "3 waits for the running step");
        p.steps[0].status = StepStatus::Completed;
        assert_eq!(next_ready(&p), Some(2));
    }

    #[test]
    fn a_failure_skips_only_what_waits_on_it() {
        // 2 after 1, 3 after 2, 4 independent, 5 after 4 and 3.
        let mut p = plan(&[&[], &[1], &[2], &[], &[4, 3]]);
        p.steps[0].status = StepStatus::Completed;
        p.steps[1].status = StepStatus::Failed;
        assert_eq!(skip_dependents(&mut p, 1), vec![3, 5]);
        assert_eq!(p.steps[3].status, StepStatus::Pending);
        assert_eq!(next_ready(&p), Some(3));
        assert_eq!(final_status(&p), TaskPlanStatus::Failed);
        assert!(
            outcomes(&p)[2]
                .result
                .as_deref()
                .unwrap_or("")
                .contains("step 2")
        );
    }
}
