//! MCP server configuration: `[mcp_servers.NAME]` tables of atto's `config.toml` and the
//! `mcpServers` object of the `.mcp.json` files other agents use, read into one
//! [`ServerConfig`] each. Owns parsing and validation (one-line errors naming the server);
//! does not decide whether a project's file is trusted (the CLI asks and remembers that).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

/// How long a server may take to start and list its tools, unless configured.
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(30);
/// How long one tool call may run, unless configured.
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(120);

/// A configuration that cannot be used; the message names the server and the problem.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// The file is not valid TOML or JSON of the expected shape.
    #[error("{file}: {problem}")]
    Malformed {
        /// The file, as given.
        file: String,
        /// What the parser said.
        problem: String,
    },
    /// One server's entry is unusable.
    #[error("MCP server '{server}': {problem}")]
    Server {
        /// The configured name.
        server: String,
        /// What is wrong.
        problem: String,
    },
}

/// How atto reaches a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    /// A child process speaking JSON-RPC on stdin/stdout.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Extra environment variables.
        env: BTreeMap<String, String>,
        /// Working directory; `None`: the workspace.
        cwd: Option<PathBuf>,
    },
    /// Streamable HTTP.
    Http {
        /// The endpoint.
        url: String,
        /// Headers, with `${VAR}` read from the environment when the server starts.
        headers: BTreeMap<String, String>,
    },
}

impl Transport {
    /// `stdio` or `http`.
    pub fn kind(&self) -> &'static str {
        match self {
            Transport::Stdio { .. } => "stdio",
            Transport::Http { .. } => "http",
        }
    }
}

/// What the user says about a server's tools, beyond what the server claims.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolsConfig {
    /// Only these tools are offered (exact names as the server spells them); empty: all.
    #[serde(default)]
    pub allow: Vec<String>,
    /// These tools are never offered.
    #[serde(default)]
    pub deny: Vec<String>,
    /// Tools the user says change things, whatever their `readOnlyHint` claims.
    #[serde(default)]
    pub writes: Vec<String>,
    /// Whether `readOnlyHint` is believed at all (default: yes). `false` treats every
    /// tool of the server as one that may write.
    pub trust_annotations: Option<bool>,
    /// Permission rules for this server's tools: `allow`, `ask` and `deny` lists of tool
    /// names (wildcards allowed), as the `[permissions]` table takes them.
    #[serde(default)]
    pub permissions: PermissionLists,
}

/// Allow / ask / deny lists of permission rules: a server's tool names here, `tool` or
/// `tool(pattern)` in the config's `[permissions]` table (which reads this same shape).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PermissionLists {
    /// Run without asking.
    #[serde(default)]
    pub allow: Vec<String>,
    /// Always ask.
    #[serde(default)]
    pub ask: Vec<String>,
    /// Never run.
    #[serde(default)]
    pub deny: Vec<String>,
}

/// One configured server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    /// The name tools are prefixed with (`mcp__NAME__tool`).
    pub name: String,
    /// How to reach it.
    pub transport: Transport,
    /// `false` keeps it configured but not started.
    pub enabled: bool,
    /// Bound on start-up (process start, `initialize`, `tools/list`).
    pub startup_timeout: Duration,
    /// Bound on one tool call.
    pub tool_timeout: Duration,
    /// Which tools are offered and how they are judged.
    pub tools: ToolsConfig,
    /// Where it was configured, for `/mcp` and messages.
    pub origin: String,
    /// Workspace files its command runs, pinned to the content the user trusted (set by
    /// the CLI once it checked that trust; empty for the user's own servers).
    pub pinned: Vec<PinnedFile>,
}

/// A workspace file the server's command runs, pinned to its trusted content.
pub use atto_policy::pinned::Pinned as PinnedFile;

/// What runs a server's pinned file, and what a changed one holds back.
pub(crate) const SERVER_RUNS: &str = "the server";
pub(crate) const NOT_STARTED: &str = "the server was not started";

/// The `[mcp_servers.NAME]` table and one `.mcp.json` entry, before validation.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawServer {
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    cwd: Option<PathBuf>,
    url: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    /// `.mcp.json`'s `"type": "stdio" | "http" | "streamable-http"`.
    #[serde(rename = "type")]
    kind: Option<String>,
    enabled: Option<bool>,
    /// `.mcp.json` files written for other agents say `disabled`.
    disabled: Option<bool>,
    startup_timeout: Option<f64>,
    tool_timeout: Option<f64>,
    #[serde(default)]
    tools: ToolsConfig,
}

/// `.mcp.json`: `{ "mcpServers": { NAME: {...} } }`.
#[derive(Debug, Deserialize)]
struct McpJson {
    #[serde(rename = "mcpServers", default)]
    servers: BTreeMap<String, RawServer>,
}

/// Validates the `[mcp_servers]` tables of `config.toml` (`origin` names the file).
pub fn from_tables(
    tables: &BTreeMap<String, RawServer>,
    origin: &str,
) -> Result<Vec<ServerConfig>, ConfigError> {
    tables
        .iter()
        .map(|(name, raw)| validate(name, raw, origin, None))
        .collect()
}

/// Reads a `.mcp.json` file; a relative `cwd` is taken from the file's directory.
pub fn from_mcp_json(path: &Path, origin: &str) -> Result<Vec<ServerConfig>, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|e| ConfigError::Malformed {
        file: path.display().to_string(),
        problem: e.to_string(),
    })?;
    parse_mcp_json(&text, path, origin)
}

/// `text` with its control characters escaped: the parser quotes keys from the file,
/// which may hold line breaks, and an error stays one line.
fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// Parses the text of a `.mcp.json` file found at `path`.
pub fn parse_mcp_json(
    text: &str,
    path: &Path,
    origin: &str,
) -> Result<Vec<ServerConfig>, ConfigError> {
    let file: McpJson = serde_json::from_str(text).map_err(|e| ConfigError::Malformed {
        file: path.display().to_string(),
        problem: one_line(&e.to_string()),
    })?;
    let base = path.parent();
    file.servers
        .iter()
        .map(|(name, raw)| validate(name, raw, origin, base))
        .collect()
}

fn validate(
    name: &str,
    raw: &RawServer,
    origin: &str,
    base: Option<&Path>,
) -> Result<ServerConfig, ConfigError> {
    let err = |problem: String| ConfigError::Server {
        server: one_line(name),
        problem,
    };
    check_name(name).map_err(err)?;
    let transport = transport(raw, base).map_err(err)?;
    Ok(ServerConfig {
        name: name.to_owned(),
        transport,
        enabled: raw.enabled.unwrap_or(true) && !raw.disabled.unwrap_or(false),
        startup_timeout: seconds(
            raw.startup_timeout,
            "startup_timeout",
            DEFAULT_STARTUP_TIMEOUT,
        )
        .map_err(err)?,
        tool_timeout: seconds(raw.tool_timeout, "tool_timeout", DEFAULT_TOOL_TIMEOUT)
            .map_err(err)?,
        tools: raw.tools.clone(),
        origin: origin.to_owned(),
        pinned: Vec::new(),
    })
}

/// Why `name` cannot name a server: it becomes part of every tool's name.
fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err("a server name may hold only letters, digits, - and _".to_owned());
    }
    if name.contains("__") {
        return Err(
            "a server name may not contain \"__\" (it separates server and tool in mcp__server__tool)"
                .to_owned(),
        );
    }
    Ok(())
}

/// How to reach the server: `command` (stdio, a relative `cwd` taken from `base`) or
/// `url` (streamable HTTP), never both, never the legacy SSE transport.
fn transport(raw: &RawServer, base: Option<&Path>) -> Result<Transport, String> {
    match (&raw.command, &raw.url, raw.kind.as_deref()) {
        (Some(_), Some(_), _) => {
            Err("give either `command` (stdio) or `url` (HTTP), not both".to_owned())
        }
        (Some(command), None, None | Some("stdio")) => {
            if command.trim().is_empty() {
                return Err("`command` is empty".to_owned());
            }
            Ok(Transport::Stdio {
                command: command.clone(),
                args: raw.args.clone(),
                env: raw.env.clone(),
                cwd: raw.cwd.as_ref().map(|c| match base {
                    Some(base) if c.is_relative() => base.join(c),
                    _ => c.clone(),
                }),
            })
        }
        (None, Some(url), None | Some("http" | "streamable-http" | "streamable_http")) => {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(format!(
                    "`url` must start with http:// or https:// (got {url})"
                ));
            }
            Ok(Transport::Http {
                url: url.clone(),
                headers: raw.headers.clone(),
            })
        }
        (_, _, Some("sse")) => Err(
            "the legacy SSE transport is not supported; use streamable HTTP (`url`) or stdio"
                .to_owned(),
        ),
        (_, _, Some(other)) if !matches!(other, "stdio" | "http" | "streamable-http") => Err(
            format!("unknown transport type '{other}' (expected stdio or http)"),
        ),
        _ => Err("needs `command` (a stdio server) or `url` (a streamable HTTP server)".to_owned()),
    }
}

/// A timeout setting in seconds: `default` when absent, else more than 0 and at most a day.
fn seconds(value: Option<f64>, key: &str, default: Duration) -> Result<Duration, String> {
    match value {
        None => Ok(default),
        Some(s) if s.is_finite() && s > 0.0 && s <= 86_400.0 => Ok(Duration::from_secs_f64(s)),
        Some(s) => Err(format!(
            "`{key}` must be between 0 and 86400 seconds (got {s})"
        )),
    }
}

/// Replaces `${VAR}` (and `${VAR:-default}`) with the environment's value; a variable
/// that is not set is an error naming it.
pub fn expand_env(text: &str) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            return Err(format!("unclosed ${{ in '{text}'"));
        };
        let inner = &after[..end];
        let (var, default) = match inner.split_once(":-") {
            Some((var, default)) => (var, Some(default)),
            None => (inner, None),
        };
        match (std::env::var(var), default) {
            (Ok(value), _) => out.push_str(&value),
            (Err(_), Some(default)) => out.push_str(default),
            (Err(_), None) => {
                return Err(format!("environment variable {var} is not set"));
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pinned_file_holds_only_while_its_content_is_the_trusted_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("server.py");
        std::fs::write(&path, "trusted").unwrap();
        let pin = PinnedFile {
            path: path.clone(),
            content: b"trusted".to_vec(),
        };
        assert_eq!(pin.changed(SERVER_RUNS, NOT_STARTED), None);
        std::fs::write(&path, "planted").unwrap();
        let why = pin.changed(SERVER_RUNS, NOT_STARTED).unwrap_or_default();
        assert!(why.contains("changed since it was trusted"), "{why}");
        assert!(why.contains("atto trust"), "{why}");
        std::fs::remove_file(&path).unwrap();
        assert!(
            pin.changed(SERVER_RUNS, NOT_STARTED).is_some(),
            "a removed file is no trusted content"
        );
    }

    fn toml_servers(text: &str) -> Result<Vec<ServerConfig>, ConfigError> {
        #[derive(Deserialize)]
        struct File {
            mcp_servers: BTreeMap<String, RawServer>,
        }
        let file: File = toml::from_str(text).map_err(|e| ConfigError::Malformed {
            file: "config.toml".into(),
            problem: e.to_string(),
        })?;
        from_tables(&file.mcp_servers, "config.toml")
    }

    #[test]
    fn stdio_and_http_servers_from_toml() {
        let servers = toml_servers(
            r#"
            [mcp_servers.fs]
            command = "npx"
            args = ["-y", "server"]
            env = { A = "1" }
            tool_timeout = 5
            tools = { deny = ["write_file"], writes = ["move_file"] }

            [mcp_servers.web]
            url = "https://example.invalid/mcp"
            headers = { Authorization = "Bearer ${TOKEN}" }
            enabled = false
            "#,
        )
        .unwrap();
        assert_eq!(servers[0].name, "fs");
        assert_eq!(servers[0].tool_timeout, Duration::from_secs(5));
        assert_eq!(servers[0].startup_timeout, DEFAULT_STARTUP_TIMEOUT);
        assert_eq!(servers[0].tools.deny, vec!["write_file"]);
        assert!(
            matches!(&servers[0].transport, Transport::Stdio { command, .. } if command == "npx")
        );
        assert_eq!(servers[1].transport.kind(), "http");
        assert!(!servers[1].enabled);
    }

    #[test]
    fn bad_entries_are_one_line_errors_naming_the_server() {
        for (text, needle) in [
            ("[mcp_servers.a]\n", "needs `command`"),
            (
                "[mcp_servers.a]\ncommand = \"x\"\nurl = \"http://h\"\n",
                "not both",
            ),
            ("[mcp_servers.a]\nurl = \"ftp://h\"\n", "http://"),
            ("[mcp_servers.a__b]\ncommand = \"x\"\n", "\"__\""),
            (
                "[mcp_servers.a]\ncommand = \"x\"\ntool_timeout = -1\n",
                "tool_timeout",
            ),
        ] {
            let e = toml_servers(text).unwrap_err().to_string();
            assert!(e.contains(needle), "{text}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
        let e = toml_servers("[mcp_servers.a]\ncommand = \"x\"\nfoo = 1\n").unwrap_err();
        assert!(e.to_string().contains("foo"), "{e}");
    }

    #[test]
    fn a_server_name_with_a_line_break_is_refused_in_one_line() {
        // An editor's (ACP) or a cloned repository's server name was echoed raw in the
        // error; the acp_jsonrpc and mcp_json fuzz targets keep the input.
        let text = "{\"mcpServers\": {\"a\\nb\": {\"command\": \"x\"}}}";
        let e = parse_mcp_json(text, Path::new("/p/.mcp.json"), "p").unwrap_err();
        let shown = e.to_string();
        assert!(!shown.contains('\n'), "{shown:?}");
        assert!(shown.starts_with("MCP server 'a\\nb': "), "{shown:?}");
    }

    #[test]
    fn a_malformed_mcp_json_error_is_one_line_whatever_the_file_holds() {
        // Found by the mcp_json fuzz target: a key with a line break in it was echoed raw.
        let text = "{\"mcpServers\": {\"s\": {\"comm\\nd\": \"x\"}}}";
        let e = parse_mcp_json(text, Path::new("/p/.mcp.json"), "p").unwrap_err();
        let shown = e.to_string();
        assert!(!shown.contains('\n'), "{shown:?}");
        assert!(shown.contains("comm\\nd"), "{shown:?}");
        assert!(shown.starts_with("/p/.mcp.json: "), "{shown:?}");
    }

    #[test]
    fn mcp_json_as_other_agents_write_it() {
        let text = r#"{"mcpServers": {
            "git": {"command": "uvx", "args": ["mcp-server-git"], "cwd": "sub"},
            "remote": {"type": "http", "url": "http://127.0.0.1:1/mcp"},
            "off": {"command": "x", "disabled": true}
        }}"#;
        let servers = parse_mcp_json(text, Path::new("/p/.mcp.json"), ".mcp.json").unwrap();
        assert_eq!(servers.len(), 3);
        let git = servers.iter().find(|s| s.name == "git").unwrap();
        assert!(
            matches!(&git.transport, Transport::Stdio { cwd: Some(c), .. } if c == Path::new("/p/sub"))
        );
        assert!(!servers.iter().find(|s| s.name == "off").unwrap().enabled);
        let e = parse_mcp_json("{", Path::new("x/.mcp.json"), "p").unwrap_err();
        assert!(e.to_string().starts_with("x/.mcp.json: "), "{e}");
    }

    #[test]
    fn environment_variables_in_headers() {
        // PATH is set in every test environment.
        let path = std::env::var("PATH").unwrap();
        assert_eq!(expand_env("a ${PATH} b").unwrap(), format!("a {path} b"));
        assert_eq!(expand_env("${ATTO_SURELY_UNSET_VAR:-d}").unwrap(), "d");
        assert!(
            expand_env("${ATTO_SURELY_UNSET_VAR}")
                .unwrap_err()
                .contains("ATTO_SURELY_UNSET_VAR")
        );
    }
}
