//! A tool call as evidence (`ToolAction`), built one way wherever a call is recorded: a
//! swarm worker's event stream, a subagent's events, a person's fix. Whether the call ran
//! tests is judged here, once, by the parsed classifier; bounding its output is the
//! recorder's business, to [`ACTION_OUTPUT`].

use atto_protocol::ToolKind;

use crate::ToolAction;

/// Most bytes of a call's output kept as evidence.
pub const ACTION_OUTPUT: usize = 4 * 1024;

/// A call as it starts: its tool and arguments, with no output yet. It is a test run when
/// its tool runs commands (`kind`) and its `command` is one the classifier knows as a
/// test command.
pub fn started(
    tool: impl Into<String>,
    kind: ToolKind,
    arguments: serde_json::Value,
) -> ToolAction {
    let is_test_run = kind == ToolKind::Execute
        && arguments
            .get("command")
            .and_then(serde_json::Value::as_str)
            .is_some_and(atto_policy::is_test_command);
    ToolAction {
        tool: tool.into(),
        arguments,
        output: String::new(),
        exit_code: None,
        is_test_run,
        not_run: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_command_running_tool_with_a_test_command_is_a_test_run() {
        let args = |command: &str| serde_json::json!({ "command": command });
        assert!(started("bash", ToolKind::Execute, args("cargo test")).is_test_run);
        assert!(!started("bash", ToolKind::Execute, args("ls")).is_test_run);
        assert!(!started("notes", ToolKind::Other, args("cargo test")).is_test_run);
        let action = started(
            "read_file",
            ToolKind::Read,
            serde_json::json!({"path": "a"}),
        );
        assert_eq!((action.output.as_str(), action.exit_code), ("", None));
        assert_eq!(action.not_run, None);
    }
}
