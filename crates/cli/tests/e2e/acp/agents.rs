//! Subagents over ACP: a child is a tool call of its own, in progress while it works and
//! completed with its report.

use atto_testkit::{Reply, Script};
use serde_json::json;

use super::{have_client, opening, prompt, run};
use crate::common::{Env, call};

const REPORT: &str = "Looked at hello.txt.\n\n## Summary\nThe greeting is hello.\n\n## Files \
                      Modified\n- none\n\n## Key Decisions\n- read only\n\n## Remaining \
                      Work\n- none\n\n## Confidence: 0.9";

#[test]
fn a_subagent_is_a_tool_call_that_ends_with_its_report() {
    if !have_client("a_subagent_is_a_tool_call") {
        return;
    }
    let mut env = Env::new();
    env.write("hello.txt", "hello\n");
    env.serve(Script::new(vec![
        Reply {
            tool_calls: vec![call(
                "spawn_agent",
                json!({"task": "find the greeting", "role": "explore"}),
            )],
            ..Reply::default()
        },
        Reply {
            tool_calls: vec![call("read_file", json!({"path": "hello.txt"}))],
            ..Reply::default()
        },
        Reply::text(REPORT),
        Reply::text("The child says hello."),
    ]));
    let mut steps = opening();
    steps.push(prompt("what does the greeting say?"));
    let seen = run(
        &env,
        &[
            "--permission",
            "auto-safe",
            "--max-budget-tokens",
            "1000000",
        ],
        json!({"steps": steps}),
    );
    assert_eq!(seen.result(2)["stopReason"], "end_turn");
    let child = seen
        .updates_of("tool_call")
        .into_iter()
        .find(|u| {
            u["toolCallId"]
                .as_str()
                .is_some_and(|id| id.starts_with("subagent-"))
        })
        .unwrap_or_else(|| panic!("no subagent tool call:\n{}", seen.dump()));
    assert_eq!(child["title"], "subagent (explore): find the greeting");
    assert_eq!(child["kind"], "think");
    assert_eq!(child["status"], "in_progress");
    let ended = seen
        .updates_of("tool_call_update")
        .into_iter()
        .rfind(|u| u["toolCallId"] == child["toolCallId"] && u.get("status").is_some())
        .unwrap_or_else(|| panic!("the subagent never ended:\n{}", seen.dump()));
    assert_eq!(ended["status"], "completed", "{ended}");
    assert!(
        ended["content"][0]["content"]["text"]
            .as_str()
            .unwrap()
            .contains("The greeting is hello."),
        "{ended}"
    );
    assert!(
        seen.text_of("agent_message_chunk")
            .contains("The child says hello.")
    );
}
