//! The plan JSON the model is asked for, and its validation: turning a model's answer into
//! a [`TaskPlan`] or into the one error message the model is re-asked with. Checks shape,
//! step count, kinds, complexity, unknown and self dependencies, and cycles. Does not talk
//! to the model (`generate`) or change plans (`edit`).

use std::collections::{HashMap, HashSet};

use atto_protocol::{
    DecisionPoint, PlanStep, RiskLevel, StepKind, StepStatus, TaskPlan, TaskPlanStatus,
};
use serde::Deserialize;
use serde_json::Value;

/// Most steps a plan may have; a longer answer is re-asked for.
pub const MAX_STEPS: usize = 50;

/// Token budget of a step the model gave none for.
pub const DEFAULT_STEP_BUDGET: u64 = 20_000;

/// Largest token budget one step may ask for.
const MAX_STEP_BUDGET: u64 = 1_000_000;

/// The kinds a step may have, as the model writes them.
pub const KINDS: &[(&str, StepKind)] = &[
    ("ANALYZE", StepKind::Analyze),
    ("RESEARCH", StepKind::Research),
    ("DESIGN", StepKind::Design),
    ("IMPLEMENT", StepKind::Implement),
    ("REFACTOR", StepKind::Refactor),
    ("TEST", StepKind::Test),
    ("VALIDATE", StepKind::Validate),
    ("DOCUMENT", StepKind::Document),
];

/// The name of a kind as shown and as the model writes it.
pub fn kind_name(kind: StepKind) -> &'static str {
    KINDS
        .iter()
        .find(|(_, k)| *k == kind)
        .map_or("IMPLEMENT", |(name, _)| name)
}

/// The plan as the model writes it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Draft {
    intent: String,
    #[serde(default = "medium")]
    risk: String,
    #[serde(default)]
    estimated_duration_secs: u64,
    steps: Vec<DraftStep>,
}

fn medium() -> String {
    "medium".to_owned()
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DraftStep {
    id: Option<String>,
    description: String,
    #[serde(default)]
    dependencies: Vec<Value>,
    #[serde(default)]
    complexity: Option<u8>,
    #[serde(default)]
    token_budget: Option<u64>,
    kind: String,
    #[serde(default)]
    files: Vec<String>,
    #[serde(default)]
    decision: Option<DraftDecision>,
    /// The user chose to skip it (kept through model revisions).
    #[serde(default)]
    skipped: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DraftDecision {
    question: String,
    options: Vec<String>,
}

/// The JSON text inside a model answer: the whole answer, or a fenced block in it.
fn json_text(answer: &str) -> &str {
    let trimmed = answer.trim();
    if let Some(start) = trimmed.find("```") {
        let after = &trimmed[start + 3..];
        let body = after.strip_prefix("json").unwrap_or(after);
        if let Some(end) = body.find("```") {
            return body[..end].trim();
        }
    }
    match (trimmed.find('{'), trimmed.rfind('}')) {
        (Some(a), Some(b)) if a < b => &trimmed[a..=b],
        _ => trimmed,
    }
}

/// Parses and validates a model answer into a plan awaiting confirmation for `task`.
/// The error says what is wrong in words the model can act on.
pub fn parse_plan(answer: &str, task: &str, id: &str) -> Result<TaskPlan, String> {
    let value: Value = serde_json::from_str(json_text(answer))
        .map_err(|e| format!("the answer is not valid JSON ({e})"))?;
    if !value.is_object() || value.get("steps").is_none() {
        return Err(
            "the answer is JSON but not a plan: it needs an object with \"intent\" and a \
             \"steps\" array"
                .to_owned(),
        );
    }
    let draft: Draft = serde_json::from_value(value)
        .map_err(|e| format!("the plan does not fit the schema: {e}"))?;
    from_draft(draft, task, id)
}

fn from_draft(draft: Draft, task: &str, id: &str) -> Result<TaskPlan, String> {
    let risk = match draft.risk.to_ascii_lowercase().as_str() {
        "low" => RiskLevel::Low,
        "medium" => RiskLevel::Medium,
        "high" => RiskLevel::High,
        other => return Err(format!("risk must be low, medium or high, not \"{other}\"")),
    };
    let mut steps = Vec::with_capacity(draft.steps.len());
    for (i, step) in draft.steps.into_iter().enumerate() {
        let number = u32::try_from(i + 1).unwrap_or(u32::MAX);
        steps.push(step_of(step, number)?);
    }
    let by_number: HashMap<String, String> = steps
        .iter()
        .map(|s| (format!("#{}", s.number), s.id.clone()))
        .collect();
    for step in &mut steps {
        for dep in &mut step.dependencies {
            if let Some(id) = by_number.get(dep.as_str()) {
                dep.clone_from(id);
            }
        }
    }
    let plan = TaskPlan {
        id: id.to_owned(),
        task: task.to_owned(),
        intent: draft.intent.trim().to_owned(),
        risk,
        estimated_duration_secs: draft.estimated_duration_secs,
        steps,
        status: TaskPlanStatus::AwaitingConfirmation,
    };
    validate(&plan)?;
    Ok(plan)
}

/// Step `number` of a draft, its dependencies as written (`#n` for a number).
fn step_of(step: DraftStep, number: u32) -> Result<PlanStep, String> {
    let kind = KINDS
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case(step.kind.trim()))
        .map(|(_, k)| *k)
        .ok_or_else(|| {
            let names: Vec<&str> = KINDS.iter().map(|(n, _)| *n).collect();
            format!(
                "step {number} has kind \"{}\"; use one of {}",
                step.kind,
                names.join(", ")
            )
        })?;
    let mut plan_step = PlanStep {
        id: step
            .id
            .filter(|s| !s.trim().is_empty())
            .unwrap_or_else(|| format!("s{number}")),
        number,
        description: step.description.trim().to_owned(),
        dependencies: Vec::new(),
        complexity: step.complexity.unwrap_or(2),
        token_budget: step.token_budget.unwrap_or(DEFAULT_STEP_BUDGET),
        kind,
        files: step.files,
        decision: step.decision.map(|d| DecisionPoint {
            question: d.question,
            options: d.options,
            choice: None,
        }),
        status: if step.skipped {
            StepStatus::Skipped
        } else {
            StepStatus::Pending
        },
        checkpoint: None,
        result: None,
    };
    // Dependencies may name a step by id or by number; resolved once all ids are known.
    let deps = step
        .dependencies
        .into_iter()
        .map(|v| match v {
            Value::String(s) => Ok(s),
            Value::Number(n) => Ok(format!("#{n}")),
            other => Err(format!(
                "step {number} has a dependency {other} that is not a step id"
            )),
        })
        .collect::<Result<Vec<_>, _>>()?;
    plan_step.dependencies = deps;
    Ok(plan_step)
}

/// Checks a plan's rules; the same checks apply after every revision.
pub fn validate(plan: &TaskPlan) -> Result<(), String> {
    if plan.steps.is_empty() {
        return Err("the plan has no steps; give at least one".to_owned());
    }
    if plan.steps.len() > MAX_STEPS {
        return Err(format!(
            "the plan has {} steps; at most {MAX_STEPS} are allowed, so group the work into \
             fewer, larger steps",
            plan.steps.len()
        ));
    }
    let mut ids = HashSet::new();
    for step in &plan.steps {
        let n = step.number;
        if step.description.is_empty() {
            return Err(format!("step {n} has an empty description"));
        }
        if !ids.insert(step.id.as_str()) {
            return Err(format!(
                "step id \"{}\" is used twice; give each step its own id",
                step.id
            ));
        }
        // `#n` is how a dependency names step n: an id spelled so would be read as
        // another step once the plan is shown back to the model for a revision.
        if step.id.starts_with('#') {
            return Err(format!(
                "step {n} has id \"{}\"; ids may not start with \"#\", which names a step \
                 by number (\"#2\" is step 2)",
                step.id
            ));
        }
        if !(1..=5).contains(&step.complexity) {
            return Err(format!(
                "step {n} has complexity {}; use 1 to 5",
                step.complexity
            ));
        }
        if step.token_budget == 0 || step.token_budget > MAX_STEP_BUDGET {
            return Err(format!(
                "step {n} has token budget {}; use 1 to {MAX_STEP_BUDGET}",
                step.token_budget
            ));
        }
        if let Some(d) = &step.decision
            && d.options.len() < 2
        {
            return Err(format!(
                "step {n}'s decision point needs at least two options"
            ));
        }
    }
    for step in &plan.steps {
        for dep in &step.dependencies {
            if dep == &step.id {
                return Err(format!("step {} depends on itself", step.number));
            }
            if !ids.contains(dep.as_str()) {
                return Err(format!(
                    "step {} depends on \"{dep}\", which is not a step of the plan",
                    step.number
                ));
            }
        }
    }
    if let Some(cycle) = find_cycle(plan) {
        return Err(format!(
            "the dependencies form a cycle (steps {}); a step cannot wait for itself",
            cycle
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(" → ")
        ));
    }
    Ok(())
}

/// Step numbers along a dependency cycle, if there is one.
pub fn find_cycle(plan: &TaskPlan) -> Option<Vec<u32>> {
    let index: HashMap<&str, usize> = plan
        .steps
        .iter()
        .enumerate()
        .map(|(i, s)| (s.id.as_str(), i))
        .collect();
    // 0 unvisited, 1 on the stack, 2 done.
    let mut state = vec![0u8; plan.steps.len()];
    let mut stack = Vec::new();
    fn visit(
        i: usize,
        plan: &TaskPlan,
        index: &HashMap<&str, usize>,
        state: &mut [u8],
        stack: &mut Vec<usize>,
    ) -> Option<Vec<u32>> {
        state[i] = 1;
        stack.push(i);
        for dep in &plan.steps[i].dependencies {
            let Some(&j) = index.get(dep.as_str()) else {
                continue;
            };
            if state[j] == 1 {
                let from = stack.iter().position(|&k| k == j).unwrap_or(0);
                let mut cycle: Vec<u32> = stack[from..]
                    .iter()
                    .map(|&k| plan.steps[k].number)
                    .collect();
                cycle.push(plan.steps[j].number);
                return Some(cycle);
            }
            if state[j] == 0
                && let Some(c) = visit(j, plan, index, state, stack)
            {
                return Some(c);
            }
        }
        stack.pop();
        state[i] = 2;
        None
    }
    for i in 0..plan.steps.len() {
        if state[i] == 0
            && let Some(c) = visit(i, plan, &index, &mut state, &mut stack)
        {
            return Some(c);
        }
    }
    None
}

/// The JSON a plan is shown to the model as, when it is asked to revise it.
pub fn to_model_json(plan: &TaskPlan) -> String {
    let steps: Vec<Value> = plan
        .steps
        .iter()
        .map(|s| {
            let mut v = serde_json::json!({
                "id": s.id,
                "description": s.description,
                "dependencies": s.dependencies,
                "complexity": s.complexity,
                "token_budget": s.token_budget,
                "kind": kind_name(s.kind),
                "files": s.files,
            });
            if let Some(obj) = v.as_object_mut() {
                if let Some(d) = &s.decision {
                    obj.insert(
                        "decision".into(),
                        serde_json::json!({"question": d.question, "options": d.options}),
                    );
                }
                if s.status == StepStatus::Skipped {
                    obj.insert("skipped".into(), Value::Bool(true));
                }
            }
            v
        })
        .collect();
    let risk = match plan.risk {
        RiskLevel::Low => "low",
        RiskLevel::Medium => "medium",
        RiskLevel::High => "high",
    };
    serde_json::json!({
        "intent": plan.intent,
        "risk": risk,
        "estimated_duration_secs": plan.estimated_duration_secs,
        "steps": steps,
    })
    .to_string()
}

#[cfg(test)]
#[path = "schema_tests.rs"]
mod tests;
