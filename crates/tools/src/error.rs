//! `ToolError`: every way a tool call can fail, worded for the model.
//!
//! Each message says what happened, what was not done, and what to do next. The engine
//! shows `Display` to the model verbatim; it only inspects the variant to tell
//! cancellation and invalid arguments apart from ordinary failures.

use crate::names;

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
    /// A patch could not be applied; no file was changed (what was written before the
    /// failure was restored).
    #[error("apply_patch: nothing was changed: {reason}")]
    PatchFailed {
        /// What went wrong, naming the file and the chunk.
        reason: String,
        /// The workspace-relative file whose text did not match a chunk: the model's idea
        /// of it is out of date.
        stale_file: Option<String>,
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
    /// The tool declined to do what was asked; the message says why and what to do.
    #[error("{0}")]
    Declined(String),
    /// A bug or panic inside the tool.
    #[error("internal error in the tool: {0}. The call may not have completed")]
    Internal(String),
}

/// A better route after a failed call: the spec's self-correction metadata. The engine
/// turns it into a `SELF_CORRECT_ATTEMPT` the model sees instead of a bare error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fallback {
    /// The tool whose call failed.
    pub original_tool: String,
    /// The error it failed with, as the model would have seen it.
    pub original_error: String,
    /// What to do instead, in one or two sentences for the model.
    pub suggested_approach: String,
    /// The tools the suggested approach uses.
    pub fallback_tools: Vec<String>,
}

impl ToolError {
    /// The better route after this error from `tool`, for the failures that have one;
    /// `None` when the error already says all there is (or a retry would not help).
    pub fn self_correct(&self, tool: &str) -> Option<Fallback> {
        let (suggested_approach, fallback_tools) = match self {
            Self::EditFailed { path, reason } if edit_text_mismatch(reason) => (
                format!(
                    "Read {path} again with read_file, then retry edit_file with old_string \
                     copied exactly from its current text (with enough surrounding lines to \
                     match one place); or, if the edit is large, rewrite the whole file with \
                     write_file."
                ),
                vec![names::READ_FILE, names::EDIT_FILE, names::WRITE_FILE],
            ),
            Self::PatchFailed {
                stale_file: Some(path),
                ..
            } => (
                format!(
                    "Read {path} again with read_file, then send the patch again with its ` ` \
                     and `-` lines copied exactly from the current text (and an `@@` line \
                     naming a line above each change when the lines occur more than once)."
                ),
                vec![names::READ_FILE, names::APPLY_PATCH],
            ),
            Self::NotFound { path, suggestions }
                if [names::READ_FILE, names::EDIT_FILE, names::DELETE_FILE].contains(&tool) =>
            {
                let hint = match suggestions.first() {
                    Some(best) => format!(" (perhaps {best})"),
                    None => String::new(),
                };
                (
                    format!(
                        "{path} does not exist. Find the right path first{hint}: use glob with \
                         a pattern for the file name, or list_files on its directory, then \
                         call {tool} again with a path from the result."
                    ),
                    vec![names::GLOB, names::LIST_FILES, tool],
                )
            }
            Self::EditFailed { .. }
            | Self::PatchFailed { .. }
            | Self::NotFound { .. }
            | Self::InvalidArguments(_)
            | Self::OutsideWorkspace { .. }
            | Self::IsDirectory { .. }
            | Self::NotADirectory { .. }
            | Self::Binary { .. }
            | Self::TooLarge { .. }
            | Self::NotText { .. }
            | Self::Io { .. }
            | Self::Spawn { .. }
            | Self::Timeout { .. }
            | Self::Cancelled
            | Self::Declined(_)
            | Self::Internal(_) => return None,
        };
        Some(Fallback {
            original_tool: tool.to_owned(),
            original_error: self.to_string(),
            suggested_approach,
            fallback_tools: fallback_tools.into_iter().map(str::to_owned).collect(),
        })
    }
}

/// Whether an edit failed because old_string did not match the file's text (absent, or
/// matching several places): the file is not what the model believes it is. Empty or
/// identical strings are mistakes a re-read does not fix. The wording is `matching`'s.
fn edit_text_mismatch(reason: &str) -> bool {
    reason.contains("old_string was not found") || reason.contains("old_string matches")
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

    /// The real `edit_file` error for `old_string` against a file holding `text`.
    fn edit_error(text: &str, old_string: &str, new_string: &str) -> ToolError {
        let args = serde_json::json!({
            "path": "a.txt", "old_string": old_string, "new_string": new_string,
        });
        match crate::preview_edit(text, &args) {
            Err(e) => e,
            Ok(edited) => panic!("the edit applied: {edited}"),
        }
    }

    #[test]
    fn edits_that_miss_the_text_suggest_reading_the_file_again() {
        let text = "alpha\nbeta\nalpha\n";
        for (old, new) in [("gamma", "x"), ("alpha", "x"), ("zeta\nomega", "y")] {
            let e = edit_error(text, old, new);
            let fallback = e.self_correct("edit_file").unwrap();
            assert_eq!(fallback.original_tool, "edit_file");
            assert_eq!(fallback.original_error, e.to_string());
            assert!(fallback.suggested_approach.contains("Read a.txt again"));
            assert_eq!(
                fallback.fallback_tools,
                ["read_file", "edit_file", "write_file"]
            );
        }
    }

    #[test]
    fn edits_a_reread_cannot_fix_have_no_fallback() {
        let text = "alpha\n";
        assert_eq!(edit_error(text, "", "x").self_correct("edit_file"), None);
        assert_eq!(
            edit_error(text, "alpha", "alpha").self_correct("edit_file"),
            None
        );
    }

    #[test]
    fn missing_files_suggest_finding_the_path() {
        let e = ToolError::NotFound {
            path: "src/x.rs".into(),
            suggestions: vec!["src/y.rs".into()],
        };
        let fallback = e.self_correct("read_file").unwrap();
        assert!(fallback.suggested_approach.contains("perhaps src/y.rs"));
        assert_eq!(fallback.fallback_tools, ["glob", "list_files", "read_file"]);
        // A missing directory for a search is answered well enough by the error itself.
        assert_eq!(e.self_correct("grep"), None);
        assert_eq!(ToolError::Cancelled.self_correct("read_file"), None);
    }
}
