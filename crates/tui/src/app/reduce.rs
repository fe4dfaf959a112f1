//! `App::on_event`: how each engine event changes what the screen shows.

use atto_protocol::{
    ChangeOutcome, Event, FinalResult, PermissionMode, PlanStatus, ToolCallStatus, TurnStatus,
};

use super::{App, ApprovalDialog};
use crate::transcript::{Kind, ToolCard, duration};
use crate::view::text::sanitize;

impl App {
    /// Folds one event into the state. Returns whether anything visible changed. Sets
    /// `approval` on `ApprovalRequired` and clears it when the call finishes or the turn
    /// ends.
    pub fn on_event(&mut self, event: &Event) -> bool {
        match event {
            Event::SessionStarted {
                session_id,
                provider,
                model,
                workspace,
                mode,
                ..
            } => {
                self.info.provider = provider.clone();
                self.info.model = model.clone();
                self.info.workspace = workspace.clone();
                self.info.mode = *mode;
                let short = &session_id[..session_id.len().min(8)];
                self.quiet(format!(
                    "session {short} · {provider}/{model} · {workspace}"
                ));
            }
            Event::TurnStarted { mode, .. } => {
                self.running = true;
                self.info.mode = *mode;
            }
            Event::TextDelta { text } => self.transcript.text_delta(text),
            Event::ThinkingDelta { text } => self.transcript.thinking_delta(text),
            Event::ToolCallStarted {
                call_id,
                name,
                arguments,
            } => self
                .transcript
                .push(Kind::Tool(ToolCard::new(call_id, name, arguments))),
            Event::ToolCallFinished {
                call_id,
                name,
                status,
                duration_ms,
                summary,
                sandboxed,
                ..
            } => self.tool_finished(call_id, name, *status, *duration_ms, summary, *sandboxed),
            Event::Usage {
                usage, cost_usd, ..
            } => {
                let billed = usage.input_tokens
                    + usage.output_tokens
                    + usage.cache_read_tokens
                    + usage.cache_write_tokens;
                self.charge_step(billed);
                let t = &mut self.totals;
                t.tokens += billed;
                match cost_usd {
                    Some(c) => t.cost_usd += c,
                    None => t.cost_unknown = true,
                }
                t.context_tokens =
                    usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens;
            }
            Event::ApprovalRequired(request) => {
                self.transcript.close();
                self.approval = Some(ApprovalDialog {
                    request: request.clone(),
                    input: None,
                });
                self.dialog_scroll = 0;
            }
            Event::TrustChanged { on } => self.quiet(
                if *on {
                    "trust on: file tools may reach outside the workspace"
                } else {
                    "trust off: file tools stay inside the workspace"
                }
                .to_owned(),
            ),
            Event::GrantList { grants } => self.grants = grants.clone(),
            Event::ThreadList { threads } => self.threads = threads.clone(),
            Event::ThreadSwitched { thread } => {
                for t in &mut self.threads {
                    t.current = t.id == thread.id;
                }
                if !self.threads.iter().any(|t| t.id == thread.id) {
                    self.threads.push(thread.clone());
                }
                self.quiet(format!(
                    "now in thread {} ({} messages)",
                    thread.id, thread.messages
                ));
            }
            Event::Notice { message } => self.push(Kind::Notice(sanitize(message).into_owned())),
            Event::Retry(n) => self.quiet(format!(
                "retrying model call ({}/{}) in {:.1} s: {}",
                n.attempt + 1,
                n.max_attempts,
                n.delay_ms as f64 / 1000.0,
                n.reason
            )),
            Event::Warning { message } => self.push(Kind::Warning(sanitize(message).into_owned())),
            Event::Error { message } => self.push(Kind::Error(sanitize(message).into_owned())),
            Event::EffortChanged {
                effort,
                supported,
                model,
            } => {
                let name = effort.map(effort_name);
                self.effort = name.filter(|_| *supported).map(str::to_owned);
                self.push(Kind::Notice(match (supported, name) {
                    (true, Some(name)) => format!("reasoning effort: {name}"),
                    (true, None) => "reasoning effort: the provider's default".to_owned(),
                    (false, _) => format!(
                        "{} takes no reasoning effort; its requests stay as they were",
                        sanitize(model)
                    ),
                }));
            }
            Event::ModeChanged { mode, permission } => {
                self.info.mode = *mode;
                self.info.permission = *permission;
                self.quiet(format!(
                    "mode: {} (permission: {})",
                    mode.label(),
                    permission_name(*permission)
                ));
            }
            Event::ChangeQueued { change } => {
                self.pending_changes += 1;
                if let Some(plan) = &mut self.plan
                    && plan.status.is_open()
                    && !plan.proposed_changes.iter().any(|c| c.id == change.id)
                {
                    plan.proposed_changes.push(change.clone());
                    self.previews.push(String::new());
                }
                self.quiet(format!(
                    "plan: change {} queued ({} {}); /show-plan to review",
                    change.order,
                    change.tool,
                    atto_core::change_target(change)
                ));
            }
            Event::Plan { plan, previews } => {
                self.plan = plan.clone();
                self.previews = previews.iter().map(|p| sanitize(p).into_owned()).collect();
                self.pending_changes = plan.as_ref().map_or(0, |p| {
                    p.proposed_changes
                        .iter()
                        .filter(|c| c.status.is_open())
                        .count()
                });
            }
            Event::PlanDecided { status, outcomes } => self.plan_decided(*status, outcomes),
            Event::Goals { goals, current } => {
                self.goals = goals.clone();
                self.current_goal = current.clone();
            }
            Event::CheckpointList { checkpoints } => self.checkpoints = checkpoints.clone(),
            Event::Restored {
                checkpoint,
                safety_checkpoint,
                restored,
                deleted,
                ..
            } => self.push(Kind::Notice(format!(
                "{}: {} file(s) written back, {} removed; /restore {safety_checkpoint} undoes this",
                if *checkpoint == 0 {
                    "undone".to_owned()
                } else {
                    format!("restored checkpoint {checkpoint}")
                },
                restored.len(),
                deleted.len()
            ))),
            Event::CorrectionAttempt {
                tool,
                strategy,
                attempt,
                max,
                ..
            } => self.quiet(format!(
                "self-correcting {tool} ({attempt}/{max}): {strategy}"
            )),
            Event::CorrectionSuccess { tool, attempts } => {
                self.quiet(format!("{tool} recovered after {attempts} correction(s)"));
            }
            Event::CorrectionFailed { tool, attempts } => self.quiet(format!(
                "self-correction gave up on {tool} after {attempts} attempt(s)"
            )),
            Event::TurnCompleted { result, .. } => {
                self.running = false;
                self.approval = None;
                self.close_decision();
                self.transcript.close();
                // A failure was already reported by its error event.
                if result.status != TurnStatus::Failed {
                    self.quiet(result_line(result));
                }
            }
            // The planner's, else events this screen does not show (the session's end, and
            // kinds newer than this front end).
            _ => return self.planner_event(event).is_some(),
        }
        true
    }

    fn quiet(&mut self, text: String) {
        self.push(Kind::Quiet(sanitize(&text).into_owned()));
    }

    fn tool_finished(
        &mut self,
        call_id: &str,
        name: &str,
        status: ToolCallStatus,
        duration_ms: u64,
        summary: &str,
        sandboxed: Option<bool>,
    ) {
        if self
            .approval
            .as_ref()
            .is_some_and(|a| a.request.call_id == call_id)
        {
            self.approval = None;
        }
        let output: Vec<String> = sanitize(summary)
            .lines()
            .map(|l| l.trim_end().to_owned())
            .skip_while(|l| l.is_empty())
            .collect();
        let card = match self.transcript.tool_mut(call_id) {
            Some(card) => card,
            None => {
                // Never started on screen (refused before it ran): show it anyway.
                let args = serde_json::Value::Object(serde_json::Map::new());
                self.transcript
                    .push(Kind::Tool(ToolCard::new(call_id, name, &args)));
                match self.transcript.tool_mut(call_id) {
                    Some(card) => card,
                    None => return,
                }
            }
        };
        card.status = Some(status);
        card.duration_ms = duration_ms;
        card.sandboxed = sandboxed;
        card.output = output;
        // The card already draws the change from the call's arguments: the unified diff the
        // tool echoes back for the model would say it a second time.
        if !card.diff.is_empty()
            && status == ToolCallStatus::Ok
            && let Some(at) = card.output.iter().position(|l| l.starts_with("--- "))
        {
            card.output.truncate(at);
        }
        while card.output.last().is_some_and(|l| l.is_empty()) {
            card.output.pop();
        }
    }

    fn plan_decided(&mut self, status: PlanStatus, outcomes: &[ChangeOutcome]) {
        let mut lines = Vec::with_capacity(outcomes.len() + 1);
        for o in outcomes {
            lines.push(format!(
                "{}. {} {}: {} — {}",
                o.order,
                o.tool,
                o.target,
                o.status.as_str(),
                o.detail.lines().next().unwrap_or("")
            ));
        }
        lines.push(format!("plan is now {}", status.as_str()));
        match &mut self.plan {
            Some(plan) => {
                plan.status = status;
                for o in outcomes {
                    if let Some(c) = plan
                        .proposed_changes
                        .iter_mut()
                        .find(|c| c.order == o.order)
                    {
                        c.status = o.status;
                    }
                }
                self.pending_changes = if status.is_open() {
                    plan.proposed_changes
                        .iter()
                        .filter(|c| c.status.is_open())
                        .count()
                } else {
                    0
                };
            }
            None => {
                let closed = outcomes.iter().filter(|o| !o.status.is_open()).count();
                self.pending_changes = if status.is_open() {
                    self.pending_changes.saturating_sub(closed)
                } else {
                    0
                };
            }
        }
        self.push(Kind::Notice(sanitize(&lines.join("\n")).into_owned()));
    }
}

pub(crate) fn permission_name(mode: PermissionMode) -> &'static str {
    match mode {
        PermissionMode::Strict => "strict",
        PermissionMode::Interactive => "interactive",
        PermissionMode::AutoSafe => "auto-safe",
        PermissionMode::Yolo => "yolo",
    }
}

/// "done · 4 model calls · 1234 tokens · $0.0012 · 3.1 s · changed: a.py"
fn result_line(result: &FinalResult) -> String {
    let status = match result.status {
        TurnStatus::Completed => "done",
        TurnStatus::Failed => "failed",
        TurnStatus::Cancelled => "cancelled",
        TurnStatus::LimitReached => "stopped at a limit",
    };
    let u = &result.usage;
    let tokens = u.input_tokens + u.output_tokens + u.cache_read_tokens + u.cache_write_tokens;
    let cost = result
        .cost_usd
        .map_or_else(|| "cost unknown".to_owned(), |c| format!("${c:.4}"));
    let mut line = format!(
        "{status} · {} model calls · {tokens} tokens · {cost} · {}",
        result.rounds,
        duration(result.duration_ms)
    );
    if !result.files_changed.is_empty() {
        line.push_str(" · changed: ");
        line.push_str(&result.files_changed.join(", "));
    }
    line
}

/// How a reasoning effort is named in the status line and notices.
pub(crate) fn effort_name(effort: atto_protocol::ReasoningEffort) -> &'static str {
    match effort {
        atto_protocol::ReasoningEffort::Low => "low",
        atto_protocol::ReasoningEffort::Medium => "medium",
        atto_protocol::ReasoningEffort::High => "high",
    }
}
