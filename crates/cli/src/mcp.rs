//! `atto mcp …` and the MCP side of a session's setup: which servers a session runs (the
//! user's `[mcp_servers]` and `mcp.json`, and the project's `.mcp.json` once the user
//! trusts it, through `trust`'s store: asked through a notice, remembered by the file's
//! SHA-256, revocable), and the headless views `list`, `tools` and `test`.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use atto_mcp::{HubOptions, McpHub, ServerConfig};
use atto_protocol::{McpServerInfo, McpServerState};

use crate::setup::error::SetupError;
use crate::{ExitCode, Failure};
use atto_config::Config;

/// `atto mcp`: the MCP servers of this workspace, and atto as one.
#[derive(Debug, clap::Subcommand)]
#[expect(
    clippy::large_enum_variant,
    reason = "parsed once per run: serve's session flags are not worth a box"
)]
pub enum McpCommand {
    /// Each configured server: state, tool count, last error (starts them to find out).
    List {
        /// One JSON object per server instead of text.
        #[arg(long)]
        json: bool,
    },
    /// The tools of every server (or of NAME) with their annotations and danger level.
    Tools {
        /// Only this server.
        name: Option<String>,
        /// JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Start server NAME, list its tools, and call TOOL with ARGS (a JSON object) when
    /// given. Exit 0 when it works, 1 when it does not.
    Test {
        /// The server.
        name: String,
        /// A tool to call (as the server names it).
        tool: Option<String>,
        /// The call's arguments, a JSON object.
        #[arg(default_value = "{}")]
        args: String,
    },
    /// Trust this project's `.mcp.json` (its servers run programs) until it changes.
    Trust,
    /// Revoke the trust in this project's `.mcp.json`.
    Untrust,
    /// Serve atto's read-only tools (read_file, list_files, glob, grep, policy_explain)
    /// over MCP on stdin/stdout.
    #[command(
        after_help = "atto_exec's tasks run with this process's model and endpoint (--model, \
                      --provider, --base-url, --wire, --config, --profile), given before `mcp` \
                      or after `serve`: atto mcp serve --allow-exec --model M. Their mode and \
                      permission are --exec-mode and --exec-permission (--mode and --permission \
                      say the same); --yolo, --trust, resuming and budgets do not apply and are \
                      refused."
    )]
    Serve(ServeArgs),
}

/// `atto mcp serve`'s options: what the serving user allows, never the caller.
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// Also offer `atto_exec`, which runs a task with `atto exec` in this workspace.
    #[arg(long)]
    pub allow_exec: bool,
    /// The permission mode `atto_exec` tasks run with [default: interactive].
    #[arg(long, requires = "allow_exec")]
    pub exec_permission: Option<String>,
    /// The agent mode `atto_exec` tasks run in (build, plan, review) [default: plan].
    #[arg(long, requires = "allow_exec")]
    pub exec_mode: Option<String>,
    /// Seconds one `atto_exec` task may run.
    #[arg(long, default_value_t = 600, requires = "allow_exec")]
    pub exec_timeout: u64,
    /// The session flags, given after `serve` (they may also come before `mcp`).
    #[command(flatten)]
    pub session: crate::GlobalArgs,
}

/// Runs `atto mcp serve` until the client goes away. The global session flags (model,
/// base URL, wire) are handed to `atto_exec`'s runs.
pub fn serve(
    args: &ServeArgs,
    global: &crate::GlobalArgs,
    workspace: &Path,
) -> Result<ExitCode, Failure> {
    refuse_unused(global)?;
    let exec = if args.allow_exec {
        let program = std::env::current_exe()
            .map_err(|e| Failure::usage(format!("cannot find the atto binary: {e}")))?;
        let permission = one_of(
            "permission",
            args.exec_permission.as_deref(),
            global.permission.as_deref(),
        )?
        .unwrap_or("interactive")
        .to_owned();
        let mode = one_of(
            "mode",
            args.exec_mode.as_deref(),
            global.mode.map(|(m, _)| m.as_str()),
        )?
        .unwrap_or("plan")
        .to_owned();
        atto_policy::gate::parse_permission(&permission).map_err(Failure::usage)?;
        atto_policy::gate::parse_agent_mode(&mode).map_err(Failure::usage)?;
        let mut flags: Vec<String> = vec![
            "exec".into(),
            "--permission".into(),
            permission,
            "--mode".into(),
            mode,
            // Nobody is there to answer a question: what would ask is refused.
            "--on-ask".into(),
            "deny".into(),
            // Events, so the caller learns of changes queued for approval.
            "--output-format".into(),
            "stream-json".into(),
        ];
        // The model and endpoint of this process; never its permission or trust.
        for (name, value) in [
            ("provider", global.provider.clone()),
            ("base-url", global.base_url.clone()),
            ("wire", global.wire.map(|w| w.to_string())),
            (
                "config",
                global.config.as_ref().map(|p| p.display().to_string()),
            ),
            ("profile", global.profile.clone()),
            ("model", global.model.clone()),
        ] {
            if let Some(value) = value {
                flags.push(format!("--{name}"));
                flags.push(value);
            }
        }
        Some(atto_mcp::ExecSettings {
            program,
            args: flags,
            timeout: Duration::from_secs(args.exec_timeout),
        })
    } else {
        None
    };
    let options = atto_mcp::ServeOptions {
        workspace: workspace.to_path_buf(),
        exec,
    };
    crate::block_on(async move {
        atto_mcp::serve_stdio(options)
            .await
            .map_err(Failure::usage)?;
        Ok(ExitCode::Ok)
    })
}

/// The `--exec-NAME` value, or `--NAME` when only that was given; two different answers
/// are refused rather than one silently winning.
fn one_of<'a>(
    name: &str,
    exec: Option<&'a str>,
    session: Option<&'a str>,
) -> Result<Option<&'a str>, Failure> {
    match (exec, session) {
        (Some(a), Some(b)) if !a.eq_ignore_ascii_case(b) => Err(Failure::usage(format!(
            "--exec-{name} {a} and --{name} {b} disagree; give one (--exec-{name} is the \
             {name} atto_exec's tasks run with)"
        ))),
        (a, b) => Ok(a.or(b)),
    }
}

/// Refuses the session flags `atto mcp serve` cannot apply: a served task never takes
/// trust, yolo, a session to resume or a budget from the command line, and saying
/// nothing would let the user believe it did.
fn refuse_unused(global: &crate::GlobalArgs) -> Result<(), Failure> {
    let given = [
        ("--yolo", global.yolo),
        ("--trust", global.trust),
        ("--resume", global.resume.is_some()),
        ("--continue", global.continue_latest),
        ("--max-budget-tokens", global.max_budget_tokens.is_some()),
        ("--max-budget-usd", global.max_budget_usd.is_some()),
        ("--max-subagents", global.max_subagents.is_some()),
    ];
    let unused: Vec<&str> = given
        .iter()
        .filter(|(_, on)| *on)
        .map(|(flag, _)| *flag)
        .collect();
    if unused.is_empty() {
        return Ok(());
    }
    Err(Failure::usage(format!(
        "atto mcp serve does not apply {}: atto_exec's tasks run with --exec-permission \
         and --exec-mode (e.g. atto mcp serve --allow-exec --exec-permission auto-safe), \
         and take the model and endpoint flags; nothing was served",
        unused.join(", ")
    )))
}

/// The servers a session in `workspace` runs, and what to tell the user at start.
pub fn hub_options(
    config: &Config,
    workspace: &Path,
) -> Result<(HubOptions, Vec<String>), Failure> {
    let mut servers: Vec<ServerConfig> = Vec::new();
    let mut notices = Vec::new();
    let add = |found: Vec<ServerConfig>, servers: &mut Vec<ServerConfig>| {
        for server in found {
            // A later source does not replace a server of the same name: the user's own
            // config wins over a project's file.
            if !servers.iter().any(|s| s.name == server.name) {
                servers.push(server);
            }
        }
    };
    let from_config = atto_mcp::from_tables(&config.mcp_servers, "config.toml")
        .map_err(|e| Failure::usage(e.to_string()))?;
    add(from_config, &mut servers);
    if let Some(path) = user_mcp_json().filter(|p| p.exists()) {
        let found = atto_mcp::from_mcp_json(&path, &path.display().to_string())
            .map_err(|e| Failure::usage(e.to_string()))?;
        add(found, &mut servers);
    }
    let mut untrusted = Vec::new();
    let project = workspace.join(".mcp.json");
    if let Ok(text) = std::fs::read_to_string(&project) {
        match atto_mcp::parse_mcp_json(&text, &project, ".mcp.json (project)") {
            Err(e) => notices.push(format!("MCP: {e}; its servers were not started")),
            Ok(found) => {
                let found: Vec<ServerConfig> = found
                    .into_iter()
                    .filter(|s| !servers.iter().any(|u| u.name == s.name))
                    .collect();
                if crate::trust::is_trusted(&project, text.as_bytes()) {
                    let (pinned, refused) = crate::trust::mcp_files::pin(found, workspace);
                    servers.extend(pinned);
                    for (server, why) in refused {
                        notices.push(format!("MCP server {}: {why}", server.name));
                        untrusted.push((server, why));
                    }
                } else if !found.is_empty() {
                    let names: Vec<&str> = found.iter().map(|s| s.name.as_str()).collect();
                    notices.push(format!(
                        "this project's .mcp.json defines MCP servers ({}) that run programs; \
                         they were not started. Trust it with `atto mcp trust` (revoke with \
                         `atto mcp untrust`).",
                        names.join(", ")
                    ));
                    let why = "the project's .mcp.json is not trusted (atto mcp trust)";
                    untrusted.extend(found.into_iter().map(|s| (s, why.to_owned())));
                }
            }
        }
    }
    let log_dir = data_dir()
        .map(|d| d.join("mcp-logs"))
        .unwrap_or_else(|| std::env::temp_dir().join("atto-mcp-logs"));
    Ok((
        HubOptions {
            servers,
            untrusted,
            workspace: workspace.to_path_buf(),
            log_dir,
        },
        notices,
    ))
}

/// A started hub for a session, or `None` when no server is configured.
pub fn start_hub(options: HubOptions) -> Option<Arc<McpHub>> {
    if options.servers.is_empty() && options.untrusted.is_empty() {
        return None;
    }
    let hub = Arc::new(McpHub::new(options));
    hub.start();
    Some(hub)
}

/// The servers' permission lists as grants (config rules, like `[permissions]`).
pub fn grants(hub: &McpHub) -> Result<Vec<atto_policy::gate::Grant>, SetupError> {
    hub.rules()
        .into_iter()
        .map(|(action, text, origin)| crate::permissions::config_grant(action, &text, origin))
        .collect()
}

fn user_mcp_json() -> Option<PathBuf> {
    atto_config::default_path().and_then(|p| p.parent().map(|d| d.join("mcp.json")))
}

fn data_dir() -> Option<PathBuf> {
    atto_store::default_path()
        .ok()
        .and_then(|p| p.parent().map(Path::to_path_buf))
}

/// Runs `atto mcp …` (not `serve`).
pub fn run(command: McpCommand, config: &Config, workspace: &Path) -> Result<ExitCode, Failure> {
    match command {
        McpCommand::Trust => trust_project(workspace),
        McpCommand::Untrust => untrust_project(workspace),
        McpCommand::Serve(_) => Err(Failure::usage("atto mcp serve is started by main")),
        McpCommand::List { json } => views(config, workspace, None, |servers| {
            list_servers(servers, json)
        }),
        McpCommand::Tools { name, json } => views(config, workspace, name.as_deref(), |servers| {
            list_tools(servers, json)
        }),
        McpCommand::Test { name, tool, args } => test(config, workspace, &name, tool, &args),
    }
}

/// `atto mcp trust`: the project's `.mcp.json` and the files its servers run.
fn trust_project(workspace: &Path) -> Result<ExitCode, Failure> {
    let path = workspace.join(".mcp.json");
    let text = std::fs::read_to_string(&path).map_err(|e| {
        Failure::usage(format!(
            "no project MCP config to trust at {}: {e}",
            path.display()
        ))
    })?;
    let servers = atto_mcp::parse_mcp_json(&text, &path, ".mcp.json (project)")
        .map_err(|e| Failure::usage(e.to_string()))?;
    let files = crate::trust::mcp_files::trust(&path, &text, &servers, workspace)?;
    println!("trusted {} (until it changes):", path.display());
    for server in servers {
        println!("  {}: {}", server.name, describe(&server));
    }
    for file in files {
        println!("  and the file its servers run: {}", file.display());
    }
    Ok(ExitCode::Ok)
}

/// `atto mcp untrust`.
fn untrust_project(workspace: &Path) -> Result<ExitCode, Failure> {
    let path = workspace.join(".mcp.json");
    let mut store = crate::trust::Store::open()
        .ok_or_else(|| Failure::usage("no data directory (set ATTO_HOME)"))?;
    if !store.untrust(&path)? {
        println!("{} was not trusted", path.display());
        return Ok(ExitCode::Ok);
    }
    println!("no longer trusted: {}", path.display());
    Ok(ExitCode::Ok)
}

/// `atto mcp list`: a line (or a JSON object) per server; a server that is down fails the
/// listing, so a script can tell.
fn list_servers(servers: &[McpServerInfo], json: bool) -> ExitCode {
    for s in servers {
        if json {
            println!("{}", serde_json::to_string(s).unwrap_or_default());
        } else {
            println!(
                "{}  {}  {} tools  {}  {}{}",
                s.name,
                s.state.as_str(),
                s.tools.len(),
                s.transport,
                s.origin,
                s.last_error
                    .as_deref()
                    .map(|e| format!("  error: {e}"))
                    .unwrap_or_default()
            );
        }
    }
    let down: Vec<&str> = servers
        .iter()
        .filter(|s| s.state == McpServerState::Down)
        .map(|s| s.name.as_str())
        .collect();
    if down.is_empty() {
        ExitCode::Ok
    } else {
        eprintln!(
            "atto: down: {} (see the errors above; atto mcp test NAME tries one again)",
            down.join(", ")
        );
        ExitCode::Failed
    }
}

/// `atto mcp tools`: each server's tools with their danger level and annotations.
fn list_tools(servers: &[McpServerInfo], json: bool) -> ExitCode {
    for s in servers {
        if json {
            println!("{}", serde_json::to_string(s).unwrap_or_default());
            continue;
        }
        println!("{} ({}):", s.name, s.state.as_str());
        if let Some(e) = &s.last_error {
            println!("  error: {e}");
        }
        for t in &s.tools {
            println!(
                "  {}  {}{}  {}",
                t.name,
                t.danger.as_str(),
                if t.read_only { " read-only" } else { "" },
                t.annotations.join(" ")
            );
        }
    }
    ExitCode::Ok
}

fn describe(server: &ServerConfig) -> String {
    match &server.transport {
        atto_mcp::Transport::Stdio { command, args, .. } => {
            format!("{command} {}", args.join(" "))
        }
        atto_mcp::Transport::Http { url, .. } => url.clone(),
    }
}

/// Starts the servers (only `only` when given), waits for them to settle, and shows them.
fn views(
    config: &Config,
    workspace: &Path,
    only: Option<&str>,
    show: impl FnOnce(&[McpServerInfo]) -> ExitCode,
) -> Result<ExitCode, Failure> {
    let (mut options, notices) = hub_options(config, workspace)?;
    for notice in notices {
        eprintln!("atto: {notice}");
    }
    if let Some(only) = only {
        options.servers.retain(|s| s.name == only);
        options.untrusted.retain(|(s, _)| s.name == only);
        if options.servers.is_empty() && options.untrusted.is_empty() {
            return Err(Failure::usage(format!(
                "no MCP server named '{only}' is configured"
            )));
        }
    }
    crate::block_on(async move {
        let hub = McpHub::new(options);
        hub.start();
        // One line per server as it comes up or fails: a slow one's start-up timeout is
        // not spent in silence.
        hub.settle_each(&atto_tools::CancellationToken::new(), |s| {
            eprintln!(
                "atto: {}: {}{}",
                s.name,
                s.state.as_str(),
                s.last_error
                    .as_deref()
                    .map(|e| format!(" ({e})"))
                    .unwrap_or_default()
            );
        })
        .await;
        let servers = hub.info();
        hub.shutdown();
        Ok(show(&servers))
    })
}

fn test(
    config: &Config,
    workspace: &Path,
    name: &str,
    tool: Option<String>,
    args: &str,
) -> Result<ExitCode, Failure> {
    let args: serde_json::Value = serde_json::from_str(args)
        .map_err(|e| Failure::usage(format!("ARGS must be a JSON object: {e}")))?;
    let (mut options, _) = hub_options(config, workspace)?;
    options.servers.retain(|s| s.name == name);
    if options.servers.is_empty() {
        return Err(Failure::usage(format!(
            "no MCP server named '{name}' is configured{}",
            if options.untrusted.iter().any(|(s, _)| s.name == name) {
                " and trusted (atto mcp trust)"
            } else {
                ""
            }
        )));
    }
    let name = name.to_owned();
    crate::block_on(async move {
        let hub = McpHub::new(options);
        let cancel = atto_tools::CancellationToken::new();
        let ctrl_c = cancel.clone();
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                ctrl_c.cancel();
            }
        });
        hub.start();
        hub.settle(&cancel).await;
        let Some(info) = hub.info().into_iter().next() else {
            return Ok(ExitCode::Failed);
        };
        if info.state != McpServerState::Ready {
            println!(
                "{name}: {} ({})",
                info.state.as_str(),
                info.last_error.as_deref().unwrap_or("no error given")
            );
            return Ok(ExitCode::Failed);
        }
        println!("{name}: ready, {} tools", info.tools.len());
        let code = match tool {
            None => ExitCode::Ok,
            Some(tool) => call_tool(&hub, &name, &tool, args, &cancel).await,
        };
        hub.shutdown();
        Ok(code)
    })
}

/// `atto mcp test NAME TOOL ARGS`: one call, its answer on stdout, its time on stderr.
async fn call_tool(
    hub: &McpHub,
    name: &str,
    tool: &str,
    args: serde_json::Value,
    cancel: &atto_tools::CancellationToken,
) -> ExitCode {
    let started = std::time::Instant::now();
    match tokio::time::timeout(Duration::from_secs(600), hub.call(name, tool, args, cancel)).await {
        Ok(Ok((text, is_error))) => {
            println!("{text}");
            eprintln!(
                "atto: {tool} answered in {} ms{}",
                started.elapsed().as_millis(),
                if is_error {
                    " (flagged as an error)"
                } else {
                    ""
                }
            );
            if is_error {
                ExitCode::Failed
            } else {
                ExitCode::Ok
            }
        }
        Ok(Err(message)) => {
            println!("{name}: {message}");
            ExitCode::Failed
        }
        Err(_) => {
            println!("{name}: {tool} did not answer within 600s");
            ExitCode::Failed
        }
    }
}
