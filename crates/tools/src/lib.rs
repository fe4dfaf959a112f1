//! Owns what a tool is and how it describes its calls (`Tool`), the built-in tools, their names and their registry.
//! Never decides whether a call may run, prompts the user or checks a mode: core's orchestrator asks `atto-policy` first.
//!
//! The built-in tools: file reading and editing (including the `apply_patch` envelope),
//! search, the codebase overview, bash. A tool says what kind of work it does, whether a
//! call only reads, what it acts on, its one-line title, exactly what it would do (for an
//! approval) and the paths it names, so other crates ask the tool instead of keeping lists
//! of tool names: a new built-in tool is its own file plus one line in
//! [`ToolRegistry::builtin_with`] (and a constant in [`names`] if another crate must name
//! it).
//!
//! Also owns what a tool gets (`ToolContext`) and returns (`ToolOutput`, `ToolError`),
//! and the workspace path boundary (`beneath`: paths resolved by the kernel beneath one
//! handle of the workspace, and acted on through that handle). Tools never truncate their
//! result for the context window beyond their own documented caps; the engine applies its
//! own limit.

mod bash;
pub mod beneath;
mod error;
mod fs_tools;
pub mod names;
mod overview;
mod patch;
pub mod paths;
mod registry;
mod search;
mod source;
mod support;

use std::path::PathBuf;
use std::sync::Arc;

use atto_protocol::{DangerLevel, ToolKind};
/// Entry points for the fuzz targets under `fuzz/`: the edit matcher `edit_file` runs on
/// the model's `old_string`, reachable without a workspace. Not an API for other crates.
#[doc(hidden)]
pub mod fuzzing {
    /// `edit_file`'s matching: the text after replacing `old` with `new` and how many
    /// places were replaced, or the reason shown to the model.
    pub fn edit(
        text: &str,
        old: &str,
        new: &str,
        replace_all: bool,
    ) -> Result<(String, usize), String> {
        crate::fs_tools::matching::apply(text, old, new, replace_all)
            .map(|a| (a.text, a.replacements))
    }
}

pub use tokio_util::sync::CancellationToken;

pub use atto_sandbox::{Sandbox, SandboxStatus};
pub use bash::BashTool;
pub use error::{Fallback, ToolError};
pub use fs_tools::{DeleteFileTool, EditFileTool, ReadFileTool, WriteFileTool, preview_edit};
pub use overview::{
    CodebaseOverviewTool, DEFAULT_MAX_BYTES as OVERVIEW_DEFAULT_BYTES, overview, start_map,
};
pub use patch::{
    ApplyPatchTool, FileChange, PatchChunk, PatchOp, PatchPlan, offers_apply_patch, parse_patch,
    patch_paths, preview_patch,
};
pub use registry::{
    BuiltinOptions, ToolRegistry, builtin_tool, file_effect_of, kind_of, paths_of, title_of,
};
pub use search::{GlobTool, GrepTool, ListFilesTool};
pub use source::ToolSource;

/// A boxed, sendable future, as returned by [`Tool::run`].
pub type BoxFuture<'a, T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>>;

/// What a tool call runs against.
#[derive(Debug, Clone)]
pub struct ToolContext {
    /// Canonical absolute workspace root; every path argument must resolve inside it.
    pub workspace: PathBuf,
    /// Cancelled on Ctrl-C or turn abort; tools stop promptly when it fires.
    pub cancel: CancellationToken,
    /// The OS sandbox commands run under; `None` runs them unsandboxed (yolo mode, or a
    /// re-run the user approved).
    pub sandbox: Option<Arc<Sandbox>>,
    /// Trust mode: path arguments may lead outside the workspace.
    pub trust: bool,
    /// Where the gate judged this call's paths to lead, as the kernel resolved them when
    /// it decided (workspace-relative, absolute outside). A file tool that now resolves
    /// a path anywhere else (a link swapped since) refuses instead of acting there.
    /// `None` when no gate judged the call.
    pub judged_paths: Option<Vec<String>>,
    /// What the session is working on, for tools that rank by it (`codebase_overview`):
    /// the files changed this session and the files the calls may change (a plan step's,
    /// a subagent's). Empty when there is nothing to go by.
    pub focus: String,
}

impl ToolContext {
    /// A context for `workspace` with a fresh cancellation token and no sandbox.
    pub fn new(workspace: PathBuf) -> Self {
        Self {
            workspace,
            cancel: CancellationToken::new(),
            sandbox: None,
            trust: false,
            judged_paths: None,
            focus: String::new(),
        }
    }
}

/// What a successful tool call produced.
#[derive(Debug, Clone, Default)]
pub struct ToolOutput {
    /// Text for the model.
    pub content: String,
    /// Workspace-relative paths this call wrote, created or deleted (file tools only).
    pub changed_paths: Vec<String>,
    /// Whether the command ran under the OS sandbox; `None` for tools that run none.
    pub sandbox: Option<SandboxStatus>,
    /// How the command exited, as a shell reports it (`128 + n` when killed by signal
    /// `n`); `None` for tools that run no command or when the status is unknown. Anything
    /// but `Some(0)` is a failed command, even though the call itself succeeded.
    pub exit_code: Option<i32>,
}

impl ToolOutput {
    /// Output with text only: no changed paths, no command run.
    pub fn text(content: impl Into<String>) -> Self {
        Self {
            content: content.into(),
            ..Self::default()
        }
    }
}

/// A call's `path` argument, when it has one: the paths most tools name.
pub fn path_arg(args: &serde_json::Value) -> Vec<String> {
    match args.get("path") {
        Some(serde_json::Value::String(path)) => vec![path.clone()],
        _ => Vec::new(),
    }
}

/// How a call changes the one file its `path` argument names, so plan mode can show and
/// chain a queued change without running it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileEffect {
    /// The file becomes the call's `content` argument, whatever it held.
    Write,
    /// Text in the file is replaced, as [`preview_edit`] computes it; an empty
    /// `old_string` creates a file that is not there.
    Edit,
    /// The file is removed.
    Delete,
}

/// A tool the model can call.
pub trait Tool: Send + Sync {
    /// Name the model calls it by.
    fn name(&self) -> &str;
    /// One or two sentences for the model.
    fn description(&self) -> &str;
    /// JSON Schema of the arguments (an object schema).
    fn parameters(&self) -> serde_json::Value;
    /// How dangerous the tool is in general.
    fn danger(&self) -> DangerLevel;
    /// How dangerous this particular call is: the tool's level unless its arguments
    /// make the call plainly less risky.
    fn danger_of(&self, _args: &serde_json::Value) -> DangerLevel {
        self.danger()
    }
    /// Whether this particular call may change files or other state.
    fn mutates(&self, args: &serde_json::Value) -> bool;
    /// What kind of work the tool does, for the people watching (an icon, a verb).
    fn kind(&self) -> ToolKind {
        ToolKind::Other
    }
    /// Whether this particular call only reads, so it may be approved without a person
    /// (the swarm's mailbox). Unknown is not read-only: a tool says so itself.
    fn read_only(&self, _args: &serde_json::Value) -> bool {
        false
    }
    /// What the call acts on, from its arguments: a path, a command, a pattern.
    fn target(&self, _args: &serde_json::Value) -> Option<String> {
        None
    }
    /// How a call changes the one file its `path` names, when plan mode can predict it;
    /// `None` (the default) for calls whose effect it does not predict (reads, commands,
    /// patches that name several files).
    fn file_effect(&self) -> Option<FileEffect> {
        None
    }
    /// The first string argument the schema requires that `args` lacks, described for the
    /// model (``string `path` ``): a call without it could never run.
    fn missing_argument(&self, args: &serde_json::Value) -> Option<String> {
        let schema = self.parameters();
        let required = schema.get("required")?.as_array()?;
        required
            .iter()
            .filter_map(serde_json::Value::as_str)
            .find_map(|key| {
                let kind = schema.pointer(&format!("/properties/{key}/type"));
                let is_string = kind.and_then(serde_json::Value::as_str) == Some("string");
                (is_string && !args.get(key).is_some_and(serde_json::Value::is_string))
                    .then(|| format!("string `{key}`"))
            })
    }
    /// The call in one line, for the people watching (`Edit src/a.rs`, `Run \`make\``).
    fn title(&self, _args: &serde_json::Value) -> String {
        self.name().to_owned()
    }
    /// Exactly what the call would do, for a person asked to approve it: never hidden or
    /// shortened below what they need to judge it.
    fn subject(&self, args: &serde_json::Value) -> String {
        format!("{} {args}", self.name())
    }
    /// The paths the call names, as the model wrote them, for rules and protected places
    /// (its `path` argument unless the tool knows better); the error when they cannot be
    /// read from the arguments.
    fn paths(&self, args: &serde_json::Value) -> Result<Vec<String>, ToolError> {
        Ok(path_arg(args))
    }
    /// Runs the call. Stops promptly when `ctx.cancel` fires.
    fn run<'a>(
        &'a self,
        args: serde_json::Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>>;
}
