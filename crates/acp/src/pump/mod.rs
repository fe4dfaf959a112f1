//! One session's pump: reads the session's events and turns each into what the client
//! sees (`session/update` notifications, `session/request_permission` requests, the answer
//! to `session/prompt`), and takes the client's prompts and cancels from the handlers.
//! It owns the session's `AgentHandle`; nothing else reads its events.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::time::Duration;

use agent_client_protocol::v1::schema::{
    CurrentModeUpdate, PromptResponse, SessionNotification, SessionUpdate, StopReason, ToolCall,
    ToolCallStatus as AcpStatus, ToolCallUpdate, ToolCallUpdateFields,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Client, Error};
use atto_present::commands::{self, Command, State};
use atto_protocol::{AgentHandle, OpSender};
use atto_protocol::{
    AgentMode, ChangeOutcome, ChangeStatus, Compaction, Event, FinalResult, Op, ProposedChange,
    StepStatus,
};
use serde_json::Value;
use tokio::sync::mpsc;

use crate::convert;
use crate::plan_view::PlanView;

mod calls;
mod progress;
mod review;

/// What the request handlers hand a session's pump.
pub(crate) enum Front {
    /// A `session/prompt`, answered when its turn ends.
    Prompt {
        text: String,
        responder: Box<Responder<PromptResponse>>,
    },
    /// A `session/cancel` (the `Interrupt` was already sent).
    Cancel,
    /// The client decided the plan's proposed changes: how many decision ops were sent.
    Reviewed { decisions: usize },
    /// The client answered an approval: whether it allowed the call. Sent before the
    /// answer reaches the gate, so the pump knows it before the call starts or is refused.
    Answered { call_id: String, allowed: bool },
}

/// Everything a pump starts from.
pub(crate) struct PumpSetup {
    pub session_id: String,
    pub workspace: PathBuf,
    pub mode: AgentMode,
    pub handle: AgentHandle,
    pub cx: ConnectionTo<Client>,
    /// Events that came before `session_started`, shown first.
    pub early: Vec<Event>,
    pub approval_deadline: Option<Duration>,
    /// Whether trust mode is on at the start.
    pub trust: bool,
    /// What the tools say of calls known only by name.
    pub tools: std::sync::Arc<dyn crate::ToolFacts>,
}

/// A tool call the client has been told about.
struct Call {
    args: Value,
    /// The file as it was when plan mode queued the call or approval was asked (nothing
    /// can change it through atto then).
    before: Option<String>,
    approval: Approval,
}

/// Where a call stands with the person who approves it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Approval {
    /// No question was asked.
    NotAsked,
    /// Asked, and not allowed (yet): the call is shown running only once allowed.
    Asked,
    /// The client allowed it.
    Allowed,
}

/// The prompt being answered, and what it waits for.
enum Answering {
    /// A turn: answered at `turn_completed`.
    Turn(Responder<PromptResponse>),
    /// A slash command: answered after its first answering event (or a turn, if it
    /// started one).
    Command(Responder<PromptResponse>),
    /// The turn ended with proposed changes; the client is deciding them.
    Review {
        responder: Responder<PromptResponse>,
        result: FinalResult,
        /// Decision ops still to be answered (`None`: the client has not decided yet).
        waiting: Option<usize>,
    },
}

pub(crate) struct Pump {
    id: String,
    workspace: PathBuf,
    mode: AgentMode,
    trust: bool,
    handle: AgentHandle,
    ops: OpSender,
    cx: ConnectionTo<Client>,
    early: Vec<Event>,
    deadline: Option<Duration>,
    front: mpsc::UnboundedReceiver<Front>,
    front_tx: mpsc::UnboundedSender<Front>,
    answering: Option<Answering>,
    cancelled: bool,
    calls: HashMap<String, Call>,
    /// Open proposed changes of this turn, in order.
    proposed: Vec<ProposedChange>,
    /// Order number → the tool call id the change is shown as.
    change_calls: HashMap<u32, String>,
    /// Tool calls plan mode queued instead of running.
    queued_calls: HashSet<String>,
    /// Plan steps whose decision the client was asked for.
    decisions: HashSet<u32>,
    plan: PlanView,
    /// Sending to the client failed: it is gone.
    client_gone: bool,
    /// What the tools say of calls known only by name.
    tools: std::sync::Arc<dyn crate::ToolFacts>,
}

impl Pump {
    pub(crate) fn new(
        setup: PumpSetup,
        front: mpsc::UnboundedReceiver<Front>,
        front_tx: mpsc::UnboundedSender<Front>,
    ) -> Self {
        let ops = setup.handle.op_sender();
        Pump {
            id: setup.session_id,
            workspace: setup.workspace,
            mode: setup.mode,
            trust: setup.trust,
            handle: setup.handle,
            ops,
            cx: setup.cx,
            early: setup.early,
            deadline: setup.approval_deadline,
            front,
            front_tx,
            answering: None,
            cancelled: false,
            calls: HashMap::new(),
            proposed: Vec::new(),
            change_calls: HashMap::new(),
            queued_calls: HashSet::new(),
            decisions: HashSet::new(),
            plan: PlanView::default(),
            client_gone: false,
            tools: setup.tools,
        }
    }

    /// Runs until the session ends.
    pub(crate) async fn run(mut self) {
        self.send(SessionUpdate::AvailableCommandsUpdate(
            agent_client_protocol::v1::schema::AvailableCommandsUpdate::new(convert::commands()),
        ));
        for event in std::mem::take(&mut self.early) {
            self.event(event);
        }
        let mut front_open = true;
        // A slash command's answer is bounded: with no answering event, it ends here.
        let tick = Duration::from_secs(5);
        loop {
            tokio::select! {
                event = self.handle.next_event() => match event {
                    Some(event) => self.event(event),
                    None => break,
                },
                front = self.front.recv(), if front_open => match front {
                    Some(front) => self.front(front),
                    None => front_open = false,
                },
                () = tokio::time::sleep(tick), if matches!(self.answering, Some(Answering::Command(_))) => {
                    match self.answering.take() {
                        Some(Answering::Command(responder)) => {
                            let _ = responder.respond(PromptResponse::new(StopReason::EndTurn));
                        }
                        other => self.answering = other,
                    }
                }
            }
        }
        let waiting = match self.answering.take() {
            Some(Answering::Turn(r) | Answering::Command(r)) => Some(r),
            Some(Answering::Review { responder, .. }) => Some(responder),
            None => None,
        };
        if let Some(responder) = waiting {
            let _ = responder.respond_with_error(
                Error::internal_error().data("the atto session ended during this prompt"),
            );
        }
    }

    fn send(&mut self, update: SessionUpdate) {
        self.notify(SessionNotification::new(self.id.clone(), update));
    }

    /// Announces a tool call. ACP's schema leaves a `pending` status out as its default,
    /// and an editor that does not fill it in showed a call with no status: a pending
    /// call is sent with its status said.
    fn announce(&mut self, tool: ToolCall) {
        let pending = tool.status == AcpStatus::Pending;
        let note = SessionNotification::new(self.id.clone(), SessionUpdate::ToolCall(tool));
        if !pending {
            self.notify(note);
            return;
        }
        let said = serde_json::to_value(&note).map(|mut params| {
            params["update"]["status"] = Value::from("pending");
            params
        });
        match said
            .map_err(Error::from)
            .and_then(|params| agent_client_protocol::UntypedMessage::new("session/update", params))
        {
            Ok(message) => self.notify(message),
            // Unreachable for these types; the typed message still reaches the client.
            Err(_) => self.notify(note),
        }
    }

    /// Handles the client messages that came in meanwhile (an approval's answer).
    fn drain_front(&mut self) {
        while let Ok(front) = self.front.try_recv() {
            self.front(front);
        }
    }

    fn notify(&mut self, note: impl agent_client_protocol::JsonRpcNotification) {
        if self.client_gone {
            return;
        }
        if let Err(err) = self.cx.send_notification(note) {
            // Said once: the client is gone and the session is being stopped.
            eprintln!("atto acp: cannot send session updates any more ({err})");
            self.client_gone = true;
        }
    }

    fn front(&mut self, front: Front) {
        match front {
            Front::Prompt { text, responder } => self.prompt(text, *responder),
            Front::Cancel => self.cancelled = true,
            Front::Answered { call_id, allowed } => {
                if let Some(call) = self.calls.get_mut(&call_id) {
                    call.approval = if allowed {
                        Approval::Allowed
                    } else {
                        Approval::Asked
                    };
                }
            }
            Front::Reviewed { decisions } => {
                if let Some(Answering::Review { waiting, .. }) = &mut self.answering {
                    *waiting = Some(decisions);
                }
                self.finish_review_if_done();
            }
        }
    }

    fn prompt(&mut self, text: String, responder: Responder<PromptResponse>) {
        if self.answering.is_some() {
            let _ = responder.respond_with_error(Error::invalid_request().data(
                "a prompt is already running in this session; wait for its answer or send \
                 session/cancel",
            ));
            return;
        }
        self.cancelled = false;
        if text.trim_start().starts_with('/') {
            let state = State {
                trust: self.trust,
                mode: self.mode,
            };
            match commands::parse(&text, &state) {
                Ok(Command::Op(op)) => {
                    if self.ops.submit(op).is_err() {
                        let _ = responder.respond_with_error(
                            Error::internal_error().data("the atto session has ended"),
                        );
                        return;
                    }
                    self.answering = Some(Answering::Command(responder));
                }
                Ok(Command::Help) => {
                    self.send(convert::agent_text(commands::help()));
                    let _ = responder.respond(PromptResponse::new(StopReason::EndTurn));
                }
                Ok(Command::Exit) => {
                    self.send(convert::agent_text(
                        "close the session in the editor to end it; atto keeps it stored",
                    ));
                    let _ = responder.respond(PromptResponse::new(StopReason::EndTurn));
                }
                Err(message) => {
                    self.send(convert::agent_text(format!("atto: {message}")));
                    let _ = responder.respond(PromptResponse::new(StopReason::EndTurn));
                }
            }
            return;
        }
        if self.ops.submit(Op::UserInput { text }).is_err() {
            let _ = responder
                .respond_with_error(Error::internal_error().data("the atto session has ended"));
            return;
        }
        self.answering = Some(Answering::Turn(responder));
    }

    fn event(&mut self, event: Event) {
        // A slash command's first answer ends its prompt, unless it started a turn.
        let command_answered = matches!(self.answering, Some(Answering::Command(_)))
            && !matches!(
                event,
                Event::TurnStarted { .. } | Event::TextDelta { .. } | Event::ThinkingDelta { .. }
            );
        if let Some(event) = self.progress(event) {
            self.show(event, command_answered);
        }
        if command_answered {
            match self.answering.take() {
                Some(Answering::Command(r)) => {
                    let _ = r.respond(PromptResponse::new(StopReason::EndTurn));
                }
                other => self.answering = other,
            }
        }
    }

    fn show(&mut self, event: Event, command_answered: bool) {
        match event {
            Event::SessionStarted { .. } | Event::SessionEnded | Event::Usage { .. } => {}
            Event::TurnStarted { mode, .. } => self.turn_started(mode),
            Event::TextDelta { text } => self.send(convert::agent_text(text)),
            Event::ThinkingDelta { text } => self.send(convert::thought(text)),
            Event::ApprovalRequired(request) => self.ask(request),
            Event::ToolCallStarted {
                call_id,
                name,
                arguments,
                kind,
                title,
            } => self.started(call_id, name, arguments, kind, title),
            Event::ToolCallFinished {
                call_id,
                status,
                summary,
                exit_code,
                sandboxed,
                ..
            } => self.finished(call_id, status, summary, exit_code, sandboxed),
            Event::ModeChanged { mode, .. } => self.mode_changed(mode),
            Event::TrustChanged { on } => self.trust = on,
            Event::ChangeQueued { change } => self.queued(change),
            Event::PlanDecided { outcomes, .. } => self.plan_decided(outcomes),
            Event::PlanGenerated { plan, .. }
            | Event::PlanRevised { plan, .. }
            | Event::TaskPlanShown { plan } => self.plan_shown(&plan),
            Event::PlanStepStarted { number, .. } => self.step(number, StepStatus::InProgress),
            Event::PlanStepCompleted { number, .. } => self.step(number, StepStatus::Completed),
            Event::PlanStepFailed { number, .. } => self.step(number, StepStatus::Failed),
            Event::PlanStepSkipped { number, .. } => self.step(number, StepStatus::Skipped),
            Event::Goals { goals, .. } => self.goals_shown(goals),
            Event::Notice { message } => self.send(convert::agent_text(format!("\n{message}\n"))),
            Event::Warning { message } => self.warned(&message),
            Event::Error { message } => self.errored(&message),
            Event::TurnCompleted { result, .. } => self.turn_completed(result),
            // Compaction changes what the model still sees verbatim: the editor's user is told.
            Event::ContextCompacted(c) if !command_answered => self.compacted(&c),
            other @ (Event::GrantList { .. }
            | Event::ThreadList { .. }
            | Event::ThreadSwitched { .. }
            | Event::PromptList { .. }
            | Event::Rewound { .. }
            | Event::Retry(_)
            | Event::Plan { .. }
            | Event::CheckpointList { .. }
            | Event::Restored { .. }
            | Event::CorrectionAttempt { .. }
            | Event::CorrectionSuccess { .. }
            | Event::CorrectionFailed { .. }
            | Event::PlanGenerationFailed { .. }
            | Event::PlanGenerationCancelled { .. }
            | Event::PlanConfirmed { .. }
            | Event::PlanRejected { .. }
            | Event::PlanDecisionRequired { .. }
            | Event::PlanStepRetrying { .. }
            | Event::PlanSummary { .. }
            | Event::PlannerSettingsChanged { .. }
            | Event::EffortChanged { .. }
            | Event::SubagentStarted { .. }
            | Event::SubagentProgress { .. }
            | Event::SubagentFinished { .. }
            | Event::SubagentList { .. }
            | Event::ModelChanged { .. }
            | Event::ModelList { .. }
            | Event::ContextReport { .. }
            | Event::CostReport { .. }
            | Event::LearningProposed { .. }
            | Event::LearningsUsed { .. }
            | Event::LearningList { .. }
            | Event::LearningUpdated { .. }
            | Event::McpServerStatus { .. }
            | Event::McpProgress { .. }
            | Event::McpServers { .. }
            | Event::ContextCompacted(_)) => self.command_answer_as_text(&other, command_answered),
        }
    }

    /// The answers to slash commands that ACP has no update for: shown as text.
    /// Progress among them (retries, corrections, subagents, recalled learnings)
    /// was shown by `progress` and does not reach here.
    fn command_answer_as_text(&mut self, event: &Event, command_answered: bool) {
        if command_answered {
            let text = convert::event_text(event);
            self.send(convert::agent_text(text));
        }
    }

    /// A step plan or a task plan, new or revised, replaces the plan the client shows.
    fn plan_shown(&mut self, plan: &atto_protocol::TaskPlan) {
        self.plan.set_plan(plan);
        self.send(SessionUpdate::Plan(self.plan.plan()));
    }

    /// The session's goals show as entries of the client's plan.
    fn goals_shown(&mut self, goals: Vec<atto_protocol::Goal>) {
        self.plan.set_goals(goals);
        self.send(SessionUpdate::Plan(self.plan.plan()));
    }

    fn warned(&mut self, message: &str) {
        self.send(convert::agent_text(format!("\nwarning: {message}\n")));
    }

    /// An error is said; it may be the answer to a decision op of a plan review.
    fn errored(&mut self, message: &str) {
        self.send(convert::agent_text(format!("\nerror: {message}\n")));
        self.decision_answered();
    }

    fn turn_started(&mut self, mode: AgentMode) {
        self.mode = mode;
        self.proposed.clear();
        self.answering = match self.answering.take() {
            Some(Answering::Command(r)) => Some(Answering::Turn(r)),
            other => other,
        };
    }

    fn mode_changed(&mut self, mode: AgentMode) {
        self.mode = mode;
        self.send(SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(
            mode.as_str(),
        )));
    }

    /// The plan-mode queue decided: each change's call ends as what became of it.
    fn plan_decided(&mut self, outcomes: Vec<ChangeOutcome>) {
        for outcome in outcomes {
            let Some(call_id) = self.change_calls.get(&outcome.order).cloned() else {
                continue;
            };
            let status = match outcome.status {
                ChangeStatus::Applied => AcpStatus::Completed,
                ChangeStatus::Pending | ChangeStatus::Conflict => AcpStatus::Pending,
                ChangeStatus::Failed | ChangeStatus::Rejected => AcpStatus::Failed,
            };
            let fields = ToolCallUpdateFields::new()
                .status(status)
                .raw_output(serde_json::json!({
                    "change": outcome.status.as_str(),
                    "detail": outcome.detail,
                }));
            self.send(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                call_id, fields,
            )));
        }
        self.decision_answered();
    }

    fn compacted(&mut self, c: &Compaction) {
        let how = if c.summarized {
            "older messages summarised"
        } else {
            "old tool outputs elided"
        };
        self.send(convert::thought(format!(
            "context compacted ({how}): ~{} → ~{} tokens; the originals stay in thread \
             {} (/rollback)",
            c.before_tokens, c.after_tokens, c.from_thread
        )));
    }

    fn step(&mut self, number: u32, status: StepStatus) {
        self.decided(number);
        self.plan.step(number, status);
        self.send(SessionUpdate::Plan(self.plan.plan()));
    }
}
