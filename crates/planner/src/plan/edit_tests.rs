//! The plan-edit parser: every form it takes, the requests it must pass to the model,
//! and what each edit does to a plan (renumbering, dependencies, refusals).

use atto_protocol::{RiskLevel, TaskPlanStatus};

use super::*;

/// 1 analyze, 2 implement (after 1), 3 implement (after 2), 4 test (after 3),
/// 5 document (after 2).
fn plan() -> TaskPlan {
    let step = |n: u32, kind: StepKind, description: &str, deps: &[u32]| PlanStep {
        id: format!("s{n}"),
        number: n,
        description: description.to_owned(),
        dependencies: deps.iter().map(|d| format!("s{d}")).collect(),
        complexity: 2,
        token_budget: 1000,
        kind,
        files: Vec::new(),
        decision: None,
        status: StepStatus::Pending,
        checkpoint: None,
        result: None,
    };
    TaskPlan {
        id: "p".into(),
        task: "build an API".into(),
        intent: "API".into(),
        risk: RiskLevel::Medium,
        estimated_duration_secs: 60,
        steps: vec![
            step(1, StepKind::Analyze, "Read the routes", &[]),
            step(2, StepKind::Implement, "Add the login endpoint", &[1]),
            step(3, StepKind::Implement, "Add sessions", &[2]),
            step(4, StepKind::Test, "Write tests for login", &[3]),
            step(
                5,
                StepKind::Document,
                "Describe the API in the README",
                &[2],
            ),
        ],
        status: TaskPlanStatus::AwaitingConfirmation,
    }
}

fn descriptions(plan: &TaskPlan) -> Vec<&str> {
    plan.steps.iter().map(|s| s.description.as_str()).collect()
}

fn deps(plan: &TaskPlan, number: usize) -> Vec<&str> {
    plan.steps[number - 1]
        .dependencies
        .iter()
        .map(String::as_str)
        .collect()
}

#[test]
fn every_edit_form_parses() {
    use Edit::*;
    let cases: &[(&str, Edit)] = &[
        (
            "add rate limiting after step 3",
            Add {
                description: "Rate limiting".into(),
                position: Position::After(3),
            },
        ),
        (
            "Add a step to log requests after 2.",
            Add {
                description: "Log requests".into(),
                position: Position::After(2),
            },
        ),
        (
            "insert input validation before step 2",
            Add {
                description: "Input validation".into(),
                position: Position::Before(2),
            },
        ),
        (
            "add a changelog entry at the end",
            Add {
                description: "A changelog entry".into(),
                position: Position::End,
            },
        ),
        (
            "skip the testing step",
            Skip(Target::Name("testing".into())),
        ),
        (
            "skip the testing step for now",
            Skip(Target::Name("testing".into())),
        ),
        ("Skip step 4", Skip(Target::Number(4))),
        (
            "skip the step about docs",
            Skip(Target::Name("docs".into())),
        ),
        (
            "move step 5 before step 2",
            Move {
                step: 5,
                before: true,
                anchor: 2,
            },
        ),
        (
            "move 3 after 4",
            Move {
                step: 3,
                before: false,
                anchor: 4,
            },
        ),
        (
            "put step 5 before 3",
            Move {
                step: 5,
                before: true,
                anchor: 3,
            },
        ),
        ("remove step 4", Remove(Target::Number(4))),
        ("please delete step 1", Remove(Target::Number(1))),
        (
            "drop the documentation step",
            Remove(Target::Name("documentation".into())),
        ),
        ("merge 2 and 3", Merge(2, 3)),
        ("merge steps 3 and 2", Merge(2, 3)),
        ("combine step 2 with step 3", Merge(2, 3)),
        ("step 3 depends on 1", Depend { step: 3, on: 1 }),
        ("step 3 depends on step 1", Depend { step: 3, on: 1 }),
        ("make step 4 depend on step 1", Depend { step: 4, on: 1 }),
        ("step 5 should come after step 4", Depend { step: 5, on: 4 }),
        ("step 5 needs 4", Depend { step: 5, on: 4 }),
    ];
    for (text, expected) in cases {
        assert_eq!(parse(text).as_ref(), Some(expected), "{text}");
    }
}

#[test]
fn requests_outside_the_forms_fall_through_to_the_model() {
    for text in [
        "make the tests more thorough",
        "add logging",
        "use postgres instead of sqlite",
        "merge 2 and 2",
        "move step 5 somewhere earlier",
        "skip",
        "remove step zero",
        "step 3 depends on the login step",
        "can you split step 2 into two steps?",
        "add rate limiting after step three",
    ] {
        assert_eq!(parse(text), None, "{text}");
    }
}

#[test]
fn add_inserts_after_and_before_with_dependencies() {
    let after = apply(&plan(), &parse("add rate limiting after step 3").unwrap()).unwrap();
    assert_eq!(after.steps[3].description, "Rate limiting");
    assert_eq!(after.steps[3].number, 4);
    assert_eq!(deps(&after, 4), ["s3"]);
    assert_eq!(after.steps[4].number, 5, "later steps are renumbered");
    let before = apply(
        &plan(),
        &parse("insert input validation before step 2").unwrap(),
    )
    .unwrap();
    assert_eq!(before.steps[1].description, "Input validation");
    assert_eq!(deps(&before, 2), ["s1"]);
    assert!(deps(&before, 3).contains(&before.steps[1].id.as_str()));
    let end = apply(&plan(), &parse("add a test run at the end").unwrap()).unwrap();
    assert_eq!(end.steps[5].kind, StepKind::Test);
    assert_eq!(deps(&end, 6), ["s5"]);
    assert_eq!(
        apply(&plan(), &parse("add x after step 9").unwrap()),
        Err(EditError::Invalid(
            "there is no step 9; the plan has steps 1 to 5".into()
        ))
    );
}

#[test]
fn skip_by_number_kind_or_words_and_unclear_names_go_to_the_model() {
    let by_kind = apply(&plan(), &parse("skip the testing step").unwrap()).unwrap();
    assert_eq!(by_kind.steps[3].status, StepStatus::Skipped);
    let by_words = apply(&plan(), &parse("skip the step about sessions").unwrap()).unwrap();
    assert_eq!(by_words.steps[2].status, StepStatus::Skipped);
    let by_number = apply(&plan(), &parse("skip step 1").unwrap()).unwrap();
    assert_eq!(by_number.steps[0].status, StepStatus::Skipped);
    // "add" is in two descriptions, "deploy" in none: not confident.
    assert_eq!(
        apply(&plan(), &parse("skip the add step").unwrap()),
        Err(EditError::Unclear)
    );
    assert_eq!(
        apply(&plan(), &parse("skip the deploy step").unwrap()),
        Err(EditError::Unclear)
    );
    assert!(matches!(
        apply(&by_number, &parse("skip step 1").unwrap()),
        Err(EditError::Invalid(_))
    ));
}

#[test]
fn move_reorders_and_refuses_to_break_dependencies() {
    let moved = apply(&plan(), &parse("move step 5 before step 3").unwrap()).unwrap();
    assert_eq!(
        descriptions(&moved),
        [
            "Read the routes",
            "Add the login endpoint",
            "Describe the API in the README",
            "Add sessions",
            "Write tests for login"
        ]
    );
    let after = apply(&plan(), &parse("move step 5 after 1").unwrap());
    assert!(
        matches!(after, Err(EditError::Invalid(m)) if m.contains("step 5")),
        "5 needs 2"
    );
    let err = apply(&plan(), &parse("move step 5 before step 2").unwrap()).unwrap_err();
    assert_eq!(
        err,
        EditError::Invalid("step 5 depends on step 2, so it cannot run before it".into())
    );
}

#[test]
fn remove_hands_dependencies_on_to_dependents() {
    let removed = apply(&plan(), &parse("remove step 3").unwrap()).unwrap();
    assert_eq!(removed.steps.len(), 4);
    assert_eq!(removed.steps[2].description, "Write tests for login");
    assert_eq!(removed.steps[2].number, 3);
    assert_eq!(deps(&removed, 3), ["s2"]);
    let by_name = apply(&plan(), &parse("drop the documentation step").unwrap()).unwrap();
    assert_eq!(by_name.steps.len(), 4);
}

#[test]
fn merge_joins_two_steps_and_their_dependents() {
    let merged = apply(&plan(), &parse("merge 2 and 3").unwrap()).unwrap();
    assert_eq!(merged.steps.len(), 4);
    assert_eq!(
        merged.steps[1].description,
        "Add the login endpoint; add sessions"
    );
    assert_eq!(merged.steps[1].token_budget, 2000);
    assert_eq!(deps(&merged, 2), ["s1"]);
    assert_eq!(
        deps(&merged, 3),
        ["s2"],
        "the test step now waits for the merged step"
    );
}

#[test]
fn depend_adds_an_edge_and_rejects_cycles() {
    let dep = apply(&plan(), &parse("step 5 depends on 4").unwrap()).unwrap();
    assert_eq!(deps(&dep, 5), ["s2", "s4"]);
    let err = apply(&plan(), &parse("step 1 depends on 3").unwrap()).unwrap_err();
    assert!(matches!(err, EditError::Invalid(m) if m.contains("cycle")));
    assert!(matches!(
        apply(&plan(), &parse("step 3 depends on 2").unwrap()),
        Err(EditError::Invalid(_))
    ));
}
