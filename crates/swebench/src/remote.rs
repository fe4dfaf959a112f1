//! One benchmark instance run on a Slurm node or an ssh host (`--launcher slurm|ssh`), by
//! the swarm's launchers and git transport: the instance's worktree at its base commit
//! goes to the node as a bundle on the worker's stdin, `atto swarm worker` runs `atto
//! exec` there in a clone, and the branch it sends back is checked out in the worktree,
//! whose diff is the prediction as for a local run. Does not own the worktree, the
//! predictions or the launchers' command lines.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use atto_protocol::ApprovalDecision;
use atto_swarm::remote::attempt::{Launch, finish, prepare};
use atto_swarm::remote::launcher::{Hosts, Launcher, Slurm, Ssh};
use atto_swarm::worker::{self, Template, Vars};
use tokio::sync::{mpsc, watch};

use crate::agent::{AgentOptions, AgentRun};

/// Where each instance's agent runs (`--launcher` of `atto swebench run`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// A child process here (the default).
    Local,
    /// One `srun` job per instance.
    Slurm,
    /// One ssh connection per instance, to the `--host`s in turn.
    Ssh,
}

/// How every instance's remote run is started, shared by the worker threads.
#[derive(Debug, Clone)]
pub struct Remote {
    launch: Launch,
}

impl Remote {
    /// The launcher of `which`, or `None` for a local run. `hosts` and `ssh_config` are
    /// ssh's; the Slurm job's time is the run's limit plus a minute.
    pub fn new(
        which: Placement,
        hosts: &[String],
        ssh_config: Option<&Path>,
        timeout: Duration,
    ) -> Result<Option<Remote>, String> {
        let launcher = match which {
            Placement::Local => return Ok(None),
            Placement::Slurm => Launcher::Slurm,
            Placement::Ssh => Launcher::Ssh,
        };
        if which == Placement::Ssh && hosts.is_empty() {
            return Err("--launcher ssh needs at least one --host".into());
        }
        if let Some(bad) = hosts
            .iter()
            .find(|h| !atto_swarm::remote::launcher::valid_host(h))
        {
            return Err(format!("--host {bad:?} is not a host name"));
        }
        let minutes = timeout.as_secs().div_ceil(60) + 1;
        Ok(Some(Remote {
            launch: Launch {
                launcher,
                slurm: Slurm {
                    time: format!("{:02}:{:02}:00", minutes / 60, minutes % 60),
                    cpus_per_task: 1,
                    ..Slurm::default()
                },
                ssh: Ssh {
                    hosts: hosts.to_vec(),
                    config: ssh_config.map(Path::to_path_buf),
                    ..Ssh::default()
                },
                hosts: Arc::new(Hosts::default()),
            },
        }))
    }

    /// Runs one instance: `workspace` is its worktree at `base`, `prompt` its task.
    pub fn run(
        &self,
        id: &str,
        workspace: &Path,
        base: &str,
        prompt: String,
        scratch: &Path,
        options: &AgentOptions,
    ) -> AgentRun {
        let runtime = match tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        {
            Ok(rt) => rt,
            Err(e) => return AgentRun::failed(format!("no async runtime: {e}")),
        };
        runtime.block_on(self.run_async(id, workspace, base, prompt, scratch, options))
    }

    async fn run_async(
        &self,
        id: &str,
        workspace: &Path,
        base: &str,
        prompt: String,
        scratch: &Path,
        options: &AgentOptions,
    ) -> AgentRun {
        let atto = match std::env::current_exe() {
            Ok(exe) => exe.display().to_string(),
            Err(e) => {
                return AgentRun::failed(format!("cannot find the atto executable to run: {e}"));
            }
        };
        let vars = Vars {
            atto,
            args: exec_args(options),
            workspace: workspace.display().to_string(),
            task_id: task_id(id),
            swarm_id: "swebench".into(),
        };
        // The harness's own checkout, no worker having run in it: its git directory is
        // read now, and the result is checked out through it.
        let tree = match atto_swarm::isolation::Worktree::open(workspace, base).await {
            Ok(tree) => tree,
            Err(e) => {
                return AgentRun::failed(format!("the remote run could not be prepared: {e}"));
            }
        };
        let prepared = match prepare(
            &self.launch,
            &Template::default(),
            &vars,
            workspace,
            base,
            scratch,
            1,
        )
        .await
        {
            Ok(p) => p,
            Err(e) => {
                return AgentRun::failed(format!("the remote run could not be prepared: {e}"));
            }
        };
        let launch = worker::Launch {
            program: prepared.program,
            args: prepared.args,
            cwd: workspace.to_path_buf(),
            prompt,
            // Past its own --timeout the run is killed, as a local one is.
            timeout: options.timeout + Duration::from_secs(30),
            base: Some(prepared.base),
        };
        let mut report = run_unattended(launch).await;
        finish(
            &self.launch,
            &prepared.remote,
            &mut report,
            workspace,
            Some(&tree),
        )
        .await;
        agent_run(&report)
    }
}

/// A worker's report as the harness reads a local run: the exit code, `atto exec`'s
/// `result` object, and why it failed.
fn agent_run(report: &worker::Report) -> AgentRun {
    let result = report.result.as_ref().and_then(|r| {
        let mut value = serde_json::to_value(r).ok()?;
        value["type"] = "result".into();
        Some(value)
    });
    AgentRun {
        exit_code: report.exit_code,
        result,
        error: report.failure().map(|(_, why)| why),
    }
}

/// Runs a worker with no one watching: its messages are dropped and what auto-safe asks
/// about is denied.
async fn run_unattended(launch: worker::Launch) -> worker::Report {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let drain = tokio::spawn(async move { while rx.recv().await.is_some() {} });
    let (_answers_tx, answers) = mpsc::unbounded_channel();
    let (_stop_tx, stop) = watch::channel(false);
    // No one answers approvals in a benchmark run: what auto-safe asks about is denied.
    let deny = |_: &atto_protocol::ApprovalRequest| {
        Some(ApprovalDecision::No {
            reason: Some("benchmark runs answer no approval".into()),
        })
    };
    let report = worker::run(launch, &deny, tx, answers, stop).await;
    let _ = drain.await;
    report
}

/// The arguments of the `atto exec` a remote run starts: headless, auto-safe, approvals
/// denied, stream-json both ways, within the run's limits, then the forwarded flags.
fn exec_args(options: &AgentOptions) -> Vec<String> {
    let mut args: Vec<String> = [
        "--permission",
        "auto-safe",
        "--on-ask",
        "deny",
        "--output-format",
        "stream-json",
        "--input-format",
        "stream-json",
        "--stop-on-stdin-close",
        "--timeout",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    args.push(options.timeout.as_secs().max(1).to_string());
    if let Some(rounds) = options.max_rounds {
        args.extend(["--max-rounds".to_owned(), rounds.to_string()]);
    }
    args.extend(
        options
            .forward
            .iter()
            .map(|a| a.to_string_lossy().into_owned()),
    );
    args
}

/// An instance id as a task id: 1–64 of `[A-Za-z0-9_-]`, anything else as `_`.
fn task_id(id: &str) -> String {
    let out: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    if out.is_empty() {
        "instance".into()
    } else {
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instance_ids_become_plain_task_ids() {
        assert_eq!(task_id("astropy__astropy-12907"), "astropy__astropy-12907");
        assert_eq!(task_id("a.b/c d"), "a_b_c_d");
        assert_eq!(task_id(""), "instance");
        assert_eq!(task_id(&"x".repeat(100)).len(), 64);
    }
}
