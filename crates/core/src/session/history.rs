//! The session's message history and its record in the store: each message committed
//! before it joins the history, a new session registered once, and the tail of a killed
//! session repaired so every provider accepts it again.

use atto_protocol::{AssistantPart, Message};
use atto_store::NewSession;

use super::Session;

impl Session {
    /// Appends a message to the history after committing it to the store.
    pub(super) async fn record(&mut self, message: Message) {
        self.recorder.persist(&message).await;
        self.history.push(message);
    }

    /// A session killed while tools ran ends with tool calls that have no result. Every
    /// provider rejects such a history, so each gets a result saying what is known: the
    /// call may or may not have run. Only the tail can be incomplete (messages are
    /// appended in order), so the results are appended there.
    pub(super) async fn repair_interrupted_calls(&mut self) {
        let Some(last_assistant) = self
            .history
            .iter()
            .rposition(|m| matches!(m, Message::Assistant { .. }))
        else {
            return;
        };
        let answered: std::collections::HashSet<String> = self.history[last_assistant..]
            .iter()
            .filter_map(|m| match m {
                Message::ToolResult(r) => Some(r.call_id.clone()),
                _ => None,
            })
            .collect();
        let missing: Vec<(String, String)> = match &self.history[last_assistant] {
            Message::Assistant { parts } => parts
                .iter()
                .filter_map(|p| match p {
                    AssistantPart::ToolCall(c) if !answered.contains(&c.id) => {
                        Some((c.id.clone(), c.name.clone()))
                    }
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        };
        for (call_id, name) in missing {
            let result = atto_protocol::ToolResult {
                call_id,
                name,
                content: "atto stopped before this call finished (the process ended); it may \
                          or may not have run. Check its effects before relying on them."
                    .to_owned(),
                is_error: true,
            };
            self.record(Message::ToolResult(result)).await;
        }
    }

    /// Records a new session in the store, once, before its first message.
    pub(super) async fn register(&mut self) {
        let Some(store) = self.recorder.store.clone() else {
            return;
        };
        if !self.is_new {
            return;
        }
        self.is_new = false;
        let info = self.options.client.info();
        let new = NewSession {
            id: self.options.session_id.clone(),
            workspace: self.options.workspace.display().to_string(),
            provider: Some(info.provider.clone()),
            model: Some(info.model.clone()),
            spawned_by: self.position.parent.clone(),
        };
        if let Err(err) = store.create_session(new).await {
            self.recorder.failed(&err.to_string());
        }
    }
}

/// Turns in a history: one per prompt.
pub(super) fn count_turns(history: &[Message]) -> u32 {
    let n = history
        .iter()
        .filter(|m| matches!(m, Message::User { .. }))
        .count();
    u32::try_from(n).unwrap_or(u32::MAX)
}
