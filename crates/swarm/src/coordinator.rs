//! The coordinator: decompose, enrich, confirm, then schedule ready tasks onto worker
//! processes, check every result with the quality pipeline, retry failures with their
//! `RetryContext` after a backoff that never blocks the loop, ask a person about tasks
//! that stay stuck (when enabled), and save the state after every change. Runs until
//! every task is final, the user interrupts it (resumable), or the cap is spent.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use atto_llm::ModelClient;
use atto_protocol::ApprovalDecision;
use atto_quality::Outcome;
use atto_store::Store;
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinSet;

use crate::budget::{Capped, Reservation, SwarmBudget};
use crate::config::SwarmConfig;
use crate::events::{SwarmEvent, SwarmInput};
use crate::health::HealthMonitor;
use crate::task::{SwarmState, SwarmStatus, SwarmTask, TaskStatus};
use crate::worker;
use crate::{decompose, enrich, report};

mod attempt;
mod checks;
mod dispatch;
mod person;
mod waits;

pub use attempt::prompt;
pub use checks::SandboxFor;

/// Least tokens a worker is started with; below that the cap is treated as spent.
pub const MIN_WORKER_TOKENS: u64 = 8_000;

/// Bytes of one file's text kept from before a task, for the checks.
const SNAPSHOT_MAX: u64 = 512 * 1024;

/// What the coordinator works with.
pub struct Deps {
    /// Where swarm state is saved.
    pub store: Store,
    /// The model for decomposition and enrichment.
    pub model: Arc<dyn ModelClient>,
    /// The judge's model; `None`: no judge.
    pub judge: Option<Arc<dyn ModelClient>>,
    /// The OS sandbox the checks' commands (tests, compile checks) run under in a
    /// directory (the workspace, or an attempt's worktree), or why there is none: then
    /// each of them is put to the person, never run unsandboxed unasked.
    pub sandbox: SandboxFor,
    /// This atto executable, for the worker template's `{atto}`.
    pub atto: String,
    /// Flags every worker gets (provider, endpoint, permission mode …).
    pub worker_args: Vec<String>,
    /// The model workers use when the config names none.
    pub default_model: String,
    /// The workspace.
    pub workspace: PathBuf,
    /// Where reports are written (`<dir>/<swarm id>/report.md|json`).
    pub report_dir: PathBuf,
    /// The user's output limit for the coordinator's own calls (`[limits]
    /// max_output_tokens`).
    pub max_output_tokens: Option<u32>,
    /// Where tasks that passed only after retries propose what fixed them as learnings
    /// (`None`: learnings are off).
    pub learning: Option<atto_store::LearningLimits>,
}

/// How this run behaves.
#[derive(Debug, Clone)]
pub struct Options {
    /// Run the plan without asking for confirmation.
    pub yes: bool,
    /// One backoff unit in milliseconds (1000 in real runs: `min(2^attempt, 60)` seconds).
    pub backoff_unit_ms: u64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            yes: false,
            backoff_unit_ms: 1000,
        }
    }
}

/// What to run: a new goal, or a saved swarm to continue.
#[derive(Debug, Clone)]
pub enum Start {
    /// Decompose and run this task.
    New(String),
    /// Continue this saved swarm.
    Resume(SwarmState),
}

/// The result of one attempt, as its job hands it back.
struct Done {
    task_id: String,
    model: String,
    reservation: Reservation,
    report: worker::Report,
    /// The files the worker changed (its own, not its neighbours').
    files: Vec<String>,
    outcome: Option<Outcome>,
    /// With worktree isolation: the files merged back, or why they could not be.
    merge: Option<Result<Vec<String>, String>>,
}

/// A task a worker has.
struct Active {
    stop: watch::Sender<bool>,
    answers: mpsc::UnboundedSender<(String, ApprovalDecision)>,
    /// Its worker slot and when it was dispatched, for the attempt's record.
    worker: u32,
    started_ms: i64,
}

struct Coordinator {
    config: SwarmConfig,
    deps: Deps,
    options: Options,
    state: SwarmState,
    events: mpsc::UnboundedSender<SwarmEvent>,
    budget: SwarmBudget,
    health: HealthMonitor,
    clock: Instant,
    not_before: HashMap<String, u64>,
    /// Model → when the user was last told tasks wait for it.
    wait_notices: HashMap<String, u64>,
    active: HashMap<String, Active>,
    /// Approval request id → task id, for answers from the front end.
    asks: HashMap<String, String>,
    /// Questions the checks' commands put to the person, from the attempts' jobs.
    check_asks_tx: mpsc::UnboundedSender<checks::CheckAsk>,
    check_asks: mpsc::UnboundedReceiver<checks::CheckAsk>,
    /// Approval request id → where a check command waits for its answer.
    check_answers: HashMap<String, oneshot::Sender<ApprovalDecision>>,
    jobs: JoinSet<Done>,
    messages_tx: mpsc::UnboundedSender<(String, worker::Message)>,
    messages: mpsc::UnboundedReceiver<(String, worker::Message)>,
    interrupted: bool,
    /// Held while this coordinator runs: `atto swarm status` tells a live run from a
    /// killed one by it.
    alive: Option<crate::liveness::Alive>,
    /// The judge's calls, held against the budget like every other call.
    judge: Option<Arc<Capped>>,
    /// The coordinator's tokens and cost before the judge's (decomposition, enrichment,
    /// earlier runs).
    base: (u64, Option<f64>),
    /// The ssh launcher's hosts and the attempts on each.
    hosts: Arc<crate::remote::launcher::Hosts>,
    /// Worktrees finished attempts left for later ones (`isolation: worktree`).
    worktrees: Arc<crate::isolation::Pool>,
}

/// Runs a swarm to its end and returns its final state. Events go to `events`; the
/// front end's answers (plan confirmation, approvals, interventions, interrupt) come on
/// `input`.
pub async fn run(
    start: Start,
    config: SwarmConfig,
    deps: Deps,
    options: Options,
    events: mpsc::UnboundedSender<SwarmEvent>,
    mut input: mpsc::UnboundedReceiver<SwarmInput>,
) -> SwarmState {
    let (resumed, state) = first_state(start, &deps);
    let mut c = Coordinator::new(config, deps, options, state, events);
    c.hold_liveness();
    c.worktrees.clear_leftovers(&c.deps.workspace).await;
    c.emit(SwarmEvent::Started {
        swarm_id: c.state.id.clone(),
        goal: c.state.goal.clone(),
        resumed,
    });
    c.save().await;
    if c.state.tasks.is_empty() {
        if !c.plan().await {
            return c.finish().await;
        }
    } else if resumed {
        for task in c.state.tasks.clone() {
            if task.status == TaskStatus::AwaitingIntervention {
                c.ask_person(&task);
            }
        }
    }
    if c.state.status == SwarmStatus::Planned && !c.options.yes && !c.confirm(&mut input).await {
        return c.finish().await;
    }
    c.state.status = SwarmStatus::Running;
    c.base = (c.state.coordinator_tokens, c.state.coordinator_cost_usd);
    c.save().await;
    c.run_loop(&mut input).await;
    c.finish().await
}

/// The state a run starts from, and whether it resumes a saved one.
fn first_state(start: Start, deps: &Deps) -> (bool, SwarmState) {
    let (resumed, mut state) = match start {
        Start::New(goal) => (
            false,
            SwarmState {
                id: new_id(),
                goal,
                workspace: deps.workspace.display().to_string(),
                status: SwarmStatus::Planned,
                coordinator_cost_usd: Some(0.0),
                created_ms: now_unix_ms(),
                ..SwarmState::default()
            },
        ),
        Start::Resume(state) => (true, state),
    };
    if resumed {
        // Workers of the run that stopped are gone (they stop when their stdin closes);
        // what they had not finished is done again.
        for task in &mut state.tasks {
            if task.status == TaskStatus::Running {
                task.status = TaskStatus::Pending;
            }
        }
    }
    (resumed, state)
}

impl Coordinator {
    /// A coordinator for `state`, its budget counting what the state has spent already.
    fn new(
        config: SwarmConfig,
        deps: Deps,
        options: Options,
        state: SwarmState,
        events: mpsc::UnboundedSender<SwarmEvent>,
    ) -> Coordinator {
        let budget = SwarmBudget::new(
            config.max_budget_tokens,
            config.max_budget_usd,
            state.tokens(),
            state.cost_usd(),
        );
        let (messages_tx, messages) = mpsc::unbounded_channel();
        let (check_asks_tx, check_asks) = mpsc::unbounded_channel();
        let parking = deps
            .report_dir
            .join(&state.id)
            .join("worktrees")
            .join("parked");
        let worktrees = Arc::new(crate::isolation::Pool::new(
            parking,
            config.max_workers as usize,
        ));
        let judge = deps.judge.clone().map(|j| {
            Arc::new(Capped::new(j, budget.clone()).with_output_limit(deps.max_output_tokens))
        });
        Coordinator {
            config,
            deps,
            options,
            state,
            events,
            budget,
            health: HealthMonitor::new(),
            clock: Instant::now(),
            not_before: HashMap::new(),
            wait_notices: HashMap::new(),
            active: HashMap::new(),
            asks: HashMap::new(),
            check_asks_tx,
            check_asks,
            check_answers: HashMap::new(),
            jobs: JoinSet::new(),
            messages_tx,
            messages,
            interrupted: false,
            judge,
            base: (0, Some(0.0)),
            alive: None,
            hosts: Arc::default(),
            worktrees,
        }
    }

    /// Marks the run alive for `atto swarm status`, or says why it cannot.
    fn hold_liveness(&mut self) {
        match crate::liveness::hold(&self.deps.report_dir, &self.state.id) {
            Ok(alive) => self.alive = Some(alive),
            Err(why) => self.emit(SwarmEvent::Notice {
                text: format!(
                    "`atto swarm status` cannot tell whether this run is alive ({why}); it shows \
                     what was last saved"
                ),
            }),
        }
    }

    /// Shows the plan and waits for the person's answer: whether to run it. A declined
    /// plan fails the run, an interrupt stops it.
    async fn confirm(&mut self, input: &mut mpsc::UnboundedReceiver<SwarmInput>) -> bool {
        self.emit(SwarmEvent::Plan {
            tasks: self.state.tasks.clone(),
        });
        loop {
            match input.recv().await {
                Some(SwarmInput::Confirm { yes: true }) => return true,
                Some(SwarmInput::Confirm { yes: false }) => {
                    self.state.status = SwarmStatus::Failed;
                    self.state.error = Some("the plan was declined".into());
                    return false;
                }
                Some(SwarmInput::Interrupt) | None => {
                    self.state.status = SwarmStatus::Interrupted;
                    return false;
                }
                Some(_) => {}
            }
        }
    }
}

impl Coordinator {
    fn emit(&self, event: SwarmEvent) {
        let _ = self.events.send(event);
    }

    fn now(&self) -> u64 {
        u64::try_from(self.clock.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    async fn save(&self) {
        let json = match serde_json::to_string(&self.state) {
            Ok(json) => json,
            Err(err) => {
                self.emit(SwarmEvent::Notice {
                    text: format!("the swarm's state could not be written as JSON: {err}"),
                });
                return;
            }
        };
        if let Err(err) = self
            .deps
            .store
            .save_swarm(
                &self.state.id,
                &self.state.workspace,
                &self.state.goal,
                self.state.status.as_str(),
                &json,
            )
            .await
        {
            self.emit(SwarmEvent::Notice {
                text: format!(
                    "the swarm's state could not be saved ({err}); it goes on, but cannot be \
                     resumed from here"
                ),
            });
        }
    }

    /// Decomposes and enriches; false when there is no plan to run.
    async fn plan(&mut self) -> bool {
        let capped = Capped::new(self.deps.model.clone(), self.budget.clone())
            .with_output_limit(self.deps.max_output_tokens);
        let workspace = self.deps.workspace.clone();
        let max_tasks = self.config.max_tasks;
        let mut hint: Option<String> = None;
        let mut redecomposed = false;
        loop {
            let d = decompose::decompose(
                &capped,
                &self.state.goal,
                &workspace,
                max_tasks,
                hint.as_deref(),
            )
            .await;
            let mut tasks = match d.tasks {
                Ok(tasks) => tasks,
                Err(err) => {
                    self.account(&capped);
                    self.state.status = SwarmStatus::Failed;
                    self.state.error = Some(err);
                    return false;
                }
            };
            let attempts = d.attempts;
            let mut still_thin = Vec::new();
            if self.config.enable_task_enrichment {
                let e = enrich::enrich(
                    &mut tasks,
                    &workspace,
                    self.config.enrichment_min_description_chars,
                    Some(&capped),
                )
                .await;
                still_thin.clone_from(&e.still_thin);
                for note in &e.notes {
                    self.emit(SwarmEvent::Notice {
                        text: format!("enrichment: {note}"),
                    });
                }
                let again = e.redecompose && !redecomposed;
                self.emit(SwarmEvent::Enriched {
                    thin: e.thin,
                    enriched: e.enriched,
                    still_thin: e.still_thin,
                    redecomposed: again,
                });
                if again {
                    redecomposed = true;
                    hint = Some(format!(
                        "An earlier split was too thin to work from (tasks {} had short \
                         descriptions, no actionable verb or no files). Give every task a \
                         concrete description of at least {} characters, an action verb, and \
                         its target files.",
                        still_thin.join(", "),
                        self.config.enrichment_min_description_chars
                    ));
                    continue;
                }
            }
            self.account(&capped);
            self.state.tasks = tasks;
            self.emit(SwarmEvent::Decomposed {
                tasks: self.state.tasks.clone(),
                attempts,
            });
            self.save().await;
            return true;
        }
    }

    /// Adds what the coordinator's own calls used to the state.
    fn account(&mut self, capped: &Capped) {
        let (tokens, cost) = capped.used();
        self.state.coordinator_tokens += tokens;
        self.state.coordinator_cost_usd = match (self.state.coordinator_cost_usd, cost) {
            (Some(a), Some(b)) => Some(a + b),
            _ => None,
        };
    }

    async fn run_loop(&mut self, input: &mut mpsc::UnboundedReceiver<SwarmInput>) {
        let mut input_open = true;
        loop {
            self.cascade().await;
            if !self.interrupted {
                self.dispatch().await;
            }
            if self.active.is_empty() && (self.interrupted || self.all_settled()) {
                break;
            }
            let wake = match (self.next_wake(), self.announce_waits()) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            let sleep = tokio::time::sleep(wake.map_or(Duration::from_secs(3600), |at| {
                Duration::from_millis(at.saturating_sub(self.now()))
            }));
            tokio::select! {
                Some(joined) = self.jobs.join_next(), if !self.jobs.is_empty() => {
                    match joined {
                        Ok(done) => self.finished(done).await,
                        Err(err) => self.emit(SwarmEvent::Notice {
                            text: format!("a worker's job ended abnormally: {err}"),
                        }),
                    }
                }
                Some((task_id, message)) = self.messages.recv() => {
                    self.on_message(&task_id, message);
                }
                Some(ask) = self.check_asks.recv() => self.on_check_ask(ask),
                got = input.recv(), if input_open => {
                    match got {
                        Some(answer) => self.on_input(answer).await,
                        None => input_open = false,
                    }
                }
                () = sleep => {}
            }
        }
    }

    /// Whether nothing can happen any more without a person or a running worker.
    fn all_settled(&self) -> bool {
        let waiting_on_person = self
            .state
            .tasks
            .iter()
            .any(|t| t.status == TaskStatus::AwaitingIntervention);
        if waiting_on_person {
            return false;
        }
        // Pending tasks that can still be dispatched (now or after a backoff or a breaker)
        // keep the swarm going; the dispatch step marks the rest as skipped.
        !self
            .state
            .tasks
            .iter()
            .any(|t| t.status == TaskStatus::Pending)
    }

    /// When something scheduled happens next (a backoff ends, a breaker half-opens).
    fn next_wake(&self) -> Option<u64> {
        let now = self.now();
        let mut wake = self.not_before.values().copied().filter(|&t| t > now).min();
        for task in self
            .state
            .tasks
            .iter()
            .filter(|t| t.status == TaskStatus::Pending)
        {
            let model = self.model_for(task);
            if self
                .health
                .pick(&model, &self.config.models.fallback, now)
                .is_none()
                && let Some(at) = self.health.available_at(&model, now)
            {
                wake = Some(wake.map_or(at, |w| w.min(at)));
            }
        }
        wake
    }

    fn on_message(&mut self, task_id: &str, message: worker::Message) {
        match message {
            worker::Message::Started(pid) => {
                if let Some(pid) = pid {
                    self.emit(SwarmEvent::TaskActivity {
                        task_id: task_id.to_owned(),
                        activity: format!("worker started (pid {pid})"),
                    });
                }
            }
            worker::Message::Activity(activity) => self.emit(SwarmEvent::TaskActivity {
                task_id: task_id.to_owned(),
                activity,
            }),
            worker::Message::Answered(request, decision) => {
                let tier = if decision == ApprovalDecision::Yes {
                    "auto_approved"
                } else {
                    "auto_denied"
                };
                self.emit(SwarmEvent::Permission {
                    task_id: task_id.to_owned(),
                    request,
                    tier: tier.into(),
                    decision: Some(decision),
                });
            }
            worker::Message::Approval(request) => {
                self.asks.insert(request.id.clone(), task_id.to_owned());
                self.emit(SwarmEvent::Permission {
                    task_id: task_id.to_owned(),
                    request,
                    tier: "asked".into(),
                    decision: None,
                });
            }
        }
    }

    /// A check command waits for the person: the question goes out like a worker's.
    fn on_check_ask(&mut self, ask: checks::CheckAsk) {
        if self.interrupted {
            // Dropping the answer's sender refuses the command.
            return;
        }
        self.check_answers.insert(ask.request.id.clone(), ask.reply);
        self.emit(SwarmEvent::Permission {
            task_id: ask.task_id,
            request: ask.request,
            tier: "asked".into(),
            decision: None,
        });
    }

    async fn on_input(&mut self, input: SwarmInput) {
        match input {
            // Answered before the coordinator starts.
            SwarmInput::Confirm { .. } | SwarmInput::Trust { .. } => {}
            SwarmInput::Approval {
                task_id,
                id,
                decision,
            } => {
                if let Some(reply) = self.check_answers.remove(&id) {
                    let _ = reply.send(decision);
                    return;
                }
                let owner = self.asks.remove(&id).unwrap_or(task_id);
                if let Some(active) = self.active.get(&owner) {
                    let _ = active.answers.send((id, decision));
                }
            }
            SwarmInput::Intervention { task_id, answer } => {
                self.intervene(&task_id, answer).await;
            }
            SwarmInput::Interrupt => {
                self.interrupted = true;
                // Check commands waiting for a person are refused.
                self.check_answers.clear();
                for active in self.active.values() {
                    let _ = active.stop.send(true);
                }
            }
        }
    }

    fn max_attempts(&self, task: &SwarmTask) -> u32 {
        let round = task.dispatches().saturating_sub(task.round_attempts);
        (round + self.config.worker_retries + 1).min(self.config.max_dispatches_per_task)
    }

    async fn finish(mut self) -> SwarmState {
        self.worktrees.drain(&self.deps.workspace).await;
        if self.interrupted {
            self.state.status = SwarmStatus::Interrupted;
        } else if self.state.status == SwarmStatus::Running {
            self.state.status = SwarmStatus::Finished;
        }
        self.save().await;
        let caps = report::Caps {
            max_tokens: self.budget.caps().0,
            max_usd: self.budget.caps().1,
        };
        let dir = self.deps.report_dir.join(&self.state.id);
        let path = dir.join("report.md");
        let written = std::fs::create_dir_all(&dir)
            .and_then(|()| std::fs::write(&path, report::markdown(&self.state, &caps)))
            .and_then(|()| {
                let json = serde_json::to_string_pretty(&report::json(&self.state, &caps))
                    .unwrap_or_default();
                std::fs::write(dir.join("report.json"), json)
            })
            .and_then(|()| {
                std::fs::write(
                    dir.join("report.html"),
                    report::html::page(&self.state, &caps),
                )
            });
        if let Err(err) = written {
            self.emit(SwarmEvent::Notice {
                text: format!(
                    "the report could not be written to {}: {err}",
                    dir.display()
                ),
            });
        }
        let count =
            |s: TaskStatus| self.state.tasks.iter().filter(|t| t.status == s).count() as u32;
        self.emit(SwarmEvent::Finished {
            swarm_id: self.state.id.clone(),
            status: self.state.status.as_str().into(),
            passed: count(TaskStatus::Passed),
            failed: count(TaskStatus::Failed),
            skipped: count(TaskStatus::Skipped),
            tokens: self.state.tokens(),
            cost_usd: self.state.cost_usd(),
            report: path.display().to_string(),
            error: self.state.error.clone(),
        });
        self.state
    }
}

/// Jitter below one backoff unit, from the clock's nanoseconds (no need for a strong
/// random source: it only spreads retries apart).
fn jitter_ms(unit_ms: u64) -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::from(d.subsec_nanos()));
    if unit_ms == 0 { 0 } else { nanos % unit_ms }
}

fn now_unix_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// A new swarm id: time-ordered, unique.
fn new_id() -> String {
    uuid::Uuid::now_v7().simple().to_string()
}
