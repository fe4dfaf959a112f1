//! One model turn: the prompt recorded with its context, then model calls and tool calls
//! in rounds until the model stops, a limit is hit or the turn is cancelled; an active goal
//! keeps the turn going a bounded number of times. Running totals and the closing
//! `FinalResult` are here too. Interrupts and approvals reach it through `drive`.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::ops::ControlFlow;
use std::sync::Arc;
use std::time::{Duration, Instant};

use atto_llm::{ModelError, ModelRequest, StreamUpdate};
use atto_protocol::{AssistantPart, Event, FailureKind, FinalResult, Message, TurnStatus, Usage};
use atto_tools::CancellationToken;

use super::Session;
use super::handlers::GoalRoom;
use crate::correction::Corrections;
use crate::learning;
use crate::limits::Limits;
use crate::orchestrator::Orchestrator;
use crate::prompt;

/// How many times one prompt's work is continued toward an active goal.
const MAX_GOAL_NUDGES: u32 = 10;

/// What a turn stopped by its goal's token budget says.
const GOAL_SPENT: &str = "stopped: the goal's token budget is spent (budget_limited). Raise it \
     with /goal budget N, then /goal resume to continue.";

/// The user text of the message that tells a subagent to wrap up (atto's, not the user's).
const WRAP_UP: &str = "(wrap up now)";

/// The answer a subagent's wrap-up call is sized for: a closure report, not more work.
const WRAP_UP_ANSWER_TOKENS: u64 = 2_048;

/// The user text of a message that continues toward the goal (atto's, not the user's).
const GOAL_CONTINUE: &str = "(continue toward the goal)";

/// Whether a user message's text is one atto writes itself to keep a turn going (a
/// wrap-up or a goal's continuation), not a prompt the user typed.
pub(super) fn written_by_atto(text: &str) -> bool {
    text == WRAP_UP || text == GOAL_CONTINUE
}

impl Session {
    /// Runs a turn for `text`. The self-improvement tallies are lent to the turn's
    /// self-correction and come back when it ends, however it ends.
    pub(super) async fn run_turn(
        &mut self,
        text: String,
        cancel: CancellationToken,
    ) -> FinalResult {
        let mut corrections = Corrections::new(&text, std::mem::take(&mut self.tally));
        let result = self.turn_loop(text, cancel, &mut corrections).await;
        self.tally = corrections.into_tally();
        result
    }

    async fn turn_loop(
        &mut self,
        text: String,
        cancel: CancellationToken,
        corrections: &mut Corrections,
    ) -> FinalResult {
        let task = self.open_turn(text).await;
        let mut turn = TurnState::new();
        let mut nudges = 0u32;
        // Whether the model called a tool (a goal update included) since the turn began or
        // since the last continuation: only work in progress is continued.
        let mut progressed = false;
        // GoalsAndTasks toward an active goal stops the moment its budget is spent, between any two
        // model calls, and no call may produce more than the budget has left.
        let goal_work = matches!(
            self.goal_room().await,
            GoalRoom::Unbounded | GoalRoom::Room(_)
        );
        // A context overflow compacts and retries once per model call, not again.
        let mut overflow_compacted = false;
        loop {
            let max_output_tokens = match self.next_round(&mut turn, goal_work, &cancel).await {
                ControlFlow::Continue(max) => max,
                ControlFlow::Break(stopped) => return stopped,
            };
            let response = match self.call_model(max_output_tokens, &cancel).await {
                Ok(response) => response,
                Err(ModelError::ContextTooLong { .. })
                    if !overflow_compacted
                        && self
                            .compact(atto_protocol::CompactTrigger::Overflow, None, &cancel)
                            .await =>
                {
                    overflow_compacted = true;
                    turn.rounds -= 1;
                    continue;
                }
                Err(err) => return self.model_failed(err, &mut turn).await,
            };
            overflow_compacted = false;
            let (calls, text) = self.count_reply(&response, &mut turn);
            self.charge_call(&response.usage).await;
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
                if self.continue_goal(progressed, &mut nudges).await {
                    progressed = false;
                    continue;
                }
                return turn.finish(TurnStatus::Completed, None);
            }
            progressed = true;
            let round = Round {
                task: &task,
                reason: &text,
                stop: &response.stop,
                cancel: &cancel,
            };
            self.run_tool_calls(&calls, round, corrections, &mut turn)
                .await;
            if cancel.is_cancelled() {
                return turn.finish(TurnStatus::Cancelled, None);
            }
        }
    }

    /// Opens a turn for the prompt `text`: counted, its model chosen, its context gathered
    /// (the goal, recalled learnings, the start map), recorded and announced. Returns the
    /// prompt, the task the turn's calls are for.
    async fn open_turn(&mut self, text: String) -> String {
        self.turns += 1;
        self.update_authority();
        self.current_turn
            .store(self.turns, std::sync::atomic::Ordering::Relaxed);
        let complexity = atto_planner::complexity::classify(&text);
        // Chosen first, so the prompt's turn facts name the model its requests go to.
        let route = self.route_turn(complexity.tier);
        // Recalled learnings join the prompt's appended context, after the cached prefix.
        let recall = self.learnings.recall(&text).await;
        let (mut context, review_ids) = self.prompt_context();
        // The goal is in the prompt from the first request, not only in continuations.
        if let Some(objective) = self.work.lock().await.active_goal() {
            context = format!("{}\n{context}", prompt::goal_line(&objective));
        }
        if let Some(recall) = &recall {
            context = format!("{}\n\n{context}", recall.notes);
        }
        if let Some(map) = self.start_map(&text).await {
            context = format!("{map}\n\n{context}");
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
            complexity: Some(complexity),
            model: Some(self.options.client.info().model.clone()),
            route,
        });
        if let Some(recall) = recall {
            self.emit(Event::LearningsUsed {
                turn: self.turns,
                learnings: recall.learnings.iter().map(learning::reference).collect(),
            });
        }
        self.plan.reported(&review_ids).await;
        task
    }

    /// Before each model call: what ends the turn (a store that failed, a limit, the goal's
    /// budget spent), a subagent's wrap-up, the round counted, and compaction when due.
    /// Continues with the output tokens the call may produce.
    async fn next_round(
        &mut self,
        turn: &mut TurnState,
        goal_work: bool,
        cancel: &CancellationToken,
    ) -> ControlFlow<FinalResult, u32> {
        if let Some(stopped) = self.store_failed(turn) {
            return ControlFlow::Break(stopped);
        }
        if let Some(status) = limit_hit(&self.options.limits, turn) {
            return ControlFlow::Break(
                turn.finish(status, Some(status_message(&self.options.limits, turn))),
            );
        }
        let room = self.goal_room().await;
        if goal_work && room == GoalRoom::Spent {
            return ControlFlow::Break(
                turn.finish(TurnStatus::LimitReached, Some(GOAL_SPENT.to_owned())),
            );
        }
        let max_output_tokens = match room {
            GoalRoom::Room(left) if goal_work => self
                .options
                .limits
                .max_output_tokens
                .min(u32::try_from(left).unwrap_or(u32::MAX)),
            _ => self.options.limits.max_output_tokens,
        };
        if let Some(note) = self.wrap_up_due(turn) {
            self.emit(Event::Notice {
                message: note.clone(),
            });
            self.record(Message::User {
                text: WRAP_UP.to_owned(),
                context: Some(format!("[atto] {note}")),
            })
            .await;
        }
        turn.rounds += 1;
        // Tools that arrived first: they count towards the request compaction sizes.
        self.adopt_external_tools();
        self.compact_if_due(cancel).await;
        ControlFlow::Continue(max_output_tokens)
    }

    /// One model call, its text and thinking streamed to the front end as they arrive.
    async fn call_model(
        &self,
        max_output_tokens: u32,
        cancel: &CancellationToken,
    ) -> Result<atto_llm::ModelResponse, ModelError> {
        // Borrowed: a long history is not copied for every model call.
        let request = ModelRequest {
            system: Cow::Borrowed(&self.system),
            messages: Cow::Borrowed(&self.history),
            tools: Cow::Borrowed(&self.tool_specs),
            max_output_tokens,
            effort: self.turn_effort.or(self.effort),
            temperature: None,
        };
        let events = self.events.clone();
        let mut on_update = move |update: StreamUpdate| {
            let event = match update {
                StreamUpdate::Text(text) => Event::TextDelta { text },
                StreamUpdate::Thinking(text) => Event::ThinkingDelta { text },
                StreamUpdate::Retry(notice) => Event::Retry(notice),
                StreamUpdate::ToolCallBegin { .. }
                | StreamUpdate::ToolCallArgs { .. }
                | StreamUpdate::FailedAttempt => {
                    return;
                }
            };
            let _ = events.send(event);
        };
        let client = Arc::clone(&self.options.client);
        tokio::select! {
            reply = client.stream(&request, &mut on_update) => reply,
            () = cancel.cancelled() => Err(ModelError::Cancelled),
        }
    }

    /// Ends the turn on a model call that failed: cancelled, stopped by a budget, or
    /// failed (reported, with the kind of failure for the exit code).
    async fn model_failed(&mut self, err: ModelError, turn: &mut TurnState) -> FinalResult {
        match err {
            ModelError::Cancelled => turn.finish(TurnStatus::Cancelled, None),
            // A budget stops the work like any limit: nothing was sent.
            ModelError::OverBudget(message) => {
                self.emit(Event::Warning {
                    message: format!("stopped: {message}"),
                });
                turn.finish(TurnStatus::LimitReached, Some(message))
            }
            err => {
                let message = err.to_string();
                self.emit(Event::Error {
                    message: message.clone(),
                });
                if crate::model_failure::is_usage_limit(&err) {
                    self.usage_limit_hit().await;
                }
                turn.failure = Some(crate::model_failure::kind(&err));
                turn.finish(TurnStatus::Failed, Some(message))
            }
        }
    }

    /// An active goal the model has not reported on keeps the work going, while the model
    /// is making progress: a reply that did nothing since the last continuation ends the
    /// turn instead of spending the budget on nothing. Whether the turn goes on.
    async fn continue_goal(&mut self, progressed: bool, nudges: &mut u32) -> bool {
        let goal = self.work.lock().await.active_goal();
        let Some(objective) = goal.filter(|_| progressed && *nudges < MAX_GOAL_NUDGES) else {
            return false;
        };
        *nudges += 1;
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
        true
    }

    /// Runs one reply's tool calls through the orchestrator (the gate, approvals,
    /// checkpoints) and adds their results to the history and the turn.
    async fn run_tool_calls(
        &mut self,
        calls: &[atto_protocol::ToolCall],
        round: Round<'_>,
        corrections: &mut Corrections,
        turn: &mut TurnState,
    ) {
        let names: Vec<&str> = calls.iter().map(|c| c.name.as_str()).collect();
        self.resolve_external_tools(&names, round.cancel).await;
        let emit_events = self.events.clone();
        let emit = move |event: Event| {
            let _ = emit_events.send(event);
        };
        let sandbox = self.command_sandbox();
        let focus = self.focus_of(self.position.scope.as_deref());
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
            task: round.task,
            reason: round.reason,
            checkpoints: &mut self.keeper,
            turn: self.turns,
            correction: corrections,
            scope: self
                .position
                .scope
                .as_deref()
                .map(crate::orchestrator::Scope::Subagent),
            focus,
        };
        let outcomes = orchestrator
            .run_calls(calls, round.stop, round.cancel)
            .await;
        for outcome in outcomes {
            if let Some(workaround) = &outcome.workaround {
                self.learnings.workaround(workaround).await;
            }
            self.note_ending(&outcome);
            self.note_edited(&outcome.changed_paths);
            turn.files_changed.extend(outcome.changed_paths);
            // The orchestrator committed each result before reporting it finished.
            self.history.push(Message::ToolResult(outcome.result));
        }
    }

    /// For a subagent near its limit, once a turn: what to tell it so it stops starting
    /// new work and writes its report (30 s before its time is up, at 90% of its tokens,
    /// or when what is left holds its next call only once).
    fn wrap_up_due(&self, turn: &mut TurnState) -> Option<String> {
        if turn.wrapped_up || self.position.depth == 0 {
            return None;
        }
        let limits = &self.options.limits;
        let time = limits
            .max_duration
            .zip(limits.wrap_up_before)
            .and_then(|(max, lead)| {
                let left = max.checked_sub(turn.started.elapsed())?;
                (left <= lead).then(|| format!("about {} s", left.as_secs().max(1)))
            });
        let (used, limit) = self.tree.budget.spent(&self.position.node);
        let tokens = limit
            .filter(|&limit| {
                used.saturating_mul(10) >= limit.saturating_mul(9) || self.one_call_left()
            })
            .map(|limit| format!("{} of {limit} tokens left", limit.saturating_sub(used)));
        let left = match (time, tokens) {
            (Some(t), Some(k)) => format!("{t} and {k}"),
            (Some(one), None) | (None, Some(one)) => one,
            (None, None) => return None,
        };
        turn.wrapped_up = true;
        Some(format!(
            "Wrap up: you have {left} before you are stopped. Start nothing new; finish what \
             you are doing and write your closure report now."
        ))
    }

    /// Whether what is left of this subagent's budget holds the next call only once: a
    /// call is its context plus a bounded answer, and the budget refuses a call that
    /// could cross it. So the wrap-up goes out with this call, or it could not be sent at
    /// all, however far from 90 % the budget still is.
    fn one_call_left(&self) -> bool {
        let Some(left) = self.tree.budget.remaining(&self.position.node) else {
            return false;
        };
        let request = ModelRequest {
            system: Cow::Borrowed(&self.system),
            messages: Cow::Borrowed(&self.history),
            tools: Cow::Borrowed(&self.tool_specs),
            max_output_tokens: self.options.limits.max_output_tokens,
            effort: None,
            temperature: None,
        };
        let answer = u64::from(self.options.limits.max_output_tokens).min(WRAP_UP_ANSWER_TOKENS);
        let call = self
            .tree
            .budget
            .next_input(&self.position.node, request.bytes())
            .saturating_add(answer);
        left < call.saturating_mul(2)
    }

    /// Stops the turn when the database could not record its history or a decision:
    /// atto fails closed rather than act without its records (retryable).
    fn store_failed(&self, turn: &mut TurnState) -> Option<FinalResult> {
        let why = self
            .gate
            .audit
            .failure()
            .or_else(|| self.recorder.failure())?;
        let message = format!(
            "stopped: the session database could not record this session ({why}), and atto \
             does not act without its history and audit log. Nothing more was run; try again \
             when the database is available."
        );
        self.emit(Event::Error {
            message: message.clone(),
        });
        turn.failure = Some(atto_protocol::FailureKind::Transient);
        Some(turn.finish(TurnStatus::Failed, Some(message)))
    }
}

/// The limit `turn` has reached, if any.
pub(super) fn limit_hit(limits: &Limits, turn: &TurnState) -> Option<TurnStatus> {
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

/// What a turn stopped by a limit says.
pub(super) fn status_message(limits: &Limits, turn: &TurnState) -> String {
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

/// What one round's tool calls answer to: the turn's prompt, the reply that made them (its
/// text and why it stopped), and the turn's cancellation.
struct Round<'a> {
    task: &'a str,
    reason: &'a str,
    stop: &'a atto_protocol::StopReason,
    cancel: &'a CancellationToken,
}

/// Running totals of one turn.
pub(super) struct TurnState {
    started: Instant,
    /// A subagent was told to wrap up.
    wrapped_up: bool,
    pub rounds: u32,
    usage: Usage,
    /// Replies counted: with none, the cost is unknown rather than zero.
    replies: u32,
    cost: Option<f64>,
    pub files_changed: BTreeSet<String>,
    pub text: String,
    pub failure: Option<FailureKind>,
}

impl TurnState {
    pub(super) fn new() -> Self {
        Self {
            started: Instant::now(),
            wrapped_up: false,
            rounds: 0,
            usage: Usage::default(),
            replies: 0,
            cost: Some(0.0),
            files_changed: BTreeSet::new(),
            text: String::new(),
            failure: None,
        }
    }

    pub(super) fn add_usage(&mut self, usage: &Usage, cost: Option<f64>) {
        atto_llm::add_usage(&mut self.usage, usage);
        self.replies += 1;
        self.cost = match (self.cost, cost) {
            (Some(a), Some(b)) => Some(a + b),
            _ => None,
        };
    }

    pub(super) fn finish(&mut self, status: TurnStatus, error: Option<String>) -> FinalResult {
        FinalResult {
            status,
            rounds: self.rounds,
            usage: self.usage,
            cost_usd: if self.replies == 0 { None } else { self.cost },
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

fn duration_ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// At most this many of the session's changed files, the most recent, join a focus.
const FOCUS_EDITED: usize = 32;

impl Session {
    /// What the session is working on, for tools that rank by it: the files the calls may
    /// change (a plan step's or a subagent's) and the files changed so far. The prompt is
    /// not in it: it shaped the first prompt's map, and the model names words it wants
    /// raised in `codebase_overview`'s own `focus`.
    pub(super) fn focus_of(&self, scope: Option<&[String]>) -> String {
        let mut focus = String::new();
        for path in scope.unwrap_or_default().iter().chain(self.edited.iter()) {
            if !focus.is_empty() {
                focus.push('\n');
            }
            focus.push_str(path);
        }
        focus
    }

    /// Remembers `paths` as the latest files changed, keeping the most recent
    /// [`FOCUS_EDITED`].
    pub(super) fn note_edited(&mut self, paths: &[String]) {
        for path in paths {
            self.edited.retain(|p| p != path);
            self.edited.push_back(path.clone());
        }
        while self.edited.len() > FOCUS_EDITED {
            self.edited.pop_front();
        }
    }

    /// The context the next prompt carries (a batch of plan steps takes it once): the mode
    /// line, the notes and the plan-mode report, and the ids of the changes reported.
    pub(super) fn prompt_context(&mut self) -> (String, Vec<String>) {
        // The mode line last: small models follow what they read last, and a fact block
        // there drew a 135M model away from the instruction (the real-server tests).
        let mut context = format!(
            "{}\n{}",
            prompt::turn_meta(
                &atto_protocol::time::utc_date(std::time::SystemTime::now()),
                &self.options.client.info().model
            ),
            prompt::mode_line(self.mode),
        );
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
        (context, reported)
    }

    /// Counts a complete reply into `turn` (usage and cost, announced; its text) and returns
    /// the tool calls it makes, in order, with its text.
    pub(super) fn count_reply(
        &mut self,
        response: &atto_llm::ModelResponse,
        turn: &mut TurnState,
    ) -> (Vec<atto_protocol::ToolCall>, String) {
        // A reply that reported no usage has an unknown cost, not a free one.
        let cost = if response.usage_reported {
            atto_llm::cost_usd(&response.model, &response.usage)
        } else {
            None
        };
        self.emit(Event::Usage {
            model: response.model.clone(),
            usage: response.usage,
            cost_usd: cost,
        });
        turn.add_usage(&response.usage, cost);
        if response.usage_reported {
            self.models.charge(&response.model, &response.usage, cost);
            let u = &response.usage;
            self.last_input_tokens =
                Some(u.input_tokens + u.cache_read_tokens + u.cache_write_tokens);
        }
        self.emit(Event::ContextReport {
            context: self.context_use(),
            asked: false,
        });
        let mut text = String::new();
        let mut calls = Vec::new();
        for part in &response.parts {
            match part {
                AssistantPart::ToolCall(call) => calls.push(call.clone()),
                AssistantPart::Text { text: t } => text.push_str(t),
                _ => {}
            }
        }
        if !text.is_empty() {
            turn.text.clone_from(&text);
        }
        (calls, text)
    }
}
