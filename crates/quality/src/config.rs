//! The seed's SwarmConfig quality fields, read unchanged from `.atto/swarm.yaml` or
//! Attocode's `.attocode/swarm.yaml` (under `swarm:`, or at the top level). Fields this
//! crate does not use (enrichment, worker retries …) are left to their owners.

use std::path::{Path, PathBuf};

use serde::Deserialize;

/// How strictly results are judged.
#[derive(Debug, Clone, PartialEq)]
pub struct QualityConfig {
    /// Score results with the LLM judge.
    pub quality_gates: bool,
    /// Least judge score (1–5) that passes a task.
    pub quality_threshold: u8,
    /// Least judge score that passes a test task.
    pub test_quality_threshold: u8,
    /// A test task must show a test run (V11).
    pub test_require_execution_evidence: bool,
    /// Run the project's tests, type checks and lint.
    pub enable_verification: bool,
    /// Check the modified files themselves.
    pub enable_concrete_validation: bool,
    /// Attempts after a failed verification before the task fails.
    pub max_verification_retries: u32,
    /// The judge's model instead of the worker's (`""`: the session's).
    pub quality_gate_model: String,
    /// Seconds one verification command may run.
    pub verification_timeout_secs: u64,
}

impl Default for QualityConfig {
    fn default() -> Self {
        QualityConfig {
            quality_gates: true,
            quality_threshold: 3,
            test_quality_threshold: 4,
            test_require_execution_evidence: true,
            enable_verification: true,
            enable_concrete_validation: true,
            max_verification_retries: 2,
            quality_gate_model: String::new(),
            verification_timeout_secs: 300,
        }
    }
}

/// A swarm file that could not be used.
#[derive(Debug, thiserror::Error)]
#[error("invalid {path}: {message}. Fix it, or remove it to use the defaults")]
pub struct ConfigError {
    /// The file.
    pub path: PathBuf,
    /// What is wrong.
    pub message: String,
}

#[derive(Deserialize)]
struct File {
    swarm: Option<QualityFields>,
    #[serde(flatten)]
    top: QualityFields,
}

/// The quality fields, each optional so a file sets only what it changes.
#[derive(Debug, Default, Deserialize)]
struct QualityFields {
    quality_gates: Option<bool>,
    quality_threshold: Option<u8>,
    test_quality_threshold: Option<u8>,
    test_require_execution_evidence: Option<bool>,
    enable_verification: Option<bool>,
    enable_concrete_validation: Option<bool>,
    max_verification_retries: Option<u32>,
    quality_gate_model: Option<String>,
    verification_timeout_secs: Option<u64>,
}

/// The workspace's swarm file and its text: `.atto/swarm.yaml`, else Attocode's
/// `.attocode/swarm.yaml`; `None` when there is neither.
pub fn find(workspace: &Path) -> Result<Option<(PathBuf, String)>, ConfigError> {
    for rel in [".atto/swarm.yaml", ".attocode/swarm.yaml"] {
        let path = workspace.join(rel);
        match std::fs::read_to_string(&path) {
            Ok(text) => return Ok(Some((path, text))),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
            Err(err) => {
                return Err(ConfigError {
                    path,
                    message: err.to_string(),
                });
            }
        }
    }
    Ok(None)
}

impl QualityConfig {
    /// The settings of `workspace`: `.atto/swarm.yaml`, else `.attocode/swarm.yaml`, else
    /// the defaults.
    pub fn load(workspace: &Path) -> Result<QualityConfig, ConfigError> {
        match find(workspace)? {
            Some((path, text)) => Self::parse(&text, &path),
            None => Ok(QualityConfig::default()),
        }
    }

    /// Parses a swarm file's text.
    pub fn parse(text: &str, path: &Path) -> Result<QualityConfig, ConfigError> {
        let error = |message: String| ConfigError {
            path: path.to_path_buf(),
            message,
        };
        let file: File = if text.trim().is_empty() {
            File {
                swarm: None,
                top: QualityFields::default(),
            }
        } else {
            serde_saphyr::from_str(text).map_err(|e| error(e.to_string()))?
        };
        let s = file.swarm.unwrap_or(file.top);
        let mut c = QualityConfig::default();
        let set = |slot: &mut u8, v: Option<u8>, name: &str| -> Result<(), ConfigError> {
            match v {
                Some(n) if (1..=5).contains(&n) => {
                    *slot = n;
                    Ok(())
                }
                Some(n) => Err(error(format!("{name} must be 1 to 5, not {n}"))),
                None => Ok(()),
            }
        };
        set(
            &mut c.quality_threshold,
            s.quality_threshold,
            "quality_threshold",
        )?;
        set(
            &mut c.test_quality_threshold,
            s.test_quality_threshold,
            "test_quality_threshold",
        )?;
        c.quality_gates = s.quality_gates.unwrap_or(c.quality_gates);
        c.test_require_execution_evidence = s
            .test_require_execution_evidence
            .unwrap_or(c.test_require_execution_evidence);
        c.enable_verification = s.enable_verification.unwrap_or(c.enable_verification);
        c.enable_concrete_validation = s
            .enable_concrete_validation
            .unwrap_or(c.enable_concrete_validation);
        c.max_verification_retries = s
            .max_verification_retries
            .unwrap_or(c.max_verification_retries);
        c.quality_gate_model = s.quality_gate_model.unwrap_or_default();
        c.verification_timeout_secs = s
            .verification_timeout_secs
            .unwrap_or(c.verification_timeout_secs)
            .max(1);
        Ok(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attocodes_swarm_file_is_read_unchanged() {
        let text = "# .attocode/swarm.yaml\nswarm:\n  quality_gates: false\n  quality_threshold: \
                    4\n  enable_task_enrichment: true\n  max_verification_retries: 1\n  \
                    quality_gate_model: small\n";
        let c = QualityConfig::parse(text, Path::new("swarm.yaml")).unwrap();
        assert!(!c.quality_gates);
        assert_eq!(c.quality_threshold, 4);
        assert_eq!(c.test_quality_threshold, 4);
        assert_eq!(c.max_verification_retries, 1);
        assert_eq!(c.quality_gate_model, "small");
    }

    #[test]
    fn top_level_fields_and_bad_values_are_named() {
        let c = QualityConfig::parse("enable_verification: false\n", Path::new("s.yaml")).unwrap();
        assert!(!c.enable_verification);
        let err = QualityConfig::parse("swarm:\n  quality_threshold: 9\n", Path::new("s.yaml"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("quality_threshold must be 1 to 5"), "{err}");
        let err = QualityConfig::parse("swarm: [1, 2", Path::new("s.yaml")).unwrap_err();
        assert!(err.to_string().contains("s.yaml"));
    }

    #[test]
    fn no_file_means_the_seed_defaults() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            QualityConfig::load(dir.path()).unwrap(),
            QualityConfig::default()
        );
    }
}
