//! What [`Sandbox::prepare`] works out from a [`SandboxConfig`] before it compiles
//! anything: the canonical paths, which read-only directories get placeholders, which
//! hidden paths stay visible, whether `/tmp` can be made private, and the gaps those
//! choices leave; then, from each compiled restriction, the [`Sandbox`] itself. Compiles
//! nothing and mounts nothing (the platform module does).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::session_dir::SessionDir;
use crate::{
    Compiled, MAX_PLACEHOLDERS, Sandbox, SandboxConfig, SandboxError, Writes, protections,
};

/// The paths a session's two restrictions are built from.
pub(crate) struct Plan {
    /// Canonical writable paths, the private temp dir included.
    pub(crate) writable: Vec<PathBuf>,
    /// Read-only directories, those of `create_read_only` without a placeholder included.
    pub(crate) read_only: Vec<PathBuf>,
    /// Directories that get an empty read-only placeholder per command.
    pub(crate) created: Vec<PathBuf>,
    /// Hidden paths, canonical, but those holding a writable path.
    pub(crate) hide: Vec<PathBuf>,
    pub(crate) session: Option<Arc<SessionDir>>,
    pub(crate) private_tmp: Option<PathBuf>,
    /// Whether a writable or read-only path lies beneath `/tmp`, so `/tmp` stays.
    pub(crate) under_tmp: bool,
    /// Restrictions the paths themselves keep from holding, in words.
    gaps: Vec<String>,
    /// Configured read-only directories that do not exist: a command may create them.
    missing: Vec<String>,
}

fn canonical(paths: &[PathBuf]) -> Vec<PathBuf> {
    paths
        .iter()
        .map(|p| p.canonicalize().unwrap_or_else(|_| p.clone()))
        .collect()
}

impl Plan {
    pub(crate) fn new(config: &SandboxConfig) -> Result<Plan, SandboxError> {
        let mut writable = canonical(&config.writable);
        let mut read_only = config.read_only.clone();
        let created = placeholders(config, &writable, &mut read_only);
        // A hidden path that holds a writable one (a workspace inside `~/.docker`) would
        // hide the workspace itself: it stays visible.
        let hide: Vec<PathBuf> = config
            .hide
            .iter()
            .filter_map(|p| p.canonicalize().ok())
            .filter(|p| !writable.iter().any(|w| w.starts_with(p)))
            .collect();
        let session = if config.private_tmp || !hide.is_empty() {
            Some(Arc::new(SessionDir::create()?))
        } else {
            None
        };
        let private_tmp = session
            .as_ref()
            .filter(|_| config.private_tmp)
            .map(|s| s.tmp());
        // `/tmp` is only replaced when nothing the command must reach lies beneath it.
        let tmp_root = Path::new("/tmp")
            .canonicalize()
            .unwrap_or_else(|_| PathBuf::from("/tmp"));
        let under_tmp = writable
            .iter()
            .chain(read_only.iter())
            .any(|p| p.starts_with(&tmp_root));
        let mut gaps = Vec::new();
        if let Some(tmp) = &private_tmp {
            writable.push(tmp.clone());
            if under_tmp {
                gaps.push(format!(
                    "/tmp is not private (the workspace lies beneath it): TMPDIR points to the \
                     private {} and the rest of /tmp is read-only",
                    tmp.display()
                ));
            }
        }
        let missing = missing_read_only(&read_only, &writable);
        Ok(Plan {
            writable,
            read_only,
            created,
            hide,
            session,
            private_tmp,
            under_tmp,
            gaps,
            missing,
        })
    }

    /// The private temp dir, when it can be mounted at `/tmp`.
    pub(crate) fn mounted_tmp(&self) -> Option<&Path> {
        self.private_tmp.as_deref().filter(|_| !self.under_tmp)
    }

    /// The sandbox of one compiled restriction: the workspace one with its no-write
    /// sibling, or the no-write one itself (`no_write` is `None`).
    pub(crate) fn sandbox(
        &self,
        config: &SandboxConfig,
        compiled: Compiled,
        writable: Vec<PathBuf>,
        no_write: Option<Arc<Sandbox>>,
    ) -> Sandbox {
        let mut all_gaps = self.gaps.clone();
        all_gaps.extend(compiled.gaps.iter().cloned());
        // Without the namespaces there is nothing to cover a placeholder with.
        let mut missing = self.missing.clone();
        if no_write.is_some() && compiled.namespaces.is_err() {
            missing.extend(self.created.iter().map(|d| d.display().to_string()));
        }
        let protections = protections::of(&protections::Facts {
            compiled: &compiled,
            config,
            missing: &missing,
            tmp_under_workspace: self.under_tmp,
        });
        let tmpdir = self.private_tmp.as_ref().map(|tmp| {
            if compiled.tmp_mounted {
                PathBuf::from("/tmp")
            } else {
                tmp.clone()
            }
        });
        Sandbox {
            protections,
            mounted_tmp: self.private_tmp.clone().filter(|_| compiled.tmp_mounted),
            tmpdir,
            prepared: Arc::new(compiled.prepared),
            writable,
            read_only: compiled.read_only,
            protects_read_only: compiled.protects_read_only,
            allow_network: config.allow_network,
            allow_unix_sockets: config.allow_unix_sockets,
            gaps: all_gaps,
            writes: if no_write.is_some() {
                Writes::Workspace
            } else {
                Writes::Nothing
            },
            no_write,
            _session: self.session.clone(),
        }
    }
}

/// Those of `create_read_only` that do not exist beneath a writable path get a
/// placeholder per command (returned); the rest join `read_only` like any other (one
/// beyond the limit stays missing, and so a gap).
fn placeholders(
    config: &SandboxConfig,
    writable: &[PathBuf],
    read_only: &mut Vec<PathBuf>,
) -> Vec<PathBuf> {
    let mut created: Vec<PathBuf> = Vec::new();
    for dir in &config.create_read_only {
        let beneath = match (dir.parent().map(Path::canonicalize), dir.file_name()) {
            (Some(Ok(parent)), Some(name)) if writable.iter().any(|w| parent.starts_with(w)) => {
                Some(parent.join(name))
            }
            _ => None,
        };
        match beneath {
            Some(path)
                if std::fs::symlink_metadata(&path).is_err()
                    && created.len() < MAX_PLACEHOLDERS
                    && !created.contains(&path) =>
            {
                created.push(path);
            }
            _ => read_only.push(dir.clone()),
        }
    }
    created
}

/// Configured read-only directories that do not exist beneath a writable path.
fn missing_read_only(read_only: &[PathBuf], writable: &[PathBuf]) -> Vec<String> {
    read_only
        .iter()
        .filter(|d| !d.exists())
        .filter(|d| {
            d.parent()
                .and_then(|p| p.canonicalize().ok())
                .is_some_and(|p| writable.iter().any(|w| p.starts_with(w)))
        })
        .map(|d| d.display().to_string())
        .collect()
}
