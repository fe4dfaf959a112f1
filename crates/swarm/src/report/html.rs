//! The swarm's report as one self-contained HTML page (`report.html`, and `atto swarm report
//! ID --html`): the budget against the caps, a timeline of the attempts by worker slot with
//! the waits on dependencies and the backoffs between retries, the task graph, and every
//! task's attempts with their scores and the checks' findings.
//!
//! The page is built from the saved state alone, like the Markdown report. It loads nothing:
//! the CSS is inline, the pictures are inline SVG, there is no script and no link, so it
//! opens the same offline, attached to a ticket, or years later. Everything the swarm
//! recorded — the goal, task descriptions, models, findings, errors — came from a person or
//! a model and is treated as hostile: it reaches the page only through [`esc`]. Attempts
//! saved before swarms kept their times are listed with those times unknown and left out of
//! the timeline.

use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;

use atto_quality::{Finding, Stage, Verdict};

use super::{Caps, depths, duration, one_line, tasks_summary, thousands, usd, verdict_str};
use crate::task::{Attempt, SwarmState, SwarmTask, TaskStatus};

/// Width of the timeline and the task graph, in pixels.
const WIDTH: u32 = 960;
/// The timeline's column of lane and task names.
const LABELS: u32 = 140;
/// Height of one timeline row.
const ROW: u32 = 22;
/// One task graph node.
const NODE_W: u32 = 150;
const NODE_H: u32 = 36;
const COL_GAP: u32 = 60;
const ROW_GAP: u32 = 16;

const STYLE: &str = "
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#1d1d1f;background:#fff}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px}
.meta{color:#555}.stopped-note{color:#a3261d}
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ddd;padding:3px 8px;
text-align:left;vertical-align:top}th{background:#f4f4f6}
.meter{width:320px;height:12px;background:#eee;border-radius:6px;overflow:hidden;
display:inline-block;vertical-align:middle;margin-right:8px}
.meter span{display:block;height:100%;background:#3b7dd8}.meter span.over{background:#d1453b}
svg text{font:12px system-ui,sans-serif;fill:#1d1d1f}
svg .axis{stroke:#ccc}svg .sep{stroke:#999}
.attempt.pass,.swatch.pass{fill:#2e9d58;background:#2e9d58}
.attempt.retry,.swatch.retry{fill:#e0a526;background:#e0a526}
.attempt.error,.swatch.error{fill:#d1453b;background:#d1453b}
.attempt.stopped,.swatch.stopped{fill:#8a8a8a;background:#8a8a8a}
.backoff,.swatch.backoff{fill:#f6d8a8;background:#f6d8a8}
.depwait,.swatch.depwait{fill:#cfe0f5;background:#cfe0f5}
.swatch{display:inline-block;width:12px;height:12px;margin:0 4px 0 12px;vertical-align:middle}
.node rect{fill:#f4f4f6;stroke:#888}.node.passed rect{fill:#dff3e5;stroke:#2e9d58}
.node.failed rect{fill:#fbe1df;stroke:#d1453b}.node.skipped rect{fill:#eee;stroke:#aaa}
.node.running rect{fill:#e3edfb;stroke:#3b7dd8}
.node.awaiting_intervention rect{fill:#fdf1d6;stroke:#e0a526}
.edge path{stroke:#777;fill:none}.edge polygon{fill:#777}
.desc{max-width:520px}ul.attempts{margin:4px 0 12px}ul.findings{margin:2px 0;color:#555}
";

/// The report as one HTML page.
pub fn page(state: &SwarmState, caps: &Caps) -> String {
    let mut out = String::new();
    let title = one_line(&state.goal, 80);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width\">\
         <title>Swarm: {}</title><style>{STYLE}</style></head><body>\n",
        esc(&title)
    );
    let _ = writeln!(
        out,
        "<h1>Swarm: {}</h1><p class=\"meta\">{} · {} · {}</p>",
        esc(&one_line(&state.goal, usize::MAX)),
        esc(&state.id),
        state.status.as_str(),
        esc(&state.workspace)
    );
    if let Some(error) = &state.error {
        let _ = writeln!(
            out,
            "<p class=\"stopped-note\">Stopped: {}</p>",
            esc(&one_line(error, usize::MAX))
        );
    }
    budget(&mut out, state, caps);
    timeline(&mut out, state);
    graph(&mut out, state);
    tasks(&mut out, state);
    out.push_str("</body></html>\n");
    out
}

/// Text safe in HTML content and in quoted attribute values.
pub fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn budget(out: &mut String, state: &SwarmState, caps: &Caps) {
    let _ = writeln!(out, "<section id=\"budget\"><h2>Budget</h2>");
    let _ = writeln!(out, "<p>{}</p>", tasks_summary(state));
    let used = state.tokens();
    let tokens = match caps.max_tokens {
        Some(max) => format!(
            "{}{} of {} tokens",
            meter(used as f64, max as f64),
            thousands(used),
            thousands(max)
        ),
        None => format!("{} tokens (no cap)", thousands(used)),
    };
    let cost = match (state.cost_usd(), caps.max_usd) {
        (Some(cost), Some(max)) => format!(
            "{}{} of {}",
            meter(cost, max),
            usd(Some(cost)),
            usd(Some(max))
        ),
        (None, Some(max)) => format!("cost unknown (cap {})", usd(Some(max))),
        (None, None) => "cost unknown (no cap)".to_owned(),
        (cost, None) => format!("{} (no cap)", usd(cost)),
    };
    let _ = writeln!(
        out,
        "<p>{tokens}</p><p>{cost}</p><p class=\"meta\">coordinator (decomposition, \
         enrichment, judge): {} tokens, {}</p></section>",
        thousands(state.coordinator_tokens),
        usd(state.coordinator_cost_usd)
    );
}

/// A bar of `used` against `cap`, red past it.
fn meter(used: f64, cap: f64) -> String {
    let share = if cap > 0.0 { used / cap } else { 1.0 };
    let percent = (share * 100.0).clamp(0.0, 100.0);
    let over = if share > 1.0 { " class=\"over\"" } else { "" };
    format!("<span class=\"meter\"><span{over} style=\"width:{percent:.1}%\"></span></span>")
}

/// What an attempt's bar looks like.
fn outcome(a: &Attempt) -> &'static str {
    if a.failure_mode.as_deref() == Some("interrupted") {
        "stopped"
    } else {
        match a.verdict {
            Some(Verdict::Pass) => "pass",
            Some(Verdict::Fail | Verdict::NeedsRetry | Verdict::Intervention) => "retry",
            None => "error",
        }
    }
}

/// An attempt's place in time, when it was recorded.
struct Span<'a> {
    task: &'a str,
    attempt: &'a Attempt,
    start: i64,
    end: i64,
}

impl<'a> Span<'a> {
    fn of(task: &'a SwarmTask, attempt: &'a Attempt) -> Option<Span<'a>> {
        let start = attempt.started_ms?;
        let end = attempt.ended_ms.unwrap_or_else(|| {
            start.saturating_add(i64::try_from(attempt.duration_ms).unwrap_or(i64::MAX))
        });
        Some(Span {
            task: &task.id,
            attempt,
            start,
            end: end.max(start),
        })
    }

    /// When the backoff after it ended, if one was scheduled.
    fn backoff_end(&self) -> Option<i64> {
        let ms = i64::try_from(self.attempt.backoff_ms?).ok()?;
        Some(self.end.saturating_add(ms))
    }
}

/// Maps unix milliseconds onto the timeline's x axis.
struct Axis {
    origin: i64,
    span: i64,
}

impl Axis {
    fn x(&self, at: i64) -> f64 {
        let plot = f64::from(WIDTH - LABELS - 20);
        f64::from(LABELS) + (at - self.origin) as f64 / self.span as f64 * plot
    }

    /// `4.0 s` from the start of the run.
    fn offset(&self, at: i64) -> String {
        format!("{:.1} s", (at - self.origin) as f64 / 1000.0)
    }
}

/// When each task passed, where that was recorded: its own time (a person's fix passes
/// without a passing attempt), else the end of its passing attempt.
fn passed_at(state: &SwarmState) -> HashMap<&str, i64> {
    state
        .tasks
        .iter()
        .filter(|t| t.status == TaskStatus::Passed)
        .filter_map(|t| {
            let at = t.passed_ms.or_else(|| {
                let pass = t
                    .attempts
                    .iter()
                    .rev()
                    .find(|a| a.verdict == Some(Verdict::Pass))?;
                Some(Span::of(t, pass)?.end)
            })?;
            Some((t.id.as_str(), at))
        })
        .collect()
}

fn timeline(out: &mut String, state: &SwarmState) {
    let _ = writeln!(out, "<section id=\"timeline\"><h2>Timeline</h2>");
    let spans: Vec<Span<'_>> = state
        .tasks
        .iter()
        .flat_map(|t| t.attempts.iter().filter_map(move |a| Span::of(t, a)))
        .collect();
    let untimed = state.tasks.iter().map(|t| t.attempts.len()).sum::<usize>() - spans.len();
    let Some(origin) = spans.iter().map(|s| s.start).min() else {
        let _ = writeln!(
            out,
            "<p>Attempt times were not recorded for this swarm (it ran before atto kept them), \
             so there is no timeline; the tasks below list their attempts.</p></section>"
        );
        return;
    };
    let waits = dependency_waits(state, origin);
    let last = spans
        .iter()
        .map(|s| s.backoff_end().unwrap_or(s.end).max(s.end))
        .chain(waits.iter().map(|(_, until)| *until))
        .max()
        .unwrap_or(origin);
    let axis = Axis {
        origin,
        span: (last - origin).max(1),
    };
    let lanes = lanes(&spans);
    let top = 24;
    let tasks_top = top + ROW * lanes.len() as u32 + 28;
    let height = tasks_top + ROW * state.tasks.len() as u32 + 8;
    let _ = writeln!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{height}\" \
         role=\"img\" aria-label=\"Timeline of the attempts by worker and by task\">"
    );
    for i in 0..=4 {
        let at = origin + axis.span * i / 4;
        let x = axis.x(at);
        let _ = writeln!(
            out,
            "<line class=\"axis\" x1=\"{x:.1}\" y1=\"16\" x2=\"{x:.1}\" y2=\"{height}\"/>\
             <text x=\"{x:.1}\" y=\"12\" text-anchor=\"middle\">{}</text>",
            duration(u64::try_from(at - origin).unwrap_or(0))
        );
    }
    for (row, lane) in lanes.iter().enumerate() {
        let y = top + ROW * row as u32;
        let name = lane.map_or("worker unknown".to_owned(), |n| format!("worker {n}"));
        let _ = writeln!(out, "<text x=\"4\" y=\"{}\">{name}</text>", y + 15);
        for s in spans.iter().filter(|s| s.attempt.worker == *lane) {
            bar(out, &axis, s, y, true);
        }
    }
    let _ = writeln!(
        out,
        "<line class=\"sep\" x1=\"0\" y1=\"{0}\" x2=\"{WIDTH}\" y2=\"{0}\"/>",
        tasks_top - 8
    );
    for (row, t) in state.tasks.iter().enumerate() {
        let y = tasks_top + ROW * row as u32;
        let wait = waits
            .iter()
            .find(|(w, _)| w.id == t.id)
            .map(|(_, until)| *until);
        task_row(out, &axis, t, &spans, wait, y);
    }
    legend(out, untimed);
    out.push_str("</section>\n");
}

/// Dependency waits: from the run's first dispatch until the last dependency passed.
fn dependency_waits(state: &SwarmState, origin: i64) -> Vec<(&SwarmTask, i64)> {
    let passed = passed_at(state);
    state
        .tasks
        .iter()
        .filter(|t| !t.dependencies.is_empty())
        .filter_map(|t| {
            let ends: Option<Vec<i64>> = t
                .dependencies
                .iter()
                .map(|d| passed.get(d.as_str()).copied())
                .collect();
            let until = ends?.into_iter().max()?;
            (until > origin).then_some((t, until))
        })
        .collect()
}

/// One lane per worker slot, and one for attempts whose slot was not recorded.
fn lanes(spans: &[Span<'_>]) -> Vec<Option<u32>> {
    let lanes: BTreeSet<Option<u32>> = spans.iter().map(|s| s.attempt.worker).collect();
    lanes
        .iter()
        .copied()
        .filter(Option::is_some)
        .chain(lanes.contains(&None).then_some(None))
        .collect()
}

/// A task's row: its wait for its dependencies (`wait`: until when), then each attempt
/// with the backoff after it.
fn task_row(
    out: &mut String,
    axis: &Axis,
    t: &SwarmTask,
    spans: &[Span<'_>],
    wait: Option<i64>,
    y: u32,
) {
    let _ = writeln!(out, "<text x=\"4\" y=\"{}\">{}</text>", y + 15, esc(&t.id));
    if let Some(until) = wait {
        let (x0, x1) = (axis.x(axis.origin), axis.x(until));
        let _ = writeln!(
            out,
            "<rect class=\"depwait\" x=\"{x0:.1}\" y=\"{}\" width=\"{:.1}\" height=\"{}\">\
             <title>{} waits on {} · {} – {}</title></rect>",
            y + 4,
            (x1 - x0).max(1.0),
            ROW - 8,
            esc(&t.id),
            esc(&t.dependencies.join(", ")),
            axis.offset(axis.origin),
            axis.offset(until)
        );
    }
    for s in spans.iter().filter(|s| s.task == t.id) {
        if let Some(until) = s.backoff_end() {
            let (x0, x1) = (axis.x(s.end), axis.x(until));
            let _ = writeln!(
                out,
                "<rect class=\"backoff\" x=\"{x0:.1}\" y=\"{}\" width=\"{:.1}\" \
                 height=\"{}\"><title>{} backoff · {}</title></rect>",
                y + 4,
                (x1 - x0).max(1.0),
                ROW - 8,
                esc(&t.id),
                duration(s.attempt.backoff_ms.unwrap_or(0))
            );
        }
        bar(out, axis, s, y, false);
    }
}

/// What the colours mean, and how many attempts could not be drawn.
fn legend(out: &mut String, untimed: usize) {
    out.push_str("</svg>\n<p class=\"meta\">");
    for (class, what) in [
        ("pass", "passed"),
        ("retry", "rejected by the checks"),
        ("error", "worker failed"),
        ("stopped", "interrupted"),
        ("backoff", "backoff before a retry"),
        ("depwait", "waiting on dependencies"),
    ] {
        let _ = write!(out, "<span class=\"swatch {class}\"></span>{what}");
    }
    out.push_str("</p>\n");
    match untimed {
        0 => {}
        1 => out.push_str("<p>1 attempt without recorded times is not drawn.</p>\n"),
        n => {
            let _ = writeln!(
                out,
                "<p>{n} attempts without recorded times are not drawn.</p>"
            );
        }
    }
}

/// One attempt's bar; in a worker's lane it is labelled with its task.
fn bar(out: &mut String, axis: &Axis, s: &Span<'_>, y: u32, labelled: bool) {
    let (x0, x1) = (axis.x(s.start), axis.x(s.end));
    let width = (x1 - x0).max(2.0);
    let worker = s
        .attempt
        .worker
        .map_or("worker unknown".to_owned(), |n| format!("worker {n}"));
    let _ = writeln!(
        out,
        "<rect class=\"attempt {}\" x=\"{x0:.1}\" y=\"{}\" width=\"{width:.1}\" height=\"{}\" \
         rx=\"3\"><title>{} attempt {} · {worker} · {} – {}</title></rect>",
        outcome(s.attempt),
        y + 2,
        ROW - 4,
        esc(s.task),
        s.attempt.number,
        axis.offset(s.start),
        axis.offset(s.end)
    );
    // A name only where it fits (about 7 px a character).
    if labelled && width > 7.0 * (s.task.chars().count() as f64 + 1.0) {
        let _ = writeln!(
            out,
            "<text x=\"{:.1}\" y=\"{}\">{}</text>",
            x0 + 4.0,
            y + 15,
            esc(s.task)
        );
    }
}

/// Where each task's node goes: a column per depth in the graph, a row per task in it.
fn node_places(tasks: &[SwarmTask]) -> HashMap<&str, (u32, u32)> {
    let depth = depths(tasks);
    let mut rows: HashMap<usize, u32> = HashMap::new();
    let mut at: HashMap<&str, (u32, u32)> = HashMap::new();
    for (t, d) in tasks.iter().zip(&depth) {
        let row = rows.entry(*d).or_insert(0);
        let x = 8 + (NODE_W + COL_GAP) * *d as u32;
        let y = 8 + (NODE_H + ROW_GAP) * *row;
        *row += 1;
        at.entry(t.id.as_str()).or_insert((x, y));
    }
    at
}

fn graph(out: &mut String, state: &SwarmState) {
    let _ = writeln!(out, "<section id=\"graph\"><h2>Task graph</h2>");
    if state.tasks.is_empty() {
        out.push_str("<p>No tasks.</p></section>\n");
        return;
    }
    let at = node_places(&state.tasks);
    let width = at
        .values()
        .map(|(x, _)| x + NODE_W + 8)
        .max()
        .unwrap_or(WIDTH);
    let height = at
        .values()
        .map(|(_, y)| y + NODE_H + 8)
        .max()
        .unwrap_or(NODE_H);
    let _ = writeln!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" \
         role=\"img\" aria-label=\"Task graph: each arrow goes from a dependency to the task \
         that waits on it\">"
    );
    for t in &state.tasks {
        let Some(&(tx, ty)) = at.get(t.id.as_str()) else {
            continue;
        };
        let deps: BTreeSet<&str> = t.dependencies.iter().map(String::as_str).collect();
        for d in deps {
            let Some(&(dx, dy)) = at.get(d).filter(|_| d != t.id) else {
                continue;
            };
            let (x1, y1) = (dx + NODE_W, dy + NODE_H / 2);
            let (x2, y2) = (tx, ty + NODE_H / 2);
            let _ = writeln!(
                out,
                "<g class=\"edge\"><title>{} → {}</title><path d=\"M{x1},{y1} C{},{y1} {},{y2} \
                 {},{y2}\"/><polygon points=\"{x2},{y2} {},{} {},{}\"/></g>",
                esc(d),
                esc(&t.id),
                x1 + COL_GAP / 2,
                x2 - COL_GAP / 2,
                x2 - 6,
                x2 - 7,
                y2 - 4,
                x2 - 7,
                y2 + 4
            );
        }
    }
    for t in &state.tasks {
        let Some(&(x, y)) = at.get(t.id.as_str()) else {
            continue;
        };
        let score = t.score().map_or(String::new(), |s| format!(" · score {s}"));
        let _ = writeln!(
            out,
            "<g class=\"node {status}\" data-task=\"{id}\"><rect x=\"{x}\" y=\"{y}\" \
             width=\"{NODE_W}\" height=\"{NODE_H}\" rx=\"5\"/><text x=\"{}\" y=\"{}\">{} \
             {id}</text><text x=\"{}\" y=\"{}\">{status}{score}</text><title>{}</title></g>",
            x + 8,
            y + 15,
            t.status.glyph(),
            x + 8,
            y + 30,
            esc(&one_line(&t.description, 200)),
            status = t.status.as_str(),
            id = esc(&t.id),
        );
    }
    out.push_str("</svg></section>\n");
}

fn tasks(out: &mut String, state: &SwarmState) {
    let _ = writeln!(
        out,
        "<section id=\"tasks\"><h2>Tasks</h2><table><tr><th>id</th><th>kind</th>\
         <th>status</th><th>attempts</th><th>score</th><th>tokens</th><th>cost</th>\
         <th>description</th></tr>"
    );
    for t in &state.tasks {
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td class=\"desc\">{}</td></tr>",
            esc(&t.id),
            t.kind.as_str(),
            t.status.as_str(),
            t.attempts.len(),
            t.score().map_or("—".to_owned(), |s| s.to_string()),
            thousands(t.tokens()),
            usd(t.cost_usd()),
            esc(&one_line(&t.description, usize::MAX))
        );
    }
    out.push_str("</table>\n");
    let origin = state
        .tasks
        .iter()
        .flat_map(|t| &t.attempts)
        .filter_map(|a| a.started_ms)
        .min();
    for t in &state.tasks {
        let _ = writeln!(
            out,
            "<h3>{} · {} · {}</h3><p class=\"desc\">{}</p>",
            esc(&t.id),
            t.kind.as_str(),
            t.status.as_str(),
            esc(&t.description)
        );
        if !t.dependencies.is_empty() {
            let _ = writeln!(out, "<p>After: {}</p>", esc(&t.dependencies.join(", ")));
        }
        if let Some(reason) = &t.reason
            && matches!(t.status, TaskStatus::Skipped | TaskStatus::Failed)
        {
            let _ = writeln!(out, "<p>{}: {}</p>", t.status.as_str(), esc(reason));
        }
        if t.attempts.is_empty() {
            out.push_str("<p>No attempts.</p>\n");
            continue;
        }
        out.push_str("<ul class=\"attempts\">\n");
        for a in &t.attempts {
            attempt_item(out, a, origin);
        }
        out.push_str("</ul>\n");
    }
    out.push_str("</section>\n");
}

fn attempt_item(out: &mut String, a: &Attempt, origin: Option<i64>) {
    let when = |at: Option<i64>| match (at, origin) {
        (Some(at), Some(origin)) => format!("+{:.1} s", (at - origin) as f64 / 1000.0),
        _ => "unknown".to_owned(),
    };
    let mut parts = vec![
        format!("attempt {}", a.number),
        if a.model.is_empty() {
            "model unknown".to_owned()
        } else {
            esc(&a.model)
        },
        a.verdict.map_or("not judged", verdict_str).to_owned(),
    ];
    if let Some(score) = a.score {
        parts.push(format!("score {score}"));
    }
    if let Some(mode) = &a.failure_mode {
        parts.push(esc(mode));
    }
    parts.push(
        a.worker
            .map_or("worker unknown".to_owned(), |n| format!("worker {n}")),
    );
    parts.push(format!("started {}", when(a.started_ms)));
    parts.push(format!("ended {}", when(a.ended_ms)));
    parts.push(format!("{} tokens", thousands(a.tokens)));
    parts.push(usd(a.cost_usd));
    parts.push(duration(a.duration_ms));
    if let Some(ms) = a.backoff_ms {
        parts.push(format!("then a backoff of {}", duration(ms)));
    }
    let _ = write!(out, "<li>{}", parts.join(" · "));
    if let Some(error) = &a.error {
        let _ = write!(out, "<br>{}", esc(&one_line(error, usize::MAX)));
    }
    if !a.findings.is_empty() {
        out.push_str("<ul class=\"findings\">");
        for f in &a.findings {
            let _ = write!(out, "<li>{}</li>", finding(f));
        }
        out.push_str("</ul>");
    }
    out.push_str("</li>\n");
}

/// `verification V11 tests/test_a.py:3 — tests fail`, escaped.
fn finding(f: &Finding) -> String {
    let stage = match f.stage {
        Stage::Compile => "compile",
        Stage::Preflight => "pre-flight",
        Stage::Concrete => "concrete",
        Stage::Verification => "verification",
        Stage::Judge => "judge",
    };
    let mut head = vec![stage.to_owned()];
    if let Some(code) = &f.code {
        head.push(esc(code));
    }
    match (&f.file, f.line) {
        (Some(file), Some(line)) => head.push(format!("{}:{line}", esc(file))),
        (Some(file), None) => head.push(esc(file)),
        _ => {}
    }
    format!(
        "{} — {}",
        head.join(" "),
        esc(&one_line(&f.message, usize::MAX))
    )
}

#[cfg(test)]
#[path = "html_tests.rs"]
mod tests;
