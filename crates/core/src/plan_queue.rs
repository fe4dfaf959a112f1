//! Plan mode's queue: the session's pending plan, its proposed changes, the files as they
//! will be once the queued changes apply ("pending view"), `/show-plan` previews, choosing
//! what `/approve` and `/reject` cover, and conflict detection. Durable: a change is in the
//! store before the model hears "queued", and a resumed session finds its open plan again.
//!
//! This module decides nothing about *whether* a call is queued (atto-policy's mode table
//! does) and runs no tool (the session applies approved changes through the gate).

use std::io::Read as _;
use std::path::{Path, PathBuf};

use atto_protocol::{
    ChangeStatus, Event, PendingPlan, PlanSelection, PlanStatus, ProposedChange, ToolCall,
};
use atto_store::Store;
use atto_tools::FileEffect;
use atto_tools::beneath::{Kind, Workspace};
use atto_tools::names;
use serde_json::Value;
use tokio::sync::mpsc;

/// What the model is told when a change is queued.
pub(crate) const QUEUED_NOTE: &str = "[PLAN MODE] Change queued for approval";

/// Lines of exploration kept for a plan's summary.
const MAX_EXPLORED: usize = 40;

/// Diff lines shown per change in `/show-plan`.
const MAX_PREVIEW_LINES: usize = 200;

/// The `base_hash` of a file that does not exist.
const ABSENT: &str = "absent";

/// A file as plan mode sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum View {
    /// No file there.
    Absent,
    /// A text file with this content.
    Text(String),
    /// Something atto cannot show or edit as text (binary, unreadable, a directory).
    Opaque(String),
}

impl View {
    fn hash(&self) -> String {
        match self {
            View::Absent => ABSENT.to_owned(),
            View::Text(t) => fingerprint(t.as_bytes()),
            View::Opaque(why) => format!("opaque:{}", fingerprint(why.as_bytes())),
        }
    }
}

/// The session's plan queue.
pub(crate) struct PlanQueue {
    store: Option<Store>,
    session_id: String,
    workspace: PathBuf,
    /// The open plan (pending or partially approved), if any.
    plan: Option<PendingPlan>,
    /// Read-only calls made before the plan was created, for its exploration summary.
    explored: Vec<String>,
    /// What the user decided since the model last heard, for its next turn: a line each,
    /// with the change it reports (stored as reported once the model has it).
    report: Vec<(Option<String>, String)>,
    events: mpsc::UnboundedSender<Event>,
    warned: bool,
}

impl PlanQueue {
    pub(crate) fn new(
        store: Option<Store>,
        session_id: String,
        workspace: PathBuf,
        events: mpsc::UnboundedSender<Event>,
    ) -> Self {
        Self {
            store,
            session_id,
            workspace,
            plan: None,
            explored: Vec::new(),
            report: Vec::new(),
            events,
            warned: false,
        }
    }

    /// Finds the session's open plan in the store (after a resume or a crash).
    pub(crate) async fn load(&mut self) {
        let Some(store) = self.store.clone() else {
            return;
        };
        match store.open_plan(&self.session_id).await {
            Ok(plan) => {
                if let Some(plan) = &plan {
                    let open = plan
                        .proposed_changes
                        .iter()
                        .filter(|c| c.status.is_open())
                        .count();
                    let _ = self.events.send(Event::Notice {
                        message: format!(
                            "this session has a pending plan with {open} change(s) awaiting \
                             approval: /show-plan to review, /approve or /reject to decide"
                        ),
                    });
                }
                self.plan = plan;
            }
            Err(err) => {
                let _ = self.events.send(Event::Warning {
                    message: format!("the pending plan could not be loaded: {err}"),
                });
            }
        }
        // Decisions made just before atto exited: the model has not heard them yet.
        let unreported = store
            .unreported_changes(&self.session_id)
            .await
            .unwrap_or_default();
        if unreported.is_empty() {
            return;
        }
        let Ok(plans) = store.plans(&self.session_id).await else {
            return;
        };
        for plan in plans.iter().rev() {
            for change in &plan.proposed_changes {
                if unreported.contains(&change.id) {
                    let line = report_line(change, change.result.as_deref().unwrap_or(""));
                    self.report.push((Some(change.id.clone()), line));
                }
            }
        }
    }

    /// The open plan.
    pub(crate) fn plan(&self) -> Option<&PendingPlan> {
        self.plan.as_ref()
    }

    /// Remembers a read-only call for the exploration summary of the next plan.
    pub(crate) fn explored(&mut self, line: String) {
        if self.plan.is_none() && self.explored.len() < MAX_EXPLORED {
            self.explored.push(line);
        }
    }

    /// Queues a call; returns the stored change, or why it could not be queued (the
    /// model is told; nothing is queued).
    pub(crate) async fn queue(
        &mut self,
        task: &str,
        call: &ToolCall,
        args: &Value,
        reason: &str,
    ) -> Result<ProposedChange, String> {
        if let Some(missing) = missing_argument(&call.name, args) {
            return Err(format!(
                "this {} call was not queued: its arguments have no {missing}. Send it again \
                 with complete arguments.",
                call.name
            ));
        }
        let now = atto_protocol::time::now_ms();
        let path = args
            .get("path")
            .and_then(Value::as_str)
            .filter(|_| is_file_tool(&call.name))
            .map(str::to_owned);
        let base_hash = match &path {
            Some(path) => Some(self.base_hash(call, args, path)?),
            None => None,
        };
        self.open_plan(task, now).await?;
        let Some(plan) = self.plan.as_mut() else {
            return Err("internal error: no plan to queue into; the call was not run".into());
        };
        let order = plan
            .proposed_changes
            .last()
            .map_or(1, |c| c.order.saturating_add(1));
        let change = ProposedChange {
            id: uuid::Uuid::now_v7().to_string(),
            tool: call.name.clone(),
            args: args.clone(),
            reason: one_paragraph(reason, 400),
            order,
            proposed_at: now,
            tool_call_id: call.id.clone(),
            path,
            base_hash,
            status: ChangeStatus::Pending,
            result: None,
        };
        match &self.store {
            Some(store) => {
                if let Err(err) = store.add_change(&plan.id, &change).await {
                    return Err(format!(
                        "the change could not be queued: it could not be saved ({err}); it was \
                         not run"
                    ));
                }
            }
            None if !self.warned => {
                self.warned = true;
                let _ = self.events.send(Event::Warning {
                    message: "there is no session database: the pending plan lives only in \
                              this process and is lost if atto exits"
                        .to_owned(),
                });
            }
            None => {}
        }
        plan.updated_at = now;
        if plan.status == PlanStatus::Approved || plan.status == PlanStatus::Rejected {
            plan.status = PlanStatus::PartiallyApproved;
        }
        plan.proposed_changes.push(change.clone());
        Ok(change)
    }

    /// The hash of `path` as the change will find it (after the changes already queued),
    /// once the change is known to apply there.
    fn base_hash(&self, call: &ToolCall, args: &Value, path: &str) -> Result<String, String> {
        let before = self.view(path, u32::MAX);
        let change = atto_tools::file_effect_of(&call.name);
        if change == Some(FileEffect::Edit) {
            match &before {
                View::Text(text) => {
                    if let Err(err) = atto_tools::preview_edit(text, args) {
                        return Err(format!(
                            "this edit was not queued: it does not apply to {path} as the \
                             file will be after the changes already queued ({err}). Read \
                             the file with read_file and \"pending\": true, then queue a \
                             corrected edit."
                        ));
                    }
                }
                // An empty old_string creates the file: plan it against empty text.
                View::Absent
                    if args
                        .get("old_string")
                        .and_then(Value::as_str)
                        .is_some_and(str::is_empty) => {}
                View::Absent => {
                    return Err(format!(
                        "this edit was not queued: {path} does not exist (and no queued \
                         change creates it). Use write_file to create it."
                    ));
                }
                View::Opaque(why) => {
                    return Err(format!("this edit was not queued: {path} is {why}."));
                }
            }
        }
        if change == Some(FileEffect::Delete) && before == View::Absent {
            return Err(format!(
                "this delete was not queued: {path} does not exist (or an earlier queued \
                 change already deletes it)."
            ));
        }
        Ok(before.hash())
    }

    /// Opens a new pending plan for `task`, saved first, unless one is open.
    async fn open_plan(&mut self, task: &str, now: i64) -> Result<(), String> {
        if self.plan.as_ref().is_none_or(|p| !p.status.is_open()) {
            let plan = PendingPlan {
                id: uuid::Uuid::now_v7().to_string(),
                task: task.to_owned(),
                created_at: now,
                updated_at: now,
                proposed_changes: Vec::new(),
                exploration_summary: std::mem::take(&mut self.explored).join("\n"),
                status: PlanStatus::Pending,
                session_id: self.session_id.clone(),
            };
            if let Some(store) = &self.store
                && let Err(err) = store.create_plan(&plan).await
            {
                return Err(format!(
                    "the change could not be queued: the plan could not be saved ({err}); it \
                     was not run"
                ));
            }
            self.plan = Some(plan);
        }
        Ok(())
    }

    /// `path` as it will be after the open changes with an order below `before`
    /// (`u32::MAX`: after all of them). Commands are opaque to this: their effects are not
    /// predicted.
    pub(crate) fn view(&self, path: &str, before: u32) -> View {
        let mut view = read_view(&self.workspace, path);
        let Some(plan) = &self.plan else {
            return view;
        };
        for change in &plan.proposed_changes {
            if change.order >= before {
                break;
            }
            if !change.status.is_open() || change.path.as_deref() != Some(path) {
                continue;
            }
            view = apply(&view, change);
        }
        view
    }

    /// How many open changes touch `path`.
    pub(crate) fn open_changes_to(&self, path: &str) -> usize {
        self.plan.as_ref().map_or(0, |p| {
            p.proposed_changes
                .iter()
                .filter(|c| c.status.is_open() && c.path.as_deref() == Some(path))
                .count()
        })
    }

    /// Per change: a unified diff against the file as it will be by then (open changes),
    /// the command (commands), or what became of it (decided changes).
    pub(crate) fn previews(&self) -> Vec<String> {
        let Some(plan) = &self.plan else {
            return Vec::new();
        };
        plan.proposed_changes
            .iter()
            .map(|c| {
                if !c.status.is_open() {
                    return format!(
                        "{}: {}",
                        c.status.as_str(),
                        c.result.as_deref().unwrap_or("")
                    );
                }
                match &c.path {
                    Some(path) => {
                        let before = self.view(path, c.order);
                        let after = apply(&before, c);
                        diff(path, &before, &after)
                    }
                    None => command_preview(c),
                }
            })
            .collect()
    }

    /// Indices (into the plan's changes) of the open changes `selection` covers, or a
    /// one-line reason it covers nothing valid.
    pub(crate) fn select(&self, selection: &PlanSelection) -> Result<Vec<usize>, String> {
        let Some(plan) = self.plan.as_ref().filter(|p| p.status.is_open()) else {
            return Err("there is no pending plan (plan mode queues changes: /mode plan)".into());
        };
        let open: Vec<usize> = plan
            .proposed_changes
            .iter()
            .enumerate()
            .filter(|(_, c)| c.status.is_open())
            .map(|(i, _)| i)
            .collect();
        match selection {
            PlanSelection::All => Ok(open),
            PlanSelection::First { n } => {
                let n = usize::try_from(*n).unwrap_or(usize::MAX);
                if n == 0 || n > open.len() {
                    return Err(format!(
                        "the plan has {} pending change(s); /approve N takes 1 to {}",
                        open.len(),
                        open.len()
                    ));
                }
                Ok(open[..n].to_vec())
            }
            PlanSelection::Picks { orders } => orders
                .iter()
                .map(|order| {
                    let found = plan.proposed_changes.iter().position(|c| c.order == *order);
                    match found {
                        Some(i) if plan.proposed_changes[i].status.is_open() => Ok(i),
                        Some(i) => Err(format!(
                            "change {order} is already {}; /show-plan lists the pending ones",
                            plan.proposed_changes[i].status.as_str()
                        )),
                        None => Err(format!(
                            "there is no change {order}; the plan's changes are numbered 1 to {}",
                            plan.proposed_changes.last().map_or(0, |c| c.order)
                        )),
                    }
                })
                .collect(),
        }
    }

    /// The change at `index`.
    pub(crate) fn change(&self, index: usize) -> Option<&ProposedChange> {
        self.plan.as_ref()?.proposed_changes.get(index)
    }

    /// Whether the file `change` writes still is what the change was planned against;
    /// `Err` says how it differs.
    pub(crate) fn check_base(&self, change: &ProposedChange) -> Result<(), String> {
        let (Some(path), Some(expected)) = (&change.path, &change.base_hash) else {
            return Ok(());
        };
        let now = read_view(&self.workspace, path);
        if &now.hash() == expected {
            return Ok(());
        }
        let what = match (now, expected.as_str()) {
            (View::Absent, _) => "was deleted",
            (_, ABSENT) => "was created",
            _ => "was modified",
        };
        Err(format!(
            "{path} {what} since this change was proposed (outside the plan, or by an earlier \
             change that was not applied); not applied, still pending. /show-plan shows it \
             against the file as it is now; approve it again to apply it to that, or reject it"
        ))
    }

    /// Records what became of changes, updates the plan's status (in the store too) and
    /// remembers it for the model.
    pub(crate) async fn decided(&mut self, updates: Vec<(usize, ChangeStatus, String)>) {
        let Some(plan) = self.plan.as_mut() else {
            return;
        };
        let now = atto_protocol::time::now_ms();
        let mut rows = Vec::with_capacity(updates.len());
        for (index, status, detail) in updates {
            let Some(change) = plan.proposed_changes.get_mut(index) else {
                continue;
            };
            change.status = status;
            change.result = Some(detail.clone());
            if status == ChangeStatus::Conflict {
                // Seen by the user now: approving it again applies it to the file as it is.
                if let Some(path) = &change.path {
                    change.base_hash = Some(read_view(&self.workspace, path).hash());
                }
            }
            self.report
                .push((Some(change.id.clone()), report_line(change, &detail)));
            rows.push((
                change.id.clone(),
                status,
                Some(detail),
                change.base_hash.clone(),
            ));
        }
        let open = plan
            .proposed_changes
            .iter()
            .filter(|c| c.status.is_open())
            .count();
        let decided = plan.proposed_changes.len() - open;
        plan.status = match (open, decided) {
            (_, 0) => PlanStatus::Pending,
            (0, _)
                if plan
                    .proposed_changes
                    .iter()
                    .all(|c| c.status == ChangeStatus::Rejected) =>
            {
                PlanStatus::Rejected
            }
            (0, _) => PlanStatus::Approved,
            _ => PlanStatus::PartiallyApproved,
        };
        plan.updated_at = now;
        if let Some(store) = &self.store {
            let changes: Vec<(String, ChangeStatus, Option<String>)> = rows
                .iter()
                .map(|(id, s, d, _)| (id.clone(), *s, d.clone()))
                .collect();
            if let Err(err) = store
                .update_plan(&plan.id, plan.status, &changes, now)
                .await
            {
                let _ = self.events.send(Event::Warning {
                    message: format!("the plan's new state could not be saved: {err}"),
                });
            }
            for (id, status, _, base) in &rows {
                if *status == ChangeStatus::Conflict
                    && let Some(base) = base
                    && let Err(err) = store.rebase_change(id, base).await
                {
                    let _ = self.events.send(Event::Warning {
                        message: format!("the plan's new state could not be saved: {err}"),
                    });
                }
            }
        }
    }

    /// The plan's status now.
    pub(crate) fn status(&self) -> PlanStatus {
        self.plan.as_ref().map_or(PlanStatus::Pending, |p| p.status)
    }

    /// Adds a line to what the model hears on its next turn.
    pub(crate) fn tell_model(&mut self, line: String) {
        self.report.push((None, line));
    }

    /// What the user decided since the model last heard, as context for its next turn,
    /// with the changes it reports (pass them to [`PlanQueue::reported`] once the prompt
    /// carrying it is stored).
    pub(crate) fn take_report(&mut self) -> Option<(String, Vec<String>)> {
        if self.report.is_empty() {
            return None;
        }
        let (ids, lines): (Vec<Option<String>>, Vec<String>) =
            std::mem::take(&mut self.report).into_iter().unzip();
        let mut text = String::from("[PLAN REVIEW] The user decided on your proposed changes:\n");
        text.push_str(&lines.join("\n"));
        if let Some(plan) = self.plan.as_ref().filter(|p| p.status.is_open()) {
            let open: Vec<String> = plan
                .proposed_changes
                .iter()
                .filter(|c| c.status.is_open())
                .map(|c| c.order.to_string())
                .collect();
            if !open.is_empty() {
                text.push_str(&format!(
                    "\nStill pending (not applied): change(s) {}.",
                    open.join(", ")
                ));
            }
        }
        Some((text, ids.into_iter().flatten().collect()))
    }

    /// Records that the model now has the report on these changes.
    pub(crate) async fn reported(&mut self, ids: &[String]) {
        if ids.is_empty() {
            return;
        }
        if let Some(store) = &self.store
            && let Err(err) = store.mark_reported(ids).await
        {
            let _ = self.events.send(Event::Warning {
                message: format!("could not record that the plan review was sent: {err}"),
            });
        }
    }
}

/// One line of the report for the model.
fn report_line(change: &ProposedChange, detail: &str) -> String {
    format!(
        "- change {} ({} {}): {} — {}",
        change.order,
        change.tool,
        target_of(change),
        change.status.as_str(),
        one_paragraph(detail, 300)
    )
}

/// The argument a call cannot do without, if it lacks it: a change that could never run
/// is refused now rather than queued. The built-in tool's schema says what it requires;
/// other tools' calls are not checked.
fn missing_argument(tool: &str, args: &Value) -> Option<String> {
    atto_tools::builtin_tool(tool)?.missing_argument(args)
}

/// Tools whose effect on one file plan mode can predict.
pub(crate) fn is_file_tool(tool: &str) -> bool {
    atto_tools::file_effect_of(tool).is_some()
}

/// The file or command a change targets, for one-line displays.
pub fn target_of(change: &ProposedChange) -> String {
    if let Some(path) = &change.path {
        return path.clone();
    }
    if change.tool == names::APPLY_PATCH {
        let input = change
            .args
            .get("input")
            .and_then(Value::as_str)
            .unwrap_or("");
        return match atto_tools::patch_paths(input) {
            Ok(paths) => one_paragraph(&paths.join(", "), 120),
            Err(_) => "a patch".to_owned(),
        };
    }
    match change.args.get("command").and_then(Value::as_str) {
        Some(command) => one_paragraph(command, 120),
        None => one_paragraph(&change.args.to_string(), 120),
    }
}

/// What `change` makes of `before`.
fn apply(before: &View, change: &ProposedChange) -> View {
    match atto_tools::file_effect_of(&change.tool) {
        Some(FileEffect::Write) => View::Text(
            change
                .args
                .get("content")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned(),
        ),
        Some(FileEffect::Delete) => View::Absent,
        Some(FileEffect::Edit) => {
            let text = match before {
                View::Text(text) => text.as_str(),
                // An empty old_string creates a file that is not there.
                View::Absent => "",
                View::Opaque(_) => return before.clone(),
            };
            match atto_tools::preview_edit(text, &change.args) {
                Ok(after) => View::Text(after),
                Err(err) => View::Opaque(format!("an edit that no longer applies ({err})")),
            }
        }
        None => before.clone(),
    }
}

/// `path` as it is on disk, read beneath a handle of the workspace. Paths inside it are
/// queued relative; only trust mode queues absolute ones, which may lead anywhere.
fn read_view(workspace: &Path, path: &str) -> View {
    let root = if Path::new(path).is_absolute() {
        Workspace::anywhere(workspace)
    } else {
        Workspace::open(workspace)
    };
    let target = match root.and_then(|root| root.resolve(path)) {
        Ok(target) => target,
        Err(e) => return View::Opaque(format!("unreadable ({e})")),
    };
    match target.kind() {
        Ok(None) => return View::Absent,
        Ok(Some(Kind::Dir)) => return View::Opaque("a directory".to_owned()),
        Ok(Some(_)) => {}
        Err(e) => return View::Opaque(format!("unreadable ({e})")),
    }
    let mut bytes = Vec::new();
    let read = target
        .open_read()
        .and_then(|mut file| file.read_to_end(&mut bytes));
    match read {
        Ok(_) if bytes[..bytes.len().min(8192)].contains(&0) => {
            View::Opaque(format!("a binary file ({} bytes)", bytes.len()))
        }
        Ok(_) => match String::from_utf8(bytes) {
            Ok(text) => View::Text(text),
            Err(_) => View::Opaque("not UTF-8 text".to_owned()),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => View::Absent,
        Err(e) => View::Opaque(format!("unreadable ({e})")),
    }
}

fn diff(path: &str, before: &View, after: &View) -> String {
    let text = |v: &View| match v {
        View::Text(t) => t.clone(),
        View::Absent => String::new(),
        View::Opaque(why) => format!("({why})\n"),
    };
    let (old, new) = (text(before), text(after));
    let (old_name, new_name) = match (before, after) {
        (View::Absent, _) => ("/dev/null".to_owned(), format!("b/{path}")),
        (_, View::Absent) => (format!("a/{path}"), "/dev/null".to_owned()),
        _ => (format!("a/{path}"), format!("b/{path}")),
    };
    if old == new {
        return format!("(no change to {path})");
    }
    let out = similar::TextDiff::from_lines(&old, &new)
        .unified_diff()
        .context_radius(3)
        .header(&old_name, &new_name)
        .to_string();
    let lines: Vec<&str> = out.lines().collect();
    if lines.len() <= MAX_PREVIEW_LINES {
        return out.trim_end().replace('\r', "");
    }
    format!(
        "{}\n[... {} more diff lines]",
        lines[..MAX_PREVIEW_LINES].join("\n").replace('\r', ""),
        lines.len() - MAX_PREVIEW_LINES
    )
}

fn command_preview(change: &ProposedChange) -> String {
    match change.args.get("command").and_then(Value::as_str) {
        Some(command) => format!("$ {command}"),
        None => format!("{} {}", change.tool, change.args),
    }
}

/// `text` on one paragraph, cut at `max` characters.
pub(crate) fn one_paragraph(text: &str, max: usize) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        return flat;
    }
    flat.chars().take(max).collect::<String>() + "…"
}

/// A stable 64-bit FNV-1a fingerprint, hex: the same in every build, so a plan saved by
/// one atto version is checked correctly by the next.
fn fingerprint(bytes: &[u8]) -> String {
    let hash = bytes.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    format!("{hash:016x}:{}", bytes.len())
}

/// Numbered lines of `text`, as read_file shows them, for the pending view.
pub(crate) fn numbered(text: &str, offset: Option<u64>, limit: Option<u64>) -> String {
    let first = usize::try_from(offset.unwrap_or(1).max(1)).unwrap_or(usize::MAX);
    let limit = usize::try_from(limit.unwrap_or(2000)).unwrap_or(usize::MAX);
    let mut out = String::new();
    for (i, line) in text.lines().enumerate().skip(first - 1).take(limit) {
        out.push_str(&format!("{:>6}\t{}\n", i + 1, line.trim_end_matches('\r')));
    }
    out
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::symlink;

    use super::*;

    /// A queued change's "before" is read beneath the workspace: a link that now leads
    /// outside shows nothing from there.
    #[test]
    fn views_are_read_beneath_the_workspace() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().canonicalize().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("notes.txt"), "OUTSIDE_SECRET\n").unwrap();
        symlink(outside.path(), ws.join("d")).unwrap();
        std::fs::write(ws.join("a.txt"), "inside\n").unwrap();
        assert!(
            matches!(read_view(&ws, "a.txt"), View::Text(t) if t == "inside\n"),
            "an ordinary file reads"
        );
        assert!(matches!(read_view(&ws, "new.txt"), View::Absent));
        match read_view(&ws, "d/notes.txt") {
            View::Opaque(why) => assert!(why.contains("outside"), "{why}"),
            other => panic!("read through a link out of the workspace: {other:?}"),
        }
    }
}
