//! The model's context window in a session: which window applies, how full the next
//! request is, and when to compact. The compaction itself (which messages to summarise,
//! what stays pinned verbatim, the fallback that elides old tool outputs) is in
//! `compact` and `pins`; the session's side (the summary call, the new thread version,
//! the event) in `session::compaction`.
//!
//! Sizes are estimated from the text a request carries, three bytes to a token (generous:
//! English averages about four), so a decision costs a pass over the history's lengths
//! and no serialisation.

pub(crate) mod compact;
pub(crate) mod pins;

use std::collections::BTreeMap;

use atto_protocol::{AssistantPart, Message, ToolSpec};

/// The default of [`ContextSettings::start_map_max_files`].
pub const START_MAP_MAX_FILES: usize = 30;

/// The size of the map offered with the first prompt.
pub const START_MAP_BYTES: usize = 1_200;

/// How a session uses the model's context window.
#[derive(Debug, Clone)]
pub struct ContextSettings {
    /// Context windows from config (`[providers.X.models.Y] context_window`), by model
    /// id; they win over atto's table.
    pub windows: BTreeMap<String, u64>,
    /// Compact when the next request would fill more than this percentage of the
    /// window (default 80).
    pub compact_at_percent: u8,
    /// The newest share of the window (percent) kept verbatim when older messages are
    /// summarised (default 25).
    pub keep_recent_percent: u8,
    /// A repository with at most this many source files gets its `codebase_overview` map
    /// with the session's first prompt (default 30; 0: never).
    pub start_map_max_files: usize,
}

impl Default for ContextSettings {
    fn default() -> Self {
        ContextSettings {
            windows: BTreeMap::new(),
            compact_at_percent: 80,
            keep_recent_percent: 25,
            start_map_max_files: START_MAP_MAX_FILES,
        }
    }
}

impl ContextSettings {
    /// The context window of `model` in tokens: config first, then atto's table.
    pub fn window(&self, model: &str) -> Option<u64> {
        self.windows
            .get(model)
            .copied()
            .or_else(|| atto_llm::context_window(model).map(|w| w.context))
    }

    /// Tokens above which the next request compacts first, for a known window.
    pub fn compact_at(&self, window: u64) -> u64 {
        window.saturating_mul(u64::from(self.compact_at_percent.clamp(10, 100))) / 100
    }
}

/// Bytes a message adds to a request: its text plus a little for the JSON around it.
pub fn message_bytes(message: &Message) -> u64 {
    const FRAME: usize = 48;
    let n = match message {
        Message::User { text, context } => {
            FRAME + text.len() + context.as_ref().map_or(0, String::len)
        }
        Message::Assistant { parts } => parts
            .iter()
            .map(|p| {
                FRAME
                    + match p {
                        AssistantPart::Text { text } => text.len(),
                        AssistantPart::Thinking { text, signature } => {
                            text.len() + signature.as_ref().map_or(0, String::len)
                        }
                        AssistantPart::RedactedThinking { data } => data.len(),
                        AssistantPart::ToolCall(c) => c.id.len() + c.name.len() + c.arguments.len(),
                    }
            })
            .sum::<usize>(),
        Message::ToolResult(r) => FRAME + r.call_id.len() + r.name.len() + r.content.len(),
    };
    u64::try_from(n).unwrap_or(u64::MAX)
}

/// Bytes the history adds to a request.
pub fn history_bytes(history: &[Message]) -> u64 {
    history.iter().map(message_bytes).sum()
}

/// Bytes the tool schemas add to a request.
pub fn tools_bytes(tools: &[ToolSpec]) -> u64 {
    let n: usize = tools
        .iter()
        .map(|t| 32 + t.name.len() + t.description.len() + t.parameters.to_string().len())
        .sum();
    u64::try_from(n).unwrap_or(u64::MAX)
}

/// Tokens of `bytes`, by the generous estimate every budget uses.
pub fn tokens(bytes: u64) -> u64 {
    bytes.div_ceil(atto_llm::BYTES_PER_TOKEN)
}

/// Whether a request of `request_bytes` must be compacted before it is sent to a model
/// with `window` tokens: it would fill more than the threshold. An unknown window never
/// compacts ahead; the provider's context-overflow error does.
pub fn compaction_due(settings: &ContextSettings, window: Option<u64>, request_bytes: u64) -> bool {
    window.is_some_and(|w| tokens(request_bytes) > settings.compact_at(w))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_windows_win_over_the_table() {
        let mut settings = ContextSettings::default();
        assert_eq!(settings.window("gpt-4o"), Some(128_000));
        assert_eq!(settings.window("my-local"), None);
        settings.windows.insert("gpt-4o".into(), 64_000);
        settings.windows.insert("my-local".into(), 8_192);
        assert_eq!(settings.window("gpt-4o"), Some(64_000));
        assert_eq!(settings.window("my-local"), Some(8_192));
    }

    #[test]
    fn compaction_is_due_past_the_threshold_only() {
        let settings = ContextSettings::default();
        // 80% of 1,000 tokens is 800 tokens, 2,400 bytes.
        assert!(!compaction_due(&settings, Some(1_000), 2_400));
        assert!(compaction_due(&settings, Some(1_000), 2_403));
        assert!(!compaction_due(&settings, None, u64::MAX));
    }

    #[test]
    fn sizes_count_every_part() {
        let m = Message::user("abcd");
        assert_eq!(message_bytes(&m), 52);
        assert_eq!(history_bytes(&[m.clone(), m]), 104);
    }
}
