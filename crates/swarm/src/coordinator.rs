//! The coordinator: decompose, enrich, confirm, then schedule ready tasks onto worker
//! processes, check every result with the quality pipeline, retry failures with their
//! `RetryContext` after a backoff that never blocks the loop, ask a person about tasks
//! that stay stuck (when enabled), and save the state after every change. Runs until
//! every task is final, the user interrupts it (resumable), or the cap is spent.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use atto_llm::ModelClient;
use atto_protocol::{ApprovalDecision, ApprovalRequest};
use atto_quality::{CommandRunner, Outcome, RetryContext, ToolAction, Verdict, WorkerResult};
use atto_store::Store;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinSet;

use crate::budget::{Capped, Hold, Ledger};
use crate::config::{Isolation, SwarmConfig};
use crate::events::{SwarmEvent, SwarmInput};
use crate::health::HealthMonitor;
use crate::schedule::{self, Limits, Running};
use crate::task::{Attempt, InterventionAnswer, SwarmState, SwarmStatus, SwarmTask, TaskStatus};
use crate::worker::{self, Launch, Template, Vars};
use crate::{decompose, enrich, isolation, mailbox, report};

/// Least tokens a worker is started with; below that the cap is treated as spent.
pub const MIN_WORKER_TOKENS: u64 = 8_000;

/// Bytes of one file's text kept from before a task, for the checks.
const SNAPSHOT_MAX: u64 = 512 * 1024;

/// Makes the runner of the checks' commands for a directory.
pub type RunnerFor = Arc<dyn Fn(&std::path::Path) -> Arc<dyn CommandRunner> + Send + Sync>;

/// What the coordinator works with.
pub struct Deps {
    /// Where swarm state is saved.
    pub store: Store,
    /// The model for decomposition and enrichment.
    pub model: Arc<dyn ModelClient>,
    /// The judge's model; `None`: no judge.
    pub judge: Option<Arc<dyn ModelClient>>,
    /// Runs the checks' commands (tests, compile checks) in a directory: the workspace,
    /// or an attempt's worktree.
    pub runner: RunnerFor,
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
    hold: Hold,
    report: worker::Report,
    outcome: Option<Outcome>,
    /// With worktree isolation: the files merged back, or why they could not be.
    merge: Option<Result<Vec<String>, String>>,
}

/// A task a worker has.
struct Active {
    stop: watch::Sender<bool>,
    answers: mpsc::UnboundedSender<(String, ApprovalDecision)>,
}

struct Coordinator {
    config: SwarmConfig,
    deps: Deps,
    options: Options,
    state: SwarmState,
    events: mpsc::UnboundedSender<SwarmEvent>,
    ledger: Ledger,
    health: HealthMonitor,
    clock: Instant,
    not_before: HashMap<String, u64>,
    active: HashMap<String, Active>,
    /// Approval request id → task id, for answers from the front end.
    asks: HashMap<String, String>,
    jobs: JoinSet<Done>,
    messages_tx: mpsc::UnboundedSender<(String, worker::Message)>,
    messages: mpsc::UnboundedReceiver<(String, worker::Message)>,
    interrupted: bool,
    /// The judge's calls, held against the ledger like every other call.
    judge: Option<Arc<Capped>>,
    /// The coordinator's tokens and cost before the judge's (decomposition, enrichment,
    /// earlier runs).
    base: (u64, Option<f64>),
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
    let ledger = Ledger::new(
        config.max_budget_tokens,
        config.max_budget_usd,
        state.tokens(),
        state.cost_usd(),
    );
    let (messages_tx, messages) = mpsc::unbounded_channel();
    let judge = deps.judge.clone().map(|j| {
        Arc::new(Capped::new(j, ledger.clone()).with_output_limit(deps.max_output_tokens))
    });
    let mut c = Coordinator {
        config,
        deps,
        options,
        state,
        events,
        ledger,
        health: HealthMonitor::new(),
        clock: Instant::now(),
        not_before: HashMap::new(),
        active: HashMap::new(),
        asks: HashMap::new(),
        jobs: JoinSet::new(),
        messages_tx,
        messages,
        interrupted: false,
        judge,
        base: (0, Some(0.0)),
    };
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
    if c.state.status == SwarmStatus::Planned && !c.options.yes {
        c.emit(SwarmEvent::Plan {
            tasks: c.state.tasks.clone(),
        });
        loop {
            match input.recv().await {
                Some(SwarmInput::Confirm { yes: true }) => break,
                Some(SwarmInput::Confirm { yes: false }) => {
                    c.state.status = SwarmStatus::Failed;
                    c.state.error = Some("the plan was declined".into());
                    return c.finish().await;
                }
                Some(SwarmInput::Interrupt) | None => {
                    c.state.status = SwarmStatus::Interrupted;
                    return c.finish().await;
                }
                Some(_) => {}
            }
        }
    }
    c.state.status = SwarmStatus::Running;
    c.base = (c.state.coordinator_tokens, c.state.coordinator_cost_usd);
    c.save().await;
    c.run_loop(&mut input).await;
    c.finish().await
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
        let capped = Capped::new(self.deps.model.clone(), self.ledger.clone())
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
            let wake = self.next_wake();
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

    /// Fails pending tasks that can never be dispatched again, and skips pending tasks
    /// whose dependencies failed or were skipped.
    async fn cascade(&mut self) {
        let max = self.config.max_dispatches_per_task;
        let spent: Vec<String> = self
            .state
            .tasks
            .iter()
            .filter(|t| t.status == TaskStatus::Pending && t.dispatches() >= max)
            .map(|t| t.id.clone())
            .collect();
        for id in spent {
            let reason = format!("reached max_dispatches_per_task ({max})");
            if let Some(t) = self.state.task_mut(&id) {
                t.status = TaskStatus::Failed;
                t.reason = Some(reason.clone());
            }
            self.emit(SwarmEvent::TaskFailed {
                task_id: id,
                attempts: max,
                reason,
            });
        }
        loop {
            let skips = schedule::cascade(&self.state);
            if skips.is_empty() {
                return;
            }
            for (id, reason) in skips {
                self.skip(&id, reason);
            }
            self.save().await;
        }
    }

    fn skip(&mut self, id: &str, reason: String) {
        if let Some(task) = self.state.task_mut(id) {
            task.status = TaskStatus::Skipped;
            task.reason = Some(reason.clone());
        }
        self.emit(SwarmEvent::TaskSkipped {
            task_id: id.to_owned(),
            reason,
        });
    }

    fn model_for(&self, task: &SwarmTask) -> String {
        let m = &self.config.models;
        if task.kind.is_test() && !m.tester.is_empty() {
            m.tester.clone()
        } else if !m.worker.is_empty() {
            m.worker.clone()
        } else {
            self.deps.default_model.clone()
        }
    }

    /// Starts workers for every task that may start now.
    async fn dispatch(&mut self) {
        let now = self.now();
        let running: Vec<Running> = self
            .active
            .keys()
            .filter_map(|id| self.state.task(id))
            .map(Running::of)
            .collect();
        let limits = Limits {
            max_workers: self.config.max_workers as usize,
            max_dispatches: self.config.max_dispatches_per_task,
        };
        let ready = schedule::ready(&self.state, &running, &self.not_before, now, limits);
        let mut changed = false;
        for id in ready {
            let Some(task) = self.state.task(&id).cloned() else {
                continue;
            };
            let preferred = self.model_for(&task);
            let Some(model) = self
                .health
                .pick(&preferred, &self.config.models.fallback, now)
                .map(str::to_owned)
            else {
                continue;
            };
            let Some((hold, budget_args)) = self.worker_budget() else {
                if self.active.is_empty() {
                    // Nothing running will return budget: the cap is spent for good.
                    let ids: Vec<String> = self
                        .state
                        .tasks
                        .iter()
                        .filter(|t| t.status == TaskStatus::Pending)
                        .map(|t| t.id.clone())
                        .collect();
                    for id in ids {
                        self.skip(&id, "the swarm's budget cap is spent".into());
                    }
                    changed = true;
                }
                break;
            };
            self.start(task, model, hold, budget_args);
            changed = true;
        }
        if changed {
            self.save().await;
        }
    }

    /// The budget of the next worker, held against the ledger, and its flags; `None` when
    /// too little is left.
    fn worker_budget(&self) -> Option<(Hold, Vec<String>)> {
        let remaining_tasks = self
            .state
            .tasks
            .iter()
            .filter(|t| matches!(t.status, TaskStatus::Pending))
            .count()
            .max(1) as u64;
        let mut args = Vec::new();
        let tokens = match (self.ledger.tokens_left(), self.config.worker_max_tokens) {
            (None, None) => 0,
            (None, Some(w)) => w,
            (Some(left), w) => {
                let share = (left / remaining_tasks).max(MIN_WORKER_TOKENS).min(left);
                let t = w.map_or(share, |w| w.min(left));
                if t < MIN_WORKER_TOKENS.min(w.unwrap_or(u64::MAX)) {
                    return None;
                }
                t
            }
        };
        if tokens > 0 {
            args.extend(["--max-budget-tokens".to_owned(), tokens.to_string()]);
        }
        let usd = match self.ledger.usd_left() {
            Some(left) => {
                let share = left / remaining_tasks as f64;
                if share <= 0.0 {
                    return None;
                }
                args.extend(["--max-budget-usd".to_owned(), format!("{share:.6}")]);
                share
            }
            None => 0.0,
        };
        let hold = self.ledger.hold(tokens, usd).ok()?;
        Some((hold, args))
    }

    fn start(&mut self, task: SwarmTask, model: String, hold: Hold, budget_args: Vec<String>) {
        let attempt = task.attempts.len() as u32 + 1;
        if let Some(t) = self.state.task_mut(&task.id) {
            t.status = TaskStatus::Running;
        }
        self.not_before.remove(&task.id);
        let mut args = vec![
            "--output-format".to_owned(),
            "stream-json".to_owned(),
            "--input-format".to_owned(),
            "stream-json".to_owned(),
            "--on-ask".to_owned(),
            "deny".to_owned(),
            "--stop-on-stdin-close".to_owned(),
            "--model".to_owned(),
            model.clone(),
            "--timeout".to_owned(),
            self.config.worker_timeout_secs.to_string(),
        ];
        if !task.writes() {
            args.extend(["--mode".to_owned(), "review".to_owned()]);
        }
        args.extend(budget_args);
        args.extend(self.deps.worker_args.iter().cloned());
        let mut vars = Vars {
            atto: self.deps.atto.clone(),
            args,
            workspace: self.deps.workspace.display().to_string(),
            task_id: task.id.clone(),
            swarm_id: self.state.id.clone(),
        };
        let template = Template::from_config(&self.config.worker_command);
        let prompt = prompt(&self.state.goal, &task);
        let (stop_tx, stop) = watch::channel(false);
        let (answers_tx, answers) = mpsc::unbounded_channel();
        self.active.insert(
            task.id.clone(),
            Active {
                stop: stop_tx,
                answers: answers_tx,
            },
        );
        self.emit(SwarmEvent::TaskStarted {
            task_id: task.id.clone(),
            attempt,
            model: model.clone(),
            pid: None,
        });
        let main = self.deps.workspace.clone();
        let isolated = self.config.isolation == Isolation::Worktree;
        let scratch = self.deps.report_dir.join(&self.state.id).join("worktrees");
        let quality = self.config.quality.clone();
        let runner_for = self.deps.runner.clone();
        let judge: Option<Arc<dyn ModelClient>> =
            self.judge.clone().map(|j| j as Arc<dyn ModelClient>);
        let progress = self.state.progress();
        let timeout = Duration::from_secs(self.config.worker_timeout_secs.saturating_add(30));
        let messages = self.messages_tx.clone();
        let task_id = task.id.clone();
        self.jobs.spawn(async move {
            let (tx, mut rx) = mpsc::unbounded_channel();
            let forward = {
                let task_id = task_id.clone();
                tokio::spawn(async move {
                    while let Some(m) = rx.recv().await {
                        if messages.send((task_id.clone(), m)).is_err() {
                            break;
                        }
                    }
                })
            };
            // With worktree isolation the attempt works on a snapshot of the workspace.
            let tree = if isolated {
                let dir = scratch.join(format!("{task_id}-{attempt}"));
                let made = match isolation::snapshot(&main, &scratch).await {
                    Ok(base) => isolation::create(&main, &base, &dir).await,
                    Err(err) => Err(err),
                };
                Some(made.map_err(|e| format!("its worktree could not be made: {e}")))
            } else {
                None
            };
            let workspace = match &tree {
                Some(Ok(t)) => t.dir.clone(),
                _ => main.clone(),
            };
            vars.workspace = workspace.display().to_string();
            let before = snapshot(&workspace, &task);
            let expanded = match &tree {
                Some(Err(err)) => Err(err.clone()),
                _ => template.expand(&vars),
            };
            let report = match expanded {
                Ok((program, args)) => {
                    let launch = Launch {
                        program,
                        args,
                        cwd: workspace.clone(),
                        prompt,
                        timeout,
                    };
                    let writes = task.writes();
                    let decide = move |r: &ApprovalRequest| match mailbox::decide(r, writes) {
                        mailbox::Tier::AutoApprove => Some(ApprovalDecision::Yes),
                        mailbox::Tier::AutoDeny(reason) => Some(ApprovalDecision::No {
                            reason: Some(reason),
                        }),
                        mailbox::Tier::Ask => None,
                    };
                    worker::run(launch, &decide, tx, answers, stop).await
                }
                Err(err) => {
                    drop(tx);
                    worker::Report {
                        spawn_error: Some(err),
                        ..worker::Report::default()
                    }
                }
            };
            let _ = forward.await;
            let outcome = if report.failure().is_none() {
                let runner = runner_for(&workspace);
                Some(
                    assess(
                        &task,
                        &report,
                        &before,
                        &workspace,
                        attempt,
                        progress,
                        &quality,
                        runner.as_ref(),
                        judge.as_deref(),
                    )
                    .await,
                )
            } else {
                None
            };
            let passed = outcome.as_ref().is_some_and(|o| o.verdict == Verdict::Pass);
            let mut merge = None;
            if let Some(Ok(t)) = &tree {
                if passed {
                    let merged = match isolation::changes(t, &scratch).await {
                        Ok(changes) => isolation::merge_back(&main, t, &changes, &scratch)
                            .await
                            .map_err(|paths| {
                                format!(
                                    "its changes conflict with the workspace in {} (its \
                                     worktree is kept at {})",
                                    paths.join(", "),
                                    t.dir.display()
                                )
                            }),
                        Err(err) => Err(format!("its changes could not be read: {err}")),
                    };
                    merge = Some(merged);
                }
                if !matches!(merge, Some(Err(_))) {
                    isolation::remove(&main, t).await;
                }
            }
            Done {
                task_id,
                model,
                hold,
                report,
                outcome,
                merge,
            }
        });
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

    async fn on_input(&mut self, input: SwarmInput) {
        match input {
            SwarmInput::Confirm { .. } => {}
            SwarmInput::Approval {
                task_id,
                id,
                decision,
            } => {
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
                for active in self.active.values() {
                    let _ = active.stop.send(true);
                }
            }
        }
    }

    async fn intervene(&mut self, task_id: &str, answer: InterventionAnswer) {
        let Some(task) = self.state.task(task_id).cloned() else {
            self.emit(SwarmEvent::Notice {
                text: format!("no task {task_id} in this swarm"),
            });
            return;
        };
        if task.status != TaskStatus::AwaitingIntervention {
            self.emit(SwarmEvent::Notice {
                text: format!("task {task_id} is not waiting for a decision"),
            });
            return;
        }
        match answer {
            InterventionAnswer::Guidance { text }
                if task.dispatches() >= self.config.max_dispatches_per_task =>
            {
                let _ = text;
                self.emit(SwarmEvent::Notice {
                    text: format!(
                        "task {task_id} has used all {} dispatches (max_dispatches_per_task); \
                         answer fixed (after fixing it by hand) or skip",
                        self.config.max_dispatches_per_task
                    ),
                });
                self.ask_person(&task);
            }
            InterventionAnswer::Guidance { text } => {
                if let Some(t) = self.state.task_mut(task_id) {
                    t.guidance.push(text);
                    t.round_attempts = 0;
                    t.status = TaskStatus::Pending;
                }
            }
            InterventionAnswer::Skip => {
                self.skip(task_id, "skipped by the user".into());
            }
            InterventionAnswer::Fixed => {
                let outcome = self.recheck(&task).await;
                let passed = outcome.verdict == Verdict::Pass;
                self.emit(SwarmEvent::TaskChecked {
                    task_id: task_id.to_owned(),
                    attempt: task.attempts.len() as u32,
                    verdict: outcome.verdict,
                    score: outcome.score,
                    findings: outcome.findings.clone(),
                });
                if passed {
                    if let Some(t) = self.state.task_mut(task_id) {
                        t.status = TaskStatus::Passed;
                        t.reason = Some("fixed by the user".into());
                    }
                    self.emit(SwarmEvent::TaskPassed {
                        task_id: task_id.to_owned(),
                        attempts: task.attempts.len() as u32,
                        score: outcome.score,
                        files: task.target_files.clone(),
                    });
                } else {
                    let first = outcome
                        .findings
                        .first()
                        .map_or_else(|| "the checks still fail".to_owned(), |f| f.message.clone());
                    if let Some(t) = self.state.task_mut(task_id) {
                        t.retry = outcome.retry.clone();
                    }
                    let refreshed = self.state.task(task_id).cloned().unwrap_or(task);
                    self.emit(SwarmEvent::Notice {
                        text: format!("task {task_id} still fails its checks: {first}"),
                    });
                    self.ask_person(&refreshed);
                }
            }
        }
        self.save().await;
    }

    /// The deterministic checks and the project's tests over the task's files, after a
    /// person fixed them by hand.
    async fn recheck(&self, task: &SwarmTask) -> Outcome {
        let mut quality = self.config.quality.clone();
        // A person's fix has no tool calls to show; the project's tests are the evidence.
        quality.test_require_execution_evidence = false;
        let result = WorkerResult {
            text: "The user fixed this task by hand.".into(),
            closure_report: None,
            actions: vec![ToolAction {
                tool: "user".into(),
                arguments: serde_json::json!({"fixed_by_hand": true}),
                output: String::new(),
                exit_code: None,
                is_test_run: false,
            }],
            model: None,
        };
        let modified: Vec<String> = task
            .target_files
            .iter()
            .filter(|f| self.deps.workspace.join(f).is_file())
            .cloned()
            .collect();
        let before = BTreeMap::new();
        let runner = (self.deps.runner)(&self.deps.workspace);
        let input = atto_quality::Input {
            task: &task.quality_task(),
            result: &result,
            modified: &modified,
            before: &before,
            workspace: &self.deps.workspace,
            attempt: task.attempts.len() as u32 + 1,
            progress: Some(self.state.progress()),
            config: &quality,
            runner: runner.as_ref(),
            judge: None,
        };
        atto_quality::assess(&input).await
    }

    fn ask_person(&self, task: &SwarmTask) {
        let last = task.attempts.last();
        self.emit(SwarmEvent::InterventionNeeded {
            task_id: task.id.clone(),
            description: task.description.clone(),
            attempts: task.attempts.len() as u32,
            last_error: last
                .and_then(|a| a.error.clone())
                .or_else(|| task.reason.clone())
                .unwrap_or_default(),
            compilation_errors: last
                .map(|a| a.compilation_errors.clone())
                .unwrap_or_default(),
            failure_mode: last
                .and_then(|a| a.failure_mode.clone())
                .unwrap_or_else(|| "error".into()),
            model: last.map(|a| a.model.clone()).unwrap_or_default(),
        });
    }

    async fn finished(&mut self, done: Done) {
        let Done {
            task_id,
            model,
            hold,
            report,
            mut outcome,
            merge,
        } = done;
        // A passing attempt whose changes could not be merged back has not passed.
        let conflict = match &merge {
            Some(Err(why)) => Some(why.clone()),
            _ => None,
        };
        if let (Some(why), Some(o)) = (&conflict, outcome.as_mut()) {
            o.verdict = Verdict::NeedsRetry;
            o.findings.insert(
                0,
                atto_quality::Finding {
                    stage: atto_quality::Stage::Verification,
                    code: None,
                    message: why.clone(),
                    file: None,
                    line: None,
                },
            );
        }
        self.active.remove(&task_id);
        self.asks.retain(|_, t| *t != task_id);
        let tokens = report.tokens();
        let cost = report.result.as_ref().and_then(|r| r.cost_usd);
        self.ledger.settle(hold, tokens, cost);
        let now = self.now();
        let failure = report.failure();
        if report.interrupted {
            // Not the task's fault: it goes back to pending, and this dispatch does not
            // count against it.
            if let Some(t) = self.state.task_mut(&task_id) {
                t.status = TaskStatus::Pending;
                t.attempts.push(Attempt {
                    number: t.attempts.len() as u32 + 1,
                    model: model.clone(),
                    session_id: report.session_id.clone(),
                    exit_code: report.exit_code,
                    tokens,
                    cost_usd: cost,
                    failure_mode: Some("interrupted".into()),
                    error: Some("the swarm was interrupted".into()),
                    duration_ms: report.duration_ms,
                    ..Attempt::default()
                });
            }
            self.save().await;
            return;
        }
        let worker_failed = failure.as_ref().is_some_and(|(mode, _)| mode != "budget");
        if let Some(change) = if worker_failed {
            self.health.record_failure(&model, now)
        } else {
            self.health.record_success(&model, now)
        } {
            self.emit(SwarmEvent::ModelHealth {
                model: change.model,
                tripped: change.tripped,
                health: change.health,
            });
        }
        let Some(task) = self.state.task(&task_id).cloned() else {
            return;
        };
        let number = task.attempts.len() as u32 + 1;
        let files = own_changes(&task, &report, &self.deps.workspace);
        let mut attempt = Attempt {
            number,
            model: model.clone(),
            session_id: report.session_id.clone(),
            exit_code: report.exit_code,
            files: files.clone(),
            tokens,
            cost_usd: cost,
            summary: report
                .result
                .as_ref()
                .map(|r| bounded(&r.text, 2000))
                .unwrap_or_default(),
            duration_ms: report.duration_ms,
            ..Attempt::default()
        };
        let max_attempts = self.max_attempts(&task);
        let mut retry: Option<RetryContext> = None;
        match (&failure, &outcome) {
            (Some((mode, why)), _) => {
                attempt.failure_mode = Some(mode.clone());
                attempt.error = Some(why.clone());
                retry = Some(RetryContext {
                    previous_feedback: why.clone(),
                    previous_score: 0,
                    attempt: number + 1,
                    max_attempts,
                    previous_model: Some(model.clone()),
                    previous_files: files.clone(),
                    swarm_progress: Some(self.state.progress()),
                    ..RetryContext::default()
                });
            }
            (None, Some(o)) => {
                attempt.verdict = Some(o.verdict);
                attempt.score = o.score;
                attempt.findings.clone_from(&o.findings);
                attempt.compilation_errors = o
                    .retry
                    .as_ref()
                    .map(|r| r.compilation_errors.clone())
                    .unwrap_or_default();
                self.emit(SwarmEvent::TaskChecked {
                    task_id: task_id.clone(),
                    attempt: number,
                    verdict: o.verdict,
                    score: o.score,
                    findings: o.findings.clone(),
                });
                if o.verdict != Verdict::Pass {
                    attempt.failure_mode = Some(
                        if conflict.is_some() {
                            "conflict"
                        } else {
                            "quality"
                        }
                        .into(),
                    );
                    attempt.error = Some(o.findings.first().map_or_else(
                        || "the quality checks did not pass it".to_owned(),
                        |f| f.message.clone(),
                    ));
                    retry = o.retry.clone().map(|mut r| {
                        r.attempt = number + 1;
                        r.max_attempts = max_attempts;
                        r.previous_model = Some(model.clone());
                        r.swarm_progress = Some(self.state.progress());
                        r
                    });
                    if retry.is_none() {
                        retry = Some(RetryContext {
                            previous_feedback: attempt.error.clone().unwrap_or_default(),
                            previous_score: o.score.unwrap_or(1),
                            attempt: number + 1,
                            max_attempts,
                            previous_model: Some(model.clone()),
                            previous_files: files.clone(),
                            swarm_progress: Some(self.state.progress()),
                            ..RetryContext::default()
                        });
                    }
                }
            }
            (None, None) => {}
        }
        if let Some(judge) = &self.judge {
            let (tokens, cost) = judge.used();
            self.state.coordinator_tokens = self.base.0 + tokens;
            self.state.coordinator_cost_usd = self.base.1.zip(cost).map(|(a, b)| a + b);
        }
        let passed = attempt.verdict == Some(Verdict::Pass);
        let error = attempt.error.clone().unwrap_or_default();
        let Some(t) = self.state.task_mut(&task_id) else {
            return;
        };
        t.attempts.push(attempt);
        t.round_attempts += 1;
        // A task that passed only after retries: what fixed it is worth remembering.
        let lesson = (passed && t.dispatches() > 1).then(|| (t.retry.clone(), t.clone()));
        if passed {
            t.status = TaskStatus::Passed;
            t.retry = None;
            let (attempts, score) = (
                t.attempts.len() as u32,
                t.attempts.last().and_then(|a| a.score),
            );
            self.emit(SwarmEvent::TaskPassed {
                task_id: task_id.clone(),
                attempts,
                score,
                files,
            });
        } else {
            t.retry = retry;
            let dispatches = t.dispatches();
            let can_retry = t.round_attempts <= self.config.worker_retries
                && dispatches < self.config.max_dispatches_per_task;
            let out_of_budget = failure.as_ref().is_some_and(|(m, _)| m == "budget");
            if conflict.is_some() && self.config.enable_user_intervention {
                // The rule: a merge conflict is a person's to resolve.
                t.status = TaskStatus::AwaitingIntervention;
                let snapshot = t.clone();
                self.ask_person(&snapshot);
            } else if can_retry && !out_of_budget {
                t.status = TaskStatus::Pending;
                let jitter = jitter_ms(self.options.backoff_unit_ms);
                let delay = schedule::backoff_ms(dispatches, self.options.backoff_unit_ms, jitter);
                self.not_before.insert(task_id.clone(), now + delay);
                self.emit(SwarmEvent::TaskRetrying {
                    task_id: task_id.clone(),
                    attempt: dispatches + 1,
                    delay_ms: delay,
                    reason: error,
                });
            } else if self.config.enable_user_intervention
                && dispatches >= self.config.user_intervention_threshold
                && !out_of_budget
            {
                t.status = TaskStatus::AwaitingIntervention;
                let snapshot = t.clone();
                self.ask_person(&snapshot);
            } else {
                t.status = TaskStatus::Failed;
                let reason = format!("failed after {dispatches} attempts: {error}");
                t.reason = Some(reason.clone());
                self.emit(SwarmEvent::TaskFailed {
                    task_id: task_id.clone(),
                    attempts: dispatches,
                    reason,
                });
            }
        }
        if let Some((Some(retry), task)) = lesson {
            self.propose_lesson(&task, &retry, &report).await;
        }
        let (tokens, cost_usd) = (self.state.tokens(), self.state.cost_usd());
        let (max_tokens, max_usd) = self.ledger.caps();
        self.emit(SwarmEvent::Budget {
            tokens,
            max_tokens,
            cost_usd,
            max_usd,
        });
        self.save().await;
    }

    /// Proposes a WORKAROUND learning from a task that passed after a failed attempt: the
    /// failed attempt's retry context and what the passing one did. It waits for the
    /// user's yes like any proposal below the auto-validation threshold.
    async fn propose_lesson(
        &self,
        task: &SwarmTask,
        retry: &RetryContext,
        report: &worker::Report,
    ) {
        let Some(limits) = self.deps.learning else {
            return;
        };
        let first = retry.previous_feedback.lines().next().unwrap_or("").trim();
        let description = clip(
            &format!(
                "{} task \"{}\": a first attempt failed ({}); the retry that fixed it passed",
                task.kind.as_str(),
                clip(&task.description, 110),
                clip(first, 110)
            ),
            atto_store::MAX_DESCRIPTION,
        );
        let files = task
            .attempts
            .last()
            .map(|a| a.files.join(", "))
            .unwrap_or_default();
        let mut tools: Vec<String> = Vec::new();
        for a in &report.actions {
            if !tools.contains(&a.tool) {
                tools.push(a.tool.clone());
            }
        }
        let details = clip(
            &format!(
                "{}\n\nWhat passed (attempt {}): changed {}; tools {}.",
                retry.render(),
                task.attempts.len(),
                if files.is_empty() {
                    "no files".into()
                } else {
                    files
                },
                tools.join(", ")
            ),
            atto_store::MAX_DETAILS,
        );
        let mut keywords: Vec<String> = vec![task.kind.as_str().to_owned()];
        for f in &task.target_files {
            let name = std::path::Path::new(f)
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            if !name.is_empty() && !keywords.contains(&name) {
                keywords.push(name);
            }
        }
        keywords.truncate(atto_store::MAX_WORDS);
        tools.truncate(atto_store::MAX_WORDS);
        let new = atto_store::NewLearning {
            kind: atto_protocol::LearningKind::Workaround,
            description,
            details,
            keywords,
            actions: tools,
            categories: vec!["swarm".into(), task.kind.as_str().into()],
            confidence: 0.6,
            scope: atto_protocol::LearningScope::Project,
            project: self.state.workspace.clone(),
            source: atto_protocol::LearningSource::Swarm,
            source_ref: Some(format!(
                "swarm {} task {}",
                self.state.id.get(..8).unwrap_or(&self.state.id),
                task.id
            )),
            session_id: report.session_id.clone(),
        };
        let text = match self.deps.store.propose_learning(new, limits).await {
            Ok(p) if p.duplicate => return,
            Ok(p) => format!(
                "proposed learning #{} from task {} (`atto learnings show {}`): {}",
                p.learning.id, task.id, p.learning.id, p.learning.description
            ),
            Err(err) => format!("task {}'s lesson could not be stored: {err}", task.id),
        };
        self.emit(SwarmEvent::Notice { text });
    }

    fn max_attempts(&self, task: &SwarmTask) -> u32 {
        let round = task.dispatches().saturating_sub(task.round_attempts);
        (round + self.config.worker_retries + 1).min(self.config.max_dispatches_per_task)
    }

    async fn finish(mut self) -> SwarmState {
        if self.interrupted {
            self.state.status = SwarmStatus::Interrupted;
        } else if self.state.status == SwarmStatus::Running {
            self.state.status = SwarmStatus::Finished;
        }
        self.save().await;
        let caps = report::Caps {
            max_tokens: self.ledger.caps().0,
            max_usd: self.ledger.caps().1,
        };
        let dir = self.deps.report_dir.join(&self.state.id);
        let path = dir.join("report.md");
        let written = std::fs::create_dir_all(&dir)
            .and_then(|()| std::fs::write(&path, report::markdown(&self.state, &caps)))
            .and_then(|()| {
                let json = serde_json::to_string_pretty(&report::json(&self.state, &caps))
                    .unwrap_or_default();
                std::fs::write(dir.join("report.json"), json)
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
        });
        self.state
    }
}

/// Runs the quality pipeline over one finished attempt.
#[allow(clippy::too_many_arguments)]
async fn assess(
    task: &SwarmTask,
    report: &worker::Report,
    before: &BTreeMap<String, String>,
    workspace: &std::path::Path,
    attempt: u32,
    progress: String,
    quality: &atto_quality::QualityConfig,
    runner: &dyn CommandRunner,
    judge: Option<&dyn ModelClient>,
) -> Outcome {
    let result = report.result.as_ref();
    let worker_result = WorkerResult {
        text: result.map(|r| r.text.clone()).unwrap_or_default(),
        closure_report: None,
        actions: report.actions.clone(),
        model: report.model.clone(),
    };
    let modified = own_changes(task, report, workspace);
    let input = atto_quality::Input {
        task: &task.quality_task(),
        result: &worker_result,
        modified: &modified,
        before,
        workspace,
        attempt,
        progress: Some(progress),
        config: quality,
        runner,
        judge,
    };
    atto_quality::assess(&input).await
}

/// The files this worker changed. In a shared workspace a session's `files_changed`
/// also holds what other workers (and its own test runs' caches) changed meanwhile, so
/// only the files its file tools named, and the task's declared targets, count.
fn own_changes(
    task: &SwarmTask,
    report: &worker::Report,
    workspace: &std::path::Path,
) -> Vec<String> {
    let Some(result) = &report.result else {
        return Vec::new();
    };
    let root = format!("{}/", workspace.display());
    let clean = |p: &str| -> String {
        let p = p.trim();
        p.strip_prefix(root.as_str())
            .unwrap_or(p)
            .trim_start_matches("./")
            .to_owned()
    };
    let mut mine: std::collections::HashSet<String> =
        task.target_files.iter().map(|f| clean(f)).collect();
    for action in &report.actions {
        let args = &action.arguments;
        match action.tool.as_str() {
            "write_file" | "edit_file" | "delete_file" => {
                if let Some(p) = args.get("path").and_then(serde_json::Value::as_str) {
                    mine.insert(clean(p));
                }
            }
            "apply_patch" => {
                let text = args
                    .get("patch")
                    .or_else(|| args.get("input"))
                    .and_then(serde_json::Value::as_str)
                    .unwrap_or("");
                for line in text.lines() {
                    for head in [
                        "*** Add File: ",
                        "*** Update File: ",
                        "*** Delete File: ",
                        "*** Move to: ",
                    ] {
                        if let Some(p) = line.strip_prefix(head) {
                            mine.insert(clean(p));
                        }
                    }
                }
            }
            _ => {}
        }
    }
    result
        .files_changed
        .iter()
        .filter(|f| mine.contains(&clean(f)))
        .cloned()
        .collect()
}

/// The text of the declared files before the task, for the checks.
fn snapshot(workspace: &std::path::Path, task: &SwarmTask) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for rel in task.files() {
        if !decompose::is_relative_inside(rel) {
            continue;
        }
        let path = workspace.join(rel);
        let small = std::fs::metadata(&path).is_ok_and(|m| m.is_file() && m.len() <= SNAPSHOT_MAX);
        if small && let Ok(text) = std::fs::read_to_string(&path) {
            out.insert(rel.clone(), text);
        }
    }
    out
}

/// The worker's prompt: the task with everything enrichment and earlier attempts added.
pub fn prompt(goal: &str, task: &SwarmTask) -> String {
    use std::fmt::Write as _;
    let mut p = format!(
        "You are a worker in atto's swarm: other workers do other parts of a larger goal at the \
         same time. Do exactly the task below in this workspace, change only the files it \
         needs, check your work, then stop with a short summary of what you changed and how \
         you checked it.\n\nThe swarm's goal: {goal}\n\n## Task {} ({})\n{}\n",
        task.id,
        task.kind.as_str(),
        task.description
    );
    let list = |p: &mut String, title: &str, items: &[String]| {
        if !items.is_empty() {
            let _ = writeln!(p, "\n### {title}");
            for i in items {
                let _ = writeln!(p, "- {i}");
            }
        }
    };
    list(&mut p, "Target files", &task.target_files);
    list(&mut p, "Relevant files", &task.relevant_files);
    list(&mut p, "Acceptance criteria", &task.acceptance_criteria);
    list(&mut p, "Technical constraints", &task.technical_constraints);
    if let Some(steps) = &task.modification_instructions {
        let _ = write!(p, "\n### Modification instructions\n{steps}\n");
    }
    list(&mut p, "Test expectations", &task.test_expectations);
    if let Some(context) = &task.code_context {
        let _ = write!(p, "\n### Code context\n{context}\n");
    }
    if task.kind.is_test() {
        p.push_str(
            "\n### Running the tests\nRun the tests and keep their output in your answer. When \
             an import fails, install what is missing (Python: pip install <package> or pip \
             install -e .; Node.js: npm install; Go: go mod tidy; Rust: cargo build) and run \
             them again.\n",
        );
    }
    list(&mut p, "Guidance from the user", &task.guidance);
    if let Some(retry) = &task.retry {
        p.push('\n');
        p.push_str(&retry.render());
    }
    p
}

/// `text` cut to at most `max` characters, with `…` when cut.
fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

fn bounded(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
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
