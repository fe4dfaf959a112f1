//! Reasoning effort: which models take one (decided from the model id), the name each
//! level has on the OpenAI wires, and the thinking budget it means on the Anthropic wire.
//! Does not decide what a session sends: the session asks [`takes_effort`] first, and the
//! wires map whatever the request carries.

use atto_protocol::ReasoningEffort;

/// Output tokens an Anthropic reply keeps for its answer beyond the thinking budget.
pub(crate) const MIN_ANSWER_TOKENS: u32 = 4096;

/// Whether `model` takes a reasoning effort: OpenAI's o-series and GPT-5 (not its chat
/// variant), Claude with extended thinking (3.7, and 4 onward), DeepSeek's reasoner,
/// Grok 3 mini and Gemini 2.5 onward. A router's `vendor/` prefix is ignored.
pub fn takes_effort(model: &str) -> bool {
    let lower = model.to_ascii_lowercase();
    // "openai/o3", "anthropic/claude-sonnet-4", "us.anthropic.claude-opus-4-v1:0".
    let id = lower.rsplit('/').next().unwrap_or(&lower);
    let id = id.find("claude-").map_or(id, |at| &id[at..]);
    if let Some(rest) = id.strip_prefix("claude-") {
        return claude_thinks(rest);
    }
    let o_series = ["o1", "o3", "o4"].iter().any(|p| {
        id.strip_prefix(p)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('-'))
    });
    if o_series {
        // The first o1 releases take no effort.
        return !(id.starts_with("o1-mini") || id.starts_with("o1-preview"));
    }
    if id.starts_with("gpt-5") {
        return !id.contains("-chat");
    }
    [
        "codex-mini",
        "deepseek-reasoner",
        "deepseek-v4",
        "grok-3-mini",
        "gemini-2.5",
        "gemini-3",
    ]
    .iter()
    .any(|p| id.starts_with(p))
}

/// Claude ids after `claude-`: `3-7-sonnet…`, `sonnet-4…`, `opus-4-1…`, `4-sonnet…`.
fn claude_thinks(rest: &str) -> bool {
    let parts: Vec<&str> = rest.split(['-', '.', '@', ':']).collect();
    let major = |s: Option<&&str>| s.and_then(|v| v.parse::<u32>().ok());
    match parts.first().copied() {
        Some("3") => parts.get(1) == Some(&"7"),
        Some("opus" | "sonnet" | "haiku") => major(parts.get(1)).is_some_and(|m| m >= 4),
        first => major(first.as_ref()).is_some_and(|m| (4..100).contains(&m)),
    }
}

/// The level's name on the OpenAI wires (`reasoning_effort`, `reasoning.effort`).
pub fn effort_name(effort: ReasoningEffort) -> &'static str {
    effort.as_str()
}

/// The Anthropic thinking budget (`budget_tokens`) of each level.
pub fn thinking_budget(effort: ReasoningEffort) -> u32 {
    match effort {
        ReasoningEffort::Low => 2_048,
        ReasoningEffort::Medium => 8_192,
        ReasoningEffort::High => 24_576,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn models_that_take_an_effort() {
        let table = [
            ("o1", true),
            ("o1-2024-12-17", true),
            ("o1-mini", false),
            ("o1-preview", false),
            ("o3", true),
            ("o3-mini", true),
            ("o4-mini", true),
            ("openai/o3-pro", true),
            ("gpt-5", true),
            ("gpt-5-mini", true),
            ("gpt-5-chat-latest", false),
            ("gpt-4o", false),
            ("gpt-4.1", false),
            ("claude-3-7-sonnet-20250219", true),
            ("claude-3-5-sonnet-20241022", false),
            ("claude-3-opus-20240229", false),
            ("claude-sonnet-4-20250514", true),
            ("claude-opus-4-1-20250805", true),
            ("claude-haiku-4-5", true),
            ("claude-4-sonnet", true),
            ("anthropic/claude-sonnet-4.5", true),
            ("us.anthropic.claude-opus-4-v1:0", true),
            ("deepseek-reasoner", true),
            ("deepseek-chat", false),
            ("grok-3-mini", true),
            ("gemini-2.5-pro", true),
            ("llama3.1:8b", false),
            ("o", false),
            ("ollama", false),
            ("m", false),
        ];
        for (model, takes) in table {
            assert_eq!(takes_effort(model), takes, "{model}");
        }
    }

    #[test]
    fn each_level_has_a_name_and_a_growing_budget() {
        assert_eq!(effort_name(ReasoningEffort::Medium), "medium");
        assert!(
            thinking_budget(ReasoningEffort::Low) >= 1_024,
            "Anthropic's minimum"
        );
        assert!(thinking_budget(ReasoningEffort::Low) < thinking_budget(ReasoningEffort::Medium));
        assert!(thinking_budget(ReasoningEffort::Medium) < thinking_budget(ReasoningEffort::High));
    }
}
