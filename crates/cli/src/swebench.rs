//! `atto swebench run`: the agent on SWE-bench-style instances, headless, one fresh git
//! worktree per instance, writing a predictions JSONL the SWE-bench evaluation reads.
//!
//! This module owns the command line, the prompt, the worker pool and the report. The
//! instances come from `dataset`, worktrees and diffs from `checkout`, the agent process
//! from `agent`, the output files from `records`. It does not evaluate predictions (that is the SWE-bench
//! harness's job, in its containers) and does not clone repositories: each one must be
//! checked out beforehand.

mod agent;
mod checkout;
mod dataset;
mod records;
mod remote;

use std::collections::{HashSet, VecDeque};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use clap::{Args, Subcommand};
use serde_json::{Value, json};

use crate::{ExitCode, Failure, GlobalArgs};
use agent::AgentOptions;
use checkout::Worktree;
use dataset::Task;
use records::Records;

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
    pub launcher: remote::LauncherArg,
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

/// What became of one instance, for the summary.
struct Outcome {
    id: String,
    /// `completed`, `failed`, `limit_reached`, `cancelled` (the agent's), `error` (the
    /// harness could not run it) or `skipped` (already predicted).
    status: String,
    files: usize,
    tokens: Option<u64>,
    secs: f64,
}

impl Outcome {
    fn ok(&self) -> bool {
        matches!(self.status.as_str(), "completed" | "skipped")
    }
}

/// What every instance's run shares.
struct Shared {
    records: Records,
    agent: AgentOptions,
    model_name: String,
    work_dir: PathBuf,
    /// Where agents run, when not here.
    remote: Option<remote::Remote>,
}

/// Runs what `command` names; the exit code says whether every instance completed.
pub fn run(command: SwebenchCommand, global: &GlobalArgs) -> Result<ExitCode, Failure> {
    let SwebenchCommand::Run(args) = command;
    let mut session = global.clone();
    session.absorb(&args.agent.as_session());
    let forward = forwarded_flags(&session)?;
    let remote = remote::Remote::new(
        args.launcher,
        &args.hosts,
        args.ssh_config.as_deref(),
        Duration::from_secs(args.timeout),
    )
    .map_err(Failure::usage)?;
    let (tasks, bad_lines) = dataset::tasks(&args)?;
    let mut outcomes: Vec<Outcome> = bad_lines
        .into_iter()
        .map(|id| Outcome {
            id,
            status: "error".into(),
            files: 0,
            tokens: None,
            secs: 0.0,
        })
        .collect();
    let records = Records::new(args.predictions.clone());
    let mut todo = VecDeque::new();
    let predicted = if args.dataset.is_some() && !args.force {
        records.predicted().map_err(Failure::usage)?
    } else {
        HashSet::new()
    };
    for task in tasks {
        if predicted.contains(&task.id) {
            eprintln!(
                "swebench: {}: already in {}; skipped (--force runs it again)",
                task.id,
                records.predictions.display()
            );
            outcomes.push(Outcome {
                id: task.id,
                status: "skipped".into(),
                files: 0,
                tokens: None,
                secs: 0.0,
            });
        } else {
            todo.push_back(task);
        }
    }
    let (work_dir, ours) = match &args.work_dir {
        Some(dir) => (dir.clone(), false),
        None => {
            let id = uuid::Uuid::new_v4().simple().to_string();
            (
                std::env::temp_dir().join(format!("atto-swebench-{}", &id[..8])),
                true,
            )
        }
    };
    std::fs::create_dir_all(&work_dir).map_err(|e| {
        Failure::usage(format!(
            "cannot create work dir {}: {e}",
            work_dir.display()
        ))
    })?;
    // Worktrees must not depend on the directory the harness was started in.
    let work_dir = work_dir.canonicalize().unwrap_or(work_dir);
    let shared = Shared {
        records,
        agent: AgentOptions {
            forward,
            timeout: Duration::from_secs(args.timeout),
            max_rounds: args.max_rounds,
        },
        model_name: args.model_name.clone().unwrap_or_else(|| {
            session
                .model
                .as_ref()
                .map_or("atto".to_owned(), |m| format!("atto/{m}"))
        }),
        work_dir: work_dir.clone(),
        remote,
    };
    outcomes.extend(run_all(&shared, todo, args.workers as usize));
    if ours {
        let _ = std::fs::remove_dir_all(&work_dir);
    }
    print_summary(&outcomes, &shared.records);
    Ok(if outcomes.iter().all(Outcome::ok) {
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

/// Runs `todo` on `workers` threads, each driving one agent process at a time.
fn run_all(shared: &Shared, todo: VecDeque<Task>, workers: usize) -> Vec<Outcome> {
    let total = todo.len();
    let queue = Mutex::new(todo.into_iter().enumerate().collect::<VecDeque<_>>());
    let done = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..workers.min(total.max(1)) {
            scope.spawn(|| {
                loop {
                    // The queue and list only hold plain data: a poisoned lock is still good.
                    let next = queue.lock().unwrap_or_else(|e| e.into_inner()).pop_front();
                    let Some((n, task)) = next else { break };
                    eprintln!("swebench: [{}/{total}] {}: running", n + 1, task.id);
                    let outcome = run_one(shared, task);
                    eprintln!(
                        "swebench: [{}/{total}] {}: {}, {} files changed, {} tokens, {:.1}s",
                        n + 1,
                        outcome.id,
                        outcome.status,
                        outcome.files,
                        outcome.tokens.map_or("?".to_owned(), |t| t.to_string()),
                        outcome.secs
                    );
                    done.lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push((n, outcome));
                }
            });
        }
    });
    let mut done = done.into_inner().unwrap_or_else(|e| e.into_inner());
    done.sort_by_key(|(n, _)| *n);
    done.into_iter().map(|(_, outcome)| outcome).collect()
}

/// Prepares, runs and records one instance. Only a run of the agent gets a predictions
/// row (an empty patch when it changed nothing); an instance the harness could not
/// start gets a sidecar entry saying why, and is tried again by the next run.
fn run_one(shared: &Shared, task: Task) -> Outcome {
    let started = Instant::now();
    let mut meta = json!({
        "instance_id": task.id,
        "model_name_or_path": shared.model_name,
        "repo": task.repo_label,
    });
    let mut outcome = Outcome {
        id: task.id.clone(),
        status: "error".into(),
        files: 0,
        tokens: None,
        secs: 0.0,
    };
    let scratch = shared.work_dir.join(format!(
        "{}-{}",
        safe_name(&task.id),
        &uuid::Uuid::new_v4().simple().to_string()[..8]
    ));
    let errors = match attempt(shared, &task, &scratch, &mut meta, &mut outcome) {
        Ok(errors) => errors,
        Err(error) => {
            eprintln!("atto: {}: {error}", task.id);
            vec![error]
        }
    };
    let _ = std::fs::remove_dir_all(&scratch);
    outcome.secs = started.elapsed().as_secs_f64();
    meta["status"] = outcome.status.clone().into();
    meta["wall_secs"] = ((outcome.secs * 10.0).round() / 10.0).into();
    meta["error"] = if errors.is_empty() {
        Value::Null
    } else {
        errors.join("; ").into()
    };
    if let Err(e) = shared.records.describe(&meta) {
        eprintln!("atto: {}: {e}", task.id);
        outcome.status = "error".into();
    }
    outcome
}

/// The steps of [`run_one`]: `Err` when the agent never ran, else the errors of a run
/// that did (the agent's failure, a diff or write that failed).
fn attempt(
    shared: &Shared,
    task: &Task,
    scratch: &Path,
    meta: &mut Value,
    outcome: &mut Outcome,
) -> Result<Vec<String>, String> {
    let repo = task.repo.clone()?;
    let base = checkout::resolve_base(&repo, task.base.as_deref())?;
    meta["base_commit"] = base.clone().into();
    std::fs::create_dir_all(scratch)
        .map_err(|e| format!("cannot create {}: {e}", scratch.display()))?;
    let prompt_file = scratch.join("prompt.md");
    std::fs::write(&prompt_file, prompt(task, &base))
        .map_err(|e| format!("cannot write {}: {e}", prompt_file.display()))?;
    let worktree = Worktree::add(&repo, &base, scratch.join("checkout"))?;
    let run = match &shared.remote {
        Some(remote) => remote.run(
            &task.id,
            &worktree.path,
            &base,
            prompt(task, &base),
            scratch,
            &shared.agent,
        ),
        None => agent::run(&worktree.path, &prompt_file, scratch, &shared.agent),
    };
    let mut errors: Vec<String> = run.error.iter().cloned().collect();
    outcome.status = run.status();
    let changes = worktree.changes();
    if let Err(e) = worktree.remove() {
        eprintln!(
            "atto: {}: {e} (harmless: git worktree prune clears it)",
            task.id
        );
    }
    let (patch, files) = match changes {
        Ok(c) => (c.patch, c.files),
        Err(e) => {
            errors.push(e);
            outcome.status = "error".into();
            (String::new(), Vec::new())
        }
    };
    outcome.files = files.len();
    let usage = run.result.as_ref().map(|r| &r["usage"]);
    let count = |key: &str| usage.and_then(|u| u[key].as_u64());
    let (input, output) = (count("input_tokens"), count("output_tokens"));
    outcome.tokens = input.zip(output).map(|(i, o)| i + o);
    let result = run.result.as_ref();
    let field = |key: &str| result.map_or(Value::Null, |r| r[key].clone());
    meta["exit_code"] = run.exit_code.into();
    meta["input_tokens"] = input.into();
    meta["output_tokens"] = output.into();
    meta["tokens"] = outcome.tokens.into();
    meta["cost_usd"] = field("cost_usd");
    meta["rounds"] = field("rounds");
    meta["session_id"] = field("session_id");
    meta["files_changed"] = files.into();
    if let Err(e) = shared.records.predict(&task.id, &shared.model_name, &patch) {
        errors.push(e);
        outcome.status = "error".into();
    }
    Ok(errors)
}

/// The task as the agent gets it.
fn prompt(task: &Task, base: &str) -> String {
    format!(
        "You are working in a checkout of the repository {repo} at commit {base}. Resolve \
         the issue below.\n\n<issue>\n{issue}\n</issue>\n\n\
         - Read the code involved and find the cause before changing anything.\n\
         - Reproduce the problem if you can, fix it in the source with the smallest change \
         that resolves the issue, then run the relevant tests.\n\
         - Do not modify or delete existing tests unless the issue requires it; adding a \
         test for the fix is welcome.\n\
         - Do not commit, and remove any scratch files (reproduction scripts) when done: \
         every change left in the working tree is the submission.\n\
         - Finish with a short summary of the change.\n",
        repo = task.repo_label,
        issue = task.issue.trim_end(),
    )
}

/// An instance id as a directory name.
fn safe_name(id: &str) -> String {
    id.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .take(80)
        .collect()
}

/// The table at the end, on stdout.
fn print_summary(outcomes: &[Outcome], records: &Records) {
    let width = outcomes
        .iter()
        .map(|o| o.id.len())
        .max()
        .unwrap_or(0)
        .max(8);
    println!(
        "{:<width$}  {:<13}  {:>5}  {:>9}  {:>7}",
        "instance", "status", "files", "tokens", "seconds"
    );
    for o in outcomes {
        println!(
            "{:<width$}  {:<13}  {:>5}  {:>9}  {:>7.1}",
            o.id,
            o.status,
            o.files,
            o.tokens.map_or("?".to_owned(), |t| t.to_string()),
            o.secs
        );
    }
    let done = outcomes.iter().filter(|o| o.status == "completed").count();
    let failed = outcomes.iter().filter(|o| !o.ok()).count();
    eprintln!(
        "swebench: {done} completed, {failed} failed or not run, {} skipped; predictions in {}, run details in {}",
        outcomes.iter().filter(|o| o.status == "skipped").count(),
        records.predictions.display(),
        records.meta.display()
    );
}
