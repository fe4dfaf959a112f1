//! `ToolRegistry`: the set of tools a session offers, in a stable order (so the tool
//! list in the prompt is byte-stable and cacheable). Which of them a mode may use is
//! policy's business, not the registry's. A call known only by its tool's name (a stored
//! history, a worker's approval request) is described by the built-in tool of that name.

use std::sync::{Arc, OnceLock};

use atto_protocol::{ToolKind, ToolSpec};

use crate::{
    ApplyPatchTool, BashTool, DeleteFileTool, EditFileTool, FileEffect, GlobTool, GrepTool,
    ListFilesTool, ReadFileTool, Tool, WriteFileTool,
};

/// What the built-in registry offers beyond the defaults.
#[derive(Debug, Clone, Default)]
pub struct BuiltinOptions {
    /// Offer `apply_patch` (after `edit_file`): for models trained on it, see
    /// [`crate::offers_apply_patch`].
    pub apply_patch: bool,
    /// Inherited environment variables bash commands see on top of the built-in
    /// allowlist, by exact name (the user's `pass_env` setting).
    pub pass_env: Vec<String>,
    /// Where `codebase_overview` keeps its index between sessions (under atto's data
    /// dir); `None` keeps it in memory only.
    pub overview_cache: Option<std::path::PathBuf>,
}

/// Tools by name, in registration order.
#[derive(Clone, Default)]
pub struct ToolRegistry {
    tools: Vec<Arc<dyn Tool>>,
}

impl std::fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

impl ToolRegistry {
    /// The default built-in tools: reads and searches first, then writes, then bash.
    /// `apply_patch` is not among them; see [`Self::builtin_with`].
    pub fn builtin() -> Self {
        Self::builtin_with(&BuiltinOptions::default())
    }

    /// The built-in tools as `options` shape them.
    pub fn builtin_with(options: &BuiltinOptions) -> Self {
        let mut registry = Self::empty();
        let mut tools: Vec<Arc<dyn Tool>> = vec![
            Arc::new(ReadFileTool),
            Arc::new(ListFilesTool),
            Arc::new(GlobTool),
            Arc::new(GrepTool),
            Arc::new(crate::overview::CodebaseOverviewTool {
                cache_dir: options.overview_cache.clone(),
            }),
            Arc::new(WriteFileTool),
            Arc::new(EditFileTool),
        ];
        if options.apply_patch {
            tools.push(Arc::new(ApplyPatchTool));
        }
        tools.push(Arc::new(DeleteFileTool));
        tools.push(Arc::new(BashTool::with_env(options.pass_env.clone())));
        for tool in tools {
            registry.register(tool);
        }
        registry
    }

    /// A registry with no tools.
    pub fn empty() -> Self {
        Self::default()
    }

    /// Adds `tool`, replacing (in place) any tool with the same name.
    pub fn register(&mut self, tool: Arc<dyn Tool>) {
        match self.tools.iter_mut().find(|t| t.name() == tool.name()) {
            Some(slot) => *slot = tool,
            None => self.tools.push(tool),
        }
    }

    /// Keeps only the tools `keep` names.
    pub fn retain(&mut self, keep: impl Fn(&str) -> bool) {
        self.tools.retain(|t| keep(t.name()));
    }

    /// The tool called `name`.
    pub fn get(&self, name: &str) -> Option<Arc<dyn Tool>> {
        self.tools.iter().find(|t| t.name() == name).cloned()
    }

    /// What to advertise to the model, in registration order.
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.tools
            .iter()
            .map(|t| ToolSpec {
                name: t.name().to_string(),
                description: t.description().to_string(),
                parameters: t.parameters(),
            })
            .collect()
    }

    /// Tool names, in registration order.
    pub fn names(&self) -> Vec<&str> {
        self.tools.iter().map(|t| t.name()).collect()
    }
}

/// Every built-in tool, `apply_patch` included, for describing a call known only by its
/// tool's name; `None` for a tool that is not built in (MCP, core's own, unknown).
pub fn builtin_tool(name: &str) -> Option<Arc<dyn Tool>> {
    static ALL: OnceLock<ToolRegistry> = OnceLock::new();
    ALL.get_or_init(|| {
        ToolRegistry::builtin_with(&BuiltinOptions {
            apply_patch: true,
            ..BuiltinOptions::default()
        })
    })
    .get(name)
}

/// The kind of a call to the tool called `name`: the built-in tool's own, `Other` for any
/// other tool.
pub fn kind_of(name: &str) -> ToolKind {
    builtin_tool(name).map_or(ToolKind::Other, |t| t.kind())
}

/// How a call to the tool called `name` changes the one file it names, when plan mode can
/// predict it: the built-in tool's own answer, `None` for any other tool.
pub fn file_effect_of(name: &str) -> Option<FileEffect> {
    builtin_tool(name).and_then(|t| t.file_effect())
}

/// The paths a call to the tool called `name` names: the built-in tool's own reading,
/// the `path` argument for any other tool; none when they cannot be read.
pub fn paths_of(name: &str, args: &serde_json::Value) -> Vec<String> {
    match builtin_tool(name) {
        Some(tool) => tool.paths(args).unwrap_or_default(),
        None => crate::path_arg(args),
    }
}

/// The one-line title of a call to the tool called `name`: the built-in tool's own, the
/// name itself for any other tool.
pub fn title_of(name: &str, args: &serde_json::Value) -> String {
    builtin_tool(name).map_or_else(|| name.to_owned(), |t| t.title(args))
}
