//! The Anthropic Messages stream decoder behind SSE, on recorded streams and on event
//! sequences built from its own keys: never a tool call twice, never chunk-dependent.
#![no_main]

use atto_llm::Wire;
use libfuzzer_sys::fuzz_target;

const WORDS: &[&str] = &[
    "type",
    "message_start",
    "content_block_start",
    "content_block_delta",
    "content_block_stop",
    "message_delta",
    "message_stop",
    "ping",
    "error",
    "message",
    "content_block",
    "index",
    "delta",
    "text",
    "text_delta",
    "thinking",
    "thinking_delta",
    "signature",
    "signature_delta",
    "redacted_thinking",
    "data",
    "tool_use",
    "id",
    "name",
    "input",
    "input_json_delta",
    "partial_json",
    "stop_reason",
    "end_turn",
    "max_tokens",
    "tool_use",
    "stop_sequence",
    "refusal",
    "model_context_window_exceeded",
    "usage",
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
    "model",
    "overloaded_error",
    "toolu_1",
    "toolu_2",
    "read_file",
    "{\"path\":",
    "\"a.rs\"}",
    "{}",
];

fuzz_target!(|data: &[u8]| {
    let Ok(stream) = atto_fuzz::stream(data, WORDS) else {
        return;
    };
    let chunk = data.get(1).map_or(7, |b| usize::from(*b) + 1);
    atto_fuzz::decode_and_check(Wire::Anthropic, &stream, chunk);
});
