//! Conversation messages as atto stores them, independent of any wire format.

use serde::{Deserialize, Serialize};

/// One item of a conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Message {
    /// Text the user sent.
    User {
        /// The prompt text.
        text: String,
        /// Facts atto appends for the model only (the agent mode, plan review results), kept
        /// apart so transcripts show what the user typed. Sent after the text.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        context: Option<String>,
    },
    /// One reply of the model, its parts in the order the model produced them.
    Assistant {
        /// Text, reasoning and tool calls.
        parts: Vec<AssistantPart>,
    },
    /// The result of one tool call, fed back to the model.
    ToolResult(ToolResult),
}

impl Message {
    /// A user message without appended context.
    pub fn user(text: impl Into<String>) -> Self {
        Message::User {
            text: text.into(),
            context: None,
        }
    }
}

/// What the model receives for a user message: the text, then the appended context.
pub fn user_text_for_model<'a>(text: &'a str, context: Option<&str>) -> std::borrow::Cow<'a, str> {
    match context {
        Some(c) if !c.is_empty() && text.is_empty() => std::borrow::Cow::Owned(c.to_owned()),
        Some(c) if !c.is_empty() => std::borrow::Cow::Owned(format!("{text}\n\n{c}")),
        _ => std::borrow::Cow::Borrowed(text),
    }
}

/// A piece of an assistant reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AssistantPart {
    /// Visible answer text.
    Text {
        /// The text.
        text: String,
    },
    /// Reasoning the provider returned; replayed with its signature where the wire needs it.
    Thinking {
        /// The reasoning text.
        text: String,
        /// Provider signature that must accompany the block when it is sent back.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
    },
    /// Reasoning the provider returned encrypted; replayed verbatim.
    RedactedThinking {
        /// Opaque provider data.
        data: String,
    },
    /// A request to run a tool.
    ToolCall(ToolCall),
}

/// A tool call as the model sent it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// Provider-assigned id that the result must echo.
    pub id: String,
    /// Tool name.
    pub name: String,
    /// Argument JSON exactly as streamed; may be invalid or cut off.
    pub arguments: String,
}

/// What a tool call produced, as the model will see it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    /// Id of the call this answers.
    pub call_id: String,
    /// Name of the tool that was called.
    pub name: String,
    /// Text shown to the model.
    pub content: String,
    /// Whether the call failed (or was refused or never run).
    pub is_error: bool,
}

/// Why the model stopped producing output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The model finished its answer.
    EndTurn,
    /// The model wants tool results.
    ToolUse,
    /// The output token limit cut the reply.
    MaxTokens,
    /// The provider filtered the reply.
    ContentFilter,
    /// The provider gave a reason atto does not know.
    Other(String),
}

/// Token counts for one or more model calls.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens billed at the normal input rate (cache reads and writes excluded).
    pub input_tokens: u64,
    /// Completion tokens, reasoning included.
    pub output_tokens: u64,
    /// Prompt tokens served from the provider's cache.
    pub cache_read_tokens: u64,
    /// Prompt tokens written to the provider's cache.
    pub cache_write_tokens: u64,
}
