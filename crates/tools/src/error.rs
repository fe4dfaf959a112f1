//! `ToolError`: every way a tool call can fail, worded for the model.
//!
//! Each message says what happened, what was not done, and what to do next. The engine
//! shows `Display` to the model verbatim; it only inspects the variant to tell
//! cancellation and invalid arguments apart from ordinary failures.

/// Why a tool call failed.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// The arguments were missing, of the wrong type, or make no sense.
    #[error("invalid arguments: {0}. The tool did not run; fix the arguments and call it again")]
    InvalidArguments(String),
    /// A path resolved (possibly through `..` or a symlink) outside the workspace.
    #[error(
        "path is outside the workspace: {path}. Nothing was read or written; use a path inside the workspace"
    )]
    OutsideWorkspace {
        /// The path as the model gave it.
        path: String,
    },
    /// The file or directory does not exist.
    #[error("not found: {path}{}", did_you_mean(.suggestions))]
    NotFound {
        /// Workspace-relative path.
        path: String,
        /// Existing paths with similar names, best first.
        suggestions: Vec<String>,
    },
    /// A file was expected but the path is a directory.
    #[error(
        "{path} is a directory, not a file; nothing was done. Use list_files to see what it holds"
    )]
    IsDirectory {
        /// Workspace-relative path.
        path: String,
    },
    /// A directory was expected but the path is a file.
    #[error("{path} is a file, not a directory. Use read_file to read it")]
    NotADirectory {
        /// Workspace-relative path.
        path: String,
    },
    /// The file looks binary.
    #[error(
        "{path} is a binary file ({size} bytes); it was not shown. Use bash (e.g. `file` or `xxd | head`) to inspect it"
    )]
    Binary {
        /// Workspace-relative path.
        path: String,
        /// Size in bytes.
        size: u64,
    },
    /// The file is too large to read whole.
    #[error(
        "{path} is {size} bytes, too large to read whole; nothing was read. Pass offset and limit to read a part, or grep for what you need"
    )]
    TooLarge {
        /// Workspace-relative path.
        path: String,
        /// Size in bytes.
        size: u64,
    },
    /// The file is not UTF-8 text, so it cannot be edited as text.
    #[error("{path} is not UTF-8 text; it was not changed. Use write_file to replace it whole")]
    NotText {
        /// Workspace-relative path.
        path: String,
    },
    /// An edit could not be applied; the file was left untouched.
    #[error("edit_file: {path} was not changed: {reason}")]
    EditFailed {
        /// Workspace-relative path.
        path: String,
        /// What did not match, with candidate lines when there are any.
        reason: String,
    },
    /// The operating system refused a file operation.
    #[error("could not {action} {path}: {source}")]
    Io {
        /// What was being done: "read", "write", "delete", ...
        action: &'static str,
        /// Workspace-relative path.
        path: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// The command could not be started.
    #[error("could not start {program}: {source}. The command did not run")]
    Spawn {
        /// The shell that failed to start.
        program: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// A command ran past its time limit; its whole process group was killed.
    #[error(
        "command timed out after {seconds}s; it and every process it started were killed. Use a larger timeout (max 600) or run long jobs in the background with output redirected to a file.\n{output}"
    )]
    Timeout {
        /// The limit that was hit.
        seconds: u64,
        /// Output captured before the kill.
        output: String,
    },
    /// The call was cancelled (Ctrl-C or turn abort); any process it started was killed.
    #[error(
        "cancelled: the call was interrupted before it finished; any process it started was killed"
    )]
    Cancelled,
    /// A bug or panic inside the tool.
    #[error("internal error in the tool: {0}. The call may not have completed")]
    Internal(String),
}

fn did_you_mean(suggestions: &[String]) -> String {
    match suggestions {
        [] => String::new(),
        [one] => format!(" — did you mean {one}?"),
        many => format!(" — did you mean one of: {}?", many.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_found_names_suggestions() {
        let e = ToolError::NotFound {
            path: "src/x.rs".into(),
            suggestions: vec!["src/y.rs".into()],
        };
        assert_eq!(
            e.to_string(),
            "not found: src/x.rs — did you mean src/y.rs?"
        );
        let e = ToolError::NotFound {
            path: "a".into(),
            suggestions: vec![],
        };
        assert_eq!(e.to_string(), "not found: a");
    }
}
