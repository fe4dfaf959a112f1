//! OS sandbox for the commands atto runs on the model's behalf (the `bash` tool).
//!
//! Owns: probing what the kernel offers ([`Sandbox::probe`]), compiling the two
//! restrictions (workspace-writable and no-write) once per session ([`Sandbox::prepare`]), installing it in a child between fork and exec
//! ([`Sandbox::apply`]) so atto itself is never restricted, and answering from atto's own
//! knowledge whether the sandbox lets a command write a path ([`Sandbox::permits_write`],
//! [`could_write`]). It never reads a command's output to decide anything: the command
//! controls what it prints.
//! Deliberately does not: decide when to sandbox (core and the permission mode do), run
//! commands or strip their environment (the `bash` tool does), or fall back to asking when
//! there is no sandbox (policy does, from [`SandboxStatus`] and the gaps).
//!
//! # What a sandboxed command cannot do
//!
//! - **Write outside the writable paths** (Landlock): create, remove, rename, write,
//!   truncate (ABI 3+), make directories, links or devices, except on a few character
//!   devices (`/dev/null`, `/dev/tty`, `/dev/pts/*` ...).
//! - **Write anything at all in the no-write sandbox** ([`Sandbox::no_write`], for what
//!   runs without a person's approval): every mount it sees is read-only, so writes fail
//!   with `EROFS`, but for its private `/tmp` and the devices.
//! - **Write the read-only directories** beneath them (the workspace's `.git`, `.atto`
//!   and `.attocode`, atto's own config and data): they are read-only bind mounts in the
//!   command's mount namespace, so writes fail with `EROFS`; for those of
//!   [`SandboxConfig::create_read_only`] that do not exist, each command gets an empty
//!   placeholder, made just before it starts, covered the same way and removed once no
//!   running command needs it (if still empty), so a command cannot create them either
//!   and the workspace looks as it did. Landlock forbids the command to mount or unmount
//!   anything, and a command running as uid 0 is moved into a further user namespace,
//!   where the mounts are locked and root's capabilities end.
//! - **Make devices**: seccomp fails `mknod` of character and block devices (`EACCES`),
//!   as root too.
//! - **See other processes**: each command is pid 1 of its own PID namespace with its own
//!   `/proc`, so atto, its parent shell and the user's processes do not exist for it (no
//!   `/proc/<pid>/environ` to read, no pid to signal).
//! - **Read the hidden paths** ([`SandboxConfig::hide`], the credential stores): an empty
//!   read-only directory (or empty file) is mounted over each.
//! - **Touch the shared `/tmp`** ([`SandboxConfig::private_tmp`]): a directory of the
//!   session is mounted at `/tmp`, and `TMPDIR=/tmp`.
//! - **Use the network** unless allowed: Landlock denies TCP bind/connect (ABI 4+), and a
//!   seccomp filter fails `socket()` (`EACCES`) for every family (but `AF_UNIX` when unix
//!   sockets are allowed), and `io_uring_setup`.
//! - **Reach unix sockets outside the command** while the network is off: abstract
//!   sockets made outside the command are scoped away by Landlock (ABI 6+), and unless
//!   [`SandboxConfig::allow_unix_sockets`], `socket(AF_UNIX, ..)` fails (`EACCES`), so
//!   ssh-agent, the Docker socket, D-Bus and the user's systemd are unreachable by path
//!   too (Landlock cannot restrict `connect()` on pathname sockets). `socketpair()` works.
//! - **Signal or trace processes outside itself** (PID namespace, and Landlock scoping,
//!   ABI 6+); `no_new_privs` keeps setuid programs from gaining privileges.
//!
//! # What it does not stop
//!
//! - **Reads** of everything not hidden that the user can read (other projects, keys
//!   kept elsewhere); the environment stripping in the `bash` tool hides variables.
//! - **Open file descriptors** it inherits (a socket or file atto left open without
//!   close-on-exec) keep working; atto opens its own files close-on-exec.
//! - **Everything in the writable paths**: a command can leave files in the workspace
//!   that something unsandboxed later executes or trusts (a build script, a `Makefile`,
//!   a nested repository's `.git` with hooks); a read-only directory that did not exist
//!   when the sandbox was prepared and gets no placeholder (the workspace's `.git`,
//!   which an empty directory would misrepresent), or that was removed since, may be
//!   created by a command, nor are mounts beneath a writable path that were made after
//!   the sandbox was prepared. An empty placeholder directory someone else makes while
//!   a command runs is removed with it.
//! - **Background processes outliving the command**: they end with it (its PID namespace
//!   ends when its shell exits).
//! - **Unix sockets when the network is allowed**, pathname unix sockets when
//!   [`SandboxConfig::allow_unix_sockets`] is set, and abstract sockets and signals on
//!   Landlock ABI < 6; such gaps are listed in [`SandboxStatus::Applied`], as is every
//!   namespace this system does not allow.
//! - **Resource use**: CPU, memory and disk are not limited here.
//! - **Kernel bugs**: it is a layer of the kernel's own access control, no stronger.

#[cfg(target_os = "linux")]
mod linux;
#[cfg(not(target_os = "linux"))]
mod other;
mod paths;
mod plan;
mod protections;
mod session_dir;

#[cfg(target_os = "linux")]
use linux as imp;
#[cfg(not(target_os = "linux"))]
use other as imp;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use atto_protocol::SandboxProtection;
use serde::{Deserialize, Serialize};

pub use paths::could_write;
use plan::Plan;
use session_dir::SessionDir;

/// What a sandboxed command may do.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SandboxConfig {
    /// Directories (or files) beneath which the command may write: the workspace and the
    /// temp dir(s). Each must exist when the sandbox is prepared.
    pub writable: Vec<PathBuf>,
    /// Directories beneath the writable paths that commands must not write: the
    /// workspace's `.git` and `.atto`, atto's config and data dirs. Those that exist when
    /// the sandbox is prepared are made read-only for every command, where the system
    /// allows mount namespaces ([`Sandbox::protects_read_only`]); the others are ignored.
    pub read_only: Vec<PathBuf>,
    /// Whether the command may use the network.
    pub allow_network: bool,
    /// With the network off, whether the command may still create unix sockets, and so
    /// reach pathname sockets it can name (ssh-agent, Docker, D-Bus, systemd). Abstract
    /// sockets made outside the command stay unreachable either way (Landlock ABI 6+).
    /// With the network allowed, all unix sockets are allowed too.
    pub allow_unix_sockets: bool,
    /// How a command enters the mount namespace that makes `read_only` read-only.
    pub mount_namespace: MountNamespace,
    /// Directories like `read_only` that must not be created either: beneath a writable
    /// path, one that does not exist when the sandbox is prepared gets an empty
    /// placeholder for each command of the writable sandbox, made just before the command
    /// starts and covered read-only in its mount namespace, and removed once no running
    /// command holds it if it is still empty. At most four; without mount namespaces they
    /// are a gap ([`SandboxProtection`] `missing_dirs`).
    pub create_read_only: Vec<PathBuf>,
    /// Files and directories commands must not read (credential stores): each that
    /// exists is covered by an empty read-only directory (or an empty file).
    pub hide: Vec<PathBuf>,
    /// Whether commands get a private `/tmp`: a directory of this session mounted over
    /// `/tmp`, writable, with `TMPDIR=/tmp`. Not mounted while a writable path lies
    /// beneath `/tmp` (the command could not reach it); that is a gap.
    pub private_tmp: bool,
}

/// How a command enters its private mount namespace.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum MountNamespace {
    /// A plain mount namespace when atto holds CAP_SYS_ADMIN (root), else a user
    /// namespace owning a mount namespace, as an ordinary user gets.
    #[default]
    Auto,
    /// Always through a user namespace, even as root: the path ordinary users take,
    /// selectable so it can be tested (and used) where atto runs as root.
    UserNamespace,
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

/// Where a prepared restriction lets commands write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Writes {
    /// The writable paths, minus the read-only directories.
    Workspace,
    /// Nothing: every mount is read-only, but the private temp dir and the devices.
    Nothing,
}

/// At most this many directories of [`SandboxConfig::create_read_only`] get placeholders:
/// the child holds their descriptors on its stack, where nothing may allocate.
pub(crate) const MAX_PLACEHOLDERS: usize = 4;

/// What one restriction is built from, with every path canonical.
#[derive(Debug)]
pub(crate) struct Layout<'a> {
    pub(crate) writes: Writes,
    /// Landlock's writable paths (the private temp dir included).
    pub(crate) writable: &'a [PathBuf],
    /// Directories made read-only beneath `writable`.
    pub(crate) read_only: &'a [PathBuf],
    /// Directories that do not exist beneath `writable`, made empty and read-only for
    /// each command while it runs (at most [`MAX_PLACEHOLDERS`]).
    pub(crate) created: &'a [PathBuf],
    /// Paths covered by `empty` (directories) or an empty file.
    pub(crate) hide: &'a [PathBuf],
    /// The empty directory for `hide`.
    pub(crate) empty: Option<&'a Path>,
    /// The private temp directory to mount over `/tmp`, when it can be.
    pub(crate) tmp: Option<&'a Path>,
}

/// What preparing compiled, and what it found this system cannot enforce.
#[derive(Debug)]
pub(crate) struct Compiled {
    pub(crate) prepared: imp::Prepared,
    /// Restrictions this system cannot enforce, in words.
    pub(crate) gaps: Vec<String>,
    /// The directories commands see read-only (canonical).
    pub(crate) read_only: Vec<PathBuf>,
    /// Whether every configured read-only directory that exists is protected.
    pub(crate) protects_read_only: bool,
    /// Whether the private temp dir is mounted at `/tmp` in the command's namespace.
    pub(crate) tmp_mounted: bool,
    /// Whether commands enter their PID, mount and user namespaces, or why not.
    pub(crate) namespaces: Result<(), String>,
    /// Whether the seccomp filter is installed.
    pub(crate) seccomp: bool,
    /// Whether commands run as uid 0.
    pub(crate) root: bool,
}

/// A restriction compiled once per session and applied cheaply to each command.
#[derive(Debug)]
pub struct Sandbox {
    prepared: Arc<imp::Prepared>,
    writable: Vec<PathBuf>,
    read_only: Vec<PathBuf>,
    protects_read_only: bool,
    allow_network: bool,
    allow_unix_sockets: bool,
    gaps: Vec<String>,
    /// `TMPDIR` for commands, when they get a private temp dir.
    tmpdir: Option<PathBuf>,
    /// The private temp dir, when commands see it at `/tmp`.
    mounted_tmp: Option<PathBuf>,
    /// Where this restriction lets commands write.
    writes: Writes,
    /// The no-write sibling; `None` on the no-write sandbox itself.
    no_write: Option<Arc<Sandbox>>,
    /// Each protection, applied or a gap.
    protections: Vec<SandboxProtection>,
    /// Keeps the private temp dir and the empty dir alive while a sandbox uses them.
    _session: Option<Arc<SessionDir>>,
}

impl Sandbox {
    /// Compiles the mount namespace plan (probing once, in a throwaway child, that this
    /// system allows it), the Landlock ruleset and the seccomp filter for `config`, twice:
    /// writable as configured, and no-write ([`Sandbox::no_write`]), so choosing between
    /// them costs nothing per command. Fails when the kernel has no Landlock (the error
    /// says why) or refuses the ruleset; a system without mount namespaces is a gap, not
    /// a failure.
    pub fn prepare(config: &SandboxConfig) -> Result<Sandbox, SandboxError> {
        let plan = Plan::new(config)?;
        let empty = plan.session.as_ref().map(|s| s.empty());
        let workspace = imp::prepare(
            &Layout {
                writes: Writes::Workspace,
                writable: &plan.writable,
                read_only: &plan.read_only,
                created: &plan.created,
                hide: &plan.hide,
                empty: empty.as_deref(),
                tmp: plan.mounted_tmp(),
            },
            config,
        )?;
        let no_write_writable: Vec<PathBuf> = plan.private_tmp.iter().cloned().collect();
        let no_write = imp::prepare(
            &Layout {
                writes: Writes::Nothing,
                writable: &no_write_writable,
                read_only: &[],
                created: &[],
                hide: &plan.hide,
                empty: empty.as_deref(),
                tmp: plan.mounted_tmp(),
            },
            config,
        )?;
        let no_write = Arc::new(plan.sandbox(config, no_write, no_write_writable, None));
        Ok(plan.sandbox(config, workspace, plan.writable.clone(), Some(no_write)))
    }

    /// What the running kernel offers.
    pub fn probe() -> SandboxSupport {
        imp::probe()
    }

    /// Makes `cmd` restrict its child between fork and exec. If the kernel refuses the
    /// restriction there, the child does not start and `spawn` returns the error, so a
    /// command that started ran restricted. The parent is never restricted. Sets
    /// `TMPDIR` when commands get a private temp dir.
    pub fn apply(&self, cmd: &mut tokio::process::Command) -> SandboxStatus {
        imp::install(&self.prepared, cmd);
        if let Some(tmpdir) = &self.tmpdir {
            cmd.env("TMPDIR", tmpdir);
        }
        SandboxStatus::Applied {
            gaps: self.gaps.clone(),
        }
    }

    /// The sandbox of the same session in which nothing is writable but the private
    /// temp dir and the devices (writes elsewhere fail with `EROFS`), for commands that
    /// run without a person's approval; `None` on that sandbox itself.
    pub fn no_write(&self) -> Option<&Arc<Sandbox>> {
        self.no_write.as_ref()
    }

    /// Each protection of this sandbox, applied or a gap, for the session's state.
    pub fn protections(&self) -> &[SandboxProtection] {
        &self.protections
    }

    /// Whether sandboxed commands may use the network.
    pub fn allows_network(&self) -> bool {
        self.allow_network
    }

    /// The paths beneath which sandboxed commands may write (canonical where they exist).
    pub fn writable(&self) -> &[PathBuf] {
        &self.writable
    }

    /// The directories sandboxed commands see read-only (canonical): the configured
    /// read-only directories that existed beneath a writable path at prepare time and
    /// the placeholders, or none when [`Sandbox::protects_read_only`] is false.
    pub fn read_only(&self) -> &[PathBuf] {
        &self.read_only
    }

    /// Whether every configured read-only directory that existed at prepare time is
    /// read-only for sandboxed commands. False when this system does not allow mount
    /// namespaces (the gap says so): then a command may write them, and the gate should
    /// ask before commands that might.
    pub fn protects_read_only(&self) -> bool {
        self.protects_read_only
    }

    /// Whether the sandbox lets a command write `path` (relative paths resolve against
    /// `cwd`, `..` and the symlinks of its existing part as the kernel would): beneath a
    /// writable path or one of the granted devices, and not beneath a read-only
    /// directory. Decided from the configuration alone, never from a command's output:
    /// "the command failed and it was parsed to write X, which the sandbox does not
    /// permit" is evidence atto can trust.
    pub fn permits_write(&self, path: &Path, cwd: &Path) -> bool {
        // What the command sees at `/tmp` is the private temp dir.
        let seen = paths::resolve(&cwd.join(path));
        let path = match (&self.mounted_tmp, seen.strip_prefix("/tmp")) {
            (Some(private), Ok(rest)) => private.join(rest),
            _ => seen,
        };
        paths::permitted(&path, cwd, &self.writable, &self.read_only)
    }

    /// One line for a command's result, e.g.
    /// `writes limited to /ws, /tmp (read-only: /ws/.git); unix sockets off, network off`.
    pub fn summary(&self) -> String {
        let paths: Vec<String> = self
            .writable
            .iter()
            .map(|p| {
                if self.mounted_tmp.as_ref() == Some(p) {
                    "/tmp (private)".to_string()
                } else {
                    p.display().to_string()
                }
            })
            .collect();
        let net = match (self.allow_network, self.allow_unix_sockets) {
            (true, _) => "network allowed",
            (false, true) => "unix sockets allowed, network off",
            (false, false) => "unix sockets off, network off",
        };
        let mut line = match self.writes {
            Writes::Workspace => format!("writes limited to {}", paths.join(", ")),
            Writes::Nothing => match &self.tmpdir {
                Some(tmp) => format!(
                    "read-only: nothing writable but a private temp dir ({}) and the devices",
                    tmp.display()
                ),
                None => "read-only: nothing writable but the devices".to_string(),
            },
        };
        if !self.read_only.is_empty() {
            let dirs: Vec<String> = self
                .read_only
                .iter()
                .map(|p| p.display().to_string())
                .collect();
            line.push_str(&format!(" (read-only: {})", dirs.join(", ")));
        }
        line.push_str("; ");
        line.push_str(net);
        for gap in &self.gaps {
            line.push_str("; ");
            line.push_str(gap);
        }
        line
    }
}
