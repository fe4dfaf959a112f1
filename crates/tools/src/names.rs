//! The names the model calls the built-in tools by. A crate that must name one (plan mode's
//! read of a file it queues a change to, the demo's script) uses these constants; what a
//! tool does is asked of the tool itself (`Tool::kind`, `Tool::read_only`), never decided
//! by its name.

/// Reads a file.
pub const READ_FILE: &str = "read_file";
/// Lists a directory.
pub const LIST_FILES: &str = "list_files";
/// Finds files by glob pattern.
pub const GLOB: &str = "glob";
/// Searches file contents.
pub const GREP: &str = "grep";
/// Maps the codebase's files and symbols.
pub const CODEBASE_OVERVIEW: &str = "codebase_overview";
/// Writes a whole file.
pub const WRITE_FILE: &str = "write_file";
/// Replaces text in a file.
pub const EDIT_FILE: &str = "edit_file";
/// Applies a patch envelope.
pub const APPLY_PATCH: &str = "apply_patch";
/// Deletes a file.
pub const DELETE_FILE: &str = "delete_file";
/// Runs a shell command.
pub const BASH: &str = "bash";
