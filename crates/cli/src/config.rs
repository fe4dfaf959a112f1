//! The settings a session starts with, resolved from atto-config's [`Config`] into the
//! engine's types (context, checkpoints, learning, planner), and `atto config show`'s
//! printing. Reading the files and the schema are atto-config's; wiring a session is
//! `setup`'s, which calls these once.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use atto_config::{Config, Loaded, ProjectConfig};
use atto_core::Limits;
use atto_policy::gate::PermissionSetting;

use crate::GlobalArgs;
use crate::permissions::{self, PermissionFlags};
use crate::setup::error::SetupError;

/// Limits given on the command line, over the config's.
#[derive(Debug, Default, Clone)]
pub struct LimitFlags {
    pub max_rounds: Option<u32>,
    pub max_duration_secs: Option<u64>,
}

/// What a session starts with, resolved once from the config files and the flags before
/// anything is opened or started, so a bad value stops the start before it has effects.
/// The tables the wiring hands on whole (sandbox, MCP servers, subagents, providers) are
/// read where they are wired.
pub struct Settings {
    /// The project's `.atto/config.toml`.
    pub project: ProjectConfig,
    /// The permission mode, tightened by the project.
    pub permission: PermissionSetting,
    pub limits: Limits,
    pub context: atto_core::ContextSettings,
    pub checkpoints: atto_checkpoint::Limits,
    pub planner: atto_core::planner::Settings,
    pub learning: atto_core::LearningSettings,
    /// How long an approval waits before it counts as "no".
    pub approval_deadline: Option<Duration>,
    /// The config's commands allowed to re-run without the sandbox, then the flag's.
    pub unsandboxed_commands: Vec<String>,
}

/// The flags a session's settings are resolved with.
pub struct SettingsFlags<'a> {
    pub permissions: &'a PermissionFlags,
    pub limits: &'a LimitFlags,
    /// `--allow-unsandboxed`.
    pub unsandboxed_commands: &'a [String],
}

/// Resolves every setting a session in `workspace` starts with; a bad value is an error
/// before anything runs.
pub fn resolve(
    config: &Config,
    workspace: &Path,
    flags: SettingsFlags<'_>,
) -> Result<Settings, SetupError> {
    let project = ProjectConfig::load(workspace).map_err(|e| SetupError::fix(e.to_string()))?;
    let permission = permissions::setting(flags.permissions, config, &project)?;
    Ok(Settings {
        permission,
        project,
        limits: limits(config, flags.limits),
        context: context_settings(config).map_err(SetupError::fix)?,
        checkpoints: checkpoint_limits(config),
        planner: planner_settings(config),
        learning: learning_settings(config),
        approval_deadline: config.approval_deadline(),
        unsandboxed_commands: config
            .unsandboxed_commands
            .iter()
            .chain(flags.unsandboxed_commands)
            .cloned()
            .collect(),
    })
}

/// The per-turn limits: the flags over the config over the defaults.
pub fn limits(config: &Config, flags: &LimitFlags) -> Limits {
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

/// How sessions use the context window: the defaults, with the windows and
/// thresholds the config sets. A percentage out of range is an error.
pub fn context_settings(config: &Config) -> Result<atto_core::ContextSettings, String> {
    let mut settings = atto_core::ContextSettings::default();
    for provider in config.providers.values() {
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
        config.context.compact_at_percent,
        10,
        100,
    )? {
        settings.compact_at_percent = p;
    }
    if let Some(p) = percent(
        "keep_recent_percent",
        config.context.keep_recent_percent,
        5,
        60,
    )? {
        settings.keep_recent_percent = p;
    }
    if let Some(n) = config.context.start_map_max_files {
        settings.start_map_max_files = n;
    }
    Ok(settings)
}

/// The checkpoint limits: the defaults, with the retention the config sets.
pub fn checkpoint_limits(config: &Config) -> atto_checkpoint::Limits {
    let defaults = atto_checkpoint::Limits::default();
    atto_checkpoint::Limits {
        keep_days: config.checkpoints.keep_days.unwrap_or(defaults.keep_days),
        max_bytes: config.checkpoints.max_bytes.unwrap_or(defaults.max_bytes),
        ..defaults
    }
}

/// How sessions use learnings: the defaults, with what the config sets.
pub fn learning_settings(config: &Config) -> atto_core::LearningSettings {
    let mut settings = atto_core::LearningSettings::default();
    let c = &config.learning;
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
pub fn planner_settings(config: &Config) -> atto_core::planner::Settings {
    let mut settings = atto_core::planner::Settings::default();
    let c = &config.planner;
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

/// What the session flags set, by schema key: `config show` names them as the origin.
/// Read before a profile fills `--mode`, so a profile's mode is not taken for a flag.
pub fn flags(global: &GlobalArgs) -> BTreeMap<&'static str, String> {
    let permission = global
        .permission
        .clone()
        .or_else(|| global.permission_flags().yolo.then(|| "yolo".to_owned()));
    [
        ("provider", global.provider.clone()),
        ("model", global.model.clone()),
        ("base_url", global.base_url.clone()),
        ("wire", global.wire.map(|w| w.to_string())),
        ("permission_mode", permission),
        ("mode", global.mode.map(|(m, _)| m.as_str().to_owned())),
        ("profile", global.profile.clone()),
        (
            "subagents.max_running",
            global.max_subagents.map(|n| n.to_string()),
        ),
        (
            "subagents.max_budget_tokens",
            global.max_budget_tokens.map(|n| n.to_string()),
        ),
        (
            "subagents.max_budget_usd",
            global.max_budget_usd.map(|n| n.to_string()),
        ),
    ]
    .into_iter()
    .filter_map(|(key, value)| value.map(|v| (key, v)))
    .collect()
}

/// `atto config show`: every key of the schema, its value and where it came from (a flag,
/// the profile, the config file, or the default).
pub fn show(loaded: &Loaded, flags: &BTreeMap<&'static str, String>) {
    for row in atto_config::rows(loaded, flags) {
        println!("{row}");
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::time::Duration;

    use atto_llm::Wire;

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
        let planner = planner_settings(&config);
        assert!(!planner.auto_rollback_on_failure && planner.detect && planner.parallel);
        assert_eq!(planner.threshold, 2.5);
        let defaults = planner_settings(&Config::default());
        assert!(defaults.auto_rollback_on_failure && !defaults.detect && !defaults.parallel);
        let learning = Config::parse(
            "[learning]\nenabled = false\nauto_validate_threshold = 1.5\nmax_learnings = 50",
            Path::new("c.toml"),
        )
        .unwrap();
        let learning = learning_settings(&learning);
        assert!(!learning.enabled);
        assert_eq!(
            (learning.auto_validate_threshold, learning.max_learnings),
            (1.5, 50)
        );
        assert_eq!(
            learning_settings(&Config::default()),
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
}
