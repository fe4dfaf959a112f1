//! Owns: how protocol events and lists read for a person, once for every front end.
//! Must never: do I/O, hold session state, or decide anything an engine decides.
//!
//! The line session, the terminal UI and ACP turn `Event`s and `SwarmEvent`s into text
//! here and keep only what is truly theirs (terminal widgets, JSON-RPC shapes). Beside the
//! modules, this file holds how the session's lists read, row by row: goals (`/goals`), the
//! thread tree (`/threads`), checkpoints (`/restore list`) and the pending plan
//! (`/show-plan`). The line session prints the rows; the terminal UI styles each row from
//! the item it names. Nothing here styles.

pub mod clean;
pub mod commands;
pub mod file_change;
pub mod learning;
pub mod mcp;
pub mod planner;
pub mod swarm;

use atto_protocol::{CheckpointInfo, Goal, PendingPlan, ProposedChange, ThreadInfo};

/// What `/goals` shows when the session has none.
pub const NO_GOALS: &str = "no goals (/goal TEXT sets the session's objective)";

/// What `/restore list` shows before the first checkpoint.
pub const NO_CHECKPOINTS: &str = "no checkpoints yet (one is taken before each change atto makes)";

/// The line under the checkpoints, saying how to use them.
pub const RESTORE_HINT: &str = "/restore N brings the files back to checkpoint N";

/// What `/show-plan` shows when no plan waits.
pub const NO_PENDING_PLAN: &str =
    "no pending plan (in plan mode, writes are queued here: /mode plan)";

/// Open goals numbered as `/goals done N` takes them, then finished ones, each row with
/// its goal; `current` is the id of the goal being worked toward.
pub fn goal_rows<'a>(goals: &'a [Goal], current: Option<&str>) -> Vec<(String, &'a Goal)> {
    let line = |g: &Goal| {
        let budget = g
            .token_budget
            .map_or_else(String::new, |b| format!(" of {b}"));
        let marker = if Some(g.id.as_str()) == current {
            " ← current"
        } else {
            ""
        };
        format!(
            "[{}] {} · {} tokens{budget}, {:.0} s{marker}",
            g.status.as_str(),
            g.objective,
            g.tokens_used,
            g.time_used_ms as f64 / 1000.0
        )
    };
    let (open, done): (Vec<_>, Vec<_>) = goals.iter().partition(|g| g.status.is_open());
    let mut rows = Vec::with_capacity(goals.len());
    for (i, g) in open.into_iter().enumerate() {
        rows.push((format!("{:>3}. {}", i + 1, line(g)), g));
    }
    for g in done {
        rows.push((format!("   - {}", line(g)), g));
    }
    rows
}

/// The thread tree with box-drawing branches, a row per thread, as in the seeds:
/// ```text
/// main (4 messages)
/// ├── fork-a1b2c3d4 "Try React approach" (6 messages) ← current
/// │   └── fork-e5f6g7h8 "With TypeScript" (8 messages)
/// └── fork-i9j0k1l2 "Try Vue approach" (4 messages)
/// ```
pub fn thread_rows(threads: &[ThreadInfo]) -> Vec<(String, &ThreadInfo)> {
    fn line(t: &ThreadInfo) -> String {
        let label = t
            .label
            .as_ref()
            .map(|l| format!(" \"{l}\""))
            .unwrap_or_default();
        let current = if t.current { " ← current" } else { "" };
        format!("{}{label} ({} messages){current}", t.id, t.messages)
    }
    fn children<'a>(
        threads: &'a [ThreadInfo],
        parent: &str,
        prefix: &str,
        depth: usize,
        rows: &mut Vec<(String, &'a ThreadInfo)>,
    ) {
        let kids: Vec<_> = threads
            .iter()
            .filter(|t| t.parent.as_deref() == Some(parent))
            .collect();
        for (i, kid) in kids.iter().enumerate() {
            let last = i + 1 == kids.len();
            let branch = if last { "└── " } else { "├── " };
            rows.push((format!("{prefix}{branch}{}", line(kid)), kid));
            // A tree this deep is absurd; stop before the prefix is.
            if depth < 64 {
                let deeper = format!("{prefix}{}", if last { "    " } else { "│   " });
                children(threads, &kid.id, &deeper, depth + 1, rows);
            }
        }
    }
    let mut rows = Vec::with_capacity(threads.len());
    for root in threads.iter().filter(|t| t.parent.is_none()) {
        rows.push((line(root), root));
        children(threads, &root.id, "", 0, &mut rows);
    }
    rows
}

/// One checkpoint: id, turn, the call whose changes restoring it undoes (and every
/// change after it) with up to three of the files that call touched, and its session when
/// another session took it.
pub fn checkpoint_line(c: &CheckpointInfo) -> String {
    let files = match c.files_changed.len() {
        0 => String::new(),
        n if n <= 3 => format!(" ({})", c.files_changed.join(", ")),
        n => format!(" ({}, … {n} files)", c.files_changed[..3].join(", ")),
    };
    // Notes read "before write_file a.txt" or "start of turn 2, before bash make".
    let undoes = match (c.note.rsplit_once("before "), &c.tool) {
        (Some((_, call)), Some(_)) => format!("undoes {call}{files} and after"),
        (None, Some(tool)) => format!("undoes {tool}{files} and after"),
        (_, None) => format!("{}{files}", c.note),
    };
    let owner = c
        .other_session
        .as_deref()
        .map(|s| format!("  [session {}]", &s[..s.len().min(13)]))
        .unwrap_or_default();
    format!("{:>4}  turn {:<3} {undoes}{owner}", c.id, c.turn)
}

/// The pending plan's heading and its task's first line.
pub fn plan_heading(plan: &PendingPlan) -> [String; 2] {
    let open = plan
        .proposed_changes
        .iter()
        .filter(|c| c.status.is_open())
        .count();
    [
        // A plan id is time-ordered (UUIDv7): plans made in the same minute share its
        // first characters, so the random tail is what tells them apart.
        format!(
            "plan …{} [{}] — {} change(s), {open} pending",
            &plan.id[plan.id.len().saturating_sub(8)..],
            plan.status.as_str(),
            plan.proposed_changes.len()
        ),
        format!("task: {}", plan.task.lines().next().unwrap_or("")),
    ]
}

/// One proposed change: its number, tool, target (the file or command it is about, as
/// the engine reads it from the arguments) and status.
pub fn change_line(change: &ProposedChange, target: &str) -> String {
    format!(
        "{}. {} {} [{}]",
        change.order,
        change.tool,
        target,
        change.status.as_str()
    )
}

/// What a decision left: "plan closed: 1 applied, 2 rejected" once nothing waits, else
/// "plan: 1 applied, 3 pending".
pub fn plan_tally_line(tally: &atto_protocol::PlanTally) -> String {
    let parts: Vec<String> = [
        (tally.applied, "applied"),
        (tally.rejected, "rejected"),
        (tally.failed, "failed"),
        (tally.pending, "pending"),
    ]
    .iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, what)| format!("{n} {what}"))
    .collect();
    let state = if tally.pending == 0 {
        "plan closed"
    } else {
        "plan"
    };
    format!("{state}: {}", parts.join(", "))
}

/// `/model`'s answer, one line each: the model in use, the routes, the known models.
pub fn model_list_lines(
    current: &str,
    auto: bool,
    models: &[String],
    routes: &[atto_protocol::ModelRoute],
) -> Vec<String> {
    let mut lines = vec![if auto {
        format!("model: auto (each turn routed by its complexity; last: {current})")
    } else {
        format!("model: {current}")
    }];
    for r in routes {
        let tier = r.tier.as_str().to_ascii_uppercase();
        lines.push(match r.effort {
            Some(e) => format!("  {tier:<13} → {} (effort {})", r.model, e.as_str()),
            None => format!("  {tier:<13} → {}", r.model),
        });
    }
    lines.push(format!("known: {}", models.join(", ")));
    lines.push("/model NAME pins one, /model auto routes by complexity".to_owned());
    lines
}

/// `model_changed` as one line.
pub fn model_changed_line(model: &str, auto: bool, note: Option<&str>) -> String {
    let head = if auto {
        "model: auto (each turn routed by its complexity)".to_owned()
    } else {
        format!("model: {model} for the following turns")
    };
    match note {
        Some(note) => format!("{head}; {note}"),
        None => head,
    }
}

/// `/cost`'s answer: one line per model and a total; an unknown price is shown as
/// unknown, never as $0.
pub fn cost_lines(models: &[atto_protocol::ModelSpend]) -> Vec<String> {
    if models.is_empty() {
        return vec!["no model calls yet".to_owned()];
    }
    let money =
        |c: Option<f64>| c.map_or_else(|| "cost unknown".to_owned(), |c| format!("${c:.4}"));
    let rate = |u: &atto_protocol::Usage| {
        atto_protocol::usage::cache_hit_rate(u).map_or_else(
            || "no input yet".to_owned(),
            |r| format!("cache hit rate {:.0}%", r * 100.0),
        )
    };
    let mut lines: Vec<String> = models
        .iter()
        .map(|m| {
            format!(
                "{}: {} call(s), {} in / {} out tokens, {} cache read / {} cache write, {}, {}",
                m.model,
                m.calls,
                m.usage.input_tokens,
                m.usage.output_tokens,
                m.usage.cache_read_tokens,
                m.usage.cache_write_tokens,
                rate(&m.usage),
                money(m.cost_usd)
            )
        })
        .collect();
    let mut all = atto_protocol::Usage::default();
    for m in models {
        atto_protocol::usage::add_usage(&mut all, &m.usage);
    }
    let total = models
        .iter()
        .try_fold(0.0, |sum, m| m.cost_usd.map(|c| sum + c));
    let tokens: u64 = models
        .iter()
        .map(|m| atto_protocol::usage::total_tokens(&m.usage))
        .sum();
    lines.push(format!(
        "total: {tokens} tokens, {}, {}",
        rate(&all),
        money(total)
    ));
    lines
}

/// `/context`: the window and what fills it.
pub fn context_lines(c: &atto_protocol::ContextUse) -> Vec<String> {
    let share = |n: u64| match c.window {
        Some(w) if w > 0 => format!(" ({:.0}%)", n as f64 * 100.0 / w as f64),
        _ => String::new(),
    };
    let window = c.window.map_or_else(
        || {
            "unknown (set [providers.X.models.Y] context_window in the config); compaction \
             waits for the provider's context-overflow error"
                .to_owned()
        },
        |w| format!("{w} tokens"),
    );
    let mut lines = vec![
        format!("context window of {}: {window}", c.model),
        format!(
            "next request: about {} tokens{}, {} message(s)",
            c.used_tokens,
            share(c.used_tokens),
            c.messages
        ),
        format!(
            "  system prompt {} · tools {} · conversation {}",
            c.system_tokens, c.tools_tokens, c.history_tokens
        ),
    ];
    if let Some(at) = c.compact_at {
        lines.push(format!(
            "compacts automatically above {at} tokens{}",
            share(at)
        ));
    }
    if let Some(n) = c.last_input_tokens {
        lines.push(format!(
            "last call's input as the provider counted it: {n} tokens"
        ));
    }
    lines
}

/// One line for a compaction.
pub fn compaction_line(c: &atto_protocol::Compaction) -> String {
    use atto_protocol::CompactTrigger;
    let why = match c.trigger {
        CompactTrigger::Threshold => "the context window was filling up",
        CompactTrigger::Overflow => "the provider said the request did not fit",
        CompactTrigger::User => "asked",
    };
    let how = match &c.fallback_reason {
        None => "older messages summarised".to_owned(),
        Some(reason) => format!("old tool outputs elided ({reason})"),
    };
    format!(
        "context compacted ({why}): {} → {} tokens, {} → {} messages; {how}; pinned plan, \
         tasks, goals and constraints kept verbatim. Now in thread {} (/rollback returns to {})",
        c.before_tokens,
        c.after_tokens,
        c.messages_before,
        c.messages_after,
        c.thread,
        c.from_thread
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_tree_renders_as_in_the_seeds() {
        let t = |id: &str, parent: Option<&str>, label: Option<&str>, current| ThreadInfo {
            id: id.into(),
            parent: parent.map(Into::into),
            label: label.map(Into::into),
            messages: 2,
            current,
        };
        let threads = [
            t("main", None, None, false),
            t(
                "fork-a1b2c3d4",
                Some("main"),
                Some("Try React approach"),
                false,
            ),
            t(
                "fork-e5f6g7h8",
                Some("fork-a1b2c3d4"),
                Some("With TypeScript"),
                true,
            ),
            t(
                "fork-i9j0k1l2",
                Some("main"),
                Some("Try Vue approach"),
                false,
            ),
        ];
        let rows = thread_rows(&threads);
        let tree: Vec<&str> = rows.iter().map(|(row, _)| row.as_str()).collect();
        assert_eq!(
            tree,
            [
                "main (2 messages)",
                "├── fork-a1b2c3d4 \"Try React approach\" (2 messages)",
                "│   └── fork-e5f6g7h8 \"With TypeScript\" (2 messages) ← current",
                "└── fork-i9j0k1l2 \"Try Vue approach\" (2 messages)",
            ]
        );
        assert!(rows[2].1.current, "each row names its thread");
    }
}
