//! The planner's plan JSON, as a model answers a plan or revision request: a plan awaiting
//! confirmation or the one error the model is re-asked with. A plan taken has 1 to
//! `MAX_STEPS` steps with unique ids, dependencies only on other steps of the plan, no
//! cycle, and passes the same validation every revision does; shown back to the model
//! (`to_model_json`, the revision request) it reads back as the same plan.
//!
//! With the first byte's second bit set, the input is instead a run of the model's task
//! tool calls (`task_create`, `task_update`, `task_list`, `goal_update`) on one session's
//! task graph: a task depends only on earlier tasks, and it is pending, in progress or
//! completed only when every dependency is completed or skipped (blocked otherwise).
#![no_main]

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use arbitrary::Unstructured;
use atto_planner::plan::schema::{MAX_STEPS, find_cycle, parse_plan, to_model_json, validate};
use atto_planner::work::{GoalsAndTasks, WorkTool};
use atto_protocol::TaskState;
use atto_tools::ToolContext;
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

const TASK_WORDS: &[&str] = &[
    "title",
    "detail",
    "depends_on",
    "number",
    "state",
    "result",
    "status",
    "note",
    "in_progress",
    "completed",
    "failed",
    "skipped",
    "pending",
    "blocked",
    "complete",
    "",
];

fuzz_target!(|data: &[u8]| {
    if data.first().is_some_and(|b| b & 2 != 0) {
        let _ = task_calls(&mut Unstructured::new(&data[1..]));
        return;
    }
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

/// Runs the model's task tools as the session does, then checks the graph's rules.
fn task_calls(u: &mut Unstructured<'_>) -> arbitrary::Result<()> {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    let runtime =
        RUNTIME.get_or_init(
            || match tokio::runtime::Builder::new_current_thread().build() {
                Ok(runtime) => runtime,
                Err(e) => panic!("no tokio runtime: {e}"),
            },
        );
    let (events, _seen) = tokio::sync::mpsc::unbounded_channel();
    let work = Arc::new(tokio::sync::Mutex::new(GoalsAndTasks::new(
        None,
        "s1".to_owned(),
        events,
    )));
    let tools = WorkTool::all(&work);
    let ctx = ToolContext::new(PathBuf::from("/nonexistent"));
    let calls = u.int_in_range(0..=16)?;
    for _ in 0..calls {
        let tool = u.choose(&tools)?;
        let mut args = atto_fuzz::object(u, TASK_WORDS, 1)?;
        // Numbers of tasks that exist, where the interesting transitions are.
        if let Some(map) = args.as_object_mut() {
            if u.ratio(1, 2)? {
                map.insert("number".into(), u.int_in_range(0..=4)?.into());
            }
            if u.ratio(1, 3)? {
                let deps: Vec<u32> = (0..u.int_in_range(0..=3)?)
                    .map(|_| u.int_in_range(0..=4))
                    .collect::<arbitrary::Result<_>>()?;
                map.insert("depends_on".into(), deps.into());
            }
        }
        let _ = runtime.block_on(tool.run(args, &ctx));
    }
    let work = work.blocking_lock();
    let tasks = work.tasks.list();
    let mut seen: HashMap<&str, TaskState> = HashMap::new();
    for task in tasks {
        let mut all_done = true;
        for dep in &task.depends_on {
            let Some(state) = seen.get(dep.as_str()) else {
                panic!("task {} depends on {dep}, not an earlier task", task.number);
            };
            all_done &= matches!(state, TaskState::Completed | TaskState::Skipped);
        }
        match task.state {
            TaskState::Pending | TaskState::InProgress | TaskState::Completed => {
                assert!(
                    all_done,
                    "task {} is {:?} before its dependencies",
                    task.number, task.state
                );
            }
            TaskState::Blocked => assert!(!all_done, "task {} is blocked by nothing", task.number),
            TaskState::Failed | TaskState::Skipped => {}
        }
        seen.insert(&task.id, task.state);
    }
    Ok(())
}
