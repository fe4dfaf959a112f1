//! Owns `atto swebench run`'s harness: instances in, one agent run each, predictions out.
//! Never parses a command line, evaluates a prediction or clones a repository.
//!
//! The agent on SWE-bench-style instances, headless, one fresh git worktree per instance,
//! writing a predictions JSONL the SWE-bench evaluation reads. This module owns the prompt,
//! the worker pool and the report. The instances come from `dataset`, worktrees and diffs
//! from `checkout`, the agent process from `agent` (`atto exec`, run from the executable
//! that calls this crate: the `atto` binary), the output files from `records`. It does not
//! evaluate predictions (that is the SWE-bench harness's job, in its containers) and does
//! not clone repositories: each one must be checked out beforehand. The command line is
//! atto's cli, which fills [`Options`].

mod agent;
mod checkout;
mod dataset;
mod records;
mod remote;

use std::collections::{HashSet, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

use serde_json::{Value, json};

pub use agent::AgentOptions;
use checkout::Worktree;
pub use dataset::Instances;
use dataset::Task;
use records::Records;
pub use remote::Placement;

/// Why a run did not start: bad arguments or inputs that cannot be read (`atto swebench`
/// exits 2 with it).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// What a run does.
pub struct Options {
    /// Which instances.
    pub instances: Instances,
    /// Predictions file; each instance's row is written or replaced.
    pub predictions: PathBuf,
    /// Run dataset instances that already have a predictions row again.
    pub force: bool,
    /// `model_name_or_path` of the rows.
    pub model_name: String,
    /// Instances run at once, each its own agent process.
    pub workers: u32,
    /// Where the worktrees go (default: a new directory under the temp dir, removed at the
    /// end).
    pub work_dir: Option<PathBuf>,
    /// How every instance's agent runs.
    pub agent: AgentOptions,
    /// Where each instance's agent runs.
    pub placement: Placement,
    /// With [`Placement::Ssh`]: the hosts, used in turn.
    pub hosts: Vec<String>,
    /// With [`Placement::Ssh`]: the ssh config file.
    pub ssh_config: Option<PathBuf>,
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

/// Runs the instances `options` name and writes their predictions; `Ok(true)` when every
/// one completed (or was already predicted).
pub fn run(options: Options) -> Result<bool, UsageError> {
    let Options {
        instances,
        predictions,
        force,
        model_name,
        workers,
        work_dir,
        agent,
        placement,
        hosts,
        ssh_config,
    } = options;
    let remote = remote::Remote::new(placement, &hosts, ssh_config.as_deref(), agent.timeout)
        .map_err(UsageError)?;
    let (tasks, bad_lines) = dataset::tasks(&instances)?;
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
    let records = Records::new(predictions);
    let predicted = if instances.dataset.is_some() && !force {
        records.predicted().map_err(UsageError)?
    } else {
        HashSet::new()
    };
    let (todo, skipped) = leave_out_predicted(tasks, &predicted, &records);
    outcomes.extend(skipped);
    let (work_dir, ours) = make_work_dir(work_dir)?;
    let shared = Shared {
        records,
        agent,
        model_name,
        work_dir: work_dir.clone(),
        remote,
    };
    outcomes.extend(run_all(&shared, todo, workers as usize));
    if ours {
        let _ = std::fs::remove_dir_all(&work_dir);
    }
    print_summary(&outcomes, &shared.records);
    Ok(outcomes.iter().all(Outcome::ok))
}

/// The tasks to run, and the outcomes of those already `predicted` (skipped, said on
/// stderr).
fn leave_out_predicted(
    tasks: Vec<Task>,
    predicted: &HashSet<String>,
    records: &Records,
) -> (VecDeque<Task>, Vec<Outcome>) {
    let mut todo = VecDeque::new();
    let mut skipped = Vec::new();
    for task in tasks {
        if predicted.contains(&task.id) {
            eprintln!(
                "swebench: {}: already in {}; skipped (--force runs it again)",
                task.id,
                records.predictions.display()
            );
            skipped.push(Outcome {
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
    (todo, skipped)
}

/// The directory the worktrees go in, created and made absolute, and whether it is the
/// run's own (a new one under the temp dir, removed at the end).
fn make_work_dir(given: Option<PathBuf>) -> Result<(PathBuf, bool), UsageError> {
    let (work_dir, ours) = match given {
        Some(dir) => (dir, false),
        None => {
            let id = uuid::Uuid::new_v4().simple().to_string();
            (
                std::env::temp_dir().join(format!("atto-swebench-{}", &id[..8])),
                true,
            )
        }
    };
    std::fs::create_dir_all(&work_dir).map_err(|e| {
        UsageError(format!(
            "cannot create work dir {}: {e}",
            work_dir.display()
        ))
    })?;
    // Worktrees must not depend on the directory the harness was started in.
    Ok((work_dir.canonicalize().unwrap_or(work_dir), ours))
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
