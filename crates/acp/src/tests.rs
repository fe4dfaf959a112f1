//! The pure translations, table by table: prompt blocks to text, approvals to options and
//! back, history to replayed updates, the task plan and goals to plan entries.

use agent_client_protocol::v1::schema::{ContentBlock, SessionUpdate};
use atto_protocol::{
    ApprovalDecision, ApprovalRequest, AssistantPart, GrantScope, Message, ToolCall, ToolResult,
};
use serde_json::json;

use crate::{ToolFacts, convert, plan_view, prompt, replay};

/// The built-in tools' answers, as the binary gives them to the server.
struct Builtins;

impl ToolFacts for Builtins {
    fn kind(&self, tool: &str) -> atto_protocol::ToolKind {
        atto_tools::kind_of(tool)
    }

    fn title(&self, tool: &str, args: &serde_json::Value) -> String {
        atto_tools::title_of(tool, args)
    }

    fn paths(&self, tool: &str, args: &serde_json::Value) -> Vec<String> {
        atto_tools::paths_of(tool, args)
    }

    fn read(&self, workspace: &std::path::Path, path: &str) -> Option<String> {
        std::fs::read_to_string(workspace.join(path)).ok()
    }
}

fn blocks(value: serde_json::Value) -> Vec<ContentBlock> {
    serde_json::from_value(value).unwrap()
}

#[test]
fn prompt_blocks_become_one_text_and_what_atto_cannot_take_is_refused() {
    let text = prompt::text(&blocks(json!([
        {"type": "text", "text": "fix it"},
        {"type": "resource_link", "uri": "file:///w/a.rs", "name": "a.rs"},
        {"type": "resource", "resource": {"uri": "file:///w/b.txt", "text": "B BODY"}}
    ])))
    .unwrap();
    assert_eq!(
        text,
        "fix it\n\n[a.rs](file:///w/a.rs)\n\n<resource uri=\"file:///w/b.txt\">\nB BODY\n</resource>"
    );
    for (refused, why) in [
        (
            json!([{"type": "image", "data": "aGk=", "mimeType": "image/png"}]),
            "no images",
        ),
        (
            json!([{"type": "audio", "data": "aGk=", "mimeType": "audio/wav"}]),
            "no audio",
        ),
        (
            json!([{"type": "resource", "resource": {"uri": "file:///x.bin", "blob": "aGk="}}]),
            "binary resource file:///x.bin",
        ),
        (json!([{"type": "text", "text": "  "}]), "empty"),
        (json!([]), "empty"),
    ] {
        let err = prompt::text(&blocks(refused.clone())).unwrap_err();
        assert!(err.contains(why), "{refused}: {err}");
    }
}

fn approval(unsandboxed: bool) -> ApprovalRequest {
    ApprovalRequest {
        id: "approval-1".into(),
        call_id: "c1".into(),
        tool: "bash".into(),
        kind: atto_protocol::ToolKind::Execute,
        subject: "make test".into(),
        risk: "WARN".into(),
        reasons: vec![],
        suggested_rule: "bash(make test)".into(),
        unsandboxed,
        protected: false,
        subagent: None,
        arguments: serde_json::Value::Null,
    }
}

#[test]
fn an_approval_offers_atto_s_answers_and_each_maps_back_to_its_decision() {
    let ids = |r: &ApprovalRequest| -> Vec<String> {
        convert::permission_options(r)
            .iter()
            .map(|o| o.option_id.0.to_string())
            .collect()
    };
    assert_eq!(
        ids(&approval(false)),
        [
            "allow_once",
            "allow_session",
            "allow_project",
            "reject_once"
        ]
    );
    // Running without the sandbox: a person may allow it once, never always.
    assert_eq!(ids(&approval(true)), ["allow_once", "reject_once"]);
    assert_eq!(convert::decision("allow_once"), ApprovalDecision::Yes);
    assert_eq!(
        convert::decision("allow_session"),
        ApprovalDecision::Always {
            scope: GrantScope::Session,
            rule: None
        }
    );
    assert_eq!(
        convert::decision("allow_project"),
        ApprovalDecision::Always {
            scope: GrantScope::Project,
            rule: None
        }
    );
    assert!(matches!(
        convert::decision("reject_once"),
        ApprovalDecision::No { .. }
    ));
    assert!(matches!(
        convert::decision("allow_everything_forever"),
        ApprovalDecision::No { .. }
    ));
}

#[test]
fn an_approval_is_titled_from_the_arguments_the_gate_judged() {
    let mut edit = approval(false);
    edit.tool = "edit_file".into();
    edit.subject = "edit a.rs:\n-a\n+b".into();
    edit.arguments = json!({"path": "a.rs", "old_string": "a", "new_string": "b"});
    assert_eq!(convert::approval_title(&edit, &Builtins), "Edit a.rs");
    let mut command = approval(true);
    command.arguments = json!({"command": "make test"});
    assert_eq!(
        convert::approval_title(&command, &Builtins),
        "Run `make test` WITHOUT the sandbox"
    );
    // A request without arguments keeps the first line of what would run.
    assert_eq!(
        convert::approval_title(&approval(false), &Builtins),
        "make test"
    );
}

#[test]
fn tool_kinds_titles_and_diffs() {
    let ws = std::path::Path::new("/w");
    for (tool, kind) in [
        ("read_file", "read"),
        ("edit_file", "edit"),
        ("write_file", "edit"),
        ("delete_file", "delete"),
        ("grep", "search"),
        ("bash", "execute"),
        ("spawn_agent", "other"),
    ] {
        assert_eq!(
            json!(convert::kind(atto_tools::kind_of(tool))),
            json!(kind),
            "{tool}"
        );
    }
    assert_eq!(
        atto_tools::title_of("bash", &json!({"command": "cargo test\nmore"})),
        "Run `cargo test`"
    );
    let edits = convert::diffs(
        ws,
        &json!({"path": "a.rs", "edits": [
            {"old_string": "a", "new_string": "b"},
            {"old_string": "c", "new_string": "d"}
        ]}),
        None,
    );
    let edits = json!(edits);
    assert_eq!(edits[1]["path"], "/w/a.rs");
    assert_eq!(edits[1]["oldText"], "c");
    assert_eq!(edits[1]["newText"], "d");
    let write = json!(convert::diffs(
        ws,
        &json!({"path": "n.txt", "content": "new"}),
        Some("old")
    ));
    assert_eq!(write[0]["oldText"], "old");
    assert_eq!(write[0]["newText"], "new");
    assert!(convert::diffs(ws, &json!({"command": "ls"}), None).is_empty());
    let patch = "*** Begin Patch\n*** Add File: n.txt\n+x\n*** Update File: src/a.rs\n@@\n-a\n+b\n*** End Patch";
    let places = json!(convert::locations(
        ws,
        Builtins.paths("apply_patch", &json!({ "input": patch }))
    ));
    assert_eq!(places[0]["path"], "/w/n.txt");
    assert_eq!(places[1]["path"], "/w/src/a.rs");
    assert_eq!(
        convert::mode_from_id("plan"),
        Some(atto_protocol::AgentMode::Plan)
    );
    assert_eq!(convert::mode_from_id("yolo"), None);
}

#[test]
fn a_history_replays_in_order_and_results_close_their_calls() {
    let history = vec![
        Message::user("read it"),
        Message::Assistant {
            parts: vec![
                AssistantPart::Thinking {
                    text: "hm".into(),
                    signature: None,
                },
                AssistantPart::Text {
                    text: "reading".into(),
                },
                AssistantPart::ToolCall(ToolCall {
                    id: "c1".into(),
                    name: "read_file".into(),
                    arguments: r#"{"path":"a.txt"}"#.into(),
                }),
            ],
        },
        Message::ToolResult(ToolResult {
            call_id: "c1".into(),
            name: "read_file".into(),
            content: "no such file".into(),
            is_error: true,
        }),
    ];
    let kinds: Vec<String> = replay::updates(&history, &Builtins)
        .iter()
        .map(|u| json!(u)["sessionUpdate"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        kinds,
        [
            "user_message_chunk",
            "agent_thought_chunk",
            "agent_message_chunk",
            "tool_call",
            "tool_call_update"
        ]
    );
    let updates = replay::updates(&history, &Builtins);
    let SessionUpdate::ToolCallUpdate(closed) = &updates[4] else {
        panic!("{:?}", updates[4]);
    };
    assert_eq!(json!(closed)["status"], "failed");
}

#[test]
fn plan_entries_are_the_steps_then_the_goals() {
    let plan: atto_protocol::TaskPlan = serde_json::from_value(json!({
        "id": "p", "task": "t", "intent": "i", "risk": "low", "estimated_duration_secs": 1,
        "status": "running",
        "steps": [
            {"id": "s1", "number": 1, "description": "parse", "complexity": 1, "token_budget": 1,
             "kind": "IMPLEMENT", "status": "completed"},
            {"id": "s2", "number": 2, "description": "test", "complexity": 1, "token_budget": 1,
             "kind": "IMPLEMENT", "status": "pending"}
        ]
    }))
    .unwrap();
    let mut view = plan_view::PlanView::default();
    view.set_plan(&plan);
    view.step(2, atto_protocol::StepStatus::Failed);
    let entries = json!(view.plan())["entries"].clone();
    assert_eq!(entries[0]["content"], "1. parse");
    assert_eq!(entries[0]["status"], "completed");
    assert_eq!(entries[1]["content"], "2. test (failed)");
    assert_eq!(entries.as_array().unwrap().len(), 2);
}
