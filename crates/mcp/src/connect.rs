//! Opening one connection to a server: the child process (stderr to the server's log
//! file, in its own process group so it can be killed whole) or the streamable HTTP
//! endpoint, the MCP handshake and the tool list, all within the server's start-up bound.
//! Owns the client handler, which turns progress notifications into events. Does not
//! decide when to connect or what a failure means for the session (see `server`).

use std::collections::BTreeMap;
use std::fs::OpenOptions;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use atto_protocol::Event;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation, ProgressNotificationParam};
use rmcp::service::{NotificationContext, RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClientTransport, StreamableHttpClientTransportConfig,
};
use rmcp::{ClientHandler, ServiceExt as _};
use tokio::sync::mpsc;

use crate::config::{NOT_STARTED, PinnedFile, SERVER_RUNS, ServerConfig, Transport, expand_env};

/// The client side of one connection: answers the server and reports its progress.
pub(crate) struct Handler {
    server: String,
    events: mpsc::UnboundedSender<Event>,
}

impl ClientHandler for Handler {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.events.send(Event::McpProgress {
            server: self.server.clone(),
            progress: params.progress,
            total: params.total,
            message: params.message,
        });
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("atto", env!("CARGO_PKG_VERSION")),
        )
    }
}

/// A running client session with one server.
type Service = RunningService<RoleClient, Handler>;

/// A live connection and what it offers.
pub(crate) struct Connected {
    pub service: Service,
    pub tools: Vec<rmcp::model::Tool>,
    /// The child's process group, for stdio servers.
    pub group: Option<u32>,
}

/// Where a stdio server's stderr goes.
pub(crate) fn log_path(dir: &Path, server: &str) -> PathBuf {
    dir.join(format!("{server}.log"))
}

/// Connects to `config`'s server and lists its tools, within its start-up bound. `Err`
/// is one line for the user.
pub(crate) async fn connect(
    config: &ServerConfig,
    workspace: &Path,
    log_dir: &Path,
    events: mpsc::UnboundedSender<Event>,
) -> Result<Connected, String> {
    let handler = Handler {
        server: config.name.clone(),
        events,
    };
    let limit = config.startup_timeout;
    let log = log_path(log_dir, &config.name);
    let start = async {
        let (service, group) = match &config.transport {
            Transport::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                let launch = Launch {
                    command: command.clone(),
                    args: args.clone(),
                    env: env.clone(),
                    cwd: cwd.clone(),
                    workspace: workspace.to_path_buf(),
                    log: log.clone(),
                    pinned: config.pinned.clone(),
                };
                start_stdio(handler, launch).await?
            }
            Transport::Http { url, headers } => (start_http(handler, url, headers).await?, None),
        };
        let tools = service
            .peer()
            .list_all_tools()
            .await
            .map_err(|e| format!("tools/list failed ({})", one_line(&e.to_string())))?;
        Ok::<_, String>(Connected {
            service,
            tools,
            group,
        })
    };
    match tokio::time::timeout(limit, start).await {
        Ok(result) => result,
        Err(_) => Err(format!(
            "did not finish starting (handshake and tools/list) within {}s{}",
            limit.as_secs_f64(),
            match &config.transport {
                Transport::Stdio { .. } => format!(
                    "; it may have printed something that is not JSON-RPC. See its log: {}",
                    log.display()
                ),
                Transport::Http { .. } => String::new(),
            }
        )),
    }
}

/// What starting a stdio server takes, owned so that it can move to a blocking thread.
struct Launch {
    command: String,
    args: Vec<String>,
    env: BTreeMap<String, String>,
    cwd: Option<PathBuf>,
    workspace: PathBuf,
    /// Where its stderr goes.
    log: PathBuf,
    pinned: Vec<PinnedFile>,
}

impl Launch {
    /// Starts the process, once its pinned files are still what the user trusted.
    fn start(self) -> Result<(TokioChildProcess, Option<u32>), String> {
        // Checked at every start, not once at trust: a command could rewrite
        // the file between two starts.
        if let Some(why) = self
            .pinned
            .iter()
            .find_map(|p| p.changed(SERVER_RUNS, NOT_STARTED))
        {
            return Err(why);
        }
        spawn(
            &self.command,
            &self.args,
            &self.env,
            self.cwd.as_deref(),
            &self.workspace,
            &self.log,
        )
    }
}

/// Starts a stdio server and shakes hands with it; returns the service and the child's
/// process group.
async fn start_stdio(handler: Handler, launch: Launch) -> Result<(Service, Option<u32>), String> {
    let log = launch.log.clone();
    // fork/exec off the runtime's thread: a session's first request must not
    // wait behind the servers' process starts.
    let (transport, group) = tokio::task::spawn_blocking(move || launch.start())
        .await
        .map_err(|e| format!("could not start the server: {e}"))??;
    let service = handler.serve(transport).await.map_err(|e| {
        format!(
            "the MCP handshake failed ({}); see its log: {}",
            one_line(&e.to_string()),
            log.display()
        )
    })?;
    Ok((service, group))
}

/// Shakes hands with a streamable HTTP server at `url`, sending `headers` (`${VAR}`
/// read from the environment now).
async fn start_http(
    handler: Handler,
    url: &str,
    headers: &BTreeMap<String, String>,
) -> Result<Service, String> {
    let mut custom = std::collections::HashMap::new();
    for (name, value) in headers {
        let value = expand_env(value).map_err(|e| format!("header {name}: {e}"))?;
        let name =
            HeaderName::try_from(name.as_str()).map_err(|e| format!("header name {name}: {e}"))?;
        let value = HeaderValue::try_from(value).map_err(|e| format!("header {name}: {e}"))?;
        custom.insert(name, value);
    }
    // Our own client: rmcp's default one panics when it cannot be built.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| format!("could not make an HTTP client: {e}"))?;
    let transport = StreamableHttpClientTransport::with_client(
        client,
        StreamableHttpClientTransportConfig::with_uri(url).custom_headers(custom),
    );
    handler.serve(transport).await.map_err(|e| {
        format!(
            "the MCP handshake with {url} failed ({})",
            one_line(&e.to_string())
        )
    })
}

fn spawn(
    command: &str,
    args: &[String],
    env: &std::collections::BTreeMap<String, String>,
    cwd: Option<&Path>,
    workspace: &Path,
    log: &Path,
) -> Result<(TokioChildProcess, Option<u32>), String> {
    let stderr = log
        .parent()
        .map(std::fs::create_dir_all)
        .transpose()
        .and_then(|_| OpenOptions::new().create(true).append(true).open(log))
        .map_err(|e| format!("could not open its log file {}: {e}", log.display()))?;
    let mut cmd = tokio::process::Command::new(command);
    cmd.args(args)
        .current_dir(cwd.unwrap_or(workspace))
        .process_group(0)
        .kill_on_drop(true);
    for (key, value) in env {
        let value = expand_env(value).map_err(|e| format!("env {key}: {e}"))?;
        cmd.env(key, value);
    }
    let (transport, _) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::from(stderr))
        .spawn()
        .map_err(|e| format!("could not start `{command}`: {e}"))?;
    let group = transport.id();
    if let Some(group) = group {
        live_groups().insert(group);
    }
    Ok((transport, group))
}

/// The first line of `text`, at most 300 characters.
pub(crate) fn one_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or("").trim();
    match line.char_indices().nth(300) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line.to_owned(),
    }
}

/// Process groups of the stdio servers started and not yet killed, so the process can
/// end them all on its way out ([`kill_all_servers`]) even when it exits without
/// dropping the sessions that own them.
fn live_groups() -> std::sync::MutexGuard<'static, std::collections::BTreeSet<u32>> {
    static GROUPS: std::sync::Mutex<std::collections::BTreeSet<u32>> =
        std::sync::Mutex::new(std::collections::BTreeSet::new());
    GROUPS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Kills every MCP server process group this process started and has not ended.
pub fn kill_all_servers() {
    let groups: Vec<u32> = std::mem::take(&mut *live_groups()).into_iter().collect();
    for group in groups {
        signal_group(group);
    }
}

/// Kills a stdio server's whole process group (`npx` and the node it started alike).
pub(crate) fn kill_group(group: u32) {
    live_groups().remove(&group);
    signal_group(group);
}

#[expect(unsafe_code, reason = "killpg has no safe wrapper in std or tokio")]
fn signal_group(group: u32) {
    let Ok(pgid) = libc::pid_t::try_from(group) else {
        return;
    };
    if pgid <= 1 {
        return;
    }
    // SAFETY: killpg takes two integers and only sends a signal; no memory is shared.
    unsafe {
        libc::killpg(pgid, libc::SIGKILL);
    }
}
