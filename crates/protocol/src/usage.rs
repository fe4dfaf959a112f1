//! Token accounting over the protocol's `Usage`: one total and one way to add replies up,
//! so every front end and limit counts tokens the same.

use crate::Usage;

/// Every token a call was billed for: input, output, and cache reads and writes.
pub fn total_tokens(usage: &Usage) -> u64 {
    usage.input_tokens + usage.output_tokens + usage.cache_read_tokens + usage.cache_write_tokens
}

/// Adds `usage` into `total`, field by field.
pub fn add_usage(total: &mut Usage, usage: &Usage) {
    total.input_tokens += usage.input_tokens;
    total.output_tokens += usage.output_tokens;
    total.cache_read_tokens += usage.cache_read_tokens;
    total.cache_write_tokens += usage.cache_write_tokens;
}

/// The share of input tokens read from the prompt cache (reads over all input: uncached,
/// read and written), or `None` before any input was counted.
pub fn cache_hit_rate(usage: &Usage) -> Option<f64> {
    let input = usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens;
    // Token counts stay far below 2^53, so the conversion is exact.
    (input > 0).then(|| usage.cache_read_tokens as f64 / input as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hit_rate_is_reads_over_all_input() {
        assert_eq!(cache_hit_rate(&Usage::default()), None);
        let usage = Usage {
            input_tokens: 100,
            output_tokens: 50,
            cache_read_tokens: 300,
            cache_write_tokens: 100,
        };
        assert_eq!(cache_hit_rate(&usage), Some(0.6));
    }
}
