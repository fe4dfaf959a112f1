//! The compaction decision made before every model call: measure the next request (system
//! prompt, tool schemas, history) and compare it with the window's threshold. Measured on
//! the history of a 300-round session with 6 KB tool outputs (601 messages, 1.9 MB) and
//! atto's built-in tool schemas. Target: at most 1 ms a decision.
//!
//! `cargo bench -p atto-core --bench context`

use std::time::Instant;

use atto_core::ContextSettings;
use atto_core::context::{compaction_due, history_bytes, tools_bytes};
use atto_protocol::{AssistantPart, Message, ToolCall, ToolResult};

fn main() {
    let mut history = vec![Message::user("Do the migration. Never edit vendor/.")];
    for i in 0..300 {
        history.push(Message::Assistant {
            parts: vec![AssistantPart::ToolCall(ToolCall {
                id: format!("call_{i}"),
                name: "read_file".into(),
                arguments: r#"{"path":"big.txt"}"#.into(),
            })],
        });
        history.push(Message::ToolResult(ToolResult {
            call_id: format!("call_{i}"),
            name: "read_file".into(),
            content: "line: the quick brown fox jumps over the lazy dog\n".repeat(120),
            is_error: false,
        }));
    }
    let tools = atto_tools::ToolRegistry::builtin().specs();
    let system = "s".repeat(3_000);
    let settings = ContextSettings::default();
    let window = settings.window("gpt-4o");
    let runs = 2_000;
    let mut due = 0;
    let start = Instant::now();
    for _ in 0..runs {
        let bytes = system.len() as u64 + tools_bytes(&tools) + history_bytes(&history);
        if compaction_due(&settings, window, std::hint::black_box(bytes)) {
            due += 1;
        }
    }
    let per = start.elapsed().as_secs_f64() / f64::from(runs);
    println!(
        "compaction decision: {} messages, {} KB of history, {} tools: {:.1} µs per decision \
         (target <= 1000 µs); due: {}",
        history.len(),
        history_bytes(&history) / 1024,
        tools.len(),
        per * 1e6,
        due == runs
    );
}
