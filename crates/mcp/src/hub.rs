//! The MCP servers of one atto process: started together in the background (never
//! before the first model request is sent), offered to sessions as a `ToolSource`, shut
//! down (process groups killed) when the hub is dropped.
//!
//! Context budget: a server's tools join the model's tool list directly only when their
//! schemas fit in the room the session has left under its first-request budget; the
//! others are deferred and found through `mcp_tool_search`. Either way tools are only
//! ever appended, so the prefix the provider cached stays valid.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use atto_protocol::{Event, McpServerInfo};
use atto_tools::{BoxFuture, CancellationToken, Tool, ToolSource};
use tokio::sync::mpsc;

use crate::config::ServerConfig;
use crate::naming;
use crate::server::{CallError, Server, ToolEntry};
use crate::tool::{McpTool, SEARCH_TOOL, SearchTool, unlisted};

/// What the hub is made of.
#[derive(Debug, Clone)]
pub struct HubOptions {
    /// Servers to run (those with `enabled = false` are listed, not started).
    pub servers: Vec<ServerConfig>,
    /// Servers configured by a project the user has not trusted: listed as disabled,
    /// with `why` as their error, never started.
    pub untrusted: Vec<(ServerConfig, String)>,
    /// Where stdio servers run unless their `cwd` says otherwise.
    pub workspace: PathBuf,
    /// Where each stdio server's stderr goes (`NAME.log`).
    pub log_dir: PathBuf,
}

/// The MCP servers of this process.
pub struct McpHub {
    inner: Arc<HubInner>,
}

/// What the hub shares with its search tool.
pub(crate) struct HubInner {
    servers: Vec<Arc<Server>>,
    events: Mutex<Option<mpsc::UnboundedReceiver<Event>>>,
    adopted: Mutex<Adopted>,
}

/// The tools offered so far, in the order they were offered.
#[derive(Default)]
struct Adopted {
    tools: Vec<Arc<dyn Tool>>,
    names: HashSet<String>,
    /// Servers whose tools were judged against the budget (direct or deferred).
    decided: HashSet<String>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl McpHub {
    /// A hub for `options`; nothing starts until [`Self::start`].
    pub fn new(options: HubOptions) -> Self {
        let (sender, receiver) = mpsc::unbounded_channel();
        let mut servers: Vec<Arc<Server>> = options
            .servers
            .into_iter()
            .map(|config| {
                Server::new(
                    config,
                    options.workspace.clone(),
                    options.log_dir.clone(),
                    sender.clone(),
                    None,
                )
            })
            .collect();
        for (config, why) in options.untrusted {
            servers.push(Server::new(
                config,
                options.workspace.clone(),
                options.log_dir.clone(),
                sender.clone(),
                Some(why),
            ));
        }
        Self {
            inner: Arc::new(HubInner {
                servers,
                events: Mutex::new(Some(receiver)),
                adopted: Mutex::new(Adopted::default()),
            }),
        }
    }

    /// Starts every enabled server in the background; returns at once. Needs a tokio
    /// runtime.
    pub fn start(&self) {
        for server in &self.inner.servers {
            server.ensure_started();
        }
    }

    /// Whether any server may run (so the search tool is worth offering).
    pub fn has_servers(&self) -> bool {
        self.inner.servers.iter().any(|s| !s.is_disabled())
    }

    /// The `mcp_tool_search` tool, when there is a server to search.
    pub fn search_tool(&self) -> Option<Arc<dyn Tool>> {
        let names: Vec<&str> = self
            .inner
            .servers
            .iter()
            .filter(|s| !s.is_disabled())
            .map(|s| s.config.name.as_str())
            .collect();
        if names.is_empty() {
            return None;
        }
        Some(Arc::new(SearchTool {
            hub: Arc::downgrade(&self.inner),
            description: format!(
                "Find tools of the MCP servers ({}) by words of their name or purpose; returns \
                 their parameters and makes them callable.",
                names.join(", ")
            ),
        }))
    }

    /// Permission rules the servers' config gives (`tools.permissions`), as
    /// `(action, rule, origin)` with the action `allow`, `ask` or `deny`.
    pub fn rules(&self) -> Vec<(&'static str, String, String)> {
        let mut out = Vec::new();
        for server in &self.inner.servers {
            let p = &server.config.tools.permissions;
            let origin = format!(
                "MCP server {} ({})",
                server.config.name, server.config.origin
            );
            for (action, list) in [("allow", &p.allow), ("ask", &p.ask), ("deny", &p.deny)] {
                for tool in list {
                    out.push((
                        action,
                        format!("{}{}__{tool}", naming::PREFIX, server.config.name),
                        origin.clone(),
                    ));
                }
            }
        }
        out
    }

    /// Waits until every enabled server is up or down (each within its start-up bound).
    pub async fn settle(&self, cancel: &CancellationToken) {
        self.inner.settle(cancel).await;
    }

    /// Like [`Self::settle`], and hands each enabled server to `settled` the moment it is
    /// up or down, in the order they settle: a slow server does not hide the others.
    pub async fn settle_each(
        &self,
        cancel: &CancellationToken,
        mut settled: impl FnMut(&McpServerInfo),
    ) {
        use futures_util::StreamExt as _;
        let mut waits: futures_util::stream::FuturesUnordered<_> = self
            .inner
            .servers
            .iter()
            .filter(|s| !s.is_disabled())
            .map(|s| async move {
                let _ = s.ready(cancel).await;
                s
            })
            .collect();
        while let Some(server) = waits.next().await {
            let info = {
                let adopted = lock(&self.inner.adopted);
                server.info(&|name| adopted.names.contains(name))
            };
            settled(&info);
        }
    }

    /// Every server, as `/mcp` shows it.
    pub fn info(&self) -> Vec<McpServerInfo> {
        self.inner.info()
    }

    /// Calls `tool` (as the server names it) of `server` directly, bypassing the model
    /// (`atto mcp test`). The text, or one line on why not.
    pub async fn call(
        &self,
        server: &str,
        tool: &str,
        args: serde_json::Value,
        cancel: &CancellationToken,
    ) -> Result<(String, bool), String> {
        let Some(server) = self.inner.servers.iter().find(|s| s.config.name == server) else {
            return Err(format!("no MCP server named '{server}' is configured"));
        };
        match server.call(tool, args, cancel).await {
            Ok(result) => Ok(crate::content::render(&result)),
            Err(CallError::Cancelled) => Err("cancelled".to_owned()),
            Err(CallError::Failed(message)) => Err(message),
        }
    }

    /// Stops every server and kills its processes.
    pub fn shutdown(&self) {
        self.inner.shutdown();
    }
}

impl Drop for McpHub {
    fn drop(&mut self) {
        self.inner.shutdown();
    }
}

impl HubInner {
    fn server_for(&self, name: &str) -> Option<&Arc<Server>> {
        let server = naming::server_of(name, self.servers.iter().map(|s| s.config.name.as_str()))?;
        self.servers.iter().find(|s| s.config.name == server)
    }

    async fn settle(&self, cancel: &CancellationToken) {
        let waits = self
            .servers
            .iter()
            .filter(|s| !s.is_disabled())
            .map(|s| s.ready(cancel));
        futures_util::future::join_all(waits).await;
    }

    fn info(&self) -> Vec<McpServerInfo> {
        let adopted = lock(&self.adopted);
        self.servers
            .iter()
            .map(|s| s.info(&|name| adopted.names.contains(name)))
            .collect()
    }

    fn shutdown(&self) {
        for server in &self.servers {
            server.shutdown();
        }
    }

    /// Adds `entries` of `server` to the offered tools (those not offered yet).
    fn adopt(&self, server: &Arc<Server>, entries: &[ToolEntry]) {
        let mut adopted = lock(&self.adopted);
        for entry in entries {
            if adopted.names.insert(entry.name.clone()) {
                adopted.tools.push(Arc::new(McpTool {
                    server: Arc::clone(server),
                    entry: entry.clone(),
                }));
            }
        }
    }

    /// The tools matching `query` (best first, at most `max`), adopted; plus notes on
    /// servers that could not be searched.
    pub(crate) async fn search(
        &self,
        query: &str,
        max: usize,
        cancel: &CancellationToken,
    ) -> (Vec<ToolEntry>, Vec<String>) {
        self.settle(cancel).await;
        let words: Vec<String> = query
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect();
        let mut scored: Vec<(usize, &Arc<Server>, ToolEntry)> = Vec::new();
        let mut notes = Vec::new();
        for server in &self.servers {
            if server.is_disabled() {
                continue;
            }
            if !server.is_ready() {
                let info = server.info(&|_| false);
                notes.push(format!(
                    "MCP server '{}' could not be searched: {}",
                    info.name,
                    info.last_error.as_deref().unwrap_or("it is not running")
                ));
                continue;
            }
            let server_named = words
                .iter()
                .any(|w| *w == server.config.name.to_lowercase());
            for entry in server.tools() {
                let name = entry.remote.to_lowercase();
                let description = entry.description.to_lowercase();
                let score: usize = words
                    .iter()
                    .map(|w| {
                        if name.contains(w.as_str()) {
                            3
                        } else if description.contains(w.as_str()) {
                            1
                        } else {
                            0
                        }
                    })
                    .sum::<usize>()
                    + usize::from(server_named);
                if score > 0 {
                    scored.push((score, server, entry));
                }
            }
        }
        // Best first; ties keep the servers' own order.
        scored.sort_by_key(|s| std::cmp::Reverse(s.0));
        scored.truncate(max);
        for (_, server, entry) in &scored {
            self.adopt(server, std::slice::from_ref(entry));
        }
        (scored.into_iter().map(|(_, _, e)| e).collect(), notes)
    }
}

impl ToolSource for McpHub {
    fn offered(&self, room: usize) -> Vec<Arc<dyn Tool>> {
        let inner = &self.inner;
        for server in &inner.servers {
            if !server.is_ready() || lock(&inner.adopted).decided.contains(&server.config.name) {
                continue;
            }
            let entries = server.tools();
            let bytes: usize = entries.iter().map(ToolEntry::size).sum();
            lock(&inner.adopted)
                .decided
                .insert(server.config.name.clone());
            if bytes <= room {
                inner.adopt(server, &entries);
            }
        }
        lock(&inner.adopted).tools.clone()
    }

    fn resolve<'a>(
        &'a self,
        name: &'a str,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Option<Arc<dyn Tool>>> {
        Box::pin(async move {
            if name == SEARCH_TOOL {
                return self.search_tool();
            }
            let server = self.inner.server_for(name)?;
            if !name.starts_with(naming::PREFIX) {
                return None;
            }
            let ready = server.ready(cancel).await;
            let entry = server.tools().into_iter().find(|e| e.name == name);
            let entry = match (ready, entry) {
                (_, Some(entry)) => entry,
                // Up, and it has no such tool (or the config hides it).
                (Ok(()), None) => return None,
                // Down before it ever listed its tools: the call reports why.
                (Err(_), None) => {
                    let remote = name
                        .strip_prefix(naming::PREFIX)
                        .and_then(|rest| rest.split_once("__"))
                        .map_or(name, |(_, tool)| tool);
                    unlisted(name, remote)
                }
            };
            self.inner.adopt(server, std::slice::from_ref(&entry));
            Some(Arc::new(McpTool {
                server: Arc::clone(server),
                entry,
            }) as Arc<dyn Tool>)
        })
    }

    fn claims(&self, name: &str) -> bool {
        name == SEARCH_TOOL
            || (name.starts_with(naming::PREFIX) && self.inner.server_for(name).is_some())
    }

    fn events(&self) -> Option<mpsc::UnboundedReceiver<Event>> {
        lock(&self.inner.events).take()
    }

    fn servers(&self) -> Vec<McpServerInfo> {
        self.inner.info()
    }
}
