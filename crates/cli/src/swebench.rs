//! `atto swebench run`'s command line: the flags, the session options passed on to every
//! agent run, and the wiring into atto-swebench, which runs the instances.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use atto_swebench::{AgentOptions, Instances, Options, Placement};
use clap::{Args, Subcommand};

use crate::{ExitCode, Failure, GlobalArgs};

#[derive(Debug, Subcommand)]
pub enum SwebenchCommand {
    /// Run the agent on one instance (--instance-id with --issue-file) or a dataset
    /// (--dataset), and write predictions (0 all done, 1 any failed, 2 bad usage).
    Run(RunArgs),
}

#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub agent: AgentFlags,
    /// The instance to run; with --dataset, run only this one of it.
    #[arg(long, value_name = "ID")]
    pub instance_id: Option<String>,
    /// The issue text of the single instance.
    #[arg(
        long,
        value_name = "FILE",
        requires = "instance_id",
        conflicts_with = "dataset"
    )]
    pub issue_file: Option<PathBuf>,
    /// Git checkout of the single instance's repository (default: the current directory).
    #[arg(long, value_name = "DIR", conflicts_with = "dataset")]
    pub repo: Option<PathBuf>,
    /// Commit the single instance starts from (default: the repository's HEAD).
    #[arg(long, value_name = "SHA", conflicts_with = "dataset")]
    pub base_commit: Option<String>,
    /// JSONL of instances as published (instance_id, repo, base_commit,
    /// problem_statement).
    #[arg(long, value_name = "FILE")]
    pub dataset: Option<PathBuf>,
    /// Directory of checkouts: repo `owner/name` is DIR/owner__name, else DIR/name
    /// (default: the current directory).
    #[arg(long, value_name = "DIR", requires = "dataset")]
    pub repos: Option<PathBuf>,
    /// Predictions file; each instance's row is written or replaced.
    #[arg(long, value_name = "FILE", default_value = "predictions.jsonl")]
    pub predictions: PathBuf,
    /// `model_name_or_path` of the rows (default: atto/<--model>, or atto).
    #[arg(long, value_name = "NAME")]
    pub model_name: Option<String>,
    /// Instances run at once, each its own agent process.
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=32))]
    pub workers: u32,
    /// Run dataset instances that already have a predictions row again.
    #[arg(long)]
    pub force: bool,
    /// Wall-clock limit of one instance, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 1800)]
    pub timeout: u64,
    /// Model calls one instance may make.
    #[arg(long, value_name = "N")]
    pub max_rounds: Option<u32>,
    /// Where the worktrees go (default: a new directory under the temp dir, removed at
    /// the end).
    #[arg(long, value_name = "DIR")]
    pub work_dir: Option<PathBuf>,
    /// Where each instance's agent runs: here, as one Slurm job (`srun`), or on an ssh
    /// host; remote runs get the worktree and send their work back through git
    /// (docs/scale-out.md).
    #[arg(long, value_enum, default_value = "local")]
    pub launcher: LauncherArg,
    /// With --launcher ssh: a host (or ssh config alias); repeat for more, used in turn.
    #[arg(long = "host", value_name = "HOST")]
    pub hosts: Vec<String>,
    /// With --launcher ssh: the ssh config file (ssh -F).
    #[arg(long, value_name = "FILE")]
    pub ssh_config: Option<PathBuf>,
}

/// The session options passed on to every agent run; the others (workspace, permission,
/// mode) are the harness's to decide.
#[derive(Debug, Args)]
pub struct AgentFlags {
    /// Provider (as for `atto exec`).
    #[arg(long, value_name = "NAME")]
    pub provider: Option<String>,
    /// Model id to send to the provider.
    #[arg(long, value_name = "MODEL")]
    pub model: Option<String>,
    /// Base URL of an OpenAI- or Anthropic-compatible endpoint.
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// Wire protocol: chat, responses or anthropic.
    #[arg(long, value_name = "WIRE", value_parser = crate::parse_wire)]
    pub wire: Option<atto_llm::Wire>,
    /// Config file to use instead of ~/.config/atto/config.toml.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Write each run's model exchanges to a log under the data dir.
    #[arg(long)]
    pub debug: bool,
    /// Tokens one instance may use.
    #[arg(long, value_name = "N")]
    pub max_budget_tokens: Option<u64>,
    /// US dollars one instance may spend.
    #[arg(long, value_name = "USD")]
    pub max_budget_usd: Option<f64>,
}

impl AgentFlags {
    fn as_session(&self) -> GlobalArgs {
        GlobalArgs {
            provider: self.provider.clone(),
            model: self.model.clone(),
            base_url: self.base_url.clone(),
            wire: self.wire,
            config: self.config.clone(),
            debug: self.debug,
            max_budget_tokens: self.max_budget_tokens,
            max_budget_usd: self.max_budget_usd,
            ..GlobalArgs::default()
        }
    }
}

/// `--launcher` of `atto swebench run`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LauncherArg {
    /// A child process here (the default).
    Local,
    /// One `srun` job per instance.
    Slurm,
    /// One ssh connection per instance, to the `--host`s in turn.
    Ssh,
}

impl From<LauncherArg> for Placement {
    fn from(arg: LauncherArg) -> Self {
        match arg {
            LauncherArg::Local => Placement::Local,
            LauncherArg::Slurm => Placement::Slurm,
            LauncherArg::Ssh => Placement::Ssh,
        }
    }
}

/// Runs what `command` names; the exit code says whether every instance completed.
pub fn run(command: SwebenchCommand, global: &GlobalArgs) -> Result<ExitCode, Failure> {
    let SwebenchCommand::Run(args) = command;
    let mut session = global.clone();
    session.absorb(&args.agent.as_session());
    let forward = forwarded_flags(&session)?;
    let options = Options {
        instances: Instances {
            instance_id: args.instance_id,
            issue_file: args.issue_file,
            repo: args.repo,
            base_commit: args.base_commit,
            dataset: args.dataset,
            repos: args.repos,
        },
        predictions: args.predictions,
        force: args.force,
        model_name: args.model_name.unwrap_or_else(|| {
            session
                .model
                .as_ref()
                .map_or("atto".to_owned(), |m| format!("atto/{m}"))
        }),
        workers: args.workers,
        work_dir: args.work_dir,
        agent: AgentOptions {
            forward,
            timeout: Duration::from_secs(args.timeout),
            max_rounds: args.max_rounds,
        },
        placement: args.launcher.into(),
        hosts: args.hosts,
        ssh_config: args.ssh_config,
    };
    let all_completed = atto_swebench::run(options).map_err(|e| Failure::usage(e.0))?;
    Ok(if all_completed {
        ExitCode::Ok
    } else {
        ExitCode::Failed
    })
}

/// The session options each agent run gets. The ones the harness decides itself, given
/// before `swebench`, are refused rather than silently dropped.
fn forwarded_flags(session: &GlobalArgs) -> Result<Vec<OsString>, Failure> {
    let refused = [
        (session.workspace.is_some(), "--workspace"),
        (session.permission.is_some(), "--permission"),
        (session.yolo, "--yolo"),
        (session.trust, "--trust"),
        (session.mode.is_some(), "--mode"),
        (session.resume.is_some(), "--resume"),
        (session.continue_latest, "--continue"),
    ];
    if let Some((_, flag)) = refused.iter().find(|(given, _)| *given) {
        return Err(Failure::usage(format!(
            "swebench runs every instance with --permission auto-safe in a worktree of its \
             own, so {flag} is not accepted; drop it and rerun"
        )));
    }
    let mut out: Vec<OsString> = Vec::new();
    let mut pair = |flag: &str, value: Option<OsString>| {
        if let Some(value) = value {
            out.push(flag.into());
            out.push(value);
        }
    };
    pair("--provider", session.provider.clone().map(Into::into));
    pair("--model", session.model.clone().map(Into::into));
    pair("--base-url", session.base_url.clone().map(Into::into));
    pair("--wire", session.wire.map(|w| w.to_string().into()));
    pair("--config", session.config.clone().map(Into::into));
    let number = |n: Option<String>| n.map(OsString::from);
    pair(
        "--max-budget-tokens",
        number(session.max_budget_tokens.map(|n| n.to_string())),
    );
    pair(
        "--max-budget-usd",
        number(session.max_budget_usd.map(|n| n.to_string())),
    );
    pair(
        "--max-subagents",
        number(session.max_subagents.map(|n| n.to_string())),
    );
    if session.debug {
        out.push("--debug".into());
    }
    Ok(out)
}
