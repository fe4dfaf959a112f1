//! Turning events into what a person reads (text) or a program reads (JSON lines).

use std::io::Write;

use atto_present as present;
use atto_protocol::{
    ApprovalRequest, Event, FinalResult, PermissionMode, ProposedChange, ToolCallStatus,
};
use serde_json::Value;

mod agents;
mod effort;
mod json;
mod learnings;
mod lists;
mod mcp;
mod planner;
mod rewind;

use atto_present::clean::{Clean, visible};
pub use json::{event_json, result_json, tagged};
pub use lists::{checkpoint_table, goal_list, grant_table, plan_outcomes, plan_view, thread_tree};

/// Lines of a tool's output shown under its call.
const SUMMARY_LINES: usize = 3;

/// What the text shows that only the engine can say: the binary passes the engine's
/// readings, as it passes the terminal UI its `AppInfo::change_target`.
#[derive(Debug, Clone, Copy)]
pub struct Facts {
    /// The file or command a proposed change is about, read from its arguments.
    pub change_target: fn(&ProposedChange) -> String,
    /// How a permission mode is spelt in the config (what `mode:` lines show).
    pub permission_name: fn(PermissionMode) -> &'static str,
    /// The tool that runs a subagent (its report is printed when the subagent finishes).
    pub spawn_tool: &'static str,
}

/// Writes events as readable text: answer text to `text`, progress to `progress`. Both
/// pass through [`Clean`]: no escape sequence or control character from the model, a
/// tool or a command reaches the terminal.
pub struct TextRenderer<T: Write, P: Write> {
    text: Clean<T>,
    progress: Clean<P>,
    /// Whether the last thing written to `text` ended a line.
    at_line_start: bool,
    in_thinking: bool,
    /// Calls of the current reply not yet printed to the end, in call order: parallel
    /// calls finish in any order but are shown in the order the model made them.
    calls: std::collections::VecDeque<PendingCall>,
    facts: Facts,
}

/// A call's lines, held until every call before it is shown.
struct PendingCall {
    id: String,
    start: String,
    start_shown: bool,
    finish: Option<String>,
}

impl<T: Write, P: Write> TextRenderer<T, P> {
    pub fn new(text: T, progress: P, facts: Facts) -> Self {
        Self {
            text: Clean::new(text),
            progress: Clean::new(progress),
            at_line_start: true,
            in_thinking: false,
            calls: std::collections::VecDeque::new(),
            facts,
        }
    }

    /// Renders one event. Write errors (a closed pipe) are ignored: output is best-effort
    /// and must never stop the session.
    pub fn event(&mut self, event: &Event) {
        let _ = self.write_event(event);
    }

    fn end_text_line(&mut self) -> std::io::Result<()> {
        if !self.at_line_start {
            writeln!(self.text)?;
            self.text.flush()?;
            self.at_line_start = true;
        }
        self.in_thinking = false;
        Ok(())
    }

    fn write_event(&mut self, event: &Event) -> std::io::Result<()> {
        if matches!(event, Event::TurnCompleted { .. }) {
            self.show_all_calls()?;
        }
        if let Some(text) = planner::text(event)
            .or_else(|| learnings::text(event))
            .or_else(|| mcp::text(event))
            .or_else(|| rewind::text(event))
        {
            if text.is_empty() {
                return Ok(());
            }
            self.end_text_line()?;
            write!(self.progress, "{text}")?;
            return self.progress.flush();
        }
        match writer(event) {
            Writer::Stream => self.write_stream(event),
            Writer::Calls => self.write_calls(event),
            Writer::Lists => self.write_lists(event),
            Writer::Recovery => self.write_recovery(event),
            Writer::Status => self.write_status(event),
            Writer::Reports => self.write_reports(event),
            Writer::Agents => self.write_agents(event),
            Writer::Nothing => Ok(()),
        }
    }

    /// What `/model`, `/context` and `/cost` answer, and a compaction.
    fn write_reports(&mut self, event: &Event) -> std::io::Result<()> {
        match event {
            Event::ModelChanged { model, auto, note } => {
                self.end_text_line()?;
                writeln!(
                    self.progress,
                    "{}",
                    present::model_changed_line(model, *auto, note.as_deref())
                )?;
            }
            Event::ModelList {
                current,
                auto,
                models,
                routes,
            } => {
                self.end_text_line()?;
                for line in present::model_list_lines(current, *auto, models, routes) {
                    writeln!(self.progress, "{}", visible(&line))?;
                }
            }
            Event::ContextReport {
                context,
                asked: true,
            } => {
                self.end_text_line()?;
                for line in present::context_lines(context) {
                    writeln!(self.progress, "{}", visible(&line))?;
                }
            }
            Event::ContextCompacted(compaction) => {
                self.end_text_line()?;
                let line = present::compaction_line(compaction);
                writeln!(self.progress, "{}", visible(&line))?;
            }
            Event::CostReport { models } => {
                self.end_text_line()?;
                for line in present::cost_lines(models) {
                    writeln!(self.progress, "{}", visible(&line))?;
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Answer and thinking text, streamed.
    fn write_stream(&mut self, event: &Event) -> std::io::Result<()> {
        match event {
            Event::TextDelta { text } => {
                if self.in_thinking {
                    self.end_text_line()?;
                }
                write!(self.text, "{text}")?;
                self.text.flush()?;
                self.at_line_start = text.ends_with('\n');
            }
            Event::ThinkingDelta { text } => {
                if !self.in_thinking {
                    self.end_text_line()?;
                    write!(self.progress, "(thinking) ")?;
                    self.in_thinking = true;
                }
                write!(self.progress, "{text}")?;
                self.progress.flush()?;
            }
            _ => {}
        }
        Ok(())
    }

    /// Prints the held calls from the first on: each one's start line, and its end once
    /// it finished; a call still running holds back those after it.
    fn show_calls(&mut self) -> std::io::Result<()> {
        while let Some(call) = self.calls.front_mut() {
            if !call.start_shown {
                call.start_shown = true;
                write!(self.progress, "{}", call.start)?;
            }
            let Some(finish) = call.finish.take() else {
                break;
            };
            write!(self.progress, "{finish}")?;
            self.calls.pop_front();
        }
        self.progress.flush()
    }

    /// Shows every call still held: a turn that ends with calls unfinished hides none.
    fn show_all_calls(&mut self) -> std::io::Result<()> {
        while let Some(call) = self.calls.pop_front() {
            if !call.start_shown {
                write!(self.progress, "{}", call.start)?;
            }
            if let Some(finish) = call.finish {
                write!(self.progress, "{finish}")?;
            }
        }
        self.progress.flush()
    }

    /// Tool calls, retries and approvals.
    fn write_calls(&mut self, event: &Event) -> std::io::Result<()> {
        match event {
            Event::ToolCallStarted {
                call_id,
                name,
                arguments,
                ..
            } => {
                self.end_text_line()?;
                self.calls.push_back(PendingCall {
                    id: call_id.clone(),
                    start: format!("→ {name} {}\n", call_target(arguments)),
                    start_shown: false,
                    finish: None,
                });
                self.show_calls()?;
            }
            Event::ToolCallFinished {
                call_id,
                name,
                status,
                duration_ms,
                summary,
                exit_code,
                ..
            } => {
                // A subagent that ran printed its report when it finished: once is enough.
                let shown = name == self.facts.spawn_tool && *status == ToolCallStatus::Ok;
                let out = finish_lines(*status, *duration_ms, summary, *exit_code, shown);
                match self.calls.iter_mut().find(|c| c.id == *call_id) {
                    Some(call) => call.finish = Some(out),
                    None => write!(self.progress, "{out}")?,
                }
                self.show_calls()?;
            }
            Event::Retry(notice) => {
                self.end_text_line()?;
                writeln!(
                    self.progress,
                    "  retrying model call ({}/{}) in {:.1} s: {}",
                    notice.attempt + 1,
                    notice.max_attempts,
                    notice.delay_ms as f64 / 1000.0,
                    notice.reason
                )?;
            }
            Event::ApprovalRequired(request) => self.write_approval(request)?,
            _ => {}
        }
        Ok(())
    }

    /// What an approval asks about: who asks, the call, its risk and the reasons.
    fn write_approval(&mut self, request: &ApprovalRequest) -> std::io::Result<()> {
        self.end_text_line()?;
        // Shown, never obeyed: a carriage return or an escape sequence must not
        // hide part of what would run.
        if let Some(agent) = &request.subagent {
            writeln!(
                self.progress,
                "subagent {} ({}: {}) asks:",
                agents::short(&agent.id),
                agent.role.as_str(),
                visible(&agent.task)
            )?;
        }
        writeln!(
            self.progress,
            "approval needed: {} [{}]{}\n{}",
            request.tool,
            request.risk,
            if request.unsandboxed {
                " — this runs WITHOUT the sandbox"
            } else {
                ""
            },
            indent(&visible(&request.subject))
        )?;
        for reason in &request.reasons {
            writeln!(self.progress, "  - {}", visible(reason))?;
        }
        self.progress.flush()
    }

    /// Answers to listing commands: grants, threads, goals, checkpoints, plans.
    fn write_lists(&mut self, event: &Event) -> std::io::Result<()> {
        match event {
            Event::GrantList { grants } => {
                self.end_text_line()?;
                write!(self.progress, "{}", grant_table(grants))?;
            }
            Event::ThreadList { threads } => {
                self.end_text_line()?;
                write!(self.progress, "{}", thread_tree(threads))?;
            }
            Event::ChangeQueued { change } => {
                self.end_text_line()?;
                writeln!(
                    self.progress,
                    "  plan: change {} queued ({} {}); /show-plan to review",
                    change.order,
                    change.tool,
                    (self.facts.change_target)(change)
                )?;
            }
            Event::Plan { plan, previews } => {
                self.end_text_line()?;
                let target = self.facts.change_target;
                write!(
                    self.progress,
                    "{}",
                    plan_view(plan.as_ref(), previews, target)
                )?;
            }
            Event::PlanDecided {
                outcomes, tally, ..
            } => {
                self.end_text_line()?;
                write!(self.progress, "{}", plan_outcomes(outcomes, tally))?;
            }
            Event::Goals { goals, current } => {
                self.end_text_line()?;
                write!(self.progress, "{}", goal_list(goals, current.as_deref()))?;
            }
            Event::CheckpointList { checkpoints } => {
                self.end_text_line()?;
                write!(self.progress, "{}", checkpoint_table(checkpoints))?;
            }
            _ => {}
        }
        Ok(())
    }

    /// Restores and self-correction.
    fn write_recovery(&mut self, event: &Event) -> std::io::Result<()> {
        match event {
            Event::Restored {
                checkpoint,
                safety_checkpoint,
                restored,
                deleted,
                kept,
            } => {
                self.end_text_line()?;
                let what = if *checkpoint == 0 {
                    "undone".to_owned()
                } else {
                    format!("restored checkpoint {checkpoint}")
                };
                writeln!(
                    self.progress,
                    "{what}: {} file(s) written back, {} removed; /restore {safety_checkpoint} \
                 undoes this",
                    restored.len(),
                    deleted.len()
                )?;
                for path in restored {
                    writeln!(self.progress, "  M {path}")?;
                }
                for path in deleted {
                    writeln!(self.progress, "  D {path}")?;
                }
                for path in kept {
                    writeln!(
                        self.progress,
                        "  kept {path} (an ignored file stands there)"
                    )?;
                }
            }
            Event::CorrectionAttempt {
                tool,
                strategy,
                attempt,
                max,
                ..
            } => {
                self.end_text_line()?;
                writeln!(
                    self.progress,
                    "  self-correcting {tool} ({attempt}/{max}): {strategy}"
                )?;
            }
            Event::CorrectionSuccess { tool, attempts } => {
                self.end_text_line()?;
                writeln!(
                    self.progress,
                    "  {tool} recovered after {attempts} correction(s)"
                )?;
            }
            Event::CorrectionFailed { tool, attempts } => {
                self.end_text_line()?;
                writeln!(
                    self.progress,
                    "  self-correction gave up on {tool} after {attempts} attempt(s)"
                )?;
            }

            _ => {}
        }
        Ok(())
    }

    /// Session status: modes, settings, notices, warnings, errors, turn ends.
    fn write_status(&mut self, event: &Event) -> std::io::Result<()> {
        match event {
            Event::ThreadSwitched { thread } => {
                self.end_text_line()?;
                writeln!(
                    self.progress,
                    "now in thread {}{} ({} messages)",
                    thread.id,
                    thread
                        .label
                        .as_ref()
                        .map(|l| format!(" \"{l}\""))
                        .unwrap_or_default(),
                    thread.messages
                )?;
            }
            Event::Notice { message } => {
                self.end_text_line()?;
                writeln!(self.progress, "{message}")?;
            }
            Event::EffortChanged {
                effort,
                supported,
                model,
            } => {
                self.end_text_line()?;
                writeln!(
                    self.progress,
                    "{}",
                    effort::line(*effort, *supported, model)
                )?;
            }
            Event::TrustChanged { on } => {
                self.end_text_line()?;
                let state = if *on {
                    "on: file tools may reach outside the workspace"
                } else {
                    "off: file tools stay inside the workspace"
                };
                writeln!(self.progress, "trust {state}")?;
            }
            Event::Warning { message } => {
                self.end_text_line()?;
                writeln!(self.progress, "warning: {message}")?;
            }
            Event::Error { message } => {
                self.end_text_line()?;
                writeln!(self.progress, "error: {message}")?;
            }
            Event::TurnCompleted { result, .. } => {
                self.end_text_line()?;
                // A failure was already reported by its error event; one line is enough.
                if result.status != atto_protocol::TurnStatus::Failed {
                    writeln!(self.progress, "{}", result_line(result))?;
                }
                self.progress.flush()?;
            }
            Event::ModeChanged { mode, permission } => {
                self.end_text_line()?;
                writeln!(
                    self.progress,
                    "mode: {} (permission: {})",
                    mode.label(),
                    (self.facts.permission_name)(*permission)
                )?;
            }
            _ => {}
        }
        Ok(())
    }
}

/// Which of the renderer's writers shows an event; every event is placed here, so a new
/// one does not compile until it has a place.
enum Writer {
    /// Answer and thinking text.
    Stream,
    /// Tool calls, retries and approvals.
    Calls,
    /// Answers to listing commands.
    Lists,
    /// Restores and self-correction.
    Recovery,
    /// Modes, settings, notices, warnings, errors, turn ends.
    Status,
    /// `/model`, `/context`, `/cost` and compactions.
    Reports,
    /// Subagents.
    Agents,
    /// Nothing to show, or shown as a text block before the writers are asked.
    Nothing,
}

/// The writer that shows `event`.
fn writer(event: &Event) -> Writer {
    match event {
        Event::TextDelta { .. }
        | Event::ThinkingDelta { .. } => Writer::Stream,
        Event::ToolCallStarted { .. }
        | Event::ToolCallFinished { .. }
        | Event::Retry(_)
        | Event::ApprovalRequired(_) => Writer::Calls,
        Event::GrantList { .. }
        | Event::ThreadList { .. }
        | Event::Goals { .. }
        | Event::CheckpointList { .. }
        | Event::Plan { .. }
        | Event::PlanDecided { .. }
        | Event::ChangeQueued { .. } => Writer::Lists,
        Event::Restored { .. }
        | Event::CorrectionAttempt { .. }
        | Event::CorrectionSuccess { .. }
        | Event::CorrectionFailed { .. } => Writer::Recovery,
        Event::ThreadSwitched { .. }
        | Event::Notice { .. }
        | Event::EffortChanged { .. }
        | Event::TrustChanged { .. }
        | Event::Warning { .. }
        | Event::Error { .. }
        | Event::TurnCompleted { .. }
        | Event::ModeChanged { .. } => Writer::Status,
        Event::ModelChanged { .. }
        | Event::ModelList { .. }
        | Event::ContextReport { asked: true, .. }
        | Event::ContextCompacted(_)
        | Event::CostReport { .. } => Writer::Reports,
        Event::SubagentStarted { .. }
        | Event::SubagentProgress { .. }
        | Event::SubagentFinished { .. }
        | Event::SubagentList { .. } => Writer::Agents,
        Event::SessionStarted { .. }
        | Event::TurnStarted { .. }
        | Event::ContextReport { asked: false, .. }
        | Event::Usage { .. }
        | Event::SessionEnded
        // Written by `planner::text` and `learnings::text` in `write_event`.
        | Event::LearningProposed { .. }
        | Event::LearningUpdated { .. }
        | Event::LearningsUsed { .. }
        | Event::LearningList { .. }
        | Event::PlanGenerated { .. }
        | Event::PlanGenerationFailed { .. }
        | Event::PlanGenerationCancelled { .. }
        | Event::PlanRevised { .. }
        | Event::TaskPlanShown { .. }
        | Event::PlanConfirmed { .. }
        | Event::PlanRejected { .. }
        | Event::PlanDecisionRequired { .. }
        | Event::PlanStepStarted { .. }
        | Event::PlanStepCompleted { .. }
        | Event::PlanStepRetrying { .. }
        | Event::PlanStepFailed { .. }
        | Event::PlanStepSkipped { .. }
        | Event::PlanSummary { .. }
        | Event::PlannerSettingsChanged { .. }
        // Written by `mcp::text` in `write_event`.
        | Event::McpServerStatus { .. }
        | Event::McpProgress { .. }
        | Event::McpServers { .. }
        // Written by `rewind::text` in `write_event`.
        | Event::PromptList { .. }
        | Event::Rewound { .. } => Writer::Nothing,
    }
}

/// A finished call's lines: how it ended and how long it took, then the first lines of
/// its output (none when `shown` elsewhere already).
fn finish_lines(
    status: ToolCallStatus,
    duration_ms: u64,
    summary: &str,
    exit_code: Option<i32>,
    shown: bool,
) -> String {
    let failed_exit = exit_code
        .filter(|code| *code != 0)
        .map(|c| format!("exit {c}"));
    let label = match status {
        // A command that ran but failed is not "ok".
        ToolCallStatus::Ok if failed_exit.is_some() => failed_exit.as_deref().unwrap_or("failed"),
        ToolCallStatus::Ok => "ok",
        ToolCallStatus::Error => "error",
        ToolCallStatus::InvalidArguments => "not run",
        ToolCallStatus::Cancelled => "cancelled",
        ToolCallStatus::Denied => "denied",
        ToolCallStatus::Queued => "queued for approval",
    };
    let mut out = format!("  {label} ({duration_ms} ms)\n");
    let lines: Vec<&str> = summary
        .lines()
        .filter(|l| !shown && !l.trim().is_empty())
        .collect();
    for line in lines.iter().take(SUMMARY_LINES) {
        out.push_str(&format!("    {line}\n"));
    }
    if lines.len() > SUMMARY_LINES {
        out.push_str("    …\n");
    }
    out
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|l| format!("    {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The most telling argument of a call, for one-line display.
fn call_target(arguments: &Value) -> String {
    let pick = ["command", "path", "pattern"]
        .iter()
        .find_map(|key| arguments.get(key).and_then(Value::as_str));
    let text = match pick {
        Some(s) => s.to_owned(),
        None => match arguments {
            Value::String(raw) => raw.clone(),
            _ => String::new(),
        },
    };
    let line = text.lines().next().unwrap_or("");
    if line.chars().count() > 100 {
        let cut: String = line.chars().take(100).collect();
        format!("{cut}…")
    } else {
        line.to_owned()
    }
}

/// "done · 4 model calls · 1234 tokens · $0.0012 · changed: a.py"
pub fn result_line(result: &FinalResult) -> String {
    let status = match result.status {
        atto_protocol::TurnStatus::Completed => "done",
        atto_protocol::TurnStatus::Failed => "failed",
        atto_protocol::TurnStatus::Cancelled => "cancelled",
        atto_protocol::TurnStatus::LimitReached => "stopped at a limit",
    };
    let u = &result.usage;
    let tokens = atto_protocol::usage::total_tokens(u);
    let cost = match result.cost_usd {
        Some(c) => format!("${c:.4}"),
        None => "cost unknown".to_owned(),
    };
    let mut line = format!(
        "[{status} · {} model calls · {tokens} tokens · {cost}",
        result.rounds
    );
    if !result.files_changed.is_empty() {
        line.push_str(" · changed: ");
        line.push_str(&result.files_changed.join(", "));
    }
    line.push(']');
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use atto_protocol::{TurnStatus, Usage};

    /// The engine's readings as far as these tests need them.
    const FACTS: Facts = Facts {
        change_target: |change| change.path.clone().unwrap_or_default(),
        permission_name: |_| "interactive",
        spawn_tool: "spawn_agent",
    };

    #[test]
    fn json_lines_carry_type_and_schema_first() {
        let line = event_json(&Event::TextDelta { text: "hi".into() });
        assert_eq!(
            line,
            r#"{"type":"text_delta","schema":"atto.exec","schema_version":1,"text":"hi"}"#
        );
    }

    #[test]
    fn unknown_cost_is_null_and_said_so() {
        let result = FinalResult {
            status: TurnStatus::Completed,
            rounds: 2,
            usage: Usage::default(),
            cost_usd: None,
            files_changed: vec!["a.py".into()],
            text: String::new(),
            error: None,
            failure: None,
            duration_ms: 1,
        };
        assert!(result_json("s", 1, &result).contains(r#""cost_usd":null"#));
        assert!(result_line(&result).contains("cost unknown"));
        assert!(result_line(&result).contains("changed: a.py"));
    }

    #[test]
    fn parallel_calls_print_in_call_order() {
        let mut r = TextRenderer::new(Vec::new(), Vec::new(), FACTS);
        let start = |id: &str, cmd: &str| Event::ToolCallStarted {
            call_id: id.into(),
            name: "bash".into(),
            arguments: serde_json::json!({ "command": cmd }),
            kind: Default::default(),
            title: String::new(),
        };
        let finish = |id: &str, ms: u64| Event::ToolCallFinished {
            call_id: id.into(),
            name: "bash".into(),
            status: ToolCallStatus::Ok,
            duration_ms: ms,
            summary: format!("out of {id}"),
            sandboxed: None,
            exit_code: None,
        };
        r.event(&start("1", "sleep 1"));
        r.event(&start("2", "true"));
        r.event(&start("3", "echo"));
        r.event(&finish("3", 3));
        r.event(&finish("2", 2));
        r.event(&finish("1", 1000));
        assert_eq!(
            String::from_utf8(r.progress.into_inner()).unwrap(),
            "→ bash sleep 1\n  ok (1000 ms)\n    out of 1\n→ bash true\n  ok (2 ms)\n    out of \
             2\n→ bash echo\n  ok (3 ms)\n    out of 3\n"
        );
    }

    #[test]
    fn text_goes_to_text_and_tools_to_progress() {
        let mut r = TextRenderer::new(Vec::new(), Vec::new(), FACTS);
        r.event(&Event::TextDelta { text: "Hel".into() });
        r.event(&Event::TextDelta { text: "lo".into() });
        r.event(&Event::ToolCallStarted {
            call_id: "1".into(),
            name: "bash".into(),
            arguments: serde_json::json!({"command": "ls -la\nrm x"}),
            kind: Default::default(),
            title: String::new(),
        });
        assert_eq!(String::from_utf8(r.text.into_inner()).unwrap(), "Hello\n");
        assert_eq!(
            String::from_utf8(r.progress.into_inner()).unwrap(),
            "→ bash ls -la\n"
        );
    }
}
