//! The command's namespaces: planning, before fork, the PID namespace (its own `/proc`),
//! the private mount namespace in which it sees the read-only directories read-only, the
//! hidden paths empty and its private `/tmp` (in the no-write sandbox, every mount
//! read-only), and the user namespace that locks it all; and probing once whether this
//! system allows it.
//!
//! Landlock cannot take a subtree (the workspace's `.git`) back out of a granted one (the
//! workspace), so each command gets its own mount namespace in which those directories
//! are bind mounts made read-only. The child-side syscalls live in `child.rs`; this module
//! only prepares the memory they read and decides, by running them once in a throwaway
//! child, whether they work here. Does not restrict writes anywhere else (Landlock does).

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::{Layout, MountNamespace, Writes};

use super::child;

/// Everything the child needs to enter its namespaces, built before fork.
#[derive(Debug)]
pub(super) struct Plan {
    /// Flags of the first `unshare`: a PID and a mount namespace, in a user namespace
    /// too unless atto holds CAP_SYS_ADMIN.
    pub(super) unshare: libc::c_int,
    /// Whether a second user + mount namespace follows the mounts. Needed when the
    /// command runs as uid 0: it keeps its capabilities across exec, and in a namespace of
    /// its own it could clone the workspace mount without the read-only mounts on top.
    /// Mounts copied into a less privileged namespace are locked together: they can no
    /// longer be unmounted, made writable or cloned apart, and root's capabilities end
    /// at that namespace (no devices, no other process's memory).
    pub(super) lock: bool,
    /// `/proc/self/uid_map` contents: the effective uid mapped to itself.
    pub(super) uid_map: Vec<u8>,
    /// `/proc/self/gid_map` contents: the effective gid mapped to itself.
    pub(super) gid_map: Vec<u8>,
    /// Whether every mount is made read-only first (the no-write sandbox).
    pub(super) all_read_only: bool,
    /// The directories to make read-only, canonical, NUL-terminated.
    pub(super) dirs: Vec<CString>,
    /// Protected directories that did not exist: each command makes them empty before
    /// its namespaces (`placeholders`) and covers them read-only like `dirs`.
    pub(super) created: Vec<CString>,
    /// Hidden directories, covered by `empty`.
    pub(super) hide_dirs: Vec<CString>,
    /// Hidden files, covered by `/dev/null`.
    pub(super) hide_files: Vec<CString>,
    /// The empty directory hidden directories are covered with.
    pub(super) empty: CString,
    /// The private temp directory to mount over `/tmp`.
    pub(super) tmp: Option<CString>,
}

impl Plan {
    /// Whether commands see the private temp dir at `/tmp`.
    pub(super) fn mounts_tmp(&self) -> bool {
        self.tmp.is_some()
    }
}

/// What planning found.
#[derive(Debug)]
pub(super) enum Outcome {
    /// Commands will run in their namespaces and see `dirs` (placeholders included)
    /// read-only.
    Protected { plan: Plan, dirs: Vec<PathBuf> },
    /// This system does not allow the namespaces; `dirs` stay writable.
    Unavailable { dirs: Vec<PathBuf>, why: io::Error },
}

fn c_path(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes()).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} contains a NUL byte", path.display()),
        )
    })
}

/// Plans the namespaces for one restriction: the configured read-only directories that
/// exist beneath a writable path, the placeholders, the hidden paths that exist, the
/// private `/tmp`; and probes it once (without the placeholders, which exist only while
/// a command runs).
pub(super) fn plan(layout: &Layout<'_>, how: MountNamespace) -> Outcome {
    let mut dirs: Vec<PathBuf> = Vec::new();
    for dir in layout.read_only {
        // A directory that does not exist is not protected; one outside the writable
        // paths is already read-only under Landlock.
        let Ok(dir) = dir.canonicalize() else {
            continue;
        };
        if layout.writable.iter().any(|w| dir.starts_with(w)) && !dirs.contains(&dir) {
            dirs.push(dir);
        }
    }
    let built = build(layout, &dirs, how);
    dirs.extend(layout.created.iter().cloned());
    match built {
        Ok(plan) => match probe(&plan) {
            Ok(()) => Outcome::Protected { plan, dirs },
            Err(why) => Outcome::Unavailable { dirs, why },
        },
        Err(why) => Outcome::Unavailable { dirs, why },
    }
}

fn build(layout: &Layout<'_>, dirs: &[PathBuf], how: MountNamespace) -> io::Result<Plan> {
    let cdirs = dirs
        .iter()
        .map(|d| c_path(d))
        .collect::<io::Result<Vec<_>>>()?;
    let mut hide_dirs = Vec::new();
    let mut hide_files = Vec::new();
    if layout.empty.is_some() {
        for path in layout.hide {
            match std::fs::metadata(path) {
                Ok(m) if m.is_dir() => hide_dirs.push(c_path(path)?),
                Ok(m) if m.is_file() => hide_files.push(c_path(path)?),
                // Sockets, fifos and devices hold no stored secret; missing paths
                // nothing to hide.
                Ok(_) | Err(_) => {}
            }
        }
    }
    let (uid, gid) = effective_ids();
    let privileged = how == MountNamespace::Auto && has_cap_sys_admin();
    let unshare = libc::CLONE_NEWNS | libc::CLONE_NEWPID;
    Ok(Plan {
        unshare: if privileged {
            unshare
        } else {
            unshare | libc::CLONE_NEWUSER
        },
        lock: uid == 0,
        uid_map: format!("{uid} {uid} 1\n").into_bytes(),
        gid_map: format!("{gid} {gid} 1\n").into_bytes(),
        all_read_only: layout.writes == Writes::Nothing,
        dirs: cdirs,
        created: layout
            .created
            .iter()
            .map(|d| c_path(d))
            .collect::<io::Result<Vec<_>>>()?,
        hide_dirs,
        hide_files,
        empty: c_path(layout.empty.unwrap_or(Path::new("/")))?,
        tmp: layout.tmp.map(c_path).transpose()?,
    })
}

/// The sentences for what stays open when the namespaces are not available.
pub(super) fn gaps(layout: &Layout<'_>, dirs: &[PathBuf], why: &io::Error) -> Vec<String> {
    let mut gaps = Vec::new();
    if !dirs.is_empty() {
        gaps.push(gap(dirs, why));
    }
    gaps.push(format!(
        "other processes (atto's included) stay visible in /proc: no PID namespace ({why})"
    ));
    if effective_ids().0 == 0 {
        gaps.push(format!(
            "commands keep root's capabilities (devices aside): no user namespace ({why})"
        ));
    }
    if !layout.hide.is_empty() {
        gaps.push(format!(
            "hidden credential stores stay readable: no mount namespace ({why})"
        ));
    }
    if layout.tmp.is_some() {
        gaps.push(format!(
            "/tmp is not private: no mount namespace ({why}); TMPDIR points to a private directory"
        ));
    }
    gaps
}

/// The sentence for a gap: which directories stay writable and why.
fn gap(dirs: &[PathBuf], why: &io::Error) -> String {
    let mut names: Vec<String> = dirs.iter().map(|d| display_short(d)).collect();
    let verb = if names.len() == 1 { "stays" } else { "stay" };
    let last = names.pop().unwrap_or_default();
    let list = if names.is_empty() {
        last
    } else {
        format!("{} and {last}", names.join(", "))
    };
    format!(
        "{list} {verb} writable: this system does not allow mount namespaces ({why}); \
         allowing unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone, or \
         kernel.apparmor_restrict_unprivileged_userns on Ubuntu) would protect them"
    )
}

/// `.git` for a workspace's `.git`, the full path otherwise.
fn display_short(dir: &Path) -> String {
    match dir.file_name() {
        Some(name) if name.to_string_lossy().starts_with('.') => {
            format!("`{}`", name.to_string_lossy())
        }
        _ => dir.display().to_string(),
    }
}

#[expect(
    unsafe_code,
    reason = "geteuid and getegid have no safe wrapper in std"
)]
pub(super) fn effective_ids() -> (libc::uid_t, libc::gid_t) {
    // SAFETY: both calls take no arguments, touch no memory and cannot fail.
    unsafe { (libc::geteuid(), libc::getegid()) }
}

/// Whether this process holds CAP_SYS_ADMIN (bit 21 of `CapEff`), i.e. may create a
/// mount namespace without a user namespace.
fn has_cap_sys_admin() -> bool {
    const CAP_SYS_ADMIN: u32 = 21;
    let Ok(status) = std::fs::read_to_string("/proc/self/status") else {
        return false;
    };
    status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
        .is_some_and(|caps| caps & (1 << CAP_SYS_ADMIN) != 0)
}

/// Runs the plan in a throwaway child and reports whether every step worked. The child
/// only makes raw syscalls and exits with the errno of the step that failed.
#[expect(unsafe_code, reason = "fork, waitpid and _exit are raw process calls")]
fn probe(plan: &Plan) -> io::Result<()> {
    // SAFETY: the child (pid 0) runs only `child::enter_mount_namespace`, which makes raw
    // syscalls on memory prepared before fork, then `_exit`s without unwinding, running
    // destructors or touching locks another thread may hold.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        let code = match child::enter_mount_namespace(plan, child::Placeholders::Absent) {
            Ok(()) => 0,
            Err(e) => e.raw_os_error().map_or(255, |n| n.clamp(1, 255)),
        };
        // SAFETY: ends the child at once; see above.
        unsafe { libc::_exit(code) }
    }
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut status: libc::c_int = 0;
    loop {
        // SAFETY: `status` is a live local the call writes one int to.
        let rc = unsafe { libc::waitpid(pid, &raw mut status, 0) };
        if rc == pid {
            break;
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
    match (libc::WIFEXITED(status), libc::WEXITSTATUS(status)) {
        (true, 0) => Ok(()),
        (true, 255) | (false, _) => Err(io::Error::other("the probe process failed")),
        (true, errno) => Err(io::Error::from_raw_os_error(errno)),
    }
}
