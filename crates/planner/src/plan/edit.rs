//! The deterministic half of plan refinement: a parser for the plain edit requests of the
//! plan-mode seed ("add rate limiting after step 3", "skip the testing step", "move step 5
//! before step 2", "remove step 4", "merge 2 and 3", "step 3 depends on 1", and close
//! variants), and applying them to a plan. What it cannot read with confidence (an unknown
//! form, a step name matching no step or several) is [`EditError::Unclear`]: the caller
//! asks the model instead. It never guesses.

use std::collections::HashSet;

use atto_protocol::{PlanStep, StepKind, StepStatus, TaskPlan};

use super::schema::{self, DEFAULT_STEP_BUDGET};

/// Which step an edit means.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// By number ("step 4").
    Number(u32),
    /// By what it is about ("the testing step").
    Name(String),
}

/// Where a new step goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Position {
    /// Right after this step, depending on it.
    After(u32),
    /// Right before this step, which then depends on it.
    Before(u32),
    /// At the end, after the last step.
    End,
}

/// An edit the parser understood.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Edit {
    /// A new step.
    Add {
        /// What it does.
        description: String,
        /// Where.
        position: Position,
    },
    /// Keep the step but do not run it.
    Skip(Target),
    /// Take the step out; its dependents inherit its dependencies.
    Remove(Target),
    /// Put step `step` before (or after) step `anchor`.
    Move {
        /// The step to move.
        step: u32,
        /// Before the anchor (else after).
        before: bool,
        /// The step it moves next to.
        anchor: u32,
    },
    /// Two steps become one.
    Merge(u32, u32),
    /// `step` waits for `on`.
    Depend {
        /// The step that waits.
        step: u32,
        /// The step it waits for.
        on: u32,
    },
}

/// Why an edit was not applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditError {
    /// Not understood with confidence: ask the model.
    Unclear,
    /// Understood, but it cannot be done (what and why, for the user).
    Invalid(String),
}

/// Reads an edit request; `None` when it is not one of the known forms.
pub fn parse(request: &str) -> Option<Edit> {
    let text = normalize(request);
    let words: Vec<&str> = text.split_whitespace().collect();
    match words.as_slice() {
        ["add" | "insert", rest @ ..] => parse_add(rest),
        ["skip", rest @ ..] => target(rest).map(Edit::Skip),
        ["remove" | "delete" | "drop", rest @ ..] => target(rest).map(Edit::Remove),
        ["move" | "put", rest @ ..] => parse_move(rest),
        ["merge" | "combine", rest @ ..] => parse_merge(rest),
        ["make", "step", a, "depend" | "depends", "on", rest @ ..] => depend(a, rest),
        ["step", a, "depends" | "depend", "on", rest @ ..]
        | ["step", a, "should" | "must", "depend", "on", rest @ ..]
        | ["step", a, "needs" | "requires", rest @ ..]
        | ["step", a, "should" | "must", "come", "after", rest @ ..] => depend(a, rest),
        _ => None,
    }
}

/// Lowercase words without punctuation or filler ("please", "for now").
fn normalize(request: &str) -> String {
    let mut text: String = request
        .to_lowercase()
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                ' '
            }
        })
        .collect();
    for filler in [" for now", " please", " instead"] {
        if let Some(stripped) = text.trim_end().strip_suffix(filler) {
            text = stripped.to_owned();
        }
    }
    let text = text.trim();
    text.strip_prefix("please ").unwrap_or(text).to_owned()
}

fn number(word: &str) -> Option<u32> {
    word.parse::<u32>().ok().filter(|n| *n > 0)
}

/// `step N`, `N`, or a name ("the testing step", "the step about docs").
fn target(words: &[&str]) -> Option<Target> {
    match words {
        ["step", n] | [n] if number(n).is_some() => number(n).map(Target::Number),
        [] => None,
        _ => {
            let mut rest: Vec<&str> = words.to_vec();
            if rest.first() == Some(&"the") {
                rest.remove(0);
            }
            if rest.last().is_some_and(|w| *w == "step" || *w == "steps") {
                rest.pop();
            }
            if let ["step", "about" | "for" | "that", tail @ ..] = rest.as_slice() {
                rest = tail.to_vec();
            } else if rest.first() == Some(&"step") {
                return None;
            }
            (!rest.is_empty() && rest.len() <= 4 && rest.iter().all(|w| number(w).is_none()))
                .then(|| Target::Name(rest.join(" ")))
        }
    }
}

fn parse_add(words: &[&str]) -> Option<Edit> {
    let (body, position) = match words {
        [body @ .., "after" | "before", "step", n] | [body @ .., "after" | "before", n] => {
            let n = number(n)?;
            let before = words.get(body.len()) == Some(&"before");
            (
                body,
                if before {
                    Position::Before(n)
                } else {
                    Position::After(n)
                },
            )
        }
        [body @ .., "at", "the", "end"] | [body @ .., "last"] => (body, Position::End),
        _ => return None,
    };
    let mut body: &[&str] = body;
    for prefix in [
        &["a", "step", "to"][..],
        &["a", "step", "for"],
        &["a", "step"],
        &["step"],
    ] {
        if let Some(rest) = body.strip_prefix(prefix) {
            body = rest;
            break;
        }
    }
    if body.is_empty() {
        return None;
    }
    Some(Edit::Add {
        description: capitalize(&body.join(" ")),
        position,
    })
}

fn parse_move(words: &[&str]) -> Option<Edit> {
    let (a, dir, b) = match words {
        ["step", a, dir, "step", b] | ["step", a, dir, b] | [a, dir, "step", b] | [a, dir, b] => {
            (a, dir, b)
        }
        _ => return None,
    };
    let before = match *dir {
        "before" => true,
        "after" => false,
        _ => return None,
    };
    Some(Edit::Move {
        step: number(a)?,
        before,
        anchor: number(b)?,
    })
}

fn parse_merge(words: &[&str]) -> Option<Edit> {
    let (a, b) = match words {
        ["steps" | "step", a, "and" | "with" | "into", "step", b]
        | ["steps" | "step", a, "and" | "with" | "into", b]
        | [a, "and" | "with" | "into", "step", b]
        | [a, "and" | "with" | "into", b] => (a, b),
        _ => return None,
    };
    let (a, b) = (number(a)?, number(b)?);
    (a != b).then_some(Edit::Merge(a.min(b), a.max(b)))
}

fn depend(a: &str, rest: &[&str]) -> Option<Edit> {
    let on = match rest {
        ["step", n] | [n] => number(n)?,
        _ => return None,
    };
    Some(Edit::Depend {
        step: number(a)?,
        on,
    })
}

fn capitalize(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// Applies `edit` to a copy of `plan`; the result is renumbered and validated.
pub fn apply(plan: &TaskPlan, edit: &Edit) -> Result<TaskPlan, EditError> {
    let mut plan = plan.clone();
    match edit {
        Edit::Add {
            description,
            position,
        } => add(&mut plan, description, position)?,
        Edit::Skip(target) => {
            let i = resolve(&plan, target)?;
            let step = &mut plan.steps[i];
            if step.status == StepStatus::Skipped {
                return Err(EditError::Invalid(format!(
                    "step {} is already skipped",
                    step.number
                )));
            }
            step.status = StepStatus::Skipped;
            step.result = Some("skipped by the user".to_owned());
        }
        Edit::Remove(target) => {
            let i = resolve(&plan, target)?;
            let removed = plan.steps.remove(i);
            for step in &mut plan.steps {
                if step.dependencies.contains(&removed.id) {
                    step.dependencies.retain(|d| d != &removed.id);
                    for dep in &removed.dependencies {
                        if !step.dependencies.contains(dep) {
                            step.dependencies.push(dep.clone());
                        }
                    }
                }
            }
        }
        Edit::Move {
            step,
            before,
            anchor,
        } => move_step(&mut plan, *step, *before, *anchor)?,
        Edit::Merge(a, b) => merge(&mut plan, *a, *b)?,
        Edit::Depend { step, on } => {
            let (i, j) = (index(&plan, *step)?, index(&plan, *on)?);
            if i == j {
                return Err(EditError::Invalid(format!(
                    "step {step} cannot depend on itself"
                )));
            }
            let id = plan.steps[j].id.clone();
            if plan.steps[i].dependencies.contains(&id) {
                return Err(EditError::Invalid(format!(
                    "step {step} already depends on step {on}"
                )));
            }
            plan.steps[i].dependencies.push(id);
        }
    }
    for (i, step) in plan.steps.iter_mut().enumerate() {
        step.number = u32::try_from(i + 1).unwrap_or(u32::MAX);
    }
    schema::validate(&plan).map_err(EditError::Invalid)?;
    Ok(plan)
}

fn index(plan: &TaskPlan, number: u32) -> Result<usize, EditError> {
    plan.steps
        .iter()
        .position(|s| s.number == number)
        .ok_or_else(|| {
            EditError::Invalid(format!(
                "there is no step {number}; the plan has steps 1 to {}",
                plan.steps.len()
            ))
        })
}

/// The one step a target names; a name matching none or several is unclear.
fn resolve(plan: &TaskPlan, target: &Target) -> Result<usize, EditError> {
    let name = match target {
        Target::Number(n) => return index(plan, *n),
        Target::Name(name) => name,
    };
    let stems: Vec<String> = name
        .split_whitespace()
        .filter(|w| !matches!(*w, "the" | "a" | "an" | "of" | "to"))
        .map(stem)
        .collect();
    if stems.is_empty() {
        return Err(EditError::Unclear);
    }
    let by_kind: Vec<usize> = match stems.as_slice() {
        [one] => plan
            .steps
            .iter()
            .enumerate()
            .filter(|(_, s)| {
                schema::kind_name(s.kind)
                    .to_lowercase()
                    .starts_with(one.as_str())
            })
            .map(|(i, _)| i)
            .collect(),
        _ => Vec::new(),
    };
    if let [i] = by_kind.as_slice() {
        return Ok(*i);
    }
    let by_text: Vec<usize> = plan
        .steps
        .iter()
        .enumerate()
        .filter(|(_, s)| {
            let text = s.description.to_lowercase();
            stems.iter().all(|w| text.contains(w.as_str()))
        })
        .map(|(i, _)| i)
        .collect();
    match by_text.as_slice() {
        [i] => Ok(*i),
        _ => Err(EditError::Unclear),
    }
}

/// "testing" → "test", "docs" → "doc", "documentation" → "document".
fn stem(word: &str) -> String {
    for suffix in ["ation", "ing", "s"] {
        if let Some(s) = word.strip_suffix(suffix)
            && s.len() >= 3
        {
            return s.to_owned();
        }
    }
    word.to_owned()
}

/// The kind a new step's words suggest.
fn kind_for(description: &str) -> StepKind {
    let text = description.to_lowercase();
    let has = |words: &[&str]| words.iter().any(|w| text.contains(w));
    if has(&["test"]) {
        StepKind::Test
    } else if has(&["document", "readme", "docs"]) {
        StepKind::Document
    } else if has(&["refactor", "restructure"]) {
        StepKind::Refactor
    } else if has(&["validate", "verify", "check", "lint"]) {
        StepKind::Validate
    } else if has(&["analy", "review", "investigate"]) {
        StepKind::Analyze
    } else {
        StepKind::Implement
    }
}

fn add(plan: &mut TaskPlan, description: &str, position: &Position) -> Result<(), EditError> {
    let ids: HashSet<&str> = plan.steps.iter().map(|s| s.id.as_str()).collect();
    let id = (plan.steps.len() + 1..)
        .map(|n| format!("s{n}"))
        .find(|id| !ids.contains(id.as_str()))
        .unwrap_or_else(|| "s-new".to_owned());
    let mut step = PlanStep {
        id: id.clone(),
        number: 0,
        description: description.to_owned(),
        dependencies: Vec::new(),
        complexity: 2,
        token_budget: DEFAULT_STEP_BUDGET,
        kind: kind_for(description),
        files: Vec::new(),
        decision: None,
        status: StepStatus::Pending,
        checkpoint: None,
        result: None,
    };
    let at = match position {
        Position::After(n) => {
            let i = index(plan, *n)?;
            step.dependencies.push(plan.steps[i].id.clone());
            i + 1
        }
        Position::Before(n) => {
            let i = index(plan, *n)?;
            step.dependencies.clone_from(&plan.steps[i].dependencies);
            plan.steps[i].dependencies.push(id);
            i
        }
        Position::End => {
            if let Some(last) = plan.steps.last() {
                step.dependencies.push(last.id.clone());
            }
            plan.steps.len()
        }
    };
    plan.steps.insert(at, step);
    Ok(())
}

fn move_step(plan: &mut TaskPlan, step: u32, before: bool, anchor: u32) -> Result<(), EditError> {
    let (i, j) = (index(plan, step)?, index(plan, anchor)?);
    if i == j {
        return Err(EditError::Invalid(format!(
            "step {step} cannot move next to itself"
        )));
    }
    let anchor_id = plan.steps[j].id.clone();
    let moved = plan.steps.remove(i);
    let j = plan
        .steps
        .iter()
        .position(|s| s.id == anchor_id)
        .unwrap_or(0);
    plan.steps.insert(if before { j } else { j + 1 }, moved);
    // The order must still let every step run after what it depends on.
    for (p, s) in plan.steps.iter().enumerate() {
        for dep in &s.dependencies {
            if let Some(later) = plan.steps[p + 1..].iter().find(|d| &d.id == dep) {
                return Err(EditError::Invalid(format!(
                    "step {} depends on step {}, so it cannot run before it",
                    s.number, later.number
                )));
            }
        }
    }
    Ok(())
}

fn merge(plan: &mut TaskPlan, a: u32, b: u32) -> Result<(), EditError> {
    let (i, j) = (index(plan, a)?, index(plan, b)?);
    let second = plan.steps.remove(j);
    let first = &mut plan.steps[i];
    let first_id = first.id.clone();
    first.description = format!(
        "{}; {}",
        first.description,
        lower_first(&second.description)
    );
    for dep in second.dependencies {
        if dep != first_id && !first.dependencies.contains(&dep) {
            first.dependencies.push(dep);
        }
    }
    first.dependencies.retain(|d| d != &second.id);
    first.complexity = first.complexity.max(second.complexity);
    first.token_budget = first.token_budget.saturating_add(second.token_budget);
    for file in second.files {
        if !first.files.contains(&file) {
            first.files.push(file);
        }
    }
    if first.decision.is_none() {
        first.decision = second.decision;
    }
    for step in &mut plan.steps {
        if step.id != first_id && step.dependencies.contains(&second.id) {
            step.dependencies.retain(|d| d != &second.id);
            if !step.dependencies.contains(&first_id) {
                step.dependencies.push(first_id.clone());
            }
        }
    }
    Ok(())
}

fn lower_first(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
#[path = "edit_tests.rs"]
mod tests;
