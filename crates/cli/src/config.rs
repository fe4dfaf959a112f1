//! The user's configuration file (`~/.config/atto/config.toml`, or `--config PATH`).
//!
//! Owns: reading and validating the TOML, and where it lives. Provider resolution
//! itself is atto-llm's; this module only hands it the tables.
//! The project's `.atto/config.toml` is not read yet: a cloned repository must never be
//! able to redirect where API keys are sent, so project config will only ever tighten
//! permissions once they exist.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use atto_llm::{ProviderSettings, RetryPolicy, Wire};
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
    pub permissions: RulesConfig,
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

/// `[permissions]`: rules that allow, ask or deny without a question.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RulesConfig {
    #[serde(default)]
    pub allow: Vec<String>,
    #[serde(default)]
    pub ask: Vec<String>,
    #[serde(default)]
    pub deny: Vec<String>,
}

/// The project's `.atto/config.toml`: it may only tighten permissions, so a cloned
/// repository can never widen what atto does or redirect where keys are sent.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProjectConfig {
    pub permission_mode: Option<String>,
    pub approval_mode: Option<String>,
    #[serde(default)]
    pub permissions: RulesConfig,
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
    /// Applies profile `name` over the file's settings; returns the agent mode it sets.
    pub fn apply_profile(&mut self, name: &str) -> Result<Option<String>, ConfigError> {
        let Some(profile) = self.profiles.get(name).cloned() else {
            let known: Vec<&str> = self.profiles.keys().map(String::as_str).collect();
            return Err(ConfigError::Parse {
                path: default_path().unwrap_or_default(),
                message: format!(
                    "there is no profile '{name}' ({})",
                    if known.is_empty() {
                        "no [profiles.NAME] tables are defined".to_owned()
                    } else {
                        format!("defined: {}", known.join(", "))
                    }
                ),
            });
        };
        let take = |slot: &mut Option<String>, v: Option<String>| {
            if v.is_some() {
                *slot = v;
            }
        };
        take(&mut self.provider, profile.provider);
        take(&mut self.model, profile.model);
        take(&mut self.base_url, profile.base_url);
        take(&mut self.permission_mode, profile.permission_mode);
        take(&mut self.approval_mode, profile.approval_mode);
        self.wire = profile.wire.or(self.wire);
        if let Some(limits) = profile.limits {
            let l = &mut self.limits;
            l.max_rounds = limits.max_rounds.or(l.max_rounds);
            l.max_tokens = limits.max_tokens.or(l.max_tokens);
            l.max_duration_secs = limits.max_duration_secs.or(l.max_duration_secs);
            l.max_output_tokens = limits.max_output_tokens.or(l.max_output_tokens);
        }
        Ok(profile.mode)
    }

    /// Loads `explicit` (which must exist) or the default user config (which may not).
    pub fn load(explicit: Option<&Path>) -> Result<Config, ConfigError> {
        let (path, required) = match explicit {
            Some(p) => (p.to_path_buf(), true),
            None => match default_path() {
                Some(p) => (p, false),
                None => return Ok(Config::default()),
            },
        };
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(err) if !required && err.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Config::default());
            }
            Err(source) => return Err(ConfigError::Read { path, source }),
        };
        Self::parse(&text, &path)
    }

    fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
        let config: Config = toml::from_str(text).map_err(|err| ConfigError::Parse {
            path: path.to_path_buf(),
            message: one_line(&err.to_string()),
        })?;
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

    /// How sessions use the context window: the defaults, with the windows and
    /// thresholds the config sets. A percentage out of range is an error.
    pub fn context_settings(&self) -> Result<atto_core::ContextSettings, String> {
        let mut settings = atto_core::ContextSettings::default();
        for provider in self.providers.values() {
            for (model, config) in &provider.models.0 {
                if let Some(window) = config.context_window {
                    settings.windows.insert(model.clone(), window);
                }
            }
        }
        let percent = |key: &str, value: Option<u8>, low: u8, high: u8| match value {
            Some(v) if !(low..=high).contains(&v) => Err(format!(
                "[context] {key} = {v} is out of range ({low} to {high}); fix it in the config"
            )),
            _ => Ok(value),
        };
        if let Some(p) = percent(
            "compact_at_percent",
            self.context.compact_at_percent,
            10,
            100,
        )? {
            settings.compact_at_percent = p;
        }
        if let Some(p) = percent(
            "keep_recent_percent",
            self.context.keep_recent_percent,
            5,
            60,
        )? {
            settings.keep_recent_percent = p;
        }
        if let Some(n) = self.context.start_map_max_files {
            settings.start_map_max_files = n;
        }
        Ok(settings)
    }

    /// The checkpoint limits: the defaults, with the retention the config sets.
    pub fn checkpoint_limits(&self) -> atto_checkpoint::Limits {
        let defaults = atto_checkpoint::Limits::default();
        atto_checkpoint::Limits {
            keep_days: self.checkpoints.keep_days.unwrap_or(defaults.keep_days),
            max_bytes: self.checkpoints.max_bytes.unwrap_or(defaults.max_bytes),
            ..defaults
        }
    }

    /// How sessions use learnings: the defaults, with what the config sets.
    pub fn learning_settings(&self) -> atto_core::LearningSettings {
        let mut settings = atto_core::LearningSettings::default();
        let c = &self.learning;
        if let Some(on) = c.enabled {
            settings.enabled = on;
        }
        if let Some(t) = c.auto_validate_threshold {
            settings.auto_validate_threshold = t;
        }
        if let Some(n) = c.max_learnings {
            settings.max_learnings = n;
        }
        if let Some(n) = c.max_recalled {
            settings.max_recalled = n;
        }
        if let Some(n) = c.max_recalled_bytes {
            settings.max_recalled_bytes = n;
        }
        settings
    }

    /// The planner's settings at start: the defaults, with what the config sets.
    pub fn planner_settings(&self) -> atto_core::planner::Settings {
        let mut settings = atto_core::planner::Settings::default();
        let c = &self.planner;
        if let Some(on) = c.auto_rollback_on_failure {
            settings.auto_rollback_on_failure = on;
        }
        if let Some(on) = c.detect {
            settings.detect = on;
        }
        if let Some(t) = c.threshold {
            settings.threshold = t;
        }
        if let Some(on) = c.parallel {
            settings.parallel = on;
        }
        settings
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

/// `atto config show`: every setting that shapes a session, its value and where it came
/// from (a flag, the profile, the config file, or the default).
pub fn show(global: &crate::GlobalArgs, config: &Config) {
    let file = global
        .config
        .clone()
        .or_else(default_path)
        .filter(|p| p.exists());
    let profile = global
        .profile
        .as_ref()
        .and_then(|name| config.profiles.get(name).map(|p| (name, p)));
    let origin = |flag: bool, in_profile: bool, in_file: bool| -> String {
        if flag {
            "flag".to_owned()
        } else if in_profile {
            format!("profile {}", profile.map_or("", |(n, _)| n.as_str()))
        } else if in_file {
            file.as_ref().map_or_else(
                || "config".to_owned(),
                |p| format!("config {}", p.display()),
            )
        } else {
            "default".to_owned()
        }
    };
    let p = profile.map(|(_, p)| p);
    let row = |key: &str, value: Option<String>, default: &str, from: String| {
        println!(
            "{key:<24} {:<28} ({from})",
            value.unwrap_or_else(|| default.to_owned())
        );
    };
    row(
        "provider",
        global.provider.clone().or_else(|| config.provider.clone()),
        "(from the environment's keys)",
        origin(
            global.provider.is_some(),
            p.is_some_and(|p| p.provider.is_some()),
            config.provider.is_some(),
        ),
    );
    row(
        "model",
        global.model.clone().or_else(|| config.model.clone()),
        "(the provider's default)",
        origin(
            global.model.is_some(),
            p.is_some_and(|p| p.model.is_some()),
            config.model.is_some(),
        ),
    );
    row(
        "base_url",
        global.base_url.clone().or_else(|| config.base_url.clone()),
        "(the provider's)",
        origin(
            global.base_url.is_some(),
            p.is_some_and(|p| p.base_url.is_some()),
            config.base_url.is_some(),
        ),
    );
    row(
        "permission_mode",
        global
            .permission
            .clone()
            .or_else(|| global.yolo.then(|| "yolo".to_owned()))
            .or_else(|| config.permission_mode.clone()),
        "interactive",
        origin(
            global.permission.is_some() || global.yolo,
            p.is_some_and(|p| p.permission_mode.is_some()),
            config.permission_mode.is_some(),
        ),
    );
    row(
        "approval_mode",
        config.approval_mode.clone(),
        "(none)",
        origin(
            false,
            p.is_some_and(|p| p.approval_mode.is_some()),
            config.approval_mode.is_some(),
        ),
    );
    row(
        "mode",
        global.mode.map(|(m, _)| m.as_str().to_owned()),
        "build",
        origin(
            global.mode.is_some() && p.is_none_or(|p| p.mode.is_none()),
            p.is_some_and(|p| p.mode.is_some()),
            false,
        ),
    );
    let limits = &config.limits;
    let limit_origin = |set: bool, in_profile: bool| origin(false, in_profile, set && !in_profile);
    let pl = p.and_then(|p| p.limits.as_ref());
    row(
        "limits.max_rounds",
        limits.max_rounds.map(|n| n.to_string()),
        "50",
        limit_origin(
            limits.max_rounds.is_some(),
            pl.is_some_and(|l| l.max_rounds.is_some()),
        ),
    );
    row(
        "limits.max_tokens",
        limits.max_tokens.map(|n| n.to_string()),
        "none",
        limit_origin(
            limits.max_tokens.is_some(),
            pl.is_some_and(|l| l.max_tokens.is_some()),
        ),
    );
    row(
        "limits.max_duration_secs",
        limits.max_duration_secs.map(|n| n.to_string()),
        "none",
        limit_origin(
            limits.max_duration_secs.is_some(),
            pl.is_some_and(|l| l.max_duration_secs.is_some()),
        ),
    );
    row(
        "max_budget_tokens",
        global
            .max_budget_tokens
            .or(config.subagents.max_budget_tokens)
            .map(|n| n.to_string()),
        "none",
        origin(
            global.max_budget_tokens.is_some(),
            false,
            config.subagents.max_budget_tokens.is_some(),
        ),
    );
    row(
        "max_budget_usd",
        global
            .max_budget_usd
            .or(config.subagents.max_budget_usd)
            .map(|n| n.to_string()),
        "none",
        origin(
            global.max_budget_usd.is_some(),
            false,
            config.subagents.max_budget_usd.is_some(),
        ),
    );
    let routes: Vec<String> = config
        .routing
        .iter()
        .map(|(tier, r)| match r {
            RouteConfig::Model(m) | RouteConfig::Full { model: m, .. } => format!("{tier}={m}"),
        })
        .collect();
    row(
        "routing",
        (!routes.is_empty()).then(|| routes.join(" ")),
        "(the provider's defaults)",
        origin(false, false, !routes.is_empty()),
    );
    let learning = &config.learning;
    row(
        "learning.enabled",
        learning.enabled.map(|on| on.to_string()),
        "true",
        origin(false, false, learning.enabled.is_some()),
    );
    row(
        "learning.auto_validate_threshold",
        learning.auto_validate_threshold.map(|t| t.to_string()),
        "0.9",
        origin(false, false, learning.auto_validate_threshold.is_some()),
    );
    row(
        "learning.max_learnings",
        learning.max_learnings.map(|n| n.to_string()),
        "500",
        origin(false, false, learning.max_learnings.is_some()),
    );
    let checkpoints = &config.checkpoints;
    row(
        "checkpoints.keep_days",
        checkpoints.keep_days.map(|n| n.to_string()),
        "7",
        origin(false, false, checkpoints.keep_days.is_some()),
    );
    row(
        "checkpoints.max_bytes",
        checkpoints.max_bytes.map(|n| n.to_string()),
        "314572800",
        origin(false, false, checkpoints.max_bytes.is_some()),
    );
    row(
        "profile",
        global.profile.clone(),
        "(none)",
        origin(global.profile.is_some(), false, false),
    );
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
fn one_line(message: &str) -> String {
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
    fn parses_a_full_config() {
        let text = r#"
            provider = "local"
            model = "qwen"
            [providers.local]
            base_url = "http://127.0.0.1:9999/v1"
            wire = "chat"
            [limits]
            max_rounds = 7
            [retry]
            base_delay_ms = 5
            [planner]
            auto_rollback_on_failure = false
            detect = true
            threshold = 2.5
            parallel = true
        "#;
        let config = Config::parse(text, Path::new("c.toml")).unwrap();
        assert_eq!(config.provider.as_deref(), Some("local"));
        assert_eq!(config.limits.max_rounds, Some(7));
        assert_eq!(config.retry_policy().base_delay, Duration::from_millis(5));
        assert_eq!(config.providers["local"].wire, Some(Wire::Chat));
        let planner = config.planner_settings();
        assert!(!planner.auto_rollback_on_failure && planner.detect && planner.parallel);
        assert_eq!(planner.threshold, 2.5);
        let defaults = Config::default().planner_settings();
        assert!(defaults.auto_rollback_on_failure && !defaults.detect && !defaults.parallel);
        let learning = Config::parse(
            "[learning]\nenabled = false\nauto_validate_threshold = 1.5\nmax_learnings = 50",
            Path::new("c.toml"),
        )
        .unwrap()
        .learning_settings();
        assert!(!learning.enabled);
        assert_eq!(
            (learning.auto_validate_threshold, learning.max_learnings),
            (1.5, 50)
        );
        assert_eq!(
            Config::default().learning_settings(),
            atto_core::LearningSettings::default()
        );
        for bad in [
            "[learning]\nmax_learnings = 0",
            "[learning]\nauto_validate_threshold = -0.1",
        ] {
            let err = Config::parse(bad, Path::new("c.toml")).unwrap_err();
            assert!(err.to_string().contains("learning."), "{err}");
        }
        let err = Config::parse("[planner]\nthreshold = -1.0", Path::new("c.toml")).unwrap_err();
        assert!(err.to_string().contains("planner.threshold"), "{err}");
    }

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
