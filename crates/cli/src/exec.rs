//! `atto exec`: one task, no terminal, machine-readable output, meaningful exit codes.

use std::io::{IsTerminal, Read, Write};
use std::path::PathBuf;

use atto_core::AgentHandle;
use atto_line::{InputFormat, OnAsk, OutputFormat};
use atto_protocol::{
    ApprovalDecision, ApprovalRequest, Event, FailureKind, FinalResult, Op, TurnStatus,
};
use clap::Args;

use crate::{ExitCode, Failure};
use atto_line::render::{self, TextRenderer};

/// The engine's readings the line session's and exec's text shows: what a proposed change
/// is about, how a permission mode is spelt, which tool runs a subagent.
pub const FACTS: atto_line::Facts = atto_line::Facts {
    change_target: atto_core::change_target,
    permission_name: atto_policy::gate::permission_name,
    spawn_tool: atto_policy::gate::SPAWN_TOOL,
};

#[derive(Debug, Args)]
pub struct ExecArgs {
    /// The session's options (model, permissions, modes), also accepted here.
    #[command(flatten)]
    pub session: crate::GlobalArgs,
    /// The task. Standard input, when it is not a terminal, is appended to it (or is the
    /// task when none is given).
    pub task: Option<String>,
    /// Read the task from this file (appended after TASK).
    #[arg(long, value_name = "FILE")]
    pub prompt_file: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub output_format: OutputFormat,
    /// Model calls allowed for the task.
    #[arg(long, value_name = "N")]
    pub max_rounds: Option<u32>,
    /// Wall-clock limit for the task, in seconds.
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<u64>,
    /// When a call needs approval: deny it, fail the task, or allow it.
    #[arg(long, value_enum, default_value = "deny")]
    pub on_ask: OnAsk,
    /// Input format; with stream-json, approvals are answered by JSON lines on stdin.
    /// When stdin ends, every open approval is answered as --on-ask says.
    #[arg(long, value_enum, default_value = "text")]
    pub input_format: InputFormat,
    /// This exact command may re-run WITHOUT the sandbox if the sandbox stops it
    /// (repeatable). Nothing else ever does in a headless run.
    #[arg(long, value_name = "COMMAND")]
    pub allow_unsandboxed: Vec<String>,
    /// With --input-format stream-json: stop the task when stdin closes (the process
    /// driving this one is gone), instead of finishing it with --on-ask answering.
    #[arg(long)]
    pub stop_on_stdin_close: bool,
}

impl ExecArgs {
    /// `atto -p TEXT`: `atto exec TEXT` with exec's defaults.
    pub fn one_shot(task: String) -> ExecArgs {
        ExecArgs {
            session: crate::GlobalArgs::default(),
            task: Some(task),
            prompt_file: None,
            output_format: OutputFormat::Text,
            max_rounds: None,
            timeout: None,
            on_ask: OnAsk::Deny,
            input_format: InputFormat::Text,
            allow_unsandboxed: Vec::new(),
            stop_on_stdin_close: false,
        }
    }
}

/// Collects the task text from the argument, the prompt file and stdin.
pub fn task_text(args: &ExecArgs) -> Result<String, Failure> {
    let mut parts: Vec<String> = Vec::new();
    if let Some(task) = &args.task {
        parts.push(task.clone());
    }
    if let Some(path) = &args.prompt_file {
        let text = std::fs::read_to_string(path).map_err(|e| {
            Failure::usage(format!("cannot read prompt file {}: {e}", path.display()))
        })?;
        parts.push(text);
    }
    let stdin = std::io::stdin();
    // With stream-json input, stdin carries ops (approvals), not the task.
    if args.input_format == InputFormat::Text && !stdin.is_terminal() {
        let mut text = String::new();
        stdin
            .lock()
            .read_to_string(&mut text)
            .map_err(|e| Failure::usage(format!("cannot read the task from stdin: {e}")))?;
        if !text.trim().is_empty() {
            parts.push(text);
        }
    }
    let task = parts.join("\n\n");
    if task.trim().is_empty() && args.input_format == InputFormat::Text {
        return Err(Failure::usage(
            "no task given: pass it as an argument (atto exec \"fix the tests\"), with \
             --prompt-file FILE, or on stdin",
        ));
    }
    Ok(task)
}

/// How a headless run talks to its session.
pub struct RunOptions {
    pub format: OutputFormat,
    pub input: InputFormat,
    pub on_ask: OnAsk,
    /// Stop the task when stdin (stream-json input) closes.
    pub stop_on_stdin_close: bool,
}

/// Runs the task to the end and returns the exit code.
pub async fn run(
    mut handle: AgentHandle,
    session_id: &str,
    task: String,
    options: RunOptions,
) -> ExitCode {
    let ops = handle.op_sender();
    if !task.trim().is_empty() && ops.submit(Op::UserInput { text: task }).is_err() {
        eprintln!("atto: the session ended before the task could start");
        return ExitCode::Failed;
    }
    // With stream-json input, approvals are answered on stdin until it closes; from then
    // on (and always with text input) --on-ask answers them, the open ones at once.
    let (closed_tx, mut stdin_closed) = tokio::sync::oneshot::channel::<()>();
    let mut answered_on_stdin = options.input == InputFormat::StreamJson;
    if answered_on_stdin {
        let reader = ops.clone();
        tokio::spawn(async move {
            read_ops(reader).await;
            let _ = closed_tx.send(());
        });
    } else {
        drop(closed_tx);
    }
    // One Ctrl-C listener for the whole run (see `signal`).
    let mut sigint = atto_line::signal::sigint();
    let mut open_asks: Vec<ApprovalRequest> = Vec::new();
    let mut text = TextRenderer::new(std::io::stdout(), std::io::stderr(), FACTS);
    let mut result: Option<FinalResult> = None;
    let mut interrupts = 0u32;
    let mut refused_ask: Option<String> = None;
    loop {
        let event = tokio::select! {
            event = handle.next_event() => event,
            _ = &mut stdin_closed, if answered_on_stdin => {
                answered_on_stdin = false;
                if options.stop_on_stdin_close {
                    eprintln!("atto: stdin closed; stopping the task");
                    let _ = ops.submit(Op::Interrupt);
                }
                for request in open_asks.drain(..) {
                    answer_headless(&ops, options.on_ask, &request, &mut refused_ask);
                }
                continue;
            }
            Some(()) = sigint.recv() => {
                interrupts += 1;
                if interrupts > 1 {
                    eprintln!("atto: interrupted twice; exiting now");
                    return ExitCode::Cancelled;
                }
                eprintln!("atto: cancelling (Ctrl-C again to exit at once)");
                let _ = ops.submit(Op::Interrupt);
                continue;
            }
        };
        let Some(event) = event else { break };
        show(options.format, &mut text, &event);
        match event {
            Event::ApprovalRequired(request) if answered_on_stdin => open_asks.push(request),
            Event::ApprovalRequired(request) => {
                answer_headless(&ops, options.on_ask, &request, &mut refused_ask);
            }
            Event::ToolCallFinished { call_id, .. } => {
                open_asks.retain(|r| r.call_id != call_id);
            }
            Event::TurnCompleted { result: r, .. } => {
                result = Some(r);
                // One task per run: end the session once it is done.
                let _ = ops.submit(Op::Shutdown);
            }
            _ => {}
        }
    }
    conclude(result, refused_ask, session_id, options.format)
}

/// Shows an event as `--output-format` says (the final `json` object comes at the end).
fn show(
    format: OutputFormat,
    text: &mut TextRenderer<std::io::Stdout, std::io::Stderr>,
    event: &Event,
) {
    match format {
        OutputFormat::Text => text.event(event),
        OutputFormat::StreamJson => {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{}", render::event_json(event));
            let _ = out.flush();
        }
        OutputFormat::Json => {}
    }
}

/// The run's end: the task's result (failed when `--on-ask fail` refused an approval),
/// where the wire log is when it failed, the `result` object for the JSON formats, and
/// the exit code.
fn conclude(
    result: Option<FinalResult>,
    refused_ask: Option<String>,
    session_id: &str,
    format: OutputFormat,
) -> ExitCode {
    let Some(mut result) = result else {
        eprintln!("atto: the session ended without finishing the task");
        return ExitCode::Failed;
    };
    if let Some(message) = refused_ask {
        result.status = TurnStatus::Failed;
        result.failure = Some(FailureKind::Request);
        result.error = Some(format!(
            "{message}; stopped because of --on-ask fail. Rerun with --on-ask allow, a \
             --permission mode that allows it, or a [permissions] allow rule"
        ));
        eprintln!("atto: {}", result.error.as_deref().unwrap_or(""));
    }
    if result.status == TurnStatus::Failed
        && let Some(log) = crate::setup::wire_log_path()
    {
        eprintln!(
            "atto: every request and response of this run is in {}",
            log.display()
        );
    }
    if format != OutputFormat::Text {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{}", render::result_json(session_id, 1, &result));
        let _ = out.flush();
    }
    exit_code(&result)
}

/// Answers an approval as `--on-ask` says, with no one to ask. Running a command
/// WITHOUT the sandbox is never approved this way: only a person, or the exact command
/// named with `--allow-unsandboxed` (core applies that list before asking), allows it.
fn answer_headless(
    ops: &atto_core::OpSender,
    on_ask: OnAsk,
    request: &ApprovalRequest,
    refused_ask: &mut Option<String>,
) {
    let decision = if request.unsandboxed {
        ApprovalDecision::No {
            reason: Some(format!(
                "this headless run cannot approve running a command WITHOUT the sandbox \
                 (--on-ask never does). To allow it deliberately, name the exact command: \
                 atto exec --allow-unsandboxed '{}' …, or unsandboxed_commands in the config",
                request
                    .subject
                    .trim_start_matches("this runs WITHOUT the sandbox: ")
            )),
        }
    } else {
        match on_ask {
            OnAsk::Allow => ApprovalDecision::Yes,
            OnAsk::Deny => ApprovalDecision::No {
                reason: Some(
                    "this is a headless run and approvals are denied (--on-ask deny)".to_owned(),
                ),
            },
            OnAsk::Fail => {
                *refused_ask = Some(format!(
                    "{} needed approval ({}): {}",
                    request.tool,
                    request.risk,
                    request.subject.lines().next().unwrap_or("")
                ));
                let _ = ops.submit(Op::Interrupt);
                ApprovalDecision::No { reason: None }
            }
        }
    };
    let _ = ops.submit(Op::Approval {
        id: request.id.clone(),
        decision,
    });
}

/// The longest stdin line taken as an op. Ops are short JSON lines (an approval is well
/// under a kilobyte); a longer line is reported and skipped without being held whole.
const MAX_OP_LINE: usize = 1 << 20;

/// Reads JSON ops from stdin and passes them to the session; a bad line is reported and
/// skipped.
async fn read_ops(ops: atto_core::OpSender) {
    let mut input = tokio::io::BufReader::new(tokio::io::stdin());
    let mut buf = Vec::new();
    while let Some(line) = next_op_line(&mut input, &mut buf).await {
        let Some(line) = line else {
            eprintln!(
                "atto: ignoring an input line longer than {} MiB: an op is one short JSON line",
                MAX_OP_LINE >> 20
            );
            continue;
        };
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Op>(&line) {
            Ok(op) => {
                if ops.submit(op).is_err() {
                    break;
                }
            }
            Err(err) => eprintln!("atto: ignoring input line that is not an op ({err}): {line}"),
        }
    }
}

/// The next line of `input` without its line end: `None` at the end of the input (or when
/// it cannot be read), `Some(None)` for a line longer than [`MAX_OP_LINE`], which is read
/// past without being held.
async fn next_op_line(
    input: &mut (impl tokio::io::AsyncBufRead + Unpin),
    buf: &mut Vec<u8>,
) -> Option<Option<String>> {
    use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _};
    buf.clear();
    let most = u64::try_from(MAX_OP_LINE + 1).ok()?;
    if (&mut *input).take(most).read_until(b'\n', buf).await.ok()? == 0 {
        return None;
    }
    if buf.last() == Some(&b'\n') {
        buf.pop();
    } else if buf.len() > MAX_OP_LINE {
        loop {
            let chunk = input.fill_buf().await.ok()?;
            if chunk.is_empty() {
                break;
            }
            if let Some(end) = chunk.iter().position(|b| *b == b'\n') {
                input.consume(end + 1);
                break;
            }
            let all = chunk.len();
            input.consume(all);
        }
        return Some(None);
    }
    Some(Some(String::from_utf8_lossy(buf).into_owned()))
}

/// DESIGN.md §5: 0 done, 1 failed, 2 bad config (credentials, endpoint), 75 retryable
/// infrastructure failure, 130 cancelled.
pub fn exit_code(result: &FinalResult) -> ExitCode {
    match result.status {
        TurnStatus::Completed => ExitCode::Ok,
        TurnStatus::Cancelled => ExitCode::Cancelled,
        TurnStatus::LimitReached => ExitCode::Failed,
        TurnStatus::Failed => match result.failure {
            Some(FailureKind::Config) => ExitCode::Usage,
            Some(FailureKind::Transient) => ExitCode::Retryable,
            Some(FailureKind::Request) | None => ExitCode::Failed,
        },
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncReadExt as _;

    use super::*;

    #[tokio::test]
    async fn a_100_mb_input_line_is_skipped_without_being_held_and_the_next_op_read() {
        let op = r#"{"type":"shutdown"}"#;
        let long = tokio::io::repeat(b'x').take(100 << 20);
        let rest = format!("\n{op}\n");
        let mut input = tokio::io::BufReader::new(long.chain(rest.as_bytes()));
        let mut buf = Vec::new();
        assert_eq!(next_op_line(&mut input, &mut buf).await, Some(None));
        assert!(
            buf.capacity() <= 2 * MAX_OP_LINE + 1,
            "held {} bytes",
            buf.capacity()
        );
        assert_eq!(
            next_op_line(&mut input, &mut buf).await,
            Some(Some(op.to_owned()))
        );
        assert_eq!(next_op_line(&mut input, &mut buf).await, None);
    }

    #[test]
    fn an_op_nested_10000_deep_is_refused_by_the_recursion_limit() {
        let deep = format!(
            r#"{{"type":"approval","id":{}{}}}"#,
            "[".repeat(10_000),
            "]".repeat(10_000)
        );
        let err = serde_json::from_str::<Op>(&deep).unwrap_err();
        assert!(err.to_string().contains("recursion limit"), "{err}");
    }
}
