//! One agent run of a benchmark instance: `atto exec --permission auto-safe` as a child
//! process of this same binary, so a crash or a hang of the agent costs that instance
//! only. This module starts it, bounds its wait and reads its result; it does not know
//! about worktrees, datasets or predictions.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// How every instance's agent runs.
pub struct AgentOptions {
    /// Provider flags passed on to `atto exec` (`--model m`, `--base-url URL`, …).
    pub forward: Vec<OsString>,
    /// Wall-clock limit of one run, given to `atto exec --timeout`; the harness kills a
    /// run that overstays it by [`GRACE`].
    pub timeout: Duration,
    /// Model calls one run may make (`atto exec --max-rounds`).
    pub max_rounds: Option<u32>,
}

/// Time a run gets past its own `--timeout` to wind down before it is killed.
const GRACE: Duration = Duration::from_secs(30);

/// How one run ended.
pub struct AgentRun {
    /// The process's exit code; `None` when it was killed.
    pub exit_code: Option<i32>,
    /// `atto exec`'s `result` object, when it printed one.
    pub result: Option<Value>,
    /// Why it failed, when it did.
    pub error: Option<String>,
}

impl AgentRun {
    /// A run that never got going, and why.
    pub fn failed(error: String) -> AgentRun {
        AgentRun {
            exit_code: None,
            result: None,
            error: Some(error),
        }
    }

    /// The result's status (`completed`, `failed`, `limit_reached`, `cancelled`), or
    /// `failed` when there is no result.
    pub fn status(&self) -> String {
        self.result
            .as_ref()
            .and_then(|r| r["status"].as_str())
            .unwrap_or("failed")
            .to_owned()
    }
}

/// Runs the task in `prompt_file` in `workspace`; the child's output goes to files in
/// `scratch` (outside the workspace, so it is not part of the diff).
pub fn run(
    workspace: &Path,
    prompt_file: &Path,
    scratch: &Path,
    options: &AgentOptions,
) -> AgentRun {
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => return AgentRun::failed(format!("cannot find the atto executable to run: {e}")),
    };
    let stdout_path = scratch.join("agent.stdout");
    let stderr_path = scratch.join("agent.stderr");
    let files = std::fs::File::create(&stdout_path)
        .and_then(|out| Ok((out, std::fs::File::create(&stderr_path)?)));
    let (stdout, stderr) = match files {
        Ok(files) => files,
        Err(e) => return AgentRun::failed(format!("cannot create the agent's log files: {e}")),
    };
    let mut cmd = Command::new(exe);
    cmd.arg("exec")
        .args(["--permission", "auto-safe", "--on-ask", "deny"])
        .args(["--output-format", "json"])
        .arg("--workspace")
        .arg(workspace)
        .args(&options.forward)
        .arg("--timeout")
        .arg(options.timeout.as_secs().max(1).to_string());
    if let Some(rounds) = options.max_rounds {
        cmd.arg("--max-rounds").arg(rounds.to_string());
    }
    cmd.arg("--prompt-file")
        .arg(prompt_file)
        .current_dir(workspace)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr);
    let mut child = match cmd.spawn() {
        Ok(child) => child,
        Err(e) => return AgentRun::failed(format!("cannot start the agent: {e}")),
    };
    let deadline = Instant::now() + options.timeout + GRACE;
    let (exit_code, killed) = loop {
        match child.try_wait() {
            Ok(Some(status)) => break (status.code(), false),
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                break (None, true);
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(100)),
            Err(e) => return AgentRun::failed(format!("lost track of the agent process: {e}")),
        }
    };
    let result = last_result(&stdout_path);
    let error = if killed {
        Some(format!(
            "the agent did not stop within {}s of its {}s limit and was killed",
            GRACE.as_secs(),
            options.timeout.as_secs()
        ))
    } else if exit_code == Some(0) {
        None
    } else {
        let said = result
            .as_ref()
            .and_then(|r| r["error"].as_str())
            .map(str::to_owned);
        Some(said.unwrap_or_else(|| stderr_reason(&stderr_path, exit_code)))
    };
    AgentRun {
        exit_code,
        result,
        error,
    }
}

/// The `result` line `atto exec --output-format json` prints last.
fn last_result(stdout: &PathBuf) -> Option<Value> {
    let text = std::fs::read_to_string(stdout).ok()?;
    let line = text.lines().rfind(|l| !l.trim().is_empty())?;
    let value: Value = serde_json::from_str(line).ok()?;
    (value["type"] == "result").then_some(value)
}

/// What the agent said on stderr before it failed: its `atto:` lines, else the last ones.
fn stderr_reason(stderr: &Path, exit_code: Option<i32>) -> String {
    let text = std::fs::read_to_string(stderr).unwrap_or_default();
    let mut lines: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("atto: "))
        .collect();
    if lines.is_empty() {
        lines = text.lines().filter(|l| !l.trim().is_empty()).collect();
    }
    let tail = lines[lines.len().saturating_sub(3)..].join("; ");
    let code = exit_code.map_or("a signal".to_owned(), |c| format!("code {c}"));
    if tail.is_empty() {
        format!("the agent exited with {code} and said nothing")
    } else {
        format!("the agent exited with {code}: {tail}")
    }
}
