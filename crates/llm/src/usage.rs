//! Token accounting over the protocol's `Usage`: one total and one way to add replies up,
//! so every front end and limit counts tokens the same.

use atto_protocol::Usage;

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
