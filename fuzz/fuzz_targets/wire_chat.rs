//! The Chat Completions stream decoder behind SSE, on recorded streams and on event
//! sequences built from its own keys: never a tool call twice, never chunk-dependent.
#![no_main]

use atto_llm::Wire;
use libfuzzer_sys::fuzz_target;

const WORDS: &[&str] = &[
    "choices",
    "delta",
    "index",
    "id",
    "type",
    "function",
    "name",
    "arguments",
    "tool_calls",
    "content",
    "reasoning_content",
    "reasoning",
    "role",
    "assistant",
    "finish_reason",
    "stop",
    "length",
    "tool_calls",
    "content_filter",
    "function_call",
    "usage",
    "prompt_tokens",
    "completion_tokens",
    "total_tokens",
    "prompt_tokens_details",
    "cached_tokens",
    "prompt_cache_hit_tokens",
    "model",
    "error",
    "message",
    "code",
    "call_1",
    "call_2",
    "read_file",
    "bash",
    "{\"path\":",
    "\"a.rs\"}",
    "{}",
    "[DONE]",
];

fuzz_target!(|data: &[u8]| {
    let Ok(stream) = atto_fuzz::stream(data, WORDS) else {
        return;
    };
    let chunk = data.get(1).map_or(7, |b| usize::from(*b) + 1);
    atto_fuzz::decode_and_check(Wire::Chat, &stream, chunk);
});
