//! `atto swarm`: the swarm coordinator's front end on a terminal or headless. Shows the
//! plan and asks to run it (or runs it with `--yes`, or when no one can be asked), prints
//! progress, passes workers' approvals and stuck tasks to the person (a terminal prompt,
//! JSON lines on stdin with `--input-format stream-json`, else `--on-ask`), and turns
//! Ctrl-C into a resumable stop. `atto swarm status [ID]` prints a saved swarm.

use std::io::{IsTerminal as _, Write as _};
use std::sync::Arc;

use atto_llm::ClientOptions;
use atto_protocol::ApprovalDecision;
use atto_swarm::coordinator::{self, Deps, Options, Start};
use atto_swarm::{InterventionAnswer, SwarmConfig, SwarmEvent, SwarmInput, SwarmState, report};
use clap::{Args, Subcommand};
use tokio::io::AsyncBufReadExt as _;
use tokio::sync::mpsc;

use crate::exec::{InputFormat, OnAsk, OutputFormat};
use crate::{ExitCode, Failure, GlobalArgs};

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct SwarmArgs {
    #[command(subcommand)]
    pub command: Option<SwarmCommand>,
    /// The session's options (model, provider, permissions), also accepted here; workers
    /// get the same.
    #[command(flatten)]
    pub session: GlobalArgs,
    /// The task to split among workers.
    pub task: Option<String>,
    /// Run the plan without asking.
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// Workers at once (overrides max_workers in swarm.yaml).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=20))]
    pub max_workers: Option<u32>,
    /// Output: progress as text, or one JSON event per line (`swarm.*`).
    #[arg(long, value_enum, default_value = "text")]
    pub output_format: OutputFormat,
    /// With stream-json, the plan confirmation, approvals and intervention answers are
    /// read as JSON lines on stdin (`{"type":"confirm","yes":true}`,
    /// `{"type":"approval","task_id":…,"id":…,"decision":"yes"}`,
    /// `{"type":"intervention","task_id":…,"action":"guidance","text":…}`).
    #[arg(long, value_enum, default_value = "text")]
    pub input_format: InputFormat,
    /// Approvals no one can answer: deny them, stop the swarm, or allow them.
    #[arg(long, value_enum, default_value = "deny")]
    pub on_ask: OnAsk,
    /// One retry backoff unit in milliseconds (the seed's seconds: 1000).
    #[arg(long, value_name = "MS", default_value_t = 1000, hide = true)]
    pub backoff_unit_ms: u64,
}

#[derive(Debug, Subcommand)]
pub enum SwarmCommand {
    /// Print a saved swarm: its tasks as a tree with status, attempts, scores and tokens.
    Status {
        /// Swarm id or unique prefix (default: this workspace's latest).
        id: Option<String>,
        /// Print the report's JSON instead.
        #[arg(long)]
        json: bool,
        /// Workspace root.
        #[arg(long, value_name = "DIR")]
        workspace: Option<std::path::PathBuf>,
    },
}

/// Runs `atto swarm …`.
pub fn run(args: SwarmArgs, global: &mut GlobalArgs) -> Result<ExitCode, Failure> {
    if let Some(SwarmCommand::Status {
        id,
        json,
        workspace,
    }) = &args.command
    {
        return status(id.as_deref(), *json, workspace.as_deref());
    }
    global.absorb(&args.session);
    let config = crate::load_config(global)?;
    let provider = crate::setup::provider(global, &config)?;
    let (workspace, _) = crate::setup::workspace(global.workspace.as_deref())?;
    let mut prepared = Prepared::new(global, &config, &provider, workspace)?;
    if let Some(n) = args.max_workers {
        prepared.config.max_workers = n;
    }
    // `--resume ID` continues a saved swarm (bare: this workspace's latest); passed tasks
    // are not redone.
    let start = match (&global.resume, &args.task) {
        (Some(_), Some(_)) => {
            return Err(Failure::usage(
                "--resume continues a saved swarm; give no task with it",
            ));
        }
        (Some(which), None) => {
            let which = if which.is_empty() { "latest" } else { which };
            Start::Resume(prepared.saved(which)?)
        }
        (None, Some(task)) if !task.trim().is_empty() => Start::New(task.clone()),
        _ => {
            return Err(Failure::usage(
                "no task given: atto swarm \"add input validation and its tests\" (or \
                 --resume ID)",
            ));
        }
    };
    let interactive = std::io::stdin().is_terminal() && args.input_format == InputFormat::Text;
    let front = Front {
        format: args.output_format,
        input: args.input_format,
        on_ask: args.on_ask,
        interactive,
        host: Host::Command,
    };
    let run_options = Options {
        // No one can confirm a headless run with text input: it proceeds, like /auto.
        yes: args.yes || (!interactive && args.input_format == InputFormat::Text),
        backoff_unit_ms: args.backoff_unit_ms,
    };
    for warning in &prepared.warnings {
        front.notice(&format!("warning: {warning}"));
    }
    crate::block_on(async move {
        let running = prepared.launch(start, run_options);
        front.drive(running.events, running.input).await;
        let state = running.done.await.map_err(|e| Failure {
            code: ExitCode::Failed,
            message: format!("the swarm coordinator stopped abnormally: {e}"),
        })?;
        Ok(exit_code(&state))
    })
}

/// Everything a swarm needs before it starts, from the flags, the config and
/// swarm.yaml: for `atto swarm` and for `/swarm` in a session.
pub struct Prepared {
    /// The swarm's settings (swarm.yaml with the caps of the flags).
    pub config: SwarmConfig,
    /// What was odd in swarm.yaml.
    pub warnings: Vec<String>,
    deps: Deps,
}

/// A swarm under way: its events, the channel for answers, and its end.
pub struct Running {
    /// `swarm.*` events, until it ends.
    pub events: mpsc::UnboundedReceiver<SwarmEvent>,
    /// Confirmation, approvals, interventions, interrupt.
    pub input: mpsc::UnboundedSender<SwarmInput>,
    /// Its final state.
    pub done: tokio::task::JoinHandle<SwarmState>,
}

impl Prepared {
    /// Reads swarm.yaml, connects the models and opens the database.
    pub fn new(
        global: &GlobalArgs,
        config: &crate::config::Config,
        provider: &atto_llm::ResolvedProvider,
        workspace: std::path::PathBuf,
    ) -> Result<Prepared, Failure> {
        let loaded = SwarmConfig::load(&workspace).map_err(|e| Failure::usage(e.to_string()))?;
        let mut swarm_config = loaded.config;
        if let Some(t) = global.max_budget_tokens {
            swarm_config.max_budget_tokens = Some(t);
        }
        if let Some(d) = global.max_budget_usd {
            swarm_config.max_budget_usd = Some(d);
        }
        if swarm_config.isolation == atto_swarm::Isolation::Worktree {
            return Err(Failure::usage(
                "isolation: worktree is not available yet; remove it from swarm.yaml to run \
                 workers in the shared workspace (tasks with overlapping files never run \
                 together)",
            ));
        }
        let store = crate::permissions::open_store().map_err(|e| {
            Failure::usage(format!(
                "the swarm needs the database to save its state: {}",
                match e {
                    crate::permissions::OpenFailure::Busy(m)
                    | crate::permissions::OpenFailure::Unusable(m) => m,
                }
            ))
        })?;
        let options = ClientOptions {
            retry: config.retry_policy(),
            ..ClientOptions::default()
        };
        let client = atto_llm::connect(provider, options.clone())
            .map_err(|e| Failure::usage(e.to_string()))?;
        let connect = crate::models::connector(provider, config, options);
        let named = |name: &str| -> Result<Arc<dyn atto_llm::ModelClient>, Failure> {
            if name.is_empty() {
                Ok(client.clone())
            } else {
                connect(name).map_err(|e| Failure::usage(format!("model {name}: {e}")))
            }
        };
        let model = named(&swarm_config.models.decomposer)?;
        let judge = if swarm_config.quality.quality_gates {
            Some(named(&swarm_config.quality.quality_gate_model)?)
        } else {
            None
        };
        let mut runner = atto_quality::LocalRunner::new(workspace.clone());
        if let Ok(sandbox) = crate::setup::sandbox(&workspace, config) {
            runner.prepare = Some(Arc::new(move |cmd: &mut tokio::process::Command| {
                let _ = sandbox.apply(cmd);
            }));
        }
        let report_dir = atto_store::default_path()
            .ok()
            .and_then(|p| p.parent().map(|d| d.join("swarms")))
            .unwrap_or_else(|| workspace.join(".atto/swarms"));
        let deps = Deps {
            store,
            model,
            judge,
            runner: Arc::new(runner),
            atto: std::env::current_exe()
                .map(|p| p.display().to_string())
                .unwrap_or_else(|_| "atto".into()),
            worker_args: worker_args(global),
            default_model: provider.model.clone(),
            workspace,
            report_dir,
        };
        Ok(Prepared {
            config: swarm_config,
            warnings: loaded.warnings,
            deps,
        })
    }

    /// The saved swarm `which` (id, unique prefix or `latest`) of this workspace.
    pub fn saved(&self, which: &str) -> Result<SwarmState, Failure> {
        let store = self.deps.store.clone();
        let (which, ws) = (which.to_owned(), self.deps.workspace.clone());
        // The store answers on its own thread; a small runtime of our own waits for it.
        std::thread::spawn(move || {
            crate::block_on(async move { load_state(&store, &which, &ws).await })
        })
        .join()
        .unwrap_or_else(|_| Err(Failure::usage("reading the saved swarm failed")))
    }

    /// Starts the coordinator on the current runtime.
    pub fn launch(self, start: Start, options: Options) -> Running {
        let (events_tx, events) = mpsc::unbounded_channel();
        let (input, input_rx) = mpsc::unbounded_channel();
        let done = tokio::spawn(coordinator::run(
            start,
            self.config,
            self.deps,
            options,
            events_tx,
            input_rx,
        ));
        Running {
            events,
            input,
            done,
        }
    }
}

/// The flags every worker gets: the provider and endpoint, config, profile and
/// permissions of this run (the model and budget are the coordinator's to set).
fn worker_args(g: &GlobalArgs) -> Vec<String> {
    let mut out = Vec::new();
    let mut flag = |name: &str, value: Option<String>| {
        if let Some(v) = value {
            out.push(format!("--{name}"));
            out.push(v);
        }
    };
    flag("provider", g.provider.clone());
    flag("base-url", g.base_url.clone());
    flag("wire", g.wire.map(|w| w.to_string()));
    flag("config", g.config.as_ref().map(|p| p.display().to_string()));
    flag("profile", g.profile.clone());
    flag("permission", g.permission.clone());
    if g.yolo {
        out.push("--yolo".into());
    }
    if g.trust {
        out.push("--trust".into());
    }
    out
}

fn exit_code(state: &SwarmState) -> ExitCode {
    use atto_swarm::{SwarmStatus, TaskStatus};
    match state.status {
        SwarmStatus::Interrupted => ExitCode::Cancelled,
        SwarmStatus::Finished if state.tasks.iter().all(|t| t.status == TaskStatus::Passed) => {
            ExitCode::Ok
        }
        _ => ExitCode::Failed,
    }
}

async fn load_state(
    store: &atto_store::Store,
    which: &str,
    workspace: &std::path::Path,
) -> Result<SwarmState, Failure> {
    let ws = workspace.display().to_string();
    let found = if which == "latest" {
        store.latest_swarm(&ws).await
    } else {
        store.swarm(which).await
    };
    let row = found
        .map_err(|e| Failure::usage(e.to_string()))?
        .ok_or_else(|| {
            Failure::usage(format!(
                "no saved swarm {which} here (atto swarm status shows the latest)"
            ))
        })?;
    let state: SwarmState = serde_json::from_str(&row.state).map_err(|e| {
        Failure::usage(format!(
            "swarm {} is stored but its state cannot be read ({e}); it cannot be resumed",
            row.id
        ))
    })?;
    if state.workspace != ws {
        return Err(Failure::usage(format!(
            "swarm {} belongs to {}; run it from there",
            row.id, state.workspace
        )));
    }
    Ok(state)
}

fn status(
    id: Option<&str>,
    json: bool,
    workspace: Option<&std::path::Path>,
) -> Result<ExitCode, Failure> {
    let (workspace, _) = crate::setup::workspace(workspace)?;
    let store = crate::permissions::open_store().map_err(|e| {
        Failure::usage(match e {
            crate::permissions::OpenFailure::Busy(m)
            | crate::permissions::OpenFailure::Unusable(m) => m,
        })
    })?;
    let which = id.unwrap_or("latest");
    let state = crate::block_on(load_state(&store, which, &workspace))?;
    let loaded = SwarmConfig::load(&workspace).ok().map(|l| l.config);
    let caps = report::Caps {
        max_tokens: loaded.as_ref().and_then(|c| c.max_budget_tokens),
        max_usd: loaded.as_ref().and_then(|c| c.max_budget_usd),
    };
    let mut out = std::io::stdout().lock();
    if json {
        let _ = writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&report::json(&state, &caps)).unwrap_or_default()
        );
    } else {
        for line in report::status_lines(&state, &caps) {
            let _ = writeln!(out, "{line}");
        }
    }
    Ok(ExitCode::Ok)
}

/// How this run talks to its person.
pub(crate) struct Front {
    pub(crate) format: OutputFormat,
    pub(crate) input: InputFormat,
    pub(crate) on_ask: OnAsk,
    pub(crate) interactive: bool,
    pub(crate) host: Host,
}

/// Where the swarm runs from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Host {
    /// `atto swarm`: its own process; a second Ctrl-C exits at once.
    Command,
    /// `/swarm` in the line session: the session goes on after it, so Ctrl-C only stops
    /// the swarm.
    Session,
}

/// Where a person's answers come from.
pub(crate) enum Answers<'a> {
    /// Lines read from stdin by a task of their own (`atto swarm`).
    Spawned(mpsc::UnboundedReceiver<String>),
    /// The line session's stdin, read between its prompts.
    Session(&'a mut tokio::io::Lines<tokio::io::BufReader<tokio::io::Stdin>>),
    /// No one answers.
    Nobody,
}

impl Answers<'_> {
    /// The next line; `None` when input ended. Cancel-safe: a line half read is kept.
    async fn next(&mut self) -> Option<String> {
        match self {
            Answers::Spawned(lines) => lines.recv().await,
            Answers::Session(lines) => lines.next_line().await.ok().flatten(),
            Answers::Nobody => None,
        }
    }
}

impl Front {
    pub(crate) fn notice(&self, text: &str) {
        if self.format == OutputFormat::Text {
            eprintln!("atto: {text}");
        } else {
            self.print(&SwarmEvent::Notice { text: text.into() });
        }
    }

    fn print(&self, event: &SwarmEvent) {
        match self.format {
            OutputFormat::StreamJson => {
                let value = serde_json::to_value(event).unwrap_or_default();
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "{}", crate::render::tagged(value));
                let _ = out.flush();
            }
            OutputFormat::Json => {}
            OutputFormat::Text => {
                if let Some(line) = text_line(event) {
                    eprintln!("{line}");
                }
            }
        }
    }

    /// Prints events and answers what needs an answer until the coordinator ends.
    async fn drive(
        &self,
        events: mpsc::UnboundedReceiver<SwarmEvent>,
        input: mpsc::UnboundedSender<SwarmInput>,
    ) {
        // Lines from stdin: JSON inputs (stream-json) or a person's answers (terminal).
        let answers = if self.interactive || self.input == InputFormat::StreamJson {
            let (lines_tx, lines) = mpsc::unbounded_channel::<String>();
            tokio::spawn(async move {
                let mut reader = tokio::io::BufReader::new(tokio::io::stdin()).lines();
                while let Ok(Some(line)) = reader.next_line().await {
                    if lines_tx.send(line).is_err() {
                        break;
                    }
                }
            });
            Answers::Spawned(lines)
        } else {
            Answers::Nobody
        };
        self.converse(events, input, answers).await;
    }

    /// Prints events and answers what needs an answer from `answers` until the
    /// coordinator ends. A person's line is read only while a question waits for it, so
    /// lines typed ahead (and, in a session, the prompts after the swarm) wait their turn.
    pub(crate) async fn converse(
        &self,
        mut events: mpsc::UnboundedReceiver<SwarmEvent>,
        input: mpsc::UnboundedSender<SwarmInput>,
        mut answers: Answers<'_>,
    ) {
        let mut lines_open = !matches!(answers, Answers::Nobody);
        let json_input = self.input == InputFormat::StreamJson;
        let mut interrupts = 0u32;
        // What a terminal answer is for: the oldest question first.
        let mut questions: std::collections::VecDeque<Question> = Default::default();
        let mut last: Option<SwarmEvent> = None;
        let mut swarm_id: Option<String> = None;
        loop {
            tokio::select! {
                event = events.recv() => {
                    let Some(event) = event else { break };
                    if let SwarmEvent::Started { swarm_id: id, .. } = &event {
                        swarm_id = Some(id.clone());
                    }
                    self.print(&event);
                    if let Some(q) = self.question(&event, &input) {
                        if questions.is_empty() {
                            prompt(&q);
                        }
                        questions.push_back(q);
                    }
                    if matches!(event, SwarmEvent::Finished { .. }) {
                        last = Some(event);
                    }
                }
                line = answers.next(), if lines_open && (json_input || !questions.is_empty()) => {
                    let Some(line) = line else {
                        lines_open = false;
                        // No one is left to answer: what was asked follows --on-ask.
                        for q in questions.drain(..) {
                            self.unanswerable(q, &input);
                        }
                        continue;
                    };
                    if self.input == InputFormat::StreamJson {
                        match serde_json::from_str::<SwarmInput>(&line) {
                            Ok(i) => { let _ = input.send(i); }
                            Err(err) if !line.trim().is_empty() => {
                                self.notice(&format!("ignoring input line that is not a swarm input ({err}): {line}"));
                            }
                            Err(_) => {}
                        }
                    } else if let Some(q) = questions.pop_front() {
                        match answer(&q, line.trim()) {
                            Some(i) => { let _ = input.send(i); }
                            None => { questions.push_front(q); }
                        }
                        if let Some(next) = questions.front() {
                            prompt(next);
                        }
                    }
                }
                signal = tokio::signal::ctrl_c() => {
                    if signal.is_ok() {
                        interrupts += 1;
                        let resume = match &swarm_id {
                            Some(id) => format!("atto swarm --resume {}", &id[..id.len().min(8)]),
                            None => "atto swarm --resume".to_owned(),
                        };
                        match (interrupts, self.host) {
                            (1, Host::Command) => eprintln!(
                                "atto: stopping the workers; the swarm can be resumed with \
                                 {resume} (Ctrl-C again to exit at once)"
                            ),
                            (_, Host::Command) => {
                                eprintln!("atto: interrupted twice; exiting now (the swarm can be resumed with {resume})");
                                std::process::exit(ExitCode::Cancelled as i32);
                            }
                            (1, Host::Session) => eprintln!(
                                "atto: stopping the workers; the swarm can be resumed with \
                                 {resume}"
                            ),
                            (_, Host::Session) => eprintln!(
                                "atto: the swarm's workers are stopping; its summary follows"
                            ),
                        }
                        let _ = input.send(SwarmInput::Interrupt);
                    }
                }
            }
        }
        if self.format == OutputFormat::Json
            && let Some(event) = last
        {
            let value = serde_json::to_value(&event).unwrap_or_default();
            println!("{}", crate::render::tagged(value));
        }
    }

    /// What `event` asks of a person, when this front end asks one; otherwise answers it
    /// as configured.
    fn question(
        &self,
        event: &SwarmEvent,
        input: &mpsc::UnboundedSender<SwarmInput>,
    ) -> Option<Question> {
        let q = match event {
            SwarmEvent::Plan { tasks } => Question::Plan(tasks.len()),
            SwarmEvent::Permission {
                task_id,
                request,
                decision: None,
                ..
            } => Question::Approval {
                task_id: task_id.clone(),
                id: request.id.clone(),
                text: format!(
                    "{task_id} wants {} ({}): {}",
                    request.tool,
                    request.risk,
                    request.subject.lines().next().unwrap_or("")
                ),
                unsandboxed: request.unsandboxed,
            },
            SwarmEvent::InterventionNeeded { task_id, .. } => Question::Intervention {
                task_id: task_id.clone(),
            },
            _ => return None,
        };
        if self.input == InputFormat::StreamJson {
            // The driving process answers on stdin.
            return None;
        }
        if self.interactive {
            return Some(q);
        }
        self.unanswerable(q, input);
        None
    }

    /// Answers a question no person can answer.
    fn unanswerable(&self, q: Question, input: &mpsc::UnboundedSender<SwarmInput>) {
        let reply = match q {
            Question::Plan(_) => SwarmInput::Confirm { yes: true },
            Question::Approval {
                task_id,
                id,
                text,
                unsandboxed,
            } => {
                let decision = match self.on_ask {
                    OnAsk::Allow if !unsandboxed => ApprovalDecision::Yes,
                    OnAsk::Fail => {
                        self.notice(&format!(
                            "{text} needed approval; stopping the swarm (--on-ask fail)"
                        ));
                        let _ = input.send(SwarmInput::Interrupt);
                        ApprovalDecision::No { reason: None }
                    }
                    _ => ApprovalDecision::No {
                        reason: Some(
                            "this swarm runs headless and approvals are denied (--on-ask deny)"
                                .into(),
                        ),
                    },
                };
                SwarmInput::Approval {
                    task_id,
                    id,
                    decision,
                }
            }
            Question::Intervention { task_id } => {
                self.notice(&format!(
                    "{task_id} needs a person's decision and no one can be asked here; skipping it"
                ));
                SwarmInput::Intervention {
                    task_id,
                    answer: InterventionAnswer::Skip,
                }
            }
        };
        let _ = input.send(reply);
    }
}

/// Something the person is asked on the terminal.
enum Question {
    Plan(usize),
    Approval {
        task_id: String,
        id: String,
        text: String,
        unsandboxed: bool,
    },
    Intervention {
        task_id: String,
    },
}

fn prompt(q: &Question) {
    let text = match q {
        Question::Plan(n) => format!("Run these {n} tasks? [y/N] "),
        Question::Approval { text, .. } => format!("{text}\nAllow? [y/N] "),
        Question::Intervention { task_id } => format!(
            "{task_id} is stuck. [g]uidance TEXT (retry with it), [f]ixed (I fixed it: check \
             again), [s]kip: "
        ),
    };
    eprint!("{text}");
    let _ = std::io::stderr().flush();
}

/// The input a terminal answer gives; `None` when it is not an answer (asked again).
fn answer(q: &Question, line: &str) -> Option<SwarmInput> {
    let yes = matches!(line.to_ascii_lowercase().as_str(), "y" | "yes");
    match q {
        Question::Plan(_) => Some(SwarmInput::Confirm { yes }),
        Question::Approval { task_id, id, .. } => Some(SwarmInput::Approval {
            task_id: task_id.clone(),
            id: id.clone(),
            decision: if yes {
                ApprovalDecision::Yes
            } else {
                ApprovalDecision::No { reason: None }
            },
        }),
        Question::Intervention { task_id } => {
            let (word, rest) = line.split_once(' ').unwrap_or((line, ""));
            let answer = match word.to_ascii_lowercase().as_str() {
                "g" | "guidance" if !rest.trim().is_empty() => InterventionAnswer::Guidance {
                    text: rest.trim().to_owned(),
                },
                "f" | "fixed" => InterventionAnswer::Fixed,
                "s" | "skip" => InterventionAnswer::Skip,
                _ => return None,
            };
            Some(SwarmInput::Intervention {
                task_id: task_id.clone(),
                answer,
            })
        }
    }
}

/// One progress line per event worth a line.
fn text_line(event: &SwarmEvent) -> Option<String> {
    Some(match event {
        SwarmEvent::Started {
            swarm_id, resumed, ..
        } => format!(
            "swarm {swarm_id}{}",
            if *resumed { " (resumed)" } else { "" }
        ),
        SwarmEvent::Decomposed { tasks, .. } | SwarmEvent::Plan { tasks } => {
            let mut s = format!("plan: {} tasks", tasks.len());
            for t in tasks {
                let deps = if t.dependencies.is_empty() {
                    String::new()
                } else {
                    format!(" (after {})", t.dependencies.join(", "))
                };
                s.push_str(&format!(
                    "\n  {} [{}] {}{deps}",
                    t.id,
                    t.kind.as_str(),
                    t.description.lines().next().unwrap_or("")
                ));
            }
            if matches!(event, SwarmEvent::Plan { .. }) {
                return None;
            }
            s
        }
        SwarmEvent::Enriched {
            enriched,
            still_thin,
            ..
        } if !enriched.is_empty() || !still_thin.is_empty() => format!(
            "enriched: {}{}",
            if enriched.is_empty() {
                "none".into()
            } else {
                enriched.join(", ")
            },
            if still_thin.is_empty() {
                String::new()
            } else {
                format!("; still thin: {}", still_thin.join(", "))
            }
        ),
        SwarmEvent::TaskStarted {
            task_id,
            attempt,
            model,
            ..
        } => format!("▶ {task_id} attempt {attempt} ({model})"),
        SwarmEvent::TaskRetrying {
            task_id,
            attempt,
            delay_ms,
            reason,
        } => format!(
            "↻ {task_id} again in {:.1}s (attempt {attempt}): {}",
            *delay_ms as f64 / 1000.0,
            reason.lines().next().unwrap_or("")
        ),
        SwarmEvent::TaskPassed {
            task_id,
            attempts,
            score,
            ..
        } => format!(
            "✓ {task_id} passed ({attempts} attempt{}{})",
            if *attempts == 1 { "" } else { "s" },
            score.map(|s| format!(", score {s}/5")).unwrap_or_default()
        ),
        SwarmEvent::TaskFailed {
            task_id, reason, ..
        } => format!("✗ {task_id} failed: {reason}"),
        SwarmEvent::TaskSkipped { task_id, reason } => format!("⊘ {task_id} skipped: {reason}"),
        SwarmEvent::InterventionNeeded {
            task_id,
            attempts,
            last_error,
            ..
        } => format!("? {task_id} is stuck after {attempts} attempts: {last_error}"),
        SwarmEvent::ModelHealth {
            model,
            tripped,
            health,
        } => format!(
            "model {model}: {} (health {health}%)",
            if *tripped {
                "circuit breaker tripped, no dispatches"
            } else {
                "recovered"
            }
        ),
        SwarmEvent::Notice { text } => format!("atto: {text}"),
        SwarmEvent::Finished {
            swarm_id,
            status,
            passed,
            failed,
            skipped,
            tokens,
            cost_usd,
            report,
        } => format!(
            "swarm {swarm_id} {status}: {passed} passed, {failed} failed, {skipped} skipped · \
             {tokens} tokens{} · report {report}",
            cost_usd.map(|c| format!(" · ${c:.4}")).unwrap_or_default()
        ),
        _ => return None,
    })
}
