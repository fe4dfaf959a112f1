//! One worker: a process started from the launch template (by default this `atto exec`)
//! speaking stream-json — the task goes in as a `user_input` op on stdin, events come
//! out one per line on stdout, approval requests are answered on stdin. What it did is
//! collected for the quality pipeline. A worker that crashes, is killed or hangs past
//! its timeout is reported as such; the coordinator never shares its fate.

use std::collections::VecDeque;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use atto_protocol::{ApprovalDecision, ApprovalRequest, FinalResult, Op, TurnStatus};
use atto_quality::ToolAction;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _};
use tokio::sync::{mpsc, watch};

mod events;

use crate::remote::transport::HaveEvent;
use events::handle_line;

/// Lines of the worker's stderr kept for the report.
const STDERR_LINES: usize = 20;

/// Longest stdout line read (a hostile worker cannot make the coordinator buffer more).
const MAX_LINE: usize = 4 * 1024 * 1024;

/// The command that starts a worker: program and arguments with placeholders —
/// `{atto}` (this executable), `{args}` (the worker's flags, spliced in as separate
/// arguments), `{workspace}`, `{task_id}`, `{swarm_id}`. A placeholder is always a whole
/// argument: its value is never pasted into a larger word, which a shell could parse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    /// Program and arguments, placeholders as whole words.
    pub words: Vec<String>,
    /// Workspace files the command runs, as the user trusted them.
    pub pinned: Vec<Pinned>,
}

impl Default for Template {
    fn default() -> Self {
        Template {
            words: vec!["{atto}".into(), "exec".into(), "{args}".into()],
            pinned: Vec::new(),
        }
    }
}

/// `worker_command` of the swarm file: the template's words, and the workspace files
/// they name, pinned to the content the user trusted (set by the front end once it
/// checked that trust).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorkerCommand {
    /// Program and arguments (`[]`: the default template).
    pub words: Vec<String>,
    /// Workspace files the words name, with their trusted content.
    pub pinned: Vec<Pinned>,
}

/// A file a launch template runs, with the content it must still have.
pub use atto_policy::pinned::Pinned;

/// The values a template is filled with.
#[derive(Debug, Clone, Default)]
pub struct Vars {
    /// Path of this atto executable.
    pub atto: String,
    /// The worker's flags.
    pub args: Vec<String>,
    /// The workspace.
    pub workspace: String,
    /// The task.
    pub task_id: String,
    /// The swarm.
    pub swarm_id: String,
}

/// The names a template may hold, each as a whole word.
const PLACEHOLDERS: &[&str] = &["{atto}", "{args}", "{workspace}", "{task_id}", "{swarm_id}"];

impl Template {
    /// Refuses a template with a placeholder inside a larger word (`cd {workspace} &&`):
    /// a value pasted into a word reaches whatever parses that word, a remote shell for
    /// ssh. Refuses one without `{args}` too: its workers would start without the flags
    /// that make them speak stream-json, and every one of them would fail. Checked when
    /// the swarm file is read, so a bad template never starts. An empty list is the
    /// default template.
    pub fn check(words: &[String]) -> Result<(), String> {
        if !words.is_empty() && !words.iter().any(|w| w == "{args}") {
            return Err(format!(
                "{words:?} has no \"{{args}}\": the worker's flags (stream-json in and out, \
                 model, budget) would be lost and no worker could start; add \"{{args}}\" as an \
                 argument of its own, as in [\"{{atto}}\", \"exec\", \"{{args}}\"]"
            ));
        }
        for word in words {
            if PLACEHOLDERS.contains(&word.as_str()) {
                continue;
            }
            if let Some(p) = PLACEHOLDERS.iter().find(|p| word.contains(**p)) {
                return Err(format!(
                    "{word:?} has {p} inside it; a placeholder must be an argument of its own \
                     (its value is passed as one argument, never inside a shell string)"
                ));
            }
        }
        Ok(())
    }

    /// The template from config (`[]`: the default).
    pub fn from_config(command: &WorkerCommand) -> Template {
        if command.words.is_empty() {
            Template::default()
        } else {
            Template {
                words: command.words.clone(),
                pinned: command.pinned.clone(),
            }
        }
    }

    /// Program and arguments with the placeholders filled.
    /// Each placeholder becomes its own argument(s); a word is never rewritten. A task or
    /// swarm id that is not a plain name is refused here, where it would be passed on.
    pub fn expand(&self, vars: &Vars) -> Result<(String, Vec<String>), String> {
        Template::check(&self.words)?;
        // Checked at each launch, not once: a worker's command could rewrite the file
        // between two launches.
        for pin in &self.pinned {
            if let Some(why) = pin.changed("the launch template", "the worker was not started") {
                return Err(format!("{why} and resume the swarm"));
            }
        }
        for (what, id) in [("task", &vars.task_id), ("swarm", &vars.swarm_id)] {
            if !crate::task::is_valid_id(id) {
                return Err(format!(
                    "{what} id {id:?} is not 1–{} of A-Z a-z 0-9 _ -; the worker was not started",
                    crate::task::MAX_ID_LEN
                ));
            }
        }
        let mut out: Vec<String> = Vec::new();
        for word in &self.words {
            match word.as_str() {
                "{args}" => out.extend(vars.args.iter().cloned()),
                "{atto}" => out.push(vars.atto.clone()),
                "{workspace}" => out.push(vars.workspace.clone()),
                "{task_id}" => out.push(vars.task_id.clone()),
                "{swarm_id}" => out.push(vars.swarm_id.clone()),
                _ => out.push(word.clone()),
            }
        }
        let mut it = out.into_iter();
        let program = it
            .next()
            .filter(|p| !p.is_empty())
            .ok_or("the worker command is empty")?;
        Ok((program, it.collect()))
    }
}

/// What to run.
#[derive(Debug, Clone)]
pub struct Launch {
    /// Program.
    pub program: String,
    /// Arguments.
    pub args: Vec<String>,
    /// Working directory.
    pub cwd: PathBuf,
    /// The task prompt, sent as the first op.
    pub prompt: String,
    /// Longest the worker may run; then it is killed.
    pub timeout: Duration,
    /// A remote worker's base: its bytes go on stdin ahead of the task, once the node
    /// said what it holds (its `git_have` line). `None`: the task is sent at once.
    pub base: Option<BaseSource>,
}

/// Makes what a remote worker's stdin begins with (the `git_base` line and its bundle)
/// from the commits its node's clone holds.
#[derive(Clone)]
pub struct BaseSource {
    /// The bytes, made from the node's `git_have` commits.
    #[allow(clippy::type_complexity)]
    pub make: Arc<
        dyn Fn(Vec<String>) -> Pin<Box<dyn Future<Output = Result<Vec<u8>, String>> + Send>>
            + Send
            + Sync,
    >,
    /// How long the node's `git_have` line is waited for: past it the base is made for a
    /// node holding nothing (a launcher that holds the node's output back, a filter
    /// buffering it, would otherwise keep both sides waiting for the other).
    pub wait: Duration,
}

impl std::fmt::Debug for BaseSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BaseSource")
    }
}

/// Something a running worker needs from the coordinator, or tells it.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// It started (process id, when known).
    Started(Option<u32>),
    /// It started a tool call (one line).
    Activity(String),
    /// It waits for an approval the mailbox passed on; answer through the channel
    /// given to [`run`].
    Approval(ApprovalRequest),
    /// The mailbox answered one itself.
    Answered(ApprovalRequest, ApprovalDecision),
}

/// What a worker did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Report {
    /// Its session id.
    pub session_id: Option<String>,
    /// Its model, as the session reported it.
    pub model: Option<String>,
    /// Process exit code (`None`: killed by a signal, or never started).
    pub exit_code: Option<i32>,
    /// The signal that killed it.
    pub signal: Option<i32>,
    /// Its final result line, when it wrote one.
    pub result: Option<FinalResult>,
    /// Every tool call, in order.
    pub actions: Vec<ToolAction>,
    /// The end of its stderr.
    pub stderr_tail: String,
    /// Killed at the timeout.
    pub timed_out: bool,
    /// Stopped because the swarm was interrupted.
    pub interrupted: bool,
    /// It could not be started: why.
    pub spawn_error: Option<String>,
    /// Wall time.
    pub duration_ms: u64,
    /// A remote worker's task branch, from its `git_result` line.
    pub returned: Option<crate::remote::transport::ResultEvent>,
    /// A remote worker completed, but its branch could not be brought back: why.
    pub transport_error: Option<String>,
    /// The Slurm node a remote worker said it runs on (its `worker_node` line).
    pub node: Option<String>,
}

impl Report {
    /// Tokens it reported.
    pub fn tokens(&self) -> u64 {
        self.result
            .as_ref()
            .map_or(0, |r| atto_llm::total_tokens(&r.usage))
    }

    /// One line on why it did not produce a usable result, `None` when it did.
    pub fn failure(&self) -> Option<(String, String)> {
        if let Some(err) = &self.spawn_error {
            // `start`: the launch failed before any model was asked (the template, its
            // program, the worktree), so it says nothing about the model.
            return Some(("start".into(), format!("the worker could not start: {err}")));
        }
        if self.timed_out {
            return Some((
                "timeout".into(),
                "the worker ran past its time limit and was killed".into(),
            ));
        }
        if self.interrupted {
            return Some(("interrupted".into(), "the swarm was interrupted".into()));
        }
        let tail = self
            .stderr_tail
            .lines()
            .last()
            .unwrap_or("")
            .trim()
            .to_owned();
        let Some(result) = &self.result else {
            let how = match (self.signal, self.exit_code) {
                (Some(sig), _) => format!("was killed by signal {sig}"),
                (None, Some(code)) => format!("exited with {code}"),
                (None, None) => "ended".to_owned(),
            };
            let tail = if tail.is_empty() {
                String::new()
            } else {
                format!(": {tail}")
            };
            return Some((
                "error".into(),
                format!("the worker {how} without a result{tail}"),
            ));
        };
        match result.status {
            // `transport`: the worker finished, its work did not reach the workspace (the
            // bundle could not be fetched): nothing the model did, as with `start`.
            TurnStatus::Completed => self.transport_error.as_ref().map(|err| {
                (
                    "transport".into(),
                    format!("the worker's work could not be brought back: {err}"),
                )
            }),
            TurnStatus::LimitReached => {
                let why = result
                    .error
                    .clone()
                    .unwrap_or_else(|| "a limit stopped it".into());
                let mode = if why.contains("budget") || why.contains("cap") {
                    "budget"
                } else {
                    "error"
                };
                Some((mode.into(), why))
            }
            TurnStatus::Cancelled => {
                Some(("error".into(), "the worker's task was cancelled".into()))
            }
            TurnStatus::Failed => Some((
                if result
                    .error
                    .as_deref()
                    .is_some_and(|e| e.contains("budget"))
                {
                    "budget".into()
                } else {
                    "error".into()
                },
                result
                    .error
                    .clone()
                    .unwrap_or_else(|| "the worker failed".into()),
            )),
        }
    }
}

/// Runs one worker to its end. `decide` answers approval requests it can (the
/// mailbox's automatic tiers); the others go out as [`Message::Approval`] and their
/// answers come back on `answers` as `(request id, decision)`. `stop` turning true
/// stops the worker.
pub async fn run(
    launch: Launch,
    decide: &(dyn Fn(&ApprovalRequest) -> Option<ApprovalDecision> + Send + Sync),
    messages: mpsc::UnboundedSender<Message>,
    mut answers: mpsc::UnboundedReceiver<(String, ApprovalDecision)>,
    mut stop: watch::Receiver<bool>,
) -> Report {
    let started = Instant::now();
    let mut report = Report::default();
    let (child, mut stdin, stdout, stderr) = match spawn(&launch) {
        Ok(started) => started,
        Err(err) => {
            report.spawn_error = Some(err);
            return report;
        }
    };
    let _ = messages.send(Message::Started(child.id()));
    // A remote worker's task waits for its base, which waits for the node's `git_have`.
    if launch.base.is_none() {
        send_prompt(&mut stdin, &[], &launch.prompt).await;
    }
    let err_task = tail_of(stderr);
    let mut io = Io {
        child,
        stdin: Some(stdin),
        reader: tokio::io::BufReader::new(stdout),
    };
    let channels = Channels {
        decide,
        messages: &messages,
        answers: &mut answers,
        stop: &mut stop,
    };
    converse(&mut io, &launch, channels, &mut report).await;
    let Io {
        mut child, stdin, ..
    } = io;
    drop(stdin);
    reap(&mut child, &mut report).await;
    report.stderr_tail = err_task.await.unwrap_or_default();
    report.duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    report
}

/// A running worker's process, the pipe to it and its output.
struct Io {
    child: tokio::process::Child,
    stdin: Option<tokio::process::ChildStdin>,
    reader: tokio::io::BufReader<tokio::process::ChildStdout>,
}

/// What a worker's conversation answers through and listens to.
struct Channels<'a> {
    decide: &'a (dyn Fn(&ApprovalRequest) -> Option<ApprovalDecision> + Send + Sync),
    messages: &'a mpsc::UnboundedSender<Message>,
    answers: &'a mut mpsc::UnboundedReceiver<(String, ApprovalDecision)>,
    stop: &'a mut watch::Receiver<bool>,
}

/// Reads the worker's events into `report` and answers it until its output ends, it is
/// done, it times out or the swarm stops.
async fn converse(io: &mut Io, launch: &Launch, channels: Channels<'_>, report: &mut Report) {
    let Channels {
        decide,
        messages,
        answers,
        stop,
    } = channels;
    let Io {
        child,
        stdin,
        reader,
    } = io;
    let mut awaiting_base = launch.base.clone();
    let deadline = tokio::time::sleep(launch.timeout);
    tokio::pin!(deadline);
    let base_wait = tokio::time::sleep(launch.base.as_ref().map_or(Duration::ZERO, |b| b.wait));
    tokio::pin!(base_wait);
    let mut buf = Vec::new();
    let mut pending: Vec<(String, usize)> = Vec::new();
    loop {
        buf.clear();
        let mut limited = (&mut *reader).take(MAX_LINE as u64);
        // The commits a remote worker's base is to be made for, once it is time to send it.
        let mut send_base_for = None;
        tokio::select! {
            read = limited.read_until(b'\n', &mut buf) => {
                match read {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
                let Ok(value) = serde_json::from_slice::<Value>(&buf) else { continue };
                if awaiting_base.is_some() && is_have(&value) {
                    send_base_for = Some(haves_of(&value));
                } else {
                    handle_line(&value, report, &mut pending, decide, messages, stdin).await;
                }
                if report.result.is_some() {
                    // Done: closing stdin lets it end.
                    *stdin = None;
                }
            }
            answer = answers.recv() => {
                if let Some((id, decision)) = answer {
                    send_op(stdin, &Op::Approval { id, decision }).await;
                }
            }
            () = &mut base_wait, if awaiting_base.is_some() => {
                // No `git_have` in time: the whole base, as for a node holding nothing.
                send_base_for = Some(Vec::new());
            }
            () = &mut deadline => {
                report.timed_out = true;
                let _ = child.start_kill();
                break;
            }
            changed = stop.changed() => {
                if changed.is_err() || *stop.borrow() {
                    report.interrupted = true;
                    interrupt(child, stdin).await;
                    break;
                }
            }
        }
        if let Some(haves) = send_base_for
            && let Some(base) = awaiting_base.take()
            && let Err(err) = send_base(&base, haves, stdin, &launch.prompt).await
        {
            report.spawn_error = Some(err);
            let _ = child.start_kill();
            break;
        }
    }
}

/// The worker's process and its three pipes.
type Started = (
    tokio::process::Child,
    tokio::process::ChildStdin,
    tokio::process::ChildStdout,
    tokio::process::ChildStderr,
);

/// Starts the worker's process, its three pipes open.
fn spawn(launch: &Launch) -> Result<Started, String> {
    let mut command = tokio::process::Command::new(&launch.program);
    command
        .args(&launch.args)
        .current_dir(&launch.cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = command
        .spawn()
        .map_err(|err| format!("{}: {err}", launch.program))?;
    match (child.stdin.take(), child.stdout.take(), child.stderr.take()) {
        (Some(stdin), Some(stdout), Some(stderr)) => Ok((child, stdin, stdout, stderr)),
        _ => Err("its pipes could not be opened".into()),
    }
}

/// Whether `value` is the node side's `git_have` line.
fn is_have(value: &Value) -> bool {
    value.get("type").and_then(Value::as_str) == Some("git_have")
}

/// The commits a `git_have` line names (none when it is malformed).
fn haves_of(value: &Value) -> Vec<String> {
    serde_json::from_value::<HaveEvent>(value.clone())
        .map(|h| h.commits)
        .unwrap_or_default()
}

/// Answers the node's `git_have` line (`haves`: the commits it named): the base made for
/// what it holds, then the task.
async fn send_base(
    base: &BaseSource,
    haves: Vec<String>,
    stdin: &mut Option<tokio::process::ChildStdin>,
    prompt: &str,
) -> Result<(), String> {
    let preamble = (base.make)(haves)
        .await
        .map_err(|e| format!("its base could not be published: {e}"))?;
    if let Some(pipe) = stdin.as_mut() {
        send_prompt(pipe, &preamble, prompt).await;
    }
    Ok(())
}

/// Writes `preamble` and the task prompt, the worker's first op.
async fn send_prompt(stdin: &mut tokio::process::ChildStdin, preamble: &[u8], prompt: &str) {
    let first = Op::UserInput {
        text: prompt.to_owned(),
    };
    let mut line = preamble.to_vec();
    line.extend(serde_json::to_vec(&first).unwrap_or_default());
    line.push(b'\n');
    if stdin.write_all(&line).await.is_err() {
        // It died at once; what it wrote and how it exited tell why.
    }
    let _ = stdin.flush().await;
}

/// The last lines of what the worker writes on stderr, read to its end.
fn tail_of(mut stderr: tokio::process::ChildStderr) -> tokio::task::JoinHandle<String> {
    tokio::spawn(async move {
        let mut tail: VecDeque<String> = VecDeque::new();
        let mut buf = Vec::new();
        let _ = (&mut stderr).take(1 << 20).read_to_end(&mut buf).await;
        for l in String::from_utf8_lossy(&buf).lines() {
            if tail.len() == STDERR_LINES {
                tail.pop_front();
            }
            tail.push_back(l.to_owned());
        }
        Vec::from(tail).join("\n")
    })
}

/// Waits a bounded time for the worker to exit and records how; one that does not is
/// killed.
async fn reap(child: &mut tokio::process::Child, report: &mut Report) {
    let status = tokio::time::timeout(Duration::from_secs(10), child.wait()).await;
    match status {
        Ok(Ok(status)) => {
            use std::os::unix::process::ExitStatusExt as _;
            report.exit_code = status.code();
            report.signal = status.signal();
        }
        _ => {
            let _ = child.start_kill();
            let _ = child.wait().await;
        }
    }
}

/// Asks the worker to stop, gives it a moment to do so on its own (it records its
/// state), then kills it.
async fn interrupt(
    child: &mut tokio::process::Child,
    stdin: &mut Option<tokio::process::ChildStdin>,
) {
    send_op(stdin, &Op::Interrupt).await;
    let _ = tokio::time::timeout(Duration::from_secs(3), child.wait()).await;
    let _ = child.start_kill();
}

async fn send_op(stdin: &mut Option<tokio::process::ChildStdin>, op: &Op) {
    let Some(pipe) = stdin.as_mut() else { return };
    let mut line = serde_json::to_string(op).unwrap_or_default();
    line.push('\n');
    if pipe.write_all(line.as_bytes()).await.is_err() || pipe.flush().await.is_err() {
        *stdin = None;
    }
}

#[cfg(test)]
mod tests;
