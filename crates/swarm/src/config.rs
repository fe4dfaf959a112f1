//! The seed's SwarmConfig, read from `.atto/swarm.yaml` or Attocode's
//! `.attocode/swarm.yaml` as-is (under `swarm:` or at the top level): the quality fields
//! (`atto_quality::QualityConfig`) plus the swarm's own. Unknown keys are warned about,
//! not fatal; a wrong type is an error naming the file and line.

use std::path::{Path, PathBuf};

use atto_quality::QualityConfig;
use serde::{Deserialize, Serialize};

/// How workers share the workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Isolation {
    /// Every worker works in the workspace; tasks with overlapping files never run together.
    #[default]
    Shared,
    /// Every worker gets its own git worktree, merged back when its task passes.
    Worktree,
}

/// Models by role; empty means the session's model.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RoleModels {
    /// Decomposition and enrichment.
    pub decomposer: String,
    /// Workers.
    pub worker: String,
    /// Workers of test tasks (empty: `worker`).
    pub tester: String,
    /// Tried in order when a model's circuit breaker is open.
    pub fallback: Vec<String>,
}

/// Everything a swarm run is configured by.
#[derive(Debug, Clone, PartialEq)]
pub struct SwarmConfig {
    /// The quality pipeline's fields.
    pub quality: QualityConfig,
    /// Run the post-decomposition enrichment pipeline.
    pub enable_task_enrichment: bool,
    /// Descriptions shorter than this are thin.
    pub enrichment_min_description_chars: usize,
    /// Ask a person about a task that ran out of attempts.
    pub enable_user_intervention: bool,
    /// Attempts a task must have made before a person is asked.
    pub user_intervention_threshold: u32,
    /// Retries of a failed task (attempts = 1 + this).
    pub worker_retries: u32,
    /// Hard cap on dispatches of one task, whatever else happens.
    pub max_dispatches_per_task: u32,
    /// Workers running at once.
    pub max_workers: u32,
    /// Models by role.
    pub models: RoleModels,
    /// How workers share the workspace.
    pub isolation: Isolation,
    /// The command that starts a worker (see `worker::Template`); empty: this `atto exec`.
    pub worker_command: Vec<String>,
    /// Seconds one worker may run.
    pub worker_timeout_secs: u64,
    /// Tokens one worker may use (`None`: an even share of what is left).
    pub worker_max_tokens: Option<u64>,
    /// Tokens the whole swarm may use.
    pub max_budget_tokens: Option<u64>,
    /// Dollars the whole swarm may spend.
    pub max_budget_usd: Option<f64>,
    /// Tasks a decomposition may have.
    pub max_tasks: usize,
}

impl Default for SwarmConfig {
    fn default() -> Self {
        SwarmConfig {
            quality: QualityConfig::default(),
            enable_task_enrichment: true,
            enrichment_min_description_chars: 80,
            enable_user_intervention: false,
            user_intervention_threshold: 3,
            worker_retries: 2,
            max_dispatches_per_task: 5,
            max_workers: 4,
            models: RoleModels::default(),
            isolation: Isolation::Shared,
            worker_command: Vec::new(),
            worker_timeout_secs: 600,
            worker_max_tokens: None,
            max_budget_tokens: None,
            max_budget_usd: None,
            max_tasks: 30,
        }
    }
}

/// A swarm file that could not be used.
#[derive(Debug, thiserror::Error)]
#[error("invalid {path}: {message}. Fix it, or remove it to use the defaults")]
pub struct ConfigError {
    /// The file.
    pub path: PathBuf,
    /// What is wrong (with the line, when the parser knows it).
    pub message: String,
}

/// A loaded config and what was odd about it.
#[derive(Debug, Clone, PartialEq)]
pub struct Loaded {
    /// The settings.
    pub config: SwarmConfig,
    /// The file they came from (`None`: defaults).
    pub path: Option<PathBuf>,
    /// Keys that were not understood, as `file:line: unknown key 'x' (ignored)`.
    pub warnings: Vec<String>,
}

impl SwarmConfig {
    /// The settings of `workspace`: `.atto/swarm.yaml`, else `.attocode/swarm.yaml`, else
    /// the defaults.
    pub fn load(workspace: &Path) -> Result<Loaded, ConfigError> {
        for rel in [".atto/swarm.yaml", ".attocode/swarm.yaml"] {
            let path = workspace.join(rel);
            match std::fs::read_to_string(&path) {
                Ok(text) => return Self::parse(&text, &path),
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
                Err(err) => {
                    return Err(ConfigError {
                        path,
                        message: err.to_string(),
                    });
                }
            }
        }
        Ok(Loaded {
            config: SwarmConfig::default(),
            path: None,
            warnings: Vec::new(),
        })
    }

    /// Parses a swarm file's text.
    pub fn parse(text: &str, path: &Path) -> Result<Loaded, ConfigError> {
        let _ = (text, path);
        todo!("helper: config parsing")
    }
}
