//! The swarm's report, built from its saved state alone: Markdown for people (written next
//! to the run and shown at the end), JSON for scripts, and the short status lines of
//! `atto swarm status ID`. It reads the state and changes nothing; what is measured and how
//! tasks are judged is decided elsewhere.

use std::fmt::Write as _;

use atto_quality::Verdict;
use serde_json::{Value, json};

use crate::task::{Attempt, SwarmState, SwarmTask, TaskStatus};

pub mod html;

/// The run's caps, to show usage against (`None`: no cap).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Caps {
    /// Tokens the whole swarm may use.
    pub max_tokens: Option<u64>,
    /// Dollars the whole swarm may spend.
    pub max_usd: Option<f64>,
}

/// Files a status line or table cell shows before `+N more`.
const FILES_SHOWN: usize = 3;

/// Characters of the goal a one-line header shows.
const GOAL_CHARS: usize = 80;

/// The report as Markdown: title, totals, a table of the tasks, the skipped and failed ones
/// with their reasons, then every task's attempts.
pub fn markdown(state: &SwarmState, caps: &Caps) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# Swarm: {}\n", one_line(&state.goal, usize::MAX));
    let _ = writeln!(
        out,
        "`{}` · {} · {}\n",
        state.id,
        state.status.as_str(),
        state.workspace
    );
    if let Some(error) = &state.error {
        let _ = writeln!(out, "Stopped: {}\n", one_line(error, usize::MAX));
    }
    let _ = writeln!(out, "{}\n", totals_line(state, caps));
    tasks_table(&mut out, state);
    skipped_and_failed(&mut out, state);
    task_sections(&mut out, state);
    out
}

/// One row a task: its kind, status, attempts, score, spend and files.
fn tasks_table(out: &mut String, state: &SwarmState) {
    let _ = writeln!(
        out,
        "| id | kind | status | attempts | score | tokens | cost | files |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|---|---|");
    for t in &state.tasks {
        let files = changed_files(t);
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            cell(&t.id),
            t.kind.as_str(),
            t.status.as_str(),
            t.attempts.len(),
            t.score().map_or("—".to_owned(), |s| s.to_string()),
            thousands(t.tokens()),
            usd(t.cost_usd()),
            if files.is_empty() {
                "—".to_owned()
            } else {
                cell(&files_text(&files))
            }
        );
    }
}

/// The tasks that were skipped or failed, with why, and their last attempt's error.
fn skipped_and_failed(out: &mut String, state: &SwarmState) {
    let troubled: Vec<&SwarmTask> = state
        .tasks
        .iter()
        .filter(|t| matches!(t.status, TaskStatus::Skipped | TaskStatus::Failed))
        .collect();
    if !troubled.is_empty() {
        let _ = writeln!(out, "\n## Skipped and failed\n");
        for t in troubled {
            let reason = t.reason.as_deref().unwrap_or("no reason recorded");
            let _ = write!(
                out,
                "- **{}** ({}): {}",
                t.id,
                t.status.as_str(),
                one_line(reason, usize::MAX)
            );
            if let Some(last) = t.attempts.last() {
                let what = [last.failure_mode.as_deref(), last.error.as_deref()]
                    .into_iter()
                    .flatten()
                    .map(|s| one_line(s, usize::MAX))
                    .collect::<Vec<_>>();
                if !what.is_empty() {
                    let _ = write!(
                        out,
                        ". Last attempt ({}): {}",
                        last.number,
                        what.join(" — ")
                    );
                }
            }
            out.push('\n');
        }
    }
}

/// Every task's description, dependencies and attempts.
fn task_sections(out: &mut String, state: &SwarmState) {
    let _ = writeln!(out, "\n## Tasks");
    for t in &state.tasks {
        let _ = writeln!(
            out,
            "\n### {} · {} · {}\n",
            t.id,
            t.kind.as_str(),
            t.status.as_str()
        );
        let _ = writeln!(out, "{}", one_line(&t.description, usize::MAX));
        if !t.dependencies.is_empty() {
            let _ = writeln!(out, "\nAfter: {}", t.dependencies.join(", "));
        }
        if t.attempts.is_empty() {
            let _ = writeln!(out, "\nNo attempts.");
            continue;
        }
        out.push('\n');
        for a in &t.attempts {
            let _ = writeln!(out, "- {}", attempt_line(a));
            // Where the compiler stopped is what the reader acts on.
            for e in &a.compilation_errors {
                let _ = writeln!(out, "  - `{}`", one_line(&e.line_text(), usize::MAX));
            }
        }
    }
}

/// The report as JSON: the same facts as [`markdown`], unknown costs as `null`.
pub fn json(state: &SwarmState, caps: &Caps) -> Value {
    let counts = Counts::of(state);
    let tasks: Vec<Value> = state
        .tasks
        .iter()
        .map(|t| {
            json!({
                "id": t.id,
                "kind": t.kind.as_str(),
                "status": t.status.as_str(),
                "dependencies": t.dependencies,
                "attempts": t.attempts.len(),
                "score": t.score(),
                "tokens": t.tokens(),
                "cost_usd": t.cost_usd(),
                "files": changed_files(t),
                "target_files": t.target_files,
                "reason": t.reason,
                "passed_ms": t.passed_ms,
                "attempt_log": t.attempts.iter().map(attempt_json).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({
        "swarm_id": state.id,
        "goal": state.goal,
        "workspace": state.workspace,
        "status": state.status.as_str(),
        "error": state.error,
        "totals": {
            "tasks": state.tasks.len(),
            "passed": counts.passed,
            "failed": counts.failed,
            "skipped": counts.skipped,
            "unfinished": counts.unfinished,
            "tokens": state.tokens(),
            "max_tokens": caps.max_tokens,
            "cost_usd": state.cost_usd(),
            "max_usd": caps.max_usd,
            "coordinator_tokens": state.coordinator_tokens,
            "coordinator_cost_usd": state.coordinator_cost_usd,
        },
        "tasks": tasks,
    })
}

/// What `atto swarm status ID` prints: a header (id, status, goal), one line per task
/// indented by its depth in the dependency graph, then the totals against the caps.
pub fn status_lines(state: &SwarmState, caps: &Caps) -> Vec<String> {
    let mut lines = vec![format!(
        "swarm {} · {} · {}",
        state.id,
        state.status.as_str(),
        one_line(&state.goal, GOAL_CHARS)
    )];
    if let Some(error) = &state.error {
        lines.push(format!("stopped: {}", one_line(error, usize::MAX)));
    }
    let depths = depths(&state.tasks);
    for (t, depth) in state.tasks.iter().zip(depths) {
        let mut parts = vec![format!(
            "{}{} {} [{}] {}",
            "  ".repeat(depth),
            t.status.glyph(),
            t.id,
            t.kind.as_str(),
            t.status.as_str()
        )];
        match t.attempts.len() {
            0 => {}
            1 => parts.push("1 attempt".to_owned()),
            n => parts.push(format!("{n} attempts")),
        }
        if let Some(score) = t.score() {
            parts.push(format!("score {score}"));
        }
        if t.tokens() > 0 {
            parts.push(format!("{} tokens", thousands(t.tokens())));
        }
        // Until it changed something, the files it is meant to change.
        let mut files = changed_files(t);
        if files.is_empty() {
            files = t.target_files.iter().map(String::as_str).collect();
        }
        if !files.is_empty() {
            parts.push(files_text(&files));
        }
        lines.push(parts.join(" · "));
    }
    lines.push(totals_line(state, caps));
    lines
}

#[derive(Debug, Default)]
struct Counts {
    passed: usize,
    failed: usize,
    skipped: usize,
    unfinished: usize,
}

impl Counts {
    fn of(state: &SwarmState) -> Counts {
        let mut c = Counts::default();
        for t in &state.tasks {
            match t.status {
                TaskStatus::Passed => c.passed += 1,
                TaskStatus::Failed => c.failed += 1,
                TaskStatus::Skipped => c.skipped += 1,
                TaskStatus::Pending | TaskStatus::Running | TaskStatus::AwaitingIntervention => {
                    c.unfinished += 1;
                }
            }
        }
        c
    }
}

/// `3 of 5 passed, 1 failed, 1 skipped` (and `, 1 unfinished` when some are).
fn tasks_summary(state: &SwarmState) -> String {
    let c = Counts::of(state);
    let mut tasks = format!(
        "{} of {} passed, {} failed, {} skipped",
        c.passed,
        state.tasks.len(),
        c.failed,
        c.skipped
    );
    if c.unfinished > 0 {
        let _ = write!(tasks, ", {} unfinished", c.unfinished);
    }
    tasks
}

/// `3 of 5 passed, 1 failed, 1 skipped · 12,345 tokens of 100,000 · $0.12 of $5.00 ·
/// coordinator 2,000 tokens`.
fn totals_line(state: &SwarmState, caps: &Caps) -> String {
    let tasks = tasks_summary(state);
    let tokens = match caps.max_tokens {
        Some(max) => format!("{} of {} tokens", thousands(state.tokens()), thousands(max)),
        None => format!("{} tokens (no cap)", thousands(state.tokens())),
    };
    let cost = match (state.cost_usd(), caps.max_usd) {
        (Some(cost), Some(max)) => format!("{} of {}", usd(Some(cost)), usd(Some(max))),
        (None, Some(max)) => format!("cost unknown (cap {})", usd(Some(max))),
        (cost, None) => format!("{} (no cap)", usd(cost)),
    };
    let coordinator = format!("coordinator {} tokens", thousands(state.coordinator_tokens));
    [tasks, tokens, cost, coordinator].join(" · ")
}

/// `2 · gpt-5 · needs_retry · score 2 · quality · tests fail · 12.3 s`.
fn attempt_line(a: &Attempt) -> String {
    let mut parts = vec![
        format!("attempt {}", a.number),
        if a.model.is_empty() {
            "model unknown".to_owned()
        } else {
            a.model.clone()
        },
        a.verdict.map_or("not judged", verdict_str).to_owned(),
    ];
    if let Some(score) = a.score {
        parts.push(format!("score {score}"));
    }
    if let Some(mode) = &a.failure_mode {
        parts.push(mode.clone());
    }
    if let Some(error) = &a.error {
        parts.push(one_line(error, usize::MAX));
    }
    parts.push(format!("{} tokens", thousands(a.tokens)));
    parts.push(duration(a.duration_ms));
    parts.join(" · ")
}

fn attempt_json(a: &Attempt) -> Value {
    json!({
        "number": a.number,
        "model": a.model,
        "session_id": a.session_id,
        "exit_code": a.exit_code,
        "verdict": a.verdict.map(verdict_str),
        "score": a.score,
        "failure_mode": a.failure_mode,
        "error": a.error,
        "compilation_errors": a.compilation_errors,
        "files": a.files,
        "tokens": a.tokens,
        "cost_usd": a.cost_usd,
        "duration_ms": a.duration_ms,
        "started_ms": a.started_ms,
        "ended_ms": a.ended_ms,
        "worker": a.worker,
        "backoff_ms": a.backoff_ms,
    })
}

fn verdict_str(v: Verdict) -> &'static str {
    match v {
        Verdict::Pass => "pass",
        Verdict::Fail => "fail",
        Verdict::NeedsRetry => "needs_retry",
        Verdict::Intervention => "intervention",
    }
}

/// Every file the task's attempts changed, first mention first.
fn changed_files(t: &SwarmTask) -> Vec<&str> {
    let mut files: Vec<&str> = Vec::new();
    for f in t.attempts.iter().flat_map(|a| &a.files) {
        if !files.contains(&f.as_str()) {
            files.push(f);
        }
    }
    files
}

/// `a.py, b.py, c.py +2 more`.
fn files_text(files: &[&str]) -> String {
    let shown = files
        .iter()
        .take(FILES_SHOWN)
        .copied()
        .collect::<Vec<_>>()
        .join(", ");
    match files.len().saturating_sub(FILES_SHOWN) {
        0 => shown,
        more => format!("{shown} +{more} more"),
    }
}

pub use atto_present::swarm::depths;

/// `1,234,567`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `$0.12`, `$0.0042` for amounts under a cent, `unknown` without a price.
fn usd(amount: Option<f64>) -> String {
    match amount {
        None => "unknown".to_owned(),
        Some(a) if a != 0.0 && a.abs() < 0.01 => format!("${a:.4}"),
        Some(a) => format!("${a:.2}"),
    }
}

/// `850 ms`, `12.3 s`, `2 min 5 s`.
fn duration(ms: u64) -> String {
    match ms {
        0..1_000 => format!("{ms} ms"),
        1_000..60_000 => format!("{:.1} s", ms as f64 / 1_000.0),
        _ => format!("{} min {} s", ms / 60_000, ms % 60_000 / 1_000),
    }
}

/// The first line of `text`, cut to `max` characters with `…`.
fn one_line(text: &str, max: usize) -> String {
    let first = text.trim().lines().next().unwrap_or("").trim();
    let more_lines = text.trim().lines().nth(1).is_some();
    if first.chars().count() > max {
        let cut: String = first.chars().take(max.saturating_sub(1)).collect();
        format!("{cut}…")
    } else if more_lines {
        format!("{first} …")
    } else {
        first.to_owned()
    }
}

/// Text safe in one Markdown table cell.
fn cell(text: &str) -> String {
    one_line(text, usize::MAX).replace('|', "\\|")
}

#[cfg(test)]
#[path = "report_tests.rs"]
mod tests;
