//! The rules of running an approved plan, without running anything: which step is next
//! (the first pending step, in number order, whose dependencies are all completed or
//! skipped), what a failure skips (every step that waits on the failed one, transitively),
//! the instruction a step's turn gets, and the outcome list of the summary. The session
//! does the running (`session/planning.rs`).
//!
//! Steps run one at a time unless the user allows parallel steps: then the ready steps
//! that declare their files, touch none of each other's and wait for no decision form a
//! batch (`batch`) that the session runs side by side, each step with its own copy of the
//! conversation, merged back in step order when the batch ends.

use std::collections::HashSet;
use std::path::Path;

use atto_protocol::{StepOutcome, StepStatus, TaskPlan, TaskPlanStatus};

use super::schema::kind_name;
use crate::overlap::{normalize, overlaps};

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

/// At most this many steps run together.
pub const MAX_BATCH: usize = 3;

/// The steps to run next when parallel steps are allowed, in number order: the next ready
/// step, joined by other ready steps while all of them have no decision point, a non-empty
/// `files` list of plain paths, and files that do not [`overlap`](crate::overlap) the
/// others', up to [`MAX_BATCH`]. A step that cannot share runs alone (a batch
/// of one). Empty when no step is ready.
pub fn batch(plan: &TaskPlan, workspace: &Path) -> Vec<usize> {
    let Some(first) = next_ready(plan) else {
        return Vec::new();
    };
    let Some(mut taken) = shareable_files(plan, first, workspace) else {
        return vec![first];
    };
    let done: HashSet<&str> = plan
        .steps
        .iter()
        .filter(|s| matches!(s.status, StepStatus::Completed | StepStatus::Skipped))
        .map(|s| s.id.as_str())
        .collect();
    let mut chosen = vec![first];
    for (i, step) in plan.steps.iter().enumerate().skip(first + 1) {
        if chosen.len() == MAX_BATCH {
            break;
        }
        let ready = step.status == StepStatus::Pending
            && step.dependencies.iter().all(|d| done.contains(d.as_str()));
        let Some(files) = ready.then(|| shareable_files(plan, i, workspace)).flatten() else {
            continue;
        };
        if files.iter().all(|f| taken.iter().all(|t| !overlaps(f, t))) {
            taken.extend(files);
            chosen.push(i);
        }
    }
    chosen
}

/// Step `i`'s files, normalized, when it may run beside others.
fn shareable_files(plan: &TaskPlan, i: usize, workspace: &Path) -> Option<Vec<String>> {
    let step = &plan.steps[i];
    if step.decision.is_some() || step.files.is_empty() {
        return None;
    }
    step.files
        .iter()
        .map(|f| normalize(f, workspace))
        .collect::<Option<Vec<_>>>()
}

/// The files step `index` declared, normalized: what it may change while it runs in a
/// batch beside others. `None` when a declared path cannot be compared safely (such a
/// step never runs in a batch).
pub fn step_scope(plan: &TaskPlan, index: usize, workspace: &Path) -> Option<Vec<String>> {
    plan.steps
        .get(index)?
        .files
        .iter()
        .map(|f| normalize(f, workspace))
        .collect()
}

/// Whether workspace-relative `path` lies within `scope` (one of its files, or under one
/// of its directories).
pub fn in_scope(scope: &[String], path: &str) -> bool {
    let Some(path) = normalize(path, Path::new("")) else {
        return false;
    };
    scope.iter().any(|declared| {
        path == *declared
            || path
                .strip_prefix(declared.as_str())
                .is_some_and(|rest| rest.starts_with('/'))
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

/// The user text of step `index` run in `batch` (indexes into `plan`, this step among them):
/// [`step_prompt`], then which steps run beside it and that only this step's files may
/// change, so that the model does not "help" with a sibling's files.
pub fn batch_step_prompt(plan: &TaskPlan, index: usize, batch: &[usize]) -> String {
    let others: Vec<String> = batch
        .iter()
        .filter(|&&i| i != index)
        .map(|&i| plan.steps[i].number.to_string())
        .collect();
    let base = step_prompt(plan, index);
    let beside = match others.as_slice() {
        [] => return base,
        [one] => format!("Step {one} runs"),
        [rest @ .., last] => format!("Steps {} and {last} run", rest.join(", ")),
    };
    format!(
        "{base}\n\n{beside} at the same time as this one, on other files. This step may \
         change only its own files: {}; writes to any other file are refused or undone.",
        plan.steps[index].files.join(", ")
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

    fn with_files(mut p: TaskPlan, files: &[&[&str]]) -> TaskPlan {
        for (step, f) in p.steps.iter_mut().zip(files) {
            step.files = f.iter().map(|s| (*s).to_owned()).collect();
        }
        p
    }

    #[test]
    fn ready_steps_with_disjoint_files_form_a_batch() {
        let ws = Path::new("/ws");
        // (ready steps, their files) -> the batch.
        let cases: &[(&[&[&str]], &[usize])] = &[
            (&[&["a.txt"], &["b.txt"]], &[0, 1]),
            (&[&["./a.txt"], &["a.txt"]], &[0]),
            (&[&["/ws/src/a.rs"], &["src/./a.rs"]], &[0]),
            (&[&["src"], &["src/a.rs"], &["srcx/a.rs"]], &[0, 2]),
            (&[&["a"], &["b"], &["c"], &["d"]], &[0, 1, 2]),
            (&[&["a"], &[], &["c"]], &[0, 2]),
            (&[&[], &["b"], &["c"]], &[0]),
            (&[&["a"], &["src/*.rs"], &["c"]], &[0, 2]),
            (&[&["../a"], &["b"]], &[0]),
            (&[&["/elsewhere/a"], &["b"]], &[0]),
            (&[&["a", "x"], &["b", "x"], &["c"]], &[0, 2]),
        ];
        for (files, want) in cases {
            let deps: Vec<&[u32]> = files.iter().map(|_| &[][..]).collect();
            let p = with_files(plan(&deps), files);
            assert_eq!(batch(&p, ws), *want, "{files:?}");
        }
    }

    #[test]
    fn decision_points_waiting_steps_and_finished_steps_stay_out_of_a_batch() {
        let ws = Path::new("/ws");
        // 3 waits for 1; 4 has a decision point.
        let mut p = with_files(
            plan(&[&[], &[], &[1], &[]]),
            &[&["a"], &["b"], &["c"], &["d"]],
        );
        p.steps[3].decision = Some(atto_protocol::DecisionPoint {
            question: "q".into(),
            options: vec!["x".into(), "y".into()],
            choice: None,
        });
        assert_eq!(batch(&p, ws), [0, 1]);
        p.steps[0].status = StepStatus::Completed;
        p.steps[1].status = StepStatus::InProgress;
        assert_eq!(
            batch(&p, ws),
            [2],
            "the decision step runs on its own later"
        );
        p.steps[2].status = StepStatus::Completed;
        assert_eq!(batch(&p, ws), [3]);
        p.steps[3].status = StepStatus::Completed;
        assert!(batch(&p, ws).is_empty());
    }

    #[test]
    fn a_batch_step_is_told_its_siblings_and_its_files() {
        let p = with_files(
            plan(&[&[], &[], &[]]),
            &[&["a.rs", "b.rs"], &["c.rs"], &["d"]],
        );
        let alone = step_prompt(&p, 0);
        let cases: &[(&[usize], &str)] =
            &[(&[0, 1], "Step 2 runs"), (&[0, 1, 2], "Steps 2 and 3 run")];
        for (batch, beside) in cases {
            assert_eq!(
                batch_step_prompt(&p, 0, batch),
                format!(
                    "{alone}\n\n{beside} at the same time as this one, on other files. \
                     This step may change only its own files: a.rs, b.rs; writes to any \
                     other file are refused or undone."
                )
            );
        }
        assert_eq!(batch_step_prompt(&p, 0, &[0]), alone, "a batch of one");
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

    #[test]
    fn a_step_may_change_only_what_it_declared() {
        let scope = vec!["src/a.rs".to_owned(), "docs".to_owned()];
        for (path, inside) in [
            ("src/a.rs", true),
            ("./src/a.rs", true),
            ("docs/x.md", true),
            ("docs", true),
            ("src/b.rs", false),
            ("src/a.rs.bak", false),
            ("docsx/y", false),
            ("../src/a.rs", false),
            ("", false),
        ] {
            assert_eq!(in_scope(&scope, path), inside, "{path}");
        }
    }
}
