//! The seeds' agent-mode table: which calls exist in each mode, before the permission
//! mode decides whether to ask.
//!
//! | Mode   | Read | Write       | Execute    |
//! |--------|------|-------------|------------|
//! | build  | yes  | yes         | yes        |
//! | plan   | yes  | queued      | read-only commands run; the rest queued |
//! | review | yes  | no          | no         |
//! | debug  | yes  | no          | whitelisted test commands only |
//!
//! A subagent that may write (`spawn_agent` with a writing role) exists only in build
//! mode: plan mode queues writes and review and debug write nothing, so a child that
//! writes would be a way around them. Read-only subagents run in every mode.
//!
//! "Read-only command" and "test command" are judged by the parsed classifier, never by a
//! pattern on the text, so `pytest; rm -rf x` is neither.

use atto_protocol::{AgentMode, ToolKind};

use crate::bash::{BashRisk, Verdict, is_test_command};

/// What the agent mode does with a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModeAction {
    /// The call exists in this mode; the permission gate decides next.
    Run,
    /// Plan mode: record it as a proposed change instead of running it.
    Queue,
    /// The mode does not offer this; the message names the mode and says why.
    Refuse(String),
}

/// What the mode table needs to know about one call.
pub struct ModeFacts<'a> {
    /// Tool name.
    pub tool: &'a str,
    /// Whether the tool is one atto knows.
    pub known: bool,
    /// Whether this call may change anything (the tool's own judgement).
    pub mutates: bool,
    /// What kind of work the tool does (the tool's own word; `Other` when unknown).
    pub kind: ToolKind,
    /// The classifier's verdict, for a tool that runs commands.
    pub bash: Option<&'a Verdict>,
    /// The command text, for a tool that runs commands.
    pub command: Option<&'a str>,
}

/// The tool that starts a subagent.
pub const SPAWN_TOOL: &str = "spawn_agent";

/// Tools that run code by the seeds' names, beyond atto's own (which say so by their kind).
const EXECUTE_TOOLS: &[&str] = &["run_tests", "execute_code"];

/// Whether a tool runs code: by its kind, or by one of the seeds' names.
fn executes(tool: &str, kind: ToolKind) -> bool {
    kind == ToolKind::Execute || EXECUTE_TOOLS.contains(&tool)
}

/// Tools that only run tests (allowed in DEBUG).
const TEST_TOOLS: &[&str] = &["run_tests"];

/// Words in a tool name that mark it as a write (for MCP and other external tools, whose
/// behaviour atto cannot inspect).
const WRITE_VERBS: &[&str] = &[
    "create", "update", "delete", "remove", "write", "edit", "push", "commit", "move", "rename",
    "insert", "put", "post", "patch", "merge", "upload", "send", "modify", "replace", "append",
    "save", "set", "add", "drop", "reset", "revert", "apply", "publish", "deploy", "install",
    "exec", "execute", "run", "kill", "close", "archive", "fork", "tag", "transfer", "mkdir",
];

/// Decides what `mode` does with a call.
pub fn mode_action(mode: AgentMode, call: &ModeFacts<'_>) -> ModeAction {
    let execute = executes(call.tool, call.kind);
    let writes = if execute {
        true
    } else if call.known {
        call.mutates
    } else {
        is_write_tool_name(call.tool)
    };
    if !writes {
        return ModeAction::Run;
    }
    if call.tool == SPAWN_TOOL && mode != AgentMode::Build {
        return ModeAction::Refuse(format!(
            "{} mode: a subagent that writes cannot be started here (its writes would not be {}). \
             Spawn a read-only one (role explore, review or verify), or ask the user to switch \
             modes (/mode build).",
            mode.as_str().to_uppercase(),
            if mode == AgentMode::Plan {
                "queued for approval"
            } else {
                "allowed in this mode"
            }
        ));
    }
    match mode {
        AgentMode::Build => ModeAction::Run,
        AgentMode::Plan => {
            let read_only = call.bash.is_some_and(|v| v.risk == BashRisk::Safe);
            if read_only {
                ModeAction::Run
            } else {
                ModeAction::Queue
            }
        }
        AgentMode::Review => ModeAction::Refuse(format!(
            "REVIEW mode is read-only: {} {} not available. Read and search only; ask the user \
             to switch modes (/mode build) if changes are needed.",
            call.tool,
            if execute {
                "(running commands) is"
            } else {
                "(writing) is"
            }
        )),
        AgentMode::Debug => {
            let test = TEST_TOOLS.contains(&call.tool)
                || (call.bash.is_some() && call.command.is_some_and(is_test_command));
            if test {
                ModeAction::Run
            } else if execute {
                ModeAction::Refuse(format!(
                    "DEBUG mode runs only test commands ({}); this {} call is not one. Read \
                     files and run tests to diagnose; ask the user to switch modes (/mode build) \
                     to change anything.",
                    TEST_WHITELIST, call.tool
                ))
            } else {
                ModeAction::Refuse(format!(
                    "DEBUG mode does not write files: {} is not available. Diagnose with reads \
                     and test runs; ask the user to switch modes (/mode build) to apply a fix.",
                    call.tool
                ))
            }
        }
    }
}

/// Whether the model is offered `tool` (of `kind`) at all in `mode` (`writes`: the tool
/// can change files or state). Review hides every tool that writes or runs commands; debug hides
/// the ones that write files but keeps commands for its test runs; build and plan offer
/// everything (plan mode queues what writes). What is offered is only what the model
/// sees: [`mode_action`] still judges every call.
pub fn offered(mode: AgentMode, tool: &str, kind: ToolKind, writes: bool) -> bool {
    let execute = executes(tool, kind);
    match mode {
        AgentMode::Build | AgentMode::Plan => true,
        AgentMode::Review => !writes && !execute,
        AgentMode::Debug => execute || !writes,
    }
}

/// The seeds' DEBUG whitelist, as shown to the model.
pub const TEST_WHITELIST: &str = "pytest, python -m pytest, npm test, npx jest, cargo test, go test, \
                                  make test, mypy, ruff check, tsc --noEmit, eslint";

/// Whether a tool name reads as a write: any of its words (split at `_`, `-`, `.`, `/`, `:`
/// and lower→upper case changes) is a write verb, as in `mcp__github__create_issue` or
/// `fsWriteFile`.
pub fn is_write_tool_name(name: &str) -> bool {
    words(name)
        .iter()
        .any(|w| WRITE_VERBS.contains(&w.as_str()))
}

fn words(name: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if !c.is_ascii_alphanumeric() {
            if !current.is_empty() {
                out.push(std::mem::take(&mut current));
            }
            prev_lower = false;
            continue;
        }
        if c.is_ascii_uppercase() && prev_lower && !current.is_empty() {
            out.push(std::mem::take(&mut current));
        }
        prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        current.push(c.to_ascii_lowercase());
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// Mode names are read where front ends can reach them: the protocol.
pub use atto_protocol::parse_agent_mode;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bash::classify;

    fn facts<'a>(
        tool: &'a str,
        verdict: Option<&'a Verdict>,
        command: Option<&'a str>,
    ) -> ModeFacts<'a> {
        let known = matches!(
            tool,
            "read_file"
                | "list_files"
                | "glob"
                | "grep"
                | "write_file"
                | "edit_file"
                | "delete_file"
                | "bash"
        );
        ModeFacts {
            tool,
            known,
            mutates: matches!(tool, "write_file" | "edit_file" | "delete_file" | "bash"),
            kind: if tool == "bash" {
                ToolKind::Execute
            } else {
                ToolKind::Other
            },
            bash: verdict,
            command,
        }
    }

    fn bash(mode: AgentMode, command: &str) -> ModeAction {
        let v = classify(command);
        mode_action(mode, &facts("bash", Some(&v), Some(command)))
    }

    #[test]
    fn a_subagent_that_writes_exists_only_in_build_mode_and_a_read_only_one_everywhere() {
        use AgentMode::*;
        let spawn = |mutates| ModeFacts {
            tool: SPAWN_TOOL,
            known: true,
            mutates,
            kind: ToolKind::Other,
            bash: None,
            command: None,
        };
        for mode in [Build, Plan, Review, Debug] {
            assert_eq!(
                mode_action(mode, &spawn(false)),
                ModeAction::Run,
                "{mode:?}"
            );
        }
        assert_eq!(mode_action(Build, &spawn(true)), ModeAction::Run);
        for mode in [Plan, Review, Debug] {
            let ModeAction::Refuse(why) = mode_action(mode, &spawn(true)) else {
                panic!("{mode:?}: a writing subagent must be refused, never queued");
            };
            assert!(why.contains("read-only"), "{why}");
        }
    }

    #[test]
    fn the_seeds_table() {
        use AgentMode::*;
        for mode in [Build, Plan, Review, Debug] {
            assert_eq!(
                mode_action(mode, &facts("read_file", None, None)),
                ModeAction::Run
            );
            assert_eq!(
                mode_action(mode, &facts("grep", None, None)),
                ModeAction::Run
            );
        }
        assert_eq!(
            mode_action(Build, &facts("write_file", None, None)),
            ModeAction::Run
        );
        assert_eq!(
            mode_action(Plan, &facts("write_file", None, None)),
            ModeAction::Queue
        );
        assert_eq!(
            mode_action(Plan, &facts("delete_file", None, None)),
            ModeAction::Queue
        );
        assert!(
            matches!(mode_action(Review, &facts("edit_file", None, None)), ModeAction::Refuse(m) if m.contains("REVIEW"))
        );
        assert!(
            matches!(mode_action(Debug, &facts("write_file", None, None)), ModeAction::Refuse(m) if m.contains("DEBUG"))
        );
        assert_eq!(bash(Build, "rm -rf build"), ModeAction::Run);
        assert_eq!(bash(Plan, "ls -la && cat README.md"), ModeAction::Run);
        assert!(matches!(bash(Review, "ls"), ModeAction::Refuse(m) if m.contains("REVIEW")));
        assert_eq!(bash(Debug, "cargo test"), ModeAction::Run);
        assert_eq!(bash(Debug, "python -m pytest -x tests/"), ModeAction::Run);
    }

    #[test]
    fn plan_mode_queues_every_way_to_write_with_a_command() {
        for cmd in [
            "echo hi > a.txt",
            "echo hi >> a.txt",
            "echo hi | tee a.txt",
            "sed -i s/a/b/ a.txt",
            "python3 -c \"open('a.txt','w').write('x')\"",
            "rm a.txt",
            "mv a.txt b.txt",
            "git commit -am x",
            "cat > a.txt <<EOF\nhello\nEOF",
            "ls; touch x",
            "$(echo rm) a.txt",
        ] {
            assert_eq!(bash(AgentMode::Plan, cmd), ModeAction::Queue, "{cmd}");
        }
    }

    #[test]
    fn debug_mode_allows_only_parsed_test_commands() {
        for cmd in [
            "pytest; rm -rf x",
            "cargo test && rm x",
            "npm test > out.txt",
            "make",
            "ls",
        ] {
            assert!(
                matches!(bash(AgentMode::Debug, cmd), ModeAction::Refuse(m) if m.contains("DEBUG")),
                "{cmd}"
            );
        }
    }

    #[test]
    fn external_tools_are_judged_by_their_names() {
        for name in [
            "mcp__github__create_issue",
            "mcp_fs_write_file",
            "mcp__git__git_commit",
            "pushBranch",
            "mcp.files.rename",
        ] {
            assert!(is_write_tool_name(name), "{name}");
            let f = ModeFacts {
                tool: name,
                known: false,
                mutates: false,
                kind: ToolKind::Other,
                bash: None,
                command: None,
            };
            assert_eq!(
                mode_action(AgentMode::Plan, &f),
                ModeAction::Queue,
                "{name}"
            );
        }
        for name in [
            "mcp__github__get_issue",
            "mcp__time__get_current_time",
            "search_code",
            "listFiles",
        ] {
            assert!(!is_write_tool_name(name), "{name}");
        }
    }

    #[test]
    fn mode_names_and_aliases() {
        assert_eq!(parse_agent_mode("agent"), Ok((AgentMode::Build, false)));
        assert_eq!(parse_agent_mode("PLAN"), Ok((AgentMode::Plan, false)));
        assert_eq!(parse_agent_mode("1"), Ok((AgentMode::Plan, false)));
        assert_eq!(parse_agent_mode("2"), Ok((AgentMode::Build, false)));
        assert_eq!(parse_agent_mode("3"), Ok((AgentMode::Build, true)));
        assert_eq!(parse_agent_mode("yolo"), Ok((AgentMode::Build, true)));
        assert!(parse_agent_mode("nonsense").is_err_and(|e| e.contains("unknown mode 'nonsense'")));
    }
}
