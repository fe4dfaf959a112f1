//! `App::on_event`: hands each engine event to the family that owns it, and the session
//! family itself: the session's start, turns, mode, effort, trust and usage. The other
//! families live beside it: `calls` (streamed text, tool calls, approvals), `notes`
//! (messages, the lists the panels show, and the session's reports), `changes` (the
//! pending plan), `planner` (the task plan), `steps` (its steps as they run), `agents`
//! (subagents) and `learning` (proposed and recalled learnings).

use atto_protocol::{Event, FinalResult, PermissionMode, ReasoningEffort, TurnStatus, Usage};

use super::App;
use crate::transcript::{Kind, duration};
use crate::view::text::sanitize;

impl App {
    /// Folds one event into the state. Returns whether anything visible changed. Sets
    /// `approval` on `ApprovalRequired` and clears it when the call finishes or the turn
    /// ends.
    pub fn on_event(&mut self, event: &Event) -> bool {
        // Every variant is named, so a new kind of event does not compile until it is
        // routed to the family that shows it (or said here to show nothing).
        let shown = match event {
            Event::EffortChanged { .. }
            | Event::ModeChanged { .. }
            | Event::SessionStarted { .. }
            | Event::TrustChanged { .. }
            | Event::TurnCompleted { .. }
            | Event::TurnStarted { .. }
            | Event::Usage { .. } => self.session_event(event),
            Event::ApprovalRequired { .. }
            | Event::TextDelta { .. }
            | Event::ThinkingDelta { .. }
            | Event::ToolCallFinished { .. }
            | Event::ToolCallStarted { .. } => self.call_event(event),
            Event::CorrectionAttempt { .. }
            | Event::CorrectionFailed { .. }
            | Event::CorrectionSuccess { .. }
            | Event::Error { .. }
            | Event::Notice { .. }
            | Event::Restored { .. }
            | Event::Retry { .. }
            | Event::Warning { .. } => self.note_event(event),
            Event::CheckpointList { .. }
            | Event::Goals { .. }
            | Event::GrantList { .. }
            | Event::ThreadList { .. }
            | Event::ThreadSwitched { .. } => self.list_event(event),
            Event::ContextCompacted { .. }
            | Event::ContextReport { .. }
            | Event::CostReport { .. }
            | Event::McpServerStatus { .. }
            | Event::McpServers { .. }
            | Event::ModelChanged { .. }
            | Event::ModelList { .. } => self.report_event(event),
            Event::ChangeQueued { .. } | Event::Plan { .. } | Event::PlanDecided { .. } => {
                self.change_event(event)
            }
            Event::PlanConfirmed { .. }
            | Event::PlanGenerated { .. }
            | Event::PlanGenerationCancelled { .. }
            | Event::PlanGenerationFailed { .. }
            | Event::PlanRejected { .. }
            | Event::PlanRevised { .. }
            | Event::PlannerSettingsChanged { .. }
            | Event::TaskPlanShown { .. } => self.task_plan_event(event),
            Event::PlanDecisionRequired { .. }
            | Event::PlanStepCompleted { .. }
            | Event::PlanStepFailed { .. }
            | Event::PlanStepRetrying { .. }
            | Event::PlanStepSkipped { .. }
            | Event::PlanStepStarted { .. }
            | Event::PlanSummary { .. } => self.step_event(event),
            Event::SubagentFinished { .. }
            | Event::SubagentList { .. }
            | Event::SubagentProgress { .. }
            | Event::SubagentStarted { .. } => self.agent_event(event),
            Event::LearningList { .. }
            | Event::LearningProposed { .. }
            | Event::LearningUpdated { .. }
            | Event::LearningsUsed { .. } => self.learning_event(event),
            Event::PromptList { .. } | Event::Rewound { .. } => self.rewind_event(event),
            // Servers still starting: their state shows once they are up (`McpServerStatus`).
            Event::McpProgress { .. } => None,
            // The session's end: the loop stops reading; nothing to show.
            Event::SessionEnded => None,
        };
        shown.is_some() | self.after_session_event()
    }

    /// A swarm worker's approval waiting in line shows once the session's own is gone.
    fn after_session_event(&mut self) -> bool {
        let before = self.approval.is_some();
        self.promote_swarm_question();
        !before && self.approval.is_some()
    }

    /// The session's own events; `None` for the others.
    fn session_event(&mut self, event: &Event) -> Option<()> {
        match event {
            Event::SessionStarted {
                session_id,
                provider,
                model,
                workspace,
                mode,
                permission,
                sandbox,
                ..
            } => {
                self.info.provider = provider.clone();
                self.info.model = model.clone();
                self.info.workspace = workspace.clone();
                self.info.mode = *mode;
                if let Some(permission) = permission {
                    self.info.permission = *permission;
                }
                // What the session prepared, not what a probe of the kernel suggested.
                if let Some(state) = sandbox {
                    let reason = (!state.applied).then_some(state.detail.as_str());
                    self.set_sandbox(super::SandboxState::reported(state.applied, reason));
                }
                let short = &session_id[..session_id.len().min(8)];
                self.quiet(format!(
                    "session {short} · {provider}/{model} · {workspace}"
                ));
            }
            Event::TurnStarted { mode, .. } => {
                self.running = true;
                self.info.mode = *mode;
            }
            Event::TurnCompleted { result, .. } => self.turn_completed(result),
            Event::Usage {
                usage, cost_usd, ..
            } => self.charge(usage, *cost_usd),
            Event::ModeChanged { mode, permission } => {
                self.info.mode = *mode;
                self.info.permission = *permission;
                // A question about the mode before it changed answers nothing now.
                self.decline_yolo();
                self.quiet(format!(
                    "mode: {} (permission: {})",
                    mode.label(),
                    permission_name(*permission)
                ));
            }
            Event::EffortChanged {
                effort,
                supported,
                model,
            } => self.effort_changed(*effort, *supported, model),
            Event::TrustChanged { on } => self.quiet(
                if *on {
                    "trust on: file tools may reach outside the workspace"
                } else {
                    "trust off: file tools stay inside the workspace"
                }
                .to_owned(),
            ),
            _ => return None,
        }
        Some(())
    }

    /// A dim one-liner in the transcript.
    pub(super) fn quiet(&mut self, text: String) {
        self.push(Kind::Quiet(sanitize(&text).into_owned()));
    }

    fn charge(&mut self, usage: &Usage, cost_usd: Option<f64>) {
        let billed = atto_protocol::usage::total_tokens(usage);
        self.charge_step(billed);
        let t = &mut self.totals;
        t.tokens += billed;
        match cost_usd {
            Some(c) => t.cost_usd += c,
            None => t.cost_unknown = true,
        }
        t.context_tokens = usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens;
    }

    fn effort_changed(&mut self, effort: Option<ReasoningEffort>, supported: bool, model: &str) {
        let name = effort.map(ReasoningEffort::as_str);
        self.effort = name.filter(|_| supported).map(str::to_owned);
        self.push(Kind::Notice(match (supported, name) {
            (true, Some(name)) => format!("reasoning effort: {name}"),
            (true, None) => "reasoning effort: the provider's default".to_owned(),
            (false, _) => format!(
                "{} takes no reasoning effort; its requests stay as they were",
                sanitize(model)
            ),
        }));
    }

    fn turn_completed(&mut self, result: &FinalResult) {
        self.running = false;
        // A swarm worker's question outlives the session's turn.
        self.approval.take_if(|d| d.swarm_task.is_none());
        self.close_decision();
        self.transcript.close();
        // A failure was already reported by its error event.
        if result.status != TurnStatus::Failed {
            self.quiet(result_line(result));
        }
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
    let tokens = atto_protocol::usage::total_tokens(u);
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
