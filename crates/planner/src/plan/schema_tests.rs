//! Plan validation: what a model's plan JSON must be, and the exact error each bad plan
//! gets (the text the model is re-asked with).

use super::*;

fn step(id: &str, deps: &[&str]) -> Value {
    serde_json::json!({"id": id, "description": format!("do {id}"), "dependencies": deps,
        "complexity": 2, "token_budget": 1000, "kind": "implement"})
}

fn plan_json(steps: Vec<Value>) -> String {
    serde_json::json!({"intent": "x", "risk": "low", "estimated_duration_secs": 10, "steps": steps})
        .to_string()
}

#[test]
fn a_valid_plan_parses_with_numbers_and_resolved_dependencies() {
    let answer = format!(
        "Here you go:\n```json\n{}\n```",
        serde_json::json!({"intent": "add auth", "steps": [
            {"description": "read", "kind": "ANALYZE"},
            {"id": "b", "description": "write", "kind": "Implement", "dependencies": [1],
             "decision": {"question": "which lib?", "options": ["a", "b"]}},
        ]})
    );
    let plan = parse_plan(&answer, "task", "p1").unwrap();
    assert_eq!(plan.steps.len(), 2);
    assert_eq!(plan.steps[0].id, "s1");
    assert_eq!(plan.steps[1].number, 2);
    assert_eq!(plan.steps[1].dependencies, vec!["s1".to_owned()]);
    assert_eq!(plan.steps[1].kind, StepKind::Implement);
    assert_eq!(plan.risk, RiskLevel::Medium);
    assert_eq!(plan.steps[0].token_budget, DEFAULT_STEP_BUDGET);
    assert!(plan.steps[1].decision.is_some());
}

#[test]
fn bad_plans_are_rejected_with_a_reason_the_model_can_act_on() {
    let cases: Vec<(String, &str)> = vec![
        ("not json at all".to_owned(), "not valid JSON"),
        (r#"{"name": "x", "version": 2}"#.to_owned(), "not a plan"),
        ("[1, 2, 3]".to_owned(), "not a plan"),
        (plan_json(vec![]), "no steps"),
        (plan_json(vec![step("a", &["zz"])]), "not a step of the plan"),
        (plan_json(vec![step("a", &["a"])]), "depends on itself"),
        (
            plan_json(vec![step("a", &["c"]), step("b", &["a"]), step("c", &["b"])]),
            "cycle",
        ),
        (plan_json(vec![step("a", &[]), step("a", &[])]), "used twice"),
        (
            plan_json((0..500).map(|i| step(&format!("s{i}"), &[])).collect()),
            "500 steps",
        ),
        (
            serde_json::json!({"intent": "x", "steps": [{"description": "d", "kind": "DANCE"}]})
                .to_string(),
            "use one of",
        ),
        (
            serde_json::json!({"intent": "x", "steps": [{"description": "d", "kind": "TEST", "complexity": 9}]})
                .to_string(),
            "complexity 9",
        ),
    ];
    for (answer, expected) in cases {
        let err = parse_plan(&answer, "t", "p").unwrap_err();
        assert!(err.contains(expected), "{answer:.80}: {err}");
    }
}

#[test]
fn a_plan_survives_the_round_trip_through_model_json() {
    let json = plan_json(vec![step("a", &[]), step("b", &["a"])]);
    let mut plan = parse_plan(&json, "t", "p").unwrap();
    plan.steps[1].status = StepStatus::Skipped;
    let again = parse_plan(&to_model_json(&plan), "t", "p").unwrap();
    assert_eq!(again, plan);
}

/// `#2` is how a dependency names step 2: a step whose id is spelled that way would make
/// a dependency written `#1` (step 1, id `#2`) read back as step 2 once the plan is shown
/// to the model for a revision. The input the plan_json fuzz target keeps as a regression.
#[test]
fn a_step_id_spelled_like_a_step_number_is_refused() {
    let answer = serde_json::json!({"intent": "x", "steps": [
        {"id": "#2", "description": "a", "kind": "DESIGN"},
        {"id": "x", "description": "b", "kind": "DESIGN"},
        {"description": "c", "kind": "TEST", "dependencies": ["#1"]},
    ]})
    .to_string();
    let err = parse_plan(&answer, "t", "p").unwrap_err();
    assert!(err.contains("step 1 has id \"#2\""), "{err}");
}
