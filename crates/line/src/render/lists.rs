//! The session's lists as the line session prints them: goals, checkpoints, the pending
//! plan and what deciding it did, the thread tree and the grants. The rows themselves are
//! atto-present's; this adds the line session's layout.

use atto_present as present;

/// `/goals`: open goals numbered as `/goals done N` takes them, then finished ones.
pub fn goal_list(goals: &[atto_protocol::Goal], current: Option<&str>) -> String {
    if goals.is_empty() {
        return format!("{}\n", present::NO_GOALS);
    }
    line_per_row(
        present::goal_rows(goals, current)
            .into_iter()
            .map(|(row, _)| row),
    )
}

/// `/restore list`: one line per checkpoint, newest first.
pub fn checkpoint_table(checkpoints: &[atto_protocol::CheckpointInfo]) -> String {
    if checkpoints.is_empty() {
        return format!("{}\n", present::NO_CHECKPOINTS);
    }
    let rows = checkpoints.iter().map(present::checkpoint_line);
    line_per_row(rows.chain([present::RESTORE_HINT.to_owned()]))
}

/// Each row on a line of its own.
fn line_per_row(rows: impl Iterator<Item = String>) -> String {
    let mut out = String::new();
    for row in rows {
        out.push_str(&row);
        out.push('\n');
    }
    out
}

/// `/show-plan`: every change in order with tool, target, reason, status and its preview.
/// `change_target` is the engine's reading of what file or command a change is about.
pub fn plan_view(
    plan: Option<&atto_protocol::PendingPlan>,
    previews: &[String],
    change_target: fn(&atto_protocol::ProposedChange) -> String,
) -> String {
    use std::fmt::Write as _;
    let Some(plan) = plan else {
        return format!("{}\n", present::NO_PENDING_PLAN);
    };
    let [heading, task] = present::plan_heading(plan);
    let mut out = format!("{heading}\n{task}\n");
    for (change, preview) in plan.proposed_changes.iter().zip(previews) {
        let _ = writeln!(
            out,
            "\n{}",
            present::change_line(change, &change_target(change))
        );
        if !change.reason.is_empty() {
            let _ = writeln!(out, "   reason: {}", change.reason);
        }
        for line in preview.lines() {
            let _ = writeln!(out, "   {line}");
        }
    }
    if plan.proposed_changes.iter().any(|c| c.status.is_open()) {
        out.push_str("\n/approve runs all pending, /approve N the first N, /approve 2,4 or 3-5 picks; /reject [N] [reason] discards\n");
    }
    out
}

/// What `/approve` or `/reject` did, one line per change.
pub fn plan_outcomes(
    outcomes: &[atto_protocol::ChangeOutcome],
    tally: &atto_protocol::PlanTally,
) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    for o in outcomes {
        let detail = o.detail.lines().next().unwrap_or("");
        let _ = writeln!(
            out,
            "  {}. {} {}: {} — {detail}",
            o.order,
            o.tool,
            o.target,
            o.status.as_str()
        );
    }
    let _ = writeln!(out, "{}", present::plan_tally_line(tally));
    out
}

/// The `/threads` tree (see [`present::thread_rows`]).
pub fn thread_tree(threads: &[atto_protocol::ThreadInfo]) -> String {
    line_per_row(
        present::thread_rows(threads)
            .into_iter()
            .map(|(row, _)| row),
    )
}

/// The `/grants` table: number, scope, decision, rule, created, last used, uses.
pub fn grant_table(grants: &[atto_protocol::GrantInfo]) -> String {
    if grants.is_empty() {
        return "no grants (answer \"always\" at an approval, or add [permissions] rules to \
                the config)\n"
            .to_owned();
    }
    let when = |ms: Option<i64>| ms.map_or_else(|| "-".to_owned(), atto_protocol::time::utc_minute);
    let mut out = format!(
        "{:>3}  {:<14}  {:<5}  {:<36}  {:<16}  {:<16}  {:>4}\n",
        "#", "scope", "rule", "pattern", "created", "last used", "uses"
    );
    for g in grants {
        out.push_str(&format!(
            "{:>3}  {:<14}  {:<5}  {:<36}  {:<16}  {:<16}  {:>4}\n",
            g.number,
            g.scope,
            g.decision,
            g.rule,
            when(g.created_at),
            when(g.last_used_at),
            g.uses
        ));
    }
    out
}
