//! Wiring a session together, top to bottom: the workspace and provider, then the
//! settings resolved once (`config::resolve`), then the store, resume, sandbox,
//! checkpoints, tools and MCP servers, and the session itself.

pub mod error;
mod resume;
mod sandbox;

use std::path::{Path, PathBuf};
use std::time::Duration;

use atto_config::Config;
use atto_core::{
    AgentHandle, SessionOptions, find_project_instructions_with, instruction_paths, spawn_session,
};
use atto_llm::{ClientOptions, ProviderChoice, ResolvedProvider};
use atto_protocol::PermissionMode;
use atto_store::SessionRef;
use atto_tools::ToolRegistry;

pub use self::error::{Retry, SetupError};
pub use self::resume::saved_messages;
pub(crate) use self::sandbox::{sandbox, sandbox_with};
use crate::GlobalArgs;
pub use crate::config::LimitFlags;
use crate::config::SettingsFlags;
use crate::permissions::{self, PermissionFlags};

/// The session-wide caps and the subagent limit from the command line.
#[derive(Debug, Clone, Copy, Default)]
pub struct BudgetFlags {
    pub max_budget_tokens: Option<u64>,
    pub max_budget_usd: Option<f64>,
    pub max_subagents: Option<u32>,
}

/// The workspace root: `--workspace`, else the nearest ancestor of the current directory
/// holding `.git`, else the current directory. Returned canonical.
pub fn workspace(flag: Option<&Path>) -> Result<(PathBuf, PathBuf), SetupError> {
    let cwd = std::env::current_dir()
        .map_err(|e| SetupError::fix(format!("cannot read the current directory: {e}")))?;
    let cwd = cwd.canonicalize().unwrap_or(cwd);
    let root = match flag {
        Some(dir) => dir.canonicalize().map_err(|e| {
            SetupError::fix(format!("workspace {} is not usable: {e}", dir.display()))
        })?,
        None => workspace_of(&cwd),
    };
    if !root.is_dir() {
        return Err(SetupError::fix(format!(
            "workspace {} is not a directory",
            root.display()
        )));
    }
    Ok((root, cwd))
}

/// The workspace of a directory: the nearest ancestor holding `.git`, else itself.
pub fn workspace_of(dir: &Path) -> PathBuf {
    dir.ancestors()
        .find(|dir| dir.join(".git").exists())
        .unwrap_or(dir)
        .to_path_buf()
}

/// Picks the provider from flags, then config, then whichever API key is set.
pub fn provider(global: &GlobalArgs, config: &Config) -> Result<ResolvedProvider, SetupError> {
    let choice = ProviderChoice {
        provider: global.provider.clone().or_else(|| config.provider.clone()),
        model: global.model.clone().or_else(|| config.model.clone()),
        base_url: global.base_url.clone().or_else(|| config.base_url.clone()),
        wire: global.wire.or(config.wire),
    };
    atto_llm::resolve(&choice, &config.providers, &|name| std::env::var(name).ok())
        .map_err(|e| SetupError::fix(e.to_string()))
}

/// Everything needed to start a session.
pub struct Launch<'a> {
    pub provider: &'a ResolvedProvider,
    pub config: &'a Config,
    pub workspace: PathBuf,
    pub cwd: PathBuf,
    pub limits: LimitFlags,
    pub permissions: PermissionFlags,
    /// A saved session to continue.
    pub resume: Option<SessionRef>,
    /// The agent mode asked for on the command line; `None`: build, or what a resumed
    /// session last ran in.
    pub mode: Option<atto_protocol::AgentMode>,
    /// Exact commands allowed to re-run without the sandbox (`--allow-unsandboxed`).
    pub unsandboxed_commands: Vec<String>,
    /// `--debug`: write the wire log.
    pub debug: bool,
    /// `--max-budget-tokens`, `--max-budget-usd`, `--max-subagents`.
    pub budget: BudgetFlags,
}

impl<'a> Launch<'a> {
    /// A new session with `global`'s flags (permissions, mode, debug, budgets), without
    /// resuming, and without the limits and unsandboxed commands only `atto exec` takes.
    pub fn of(
        global: &GlobalArgs,
        provider: &'a ResolvedProvider,
        config: &'a Config,
        workspace: PathBuf,
        cwd: PathBuf,
    ) -> Launch<'a> {
        Launch {
            provider,
            config,
            workspace,
            cwd,
            limits: LimitFlags::default(),
            permissions: global.permission_flags(),
            resume: None,
            mode: global.mode.map(|(mode, _)| mode),
            unsandboxed_commands: Vec::new(),
            debug: global.debug,
            budget: global.budget_flags(),
        }
    }
}

/// The wire log of this run, when `--debug` or `ATTO_LOG=debug` asked for one: where a
/// failed run says the details are.
static WIRE_LOG: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();

/// Where this run's wire log is, if it writes one.
pub fn wire_log_path() -> Option<&'static Path> {
    WIRE_LOG.get().map(PathBuf::as_path)
}

/// Opens the wire log under the data dir (`logs/wire-<time>-<pid>.jsonl`) when asked for.
fn wire_log(asked: bool) -> Option<std::sync::Arc<atto_llm::WireLog>> {
    let asked = asked || std::env::var("ATTO_LOG").is_ok_and(|v| v.eq_ignore_ascii_case("debug"));
    if !asked {
        return None;
    }
    let dir = atto_store::default_path().ok()?.parent()?.join("logs");
    let name = format!(
        "wire-{}-{}.jsonl",
        atto_protocol::time::utc_minute(atto_protocol::time::now_ms()).replace([' ', ':'], "-"),
        std::process::id()
    );
    let path = dir.join(name);
    let opened = std::fs::create_dir_all(&dir).and_then(|()| atto_llm::WireLog::create(&path));
    match opened {
        Ok(log) => {
            eprintln!("atto: writing every model exchange to {}", path.display());
            let _ = WIRE_LOG.set(path);
            Some(std::sync::Arc::new(log))
        }
        Err(err) => {
            eprintln!(
                "atto: warning: cannot write the debug log {} ({err})",
                path.display()
            );
            None
        }
    }
}

/// Connects the model client and starts the session.
pub fn start(launch: Launch<'_>) -> Result<(AgentHandle, String), SetupError> {
    let options = ClientOptions {
        retry: launch.config.retry_policy(),
        wire_log: wire_log(launch.debug),
        ..ClientOptions::default()
    };
    let (provider, models) = crate::models::resolve_auto(launch.provider, launch.config)?;
    let client = atto_llm::connect(&provider, options.clone())
        .map_err(|e| SetupError::fix(e.to_string()))?;
    // `/model`, routes and subagents may name another model (or provider).
    let connect = crate::models::connector(&provider, launch.config, options);
    start_connected(launch, client, Some(connect), models)
}

/// Starts the session with `client` instead of connecting to `launch.provider`: for
/// `atto plan`, whose session reviews the pending plan and never calls the model.
pub fn start_with_client(
    launch: Launch<'_>,
    client: std::sync::Arc<dyn atto_llm::ModelClient>,
) -> Result<(AgentHandle, String), SetupError> {
    start_connected(
        launch,
        client,
        None,
        atto_core::models::ModelSettings::default(),
    )
}

fn start_connected(
    launch: Launch<'_>,
    client: std::sync::Arc<dyn atto_llm::ModelClient>,
    connect: Option<atto_core::subagents::Connector>,
    mut models: atto_core::models::ModelSettings,
) -> Result<(AgentHandle, String), SetupError> {
    let settings = crate::config::resolve(
        launch.config,
        &launch.workspace,
        SettingsFlags {
            permissions: &launch.permissions,
            limits: &launch.limits,
            unsandboxed_commands: &launch.unsandboxed_commands,
        },
    )?;
    let store = session_store()?;
    let (mut grants, warnings) = permissions::grants(
        launch.config,
        &settings.project,
        store.as_ref(),
        &launch.workspace,
    )?;
    for warning in warnings {
        eprintln!("atto: warning: {warning}");
    }
    let model = client.info().model.clone();
    let begun = resume::begin(
        &launch,
        store.as_ref(),
        settings.permission,
        &model,
        &mut models,
    )?;
    let mut start_notices = begun.notices;
    let permission = begun.permission;
    let (sandbox, sandbox_off_reason) = match permission.mode {
        PermissionMode::Yolo => (None, None),
        _ => match sandbox(&launch.workspace, launch.config) {
            Ok(sandbox) => (Some(sandbox), None),
            Err(why) => (None, Some(why)),
        },
    };
    let checkpoints = checkpoints(&launch.workspace, &begun.session_id, settings.checkpoints);
    let subagents = subagent_settings(&launch, connect)?;
    let sources = sources(&launch, &model, &mut grants)?;
    start_notices.extend(sources.notices);
    let session_id = begun.session_id;
    let (thread, resume) = begun.resume.unzip();
    let handle = spawn_session(SessionOptions {
        permission,
        grants,
        store,
        sandbox,
        trust: launch.permissions.trust || permission.mode == PermissionMode::Yolo,
        protected_dirs: permissions::protected_dirs(),
        thread,
        resume,
        session_id: session_id.clone(),
        instructions: sources.instructions,
        workspace: launch.workspace,
        client,
        tools: sources.tools,
        limits: settings.limits,
        mode: begun.mode,
        checkpoints,
        planner: settings.planner,
        approval_deadline: settings.approval_deadline,
        unsandboxed_commands: settings.unsandboxed_commands,
        start_notices,
        sandbox_off_reason,
        subagents,
        models,
        learning: settings.learning,
        context: settings.context,
        external_tools: sources
            .hub
            .map(|hub| hub as std::sync::Arc<dyn atto_tools::ToolSource>),
    });
    Ok((handle, session_id))
}

/// The database of a session. Failing closed: no call runs without its audit record and
/// grants, so a busy database stops the run; an unusable one is said, and the session runs
/// without saved sessions, grants and the audit log.
fn session_store() -> Result<Option<atto_store::Store>, SetupError> {
    match permissions::open_store() {
        Ok(store) => Ok(Some(store)),
        Err(permissions::OpenFailure::Busy(err)) => Err(SetupError(
            format!(
                "{err} Nothing was run: atto does not act without its audit log. Try again \
                 in a moment (exit 75: retryable)."
            ),
            Retry::Later,
        )),
        Err(permissions::OpenFailure::Unusable(err)) => {
            eprintln!(
                "atto: warning: {err} — saved sessions, grants and the audit log are off for this run"
            );
            Ok(None)
        }
    }
}

/// What a session knows and can use besides the model: the built-in tools, the MCP
/// servers' (their rules join `grants`) and the project's instruction files.
struct Sources {
    tools: ToolRegistry,
    hub: Option<std::sync::Arc<atto_mcp::McpHub>>,
    instructions: Vec<atto_core::ProjectInstructions>,
    notices: Vec<String>,
}

fn sources(
    launch: &Launch<'_>,
    model: &str,
    grants: &mut Vec<atto_policy::gate::Grant>,
) -> Result<Sources, SetupError> {
    let mut tools = ToolRegistry::builtin_with(&atto_tools::BuiltinOptions {
        apply_patch: launch
            .config
            .apply_patch
            .unwrap_or_else(|| atto_tools::offers_apply_patch(model)),
        pass_env: launch.config.pass_env.clone(),
        overview_cache: atto_store::default_path()
            .ok()
            .and_then(|db| db.parent().map(|dir| dir.join("overview"))),
    });
    // MCP servers start in the background now; the first request does not wait for them.
    let (mcp_options, mut notices) = crate::mcp::hub_options(launch.config, &launch.workspace)
        .map_err(|f| SetupError::fix(f.message))?;
    let hub = crate::mcp::start_hub(mcp_options);
    // Instruction files a session's command wrote wait for the user (trust::instructions).
    let admission =
        crate::trust::instructions::open_window(&instruction_paths(&launch.workspace, &launch.cwd));
    let instructions = find_project_instructions_with(&launch.workspace, &launch.cwd, &|p, b| {
        admission.admits(p, b)
    });
    notices.extend(admission.notice(&launch.workspace));
    if let Some(hub) = &hub {
        grants.extend(crate::mcp::grants(hub)?);
        if let Some(search) = hub.search_tool() {
            tools.register(search);
        }
    }
    Ok(Sources {
        tools,
        hub,
        instructions,
        notices,
    })
}

/// The workspace's file checkpoints, kept in the data dir beside the database. Without
/// them the session still runs; the user is told changes cannot be undone.
fn checkpoints(
    workspace: &Path,
    session: &str,
    limits: atto_checkpoint::Limits,
) -> Option<std::sync::Arc<atto_checkpoint::Checkpoints>> {
    let opened = atto_store::default_path()
        .map_err(|e| e.to_string())
        .and_then(|db| {
            let dir = db.parent().unwrap_or(Path::new(".")).to_path_buf();
            atto_checkpoint::Checkpoints::open(&dir, workspace, limits)
                .map(with_watch_daemon)
                .map_err(|e| e.to_string())
        });
    match opened {
        // Each snapshot records the session that took it: /undo stays in its session.
        Ok(checkpoints) => Some(std::sync::Arc::new(checkpoints.for_session(session))),
        Err(err) => {
            eprintln!(
                "atto: warning: file checkpoints are off for this run ({err}); /restore and \
                 /undo cannot bring back files changed in it"
            );
            None
        }
    }
}

/// Checkpoints that start a watch daemon (`atto checkpoints-watch`) after walking a large
/// workspace, unless `ATTO_WATCH_DAEMON=0` says not to leave one running.
fn with_watch_daemon(checkpoints: atto_checkpoint::Checkpoints) -> atto_checkpoint::Checkpoints {
    let off = std::env::var("ATTO_WATCH_DAEMON").is_ok_and(|v| v == "0");
    match std::env::current_exe() {
        Ok(program) if !off => checkpoints.with_watch_daemon(atto_checkpoint::WatchDaemon {
            program,
            args: vec!["checkpoints-watch".into()],
        }),
        _ => checkpoints,
    }
}

/// Runs the watch daemon of `atto checkpoints-watch` until it stops by itself (idle for
/// `ATTO_WATCH_IDLE_SECS`, default 600, or its watcher lost track).
pub fn watch_daemon(side: &Path, workspace: &Path) -> Result<crate::ExitCode, crate::Failure> {
    let mut options = atto_checkpoint::WatchOptions::default();
    if let Some(secs) = std::env::var("ATTO_WATCH_IDLE_SECS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    {
        options.idle = std::time::Duration::from_secs(secs);
    }
    atto_checkpoint::run_watch_daemon(side, workspace, options)
        .map(|_| crate::ExitCode::Ok)
        .map_err(|e| {
            crate::Failure::usage(format!("atto: the checkpoint watcher could not start: {e}"))
        })
}

/// Subagent settings from the config and flags over the seed's defaults, with the custom
/// agents of the project and the user.
fn subagent_settings(
    launch: &Launch<'_>,
    connect: Option<atto_core::subagents::Connector>,
) -> Result<atto_core::subagents::SubagentSettings, SetupError> {
    use atto_core::subagents::{SubagentSettings, budget, defs};
    let c = &launch.config.subagents;
    let flags = launch.budget;
    let mut s = SubagentSettings::default();
    if let Some(f) = c.fraction {
        if !(f > 0.0 && f <= 1.0) {
            return Err(SetupError::fix(format!(
                "[subagents] fraction must be above 0 and at most 1, not {f}"
            )));
        }
        s.share.fraction = f;
    }
    s.share.min = c.min_tokens.unwrap_or(s.share.min);
    s.share.max = c.max_tokens.unwrap_or(s.share.max).max(s.share.min);
    s.max_iterations = c.max_iterations.unwrap_or(s.max_iterations).max(1);
    if let Some(secs) = c.timeout_secs {
        s.timeout = Duration::from_secs(secs.max(1));
    }
    s.max_depth = c.max_depth.unwrap_or(s.max_depth);
    let running = flags
        .max_subagents
        .or(c.max_running)
        .map(|n| n.clamp(1, 20));
    if let Some(n) = running {
        s.max_running = usize::try_from(n).unwrap_or(1);
    }
    let usd = flags.max_budget_usd.or(c.max_budget_usd);
    if let Some(usd) = usd
        && !(usd > 0.0 && usd.is_finite())
    {
        return Err(SetupError::fix(format!(
            "the dollar cap must be a positive number, not {usd}"
        )));
    }
    s.caps = budget::Caps {
        tokens: flags.max_budget_tokens.or(c.max_budget_tokens),
        usd,
    };
    let user_dir =
        atto_config::default_path().and_then(|p| p.parent().map(|dir| dir.join("agents")));
    let (agents, warnings) = defs::load(
        &launch.workspace,
        user_dir.as_deref(),
        &crate::trust::is_trusted,
    );
    for warning in warnings {
        eprintln!("atto: warning: {warning}");
    }
    s.agents = agents;
    s.connect = connect;
    Ok(s)
}
