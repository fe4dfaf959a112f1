//! `atto exec`: one task, no terminal, machine-readable output, meaningful exit codes.

use std::io::{IsTerminal, Read, Write};
use std::path::PathBuf;

use atto_core::AgentHandle;
use atto_protocol::{Event, FailureKind, FinalResult, Op, TurnStatus};
use clap::{Args, ValueEnum};

use crate::render::{self, TextRenderer};
use crate::{ExitCode, Failure};

/// How `atto exec` reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// Answer text on stdout, progress on stderr.
    Text,
    /// The final result object only, on stdout.
    Json,
    /// One JSON event per line on stdout, the result last.
    StreamJson,
}

#[derive(Debug, Args)]
pub struct ExecArgs {
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
    if !stdin.is_terminal() {
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
    if task.trim().is_empty() {
        return Err(Failure::usage(
            "no task given: pass it as an argument (atto exec \"fix the tests\"), with \
             --prompt-file FILE, or on stdin",
        ));
    }
    Ok(task)
}

/// Runs the task to the end and returns the exit code.
pub async fn run(
    mut handle: AgentHandle,
    session_id: &str,
    task: String,
    format: OutputFormat,
) -> ExitCode {
    let ops = handle.op_sender();
    if ops.submit(Op::UserInput { text: task }).is_err() || ops.submit(Op::Shutdown).is_err() {
        eprintln!("atto: the session ended before the task could start");
        return ExitCode::Failed;
    }
    let mut text = TextRenderer::new(std::io::stdout(), std::io::stderr());
    let mut result: Option<FinalResult> = None;
    let mut interrupts = 0u32;
    loop {
        let event = tokio::select! {
            event = handle.next_event() => event,
            signal = tokio::signal::ctrl_c() => {
                if signal.is_ok() {
                    interrupts += 1;
                    if interrupts > 1 {
                        eprintln!("atto: interrupted twice; exiting now");
                        return ExitCode::Cancelled;
                    }
                    eprintln!("atto: cancelling (Ctrl-C again to exit at once)");
                    let _ = ops.submit(Op::Interrupt);
                }
                continue;
            }
        };
        let Some(event) = event else { break };
        match format {
            OutputFormat::Text => text.event(&event),
            OutputFormat::StreamJson => {
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "{}", render::event_json(&event));
                let _ = out.flush();
            }
            OutputFormat::Json => {}
        }
        if let Event::TurnCompleted { result: r, .. } = event {
            result = Some(r);
        }
    }
    let Some(result) = result else {
        eprintln!("atto: the session ended without finishing the task");
        return ExitCode::Failed;
    };
    if format != OutputFormat::Text {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{}", render::result_json(session_id, 1, &result));
        let _ = out.flush();
    }
    exit_code(&result)
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
