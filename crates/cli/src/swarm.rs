//! `atto swarm`: the swarm coordinator's command, on a terminal or headless. Sets the
//! coordinator up from the flags, the config and swarm.yaml (`Prepared`, also for `/swarm`
//! in a session), starts or resumes it, and hands it to `swarm_front`, which shows the
//! plan and asks to run it (or runs it with `--yes`, or when no one can be asked), prints
//! progress and passes questions to the person. A swarm file that is not trusted
//! (`swarm_trust`) is asked about once on a terminal and refused headless. `atto swarm
//! status [ID]` prints a saved swarm, `atto swarm report [ID] [--html]` its report.

use std::io::{IsTerminal as _, Write as _};
use std::sync::Arc;

use atto_llm::ClientOptions;
use atto_swarm::coordinator::{self, Deps, Options, Start};
use atto_swarm::{SwarmConfig, SwarmEvent, SwarmInput, SwarmState, report};
use clap::{Args, Subcommand};
use tokio::sync::mpsc;

use crate::swarm_trust::{UntrustedSwarmFile, shell_words, template_files};
use crate::{ExitCode, Failure, GlobalArgs};
use atto_line::swarm_front::{Front, Host};
use atto_line::{InputFormat, OnAsk, OutputFormat};

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
// The session's `--resume` is shared; here it names a saved swarm, not a session.
#[command(mut_arg("resume", |a| a.help(
    "Continue a saved swarm: its id, a unique prefix of it, or `latest` (bare: this \
     workspace's latest); its passed tasks are kept"
)))]
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
    /// Print a saved swarm's report as Markdown, or write it as one self-contained HTML
    /// page (timeline by worker, task graph, scores and checks, budget) and print its path.
    Report {
        /// Swarm id or unique prefix (default: this workspace's latest).
        id: Option<String>,
        /// Write the HTML page (`report.html` in the swarm's report folder) and print its
        /// path.
        #[arg(long)]
        html: bool,
        /// Write the HTML page here instead.
        #[arg(long, short = 'o', value_name = "FILE", requires = "html")]
        output: Option<std::path::PathBuf>,
        /// Workspace root.
        #[arg(long, value_name = "DIR")]
        workspace: Option<std::path::PathBuf>,
    },
    /// The remote side of a swarm attempt, started by its launcher (srun, ssh, or a
    /// `worker_command` with `launcher: command`): reads the attempt's base from stdin,
    /// runs COMMAND (`atto exec …`) in a clone of it under the temp dir, and writes its
    /// work back as a git bundle in the last stream-json line.
    Worker {
        /// The worker, after `--`.
        #[arg(last = true, required = true, value_name = "COMMAND")]
        command: Vec<String>,
    },
}

/// Runs `atto swarm …`.
pub fn run(args: SwarmArgs, global: &mut GlobalArgs) -> Result<ExitCode, Failure> {
    if let Some(command) = &args.command {
        return subcommand(command);
    }
    global.absorb(&args.session);
    let config = crate::load_config(global)?;
    let provider = crate::setup::provider(global, &config)?;
    let (workspace, _) = crate::setup::workspace(global.workspace.as_deref())?;
    let interactive = std::io::stdin().is_terminal() && args.input_format == InputFormat::Text;
    if let Some(untrusted) = UntrustedSwarmFile::find(&workspace)? {
        // Asked once, showing exactly what would run; no one to ask: refused.
        if !(interactive && untrusted.ask_on_terminal()?) {
            return Err(Failure::usage(untrusted.refusal()));
        }
    }
    let mut prepared = Prepared::new(global, &config, &provider, workspace)?;
    if let Some(n) = args.max_workers {
        prepared.config.max_workers = n;
    }
    let start = start(&prepared, global.resume.as_deref(), args.task.as_deref())?;
    let front = Front {
        format: args.output_format,
        input: args.input_format,
        on_ask: args.on_ask,
        interactive,
        host: Host::Command,
        worker_launch: prepared.worker_launch.clone(),
    };
    let run_options = Options {
        // No one can confirm a headless run with text input: it proceeds, like /auto.
        yes: args.yes || (!interactive && args.input_format == InputFormat::Text),
        backoff_unit_ms: args.backoff_unit_ms,
    };
    for warning in &prepared.warnings {
        front.notice(&format!("warning: {warning}"));
    }
    front.notice(&prepared.worker_launch);
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

/// `atto swarm status | report | worker`: what runs no swarm of its own.
fn subcommand(command: &SwarmCommand) -> Result<ExitCode, Failure> {
    match command {
        SwarmCommand::Status {
            id,
            json,
            workspace,
        } => status(id.as_deref(), *json, workspace.as_deref()),
        SwarmCommand::Report {
            id,
            html,
            output,
            workspace,
        } => {
            let format = match (html, output) {
                (false, _) => ReportFormat::Markdown,
                (true, None) => ReportFormat::Html(None),
                (true, Some(path)) => ReportFormat::Html(Some(path.clone())),
            };
            print_report(id.as_deref(), &format, workspace.as_deref())
        }
        SwarmCommand::Worker { command } => remote_worker(command),
    }
}

/// A new swarm for the task, or `--resume ID` to continue a saved one (bare: this
/// workspace's latest), whose passed tasks are not redone.
fn start(prepared: &Prepared, resume: Option<&str>, task: Option<&str>) -> Result<Start, Failure> {
    match (resume, task) {
        (Some(_), Some(_)) => Err(Failure::usage(
            "--resume continues a saved swarm; give no task with it",
        )),
        (Some(which), None) => {
            let which = if which.is_empty() { "latest" } else { which };
            Ok(Start::Resume(prepared.saved(which)?))
        }
        (None, Some(task)) if !task.trim().is_empty() => Ok(Start::New(task.to_owned())),
        _ => Err(Failure::usage(
            "no task given: atto swarm \"add input validation and its tests\" (or \
             --resume ID)",
        )),
    }
}

/// Everything a swarm needs before it starts, from the flags, the config and
/// swarm.yaml: for `atto swarm` and for `/swarm` in a session.
pub struct Prepared {
    /// The swarm's settings (swarm.yaml with the caps of the flags).
    pub config: SwarmConfig,
    /// What was odd in swarm.yaml.
    pub warnings: Vec<String>,
    /// How workers start and where that came from, shown with the plan.
    pub worker_launch: String,
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
        config: &atto_config::Config,
        provider: &atto_llm::ResolvedProvider,
        workspace: std::path::PathBuf,
    ) -> Result<Prepared, Failure> {
        let loaded = SwarmConfig::load(&workspace).map_err(|e| Failure::usage(e.to_string()))?;
        let worker_launch = worker_launch(&loaded);
        // Checked here too, on the text and files that are used: a file changed after it
        // was asked about is refused, not run.
        let runs = template_files(&loaded.config.worker_command.words, &workspace);
        if let Some(untrusted) = UntrustedSwarmFile::of(&loaded, &runs) {
            return Err(Failure::usage(untrusted.refusal()));
        }
        let mut swarm_config = loaded.config;
        // Each launch checks that the files it runs are still what was trusted.
        swarm_config.worker_command.pinned = runs;
        if let Some(t) = global.max_budget_tokens {
            swarm_config.max_budget_tokens = Some(t);
        }
        if let Some(d) = global.max_budget_usd {
            swarm_config.max_budget_usd = Some(d);
        }
        let store = open_swarm_store()?;
        let (model, judge) = models(config, provider, &swarm_config)?;
        if swarm_config.isolation == atto_swarm::Isolation::Worktree
            && !workspace.join(".git").exists()
        {
            return Err(Failure::usage(format!(
                "isolation: worktree needs a git repository, and {} is not one",
                workspace.display()
            )));
        }
        let mut warnings = loaded.warnings;
        let sandbox = checks_sandbox(config, &workspace, &mut warnings);
        let report_dir = report_dir(&workspace);
        let deps = Deps {
            store,
            model,
            judge,
            sandbox,
            atto: std::env::current_exe()
                .map(|p| p.display().to_string())
                .unwrap_or_else(|_| "atto".into()),
            worker_args: worker_args(global),
            default_model: provider.model.clone(),
            workspace,
            report_dir,
            max_output_tokens: config.limits.max_output_tokens,
            learning: learning_limits(config),
        };
        Ok(Prepared {
            config: swarm_config,
            warnings,
            worker_launch,
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

/// The line `atto swarm` shows before it starts: what each worker's process will be.
fn worker_launch(loaded: &atto_swarm::Loaded) -> String {
    match &loaded.path {
        Some(path) if !loaded.config.worker_command.words.is_empty() => format!(
            "workers start with: {} (worker_command of {})",
            shell_words(&loaded.config.worker_command.words),
            path.display()
        ),
        _ => "workers start with: {atto} exec {args} (atto's own worker)".to_owned(),
    }
}

/// The database the swarm saves its state in; a swarm cannot run without it.
fn open_swarm_store() -> Result<atto_store::Store, Failure> {
    crate::permissions::open_store().map_err(|e| {
        Failure::usage(format!(
            "the swarm needs the database to save its state: {}",
            match e {
                crate::permissions::OpenFailure::Busy(m)
                | crate::permissions::OpenFailure::Unusable(m) => m,
            }
        ))
    })
}

type Model = Arc<dyn atto_llm::ModelClient>;

/// The decomposer's model and the judge's, if there is one: a name in the swarm file picks a
/// configured model, an empty one the session's.
fn models(
    config: &atto_config::Config,
    provider: &atto_llm::ResolvedProvider,
    swarm: &atto_swarm::SwarmConfig,
) -> Result<(Model, Option<Model>), Failure> {
    let options = ClientOptions {
        retry: config.retry_policy(),
        ..ClientOptions::default()
    };
    let client =
        atto_llm::connect(provider, options.clone()).map_err(|e| Failure::usage(e.to_string()))?;
    let connect = crate::models::connector(provider, config, options);
    let named = |name: &str| -> Result<Model, Failure> {
        if name.is_empty() {
            Ok(client.clone())
        } else {
            connect(name).map_err(|e| Failure::usage(format!("model {name}: {e}")))
        }
    };
    let model = named(&swarm.models.decomposer)?;
    // The judge is a model the person named: an empty `quality_gate_model` means no
    // judge, never the session's model billed once more for every attempt.
    let judge_model = &swarm.quality.quality_gate_model;
    let judge = if swarm.quality.quality_gates && !judge_model.is_empty() {
        Some(named(judge_model)?)
    } else {
        None
    };
    Ok((model, judge))
}

/// The sandbox the quality checks' commands run in, per directory. The checks' commands run
/// under the OS sandbox of the directory they check; where there is none, the coordinator
/// puts each of them to the person, and `warnings` says so.
fn checks_sandbox(
    config: &atto_config::Config,
    workspace: &std::path::Path,
    warnings: &mut Vec<String>,
) -> coordinator::SandboxFor {
    let (network, unix) = (
        config.allow_network.unwrap_or(false),
        config.allow_unix_sockets.unwrap_or(false),
    );
    let main_sandbox = crate::setup::sandbox_with(workspace, network, unix);
    if let Err(err) = &main_sandbox {
        warnings.push(format!(
            "there is no OS sandbox for the quality checks' commands (tests, type checks): \
             {err}; each one asks before it runs WITHOUT it, and is refused where no one \
             can be asked"
        ));
    }
    // The workspace's sandbox is made once; a worktree's when the worktree is made.
    let main_dir = workspace.to_path_buf();
    Arc::new(move |dir: &std::path::Path| {
        if dir == main_dir {
            main_sandbox.clone()
        } else {
            crate::setup::sandbox_with(dir, network, unix)
        }
    })
}

/// What the learning store may hold and validate on its own, or `None` when learning is off.
fn learning_limits(config: &atto_config::Config) -> Option<atto_store::LearningLimits> {
    let l = crate::config::learning_settings(config);
    l.enabled.then_some(atto_store::LearningLimits {
        auto_validate_threshold: l.auto_validate_threshold,
        max_learnings: l.max_learnings,
    })
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

/// Where swarms' reports (and their coordinators' locks) live.
fn report_dir(workspace: &std::path::Path) -> std::path::PathBuf {
    atto_store::default_path()
        .ok()
        .and_then(|p| p.parent().map(|d| d.join("swarms")))
        .unwrap_or_else(|| workspace.join(".atto/swarms"))
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

/// `atto swarm worker -- COMMAND…`: the node's scratch is the temp dir (`TMPDIR`, which
/// Slurm sites point at node-local disk), its clones kept in `atto-worker-pool` there; in
/// a Slurm job it names its node (`SLURMD_NODENAME`).
fn remote_worker(command: &[String]) -> Result<ExitCode, Failure> {
    use atto_swarm::remote::checkout::{Node, Served, serve};
    let node = Node {
        clones: node_clones(&std::env::temp_dir()),
        name: std::env::var("SLURMD_NODENAME").ok(),
    };
    crate::block_on(async move {
        let served = serve(tokio::io::stdin(), tokio::io::stdout(), command, &node).await;
        match served {
            Ok(Served::Returned(0)) => Ok(ExitCode::Ok),
            Ok(Served::Returned(_)) => Ok(ExitCode::Failed),
            Ok(Served::NotReturned(_, why)) => {
                eprintln!("atto swarm worker: the work was not sent back: {why}");
                Ok(ExitCode::Failed)
            }
            Err(message) => Err(Failure {
                code: ExitCode::Failed,
                message: format!("atto swarm worker: {message}"),
            }),
        }
    })
}

/// The node's pool of clones, made if missing; a fresh clone per attempt when the pool is
/// not a directory of this user's alone (a shared temp dir: another user's files must
/// never become an attempt's checkout).
fn node_clones(scratch: &std::path::Path) -> atto_swarm::remote::checkout::Clones {
    use atto_swarm::remote::checkout::Clones;
    use std::os::unix::fs::{DirBuilderExt as _, MetadataExt as _};
    let pool = scratch.join("atto-worker-pool");
    let _ = std::fs::DirBuilder::new().mode(0o700).create(&pool);
    let ours = match (pool.symlink_metadata(), std::fs::metadata("/proc/self")) {
        (Ok(dir), Ok(me)) => dir.is_dir() && dir.uid() == me.uid() && dir.mode() & 0o077 == 0,
        _ => false,
    };
    if ours {
        Clones::Pooled(pool)
    } else {
        Clones::Fresh(scratch.to_owned())
    }
}

/// A saved swarm as the report commands show it, with the caps of this workspace's swarm
/// file; `stale` when its coordinator is gone without having saved that.
struct Saved {
    state: SwarmState,
    caps: report::Caps,
    stale: bool,
    report_dir: std::path::PathBuf,
}

fn saved(id: Option<&str>, workspace: Option<&std::path::Path>) -> Result<Saved, Failure> {
    let (workspace, _) = crate::setup::workspace(workspace)?;
    let store = crate::permissions::open_store().map_err(|e| {
        Failure::usage(match e {
            crate::permissions::OpenFailure::Busy(m)
            | crate::permissions::OpenFailure::Unusable(m) => m,
        })
    })?;
    let which = id.unwrap_or("latest");
    let mut state = crate::block_on(load_state(&store, which, &workspace))?;
    // A run whose coordinator is gone (killed, the machine restarted) never saved
    // "interrupted"; its lock, released by the kernel, says so.
    let stale = matches!(
        state.status,
        atto_swarm::SwarmStatus::Running | atto_swarm::SwarmStatus::Planned
    ) && !atto_swarm::liveness::is_running(&report_dir(&workspace), &state.id);
    if stale {
        state.status = atto_swarm::SwarmStatus::Interrupted;
    }
    let loaded = SwarmConfig::load(&workspace).ok().map(|l| l.config);
    let caps = report::Caps {
        max_tokens: loaded.as_ref().and_then(|c| c.max_budget_tokens),
        max_usd: loaded.as_ref().and_then(|c| c.max_budget_usd),
    };
    Ok(Saved {
        state,
        caps,
        stale,
        report_dir: report_dir(&workspace),
    })
}

/// What `atto swarm report` prints.
enum ReportFormat {
    Markdown,
    /// The HTML page, written to the swarm's report folder or to this file.
    Html(Option<std::path::PathBuf>),
}

fn print_report(
    id: Option<&str>,
    format: &ReportFormat,
    workspace: Option<&std::path::Path>,
) -> Result<ExitCode, Failure> {
    let Saved {
        state,
        caps,
        report_dir,
        ..
    } = saved(id, workspace)?;
    let mut out = std::io::stdout().lock();
    let path = match format {
        ReportFormat::Markdown => {
            let _ = write!(out, "{}", report::markdown(&state, &caps));
            return Ok(ExitCode::Ok);
        }
        ReportFormat::Html(Some(path)) => path.clone(),
        ReportFormat::Html(None) => report_dir.join(&state.id).join("report.html"),
    };
    let written = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => std::fs::create_dir_all(dir),
        _ => Ok(()),
    }
    .and_then(|()| std::fs::write(&path, report::html::page(&state, &caps)));
    if let Err(e) = written {
        return Err(Failure::usage(format!(
            "the HTML report could not be written to {} ({e}); nothing was written — give another file with -o",
            path.display()
        )));
    }
    let _ = writeln!(out, "{}", path.display());
    Ok(ExitCode::Ok)
}

fn status(
    id: Option<&str>,
    json: bool,
    workspace: Option<&std::path::Path>,
) -> Result<ExitCode, Failure> {
    let Saved {
        state, caps, stale, ..
    } = saved(id, workspace)?;
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
        if stale {
            let _ = writeln!(
                out,
                "interrupted — its coordinator is gone; resume with `atto swarm --resume {}`",
                state.id.get(..8).unwrap_or(&state.id)
            );
        }
    }
    Ok(ExitCode::Ok)
}
