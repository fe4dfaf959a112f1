//! The registry: stable order, replacement, lean specs, danger and mutation flags.

// Tests may unwrap: a panic is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use atto_protocol::{DangerLevel, ToolKind};
use atto_tools::{BoxFuture, Tool, ToolContext, ToolError, ToolOutput, ToolRegistry};
use serde_json::json;

#[test]
fn builtin_order_danger_and_mutation() {
    let reg = ToolRegistry::builtin();
    assert_eq!(
        reg.names(),
        vec![
            "read_file",
            "list_files",
            "glob",
            "grep",
            "codebase_overview",
            "write_file",
            "edit_file",
            "delete_file",
            "bash"
        ]
    );
    let table = [
        ("read_file", DangerLevel::Safe, false),
        ("list_files", DangerLevel::Safe, false),
        ("glob", DangerLevel::Safe, false),
        ("grep", DangerLevel::Safe, false),
        ("codebase_overview", DangerLevel::Safe, false),
        ("write_file", DangerLevel::Low, true),
        ("edit_file", DangerLevel::Low, true),
        ("delete_file", DangerLevel::Low, true),
        ("bash", DangerLevel::Medium, true),
    ];
    for (name, danger, mutates) in table {
        let tool = reg.get(name).unwrap();
        assert_eq!(tool.danger(), danger, "{name}");
        assert_eq!(tool.mutates(&json!({})), mutates, "{name}");
    }
    assert!(reg.get("nope").is_none());
}

#[test]
fn each_builtin_tool_describes_its_calls() {
    let table = [
        (
            "read_file",
            json!({"path": "a.rs"}),
            ToolKind::Read,
            true,
            Some("a.rs"),
            "Read a.rs",
        ),
        (
            "list_files",
            json!({}),
            ToolKind::Search,
            true,
            None,
            "List .",
        ),
        (
            "glob",
            json!({"pattern": "*.rs"}),
            ToolKind::Search,
            true,
            Some("*.rs"),
            "Find `*.rs`",
        ),
        (
            "grep",
            json!({"pattern": "fn"}),
            ToolKind::Search,
            true,
            Some("fn"),
            "Search `fn`",
        ),
        (
            "codebase_overview",
            json!({}),
            ToolKind::Other,
            true,
            None,
            "codebase_overview",
        ),
        (
            "write_file",
            json!({"path": "n"}),
            ToolKind::Edit,
            false,
            Some("n"),
            "Write n",
        ),
        (
            "edit_file",
            json!({"path": "a"}),
            ToolKind::Edit,
            false,
            Some("a"),
            "Edit a",
        ),
        (
            "apply_patch",
            json!({"input": ""}),
            ToolKind::Edit,
            false,
            None,
            "Apply a patch",
        ),
        (
            "delete_file",
            json!({"path": "d"}),
            ToolKind::Delete,
            false,
            Some("d"),
            "Delete d",
        ),
        (
            "bash",
            json!({"command": "make\nmore"}),
            ToolKind::Execute,
            false,
            Some("make\nmore"),
            "Run `make`",
        ),
    ];
    for (name, args, kind, read_only, target, title) in table {
        let tool = atto_tools::builtin_tool(name).unwrap();
        assert_eq!(tool.kind(), kind, "{name}");
        assert_eq!(tool.read_only(&args), read_only, "{name}");
        assert_eq!(tool.target(&args).as_deref(), target, "{name}");
        assert_eq!(tool.title(&args), title, "{name}");
        assert_eq!(atto_tools::title_of(name, &args), title, "{name}");
    }
    assert_eq!(atto_tools::kind_of("mcp__x__y"), ToolKind::Other);
    assert_eq!(atto_tools::title_of("mcp__x__y", &json!({})), "mcp__x__y");
}

#[test]
fn specs_are_lean_object_schemas() {
    let specs = ToolRegistry::builtin().specs();
    let bytes = serde_json::to_string(&specs).unwrap().len();
    // The whole first request (system prompt included) must stay under 10 KB.
    assert!(bytes < 4500, "tool specs take {bytes} bytes");
    eprintln!("tool specs: {bytes} bytes");
    for spec in &specs {
        assert_eq!(spec.parameters["type"], "object", "{}", spec.name);
        let props = spec.parameters["properties"].as_object().unwrap();
        for required in spec.parameters["required"].as_array().into_iter().flatten() {
            assert!(
                props.contains_key(required.as_str().unwrap()),
                "{}",
                spec.name
            );
        }
        assert!(
            spec.description.len() <= 200,
            "{} description too long",
            spec.name
        );
    }
}

struct Fake(&'static str);

impl Tool for Fake {
    fn name(&self) -> &'static str {
        "grep"
    }
    fn description(&self) -> &'static str {
        self.0
    }
    fn parameters(&self) -> serde_json::Value {
        json!({"type": "object", "properties": {}})
    }
    fn danger(&self) -> DangerLevel {
        DangerLevel::High
    }
    fn mutates(&self, _args: &serde_json::Value) -> bool {
        false
    }
    fn run<'a>(
        &'a self,
        _: serde_json::Value,
        _: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async { Ok(ToolOutput::text("fake")) })
    }
}

#[test]
fn register_replaces_in_place() {
    let mut reg = ToolRegistry::builtin();
    reg.register(Arc::new(Fake("replacement")));
    assert_eq!(reg.names().len(), 9);
    assert_eq!(reg.names()[3], "grep");
    assert_eq!(reg.specs()[3].description, "replacement");
    assert_eq!(reg.get("grep").unwrap().danger(), DangerLevel::High);

    let mut empty = ToolRegistry::empty();
    assert!(empty.specs().is_empty());
    empty.register(Arc::new(Fake("a")));
    assert_eq!(empty.names(), vec!["grep"]);
}
