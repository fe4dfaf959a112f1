//! The seed's SwarmConfig, read from `.atto/swarm.yaml` or Attocode's
//! `.attocode/swarm.yaml` as-is (under `swarm:` or at the top level): the quality fields
//! (`atto_quality::QualityConfig`) plus the swarm's own. Unknown keys are warned about,
//! not fatal; a wrong type is an error naming the file and line.

use std::path::{Path, PathBuf};

use atto_quality::QualityConfig;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_saphyr::Spanned;

mod launch;

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
    pub worker_command: crate::worker::WorkerCommand,
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
    /// Where workers start: here, or remote (their work then travels through git).
    pub launcher: crate::remote::launcher::Launcher,
    /// What each Slurm job asks for (`launcher: slurm`).
    pub slurm: crate::remote::launcher::Slurm,
    /// The hosts of `launcher: ssh`.
    pub ssh: crate::remote::launcher::Ssh,
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
            worker_command: crate::worker::WorkerCommand::default(),
            worker_timeout_secs: 600,
            worker_max_tokens: None,
            max_budget_tokens: None,
            max_budget_usd: None,
            max_tasks: 30,
            launcher: crate::remote::launcher::Launcher::Local,
            slurm: crate::remote::launcher::Slurm::default(),
            ssh: crate::remote::launcher::Ssh::default(),
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
    /// The file's text as it was parsed (empty for the defaults): what the user trusts.
    pub text: String,
    /// Keys that were not understood, as `file:line: unknown key 'x' (ignored)`.
    pub warnings: Vec<String>,
    /// The settings that start a process or choose a model (`line 3: worker_command`):
    /// the file is used only once the user trusted its content. Empty when every setting
    /// is one of [`HARMLESS_KEYS`].
    pub needs_trust: Vec<String>,
}

/// Settings a repository may set without the user's trust: they neither start a process
/// nor choose a model, only shape and bound the run. Any other setting atto reads needs
/// trust, so a setting added later is trusted-only until it is listed here.
pub const HARMLESS_KEYS: &[&str] = &[
    "swarm",
    "quality_gates",
    "quality_threshold",
    "test_quality_threshold",
    "test_require_execution_evidence",
    "enable_verification",
    "enable_concrete_validation",
    "max_verification_retries",
    "verification_timeout_secs",
    "enable_task_enrichment",
    "enrichment_min_description_chars",
    "enable_user_intervention",
    "user_intervention_threshold",
    "worker_retries",
    "max_dispatches_per_task",
    "max_workers",
    "isolation",
    "worker_timeout_secs",
    "worker_max_tokens",
    "max_budget_tokens",
    "max_budget_usd",
    "max_tasks",
];

impl SwarmConfig {
    /// The settings of `workspace`: `.atto/swarm.yaml`, else `.attocode/swarm.yaml`, else
    /// the defaults.
    pub fn load(workspace: &Path) -> Result<Loaded, ConfigError> {
        let found = atto_quality::config::find(workspace).map_err(|e| ConfigError {
            path: e.path,
            message: e.message,
        })?;
        if let Some((path, text)) = found {
            return Self::parse(&text, &path);
        }
        Ok(Loaded {
            config: SwarmConfig::default(),
            path: None,
            text: String::new(),
            warnings: Vec::new(),
            needs_trust: Vec::new(),
        })
    }

    /// Parses a swarm file's text: the swarm's fields here, the quality fields by
    /// `QualityConfig::parse`. Unknown keys become warnings; a wrong type or a value out
    /// of range is an error naming the line and the key.
    pub fn parse(text: &str, path: &Path) -> Result<Loaded, ConfigError> {
        let error = |message: String| ConfigError {
            path: path.to_path_buf(),
            message,
        };
        let mut loaded = Loaded {
            config: SwarmConfig::default(),
            path: Some(path.to_path_buf()),
            text: text.to_owned(),
            warnings: Vec::new(),
            needs_trust: Vec::new(),
        };
        let root: Option<Spanned<Node>> =
            serde_saphyr::from_str(text).map_err(|e| error(yaml_error(&e)))?;
        let top = match root {
            None => return Ok(loaded),
            Some(Spanned {
                value: Node::Map(top),
                ..
            }) => top,
            Some(Spanned {
                value: Node::Null, ..
            }) => return Ok(loaded),
            Some(other) => {
                return Err(error(format!(
                    "line {}: expected a mapping of settings, got {}",
                    other.referenced.line(),
                    other.value.describe()
                )));
            }
        };
        let mut warn = |line: u64, key: &str| {
            loaded.warnings.push(format!(
                "{}:{line}: unknown key '{key}' (ignored)",
                path.display()
            ));
        };
        // Like `QualityConfig::parse`: a `swarm:` mapping holds the settings; without
        // one (or with an empty one) they are at the top level.
        let swarm = top.iter().find(|(k, _)| k.value == "swarm").map(|(_, v)| v);
        let settings = match swarm {
            Some(Spanned {
                value: Node::Map(fields),
                ..
            }) => {
                for (key, _) in top.iter().filter(|(k, _)| k.value != "swarm") {
                    warn(key.referenced.line(), &key.value);
                }
                fields
            }
            Some(Spanned {
                value: Node::Null, ..
            })
            | None => &top,
            Some(other) => {
                return Err(error(format!(
                    "line {}: swarm: expected a mapping, got {}",
                    other.referenced.line(),
                    other.value.describe()
                )));
            }
        };
        let mut needs_trust = Vec::new();
        for (key, value) in settings {
            let field = Field::new(key, value);
            let known = read_field(&mut loaded.config, &field, &mut warn).map_err(error)?;
            if known && !field.node.is_null() && !HARMLESS_KEYS.contains(&field.key.as_str()) {
                needs_trust.push(format!("line {}: {}", field.line, field.key));
            }
        }
        loaded.needs_trust = needs_trust;
        launch::check(&loaded.config).map_err(error)?;
        loaded.config.quality = QualityConfig::parse(text, path)
            .map_err(|e| error(quality_error(&e.message, text, settings)))?;
        Ok(loaded)
    }
}

/// Keys the quality pipeline reads (`atto_quality::QualityConfig::parse` owns them);
/// listed only so they are not warned about.
const QUALITY_KEYS: &[&str] = &[
    "quality_gates",
    "quality_threshold",
    "test_quality_threshold",
    "test_require_execution_evidence",
    "enable_verification",
    "enable_concrete_validation",
    "max_verification_retries",
    "quality_gate_model",
    "verification_timeout_secs",
];

/// Reads one setting into `c`: `Ok(false)` when the key is not one atto reads (warned
/// about); `Err` says what is wrong with its value, and where.
fn read_field(
    c: &mut SwarmConfig,
    f: &Field<'_>,
    warn: &mut dyn FnMut(u64, &str),
) -> Result<bool, String> {
    if f.node.is_null() {
        // An empty value keeps the default, as it does for the quality fields.
        return Ok(true);
    }
    match f.key.as_str() {
        "enable_task_enrichment" => c.enable_task_enrichment = f.bool()?,
        "enrichment_min_description_chars" => {
            c.enrichment_min_description_chars = f.int(0, usize::MAX as u128)? as usize;
        }
        "enable_user_intervention" => c.enable_user_intervention = f.bool()?,
        "user_intervention_threshold" => {
            c.user_intervention_threshold = f.int(1, u32::MAX.into())? as u32;
        }
        "worker_retries" => c.worker_retries = f.int(0, 10)? as u32,
        "max_dispatches_per_task" => c.max_dispatches_per_task = f.int(1, 20)? as u32,
        "max_workers" => c.max_workers = f.int(1, 20)? as u32,
        "models" => read_models(&mut c.models, f, warn)?,
        "isolation" => {
            c.isolation = match f.string()?.as_str() {
                "shared" => Isolation::Shared,
                "worktree" => Isolation::Worktree,
                other => return Err(f.bad(&format!("must be shared or worktree, not {other:?}"))),
            }
        }
        "worker_command" => {
            let words = f.strings()?;
            crate::worker::Template::check(&words).map_err(|e| f.bad(&e))?;
            c.worker_command.words = words;
        }
        "worker_timeout_secs" => c.worker_timeout_secs = f.int(1, u64::MAX.into())? as u64,
        "worker_max_tokens" => c.worker_max_tokens = Some(f.int(1, u64::MAX.into())? as u64),
        "max_budget_tokens" => c.max_budget_tokens = Some(f.int(1, u64::MAX.into())? as u64),
        "max_budget_usd" => c.max_budget_usd = Some(f.positive()?),
        "max_tasks" => c.max_tasks = f.int(1, 100)? as usize,
        "launcher" | "slurm" | "ssh" => launch::read(c, f, warn)?,
        "swarm" => {}
        k if QUALITY_KEYS.contains(&k) => {}
        other => {
            warn(f.line, other);
            return Ok(false);
        }
    }
    Ok(true)
}

/// `models: {decomposer, worker, tester, fallback}`.
fn read_models(
    m: &mut RoleModels,
    f: &Field<'_>,
    warn: &mut dyn FnMut(u64, &str),
) -> Result<(), String> {
    let Node::Map(entries) = f.node else {
        return Err(f.expected("a mapping of decomposer, worker, tester, fallback"));
    };
    for (key, value) in entries {
        let mut field = Field::new(key, value);
        field.key = format!("models.{}", key.value);
        if field.node.is_null() {
            continue;
        }
        match key.value.as_str() {
            "decomposer" => m.decomposer = field.string()?,
            "worker" => m.worker = field.string()?,
            "tester" => m.tester = field.string()?,
            "fallback" => m.fallback = field.strings()?,
            _ => warn(field.line, &field.key),
        }
    }
    Ok(())
}

/// One setting: its key (dotted when nested), the line of the key, and its value.
struct Field<'a> {
    key: String,
    line: u64,
    node: &'a Node,
}

impl<'a> Field<'a> {
    fn new(key: &Spanned<String>, value: &'a Spanned<Node>) -> Field<'a> {
        Field {
            key: key.value.clone(),
            line: key.referenced.line(),
            node: &value.value,
        }
    }

    /// `line 4: worker_retries: <what>`.
    fn bad(&self, what: &str) -> String {
        format!("line {}: {}: {what}", self.line, self.key)
    }

    fn expected(&self, what: &str) -> String {
        self.bad(&format!("expected {what}, got {}", self.node.describe()))
    }

    fn bool(&self) -> Result<bool, String> {
        match self.node {
            Node::Bool(b) => Ok(*b),
            _ => Err(self.expected("true or false")),
        }
    }

    /// An integer in `min..=max`.
    fn int(&self, min: u128, max: u128) -> Result<u128, String> {
        let Node::Int(n) = self.node else {
            return Err(self.expected("an integer"));
        };
        // Bounds of `u32::MAX` and more are the type's, not a rule worth stating.
        let unbounded = max >= u128::from(u32::MAX);
        match u128::try_from(*n) {
            Ok(n) if (min..=max).contains(&n) => Ok(n),
            _ if !unbounded => Err(self.bad(&format!("must be {min} to {max}, not {n}"))),
            Ok(n) if n > max => Err(self.bad(&format!("must be at most {max}, not {n}"))),
            _ => Err(self.bad(&format!("must be at least {min}, not {n}"))),
        }
    }

    /// A number above zero.
    fn positive(&self) -> Result<f64, String> {
        let n = match self.node {
            // Integers written for dollars are exact far beyond any budget.
            Node::Int(n) => *n as f64,
            Node::Float(x) => *x,
            _ => return Err(self.expected("a number")),
        };
        if n.is_finite() && n > 0.0 {
            Ok(n)
        } else {
            Err(self.bad(&format!("must be more than 0, not {n}")))
        }
    }

    fn string(&self) -> Result<String, String> {
        match self.node {
            Node::Str(s) => Ok(s.clone()),
            _ => Err(self.expected("a string")),
        }
    }

    fn strings(&self) -> Result<Vec<String>, String> {
        let Node::Seq(items) = self.node else {
            return Err(self.expected("a list of strings"));
        };
        items
            .iter()
            .map(|item| match &item.value {
                Node::Str(s) => Ok(s.clone()),
                other => Err(format!(
                    "line {}: {}: expected a list of strings, got {}",
                    item.referenced.line(),
                    self.key,
                    other.describe()
                )),
            })
            .collect()
    }
}

/// A YAML node, keeping where each key and value was written so warnings and errors can
/// name lines.
#[derive(Debug)]
enum Node {
    Map(Vec<(Spanned<String>, Spanned<Node>)>),
    Seq(Vec<Spanned<Node>>),
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(String),
    Null,
}

impl Node {
    fn is_null(&self) -> bool {
        matches!(self, Node::Null)
    }

    /// What the node is, for "expected …, got …".
    fn describe(&self) -> String {
        match self {
            Node::Map(_) => "a mapping".to_owned(),
            Node::Seq(_) => "a list".to_owned(),
            Node::Bool(b) => b.to_string(),
            Node::Int(n) => n.to_string(),
            Node::Float(x) => x.to_string(),
            Node::Str(s) => format!("{s:?}"),
            Node::Null => "nothing".to_owned(),
        }
    }
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Node, D::Error> {
        deserializer.deserialize_any(NodeVisitor)
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a YAML value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Node, E> {
        Ok(Node::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Node, E> {
        Ok(Node::Int(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Node, E> {
        Ok(Node::Int(v.into()))
    }

    fn visit_i128<E>(self, v: i128) -> Result<Node, E> {
        Ok(Node::Int(v))
    }

    fn visit_u128<E: de::Error>(self, v: u128) -> Result<Node, E> {
        i128::try_from(v)
            .map(Node::Int)
            .map_err(|_| E::custom(format!("{v} is too large")))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Node, E> {
        Ok(Node::Float(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Node, E> {
        Ok(Node::Str(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Node, E> {
        Ok(Node::Str(v))
    }

    fn visit_unit<E>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }

    fn visit_none<E>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Node, D::Error> {
        Node::deserialize(deserializer)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Node::Seq(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        let mut entries = Vec::new();
        while let Some(entry) = map.next_entry()? {
            entries.push(entry);
        }
        Ok(Node::Map(entries))
    }
}

/// A parser error as one line: `line 3: <what>`.
fn yaml_error(err: &serde_saphyr::Error) -> String {
    let err = err.without_snippet();
    let what = strip_location(&err.to_string());
    match err.location() {
        Some(at) if at.line() > 0 => format!("line {}: {what}", at.line()),
        _ => what,
    }
}

/// `what` without the parser's `error: line 2 column 3: ` prefix and ` at line 2,
/// column 3` suffix (the line is put first by the caller), first line only.
fn strip_location(what: &str) -> String {
    let first = what.lines().next().unwrap_or_default();
    let first = match first.strip_prefix("error: line ") {
        Some(rest) => rest.split_once(": ").map_or(first, |(_, what)| what),
        None => first,
    };
    let first = match first.rfind(" at line ") {
        Some(at) => &first[..at],
        None => first,
    };
    first.trim().to_owned()
}

/// `QualityConfig::parse`'s complaint, with the key and line in front. The quality
/// parser does not always say which key (a type error under a flattened map names
/// neither), so each quality key of the file is tried alone until one fails.
fn quality_error(
    message: &str,
    text: &str,
    settings: &[(Spanned<String>, Spanned<Node>)],
) -> String {
    let what = strip_location(message);
    let quality = settings
        .iter()
        .filter(|(k, _)| QUALITY_KEYS.contains(&k.value.as_str()));
    if let Some((k, _)) = quality
        .clone()
        .find(|(k, _)| what.contains(k.value.as_str()))
    {
        return format!("line {}: {what}", k.referenced.line());
    }
    let culprit = quality.clone().find(|(k, v)| {
        let span = v.referenced.span();
        let raw = text
            .get(span.offset()..span.offset() + span.len())
            .unwrap_or("");
        QualityConfig::parse(&format!("{}: {raw}\n", k.value), Path::new("-")).is_err()
    });
    match culprit {
        Some((k, v)) => format!(
            "line {}: {}: {what} (got {})",
            k.referenced.line(),
            k.value,
            v.value.describe()
        ),
        None => what,
    }
}

#[cfg(test)]
mod tests;
