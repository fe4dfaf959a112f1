//! The session actor: owns a live conversation, takes `Op`s, runs turns, emits `Event`s.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use atto_llm::{ModelClient, ModelError, ModelRequest, StreamUpdate};
use atto_policy::gate::{Grant, PermissionSetting};
use atto_protocol::{
    AgentMode, ApprovalDecision, AssistantPart, Event, FailureKind, FinalResult, Message, Op,
    PermissionMode, TurnStatus, Usage,
};
use atto_store::{NewSession, Store};
use atto_tools::{CancellationToken, Sandbox, ToolRegistry};
use tokio::sync::mpsc;

use crate::audit::Audit;
use crate::checkpoints::{DEFAULT_LIST, Keeper};
use crate::gatekeeper::{GateSetup, Gatekeeper};
use crate::handle::AgentHandle;
use crate::limits::Limits;
use crate::orchestrator::Orchestrator;
use crate::plan::PlanQueue;
use crate::planner::Planner;
use crate::planner::report::StepResultTool;
use crate::prompt::{self, ProjectInstructions, PromptInputs};
use crate::recorder::Recorder;
use crate::threads::Threads;

mod drive;
mod handlers;
mod planning;
use crate::work::{SharedWork, Work, WorkTool};

/// How many times one prompt's work is continued toward an active goal.
const MAX_GOAL_NUDGES: u32 = 10;

/// The user text of a message that continues toward the goal (atto's, not the user's).
const GOAL_CONTINUE: &str = "(continue toward the goal)";

/// What a session is made of.
pub struct SessionOptions {
    /// Session id, shown in events.
    pub session_id: String,
    /// Canonical workspace root.
    pub workspace: PathBuf,
    /// The model client (with retries applied).
    pub client: Arc<dyn ModelClient>,
    /// The tools offered to the model.
    pub tools: ToolRegistry,
    /// Per-turn bounds.
    pub limits: Limits,
    /// Project instructions to put in the system prompt.
    pub instructions: Vec<ProjectInstructions>,
    /// The permission mode (and codewhale's `never`).
    pub permission: PermissionSetting,
    /// Config rules and stored grants.
    pub grants: Vec<Grant>,
    /// The database for grants and the audit log; `None` runs without them (warned).
    pub store: Option<Store>,
    /// The OS sandbox for commands; `None` where the kernel offers none (then WARN
    /// commands always ask). Never applied in yolo mode.
    pub sandbox: Option<Arc<Sandbox>>,
    /// Trust mode at start: file tools may reach outside the workspace.
    pub trust: bool,
    /// Absolute directories whose writes always ask (atto's own config and data).
    pub protected_dirs: Vec<String>,
    /// The history of a resumed session; `None` starts a new session (recorded in the
    /// store when there is one).
    pub resume: Option<Vec<Message>>,
    /// The thread a resumed session continues in; `None` for its first thread.
    pub thread: Option<String>,
    /// The agent mode the session starts in.
    pub mode: AgentMode,
    /// File checkpoints of the workspace; `None` runs without them (said at start).
    pub checkpoints: Option<Arc<atto_checkpoint::Checkpoints>>,
}

/// Starts a session on the current tokio runtime and returns the handle to drive it.
pub fn spawn_session(mut options: SessionOptions) -> AgentHandle {
    let (op_tx, op_rx) = mpsc::unbounded_channel();
    let (ev_tx, ev_rx) = mpsc::unbounded_channel();
    let current_turn = Arc::new(std::sync::atomic::AtomicU32::new(0));
    let work: SharedWork = Arc::new(tokio::sync::Mutex::new(Work::new(
        options.store.clone(),
        options.session_id.clone(),
        ev_tx.clone(),
    )));
    for tool in WorkTool::all(&work) {
        options.tools.register(tool);
    }
    if let Some(checkpoints) = &options.checkpoints {
        options
            .tools
            .register(Arc::new(crate::revert::RevertTurnTool::new(
                Arc::clone(checkpoints),
                Arc::clone(&current_turn),
            )));
    }
    let names = options.tools.names();
    let system = prompt::system_prompt(&PromptInputs {
        workspace: &options.workspace,
        tool_names: &names,
        instructions: &options.instructions,
        date: &crate::time::utc_date(SystemTime::now()),
    });
    let (approval_tx, approval_rx) = mpsc::unbounded_channel();
    let resuming = options.resume.is_some();
    let recorder = Recorder::new(
        options.store.clone(),
        options
            .thread
            .clone()
            .unwrap_or_else(|| options.session_id.clone()),
        options.resume.as_ref().map_or(0, Vec::len),
        ev_tx.clone(),
    );
    let resumed = options.resume.take().unwrap_or_default();
    let audit = Audit::new(
        options.store.clone(),
        options.session_id.clone(),
        options.workspace.display().to_string(),
        options.permission.mode,
        ev_tx.clone(),
    );
    let gate = Gatekeeper::new(
        GateSetup {
            permission: options.permission,
            grants: std::mem::take(&mut options.grants),
            commands_sandboxed: options.sandbox.is_some(),
            workspace: options.workspace.clone(),
            protected_dirs: std::mem::take(&mut options.protected_dirs),
        },
        audit,
        approval_rx,
    );
    let plan = PlanQueue::new(
        options.store.clone(),
        options.session_id.clone(),
        options.workspace.clone(),
        ev_tx.clone(),
    );
    let keeper = Keeper::new(options.checkpoints.clone(), ev_tx.clone());
    // Offered to the model only in plan steps, so it is registered after the specs are
    // taken; the specs of a step's turn add it.
    let tool_specs = options.tools.specs();
    let planner = Planner::new(
        options.store.clone(),
        options.session_id.clone(),
        ev_tx.clone(),
    );
    options.tools.register(Arc::new(StepResultTool {
        slot: Arc::clone(&planner.slot),
    }));
    let session = Session {
        planner,
        keeper,
        work,
        current_turn,
        notes: Vec::new(),
        mode: options.mode,
        base_permission: options.permission,
        plan,
        trust: options.trust,
        gate,
        approvals: approval_tx,
        tool_specs,
        system,
        options,
        turns: count_turns(&resumed),
        is_new: !resuming,
        recorder,
        history: resumed,
        events: ev_tx,
    };
    tokio::spawn(session.run(op_rx));
    AgentHandle {
        ops: op_tx,
        events: ev_rx,
    }
}

struct Session {
    options: SessionOptions,
    /// The agent mode turns run in.
    mode: AgentMode,
    /// The permission the session started with, restored when `/mode` leaves yolo.
    base_permission: PermissionSetting,
    /// Plan mode's queue of proposed changes.
    plan: PlanQueue,
    /// File checkpoints.
    keeper: Keeper,
    /// The structured planner: settings and the task plan waiting for confirmation.
    planner: Planner,
    /// Tasks and goals.
    work: SharedWork,
    /// The turn running now, shared with `revert_turn`.
    current_turn: Arc<std::sync::atomic::AtomicU32>,
    /// Facts for the model's next prompt (files restored under it, ...).
    notes: Vec<String>,
    /// Whether file tools may reach outside the workspace (`/trust`).
    trust: bool,
    gate: Gatekeeper,
    /// Answers to approval requests, forwarded from the op loop to the running turn.
    approvals: mpsc::UnboundedSender<(String, ApprovalDecision)>,
    system: String,
    tool_specs: Vec<atto_protocol::ToolSpec>,
    history: Vec<Message>,
    turns: u32,
    /// Whether this session still has to be recorded in the store.
    is_new: bool,
    /// Commits messages to the store.
    recorder: Recorder,
    events: mpsc::UnboundedSender<Event>,
}

impl Session {
    fn emit(&self, event: Event) {
        // A front end that went away no longer needs events; the session still finishes
        // its turn so history stays consistent.
        let _ = self.events.send(event);
    }

    async fn run(mut self, ops: mpsc::UnboundedReceiver<Op>) {
        // Recorded (and a killed session's tail repaired) before it is announced.
        self.register().await;
        self.repair_interrupted_calls().await;
        self.plan.load().await;
        self.work.lock().await.load().await;
        self.planner.load().await;
        let info = self.options.client.info().clone();
        self.emit(Event::SessionStarted {
            session_id: self.options.session_id.clone(),
            provider: info.provider,
            model: info.model,
            wire: info.wire.to_string(),
            workspace: self.options.workspace.display().to_string(),
            mode: self.mode,
        });
        let mut inbox = drive::Inbox::new(ops);
        while let Some(op) = inbox.next().await {
            match op {
                Op::UserInput { text } => {
                    if self.planner.waiting.is_some() {
                        self.refine_plan(text).await;
                        continue;
                    }
                    if self.should_plan(&text) && self.generate_plan(text.clone()).await {
                        continue;
                    }
                    let result = self.drive_turn(text, &mut inbox).await;
                    let turn = self.turns;
                    self.charge_goals(&result).await;
                    self.emit(Event::TurnCompleted { turn, result });
                    if inbox.gone {
                        break;
                    }
                }
                Op::AutoPlan { task } => {
                    self.generate_plan(task).await;
                }
                Op::PlanDecision { number, .. } => self.emit(Event::Error {
                    message: format!(
                        "no plan step is waiting for a decision (step {number}); nothing was changed"
                    ),
                }),
                Op::PlannerSettings {
                    auto_rollback_on_failure,
                    detect,
                    threshold,
                } => self.planner_settings(auto_rollback_on_failure, detect, threshold),
                Op::Fork { label } => {
                    // The parent's files as the conversation leaves it, for a later switch.
                    let leaving = self.thread_name();
                    self.keeper.leaving_thread(self.turns, &leaving).await;
                    let threads = self.threads();
                    let forked = threads
                        .fork(&self.recorder.thread, self.history.len(), label)
                        .await;
                    match forked {
                        Ok(thread) => {
                            let len = self.history.len();
                            self.recorder.set_thread(thread.id.clone(), len);
                            self.emit(Event::ThreadSwitched { thread });
                        }
                        Err(message) => self.emit(Event::Error { message }),
                    }
                }
                Op::ListThreads => {
                    let threads = self.threads();
                    match threads.list(&self.recorder.thread).await {
                        Ok(threads) => self.emit(Event::ThreadList { threads }),
                        Err(message) => self.emit(Event::Error { message }),
                    }
                }
                Op::SwitchThread { id } => {
                    let leaving = self.thread_name();
                    let threads = self.threads();
                    let switched = threads.switch(&id).await;
                    if self.enter_thread(switched) {
                        self.offer_files(&leaving, false).await;
                    }
                }
                Op::Rollback => {
                    let leaving = self.thread_name();
                    let threads = self.threads();
                    let switched = threads.rollback(&self.recorder.thread).await;
                    if self.enter_thread(switched) {
                        self.offer_files(&leaving, true).await;
                    }
                }
                Op::SetMode { mode, permission } => self.set_mode(mode, permission),
                Op::ShowPlan if self.planner.waiting.is_some() => self.show_task_plan(),
                Op::ApprovePlan { selection } if self.planner.waiting.is_some() => {
                    self.run_plan(selection, &mut inbox).await;
                    if inbox.gone {
                        break;
                    }
                }
                Op::RejectPlan { reason, .. } if self.planner.waiting.is_some() => {
                    self.reject_task_plan(reason).await;
                }
                Op::ShowPlan => {
                    let previews = self.plan.previews();
                    self.emit(Event::Plan {
                        plan: self.plan.plan().cloned(),
                        previews,
                    });
                }
                Op::ApprovePlan { selection } => self.decide_plan(selection, None, true).await,
                Op::RejectPlan { selection, reason } => {
                    self.decide_plan(selection, reason, false).await;
                }
                Op::Goal { command } => self.goal(command).await,
                Op::ListCheckpoints { limit } => {
                    match self.keeper.list(limit.unwrap_or(DEFAULT_LIST)).await {
                        Ok(checkpoints) => self.emit(Event::CheckpointList { checkpoints }),
                        Err(message) => self.emit(Event::Error { message }),
                    }
                }
                Op::RestoreCheckpoint { id } => {
                    let restored = self.keeper.restore(id).await;
                    self.restored(id, restored);
                }
                Op::Undo => match self.keeper.undo().await {
                    Ok((turn, report)) => {
                        self.emit(Event::Notice {
                            message: format!("undid the file changes of turn {turn}"),
                        });
                        self.restored(0, Ok(report));
                    }
                    Err(message) => self.emit(Event::Error { message }),
                },
                Op::SetTrust { on } => {
                    self.trust = on;
                    self.emit(Event::TrustChanged { on });
                }
                Op::ListGrants => {
                    let grants = self.gate.list().await;
                    self.emit(Event::GrantList { grants });
                }
                Op::RevokeGrant { number } => match self.gate.revoke(number).await {
                    Ok(message) => self.emit(Event::Notice { message }),
                    Err(message) => self.emit(Event::Error { message }),
                },
                // Nothing is running: nothing to interrupt, no question open.
                Op::Interrupt | Op::Approval { .. } => {}
                Op::Shutdown => break,
            }
        }
        self.emit(Event::SessionEnded);
    }

    async fn run_turn(&mut self, text: String, cancel: CancellationToken) -> FinalResult {
        self.turns += 1;
        self.current_turn
            .store(self.turns, std::sync::atomic::Ordering::Relaxed);
        let mut context = prompt::mode_line(self.mode);
        let mut reported = Vec::new();
        if let Some((report, ids)) = self.plan.take_report() {
            context = format!("{report}\n\n{context}");
            reported = ids;
        }
        if !self.notes.is_empty() {
            context = format!(
                "{}\n\n{context}",
                std::mem::take(&mut self.notes).join("\n")
            );
        }
        let task = text.clone();
        self.record(Message::User {
            text,
            context: Some(context),
        })
        .await;
        // Announced once the prompt is stored: a turn shown as started survives a crash.
        self.emit(Event::TurnStarted {
            turn: self.turns,
            mode: self.mode,
            complexity: Some(crate::complexity::classify(&task)),
        });
        self.plan.reported(&reported).await;
        let mut turn = TurnState::new();
        let mut nudges = 0u32;
        let mut corrections = crate::correction::Corrections::new(&task);
        loop {
            if let Some(status) = self.limit_hit(&turn) {
                return turn.finish(status, Some(status_message(&self.options.limits, &turn)));
            }
            turn.rounds += 1;
            // Borrowed: a long history is not copied for every model call.
            let request = ModelRequest {
                system: Cow::Borrowed(&self.system),
                messages: Cow::Borrowed(&self.history),
                tools: Cow::Borrowed(&self.tool_specs),
                max_output_tokens: self.options.limits.max_output_tokens,
            };
            let events = self.events.clone();
            let mut on_update = move |update: StreamUpdate| {
                let event = match update {
                    StreamUpdate::Text(text) => Event::TextDelta { text },
                    StreamUpdate::Thinking(text) => Event::ThinkingDelta { text },
                    StreamUpdate::Retry(notice) => Event::Retry(notice),
                    StreamUpdate::ToolCallBegin { .. } | StreamUpdate::ToolCallArgs { .. } => {
                        return;
                    }
                };
                let _ = events.send(event);
            };
            let client = Arc::clone(&self.options.client);
            let reply = tokio::select! {
                reply = client.stream(&request, &mut on_update) => reply,
                () = cancel.cancelled() => Err(ModelError::Cancelled),
            };
            let response = match reply {
                Ok(response) => response,
                Err(ModelError::Cancelled) => {
                    return turn.finish(TurnStatus::Cancelled, None);
                }
                Err(err) => {
                    let message = err.to_string();
                    self.emit(Event::Error {
                        message: message.clone(),
                    });
                    turn.failure = Some(crate::failure::kind(&err));
                    return turn.finish(TurnStatus::Failed, Some(message));
                }
            };
            let cost = atto_llm::cost_usd(&response.model, &response.usage);
            self.emit(Event::Usage {
                model: response.model.clone(),
                usage: response.usage,
                cost_usd: cost,
            });
            turn.add_usage(&response.usage, cost);
            let calls: Vec<_> = response
                .parts
                .iter()
                .filter_map(|part| match part {
                    AssistantPart::ToolCall(call) => Some(call.clone()),
                    _ => None,
                })
                .collect();
            let text: String = response
                .parts
                .iter()
                .filter_map(|part| match part {
                    AssistantPart::Text { text } => Some(text.as_str()),
                    _ => None,
                })
                .collect();
            if !text.is_empty() {
                turn.text.clone_from(&text);
            }
            self.record(Message::Assistant {
                parts: response.parts,
            })
            .await;
            if calls.is_empty() {
                if response.stop == atto_protocol::StopReason::MaxTokens {
                    self.emit(Event::Warning {
                        message: "the model's reply was cut off by its output token limit"
                            .to_owned(),
                    });
                }
                // An active goal the model has not reported on keeps the work going.
                let goal = self.work.lock().await.active_goal();
                if let Some(objective) = goal.filter(|_| nudges < MAX_GOAL_NUDGES) {
                    nudges += 1;
                    self.emit(Event::Notice {
                        message: format!(
                            "goal \"{objective}\" is still active: continuing ({nudges}/\
                             {MAX_GOAL_NUDGES}); /goal pause stops this"
                        ),
                    });
                    self.record(Message::User {
                        text: GOAL_CONTINUE.to_owned(),
                        context: Some(format!(
                            "[atto] The session goal \"{objective}\" is still active. Keep working \
                             toward it. When it is met, call goal_update with status complete; if \
                             you cannot go on without the user, call goal_update with status \
                             blocked and say why."
                        )),
                    })
                    .await;
                    continue;
                }
                return turn.finish(TurnStatus::Completed, None);
            }
            let emit_events = self.events.clone();
            let emit = move |event: Event| {
                let _ = emit_events.send(event);
            };
            let sandbox = self.command_sandbox();
            let mut orchestrator = Orchestrator {
                gate: &mut self.gate,
                recorder: &mut self.recorder,
                tools: &self.options.tools,
                workspace: &self.options.workspace,
                max_output_bytes: self.options.limits.max_tool_output_bytes,
                emit: &emit,
                trust: self.trust,
                sandbox,
                mode: self.mode,
                plan: &mut self.plan,
                task: &task,
                reason: &text,
                checkpoints: &mut self.keeper,
                turn: self.turns,
                correction: &mut corrections,
            };
            let outcomes = orchestrator
                .run_calls(&calls, &response.stop, &cancel)
                .await;
            for outcome in outcomes {
                turn.files_changed.extend(outcome.changed_paths);
                // The orchestrator committed each result before reporting it finished.
                self.history.push(Message::ToolResult(outcome.result));
            }
            if cancel.is_cancelled() {
                return turn.finish(TurnStatus::Cancelled, None);
            }
        }
    }

    /// The OS sandbox for commands: none in yolo.
    fn command_sandbox(&self) -> Option<Arc<atto_tools::Sandbox>> {
        match self.gate.permission.mode {
            PermissionMode::Yolo => None,
            _ => self.options.sandbox.clone(),
        }
    }

    /// Appends a message to the history after committing it to the store.
    async fn record(&mut self, message: Message) {
        self.recorder.persist(&message).await;
        self.history.push(message);
    }

    /// A session killed while tools ran ends with tool calls that have no result. Every
    /// provider rejects such a history, so each gets a result saying what is known: the
    /// call may or may not have run. Only the tail can be incomplete (messages are
    /// appended in order), so the results are appended there.
    async fn repair_interrupted_calls(&mut self) {
        let Some(last_assistant) = self
            .history
            .iter()
            .rposition(|m| matches!(m, Message::Assistant { .. }))
        else {
            return;
        };
        let answered: std::collections::HashSet<String> = self.history[last_assistant..]
            .iter()
            .filter_map(|m| match m {
                Message::ToolResult(r) => Some(r.call_id.clone()),
                _ => None,
            })
            .collect();
        let missing: Vec<(String, String)> = match &self.history[last_assistant] {
            Message::Assistant { parts } => parts
                .iter()
                .filter_map(|p| match p {
                    AssistantPart::ToolCall(c) if !answered.contains(&c.id) => {
                        Some((c.id.clone(), c.name.clone()))
                    }
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        };
        for (call_id, name) in missing {
            let result = atto_protocol::ToolResult {
                call_id,
                name,
                content: "atto stopped before this call finished (the process ended); it may \
                          or may not have run. Check its effects before relying on them."
                    .to_owned(),
                is_error: true,
            };
            self.record(Message::ToolResult(result)).await;
        }
    }

    /// Thread operations on this session's store.
    fn threads(&self) -> Threads<'_> {
        Threads {
            store: self.recorder.store.as_ref(),
            session: &self.options.session_id,
        }
    }

    /// Records a new session in the store, once, before its first message.
    async fn register(&mut self) {
        let Some(store) = self.recorder.store.clone() else {
            return;
        };
        if !self.is_new {
            return;
        }
        self.is_new = false;
        let info = self.options.client.info();
        let new = NewSession {
            id: self.options.session_id.clone(),
            workspace: self.options.workspace.display().to_string(),
            provider: Some(info.provider.clone()),
            model: Some(info.model.clone()),
        };
        if let Err(err) = store.create_session(new).await {
            self.recorder.failed(&err.to_string());
        }
    }

    fn limit_hit(&self, turn: &TurnState) -> Option<TurnStatus> {
        let limits = &self.options.limits;
        let tokens = turn.usage.input_tokens
            + turn.usage.output_tokens
            + turn.usage.cache_read_tokens
            + turn.usage.cache_write_tokens;
        let over_rounds = turn.rounds >= limits.max_rounds;
        let over_tokens = limits.max_tokens.is_some_and(|max| tokens >= max);
        let over_time = limits
            .max_duration
            .is_some_and(|max| turn.started.elapsed() >= max);
        (over_rounds || over_tokens || over_time).then_some(TurnStatus::LimitReached)
    }
}

fn status_message(limits: &Limits, turn: &TurnState) -> String {
    if turn.rounds >= limits.max_rounds {
        format!(
            "stopped after {} model calls (the round limit); the task may be unfinished. \
             Continue with a new prompt or raise limits.max_rounds.",
            turn.rounds
        )
    } else if limits
        .max_duration
        .is_some_and(|max| turn.started.elapsed() >= max)
    {
        "stopped at the time limit; the task may be unfinished. Raise limits.max_duration_secs \
         to allow longer turns."
            .to_owned()
    } else {
        "stopped at the token limit; the task may be unfinished. Raise limits.max_tokens to \
         allow more."
            .to_owned()
    }
}

/// Running totals of one turn.
struct TurnState {
    started: Instant,
    rounds: u32,
    usage: Usage,
    cost: Option<f64>,
    files_changed: BTreeSet<String>,
    text: String,
    failure: Option<FailureKind>,
}

impl TurnState {
    fn new() -> Self {
        Self {
            started: Instant::now(),
            rounds: 0,
            usage: Usage::default(),
            cost: Some(0.0),
            files_changed: BTreeSet::new(),
            text: String::new(),
            failure: None,
        }
    }

    fn add_usage(&mut self, usage: &Usage, cost: Option<f64>) {
        self.usage.input_tokens += usage.input_tokens;
        self.usage.output_tokens += usage.output_tokens;
        self.usage.cache_read_tokens += usage.cache_read_tokens;
        self.usage.cache_write_tokens += usage.cache_write_tokens;
        self.cost = match (self.cost, cost) {
            (Some(a), Some(b)) => Some(a + b),
            _ => None,
        };
    }

    fn finish(&mut self, status: TurnStatus, error: Option<String>) -> FinalResult {
        FinalResult {
            status,
            rounds: self.rounds,
            usage: self.usage,
            cost_usd: if self.rounds == 0 { None } else { self.cost },
            files_changed: std::mem::take(&mut self.files_changed)
                .into_iter()
                .collect(),
            text: std::mem::take(&mut self.text),
            error,
            failure: self.failure,
            duration_ms: duration_ms(self.started.elapsed()),
        }
    }
}

/// Turns in a history: one per prompt.
fn count_turns(history: &[Message]) -> u32 {
    let n = history
        .iter()
        .filter(|m| matches!(m, Message::User { .. }))
        .count();
    u32::try_from(n).unwrap_or(u32::MAX)
}

fn duration_ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}
