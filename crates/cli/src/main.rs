//! The `atto` binary: parses the command line and wires front ends to the engine.
//! Nothing here decides behaviour; it only connects the crates that do.

mod acp;
mod admin;
mod checkpoints_cmd;
mod config;
mod demo;
mod exec;
mod learnings;
mod mcp;
mod models;
mod permissions;
mod pipe;
mod plan_cmd;
mod setup;
mod swarm;
mod swarm_session;
mod swarm_trust;
mod swebench;
mod trust;
mod tui;

use std::path::PathBuf;

use atto_llm::Wire;
use atto_protocol::AgentMode;
use clap::{Args, Parser, Subcommand};

use crate::permissions::PermissionFlags;
use crate::setup::{Launch, LimitFlags, SetupError};
use atto_config::{Config, Loaded};

#[derive(Debug, Parser)]
#[command(
    name = "atto",
    version = concat!(env!("CARGO_PKG_VERSION"), " (", env!("ATTO_COMMIT"), ")"),
    about = "A terminal AI coding agent that does exactly what it says."
)]
struct Cli {
    #[command(flatten)]
    global: GlobalArgs,
    #[command(subcommand)]
    command: Option<Command>,
    /// A first prompt for the interactive session.
    prompt: Option<String>,
    /// One-shot: run TEXT like `atto exec TEXT`, print the answer and exit.
    #[arg(
        short = 'p',
        long = "prompt",
        id = "one_shot",
        value_name = "TEXT",
        conflicts_with = "prompt"
    )]
    one_shot: Option<String>,
    /// Line-oriented session even on a terminal: each stdin line is a prompt or a slash
    /// command (also what runs when stdin or stdout is not a terminal).
    #[arg(long)]
    plain: bool,
    /// How the line session prints events.
    #[arg(long, value_enum, default_value_t = atto_line::LineFormat::Text)]
    output_format: atto_line::LineFormat,
}

/// The options of a session: model, permissions, modes, resuming. Given before the
/// subcommand or after it (`atto --model m exec …`, `atto exec --model m …`); only the
/// commands that start a session take them.
#[derive(Debug, Args, Default, Clone)]
pub struct GlobalArgs {
    /// Provider: openai, anthropic, deepseek, openrouter, ollama, lmstudio, vllm, or a
    /// [providers.NAME] table from the config.
    #[arg(long, value_name = "NAME")]
    pub provider: Option<String>,
    /// Model id to send to the provider.
    #[arg(long, value_name = "MODEL")]
    pub model: Option<String>,
    /// Base URL of an OpenAI- or Anthropic-compatible endpoint.
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// Wire protocol: chat, responses or anthropic.
    #[arg(long, value_name = "WIRE", value_parser = parse_wire)]
    pub wire: Option<Wire>,
    /// Config file to use instead of ~/.config/atto/config.toml.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Workspace root (default: the enclosing git repository, else the current directory).
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// Permission mode: strict, interactive (default), auto-safe or yolo; also the approval
    /// modes suggest (= interactive), auto (= auto-safe) and never (every question answered no).
    #[arg(long, value_name = "MODE")]
    pub permission: Option<String>,
    /// Shorthand for --permission yolo: run everything without asking (implies --trust).
    #[arg(long)]
    pub yolo: bool,
    /// Trust mode: file tools may reach outside the workspace.
    #[arg(long)]
    pub trust: bool,
    /// Agent mode: build (default; alias agent), plan (writes are queued for approval),
    /// review (read-only), debug (reads and test commands); yolo is build without asking.
    #[arg(long, value_name = "MODE", value_parser = parse_mode)]
    pub mode: Option<(AgentMode, bool)>,
    /// Resume a saved session: its id, a unique prefix of it, or `latest`. Without an id,
    /// the terminal UI shows a picker of this workspace's sessions.
    #[arg(
        short = 'r',
        long = "resume",
        value_name = "ID",
        num_args = 0..=1,
        default_missing_value = ""
    )]
    pub resume: Option<String>,
    /// Write every model exchange (requests with keys redacted, responses, stream events
    /// with timings, retries) to a log under the data dir; also ATTO_LOG=debug.
    #[arg(long)]
    pub debug: bool,
    /// Resume the most recent session of this workspace.
    #[arg(short = 'c', long = "continue", conflicts_with = "resume")]
    pub continue_latest: bool,
    /// Use the settings of `[profiles.NAME]` in the config (flags still win).
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,
    /// Tokens the whole session may use, its subagents included; no model call that
    /// could cross it is sent.
    #[arg(long, value_name = "N")]
    pub max_budget_tokens: Option<u64>,
    /// US dollars the whole session may spend, its subagents included (needs models
    /// with a known price).
    #[arg(long, value_name = "USD")]
    pub max_budget_usd: Option<f64>,
    /// Subagents running at once (1-20).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=20))]
    pub max_subagents: Option<u32>,
}

impl GlobalArgs {
    /// Takes what the subcommand was given (after its name) over what came before it.
    fn absorb(&mut self, sub: &GlobalArgs) {
        let pick = |a: &mut Option<String>, b: &Option<String>| {
            if b.is_some() {
                a.clone_from(b);
            }
        };
        pick(&mut self.provider, &sub.provider);
        pick(&mut self.model, &sub.model);
        pick(&mut self.base_url, &sub.base_url);
        pick(&mut self.permission, &sub.permission);
        pick(&mut self.resume, &sub.resume);
        pick(&mut self.profile, &sub.profile);
        self.wire = sub.wire.or(self.wire);
        self.mode = sub.mode.or(self.mode);
        self.config = sub.config.clone().or(self.config.take());
        self.workspace = sub.workspace.clone().or(self.workspace.take());
        self.yolo |= sub.yolo;
        self.trust |= sub.trust;
        self.debug |= sub.debug;
        self.continue_latest |= sub.continue_latest;
        self.max_budget_tokens = sub.max_budget_tokens.or(self.max_budget_tokens);
        self.max_budget_usd = sub.max_budget_usd.or(self.max_budget_usd);
        self.max_subagents = sub.max_subagents.or(self.max_subagents);
    }

    /// Which saved session to resume, if any. A bare `-r` (the picker) is an error here:
    /// only the terminal UI can show the picker.
    fn resume_ref(&self) -> Result<Option<atto_store::SessionRef>, Failure> {
        if self.continue_latest {
            return Ok(Some(atto_store::SessionRef::Latest));
        }
        match self.resume.as_deref() {
            None => Ok(None),
            Some("") => Err(Failure::usage(
                "-r without an id opens a session picker, which needs a terminal; give a \
                 session id, a prefix of one, or `latest` (`atto sessions` lists them)",
            )),
            Some("latest") => Ok(Some(atto_store::SessionRef::Latest)),
            Some(id) => Ok(Some(atto_store::SessionRef::Id(id.to_owned()))),
        }
    }

    /// A bare `-r`: the user wants to pick a session.
    fn wants_picker(&self) -> bool {
        self.resume.as_deref() == Some("") && !self.continue_latest
    }
}

impl GlobalArgs {
    /// The agent mode asked for (build by default).
    fn agent_mode(&self) -> AgentMode {
        self.mode.map_or(AgentMode::Build, |(mode, _)| mode)
    }

    fn budget_flags(&self) -> setup::BudgetFlags {
        setup::BudgetFlags {
            max_budget_tokens: self.max_budget_tokens,
            max_budget_usd: self.max_budget_usd,
            max_subagents: self.max_subagents,
        }
    }

    fn permission_flags(&self) -> PermissionFlags {
        PermissionFlags {
            permission: self.permission.clone(),
            yolo: self.yolo || self.mode.is_some_and(|(_, yolo)| yolo),
            trust: self.trust,
        }
    }
}

fn parse_mode(s: &str) -> Result<(AgentMode, bool), String> {
    atto_policy::gate::parse_agent_mode(s)
}

fn parse_wire(s: &str) -> Result<Wire, String> {
    s.parse::<Wire>()
        .map_err(|_| format!("unknown wire '{s}' (expected chat, responses or anthropic)"))
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run one task without a terminal and exit (0 done, 1 failed, 2 bad usage or
    /// config, 75 retryable infrastructure failure, 130 cancelled).
    Exec(exec::ExecArgs),
    /// Serve the Agent Client Protocol on stdin/stdout for an editor (Zed, JetBrains …):
    /// JSON-RPC only on stdout, logs on stderr.
    Acp(acp::AcpArgs),
    /// Watch the whole agent loop run offline against a scripted model.
    Demo(demo::DemoArgs),
    /// Inspect the policy: `atto policy explain -- CMD` shows how a command is judged.
    #[command(subcommand)]
    Policy(admin::PolicyCommand),
    /// List or revoke saved "always allow" grants.
    Grants(admin::GrantsArgs),
    /// List saved sessions of this workspace, show or export one.
    Sessions(admin::SessionsArgs),
    /// This workspace's learnings: list, show, validate, reject, archive, export, import
    /// (a JSON export, or Attocode's learnings database with --attocode).
    Learnings(learnings::LearningsArgs),
    /// Copy a saved session into a new one that records its parent and fork point.
    Fork(admin::ForkArgs),
    /// Review a saved session's pending plan without a model: show it, approve or reject
    /// changes (0 done, 1 a change failed or conflicted, 2 bad usage or nothing pending).
    Plan(plan_cmd::PlanArgs),
    /// Look after the database: `atto store move-aside` sets a damaged one aside.
    #[command(subcommand)]
    Store(admin::StoreCommand),
    /// MCP servers: `atto mcp list`, `tools [NAME]`, `test NAME [TOOL ARGS]`, `trust`,
    /// `untrust`.
    #[command(subcommand)]
    Mcp(mcp::McpCommand),
    /// Trust project files that can start a process or widen atto (`.mcp.json`, swarm
    /// file, agents, scripts a launch template runs) as they are now, or accept an
    /// instruction file a command wrote: `atto trust [FILE…]`, `--list`.
    Trust(trust::TrustArgs),
    /// Revoke the trust in project files: `atto untrust FILE…`.
    Untrust(trust::UntrustArgs),
    /// Split a task among parallel workers, check every result, retry with structure:
    /// `atto swarm "task"`, `atto swarm --resume ID`, `atto swarm status [ID]`.
    Swarm(swarm::SwarmArgs),
    /// Benchmarks: `atto swebench run` solves SWE-bench instances into a predictions file.
    #[command(subcommand)]
    Swebench(swebench::SwebenchCommand),
    /// Print a shell completion script: `atto completion bash > ~/.local/share/bash-completion/completions/atto`.
    Completion {
        /// bash, zsh, fish, elvish or powershell.
        shell: clap_complete::Shell,
    },
    /// The configuration in effect: `atto config show` prints every value and where it
    /// came from; `atto config reference` documents every key.
    #[command(subcommand)]
    Config(ConfigCommand),
    /// This workspace's file checkpoints: `atto checkpoints list`, `gc` (apply
    /// `[checkpoints]` retention now), `prune --keep-days N`.
    #[command(subcommand)]
    Checkpoints(checkpoints_cmd::CheckpointsCommand),
    /// The file watcher that outlives a session, so that the next session's first checkpoint
    /// of a large workspace need not walk it; atto starts it itself.
    #[command(name = "checkpoints-watch", hide = true)]
    CheckpointsWatch {
        /// The side repository of the workspace's checkpoints.
        #[arg(long)]
        side: PathBuf,
        /// The workspace.
        #[arg(long)]
        workspace: PathBuf,
    },
}

#[derive(Debug, Subcommand)]
enum ConfigCommand {
    /// Every effective setting with its origin (flag, profile, config file, default).
    Show,
    /// The reference of every key (type, default, where it may be set) as Markdown: the
    /// README's configuration reference.
    Reference,
}

/// Process exit codes (DESIGN.md §5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitCode {
    Ok = 0,
    Failed = 1,
    Usage = 2,
    Retryable = 75,
    Cancelled = 130,
}

/// A failure before or outside a session, reported as one line.
#[derive(Debug)]
pub struct Failure {
    code: ExitCode,
    message: String,
}

impl Failure {
    pub fn usage(message: impl Into<String>) -> Self {
        Self {
            code: ExitCode::Usage,
            message: message.into(),
        }
    }
}

impl From<SetupError> for Failure {
    fn from(err: SetupError) -> Self {
        Failure {
            code: match err.1 {
                setup::Retry::No => ExitCode::Usage,
                setup::Retry::Later => ExitCode::Retryable,
            },
            message: err.0,
        }
    }
}

impl From<atto_config::ConfigError> for Failure {
    fn from(err: atto_config::ConfigError) -> Self {
        Failure::usage(err.to_string())
    }
}

fn main() {
    pipe::exit_quietly_when_stdout_closes();
    let cli = Cli::parse();
    let code = match run(cli) {
        Ok(code) => code,
        Err(failure) => {
            eprintln!("atto: {}", failure.message);
            failure.code
        }
    };
    // MCP servers run in their own process groups: end them with atto.
    atto_mcp::kill_all_servers();
    // What this process's sessions changed in instruction files waits for the user.
    trust::instructions::close_own();
    std::process::exit(code as i32);
}

/// A single-threaded runtime: atto's work is I/O-bound and one thread keeps start-up
/// and memory small.
fn runtime() -> Result<tokio::runtime::Runtime, Failure> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure {
            code: ExitCode::Failed,
            message: format!("cannot start the async runtime: {e}"),
        })
}

/// Runs `future` to the end on a fresh runtime, then drops the runtime without waiting
/// for blocking reads (stdin) that may never finish.
fn block_on<T>(
    future: impl std::future::Future<Output = Result<T, Failure>>,
) -> Result<T, Failure> {
    let runtime = runtime()?;
    let result = runtime.block_on(future);
    runtime.shutdown_background();
    result
}

/// The user config with `--profile` applied; a profile's agent mode fills `--mode` when
/// none was given.
fn load_config(global: &mut GlobalArgs) -> Result<Config, Failure> {
    load(global).map(|loaded| loaded.config)
}

/// [`load_config`] with the layers each value came from, for `atto config show`.
fn load(global: &mut GlobalArgs) -> Result<Loaded, Failure> {
    let loaded = Loaded::read(global.config.as_deref(), global.profile.as_deref())?;
    if let (Some(name), Some(mode)) = (&global.profile, &loaded.mode)
        && global.mode.is_none()
    {
        global.mode =
            Some(parse_mode(mode).map_err(|e| Failure::usage(format!("profile {name}: {e}")))?);
    }
    Ok(loaded)
}

fn run(mut cli: Cli) -> Result<ExitCode, Failure> {
    take_one_shot(&mut cli)?;
    absorb_session_flags(&mut cli);
    match cli.command.take() {
        None => interactive(cli),
        Some(Command::Fork(args)) if args.id.is_none() && !args.last && use_tui(&cli) => {
            let config = load_config(&mut cli.global)?;
            let provider = setup::provider(&cli.global, &config)?;
            let (workspace, cwd) = setup::workspace(cli.global.workspace.as_deref())?;
            let entry = tui::Entry::Fork { label: args.label };
            tui::start(&cli, &config, &provider, workspace, cwd, entry)
        }
        Some(command) => run_command(command, &mut cli.global),
    }
}

/// `-p TEXT` is `atto exec TEXT`, and stands alone.
fn take_one_shot(cli: &mut Cli) -> Result<(), Failure> {
    if let Some(task) = cli.one_shot.take() {
        if cli.command.is_some() {
            return Err(Failure::usage(
                "-p runs one task on its own; give it without a subcommand (or use atto exec)",
            ));
        }
        cli.command = Some(Command::Exec(exec::ExecArgs::one_shot(task)));
    }
    Ok(())
}

/// Takes the session flags given after a subcommand's name over those given before it.
fn absorb_session_flags(cli: &mut Cli) {
    let session = match &cli.command {
        Some(Command::Exec(args)) => Some(args.session.clone()),
        Some(Command::Acp(args)) => Some(args.session.clone()),
        Some(Command::Fork(args)) => Some(args.session.clone()),
        Some(Command::Plan(args)) => Some(args.session.clone()),
        Some(Command::Grants(args)) => Some(GlobalArgs {
            workspace: args.workspace.clone(),
            ..GlobalArgs::default()
        }),
        Some(Command::Sessions(args)) => Some(GlobalArgs {
            workspace: args.workspace.clone(),
            ..GlobalArgs::default()
        }),
        Some(Command::Learnings(args)) => Some(GlobalArgs {
            workspace: args.workspace.clone(),
            ..GlobalArgs::default()
        }),
        _ => None,
    };
    if let Some(session) = session {
        cli.global.absorb(&session);
    }
}

/// A subcommand, with the session flags it was given.
fn run_command(command: Command, global: &mut GlobalArgs) -> Result<ExitCode, Failure> {
    let workspace = |global: &GlobalArgs| setup::workspace(global.workspace.as_deref());
    match command {
        // Commands that need no async runtime and no model.
        Command::Policy(command) => admin::policy(command),
        Command::Store(command) => admin::store(command),
        Command::Grants(args) => admin::grants(args, &workspace(global)?.0),
        Command::Sessions(args) => admin::sessions(args, &workspace(global)?.0),
        Command::Fork(args) => admin::fork(args, &workspace(global)?.0),
        Command::Trust(args) => trust::trust(&args, &workspace(global)?.0),
        Command::Untrust(args) => trust::untrust(&args, &workspace(global)?.0),
        Command::Learnings(args) => {
            let config = load_config(global)?;
            let (workspace, _) = workspace(global)?;
            learnings::run(args, &workspace, &config::learning_settings(&config))
        }
        Command::Mcp(mcp::McpCommand::Serve(args)) => {
            // Session flags after `serve` count as if given before `mcp`.
            global.absorb(&args.session);
            mcp::serve(&args, global, &workspace(global)?.0)
        }
        Command::Mcp(command) => {
            let config = load_config(global)?;
            mcp::run(command, &config, &workspace(global)?.0)
        }
        Command::Checkpoints(command) => {
            let config = load_config(global)?;
            checkpoints_cmd::run(command, &config, &workspace(global)?.0)
        }
        Command::CheckpointsWatch { side, workspace } => setup::watch_daemon(&side, &workspace),
        Command::Config(command) => config_command(command, global),
        Command::Completion { shell } => {
            use clap::CommandFactory as _;
            clap_complete::generate(shell, &mut Cli::command(), "atto", &mut std::io::stdout());
            Ok(ExitCode::Ok)
        }
        Command::Swebench(command) => swebench::run(command, global),
        Command::Swarm(args) => swarm::run(args, global),
        Command::Plan(args) => plan_cmd::run(args, global),
        Command::Acp(_) => acp::run(global),
        Command::Demo(args) => block_on(demo::run(args, global.wire)),
        Command::Exec(args) => exec_command(&args, global),
    }
}

/// `atto config show` and `atto config reference`.
fn config_command(command: ConfigCommand, global: &mut GlobalArgs) -> Result<ExitCode, Failure> {
    match command {
        ConfigCommand::Show => {
            let flags = config::flags(global);
            let loaded = load(global)?;
            config::show(&loaded, &flags);
        }
        ConfigCommand::Reference => print!("{}", atto_config::reference()),
    }
    Ok(ExitCode::Ok)
}

/// `atto exec`: one task without a terminal.
fn exec_command(args: &exec::ExecArgs, global: &mut GlobalArgs) -> Result<ExitCode, Failure> {
    let config = load_config(global)?;
    let task = exec::task_text(args)?;
    let provider = setup::provider(global, &config)?;
    let (workspace, cwd) = setup::workspace(global.workspace.as_deref())?;
    let limits = LimitFlags {
        max_rounds: args.max_rounds,
        max_duration_secs: args.timeout,
    };
    block_on(async {
        let (handle, session_id) = setup::start(Launch {
            limits,
            resume: global.resume_ref()?,
            unsandboxed_commands: args.allow_unsandboxed.clone(),
            ..Launch::of(global, &provider, &config, workspace, cwd)
        })?;
        let options = exec::RunOptions {
            format: args.output_format,
            input: args.input_format,
            on_ask: args.on_ask,
            stop_on_stdin_close: args.stop_on_stdin_close,
        };
        Ok(exec::run(handle, &session_id, task, options).await)
    })
}

/// `atto` without a subcommand: the terminal UI, or the line session.
fn interactive(mut cli: Cli) -> Result<ExitCode, Failure> {
    let config = load_config(&mut cli.global)?;
    let provider = setup::provider(&cli.global, &config)?;
    let (workspace, cwd) = setup::workspace(cli.global.workspace.as_deref())?;
    let yolo = cli.global.yolo || cli.global.mode.is_some_and(|(_, yolo)| yolo);
    let trust = cli.global.trust || yolo;
    let mode = cli.global.agent_mode();
    if use_tui(&cli) {
        return tui::start(
            &cli,
            &config,
            &provider,
            workspace,
            cwd,
            tui::Entry::Session,
        );
    }
    let resume = cli.global.resume_ref()?;
    let workspace_root = workspace.clone();
    block_on(async {
        let (handle, _) = setup::start(Launch {
            resume,
            ..Launch::of(&cli.global, &provider, &config, workspace, cwd)
        })?;
        let swarm = swarm_session::SessionSwarm {
            global: cli.global.clone(),
            config: config.clone(),
            provider: provider.clone(),
            workspace: workspace_root,
        };
        let outcome = atto_line::run(
            handle,
            cli.prompt,
            atto_line::Options {
                trust,
                mode,
                format: cli.output_format,
                swarm: Box::new(swarm),
                facts: exec::FACTS,
            },
        )
        .await;
        Ok(match outcome {
            atto_line::Outcome::Finished => ExitCode::Ok,
            atto_line::Outcome::SessionLost => ExitCode::Failed,
        })
    })
}

/// The full-screen interface runs when both ends are a terminal that can draw it, and
/// neither `--plain` nor a machine output format was asked for.
fn use_tui(cli: &Cli) -> bool {
    use std::io::IsTerminal as _;
    !cli.plain
        && cli.output_format == atto_line::LineFormat::Text
        && std::io::stdin().is_terminal()
        && std::io::stdout().is_terminal()
        && std::env::var("TERM").map_or(true, |t| t != "dumb")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Cli {
        Cli::try_parse_from(args).unwrap_or_else(|e| panic!("{args:?}: {e}"))
    }

    #[test]
    fn options_before_a_subcommand_do_not_turn_it_into_a_prompt() {
        let cli = parse(&["atto", "--model", "m", "sessions"]);
        assert!(matches!(cli.command, Some(Command::Sessions(_))));
        assert_eq!(cli.prompt, None);
        let cli = parse(&["atto", "--model", "m", "fork", "--last"]);
        assert!(matches!(cli.command, Some(Command::Fork(_))));
        let cli = parse(&["atto", "--provider", "ollama", "exec", "fix it"]);
        assert!(matches!(cli.command, Some(Command::Exec(_))));
        // Anything else is the first prompt.
        let cli = parse(&["atto", "--model", "m", "fix the failing test"]);
        assert!(cli.command.is_none());
        assert_eq!(cli.prompt.as_deref(), Some("fix the failing test"));
        // A bare -r (the picker) still works before a prompt-less start.
        let cli = parse(&["atto", "-r"]);
        assert!(cli.global.wants_picker());
    }
}
