//! Wiring a session together from flags and config: workspace, provider, client, tools.

use std::path::{Path, PathBuf};
use std::time::Duration;

use atto_core::{
    AgentHandle, Limits, SessionOptions, find_project_instructions_with, instruction_paths,
    spawn_session,
};
use atto_llm::{ClientOptions, ProviderChoice, ResolvedProvider};
use atto_protocol::PermissionMode;
use atto_sandbox::{Sandbox, SandboxConfig};
use atto_store::SessionRef;
use atto_tools::ToolRegistry;

use crate::GlobalArgs;
use crate::permissions::{self, PermissionFlags};
use atto_config::{Config, ProjectConfig};

/// A setup problem: bad flags, config or environment (exit code 2), or a shared resource
/// that is busy right now, such as the database held by another process (exit code 75).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct SetupError(pub String, pub Retry);

/// Whether running again later may succeed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retry {
    /// Fix the flags, config or environment first.
    No,
    /// Busy or unavailable for now.
    Later,
}

impl SetupError {
    /// A problem to fix before running again.
    pub fn fix(message: impl Into<String>) -> Self {
        SetupError(message.into(), Retry::No)
    }
}

/// Limits given on the command line, over the config's.
#[derive(Debug, Default, Clone)]
pub struct LimitFlags {
    pub max_rounds: Option<u32>,
    pub max_duration_secs: Option<u64>,
}

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
        None => cwd
            .ancestors()
            .find(|dir| dir.join(".git").exists())
            .unwrap_or(&cwd)
            .to_path_buf(),
    };
    if !root.is_dir() {
        return Err(SetupError::fix(format!(
            "workspace {} is not a directory",
            root.display()
        )));
    }
    Ok((root, cwd))
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
        atto_core::time::utc_minute(atto_core::time::now_ms()).replace([' ', ':'], "-"),
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
    let project =
        ProjectConfig::load(&launch.workspace).map_err(|e| SetupError::fix(e.to_string()))?;
    let mut permission = permissions::setting(&launch.permissions, launch.config, &project)?;
    let store = match permissions::open_store() {
        Ok(store) => Some(store),
        // Failing closed: no call runs without its audit record and grants.
        Err(permissions::OpenFailure::Busy(err)) => {
            return Err(SetupError(
                format!(
                    "{err} Nothing was run: atto does not act without its audit log. Try again \
                     in a moment (exit 75: retryable)."
                ),
                Retry::Later,
            ));
        }
        Err(permissions::OpenFailure::Unusable(err)) => {
            eprintln!(
                "atto: warning: {err} — saved sessions, grants and the audit log are off for this run"
            );
            None
        }
    };
    let (mut grants, warnings) =
        permissions::grants(launch.config, &project, store.as_ref(), &launch.workspace)?;
    for warning in warnings {
        eprintln!("atto: warning: {warning}");
    }
    let mut start_notices = Vec::new();
    let mut mode = launch.mode.unwrap_or(atto_protocol::AgentMode::Build);
    let (session_id, resume) = match &launch.resume {
        None => (uuid::Uuid::now_v7().to_string(), None),
        Some(which) => {
            let Some(store) = store.as_ref() else {
                return Err(SetupError::fix(
                    "cannot resume: the session database is not available (see the warning \
                     above)"
                        .to_owned(),
                ));
            };
            let saved = saved_history(store, &launch.workspace, which)?;
            let restored = restore_modes(&saved.row, launch.mode, &launch.permissions, permission);
            mode = restored.mode;
            permission = restored.permission;
            start_notices = restored.notices;
            restore_model(
                &saved.row,
                &client.info().model,
                &mut models,
                &mut start_notices,
            );
            (
                saved.row.id,
                Some((saved.row.current_thread, saved.history)),
            )
        }
    };
    let (sandbox, sandbox_off_reason) = match permission.mode {
        PermissionMode::Yolo => (None, None),
        _ => match sandbox(&launch.workspace, launch.config) {
            Ok(sandbox) => (Some(sandbox), None),
            Err(why) => (None, Some(why)),
        },
    };
    let checkpoints = checkpoints(
        &launch.workspace,
        &session_id,
        crate::config::checkpoint_limits(launch.config),
    );
    let model = client.info().model.clone();
    let subagents = subagent_settings(&launch, connect)?;
    let context = crate::config::context_settings(launch.config).map_err(SetupError::fix)?;
    let mut tools = ToolRegistry::builtin_with(&atto_tools::BuiltinOptions {
        apply_patch: launch
            .config
            .apply_patch
            .unwrap_or_else(|| atto_tools::offers_apply_patch(&model)),
        pass_env: launch.config.pass_env.clone(),
        overview_cache: atto_store::default_path()
            .ok()
            .and_then(|db| db.parent().map(|dir| dir.join("overview"))),
    });
    // MCP servers start in the background now; the first request does not wait for them.
    let (mcp_options, mcp_notices) = crate::mcp::hub_options(launch.config, &launch.workspace)
        .map_err(|f| SetupError::fix(f.message))?;
    start_notices.extend(mcp_notices);
    let hub = crate::mcp::start_hub(mcp_options);
    // Instruction files a session's command wrote wait for the user (trust::instructions).
    let admission =
        crate::trust::instructions::open_window(&instruction_paths(&launch.workspace, &launch.cwd));
    let instructions = find_project_instructions_with(&launch.workspace, &launch.cwd, &|p, b| {
        admission.admits(p, b)
    });
    start_notices.extend(admission.notice(&launch.workspace));
    if let Some(hub) = &hub {
        grants.extend(crate::mcp::grants(hub)?);
        if let Some(search) = hub.search_tool() {
            tools.register(search);
        }
    }
    let handle = spawn_session(SessionOptions {
        permission,
        grants,
        store,
        sandbox,
        trust: launch.permissions.trust || permission.mode == PermissionMode::Yolo,
        protected_dirs: permissions::protected_dirs(),
        thread: resume.as_ref().map(|(thread, _)| thread.clone()),
        resume: resume.map(|(_, history)| history),
        session_id: session_id.clone(),
        instructions,
        workspace: launch.workspace,
        client,
        tools,
        limits: limits(launch.config, &launch.limits),
        mode,
        checkpoints,
        planner: crate::config::planner_settings(launch.config),
        approval_deadline: launch.config.approval_deadline(),
        unsandboxed_commands: launch
            .config
            .unsandboxed_commands
            .iter()
            .chain(&launch.unsandboxed_commands)
            .cloned()
            .collect(),
        start_notices,
        sandbox_off_reason,
        subagents,
        models,
        learning: crate::config::learning_settings(launch.config),
        context,
        external_tools: hub.map(|hub| hub as std::sync::Arc<dyn atto_tools::ToolSource>),
    });
    Ok((handle, session_id))
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

fn limits(config: &Config, flags: &LimitFlags) -> Limits {
    let mut limits = Limits::default();
    let c = &config.limits;
    if let Some(n) = flags.max_rounds.or(c.max_rounds) {
        limits.max_rounds = n.max(1);
    }
    limits.max_tokens = c.max_tokens;
    if let Some(secs) = flags.max_duration_secs.or(c.max_duration_secs) {
        limits.max_duration = Some(Duration::from_secs(secs));
    }
    if let Some(n) = c.max_output_tokens {
        limits.max_output_tokens = n.max(1);
    }
    limits
}

/// Prepares the OS sandbox for commands: writes only in the workspace and a private
/// `/tmp`, never in the repository's git directory, `.atto/`, `.attocode/` or atto's own
/// config and data; the credential stores hidden (`[sandbox] hide`, `unhide`).
/// Where it cannot be prepared, says why once (the reason is also the session's sandbox
/// state); WARN commands then always ask.
pub(crate) fn sandbox(
    workspace: &Path,
    config: &Config,
) -> Result<std::sync::Arc<Sandbox>, String> {
    prepare_sandbox(
        workspace,
        config.allow_network.unwrap_or(false),
        config.allow_unix_sockets.unwrap_or(false),
        hidden_paths(&config.sandbox.hide, &config.sandbox.unhide),
    )
    .map_err(|err| {
        eprintln!(
            "atto: warning: commands will run without an OS sandbox ({err}); every \
             command that is not provably read-only will ask for approval"
        );
        format!("no OS sandbox: {err}")
    })
}

/// The sandbox of [`sandbox`] from the two network settings, hiding the default
/// credential stores, without a word on failure.
pub(crate) fn sandbox_with(
    workspace: &Path,
    allow_network: bool,
    allow_unix_sockets: bool,
) -> Result<std::sync::Arc<Sandbox>, String> {
    prepare_sandbox(
        workspace,
        allow_network,
        allow_unix_sockets,
        hidden_paths(&[], &[]),
    )
}

fn prepare_sandbox(
    workspace: &Path,
    allow_network: bool,
    allow_unix_sockets: bool,
    hide: Vec<PathBuf>,
) -> Result<std::sync::Arc<Sandbox>, String> {
    let config = SandboxConfig {
        writable: vec![workspace.to_path_buf()],
        allow_network,
        allow_unix_sockets,
        read_only: read_only_dirs(workspace),
        // Missing ones exist only while a command runs, so no workspace gains a
        // directory that checkpoints and plan mode promise not to add.
        create_read_only: permissions::protected_paths().uncreatable_dirs(workspace),
        hide,
        private_tmp: true,
        ..SandboxConfig::default()
    };
    Sandbox::prepare(&config)
        .map(std::sync::Arc::new)
        .map_err(|err| err.to_string())
}

/// Credential stores commands cannot read unless unhidden: a model that reads
/// `~/.ssh/id_rsa` sends it to the model provider.
const HIDDEN: &[&str] = &[
    "~/.ssh",
    "~/.aws",
    "~/.config/gcloud",
    "~/.kube",
    "~/.docker",
    "~/.gnupg",
    "~/.netrc",
    "~/.git-credentials",
    "~/.config/gh",
];

/// `~/x` under the home directory, other paths as written.
fn expand_home(path: &str) -> PathBuf {
    match (path.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ => PathBuf::from(path),
    }
}

/// The paths hidden from commands: the credential stores and atto's own config and data
/// dirs, plus `hide`, minus `unhide` (compared once `~/` is expanded).
fn hidden_paths(hide: &[String], unhide: &[String]) -> Vec<PathBuf> {
    let unhidden: Vec<PathBuf> = unhide.iter().map(|p| expand_home(p)).collect();
    HIDDEN
        .iter()
        .map(|p| expand_home(p))
        .chain(permissions::protected_dirs().into_iter().map(PathBuf::from))
        .chain(hide.iter().map(|p| expand_home(p)))
        .filter(|p| !unhidden.contains(p))
        .collect()
}

/// What sandboxed commands may never write: the protected-path list's directories (the
/// workspace's `.git`, `.atto/`, `.attocode/`, atto's config and data dirs) and, when
/// `.git` is a file — a worktree or submodule — the git directory it points to and the
/// common directory behind that. Hooks and config
/// written there would run later, outside any sandbox.
fn read_only_dirs(workspace: &Path) -> Vec<PathBuf> {
    let mut dirs = permissions::protected_paths().read_only_dirs(workspace);
    let dot_git = workspace.join(".git");
    if dot_git.is_file()
        && let Ok(text) = std::fs::read_to_string(&dot_git)
        && let Some(target) = text.lines().find_map(|l| l.strip_prefix("gitdir:"))
    {
        let git_dir = workspace.join(target.trim());
        if let Ok(common) = std::fs::read_to_string(git_dir.join("commondir")) {
            dirs.push(git_dir.join(common.trim()));
        }
        dirs.push(git_dir);
    }
    dirs
}

/// A saved session of this workspace: its row and its current thread's messages.
struct Saved {
    row: atto_store::SessionRow,
    history: Vec<atto_protocol::Message>,
}

/// The modes a resumed session starts in, and what to say about them.
struct RestoredModes {
    mode: atto_protocol::AgentMode,
    permission: atto_policy::gate::PermissionSetting,
    notices: Vec<String>,
}

/// A resume continues in the agent mode the session last ran in, and in its permission
/// mode when that was stricter than this invocation's; a flag given now wins, and either
/// way the user is told.
/// A resumed session keeps the model its `/model` pinned (or its routing), unless this
/// run was started on another model than the session's.
fn restore_model(
    row: &atto_store::SessionRow,
    now: &str,
    models: &mut atto_core::models::ModelSettings,
    notices: &mut Vec<String>,
) {
    let Some(pinned) = row.pinned_model.as_deref() else {
        return;
    };
    if row.model.as_deref().is_some_and(|m| m != now) && !models.auto {
        notices.push(format!(
            "this session had {pinned} pinned with /model; the model given now ({now}) wins"
        ));
        return;
    }
    if pinned == "auto" {
        if !models.routes.is_empty() {
            models.auto = true;
            notices.push("resumed with each turn routed by complexity (/model auto)".to_owned());
        }
    } else {
        models.pinned = Some(pinned.to_owned());
        notices.push(format!(
            "resumed with {pinned} pinned, as the session last ran (/model NAME changes it)"
        ));
    }
}

fn restore_modes(
    row: &atto_store::SessionRow,
    flag: Option<atto_protocol::AgentMode>,
    flags: &permissions::PermissionFlags,
    now: atto_policy::gate::PermissionSetting,
) -> RestoredModes {
    use atto_protocol::AgentMode;
    let mut notices = Vec::new();
    let saved = row
        .agent_mode
        .as_deref()
        .and_then(|m| atto_policy::gate::parse_agent_mode(m).ok())
        .map(|(mode, _)| mode);
    let mode = match (flag, saved) {
        (Some(flag), Some(saved)) if flag != saved => {
            notices.push(format!(
                "this session last ran in {} mode; --mode {} given now wins",
                saved.as_str(),
                flag.as_str()
            ));
            flag
        }
        (Some(flag), _) => flag,
        (None, Some(saved)) => {
            if saved != AgentMode::Build {
                notices.push(format!(
                    "resumed in {} mode, as the session last ran (/mode build to leave it)",
                    saved.as_str()
                ));
            }
            saved
        }
        (None, None) => AgentMode::Build,
    };
    let mut permission = now;
    if let Some(saved) = row
        .permission_mode
        .as_deref()
        .and_then(|p| atto_policy::gate::parse_permission(p).ok())
        && atto_policy::gate::stricter(saved.mode, now.mode) == saved.mode
        && saved.mode != now.mode
    {
        let saved_name = atto_policy::gate::permission_name(saved.mode);
        let now_name = atto_policy::gate::permission_name(now.mode);
        if flags.permission.is_some() || flags.yolo {
            notices.push(format!(
                "this session last ran with permission {saved_name}; the {now_name} given now wins"
            ));
        } else {
            notices.push(format!(
                "resumed with permission {saved_name}, as the session last ran (stricter than \
                 {now_name}; --permission changes it)"
            ));
            permission.mode = saved.mode;
        }
    }
    RestoredModes {
        mode,
        permission,
        notices,
    }
}

/// The messages of a saved session's current thread (`atto acp`'s `session/load` replays
/// them), by id or unique prefix; the session must belong to `workspace`.
pub fn saved_messages(
    workspace: &Path,
    id: &str,
) -> Result<Vec<atto_protocol::Message>, SetupError> {
    let store = permissions::open_store().map_err(|e| match e {
        permissions::OpenFailure::Busy(m) => SetupError(m, Retry::Later),
        permissions::OpenFailure::Unusable(m) => SetupError::fix(format!(
            "cannot load session {id}: the session database is not available ({m})"
        )),
    })?;
    saved_history(&store, workspace, &SessionRef::Id(id.to_owned())).map(|saved| saved.history)
}

/// A saved session of this workspace, with its current thread's messages.
fn saved_history(
    store: &atto_store::Store,
    workspace: &Path,
    which: &SessionRef,
) -> Result<Saved, SetupError> {
    let here = workspace.display().to_string();
    let row = store
        .find_session_blocking(&here, which)
        .map_err(|e| SetupError::fix(e.to_string()))?;
    if row.workspace != here {
        return Err(SetupError::fix(format!(
            "session {} belongs to {}; run atto there to resume it",
            row.id, row.workspace
        )));
    }
    let bodies = store
        .thread_history_blocking(&row.current_thread)
        .map_err(|e| SetupError::fix(e.to_string()))?;
    let mut history = Vec::with_capacity(bodies.len());
    for (n, body) in bodies.iter().enumerate() {
        let message = serde_json::from_str(body).map_err(|e| {
            SetupError::fix(format!(
                "message {} of session {} cannot be read ({e}); the session was not resumed",
                n + 1,
                row.id
            ))
        })?;
        history.push(message);
    }
    Ok(Saved { row, history })
}
