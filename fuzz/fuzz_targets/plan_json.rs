//! The planner's plan JSON, as a model answers a plan or revision request: a plan awaiting
//! confirmation or the one error the model is re-asked with. A plan taken has 1 to
//! `MAX_STEPS` steps with unique ids, dependencies only on other steps of the plan, no
//! cycle, and passes the same validation every revision does; shown back to the model
//! (`to_model_json`, the revision request) it reads back as the same plan.
#![no_main]

use std::collections::HashSet;

use arbitrary::Unstructured;
use atto_planner::plan::schema::{MAX_STEPS, find_cycle, parse_plan, to_model_json, validate};
use libfuzzer_sys::fuzz_target;

const WORDS: &[&str] = &[
    "intent",
    "risk",
    "estimated_duration_secs",
    "steps",
    "id",
    "description",
    "dependencies",
    "complexity",
    "token_budget",
    "kind",
    "files",
    "decision",
    "question",
    "options",
    "skipped",
    "low",
    "medium",
    "high",
    "HIGH",
    "ANALYZE",
    "implement",
    " TEST ",
    "REFACTOR",
    "s1",
    "s2",
    "s3",
    "#1",
    "#2",
    "1",
    "a.rs",
    "",
    " ",
];

fuzz_target!(|data: &[u8]| {
    let Some(answer) = atto_fuzz::text(data, |u| {
        Ok(format!("Here is the plan:\n```json\n{}\n```", plan(u)?))
    }) else {
        return;
    };
    let Ok(plan) = parse_plan(&answer, "the task", "p1") else {
        return;
    };
    assert!(
        (1..=MAX_STEPS).contains(&plan.steps.len()),
        "{} steps",
        plan.steps.len()
    );
    let ids: HashSet<&str> = plan.steps.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids.len(), plan.steps.len(), "a step id used twice");
    for step in &plan.steps {
        for dep in &step.dependencies {
            assert!(
                ids.contains(dep.as_str()),
                "step {} waits for unknown {dep:?}",
                step.number
            );
            assert_ne!(dep, &step.id, "step {} waits for itself", step.number);
        }
    }
    assert_eq!(find_cycle(&plan), None);
    assert_eq!(validate(&plan), Ok(()));
    let shown = to_model_json(&plan);
    match parse_plan(&shown, "the task", "p1") {
        Ok(again) => assert_eq!(
            again, plan,
            "the plan shown to the model reads back changed"
        ),
        Err(e) => panic!("the plan shown to the model does not read back: {e}\n{shown}"),
    }
});

/// A plan object: its top-level keys from the schema and a steps array of step objects,
/// each drawn from the schema's keys and words, so validation is reached and passed.
fn plan(u: &mut Unstructured<'_>) -> arbitrary::Result<serde_json::Value> {
    let mut value = atto_fuzz::object(u, WORDS, 1)?;
    let n = u.int_in_range(0..=6)?;
    let mut steps = Vec::with_capacity(n);
    for _ in 0..n {
        let mut step = atto_fuzz::object(u, WORDS, 1)?;
        if let Some(map) = step.as_object_mut() {
            if u.ratio(3, 4)? {
                map.insert("description".into(), atto_fuzz::word(u, WORDS)?.into());
            }
            if u.ratio(3, 4)? {
                map.insert("kind".into(), atto_fuzz::word(u, WORDS)?.into());
            }
        }
        steps.push(step);
    }
    if let Some(map) = value.as_object_mut() {
        map.insert("intent".into(), atto_fuzz::word(u, WORDS)?.into());
        map.insert("steps".into(), steps.into());
    }
    Ok(value)
}
