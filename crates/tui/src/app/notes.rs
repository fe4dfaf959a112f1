//! Messages from the engine (notices, warnings, errors, retries, self-correction, a
//! restore), the lists the panels show (grants, threads, goals, checkpoints), each
//! kept as the last answer left it, and the session's reports (model, context, cost, MCP
//! servers).

use atto_protocol::{Event, ThreadInfo};

use super::App;
use crate::transcript::Kind;
use crate::view::text::sanitize;

impl App {
    /// Messages: notices, warnings, errors, retries, self-correction and a restore; `None`
    /// for other events.
    pub(super) fn note_event(&mut self, event: &Event) -> Option<()> {
        match event {
            Event::Notice { message } => self.push(Kind::Notice(sanitize(message).into_owned())),
            Event::Warning { message } => self.push(Kind::Warning(sanitize(message).into_owned())),
            Event::Error { message } => self.push(Kind::Error(sanitize(message).into_owned())),
            Event::Retry(n) => self.quiet(format!(
                "retrying model call ({}/{}) in {:.1} s: {}",
                n.attempt + 1,
                n.max_attempts,
                n.delay_ms as f64 / 1000.0,
                n.reason
            )),
            Event::CorrectionAttempt {
                tool,
                strategy,
                attempt,
                max,
                ..
            } => self.quiet(format!(
                "self-correcting {tool} ({attempt}/{max}): {strategy}"
            )),
            Event::CorrectionSuccess { tool, attempts } => {
                self.quiet(format!("{tool} recovered after {attempts} correction(s)"));
            }
            Event::CorrectionFailed { tool, attempts } => self.quiet(format!(
                "self-correction gave up on {tool} after {attempts} attempt(s)"
            )),
            Event::Restored {
                checkpoint,
                safety_checkpoint,
                restored,
                deleted,
                ..
            } => self.push(Kind::Notice(format!(
                "{}: {} file(s) written back, {} removed; /restore {safety_checkpoint} undoes this",
                if *checkpoint == 0 {
                    "undone".to_owned()
                } else {
                    format!("restored checkpoint {checkpoint}")
                },
                restored.len(),
                deleted.len()
            ))),
            _ => return None,
        }
        Some(())
    }

    /// The lists the panels show (grants, threads, goals, checkpoints); `None` for other
    /// events.
    pub(super) fn list_event(&mut self, event: &Event) -> Option<()> {
        match event {
            Event::GrantList { grants } => self.grants = grants.clone(),
            Event::ThreadList { threads } => self.threads = threads.clone(),
            Event::ThreadSwitched { thread } => self.thread_switched(thread),
            Event::Goals { goals, current } => {
                self.goals = goals.clone();
                self.current_goal = current.clone();
            }
            Event::CheckpointList { checkpoints } => self.checkpoints = checkpoints.clone(),
            _ => return None,
        }
        Some(())
    }

    /// What the session reports on its model, context, cost and MCP servers; `None` for
    /// other events.
    pub(super) fn report_event(&mut self, event: &Event) -> Option<()> {
        match event {
            Event::ModelChanged { model, auto, note } => self.push(Kind::Notice(
                atto_present::model_changed_line(model, *auto, note.as_deref()),
            )),
            Event::ModelList {
                current,
                auto,
                models,
                routes,
            } => self.push(Kind::Notice(
                sanitize(
                    &atto_present::model_list_lines(current, *auto, models, routes).join("\n"),
                )
                .into_owned(),
            )),
            Event::ContextReport { context, asked } => {
                self.totals.context_window = context.window;
                if *asked {
                    self.push(Kind::Notice(
                        sanitize(&atto_present::context_lines(context).join("\n")).into_owned(),
                    ));
                }
            }
            Event::ContextCompacted(compaction) => {
                self.totals.context_tokens = compaction.after_tokens;
                self.push(Kind::Notice(
                    sanitize(&atto_present::compaction_line(compaction)).into_owned(),
                ));
            }
            Event::CostReport { models } => self.push(Kind::Notice(
                sanitize(&atto_present::cost_lines(models).join("\n")).into_owned(),
            )),
            Event::McpServers { servers } => self.push(Kind::Notice(
                sanitize(&atto_present::mcp::server_lines(servers).join("\n")).into_owned(),
            )),
            Event::McpServerStatus { server } => {
                if let Some(line) = atto_present::mcp::status_line(server) {
                    self.push(Kind::Notice(sanitize(&line).into_owned()));
                }
            }
            _ => return None,
        }
        Some(())
    }

    fn thread_switched(&mut self, thread: &ThreadInfo) {
        for t in &mut self.threads {
            t.current = t.id == thread.id;
        }
        if !self.threads.iter().any(|t| t.id == thread.id) {
            self.threads.push(thread.clone());
        }
        self.quiet(format!(
            "now in thread {} ({} messages)",
            thread.id, thread.messages
        ));
    }
}
