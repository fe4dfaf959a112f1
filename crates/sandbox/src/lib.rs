//! OS sandbox for the commands atto runs on the model's behalf (the `bash` tool).
//!
//! Landlock limits writes (create, remove, rename, write, truncate, make directories,
//! links, devices ...) to the configured writable paths plus the few character devices
//! normal shells need; reads and execution stay free. Unless network access is allowed,
//! Landlock's TCP rules (ABI 4+) and a seccomp filter that fails `socket()` for every
//! family but `AF_UNIX` keep the command off the network.
//!
//! Owns: probing what the kernel offers ([`Sandbox::probe`]), compiling the restriction
//! once per session ([`Sandbox::prepare`]), installing it in a child between fork and exec
//! ([`Sandbox::apply`]) so atto itself is never restricted, and recognising a write the
//! sandbox denied ([`Sandbox::denied_write`]).
//! Deliberately does not: decide when to sandbox (core and the permission mode do), run
//! commands (the `bash` tool does), or fall back to asking when there is no sandbox
//! (policy does, from [`SandboxStatus`]).

mod denial;
#[cfg(target_os = "linux")]
mod linux;
#[cfg(not(target_os = "linux"))]
mod other;

#[cfg(target_os = "linux")]
use linux as imp;
#[cfg(not(target_os = "linux"))]
use other as imp;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

pub use denial::DeniedWrite;

/// What a sandboxed command may do.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SandboxConfig {
    /// Directories (or files) beneath which the command may write: the workspace and the
    /// temp dir(s). Each must exist when the sandbox is prepared.
    pub writable: Vec<PathBuf>,
    /// Whether the command may use the network.
    pub allow_network: bool,
}

/// Whether one command ran sandboxed; recorded on every `bash` result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum SandboxStatus {
    /// The kernel accepted the restriction before the command started (a child whose
    /// restriction fails never starts).
    Applied {
        /// Parts of the configured restriction this kernel cannot enforce, in words.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        gaps: Vec<String>,
    },
    /// The command ran without the sandbox.
    NotApplied {
        /// Why, e.g. "sandbox off" or "Landlock not supported by this kernel (ABI 0)".
        reason: String,
    },
}

/// What the running kernel offers, for a one-time notice.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SandboxSupport {
    /// Landlock ABI version; 0 when the kernel has no usable Landlock.
    pub landlock_abi: u32,
    /// Why Landlock cannot be used, when it cannot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub landlock_unavailable: Option<String>,
    /// Whether seccomp filters that return an errno are available.
    pub seccomp: bool,
}

impl SandboxSupport {
    /// A sentence for the user when the sandbox is missing or partial; `None` when the
    /// kernel offers everything the sandbox uses.
    pub fn notice(&self) -> Option<String> {
        match (&self.landlock_unavailable, self.seccomp) {
            (Some(why), _) => Some(format!(
                "no OS sandbox: {why}; commands that may change files will ask first"
            )),
            (None, false) => Some(
                "OS sandbox without seccomp: only TCP is kept off the network (UDP and DNS are not)"
                    .to_string(),
            ),
            (None, true) if self.landlock_abi < 4 => Some(format!(
                "OS sandbox on Landlock ABI {}: the network is blocked by seccomp only",
                self.landlock_abi
            )),
            (None, true) => None,
        }
    }
}

/// Why the sandbox could not be prepared. Commands then run unsandboxed, and the caller
/// should say so ([`SandboxError::status`]).
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// The kernel (or platform) offers no Landlock.
    #[error("{reason}")]
    Unsupported {
        /// E.g. "Landlock not supported by this kernel (ABI 0)".
        reason: String,
    },
    /// A writable path could not be opened.
    #[error("sandbox: cannot open writable path {path}: {source}")]
    WritablePath {
        /// The configured path.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The kernel refused the Landlock ruleset.
    #[error("sandbox: the kernel refused the Landlock ruleset: {0}")]
    Landlock(String),
    /// The seccomp filter could not be built.
    #[error("sandbox: cannot build the seccomp network filter: {0}")]
    Seccomp(String),
}

impl SandboxError {
    /// The status to record on a command that ran without the sandbox for this reason.
    pub fn status(&self) -> SandboxStatus {
        SandboxStatus::NotApplied {
            reason: self.to_string(),
        }
    }
}

/// A restriction compiled once per session and applied cheaply to each command.
#[derive(Debug)]
pub struct Sandbox {
    prepared: Arc<imp::Prepared>,
    writable: Vec<PathBuf>,
    allow_network: bool,
    gaps: Vec<String>,
}

impl Sandbox {
    /// Compiles the Landlock ruleset and the seccomp filter for `config`. Fails when the
    /// kernel has no Landlock (the error says why) or refuses the ruleset.
    pub fn prepare(config: &SandboxConfig) -> Result<Sandbox, SandboxError> {
        let writable: Vec<PathBuf> = config
            .writable
            .iter()
            .map(|p| p.canonicalize().unwrap_or_else(|_| p.clone()))
            .collect();
        let (prepared, gaps) = imp::prepare(&writable, config.allow_network)?;
        Ok(Sandbox {
            prepared: Arc::new(prepared),
            writable,
            allow_network: config.allow_network,
            gaps,
        })
    }

    /// What the running kernel offers.
    pub fn probe() -> SandboxSupport {
        imp::probe()
    }

    /// Makes `cmd` restrict its child between fork and exec. If the kernel refuses the
    /// restriction there, the child does not start and `spawn` returns the error, so a
    /// command that started ran restricted. The parent is never restricted.
    pub fn apply(&self, cmd: &mut tokio::process::Command) -> SandboxStatus {
        imp::install(&self.prepared, cmd);
        SandboxStatus::Applied {
            gaps: self.gaps.clone(),
        }
    }

    /// Whether sandboxed commands may use the network.
    pub fn allows_network(&self) -> bool {
        self.allow_network
    }

    /// The paths beneath which sandboxed commands may write (canonical where they exist).
    pub fn writable(&self) -> &[PathBuf] {
        &self.writable
    }

    /// One line for a command's result, e.g. `writes limited to /ws, /tmp; network off`.
    pub fn summary(&self) -> String {
        let paths: Vec<String> = self
            .writable
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        let net = if self.allow_network {
            "network allowed"
        } else {
            "network off"
        };
        let mut line = format!("writes limited to {}; {net}", paths.join(", "));
        for gap in &self.gaps {
            line.push_str("; ");
            line.push_str(gap);
        }
        line
    }

    /// Recognises, in a sandboxed command's output, a write the sandbox denied: a
    /// "Permission denied" (or read-only / not permitted) error naming a path outside the
    /// writable paths that atto itself could write. `cwd` resolves relative paths.
    pub fn denied_write(&self, output: &str, cwd: &Path) -> Option<DeniedWrite> {
        denial::find(output, cwd, &self.writable)
    }
}
