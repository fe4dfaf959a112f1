//! What a model call cost, from publicly listed prices.
//!
//! Owns the price table and model-id normalisation (dated suffixes, `provider/`
//! prefixes, dotted versions). A model not in the table has no price: callers show
//! "unknown", never zero. It does not count tokens; the wire decoders do.

use atto_protocol::Usage;

/// Prices in US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Price {
    /// Uncached input.
    pub input: f64,
    /// Output (reasoning included).
    pub output: f64,
    /// Input read from the prompt cache.
    pub cache_read: f64,
    /// Input written to the prompt cache.
    pub cache_write: f64,
}

const fn p(input: f64, output: f64, cache_read: f64, cache_write: f64) -> Price {
    Price {
        input,
        output,
        cache_read,
        cache_write,
    }
}

/// Normalised model id → price. OpenAI and DeepSeek do not bill cache writes
/// separately; their write price is the input price.
const PRICES: &[(&str, Price)] = &[
    ("gpt-4-1", p(2.0, 8.0, 0.5, 2.0)),
    ("gpt-4-1-mini", p(0.4, 1.6, 0.1, 0.4)),
    ("gpt-4o", p(2.5, 10.0, 1.25, 2.5)),
    ("gpt-4o-mini", p(0.15, 0.6, 0.075, 0.15)),
    ("gpt-5", p(1.25, 10.0, 0.125, 1.25)),
    ("gpt-5-mini", p(0.25, 2.0, 0.025, 0.25)),
    ("o3", p(2.0, 8.0, 0.5, 2.0)),
    ("o4-mini", p(1.1, 4.4, 0.275, 1.1)),
    ("claude-sonnet-4-5", p(3.0, 15.0, 0.3, 3.75)),
    ("claude-sonnet-4", p(3.0, 15.0, 0.3, 3.75)),
    ("claude-opus-4-1", p(15.0, 75.0, 1.5, 18.75)),
    ("claude-haiku-4-5", p(1.0, 5.0, 0.1, 1.25)),
    ("claude-3-5-haiku", p(0.8, 4.0, 0.08, 1.0)),
    ("deepseek-chat", p(0.27, 1.1, 0.07, 0.27)),
    ("deepseek-reasoner", p(0.55, 2.19, 0.14, 0.55)),
];

/// The price of a model, if known. Accepts dated ids (`claude-sonnet-4-5-20250929`,
/// `gpt-4o-2024-08-06`), `-latest`, `provider/` prefixes and dotted versions
/// (`anthropic/claude-sonnet-4.5`).
pub fn price(model: &str) -> Option<Price> {
    let id = model.rsplit('/').next().unwrap_or(model);
    let id = id.trim().to_ascii_lowercase().replace('.', "-");
    PRICES
        .iter()
        .filter(|(known, _)| {
            id.strip_prefix(known)
                .is_some_and(|rest| rest.is_empty() || is_version_suffix(rest))
        })
        .max_by_key(|(known, _)| known.len())
        .map(|(_, price)| *price)
}

/// `-latest`, `-YYYYMMDD` or `-YYYY-MM-DD`.
fn is_version_suffix(rest: &str) -> bool {
    let Some(rest) = rest.strip_prefix('-') else {
        return false;
    };
    let digits = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
    if rest == "latest" || digits(rest, 8) {
        return true;
    }
    let mut parts = rest.split('-');
    matches!(
        (parts.next(), parts.next(), parts.next(), parts.next()),
        (Some(y), Some(m), Some(d), None) if digits(y, 4) && digits(m, 2) && digits(d, 2)
    )
}

/// Cost of `usage` in US dollars, or `None` when the model's price is unknown.
pub fn cost_usd(model: &str, usage: &Usage) -> Option<f64> {
    let p = price(model)?;
    // Token counts stay far below 2^53, so the conversion is exact.
    let tokens = |n: u64| n as f64;
    Some(
        (tokens(usage.input_tokens) * p.input
            + tokens(usage.output_tokens) * p.output
            + tokens(usage.cache_read_tokens) * p.cache_read
            + tokens(usage.cache_write_tokens) * p.cache_write)
            / 1_000_000.0,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_normalise_to_the_table() {
        let cases: &[(&str, Option<f64>)] = &[
            ("gpt-4.1", Some(2.0)),
            ("gpt-4.1-mini", Some(0.4)),
            ("gpt-4.1-mini-2025-04-14", Some(0.4)),
            ("gpt-4o-mini-2024-07-18", Some(0.15)),
            ("openai/gpt-4o", Some(2.5)),
            ("claude-sonnet-4-5-20250929", Some(3.0)),
            ("anthropic/claude-sonnet-4.5", Some(3.0)),
            ("claude-sonnet-4-20250514", Some(3.0)),
            ("claude-opus-4-1", Some(15.0)),
            ("claude-3-5-haiku-latest", Some(0.8)),
            ("deepseek/deepseek-chat", Some(0.27)),
            ("o3", Some(2.0)),
            ("o3-mini", None),
            ("gpt-4.1-nano", None),
            ("llama3.2", None),
            ("claude-sonnet-4-7", None),
        ];
        for (id, input) in cases {
            assert_eq!(price(id).map(|p| p.input), *input, "{id}");
        }
    }

    #[test]
    fn cost_counts_every_token_class() {
        let usage = Usage {
            input_tokens: 1_000_000,
            output_tokens: 100_000,
            cache_read_tokens: 2_000_000,
            cache_write_tokens: 400_000,
        };
        let cost = cost_usd("claude-sonnet-4-5", &usage).unwrap();
        // 3 + 1.5 + 0.6 + 1.5
        assert!((cost - 6.6).abs() < 1e-9, "{cost}");
        assert_eq!(cost_usd("mystery-model", &usage), None);
        assert_eq!(cost_usd("gpt-4o", &Usage::default()), Some(0.0));
    }
}
