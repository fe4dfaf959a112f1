//! The user's configuration file (`~/.config/atto/config.toml`, or `--config PATH`).
//!
//! Owns: reading and validating the TOML, and where it lives. Provider resolution
//! itself is atto-llm's; this module only hands it the tables.
//! The project's `.atto/config.toml` ([`ProjectConfig`]) may only tighten permissions: a
//! cloned repository must never be able to redirect where API keys are sent.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use atto_llm::{ProviderSettings, RetryPolicy, Wire};
use atto_mcp::PermissionLists;
use serde::Deserialize;

/// The whole config file. Unknown keys are errors, so typos do not pass silently.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Provider name (preset or a `[providers.NAME]` table).
    pub provider: Option<String>,
    /// Model id.
    pub model: Option<String>,
    /// Base URL override.
    pub base_url: Option<String>,
    /// Wire protocol override.
    pub wire: Option<Wire>,
    /// Custom providers and preset overrides.
    #[serde(default)]
    pub providers: BTreeMap<String, ProviderSettings>,
    /// Per-turn limits.
    #[serde(default)]
    pub limits: LimitsConfig,
    /// Subagent budgets and bounds, and the session-wide caps.
    #[serde(default)]
    pub subagents: SubagentsConfig,
    /// `--model auto`: the model (and effort) for each complexity tier.
    #[serde(default)]
    pub routing: BTreeMap<String, RouteConfig>,
    /// Named sets of settings chosen with `--profile NAME`.
    #[serde(default)]
    pub profiles: BTreeMap<String, ProfileConfig>,
    /// Retry behaviour for model calls.
    #[serde(default)]
    pub retry: RetryConfig,
    /// `strict`, `interactive`, `auto-safe` or `yolo`.
    pub permission_mode: Option<String>,
    /// codewhale's `suggest`, `auto` or `never` (mapped onto permission modes).
    pub approval_mode: Option<String>,
    /// Rules: `tool` or `tool(pattern)`.
    #[serde(default)]
    pub permissions: PermissionLists,
    /// Whether sandboxed commands may use the network (default: no).
    pub allow_network: Option<bool>,
    /// Whether sandboxed commands may open unix sockets while the network is off (default:
    /// no: ssh-agent, Docker, D-Bus and systemd sockets stay out of reach).
    pub allow_unix_sockets: Option<bool>,
    /// `[sandbox]`: what sandboxed commands cannot read.
    #[serde(default)]
    pub sandbox: SandboxTable,
    /// How `/auto` plans start.
    #[serde(default)]
    pub planner: PlannerConfig,
    /// How learnings are recalled and kept.
    #[serde(default)]
    pub learning: LearningConfig,
    /// When the conversation is compacted.
    #[serde(default)]
    pub context: ContextConfig,
    /// Seconds an approval waits for an answer before it counts as "no" (default 600;
    /// 0 waits for ever).
    pub approval_timeout_secs: Option<u64>,
    /// Environment variables commands see besides the built-in harmless set (exact names).
    #[serde(default)]
    pub pass_env: Vec<String>,
    /// Offer the `apply_patch` tool (default: to models trained on it, GPT-5 and Codex).
    pub apply_patch: Option<bool>,
    /// Exact commands that may re-run WITHOUT the sandbox when the sandbox stopped them,
    /// without a question (nothing else ever runs unsandboxed unasked).
    #[serde(default)]
    pub unsandboxed_commands: Vec<String>,
    /// `[mcp_servers.NAME]`: MCP servers whose tools sessions offer.
    #[serde(default)]
    pub mcp_servers: BTreeMap<String, atto_mcp::RawServer>,
    /// Directories `atto acp` may take as a workspace although they are `/`, the home
    /// directory or one holding it (refused otherwise).
    #[serde(default)]
    pub acp_allow_workspaces: Vec<PathBuf>,
    /// How long file checkpoints are kept and how large their side repository grows.
    #[serde(default)]
    pub checkpoints: CheckpointsConfig,
}

/// `[sandbox]`: paths hidden from sandboxed commands (an empty directory or file is
/// mounted over each), on top of the credential stores hidden by default.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SandboxTable {
    /// More paths to hide; `~/` is the home directory.
    #[serde(default)]
    pub hide: Vec<String>,
    /// Default hidden paths commands may read after all (as written in `hide`).
    #[serde(default)]
    pub unhide: Vec<String>,
}

/// `[checkpoints]`: the retention policy of file checkpoints (`atto checkpoints gc` applies
/// it now; sessions apply it in the background every 100 checkpoints).
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckpointsConfig {
    /// Days a checkpoint is kept (default 7; the newest one always stays).
    pub keep_days: Option<u32>,
    /// Bytes the side repository may take before the oldest checkpoints go (default
    /// 314572800, 300 MiB; the newest one always stays).
    pub max_bytes: Option<u64>,
}

/// `[planner]`: the structured planner's defaults (`/auto-rollback`, `/auto-plan`,
/// `/auto-parallel` change them for one session).
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlannerConfig {
    /// Roll a failed step back to its checkpoint and stop the plan (default: on).
    pub auto_rollback_on_failure: Option<bool>,
    /// Plan plain prompts whose complexity reaches `threshold` first (default: off).
    pub detect: Option<bool>,
    /// Complexity score from which a prompt is planned (default: 1.5, COMPLEX).
    pub threshold: Option<f64>,
    /// Run ready steps with disjoint files together (default: off).
    pub parallel: Option<bool>,
}

/// `[context]`: when the conversation is compacted (context windows are set per model:
/// `[providers.X.models.Y] context_window`).
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContextConfig {
    /// Compact when the next request would fill more than this percentage of the
    /// model's context window (default 80).
    pub compact_at_percent: Option<u8>,
    /// The newest share of the window (percent) kept verbatim by a compaction (default 25).
    pub keep_recent_percent: Option<u8>,
    /// A repository with at most this many source files gets its map with the first
    /// prompt (default 30; 0: never).
    pub start_map_max_files: Option<usize>,
}

/// `[learning]`: lessons kept across sessions.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LearningConfig {
    /// Recall learnings into prompts, propose new ones, offer the tools (default: on).
    pub enabled: Option<bool>,
    /// Proposals at or above this confidence are kept without asking (default 0.9; above
    /// 1, every proposal waits for the user).
    pub auto_validate_threshold: Option<f64>,
    /// Learnings kept in all before the oldest rejected, archived and least confident
    /// ones are evicted (default 500).
    pub max_learnings: Option<usize>,
    /// Learnings recalled into one request (default 5).
    pub max_recalled: Option<usize>,
    /// Bytes the recalled notes may take in one request (default 1536).
    pub max_recalled_bytes: Option<usize>,
}

/// The project's `.atto/config.toml`: it may only tighten permissions, so a cloned
/// repository can never widen what atto does or redirect where keys are sent.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProjectConfig {
    pub permission_mode: Option<String>,
    pub approval_mode: Option<String>,
    #[serde(default)]
    pub permissions: PermissionLists,
}

impl ProjectConfig {
    /// Loads `<workspace>/.atto/config.toml` if present.
    pub fn load(workspace: &Path) -> Result<ProjectConfig, ConfigError> {
        let path = workspace.join(".atto").join("config.toml");
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                return Ok(ProjectConfig::default());
            }
            Err(source) => return Err(ConfigError::Read { path, source }),
        };
        let config: ProjectConfig = toml::from_str(&text).map_err(|err| ConfigError::Parse {
            path: path.clone(),
            message: one_line(&err.to_string()),
        })?;
        if !config.permissions.allow.is_empty() {
            return Err(ConfigError::Parse {
                path,
                message: "a project config may only tighten permissions: move the allow rules \
                          to your user config (~/.config/atto/config.toml)"
                    .to_owned(),
            });
        }
        Ok(config)
    }
}

/// `[profiles.NAME]`: what a profile sets over the rest of the file (flags still win).
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProfileConfig {
    pub provider: Option<String>,
    pub model: Option<String>,
    pub base_url: Option<String>,
    pub wire: Option<Wire>,
    pub permission_mode: Option<String>,
    pub approval_mode: Option<String>,
    /// The agent mode: build, plan, review, debug.
    pub mode: Option<String>,
    pub limits: Option<LimitsConfig>,
}

/// `[limits]`
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LimitsConfig {
    pub max_rounds: Option<u32>,
    pub max_tokens: Option<u64>,
    pub max_duration_secs: Option<u64>,
    pub max_output_tokens: Option<u32>,
}

/// One `[routing]` entry: `simple = "MODEL"` or `complex = { model = "M", effort = "high" }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum RouteConfig {
    Model(String),
    Full {
        model: String,
        #[serde(default)]
        effort: Option<String>,
    },
}

/// `[subagents]`: the seed's defaults unless set.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SubagentsConfig {
    /// A child's share of its parent's remaining tokens (0.15).
    pub fraction: Option<f64>,
    /// Least tokens a child gets (50000).
    pub min_tokens: Option<u64>,
    /// Most tokens a child gets (200000).
    pub max_tokens: Option<u64>,
    /// Model calls a child may make (30).
    pub max_iterations: Option<u32>,
    /// A child's wall time in seconds (300).
    pub timeout_secs: Option<u64>,
    /// How deep subagents nest (3).
    pub max_depth: Option<u32>,
    /// Subagents running at once, 1-20 (8).
    pub max_running: Option<u32>,
    /// Tokens the whole session may use, subagents included.
    pub max_budget_tokens: Option<u64>,
    /// US dollars the whole session may spend, subagents included.
    pub max_budget_usd: Option<f64>,
}

/// `[retry]`
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RetryConfig {
    pub max_attempts: Option<u32>,
    pub base_delay_ms: Option<u64>,
    pub max_delay_ms: Option<u64>,
}

/// A config problem; the message names the file and what is wrong.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("invalid config {path}: {message}")]
    Parse { path: PathBuf, message: String },
}

impl Config {
    /// Loads `explicit` (which must exist) or the default user config (which may not),
    /// without a profile.
    pub fn load(explicit: Option<&Path>) -> Result<Config, ConfigError> {
        crate::Loaded::read(explicit, None).map(|loaded| loaded.config)
    }

    /// Parses `text` as the config file at `path` (named in every error).
    pub fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
        let config: Config = toml::from_str(text).map_err(|err| ConfigError::Parse {
            path: path.to_path_buf(),
            message: one_line(&err.to_string()),
        })?;
        config.checked(path)
    }

    /// The config of tables already parsed (a file with a profile applied).
    pub(crate) fn from_table(table: toml::Table, path: &Path) -> Result<Config, ConfigError> {
        let config: Config =
            toml::Value::Table(table)
                .try_into()
                .map_err(|err: toml::de::Error| ConfigError::Parse {
                    path: path.to_path_buf(),
                    message: one_line(&err.to_string()),
                })?;
        config.checked(path)
    }

    /// The config if its values are in range; the checks serde's types cannot make.
    fn checked(self, path: &Path) -> Result<Config, ConfigError> {
        let config = self;
        if let Some(t) = config.planner.threshold
            && !(t.is_finite() && t >= 0.0)
        {
            return Err(ConfigError::Parse {
                path: path.to_path_buf(),
                message: format!(
                    "planner.threshold must be a complexity score of 0 or more (SIMPLE < 0.5, \
                     MEDIUM < 1.5, COMPLEX < 2.5), not {t}"
                ),
            });
        }
        let learning = &config.learning;
        if let Some(t) = learning.auto_validate_threshold
            && !(t.is_finite() && t >= 0.0)
        {
            return Err(ConfigError::Parse {
                path: path.to_path_buf(),
                message: format!(
                    "learning.auto_validate_threshold must be a confidence from 0 to 1 (above 1: \
                     never validate without asking), not {t}"
                ),
            });
        }
        if learning.max_learnings == Some(0) {
            return Err(ConfigError::Parse {
                path: path.to_path_buf(),
                message: "learning.max_learnings must be at least 1 (set learning.enabled = \
                          false to keep none)"
                    .to_owned(),
            });
        }
        Ok(config)
    }

    /// How long an approval waits before it counts as "no": 600 s unless the config
    /// says otherwise (0: no deadline).
    pub fn approval_deadline(&self) -> Option<Duration> {
        match self.approval_timeout_secs.unwrap_or(600) {
            0 => None,
            secs => Some(Duration::from_secs(secs)),
        }
    }

    /// The retry policy, defaults filled in.
    pub fn retry_policy(&self) -> RetryPolicy {
        let mut policy = RetryPolicy::default();
        if let Some(n) = self.retry.max_attempts {
            policy.max_attempts = n.max(1);
        }
        if let Some(ms) = self.retry.base_delay_ms {
            policy.base_delay = Duration::from_millis(ms);
        }
        if let Some(ms) = self.retry.max_delay_ms {
            policy.max_delay = Duration::from_millis(ms);
        }
        policy
    }
}

/// `$XDG_CONFIG_HOME/atto/config.toml`, else `~/.config/atto/config.toml`.
pub fn default_path() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(base.join("atto").join("config.toml"))
}

/// TOML errors span several lines with a caret diagram; keep the gist on one line.
pub(crate) fn one_line(message: &str) -> String {
    let lines: Vec<&str> = message
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('|') && !l.chars().all(|c| c == '^'))
        .collect();
    lines.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_and_unknown_keys_are_one_line_errors() {
        let err = Config::parse("provider = ", Path::new("c.toml")).unwrap_err();
        let msg = err.to_string();
        assert!(msg.starts_with("invalid config c.toml:"), "{msg}");
        assert!(!msg.contains('\n'), "{msg}");
        let err = Config::parse("modle = \"x\"", Path::new("c.toml")).unwrap_err();
        assert!(err.to_string().contains("modle"), "{err}");
        let err = Config::parse("wire = \"grpc\"", Path::new("c.toml")).unwrap_err();
        assert!(err.to_string().contains("grpc"), "{err}");
    }

    #[test]
    fn missing_explicit_config_is_an_error_but_missing_default_is_not() {
        let err = Config::load(Some(Path::new("/nonexistent/atto.toml"))).unwrap_err();
        assert!(err.to_string().contains("/nonexistent/atto.toml"));
    }
}
