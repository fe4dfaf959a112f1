//! Owns atto's settings: the one schema table (every key, its type, default, doc and where
//! it may be set), loading the config files, profiles, origins, `config show` and the reference.
//! Must never act on a setting or start anything: the crates that use a value decide what it means.

mod file;
mod layers;
mod reference;
mod schema;
mod show;

pub use file::{
    CheckpointsConfig, Config, ConfigError, ContextConfig, LearningConfig, LimitsConfig,
    PlannerConfig, ProfileConfig, ProjectConfig, RetryConfig, RouteConfig, SandboxTable,
    SubagentsConfig, default_path,
};
pub use layers::Loaded;
pub use reference::reference;
pub use schema::{KEYS, Key, SetIn, key};
pub use show::{Row, rows};
