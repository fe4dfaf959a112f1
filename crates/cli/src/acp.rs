//! `atto acp`: atto as an Agent Client Protocol agent on stdin/stdout, for editors. The
//! protocol work is atto-acp's; this module starts each session the client asks for
//! exactly as `atto exec` would (flags, config, provider, store, sandbox, grants).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use atto_acp::{AcpOptions, SessionStarter, StartRequest, Started, ToolFacts};
use atto_llm::ResolvedProvider;
use clap::Args;

use crate::setup::{self, Launch};
use crate::{ExitCode, Failure, GlobalArgs};
use atto_config::Config;

#[derive(Debug, Args)]
pub struct AcpArgs {
    /// The sessions' options (model, permissions, modes), also accepted here.
    #[command(flatten)]
    pub session: GlobalArgs,
}

/// Starts sessions for the ACP client with this invocation's flags and config.
struct Starter {
    global: GlobalArgs,
    config: Config,
    provider: ResolvedProvider,
}

impl SessionStarter for Starter {
    fn start(&self, request: StartRequest) -> Result<Started, String> {
        let cwd = request.cwd.canonicalize().map_err(|e| {
            format!(
                "the client's cwd {} is not usable: {e}",
                request.cwd.display()
            )
        })?;
        let workspace = setup::workspace_of(&cwd);
        allowed_workspace(&workspace, &self.config.acp_allow_workspaces)?;
        let history = match &request.resume {
            Some(id) => setup::saved_messages(&workspace, id).map_err(|e| e.0)?,
            None => Vec::new(),
        };
        // The client's MCP servers join the user's own; a server of the same name in the
        // user's config wins, as it does over a project's .mcp.json.
        let mut config = self.config.clone();
        for (name, entry) in request.mcp_servers {
            let server: atto_mcp::RawServer = serde_json::from_value(entry)
                .map_err(|e| format!("the client's MCP server '{name}' is malformed: {e}"))?;
            config.mcp_servers.entry(name).or_insert(server);
        }
        let (handle, _) = setup::start(Launch {
            resume: request.resume.map(atto_store::SessionRef::Id),
            ..Launch::of(&self.global, &self.provider, &config, workspace, cwd)
        })
        .map_err(|e| e.0)?;
        let flags = self.global.permission_flags();
        Ok(Started {
            handle,
            history,
            // As setup decides it: --trust, or yolo (by flag or as the permission mode).
            trust: flags.trust || flags.yolo || flags.permission.as_deref() == Some("yolo"),
        })
    }
}

/// Refuses a workspace that would put the whole machine or the user's home within reach of
/// every file tool and command — `/`, the home directory, or a directory holding it —
/// unless the user's own config names it (`acp_allow_workspaces`). An editor's `cwd` is
/// the client's choice, not the user's.
fn allowed_workspace(workspace: &Path, allowed: &[PathBuf]) -> Result<(), String> {
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .and_then(|h| h.canonicalize().ok());
    let broad = workspace.parent().is_none() || home.is_some_and(|h| h.starts_with(workspace));
    // Compared as the kernel resolves them, so a symlink or `..` cannot differ.
    let named = allowed
        .iter()
        .filter_map(|dir| dir.canonicalize().ok())
        .any(|dir| dir == workspace);
    if !broad || named {
        return Ok(());
    }
    Err(format!(
        "no session was started: its workspace would be {}, which holds the home directory \
         or the whole system, and every file tool and command would reach all of it. Open a \
         project directory instead, or, to allow this one, add it to acp_allow_workspaces in \
         your config (~/.config/atto/config.toml).",
        workspace.display()
    ))
}

/// What ACP shows of a call it knows only by name, answered by the built-in tools; a file's
/// old text is read beneath a handle of the workspace, so a path leading outside shows none.
struct BuiltinTools;

impl ToolFacts for BuiltinTools {
    fn kind(&self, tool: &str) -> atto_protocol::ToolKind {
        atto_tools::kind_of(tool)
    }

    fn title(&self, tool: &str, args: &serde_json::Value) -> String {
        atto_tools::title_of(tool, args)
    }

    fn paths(&self, tool: &str, args: &serde_json::Value) -> Vec<String> {
        atto_tools::paths_of(tool, args)
    }

    fn read(&self, workspace: &Path, path: &str) -> Option<String> {
        use std::io::Read as _;
        let target = atto_tools::beneath::Workspace::open(workspace)
            .ok()?
            .resolve(path)
            .ok()?;
        let mut text = String::new();
        target.open_read().ok()?.read_to_string(&mut text).ok()?;
        Some(text)
    }
}

/// Serves ACP until the client closes stdin.
pub fn run(global: &mut GlobalArgs) -> Result<ExitCode, Failure> {
    let config = crate::load_config(global)?;
    let provider = setup::provider(global, &config)?;
    let options = AcpOptions {
        approval_deadline: config.approval_deadline(),
        version: env!("CARGO_PKG_VERSION").to_owned(),
        tools: Arc::new(BuiltinTools),
    };
    let starter = Arc::new(Starter {
        global: global.clone(),
        config,
        provider,
    });
    crate::block_on(async move {
        atto_acp::serve(starter, options)
            .await
            .map(|()| ExitCode::Ok)
            .map_err(|e| Failure {
                code: ExitCode::Failed,
                message: e.to_string(),
            })
    })
}
