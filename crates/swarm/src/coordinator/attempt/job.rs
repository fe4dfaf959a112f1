//! The part of an attempt that runs off the coordinator's loop, as a spawned job: the
//! attempt's worktree when isolated, its worker (local or remote), the quality pipeline
//! over what the worker did, and the merge back. It hands a [`Done`] to the coordinator,
//! which decides what becomes of the task (`finished`); it changes no task state itself.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use atto_llm::ModelClient;
use atto_protocol::{ApprovalDecision, ApprovalRequest};
use atto_quality::{QualityConfig, Verdict};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

use super::{assess, own_changes, snapshot, snapshot_at};
use crate::budget::Reservation;
use crate::coordinator::{Done, SandboxFor, checks};
use crate::isolation::{self, Worktree};
use crate::mailbox;
use crate::remote::attempt::{Launch as RemoteLaunch, Remote};
use crate::task::SwarmTask;
use crate::worker::{self, Launch, Template, Vars};

/// One attempt of a task, with everything its job needs cloned out of the coordinator.
pub(super) struct Job {
    pub task: SwarmTask,
    pub model: String,
    pub reservation: Reservation,
    pub attempt: u32,
    /// The swarm's workspace.
    pub main: PathBuf,
    /// Whether the attempt works in a worktree of a snapshot of `main`.
    pub isolated: bool,
    /// Where worktrees and published bases go.
    pub scratch: PathBuf,
    /// The swarm's parked worktrees, an attempt's taken from and given back to.
    pub pool: Arc<isolation::Pool>,
    pub worker: WorkerStart,
    pub checking: Checking,
}

/// What starting the worker needs.
pub(super) struct WorkerStart {
    pub vars: Vars,
    pub template: Template,
    pub prompt: String,
    pub timeout: Duration,
    pub stop: watch::Receiver<bool>,
    pub answers: mpsc::UnboundedReceiver<(String, ApprovalDecision)>,
    /// Where the worker's messages go, tagged with its task.
    pub messages: mpsc::UnboundedSender<(String, worker::Message)>,
    /// The launcher's settings when workers run elsewhere.
    pub remote: Option<RemoteLaunch>,
}

/// What checking the worker's work needs.
pub(super) struct Checking {
    pub quality: QualityConfig,
    pub sandbox_for: SandboxFor,
    pub person: checks::Person,
    pub judge: Option<Arc<dyn ModelClient>>,
    pub progress: String,
}

/// The worker's command: program, arguments, what its stdin begins with (a remote
/// worker's base), and the remote attempt it belongs to.
type Command = (
    String,
    Vec<String>,
    Option<worker::BaseSource>,
    Option<Remote>,
);

impl Job {
    pub(super) async fn run(self) -> Done {
        let Job {
            task,
            model,
            reservation,
            attempt,
            main,
            isolated,
            scratch,
            pool,
            mut worker,
            checking,
        } = self;
        let task_id = task.id.clone();
        let (tx, forward) = forward_messages(worker.messages.clone(), task_id.clone());
        // With worktree isolation the attempt works on a snapshot of the workspace. A
        // remote worker needs only the snapshot (its base is published from it): the
        // worktree its result is checked in is taken while it runs, or when it ends.
        let deferred = isolated && worker.remote.is_some();
        let (planned, mut tree) = isolate(
            &pool, &main, &scratch, &task_id, attempt, isolated, deferred,
        )
        .await;
        let workspace = where_it_works(&main, &planned, &tree);
        worker.vars.workspace = workspace.display().to_string();
        let cwd = if deferred { &main } else { &workspace };
        let mut before = if deferred {
            BTreeMap::new()
        } else {
            snapshot(&workspace, &task)
        };
        let command = worker
            .command(start_from(&planned, &tree), &main, &scratch, attempt)
            .await;
        let remote_launch = worker.remote.clone();
        let making = make_deferred(&pool, &main, &planned, deferred);
        let running = worker.start(command, cwd, task.writes(), tx);
        let (taken, (mut report, remote)) = tokio::join!(making, running);
        let _ = forward.await;
        let (made, _checking) =
            made_at_the_end(&pool, &main, &planned, deferred, taken, &mut report).await;
        if let Some(made) = made {
            tree = Some(made);
            // What the task's files held at the base, read from git: the worktree holds
            // whatever its last attempt left until the result is checked out over it.
            if let Some(Ok(p)) = &planned {
                before = snapshot_at(&main, &p.base, &task).await;
            }
        }
        finish_remote(&remote, &remote_launch, &mut report, &main, &tree).await;
        // The files this worker changed, once, for the checks and the attempt's record.
        let files = own_changes(&task, &report, &workspace);
        let outcome = if report.failure().is_none() {
            Some(
                checking
                    .assess(&task, &report, &files, &before, &workspace, attempt)
                    .await,
            )
        } else {
            None
        };
        let passed = outcome.as_ref().is_some_and(|o| o.verdict == Verdict::Pass);
        let merge = match &tree {
            Some(Ok(t)) => {
                let returned = remote.as_ref().and(report.returned.as_ref());
                let commit = returned.map(|r| r.commit.as_str());
                merge(&pool, &main, t, commit, &scratch, passed).await
            }
            _ => None,
        };
        Done {
            task_id,
            model,
            reservation,
            report,
            files,
            outcome,
            merge,
        }
    }
}

impl WorkerStart {
    /// The command that starts the worker, from `start_from` (the snapshot an isolated
    /// attempt starts from, or why there is none). A remote worker starts from a published
    /// base and returns a branch.
    async fn command(
        &self,
        start_from: Option<Result<String, String>>,
        main: &Path,
        scratch: &Path,
        attempt: u32,
    ) -> Result<Command, String> {
        match (start_from, &self.remote) {
            (Some(Err(err)), _) => Err(err),
            (Some(Ok(base)), Some(launch)) => crate::remote::attempt::prepare(
                launch,
                &self.template,
                &self.vars,
                main,
                &base,
                scratch,
                attempt,
            )
            .await
            .map(|p| (p.program, p.args, Some(p.base), Some(p.remote))),
            (None, Some(_)) => Err("a remote launcher needs isolation: worktree".into()),
            (_, None) => self
                .template
                .expand(&self.vars)
                .map(|(program, args)| (program, args, None, None)),
        }
    }

    /// Starts `command` in `cwd` and runs it to its end (or reports why it could not
    /// start), with the remote attempt it belongs to.
    async fn start(
        self,
        command: Result<Command, String>,
        cwd: &Path,
        writes: bool,
        tx: mpsc::UnboundedSender<worker::Message>,
    ) -> (worker::Report, Option<Remote>) {
        match command {
            Ok((program, args, base, remote)) => {
                let report = self.run(program, args, base, cwd, writes, tx).await;
                (report, remote)
            }
            Err(err) => {
                drop(tx);
                let report = worker::Report {
                    spawn_error: Some(err),
                    ..worker::Report::default()
                };
                (report, None)
            }
        }
    }

    /// Runs the worker to its end; the mailbox answers what it may, the rest waits for a
    /// person.
    async fn run(
        self,
        program: String,
        args: Vec<String>,
        base: Option<worker::BaseSource>,
        workspace: &Path,
        writes: bool,
        tx: mpsc::UnboundedSender<worker::Message>,
    ) -> worker::Report {
        let launch = Launch {
            program,
            args,
            cwd: workspace.to_path_buf(),
            prompt: self.prompt,
            timeout: self.timeout,
            base,
        };
        let decide = move |r: &ApprovalRequest| match mailbox::decide(r, writes) {
            mailbox::Tier::AutoApprove => Some(ApprovalDecision::Yes),
            mailbox::Tier::AutoDeny(reason) => Some(ApprovalDecision::No {
                reason: Some(reason),
            }),
            mailbox::Tier::Ask => None,
        };
        worker::run(launch, &decide, tx, self.answers, self.stop).await
    }
}

impl Checking {
    /// The quality pipeline over the worker's work, its commands run through the gate.
    async fn assess(
        self,
        task: &SwarmTask,
        report: &worker::Report,
        files: &[String],
        before: &std::collections::BTreeMap<String, String>,
        workspace: &Path,
        attempt: u32,
    ) -> atto_quality::Outcome {
        let runner =
            checks::GatedRunner::lazy(workspace, self.sandbox_for.clone(), Some(self.person));
        assess(
            task,
            report,
            files,
            before,
            workspace,
            attempt,
            self.progress,
            &self.quality,
            &runner,
            self.judge.as_deref(),
        )
        .await
    }
}

/// A remote attempt's end: its result brought into its worktree (see
/// [`crate::remote::attempt::finish`]).
async fn finish_remote(
    remote: &Option<Remote>,
    launch: &Option<RemoteLaunch>,
    report: &mut worker::Report,
    main: &Path,
    tree: &Option<Result<Worktree, String>>,
) {
    if let (Some(r), Some(launch)) = (remote, launch) {
        let t = tree.as_ref().and_then(|t| t.as_ref().ok());
        crate::remote::attempt::finish(launch, r, report, main, t).await;
    }
}

/// A channel for the worker's messages and the task that passes them on to the
/// coordinator, tagged with `task_id`; it ends when the worker drops its sender.
fn forward_messages(
    messages: mpsc::UnboundedSender<(String, worker::Message)>,
    task_id: String,
) -> (mpsc::UnboundedSender<worker::Message>, JoinHandle<()>) {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let forward = tokio::spawn(async move {
        while let Some(m) = rx.recv().await {
            if messages.send((task_id.clone(), m)).is_err() {
                break;
            }
        }
    });
    (tx, forward)
}

/// Where an isolated attempt's worktree goes, and the snapshot it starts from.
struct Planned {
    dir: PathBuf,
    base: String,
}

/// The attempt's plan and worktree when `isolated`: the worktree made now, unless
/// `deferred` (then the caller makes it from the plan).
async fn isolate(
    pool: &isolation::Pool,
    main: &Path,
    scratch: &Path,
    task_id: &str,
    attempt: u32,
    isolated: bool,
    deferred: bool,
) -> (
    Option<Result<Planned, String>>,
    Option<Result<Worktree, String>>,
) {
    if !isolated {
        return (None, None);
    }
    let planned = plan(main, scratch, task_id, attempt).await;
    let tree = match &planned {
        Ok(p) if !deferred => Some(make(pool, main, p, isolation::Ready::Base).await),
        Ok(_) => None,
        Err(err) => Some(Err(err.clone())),
    };
    (Some(planned), tree)
}

/// The directory the attempt's worker works in (a remote one: where its result will be).
fn where_it_works(
    main: &Path,
    planned: &Option<Result<Planned, String>>,
    tree: &Option<Result<Worktree, String>>,
) -> PathBuf {
    match (tree, planned) {
        (Some(Ok(t)), _) => t.dir.clone(),
        (None, Some(Ok(p))) => p.dir.clone(),
        _ => main.to_path_buf(),
    }
}

/// The snapshot an isolated attempt starts from, or why there is none.
fn start_from(
    planned: &Option<Result<Planned, String>>,
    tree: &Option<Result<Worktree, String>>,
) -> Option<Result<String, String>> {
    match (tree, planned) {
        (Some(Err(err)), _) => Some(Err(err.clone())),
        (_, Some(p)) => Some(p.as_ref().map(|p| p.base.clone()).map_err(Clone::clone)),
        (_, None) => None,
    }
}

/// The snapshot of `main` this attempt starts from, and where its worktree goes.
async fn plan(main: &Path, scratch: &Path, task_id: &str, attempt: u32) -> Result<Planned, String> {
    let dir = scratch.join(format!("{task_id}-{attempt}"));
    if dir.symlink_metadata().is_ok() {
        // Left by a coordinator killed during this attempt (an attempt that ended is
        // recorded, and the next one has another number): nobody will read it.
        isolation::remove_dir(main, &dir).await;
    }
    isolation::snapshot(main, scratch)
        .await
        .map(|base| Planned { dir, base })
        .map_err(|e| format!("its worktree could not be made: {e}"))
}

/// The worktree of a `deferred` attempt while its worker runs: a parked one, made ready.
/// None is created now: a new worktree (every file written) is made only when the
/// worker's result comes back and none is parked by then ([`made_at_the_end`]), so a
/// swarm of many remote workers holds worktrees only for results being checked.
async fn make_deferred(
    pool: &isolation::Pool,
    main: &Path,
    planned: &Option<Result<Planned, String>>,
    deferred: bool,
) -> Option<Result<Worktree, String>> {
    let (Some(Ok(p)), true) = (planned, deferred) else {
        return None;
    };
    pool.take_parked(main, &p.base, &p.dir, isolation::Ready::Result)
        .await
}

/// A deferred attempt's worktree once its worker ended, and the slot its result is
/// checked and merged in (see `Pool::check_slot`; held until the attempt's end): the
/// worktree taken while it ran, else one taken or made now. A worker that failed needs
/// neither slot nor a new worktree. One that could not be made fails the attempt as its
/// transport.
async fn made_at_the_end<'a>(
    pool: &'a isolation::Pool,
    main: &Path,
    planned: &Option<Result<Planned, String>>,
    deferred: bool,
    taken: Option<Result<Worktree, String>>,
    report: &mut worker::Report,
) -> (
    Option<Result<Worktree, String>>,
    Option<tokio::sync::SemaphorePermit<'a>>,
) {
    if !deferred || report.failure().is_some() {
        // Nothing to check: a worktree taken while it ran only goes back to the pool.
        return (taken, None);
    }
    let slot = pool.check_slot().await;
    let made = match (taken, planned) {
        (Some(taken), _) => Some(taken),
        (None, Some(Ok(p))) => Some(make(pool, main, p, isolation::Ready::Result).await),
        _ => None,
    };
    if let Some(Err(err)) = &made {
        report.transport_error = Some(err.clone());
    }
    (made, slot)
}

/// The worktree `planned` describes: a parked one when the pool holds one.
async fn make(
    pool: &isolation::Pool,
    main: &Path,
    planned: &Planned,
    ready: isolation::Ready,
) -> Result<Worktree, String> {
    pool.take(main, &planned.base, &planned.dir, ready)
        .await
        .map_err(|e| format!("its worktree could not be made: {e}"))
}

/// A passing attempt's changes merged back into `main` (`None` when it did not pass); the
/// worktree goes back to the pool unless a conflict keeps it for a person to look at. A
/// remote attempt's changes are those of the commit it `returned`.
async fn merge(
    pool: &isolation::Pool,
    main: &Path,
    t: &Worktree,
    returned: Option<&str>,
    scratch: &Path,
    passed: bool,
) -> Option<Result<Vec<String>, String>> {
    let mut merge = None;
    if passed {
        let changes = match returned {
            Some(commit) => isolation::changes_returned(t, commit).await,
            None => isolation::changes(t, scratch).await,
        };
        let merged = match changes {
            Ok(changes) => isolation::merge_back(main, t, &changes, scratch)
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
        pool.give_back(main, t).await;
    }
    merge
}
