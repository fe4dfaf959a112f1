//! The model's context window in a session: how full it is, and compactions.

use serde::{Deserialize, Serialize};

/// How much of the model's context window the next request fills.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextUse {
    /// The model the next request goes to.
    pub model: String,
    /// Its context window in tokens; `None` when unknown (not in atto's table and not
    /// set with `[providers.X.models.Y] context_window`).
    pub window: Option<u64>,
    /// Estimated input tokens of the next request (its bytes over three: generous).
    pub used_tokens: u64,
    /// Of which the system prompt.
    pub system_tokens: u64,
    /// Of which the tool schemas.
    pub tools_tokens: u64,
    /// Of which the conversation.
    pub history_tokens: u64,
    /// Messages in the conversation.
    pub messages: u64,
    /// Automatic compaction starts above this many tokens; `None` with no known window.
    pub compact_at: Option<u64>,
    /// Input tokens the provider reported for the last call (cache reads and writes
    /// included); `None` before any call.
    pub last_input_tokens: Option<u64>,
}

/// Why a thread was compacted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompactTrigger {
    /// The next request would have passed the threshold of the window.
    Threshold,
    /// The provider answered that the request does not fit its context window.
    Overflow,
    /// The user asked (`/compact`).
    User,
}

/// What a compaction did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Compaction {
    /// Why it ran.
    pub trigger: CompactTrigger,
    /// The thread the compacted conversation continues in (its originals stay in the
    /// thread it came from; `/rollback` goes back to them).
    pub thread: String,
    /// The thread it came from.
    pub from_thread: String,
    /// Estimated tokens of the conversation before and after.
    pub before_tokens: u64,
    /// See `before_tokens`.
    pub after_tokens: u64,
    /// Messages before and after.
    pub messages_before: u64,
    /// See `messages_before`.
    pub messages_after: u64,
    /// Whether the model's summary replaced the older part; false when summarising
    /// failed and old tool outputs were elided instead.
    pub summarized: bool,
    /// Why the summary was not used, when it was not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback_reason: Option<String>,
}
