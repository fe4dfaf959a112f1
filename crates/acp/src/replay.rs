//! `session/load`: a stored session's history sent back to the client as the updates it
//! would have seen live (user and agent text, thoughts, tool calls with their results),
//! before the load is answered.

use std::collections::HashMap;

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    SessionNotification, SessionUpdate, ToolCall, ToolCallStatus, ToolCallUpdate,
    ToolCallUpdateFields,
};
use atto_protocol::{AssistantPart, Message};

use crate::{ToolFacts, convert};

/// Sends the history as `session/update` notifications, in order.
pub(crate) fn send(
    cx: &ConnectionTo<Client>,
    session_id: &str,
    history: &[Message],
    tools: &dyn ToolFacts,
) {
    for update in updates(history, tools) {
        if cx
            .send_notification(SessionNotification::new(session_id.to_owned(), update))
            .is_err()
        {
            return;
        }
    }
}

/// The updates a history replays as.
pub(crate) fn updates(history: &[Message], tools: &dyn ToolFacts) -> Vec<SessionUpdate> {
    let mut out = Vec::new();
    let mut names: HashMap<&str, &str> = HashMap::new();
    for message in history {
        match message {
            Message::User { text, .. } => out.push(convert::user_text(text.clone())),
            Message::Assistant { parts } => {
                for part in parts {
                    match part {
                        AssistantPart::Text { text } => out.push(convert::agent_text(text.clone())),
                        AssistantPart::Thinking { text, .. } => {
                            out.push(convert::thought(text.clone()));
                        }
                        AssistantPart::RedactedThinking { .. } => {}
                        AssistantPart::ToolCall(call) => {
                            names.insert(&call.id, &call.name);
                            let args = serde_json::from_str(&call.arguments)
                                .unwrap_or(serde_json::Value::String(call.arguments.clone()));
                            let tool =
                                ToolCall::new(call.id.clone(), tools.title(&call.name, &args))
                                    .kind(convert::kind(tools.kind(&call.name)))
                                    .status(ToolCallStatus::Pending)
                                    .raw_input(args);
                            out.push(SessionUpdate::ToolCall(tool));
                        }
                    }
                }
            }
            Message::ToolResult(result) => {
                let status = if result.is_error {
                    ToolCallStatus::Failed
                } else {
                    ToolCallStatus::Completed
                };
                if !names.contains_key(result.call_id.as_str()) {
                    continue;
                }
                let fields = ToolCallUpdateFields::new()
                    .status(status)
                    .content(vec![convert::text_content(result.content.clone())]);
                out.push(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                    result.call_id.clone(),
                    fields,
                )));
            }
        }
    }
    out
}
