//! Running a batch of plan steps side by side, in lockstep rounds. Each step is a worker
//! with its own copy of the conversation, its own token budget and its own report. A round
//! sends the model requests of every unfinished worker at once, then runs their tool calls
//! one worker after another through the orchestrator every turn uses (gate, approvals,
//! sandbox, agent mode, checkpoints, self-correction), so every safety mechanism stays
//! single-threaded. When the batch ends, each worker's messages join the history and the
//! store in step order.
//!
//! A failed step rolls back only the files it changed: those its file tools reported, and
//! those a `bash` call changed, found by comparing snapshots around the worker's calls
//! (nothing else runs between them).
//!
//! Text deltas of workers are not streamed: several at once would interleave. Which steps
//! form a batch is `planner::execute::batch`; what their outcomes mean for the plan is
//! `planning`.

use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use atto_llm::{ModelError, ModelRequest, ModelResponse, StreamUpdate};
use atto_protocol::{Event, FinalResult, Message, StepStatus, StopReason, TaskPlan, TurnStatus};
use atto_tools::CancellationToken;

use super::Session;
use super::drive::{self, Inbox};
use super::turn::{TurnState, limit_hit, status_message};
use crate::correction::Corrections;
use crate::correction::diagnosis::Tally;
use crate::limits::Limits;
use crate::orchestrator::Orchestrator;
use crate::recorder::Recorder;
use atto_planner::plan::{execute, report};

/// One step of a batch.
pub(super) struct Worker {
    /// The step's index in the plan.
    pub index: usize,
    /// The step's number, for messages.
    number: u32,
    /// The turn the step runs as.
    pub turn: u32,
    /// The step's instruction: the task its calls are for.
    task: String,
    /// The history as the batch started, then this step's own messages from `own` on.
    messages: Vec<Message>,
    own: usize,
    /// The session's limits with the step's token budget.
    limits: Limits,
    state: TurnState,
    corrections: Corrections,
    /// The files it declared: all it may change while its siblings run.
    scope: Vec<String>,
    /// What its last `plan_step_result` call reported.
    pub report: Option<report::StepReport>,
    /// How its turn ended, once it has.
    pub result: Option<FinalResult>,
}

impl Session {
    /// Runs the steps at `batch` (indexes into `plan`, in number order) together, from one
    /// checkpoint; returns the ended workers in step order, their messages recorded.
    pub(super) async fn run_batch(
        &mut self,
        plan: &mut TaskPlan,
        batch: &[usize],
        inbox: &mut Inbox,
    ) -> Vec<Worker> {
        let numbers: Vec<u32> = batch.iter().map(|&i| plan.steps[i].number).collect();
        let checkpoint = self.keeper.before_batch(self.turns + 1, &numbers).await;
        for &i in batch {
            plan.steps[i].status = StepStatus::InProgress;
            plan.steps[i].checkpoint = checkpoint;
        }
        self.planner.save(plan).await;
        let (context, review_ids) = self.prompt_context();
        let mut workers = Vec::with_capacity(batch.len());
        for &i in batch {
            let worker = self.start_step(plan, i, batch, &context, checkpoint);
            workers.push(worker);
        }
        self.plan.reported(&review_ids).await;
        self.tool_specs
            .push(report::spec(&self.planner.step_report));
        let cancel = CancellationToken::new();
        let approvals = self.approvals.clone();
        let deadline = self.options.limits.max_duration;
        let rounds = self.run_rounds(&mut workers, &cancel);
        let ((), timed_out) = drive::drive(inbox, &approvals, deadline, &cancel, rounds).await;
        // Not `pop`: external tools may have been appended meanwhile.
        self.tool_specs.retain(|s| s.name != report::NAME);
        self.current_turn.store(self.turns, Ordering::Relaxed);
        for worker in &mut workers {
            let result = worker
                .result
                .get_or_insert_with(|| worker.state.finish(TurnStatus::Cancelled, None));
            if timed_out && result.status == TurnStatus::Cancelled {
                result.status = TurnStatus::LimitReached;
                result.error = Some(drive::TIMED_OUT.to_owned());
            }
            // Each step's block in step order keeps the conversation valid for every
            // provider and for a resumed session.
            for message in worker.messages.drain(worker.own..) {
                self.record(message).await;
            }
        }
        workers
    }

    /// Starts step `i` of the batch as a worker: its own turn, its prompt over a copy of
    /// the history, its token budget, announced.
    fn start_step(
        &mut self,
        plan: &TaskPlan,
        i: usize,
        batch: &[usize],
        context: &str,
        checkpoint: Option<u32>,
    ) -> Worker {
        self.turns += 1;
        let step = &plan.steps[i];
        let task = execute::batch_step_prompt(plan, i, batch);
        let mut messages = self.history.clone();
        let own = messages.len();
        messages.push(Message::User {
            text: task.clone(),
            context: Some(context.to_owned()),
        });
        let mut limits = self.options.limits.clone();
        let budget = step.token_budget;
        limits.max_tokens = Some(limits.max_tokens.map_or(budget, |max| max.min(budget)));
        self.emit(Event::PlanStepStarted {
            number: step.number,
            description: step.description.clone(),
            checkpoint,
        });
        self.emit(Event::TurnStarted {
            turn: self.turns,
            mode: self.mode,
            complexity: Some(atto_planner::complexity::classify(&task)),
            model: Some(self.options.client.info().model.clone()),
            route: None,
        });
        let scope = execute::step_scope(plan, i, &self.options.workspace).unwrap_or_default();
        Worker {
            scope,
            index: i,
            number: step.number,
            turn: self.turns,
            corrections: Corrections::new(&task, Tally::default()),
            task,
            messages,
            own,
            limits,
            state: TurnState::new(),
            report: None,
            result: None,
        }
    }

    /// Rounds until every worker has ended: all requests at once, then each worker's calls.
    async fn run_rounds(&mut self, workers: &mut [Worker], cancel: &CancellationToken) {
        loop {
            for worker in workers.iter_mut().filter(|w| w.result.is_none()) {
                if let Some(status) = limit_hit(&worker.limits, &worker.state) {
                    let message = status_message(&worker.limits, &worker.state);
                    worker.result = Some(worker.state.finish(status, Some(message)));
                }
            }
            let mut active: Vec<&mut Worker> =
                workers.iter_mut().filter(|w| w.result.is_none()).collect();
            if active.is_empty() {
                return;
            }
            for worker in &mut active {
                worker.state.rounds += 1;
            }
            let Some(replies) = self.ask_all(&active, cancel).await else {
                for worker in active {
                    worker.result = Some(worker.state.finish(TurnStatus::Cancelled, None));
                }
                return;
            };
            for (worker, reply) in active.into_iter().zip(replies) {
                if cancel.is_cancelled() {
                    // An interrupt during an earlier worker's calls cancels all of them.
                    worker.result = Some(worker.state.finish(TurnStatus::Cancelled, None));
                } else {
                    self.take_reply(worker, reply, cancel).await;
                }
            }
        }
    }

    /// The replies to every active worker's next request, asked concurrently; `None` when
    /// cancelled first.
    async fn ask_all(
        &self,
        active: &[&mut Worker],
        cancel: &CancellationToken,
    ) -> Option<Vec<Result<ModelResponse, ModelError>>> {
        let client = Arc::clone(&self.options.client);
        let requests: Vec<ModelRequest<'_>> = active
            .iter()
            .map(|worker| ModelRequest {
                system: Cow::Borrowed(&self.system),
                messages: Cow::Borrowed(&worker.messages),
                tools: Cow::Borrowed(&self.tool_specs),
                max_output_tokens: self.options.limits.max_output_tokens,
                effort: self.effort,
                temperature: None,
            })
            .collect();
        let mut sinks: Vec<_> = active
            .iter()
            .map(|_| {
                let events = self.events.clone();
                move |update: StreamUpdate| {
                    if let StreamUpdate::Retry(notice) = update {
                        let _ = events.send(Event::Retry(notice));
                    }
                }
            })
            .collect();
        let streams = requests
            .iter()
            .zip(sinks.iter_mut())
            .map(|(request, sink)| client.stream(request, sink));
        tokio::select! {
            replies = futures_util::future::join_all(streams) => Some(replies),
            () = cancel.cancelled() => None,
        }
    }

    /// One worker's reply: its usage, its message, and its tool calls run to the end.
    async fn take_reply(
        &mut self,
        worker: &mut Worker,
        reply: Result<ModelResponse, ModelError>,
        cancel: &CancellationToken,
    ) {
        let response = match reply {
            Ok(response) => response,
            Err(ModelError::Cancelled) => {
                worker.result = Some(worker.state.finish(TurnStatus::Cancelled, None));
                return;
            }
            Err(err) => {
                let message = err.to_string();
                self.emit(Event::Error {
                    message: format!("plan step {}: {message}", worker.number),
                });
                worker.state.failure = Some(crate::model_failure::kind(&err));
                worker.result = Some(worker.state.finish(TurnStatus::Failed, Some(message)));
                return;
            }
        };
        let (calls, text) = self.count_reply(&response, &mut worker.state);
        self.charge_call(&response.usage).await;
        worker.messages.push(Message::Assistant {
            parts: response.parts,
        });
        if calls.is_empty() {
            if response.stop == StopReason::MaxTokens {
                self.emit(Event::Warning {
                    message: format!(
                        "plan step {}: the model's reply was cut off by its output token limit",
                        worker.number
                    ),
                });
            }
            worker.result = Some(worker.state.finish(TurnStatus::Completed, None));
            return;
        }
        self.run_step_calls(worker, &calls, &text, &response.stop, cancel)
            .await;
        if let Some(report) = report::take(&self.planner.step_report) {
            worker.report = Some(report);
        }
        if cancel.is_cancelled() {
            worker.result = Some(worker.state.finish(TurnStatus::Cancelled, None));
        }
    }

    /// Runs one reply's tool calls for a step, its results kept for the step's block; what
    /// its commands changed outside the step's files is put back.
    async fn run_step_calls(
        &mut self,
        worker: &mut Worker,
        calls: &[atto_protocol::ToolCall],
        text: &str,
        stop: &StopReason,
        cancel: &CancellationToken,
    ) {
        self.current_turn.store(worker.turn, Ordering::Relaxed);
        // The step_report is shared; calls run one worker at a time, so what lands in it now is
        // this worker's report.
        report::take(&self.planner.step_report);
        let events = self.events.clone();
        let emit = move |event: Event| {
            let _ = events.send(event);
        };
        let sandbox = self.command_sandbox();
        // The results join the store with the rest of the step's block when the batch
        // ends, so that the stored conversation stays in step order.
        let mut deferred =
            Recorder::new(None, self.recorder.thread.clone(), 0, self.events.clone());
        self.keeper.watch();
        let focus = self.focus_of(Some(&worker.scope));
        let mut orchestrator = Orchestrator {
            gate: &mut self.gate,
            recorder: &mut deferred,
            tools: &self.options.tools,
            workspace: &self.options.workspace,
            max_output_bytes: self.options.limits.max_tool_output_bytes,
            emit: &emit,
            trust: self.trust,
            sandbox,
            mode: self.mode,
            plan: &mut self.plan,
            task: &worker.task,
            reason: text,
            checkpoints: &mut self.keeper,
            turn: worker.turn,
            correction: &mut worker.corrections,
            scope: Some(crate::orchestrator::Scope::Step(&worker.scope)),
            focus,
        };
        let outcomes = orchestrator.run_calls(calls, stop, cancel).await;
        let watched = self.keeper.unwatch();
        let with_paths = outcomes
            .iter()
            .filter(|o| !o.changed_paths.is_empty())
            .count();
        for outcome in outcomes {
            if let Some(workaround) = &outcome.workaround {
                self.learnings.workaround(workaround).await;
            }
            self.note_ending(&outcome);
            self.note_edited(&outcome.changed_paths);
            worker.state.files_changed.extend(outcome.changed_paths);
            worker.messages.push(Message::ToolResult(outcome.result));
        }
        // A mutating call that named no paths (`bash`) may still have changed files. Calls
        // run one worker at a time, so whatever changed since the snapshot before this
        // reply's first mutating call is this step's doing: its rollback must cover it.
        if let Some(first) = watched.first
            && watched.calls > with_paths
        {
            let changed = self
                .keeper
                .changed_since(worker.turn, first, worker.number)
                .await;
            let (own, outside): (Vec<String>, Vec<String>) = changed
                .into_iter()
                .partition(|path| execute::in_scope(&worker.scope, path));
            worker.state.files_changed.extend(own);
            if !outside.is_empty() {
                self.undo_outside(worker, first, outside).await;
            }
        }
    }

    /// A step's commands changed files outside its declared ones while its siblings ran:
    /// those changes are put back as they were before the step's calls, and the step is
    /// told, so no step's rollback can ever touch a sibling's files.
    async fn undo_outside(&mut self, worker: &mut Worker, before: u32, outside: Vec<String>) {
        let list = outside.join(", ");
        let note = match self.keeper.restore_paths(before, outside).await {
            Ok(_) => format!(
                "[atto: this step runs beside other steps and may change only its own files \
                 ({}); its commands also changed {list}, and those changes were undone]",
                worker.scope.join(", ")
            ),
            Err(err) => format!(
                "[atto: this step's commands changed {list}, outside its own files, and undoing \
                 that failed ({err}); check those files]"
            ),
        };
        self.emit(Event::Warning {
            message: format!(
                "plan step {}: {}",
                worker.number,
                note.trim_matches(['[', ']'])
            ),
        });
        if let Some(Message::ToolResult(result)) = worker
            .messages
            .iter_mut()
            .rev()
            .find(|m| matches!(m, Message::ToolResult(_)))
        {
            result.content.push('\n');
            result.content.push_str(&note);
        }
    }
}
