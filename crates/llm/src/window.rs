//! How much a model can read and write in one call: the context window and output limit
//! of known models (OpenAI, Anthropic, DeepSeek, and Qwen/Llama families served locally).
//!
//! Owns the table and its id matching. A model not in the table has no known window:
//! callers say "unknown" and take the window from config (`[providers.X.models.Y]
//! context_window`), never guess one. It does not count a request's tokens.

/// A model's limits, in tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContextWindow {
    /// Input plus output the model can hold in one call.
    pub context: u64,
    /// The most output tokens one reply may have.
    pub output: u64,
}

const fn w(context: u64, output: u64) -> ContextWindow {
    ContextWindow { context, output }
}

/// Normalised model id (or family prefix) → limits, from the providers' model pages. A
/// local family's entry is the window its common builds are trained for; a server that
/// runs it with a smaller one says so with a context-overflow error, which compacts.
const WINDOWS: &[(&str, ContextWindow)] = &[
    ("gpt-4-1", w(1_047_576, 32_768)),
    ("gpt-4o", w(128_000, 16_384)),
    ("gpt-5", w(400_000, 128_000)),
    ("o3", w(200_000, 100_000)),
    ("o4-mini", w(200_000, 100_000)),
    ("claude-sonnet-4-5", w(200_000, 64_000)),
    ("claude-sonnet-4", w(200_000, 64_000)),
    ("claude-opus-4-1", w(200_000, 32_000)),
    ("claude-opus-4", w(200_000, 32_000)),
    ("claude-haiku-4-5", w(200_000, 64_000)),
    ("claude-3-5-haiku", w(200_000, 8_192)),
    ("claude-3-7-sonnet", w(200_000, 64_000)),
    ("deepseek-chat", w(128_000, 8_192)),
    ("deepseek-reasoner", w(128_000, 64_000)),
    ("deepseek-coder", w(128_000, 8_192)),
    ("qwen2-5-coder", w(32_768, 8_192)),
    ("qwen2-5", w(32_768, 8_192)),
    ("qwen3-coder", w(262_144, 65_536)),
    ("qwen3", w(40_960, 16_384)),
    ("llama3-1", w(131_072, 8_192)),
    ("llama3-2", w(131_072, 8_192)),
    ("llama3-3", w(131_072, 8_192)),
    ("llama-3-1", w(131_072, 8_192)),
    ("llama-3-2", w(131_072, 8_192)),
    ("llama-3-3", w(131_072, 8_192)),
    ("llama3", w(8_192, 2_048)),
];

/// The limits of `model`, if known. Accepts `provider/` prefixes, dotted versions, an
/// Ollama `:tag`, and any suffix after a family name (`-20250929`, `-mini`, `-7b-instruct`);
/// the longest matching entry wins.
pub fn context_window(model: &str) -> Option<ContextWindow> {
    let id = model.rsplit('/').next().unwrap_or(model);
    let id = id.split(':').next().unwrap_or(id);
    let id = id.trim().to_ascii_lowercase().replace(['.', '_'], "-");
    WINDOWS
        .iter()
        .filter(|(known, _)| {
            id.strip_prefix(known)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('-'))
        })
        .max_by_key(|(known, _)| known.len())
        .map(|(_, window)| *window)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_match_their_family() {
        let cases: &[(&str, Option<u64>)] = &[
            ("gpt-4.1-mini-2025-04-14", Some(1_047_576)),
            ("gpt-4o-mini", Some(128_000)),
            ("openai/gpt-5", Some(400_000)),
            ("claude-sonnet-4-5-20250929", Some(200_000)),
            ("anthropic/claude-3.5-haiku", Some(200_000)),
            ("deepseek-chat", Some(128_000)),
            ("qwen2.5-coder:7b", Some(32_768)),
            ("Qwen2.5-Coder-1.5B-Instruct", Some(32_768)),
            ("qwen3-coder-30b-a3b", Some(262_144)),
            ("llama3.2:3b", Some(131_072)),
            ("llama3", Some(8_192)),
            ("o3-mini", Some(200_000)),
            ("gpt-4", None),
            ("o1", None),
            ("mystery", None),
            ("qwen", None),
        ];
        for (id, context) in cases {
            assert_eq!(context_window(id).map(|w| w.context), *context, "{id}");
        }
        assert_eq!(
            context_window("claude-3-5-haiku-latest").map(|w| w.output),
            Some(8_192)
        );
    }
}
