//! One remote attempt, around the worker run the coordinator does for every attempt:
//! before it, the base commit is made and the launcher's command built (a host picked for
//! ssh); once the node said what its clone holds, the base is published for it; after it, the returned branch is fetched into the attempt's worktree, so the
//! quality pipeline and the merge see it as they see a local attempt's.

use std::path::Path;
use std::sync::Arc;

use super::launcher::{Hosts, Launcher, Slurm, Ssh};
use super::transport;
use crate::isolation::Worktree;
use crate::worker::{BaseSource, Report, Template, Vars};

/// The launcher settings an attempt needs (cloned out of the config for its job).
#[derive(Debug, Clone)]
pub struct Launch {
    /// Which launcher.
    pub launcher: Launcher,
    /// `slurm:`.
    pub slurm: Slurm,
    /// `ssh:`.
    pub ssh: Ssh,
    /// The ssh hosts' load.
    pub hosts: Arc<Hosts>,
}

/// A remote attempt under way.
#[derive(Debug)]
pub struct Remote {
    /// The base commit.
    base: String,
    branch: String,
    host: Option<String>,
    task_id: String,
}

/// What to start for a remote attempt: program, arguments, what its stdin begins with,
/// and the attempt's record.
pub struct Prepared {
    /// Program.
    pub program: String,
    /// Arguments.
    pub args: Vec<String>,
    /// The `git_base` line and bundle, made for what the node holds.
    pub base: BaseSource,
    /// What [`finish`] needs.
    pub remote: Remote,
}

/// Makes the base commit of `snapshot` (the commit the attempt starts from), what
/// publishes it once the node answers, and the launcher's command.
pub async fn prepare(
    launch: &Launch,
    template: &Template,
    vars: &Vars,
    workspace: &Path,
    snapshot: &str,
    scratch: &Path,
    attempt: u32,
) -> Result<Prepared, String> {
    let base = transport::base_commit(workspace, snapshot)
        .await
        .map_err(|e| format!("its base could not be made: {e}"))?;
    let branch = transport::branch(&vars.swarm_id, &vars.task_id, attempt);
    let source = publisher(workspace, scratch, &base, &branch);
    // The ids reach a remote command line: the same rule as the template's.
    for id in [&vars.task_id, &vars.swarm_id] {
        if !crate::task::is_valid_id(id) {
            return Err(format!(
                "{id:?} is not a plain id; the worker was not started"
            ));
        }
    }
    let mut host = None;
    // A retry of an attempt whose node was lost goes to another one.
    let lost_on = launch.hosts.lost_on(&vars.task_id);
    let (program, args) = match launch.launcher {
        Launcher::Slurm => launch.slurm.command(vars, lost_on.as_deref()),
        Launcher::Ssh => {
            let picked = launch
                .hosts
                .pick(&launch.ssh, lost_on.as_deref())
                .ok_or("ssh: no hosts are configured")?;
            let command = launch.ssh.command(vars, &picked);
            host = Some(picked);
            command
        }
        Launcher::Command | Launcher::Local => template.expand(vars)?,
    };
    Ok(Prepared {
        program,
        args,
        base: source,
        remote: Remote {
            base,
            branch,
            host,
            task_id: vars.task_id.clone(),
        },
    })
}

/// What publishes base `commit` for a node holding the commits it is given, as the
/// worker's stdin begins.
fn publisher(workspace: &Path, scratch: &Path, commit: &str, branch: &str) -> BaseSource {
    let (workspace, scratch) = (workspace.to_path_buf(), scratch.to_path_buf());
    let (commit, branch) = (commit.to_owned(), branch.to_owned());
    BaseSource {
        make: Arc::new(move |haves| {
            let (workspace, scratch) = (workspace.clone(), scratch.clone());
            let (commit, branch) = (commit.clone(), branch.clone());
            Box::pin(async move {
                let bundle = transport::bundle_for(&workspace, &commit, &haves, &scratch).await?;
                transport::preamble_of(&commit, bundle.as_deref(), &branch)
            })
        }),
        wait: transport::HAVE_WAIT,
    }
}

/// After the worker ended: its branch fetched into `tree` (`None`: the worktree could not
/// be made, and the report says so), or why not (then the attempt failed, as one whose
/// worker crashed). Gives its ssh host back, and remembers where the
/// attempt was lost (ended without a result line: its job cancelled, its connection or
/// worker killed) so that the task's retry is placed elsewhere.
pub async fn finish(
    launch: &Launch,
    remote: &Remote,
    report: &mut Report,
    workspace: &Path,
    tree: Option<&Worktree>,
) {
    if report.failure().is_none() {
        let fetched = match (&report.returned, tree) {
            (_, None) => Err("its worktree could not be made".into()),
            (Some(returned), Some(tree)) => {
                transport::receive(workspace, &remote.base, &remote.branch, returned, tree).await
            }
            (None, _) => Err("it ended without returning its branch (no git_result line)".into()),
        };
        report.transport_error = fetched.err();
    }
    if let Some(host) = &remote.host {
        launch
            .hosts
            .release(&launch.ssh, host, report.failure().is_some());
    }
    let node = remote.host.as_deref().or(report.node.as_deref());
    let lost = report.result.is_none() && report.spawn_error.is_none();
    launch.hosts.ended(&remote.task_id, node.filter(|_| lost));
}
