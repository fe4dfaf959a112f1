//! The model's output as it streams: answer and reasoning deltas, tool calls becoming
//! cards, and the approval a call waits for. A finished command also tells `sandbox`
//! whether it ran sandboxed.

use atto_protocol::{Event, ToolCallStatus};

use super::{App, ApprovalDialog};
use crate::transcript::{Kind, ToolCard};
use crate::view::text::sanitize;

/// How a call ended, as `tool_call_finished` says it.
pub(super) struct CallEnd<'a> {
    pub call_id: &'a str,
    pub name: &'a str,
    pub status: ToolCallStatus,
    pub duration_ms: u64,
    pub summary: &'a str,
    pub sandboxed: Option<bool>,
}

impl App {
    /// Streamed text, tool calls and approvals; `None` for other events.
    pub(super) fn call_event(&mut self, event: &Event) -> Option<()> {
        match event {
            Event::TextDelta { text } => self.transcript.text_delta(text),
            Event::ThinkingDelta { text } => self.transcript.thinking_delta(text),
            Event::ToolCallStarted {
                call_id,
                name,
                arguments,
                kind,
                ..
            } => self
                .transcript
                .push(Kind::Tool(ToolCard::new(call_id, name, *kind, arguments))),
            Event::ToolCallFinished {
                call_id,
                name,
                status,
                duration_ms,
                summary,
                sandboxed,
                ..
            } => self.tool_finished(&CallEnd {
                call_id,
                name,
                status: *status,
                duration_ms: *duration_ms,
                summary,
                sandboxed: *sandboxed,
            }),
            Event::ApprovalRequired(request) => {
                self.transcript.close();
                self.requeue_swarm_approval();
                self.approval = Some(ApprovalDialog {
                    request: request.clone(),
                    input: None,
                    swarm_task: None,
                });
                self.dialog_scroll = 0;
            }
            _ => return None,
        }
        Some(())
    }

    fn tool_finished(&mut self, end: &CallEnd<'_>) {
        if self
            .approval
            .as_ref()
            .is_some_and(|a| a.swarm_task.is_none() && a.request.call_id == end.call_id)
        {
            self.approval = None;
        }
        // A command: its card says so; a call never shown started is one when it reports
        // whether it ran sandboxed (only commands do).
        let command = match self.transcript.tool_mut(end.call_id) {
            Some(card) => card.kind == atto_protocol::ToolKind::Execute,
            None => end.sandboxed.is_some(),
        };
        if command {
            self.saw_command(end.sandboxed);
        }
        let output: Vec<String> = sanitize(end.summary)
            .lines()
            .map(|l| l.trim_end().to_owned())
            .skip_while(|l| l.is_empty())
            .collect();
        let card = match self.transcript.tool_mut(end.call_id) {
            Some(card) => card,
            None => {
                // Never started on screen (refused before it ran): show it anyway.
                let args = serde_json::Value::Object(serde_json::Map::new());
                self.transcript.push(Kind::Tool(ToolCard::new(
                    end.call_id,
                    end.name,
                    atto_protocol::ToolKind::Other,
                    &args,
                )));
                match self.transcript.tool_mut(end.call_id) {
                    Some(card) => card,
                    None => return,
                }
            }
        };
        card.status = Some(end.status);
        card.duration_ms = end.duration_ms;
        card.sandboxed = end.sandboxed;
        card.output = output;
        // The card already draws the change from the call's arguments: the unified diff the
        // tool echoes back for the model would say it a second time.
        if !card.diff.is_empty()
            && end.status == ToolCallStatus::Ok
            && let Some(at) = card.output.iter().position(|l| l.starts_with("--- "))
        {
            card.output.truncate(at);
        }
        while card.output.last().is_some_and(|l| l.is_empty()) {
            card.output.pop();
        }
    }
}
