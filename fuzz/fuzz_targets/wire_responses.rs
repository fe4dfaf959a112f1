//! The Responses stream decoder behind SSE, on recorded streams and on event sequences
//! built from its own keys: never a tool call twice, never chunk-dependent.
#![no_main]

use atto_llm::Wire;
use libfuzzer_sys::fuzz_target;

const WORDS: &[&str] = &[
    "type",
    "response.created",
    "response.output_item.added",
    "response.output_item.done",
    "response.output_text.delta",
    "response.reasoning_summary_text.delta",
    "response.reasoning_text.delta",
    "response.function_call_arguments.delta",
    "response.completed",
    "response.incomplete",
    "response.failed",
    "error",
    "item",
    "item_id",
    "output_index",
    "delta",
    "response",
    "id",
    "status",
    "completed",
    "incomplete",
    "output",
    "message",
    "function_call",
    "reasoning",
    "call_id",
    "name",
    "arguments",
    "content",
    "output_text",
    "text",
    "summary",
    "summary_text",
    "encrypted_content",
    "usage",
    "input_tokens",
    "output_tokens",
    "input_tokens_details",
    "cached_tokens",
    "incomplete_details",
    "reason",
    "max_output_tokens",
    "content_filter",
    "model",
    "code",
    "fc_1",
    "call_1",
    "rs_1",
    "msg_1",
    "{\"path\":",
    "\"a.rs\"}",
    "{}",
];

fuzz_target!(|data: &[u8]| {
    let Ok(stream) = atto_fuzz::stream(data, WORDS) else {
        return;
    };
    let chunk = data.get(1).map_or(7, |b| usize::from(*b) + 1);
    atto_fuzz::decode_and_check(Wire::Responses, &stream, chunk);
});
