//! The planner's events: the task plan's live step states, step tokens, the decision
//! dialog's lifetime and choice, and panel scrolling.

use atto_protocol::{
    DecisionPoint, Event, PlanStep, RiskLevel, StepKind, StepOutcome, StepStatus, TaskPlan,
    TaskPlanStatus, Usage,
};

use super::tests::app;
use super::{App, Panel};

fn step(number: u32, deps: &[&str]) -> PlanStep {
    PlanStep {
        id: format!("s{number}"),
        number,
        description: format!("step {number} work"),
        dependencies: deps.iter().map(|d| (*d).to_owned()).collect(),
        complexity: 2,
        token_budget: 8_000,
        kind: StepKind::Implement,
        files: vec![],
        decision: None,
        status: StepStatus::Pending,
        checkpoint: None,
        result: None,
    }
}

fn plan() -> TaskPlan {
    let mut third = step(3, &["s2"]);
    third.decision = Some(DecisionPoint {
        question: "Which store?".into(),
        options: vec!["sqlite".into(), "files".into(), "memory".into()],
        choice: None,
    });
    TaskPlan {
        id: "plan-1".into(),
        task: "t".into(),
        intent: "do it".into(),
        risk: RiskLevel::Medium,
        estimated_duration_secs: 90,
        steps: vec![step(1, &[]), step(2, &["s1"]), third],
        status: TaskPlanStatus::AwaitingConfirmation,
    }
}

fn states(app: &App) -> Vec<StepStatus> {
    app.task_plan()
        .map(|p| p.steps.iter().map(|s| s.status).collect())
        .unwrap_or_default()
}

fn usage(tokens: u64) -> Event {
    Event::Usage {
        model: "m".into(),
        usage: Usage {
            input_tokens: tokens,
            output_tokens: 0,
            cache_read_tokens: 0,
            cache_write_tokens: 0,
        },
        cost_usd: None,
    }
}

#[test]
fn step_events_drive_the_task_plan_and_its_cards() {
    let mut app = app();
    assert!(app.on_event(&Event::PlanGenerated {
        plan: plan(),
        attempts: 1
    }));
    assert_eq!(
        app.task_plan().map(|p| p.status),
        Some(TaskPlanStatus::AwaitingConfirmation)
    );
    app.on_event(&Event::PlanConfirmed {
        plan_id: "plan-1".into(),
        steps: 3,
    });
    assert_eq!(
        app.task_plan().map(|p| p.status),
        Some(TaskPlanStatus::Running)
    );
    let before = app.entries();
    app.on_event(&Event::PlanStepStarted {
        number: 1,
        description: "step 1 work".into(),
        checkpoint: Some(4),
    });
    app.on_event(&usage(1200));
    app.on_event(&usage(300));
    assert_eq!(
        states(&app),
        [
            StepStatus::InProgress,
            StepStatus::Pending,
            StepStatus::Pending
        ]
    );
    app.on_event(&Event::PlanStepCompleted {
        number: 1,
        summary: "did it".into(),
        quality: None,
    });
    // The card was updated in place, not pushed again.
    assert_eq!(app.entries(), before + 1);
    let card = app
        .transcript
        .step_mut(1)
        .map(|c| (c.status, c.tokens, c.budget));
    assert_eq!(card, Some((StepStatus::Completed, Some(1500), Some(8_000))));
    // Usage outside a step is charged to none.
    app.on_event(&usage(50));
    app.on_event(&Event::PlanStepFailed {
        number: 2,
        error: "tests fail".into(),
        rolled_back: false,
        quality: None,
    });
    app.on_event(&Event::PlanStepSkipped {
        number: 3,
        reason: "it depends on step 2, which failed".into(),
    });
    assert_eq!(
        states(&app),
        [
            StepStatus::Completed,
            StepStatus::Failed,
            StepStatus::Skipped
        ]
    );
    let failed = app.transcript.step_mut(2).map(|c| (c.status, c.tokens));
    assert_eq!(failed, Some((StepStatus::Failed, None)));
    app.on_event(&Event::PlanSummary {
        plan_id: "plan-1".into(),
        status: TaskPlanStatus::Failed,
        outcomes: vec![StepOutcome {
            number: 1,
            description: "step 1 work".into(),
            status: StepStatus::Completed,
            result: Some("did it".into()),
        }],
    });
    assert_eq!(
        app.task_plan().map(|p| p.status),
        Some(TaskPlanStatus::Failed)
    );
}

#[test]
fn revisions_replace_the_plan_and_rejection_closes_it() {
    let mut app = app();
    app.on_event(&Event::PlanGenerated {
        plan: plan(),
        attempts: 2,
    });
    let mut revised = plan();
    revised.steps.pop();
    app.on_event(&Event::PlanRevised {
        plan: revised,
        request: "remove step 3".into(),
        source: atto_protocol::RevisionSource::Parser,
        diff: "--- plan\n+++ revised plan\n-3. [IMPLEMENT] step 3 work\n".into(),
    });
    assert_eq!(app.task_plan().map(|p| p.steps.len()), Some(2));
    app.on_event(&Event::PlanRejected {
        plan_id: "plan-1".into(),
        reason: Some("not now".into()),
    });
    assert_eq!(
        app.task_plan().map(|p| p.status),
        Some(TaskPlanStatus::Rejected)
    );
    // Another plan's events do not touch this one.
    app.on_event(&Event::PlanConfirmed {
        plan_id: "other".into(),
        steps: 1,
    });
    assert_eq!(
        app.task_plan().map(|p| p.status),
        Some(TaskPlanStatus::Rejected)
    );
    assert!(app.on_event(&Event::PlannerSettingsChanged {
        auto_rollback_on_failure: false,
        detect: true,
        threshold: 1.5,
        parallel: false,
    }));
}

fn ask(app: &mut App) {
    app.on_event(&Event::PlanDecisionRequired {
        number: 3,
        question: "Which store?".into(),
        options: vec!["sqlite".into(), "files".into(), "memory".into()],
    });
}

#[test]
fn the_decision_dialog_chooses_and_closes_with_the_step_or_plan() {
    let mut app = app();
    app.on_event(&Event::PlanGenerated {
        plan: plan(),
        attempts: 1,
    });
    assert_eq!(app.decision_choice(), None);
    ask(&mut app);
    assert_eq!(app.decision_choice(), Some((3, "1".to_owned())));
    app.decision_select(1);
    app.decision_select(5);
    assert_eq!(app.decision_choice(), Some((3, "3".to_owned())));
    app.decision_select(-1);
    assert_eq!(app.decision_choice(), Some((3, "2".to_owned())));
    assert!(!app.decision_pick(4));
    assert!(!app.decision_pick(0));
    assert!(app.decision_pick(1));
    assert_eq!(app.decision_choice(), Some((3, "1".to_owned())));
    // Asked again after a bad answer: the highlight stays.
    app.decision_pick(2);
    ask(&mut app);
    assert_eq!(app.decision.as_ref().map(|d| d.selected), Some(1));
    // The step starting closes it.
    app.on_event(&Event::PlanStepStarted {
        number: 3,
        description: "step 3 work".into(),
        checkpoint: None,
    });
    assert!(app.decision.is_none());
    // So does the plan ending (an interrupt while it waited).
    ask(&mut app);
    app.on_event(&Event::PlanSummary {
        plan_id: "plan-1".into(),
        status: TaskPlanStatus::Cancelled,
        outcomes: vec![],
    });
    assert!(app.decision.is_none());
    // Dismissed, the engine still waits: the next prompt typed is the answer.
    ask(&mut app);
    app.dismiss_decision();
    assert!(app.decision.is_none());
    assert_eq!(app.decision_waiting(), Some(3));
    assert_eq!(
        app.answer_decision(" redis \n"),
        Some((3, "redis".to_owned()))
    );
    assert_eq!(app.decision_waiting(), None);
    assert_eq!(app.answer_decision("a prompt"), None, "nothing waits now");
    // Enter takes the highlighted choice and closes the wait.
    ask(&mut app);
    app.decision_pick(3);
    assert_eq!(app.take_decision_choice(), Some((3, "3".to_owned())));
    assert!(app.decision.is_none() && app.decision_waiting().is_none());
    ask(&mut app);
    app.on_event(&Event::PlanStepFailed {
        number: 3,
        error: "x".into(),
        rolled_back: true,
        quality: None,
    });
    assert!(app.decision.is_none());
    assert_eq!(app.decision_waiting(), None);
}

#[test]
fn scrolling_moves_the_open_panel_and_each_panel_starts_at_its_top() {
    let mut app = app();
    for i in 0..30 {
        app.push_notice(&format!("n{i}"));
    }
    app.panel = Some(Panel::Tasks);
    app.scroll(-4);
    assert_eq!(app.panel_scroll(), 4);
    assert_eq!(app.scroll_offset(), 0, "the transcript did not move");
    app.scroll(1);
    assert_eq!(app.panel_scroll(), 3);
    app.panel = Some(Panel::Grants);
    assert_eq!(app.panel_scroll(), 0);
    app.panel = None;
    app.scroll(2);
    assert_eq!(app.scroll_offset(), 2);
}
