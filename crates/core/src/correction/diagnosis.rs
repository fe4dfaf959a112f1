//! The seed's self-improvement protocol, for one session: failure diagnosis (a failed
//! call's error matched against eight categories, each with what it means and a concrete
//! fix), the argument signatures (`{arg: type}`) of calls that worked, per tool, and the
//! count of each tool's failures since it last worked ("This tool has failed 3 times").
//!
//! Owns the categories, their patterns and wording, and the session's tallies. Does not
//! own: when the model sees any of it, nor self-correction attempts (`correction`, which
//! asks this module about every finished call), nor what becomes a learning (`learning`).

use std::collections::HashMap;

use atto_protocol::ToolCallStatus;
use serde_json::Value;

/// Consecutive failures of one tool after which the model is told to change approach.
pub(crate) const REPEAT_WARNING_AT: u32 = 3;

/// Lines at the end of a command's output searched for a diagnosis: errors come last, and
/// a long test log mentioning "timeout" further up is not a timeout.
const TAIL_LINES: usize = 30;

/// Signatures kept per tool.
const MAX_SIGNATURES: usize = 8;

/// What kind of failure a call met (the seed's eight categories, four of them chosen from
/// the failures atto's tools and commands really produce).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum FailureCategory {
    /// A file or directory does not exist.
    FileNotFound,
    /// The OS (or the sandbox) refused access.
    Permission,
    /// The call ran past its time limit.
    Timeout,
    /// Code or a command line did not parse.
    SyntaxError,
    /// The program a command runs is not installed or not on PATH.
    CommandNotFound,
    /// A host could not be reached.
    Network,
    /// The arguments did not fit the tool's schema.
    InvalidArguments,
    /// An edit's old text is not in the file as given.
    EditNoMatch,
}

impl FailureCategory {
    /// `FILE_NOT_FOUND`, ... as the model and learnings name it.
    pub(crate) fn label(self) -> &'static str {
        match self {
            Self::FileNotFound => "FILE_NOT_FOUND",
            Self::Permission => "PERMISSION",
            Self::Timeout => "TIMEOUT",
            Self::SyntaxError => "SYNTAX_ERROR",
            Self::CommandNotFound => "COMMAND_NOT_FOUND",
            Self::Network => "NETWORK",
            Self::InvalidArguments => "INVALID_ARGUMENTS",
            Self::EditNoMatch => "EDIT_NO_MATCH",
        }
    }

    /// What the failure means, in a sentence.
    fn meaning(self) -> &'static str {
        match self {
            Self::FileNotFound => "the file or directory does not exist at that path",
            Self::Permission => "the operating system or the sandbox refused access",
            Self::Timeout => "it ran past its time limit and was stopped",
            Self::SyntaxError => "code or a command line did not parse",
            Self::CommandNotFound => "the program is not installed or not on PATH here",
            Self::Network => "a host could not be reached from here",
            Self::InvalidArguments => "the arguments do not fit the tool's parameters",
            Self::EditNoMatch => "the text to replace is not in the file as given",
        }
    }

    /// Whether a later success with other arguments is worth remembering for this
    /// project: not for slips the model makes anywhere (bad arguments, a stale edit).
    pub(crate) fn teaches(self) -> bool {
        match self {
            Self::FileNotFound
            | Self::Permission
            | Self::Timeout
            | Self::SyntaxError
            | Self::CommandNotFound
            | Self::Network => true,
            Self::InvalidArguments | Self::EditNoMatch => false,
        }
    }
}

/// A failure's category, what it means and what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Diagnosis {
    pub category: FailureCategory,
    /// What to do next, concretely (naming the program, the path or a working signature).
    pub suggestion: String,
}

impl Diagnosis {
    /// `Diagnosis (COMMAND_NOT_FOUND): the program is ... here.`
    pub(crate) fn line(&self) -> String {
        format!(
            "Diagnosis ({}): {}.",
            self.category.label(),
            self.category.meaning()
        )
    }
}

/// What the protocol knows of a finished call.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Finished<'a> {
    pub tool: &'a str,
    pub args: Option<&'a Value>,
    /// The result as the model would see it.
    pub content: &'a str,
    pub status: ToolCallStatus,
    /// How a command exited, for commands.
    pub exit_code: Option<i32>,
}

impl Finished<'_> {
    /// Whether the call failed as a tool failure: an error, arguments that did not fit, or a
    /// command that exited non-zero for a diagnosable reason (a test run that fails is the
    /// command's verdict, not a failure of the tool).
    pub(crate) fn failure(&self) -> Option<Diagnosis> {
        match self.status {
            ToolCallStatus::Error | ToolCallStatus::InvalidArguments => diagnose(self),
            ToolCallStatus::Ok if self.exit_code.is_some_and(|c| c != 0) => diagnose(self),
            ToolCallStatus::Ok
            | ToolCallStatus::Denied
            | ToolCallStatus::Cancelled
            | ToolCallStatus::Queued => None,
        }
    }

    /// Whether the call worked: it ran, and a command exited 0.
    pub(crate) fn worked(&self) -> bool {
        self.status == ToolCallStatus::Ok && self.exit_code.is_none_or(|c| c == 0)
    }
}

/// The session's tallies: failures per tool since it last worked, and the argument
/// signatures of calls that worked.
#[derive(Debug, Default)]
pub(crate) struct Tally {
    failures: HashMap<String, u32>,
    signatures: HashMap<String, Vec<(String, u32)>>,
}

impl Tally {
    /// Counts a failure of `tool`; returns its failures since it last worked.
    pub(crate) fn failed(&mut self, tool: &str) -> u32 {
        let n = self.failures.entry(tool.to_owned()).or_insert(0);
        *n += 1;
        *n
    }

    /// Records a call that worked: its failures start again from zero, and its argument
    /// signature is counted.
    pub(crate) fn worked(&mut self, tool: &str, args: Option<&Value>) {
        self.failures.remove(tool);
        let Some(signature) = args.and_then(signature) else {
            return;
        };
        let known = self.signatures.entry(tool.to_owned()).or_default();
        if let Some((_, count)) = known.iter_mut().find(|(s, _)| *s == signature) {
            *count += 1;
        } else if known.len() < MAX_SIGNATURES {
            known.push((signature, 1));
        }
    }

    /// The signature of `tool`'s calls that worked most often this session.
    pub(crate) fn working_signature(&self, tool: &str) -> Option<&str> {
        self.signatures
            .get(tool)?
            .iter()
            .max_by_key(|(_, count)| *count)
            .map(|(s, _)| s.as_str())
    }
}

/// `{path: string, offset: number}`: the seed's success pattern, argument names with the
/// JSON type of each value, in name order.
pub(crate) fn signature(args: &Value) -> Option<String> {
    let map = args.as_object()?;
    let mut parts: Vec<String> = map
        .iter()
        .map(|(k, v)| {
            let kind = match v {
                Value::Null => "null",
                Value::Bool(_) => "boolean",
                Value::Number(_) => "number",
                Value::String(_) => "string",
                Value::Array(_) => "array",
                Value::Object(_) => "object",
            };
            format!("{k}: {kind}")
        })
        .collect();
    parts.sort();
    Some(format!("{{{}}}", parts.join(", ")))
}

/// Whether a failure is an MCP server's state (down, disabled, not started) rather than the
/// call's own: its words ("No such file or directory" for a missing server binary) say
/// nothing about the call's arguments, so no category is guessed from them.
fn mcp_server_state(call: &Finished<'_>) -> bool {
    call.tool.starts_with("mcp__") && call.content.starts_with("MCP server '")
}

/// Whether a failed call's server is down and is started again on the next call: the same
/// call may then work, so it is not refused as a repeat.
pub(crate) fn mcp_server_restarts(tool: &str, content: &str) -> bool {
    tool.starts_with("mcp__")
        && content.starts_with("MCP server '")
        && content.contains("atto starts it again on the next call")
}

/// Matches a failed call against the categories, most specific first; `None` when none
/// fits (the error says all that is known).
fn diagnose(call: &Finished<'_>) -> Option<Diagnosis> {
    if mcp_server_state(call) {
        return None;
    }
    let command = call
        .args
        .and_then(|a| a.get("command"))
        .and_then(Value::as_str);
    let path = call
        .args
        .and_then(|a| a.get("path"))
        .and_then(Value::as_str);
    let tail = tail(call.content);
    let category = category(call, &tail)?;
    let suggestion = suggestion(category, call.tool, command, path, &tail);
    Some(Diagnosis {
        category,
        suggestion,
    })
}

/// The category a failed call's status, exit code and output's last lines (`tail`) put
/// it in; `None` when no pattern matches.
fn category(call: &Finished<'_>, tail: &str) -> Option<FailureCategory> {
    let text = tail.to_ascii_lowercase();
    let has = |needles: &[&str]| needles.iter().any(|n| text.contains(n));
    let category = if call.status == ToolCallStatus::InvalidArguments {
        FailureCategory::InvalidArguments
    } else if call.exit_code == Some(127)
        || has(&[
            "command not found",
            "not recognized as an internal",
            "executable file not found",
        ])
    {
        FailureCategory::CommandNotFound
    } else if call.exit_code == Some(124)
        || has(&[
            "timed out after",
            "timeout expired",
            "operation timed out",
            "etimedout",
        ])
    {
        FailureCategory::Timeout
    } else if has(&[
        "old_string was not found",
        "old_string matches",
        "apply_patch: nothing was changed",
    ]) {
        FailureCategory::EditNoMatch
    } else if has(&[
        "could not resolve host",
        "temporary failure in name resolution",
        "name or service not known",
        "network is unreachable",
        "connection refused",
        "econnrefused",
        "getaddrinfo",
        "failed to connect to",
    ]) {
        FailureCategory::Network
    } else if call.exit_code == Some(126)
        || has(&[
            "permission denied",
            "operation not permitted",
            "eacces",
            "read-only file system",
        ])
    {
        FailureCategory::Permission
    } else if has(&[
        "syntaxerror",
        "syntax error",
        "unexpected token",
        "unexpected eof",
        "indentationerror",
        "unterminated string",
        "unexpected end of file",
    ]) {
        FailureCategory::SyntaxError
    } else if has(&[
        "no such file or directory",
        "not found: ",
        "enoent",
        "filenotfounderror",
        "can't open file",
        "cannot find the path",
        "does not exist",
    ]) {
        FailureCategory::FileNotFound
    } else {
        return None;
    };
    Some(category)
}

/// The last [`TAIL_LINES`] lines of a result.
fn tail(content: &str) -> String {
    let lines: Vec<&str> = content.lines().collect();
    lines[lines.len().saturating_sub(TAIL_LINES)..].join("\n")
}

/// The program a command line runs first (after `cd … &&`, `sudo`, `env X=y`).
pub(crate) fn program(command: &str) -> Option<&str> {
    let last = command
        .split("&&")
        .map(str::trim)
        .find(|part| !part.starts_with("cd "))
        .unwrap_or(command);
    last.split_whitespace()
        .find(|w| !w.contains('=') && !matches!(*w, "sudo" | "env" | "time" | "exec"))
}

fn suggestion(
    category: FailureCategory,
    tool: &str,
    command: Option<&str>,
    path: Option<&str>,
    tail: &str,
) -> String {
    let program = command.and_then(program).unwrap_or("the program");
    match category {
        FailureCategory::CommandNotFound => {
            // `bash: foo: command not found` names the program the shell could not find.
            let missing = tail
                .lines()
                .rev()
                .find_map(|l| {
                    let (head, _) = l.split_once(": command not found")?;
                    head.rsplit(": ").next()
                })
                .unwrap_or(program);
            let alternative = match missing {
                "python" => " (try python3)",
                "pip" => " (try python3 -m pip)",
                "node" | "npm" | "npx" => " (check whether the project uses another runtime)",
                _ => "",
            };
            format!(
                "`{missing}` is not available here{alternative}. Check with `command -v \
                 {missing}`, use an installed alternative or the project's own script, and do \
                 not run it again as it is."
            )
        }
        FailureCategory::Timeout => format!(
            "Run a narrower command (one test, one package), or pass a larger `timeout` \
             (up to 600 s) if `{program}` needs it; long jobs can run in the background with \
             their output redirected to a file."
        ),
        FailureCategory::EditNoMatch => {
            let file = path.unwrap_or("the file");
            format!(
                "Read {file} again with read_file and copy old_string exactly from its \
                 current text, with enough lines around it to match one place."
            )
        }
        FailureCategory::Network => "Work offline: use what is installed or vendored in the \
             workspace (commands may run without network in the sandbox), or ask the user to \
             allow network access."
            .to_owned(),
        FailureCategory::Permission => "Stay inside the workspace and write only files you \
             may write there; the sandbox refuses writes elsewhere. Make a script executable \
             with `chmod +x` or run it through its interpreter (`bash x.sh`, `python3 x.py`)."
            .to_owned(),
        FailureCategory::SyntaxError => match command {
            Some(_) => "Read the line the error names. For a command, check quoting and \
                 escaping (a heredoc or a script file avoids nested quotes); for code, fix \
                 the syntax it reports before running it again."
                .to_owned(),
            None => "Read the line the error names and fix that syntax first.".to_owned(),
        },
        FailureCategory::FileNotFound => {
            let what = path.map_or_else(|| "the path".to_owned(), |p| format!("`{p}`"));
            format!(
                "{what} does not exist. Find the right path with glob (a pattern for the file \
                 name) or list_files on its directory, then call {tool} with a path from the \
                 result."
            )
        }
        FailureCategory::InvalidArguments => format!(
            "Check {tool}'s parameters: required fields, and the type of each (string, number, \
             array, object)."
        ),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn diagnosed(tool: &str, args: Value, content: &str, exit: Option<i32>) -> Option<Diagnosis> {
        let status = if exit.is_some() {
            ToolCallStatus::Ok
        } else {
            ToolCallStatus::Error
        };
        Finished {
            tool,
            args: Some(&args),
            content,
            status,
            exit_code: exit,
        }
        .failure()
    }

    /// Real failures of atto's tools and of common commands, and their categories.
    #[test]
    fn an_mcp_server_that_is_down_is_not_a_missing_file() {
        let down = "MCP server 'fs' is down: could not start `nope`: No such file or directory \
                    (os error 2). atto starts it again on the next call (in 0.5s at the earliest).";
        assert_eq!(
            diagnosed("mcp__fs__read_text_file", json!({}), down, None),
            None
        );
        assert!(mcp_server_restarts("mcp__fs__read_text_file", down));
        // The server's own answer about a path is the call's failure, diagnosed as any other.
        let own = "ENOENT: no such file or directory, open '/w/x.txt'";
        assert_eq!(
            diagnosed("mcp__fs__read_text_file", json!({}), own, None).map(|d| d.category),
            Some(FailureCategory::FileNotFound)
        );
        assert!(!mcp_server_restarts("mcp__fs__read_text_file", own));
        assert!(!mcp_server_restarts("bash", down));
    }

    #[test]
    fn failures_fall_into_the_eight_categories() {
        use FailureCategory::*;
        /// Tool, arguments, what it said, how it exited, the category expected.
        type Case = (
            &'static str,
            Value,
            &'static str,
            Option<i32>,
            Option<FailureCategory>,
        );
        let cases: &[Case] = &[
            (
                "bash",
                json!({"command": "python main.py"}),
                "bash: line 1: python: command not found\n[exit code 127]",
                Some(127),
                Some(CommandNotFound),
            ),
            (
                "bash",
                json!({"command": "cargo build"}),
                "command timed out after 120s; it and every process it started were killed.",
                None,
                Some(Timeout),
            ),
            (
                "bash",
                json!({"command": "timeout 5 make"}),
                "",
                Some(124),
                Some(Timeout),
            ),
            (
                "edit_file",
                json!({"path": "a.rs"}),
                "edit_file: a.rs was not changed: old_string was not found in a.rs",
                None,
                Some(EditNoMatch),
            ),
            (
                "bash",
                json!({"command": "curl https://example.com"}),
                "curl: (6) Could not resolve host: example.com",
                Some(6),
                Some(Network),
            ),
            (
                "bash",
                json!({"command": "pip install x"}),
                "WARNING: Retrying ... Failed to establish a new connection: [Errno -3] Temporary failure in name resolution",
                Some(1),
                Some(Network),
            ),
            (
                "bash",
                json!({"command": "./run.sh"}),
                "bash: line 1: ./run.sh: Permission denied",
                Some(126),
                Some(Permission),
            ),
            (
                "bash",
                json!({"command": "touch /etc/x"}),
                "touch: cannot touch '/etc/x': Read-only file system",
                Some(1),
                Some(Permission),
            ),
            (
                "bash",
                json!({"command": "python3 -c 'print(1'"}),
                "  File \"<string>\", line 1\n    print(1\n         ^\nSyntaxError: '(' was never closed",
                Some(1),
                Some(SyntaxError),
            ),
            (
                "bash",
                json!({"command": "echo 'x"}),
                "bash: -c: line 1: unexpected EOF while looking for matching `''",
                Some(2),
                Some(SyntaxError),
            ),
            (
                "read_file",
                json!({"path": "src/x.rs"}),
                "not found: src/x.rs — did you mean src/y.rs?",
                None,
                Some(FileNotFound),
            ),
            (
                "bash",
                json!({"command": "python3 nope.py"}),
                "python3: can't open file '/w/nope.py': [Errno 2] No such file or directory",
                Some(2),
                Some(FileNotFound),
            ),
            // A failing test run is the command's verdict, not a tool failure.
            (
                "bash",
                json!({"command": "pytest"}),
                "FAILED tests/test_a.py::test_add - assert 5 == 6\n1 failed",
                Some(1),
                None,
            ),
            (
                "bash",
                json!({"command": "cargo test"}),
                "test result: FAILED. 3 passed; 1 failed",
                Some(101),
                None,
            ),
        ];
        for (tool, args, content, exit, want) in cases {
            let got = diagnosed(tool, args.clone(), content, *exit).map(|d| d.category);
            assert_eq!(got, *want, "{tool} {args} {content:?}");
        }
        let bad = Finished {
            tool: "read_file",
            args: None,
            content: "invalid arguments: missing field `path`",
            status: ToolCallStatus::InvalidArguments,
            exit_code: None,
        };
        assert_eq!(bad.failure().unwrap().category, InvalidArguments);
        // Calls that did not run are not failures of the tool.
        for status in [
            ToolCallStatus::Denied,
            ToolCallStatus::Cancelled,
            ToolCallStatus::Queued,
        ] {
            let call = Finished {
                status,
                content: "not found: x",
                ..bad
            };
            assert!(call.failure().is_none(), "{status:?}");
        }
    }

    #[test]
    fn suggestions_are_concrete() {
        let d = diagnosed(
            "bash",
            json!({"command": "cd app && python main.py"}),
            "bash: line 1: python: command not found",
            Some(127),
        )
        .unwrap();
        assert!(
            d.suggestion
                .contains("`python` is not available here (try python3)")
        );
        assert_eq!(
            d.line(),
            "Diagnosis (COMMAND_NOT_FOUND): the program is not installed or not on PATH here."
        );
        let d = diagnosed(
            "read_file",
            json!({"path": "src/x.rs"}),
            "not found: src/x.rs",
            None,
        )
        .unwrap();
        assert!(
            d.suggestion.starts_with("`src/x.rs` does not exist"),
            "{}",
            d.suggestion
        );
        assert!(d.suggestion.contains("call read_file"));
        // Only the tail of a long log is searched.
        let mut log = "a test named test_timeout_handling ran\n".repeat(5);
        log.push_str(&"ok\n".repeat(40));
        log.push_str("bash: python: command not found\n");
        let d = diagnosed("bash", json!({"command": "make"}), &log, Some(2)).unwrap();
        assert_eq!(d.category, FailureCategory::CommandNotFound);
        assert!(d.suggestion.contains("`python`"), "{}", d.suggestion);
    }

    #[test]
    fn signatures_and_failure_counts() {
        assert_eq!(
            signature(&json!({"path": "a", "offset": 3, "pending": true})).unwrap(),
            "{offset: number, path: string, pending: boolean}"
        );
        assert_eq!(signature(&json!("not an object")), None);
        let mut tally = Tally::default();
        assert_eq!(tally.failed("bash"), 1);
        assert_eq!(tally.failed("bash"), 2);
        assert_eq!(tally.failed("read_file"), 1);
        tally.worked("bash", Some(&json!({"command": "ls"})));
        assert_eq!(tally.failed("bash"), 1, "a success starts the count again");
        tally.worked("read_file", Some(&json!({"path": "a"})));
        tally.worked("read_file", Some(&json!({"path": "b", "limit": 5})));
        tally.worked("read_file", Some(&json!({"path": "c"})));
        assert_eq!(tally.working_signature("read_file"), Some("{path: string}"));
        assert_eq!(tally.working_signature("grep"), None);
        assert_eq!(program("cd a && FOO=1 sudo python3 x.py"), Some("python3"));
    }
}
