//! `bash`: run a shell command in the workspace and report its exit code and output.
//!
//! Owns process handling: its own process group (so a timeout or cancel kills every
//! process the command started), an environment of allowlisted variables only (`env`),
//! bounded output capture. Applies the OS sandbox the context carries
//! (`ToolContext::sandbox`) to the command's process and records whether it ran
//! sandboxed and how it exited (`ToolOutput::exit_code`).
//! Deliberately does not judge whether a command is safe (`atto-policy` classifies
//! commands before this runs), nor decide whether to sandbox (core does), nor read the
//! command's output for what the sandbox did: the command controls its output, so a
//! printed "Permission denied" proves nothing.

mod capture;
mod env;

use std::os::fd::OwnedFd;
use std::os::unix::process::ExitStatusExt;
use std::process::{ExitStatus, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use atto_protocol::{DangerLevel, ToolKind};
use atto_sandbox::SandboxStatus;
use serde::Deserialize;
use serde_json::json;
use tokio::io::AsyncReadExt;
use tokio::time::Instant;

use crate::support::{arg, lenient_u64, one_line, parse_args, target};
use crate::{BoxFuture, Tool, ToolContext, ToolError, ToolOutput};
use capture::Capture;

const DEFAULT_TIMEOUT_SECS: u64 = 120;
const MAX_TIMEOUT_SECS: u64 = 600;
/// After the shell exits, how long processes it left behind may keep the output open
/// before they are killed. Background jobs that redirect their output are unaffected.
const LINGER: Duration = Duration::from_millis(500);
/// Bound on waiting for a killed command to be reaped.
const REAP_WAIT: Duration = Duration::from_secs(5);

/// Runs shell commands.
#[derive(Debug, Clone, Default)]
pub struct BashTool {
    pass_env: Vec<String>,
}

impl BashTool {
    /// A bash tool whose commands also see the inherited variables named in `pass_env`
    /// (exact names), on top of the built-in allowlist of harmless ones.
    pub fn with_env(pass_env: Vec<String>) -> Self {
        Self { pass_env }
    }
}

#[derive(Deserialize)]
struct Args {
    command: String,
    #[serde(default, deserialize_with = "lenient_u64")]
    timeout: Option<u64>,
}

impl Tool for BashTool {
    fn name(&self) -> &'static str {
        crate::names::BASH
    }

    fn description(&self) -> &'static str {
        "Run a shell command in the workspace; returns exit code and combined stdout/stderr. No stdin."
    }

    fn parameters(&self) -> serde_json::Value {
        json!({
            "type": "object",
            "properties": {
                "command": {"type": "string", "description": "Shell command"},
                "timeout": {"type": "integer", "description": "Seconds (default 120, max 600)"}
            },
            "required": ["command"]
        })
    }

    fn danger(&self) -> DangerLevel {
        DangerLevel::Medium
    }

    fn mutates(&self, _args: &serde_json::Value) -> bool {
        true
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Execute
    }

    fn target(&self, args: &serde_json::Value) -> Option<String> {
        target(args, "command")
    }

    fn title(&self, args: &serde_json::Value) -> String {
        format!(
            "Run `{}`",
            one_line(arg(args, "command").lines().next().unwrap_or(""))
        )
    }

    fn subject(&self, args: &serde_json::Value) -> String {
        arg(args, "command").to_owned()
    }

    fn run<'a>(
        &'a self,
        args: serde_json::Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let args: Args = parse_args(args)?;
            if args.command.trim().is_empty() {
                return Err(ToolError::InvalidArguments("command is empty".into()));
            }
            let secs = args
                .timeout
                .unwrap_or(DEFAULT_TIMEOUT_SECS)
                .clamp(1, MAX_TIMEOUT_SECS);
            run_command(&args.command, secs, &self.pass_env, ctx).await
        })
    }
}

/// `bash` from PATH, or `sh` when there is none.
fn shell() -> &'static str {
    static SHELL: OnceLock<&'static str> = OnceLock::new();
    SHELL.get_or_init(|| {
        let path = std::env::var_os("PATH").unwrap_or_default();
        if std::env::split_paths(&path).any(|dir| dir.join("bash").is_file()) {
            "bash"
        } else {
            "sh"
        }
    })
}

async fn run_command(
    command: &str,
    secs: u64,
    pass_env: &[String],
    ctx: &ToolContext,
) -> Result<ToolOutput, ToolError> {
    if ctx.cancel.is_cancelled() {
        return Err(ToolError::Cancelled);
    }
    let Spawned {
        mut child,
        mut output,
        sandbox,
    } = spawn(command, pass_env, ctx)?;
    let pgid = child.id();
    let mut group = GroupGuard(pgid);

    let deadline = tokio::time::sleep(Duration::from_secs(secs));
    let linger = tokio::time::sleep(Duration::from_secs(secs + 3600));
    tokio::pin!(deadline, linger);
    let mut captured = Capture::default();
    let mut buf = vec![0u8; 16 * 1024];
    let mut status: Option<std::io::Result<ExitStatus>> = None;
    let mut eof = false;
    let mut killed_leftovers = false;
    while !(eof && status.is_some()) {
        tokio::select! {
            read = output.read(&mut buf), if !eof => match read {
                Ok(0) | Err(_) => eof = true,
                Ok(n) => captured.push(&buf[..n]),
            },
            exited = child.wait(), if status.is_none() => {
                // The leader is reaped: its pid may be reused, so the guard must not
                // signal it any more.
                group.0 = None;
                status = Some(exited);
                linger.as_mut().reset(Instant::now() + LINGER);
            },
            () = &mut linger, if status.is_some() && !eof => {
                // Background processes still hold the output open; they die with the call.
                // The group id is still safe to use: the kernel does not hand out a pid
                // while a process group of that id has members.
                if let Some(pgid) = pgid {
                    kill_group(pgid);
                }
                killed_leftovers = true;
                break;
            },
            () = &mut deadline => {
                group.kill();
                let _ = tokio::time::timeout(REAP_WAIT, child.wait()).await;
                return Err(ToolError::Timeout { seconds: secs, output: captured.render() });
            },
            () = ctx.cancel.cancelled() => {
                group.kill();
                let _ = tokio::time::timeout(REAP_WAIT, child.wait()).await;
                return Err(ToolError::Cancelled);
            },
        }
    }
    let exit_code = exit_code(status.as_ref());
    let content = report(status, &captured, killed_leftovers, ctx, &sandbox);
    Ok(ToolOutput {
        sandbox: Some(sandbox),
        exit_code,
        ..ToolOutput::text(content)
    })
}

/// A command just started.
struct Spawned {
    child: tokio::process::Child,
    /// The read end of its stdout and stderr, interleaved.
    output: tokio::net::unix::pipe::Receiver,
    sandbox: SandboxStatus,
}

/// Starts `command` under the shell, in its own process group, with the allowlisted
/// environment, under the sandbox when there is one: the child, the read end of its
/// output, and whether the sandbox was applied.
fn spawn(command: &str, pass_env: &[String], ctx: &ToolContext) -> Result<Spawned, ToolError> {
    let program = shell();
    let spawn_err = |source| ToolError::Spawn {
        program: program.to_string(),
        source,
    };
    // pre_exec failures (the kernel refusing the restriction) surface as spawn errors:
    // the command then never ran, sandboxed or not.
    let sandboxed_spawn_err = |source| ToolError::Spawn {
        program: format!("{program} under the OS sandbox"),
        source,
    };
    // One pipe for stdout and stderr keeps the two interleaved as the command wrote them.
    let (reader, writer) = std::io::pipe().map_err(spawn_err)?;
    let output = tokio::net::unix::pipe::Receiver::from_owned_fd(OwnedFd::from(reader))
        .map_err(spawn_err)?;
    let mut cmd = tokio::process::Command::new(program);
    cmd.arg("-c")
        .arg(command)
        .current_dir(&ctx.workspace)
        .stdin(Stdio::null())
        .stdout(writer.try_clone().map_err(spawn_err)?)
        .stderr(writer)
        .process_group(0)
        .kill_on_drop(true);
    // The command sees the allowlist, never the rest of atto's environment.
    cmd.env_clear();
    for (name, value) in std::env::vars_os() {
        if name
            .to_str()
            .is_some_and(|name| env::passes(name, pass_env))
        {
            cmd.env(name, value);
        }
    }
    cmd.env("PAGER", "cat")
        .env("GIT_PAGER", "cat")
        .env("GIT_TERMINAL_PROMPT", "0");
    if std::env::var_os("TERM").is_none() {
        cmd.env("TERM", "dumb");
    }
    let sandbox = match &ctx.sandbox {
        Some(sandbox) => sandbox.apply(&mut cmd),
        None => SandboxStatus::NotApplied {
            reason: "sandbox off".to_string(),
        },
    };
    let spawned = cmd.spawn();
    // The command keeps its copies of the pipe's write end; dropping ours means the
    // read side sees EOF once every process of the command has closed it.
    drop(cmd);
    let child = match &sandbox {
        SandboxStatus::Applied { .. } => spawned.map_err(sandboxed_spawn_err)?,
        SandboxStatus::NotApplied { .. } => spawned.map_err(spawn_err)?,
    };
    Ok(Spawned {
        child,
        output,
        sandbox,
    })
}

/// What the model reads of a finished command: its exit line, its output, and what atto
/// did around it (leftover processes killed, the sandbox applied).
fn report(
    status: Option<std::io::Result<ExitStatus>>,
    captured: &Capture,
    killed_leftovers: bool,
    ctx: &ToolContext,
    sandbox: &SandboxStatus,
) -> String {
    let mut content = exit_line(status);
    content.push('\n');
    let rendered = captured.render();
    if captured.is_empty() {
        content.push_str("(no output)");
    } else {
        content.push_str(&rendered);
    }
    if killed_leftovers {
        content.push_str(
            "\n[the command exited but left background processes holding its output; they were killed. Redirect a background job's output to a file to keep it running]",
        );
    }
    if let (Some(sb), SandboxStatus::Applied { .. }) = (&ctx.sandbox, sandbox) {
        content.push_str(&format!("\n[sandbox: {}]", sb.summary()));
    }
    content
}

/// The exit status as a shell reports it (`128 + n` for death by signal `n`), or `None`
/// when it is unknown.
fn exit_code(status: Option<&std::io::Result<ExitStatus>>) -> Option<i32> {
    let status = status?.as_ref().ok()?;
    status
        .code()
        .or_else(|| status.signal().map(|sig| 128 + sig))
}

fn exit_line(status: Option<std::io::Result<ExitStatus>>) -> String {
    match status {
        Some(Ok(s)) => match (s.code(), s.signal()) {
            (Some(code), _) => format!("exit code: {code}"),
            (None, Some(sig)) => format!("exit code: {} (killed by signal {sig})", 128 + sig),
            (None, None) => "exit code: unknown".to_string(),
        },
        Some(Err(e)) => format!("exit code: unknown (could not wait for the command: {e})"),
        None => "exit code: unknown".to_string(),
    }
}

/// Kills the command's process group when the call ends early, including when the
/// future is dropped. Holds the group id only while the group leader is unreaped, so
/// the id cannot have been reused by an unrelated process.
struct GroupGuard(Option<u32>);

impl GroupGuard {
    fn kill(&mut self) {
        if let Some(pgid) = self.0.take() {
            kill_group(pgid);
        }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Sends SIGKILL to process group `pgid`.
#[expect(unsafe_code, reason = "killpg has no safe wrapper in std or tokio")]
fn kill_group(pgid: u32) {
    let Ok(pgid) = libc::pid_t::try_from(pgid) else {
        return;
    };
    // 0 would signal our own group and 1 is init: neither can be a command's group.
    if pgid <= 1 {
        return;
    }
    // SAFETY: killpg takes two integers and only sends a signal; no memory is shared.
    // The group id is that of a child we spawned in its own group.
    unsafe {
        libc::killpg(pgid, libc::SIGKILL);
    }
}
