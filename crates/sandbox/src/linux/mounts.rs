//! The read-only directories: planning, before fork, the private mount namespace in which
//! a command sees them read-only, and probing once whether this system allows it.
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

use crate::MountNamespace;

use super::child;

/// Everything the child needs to enter its mount namespace, built before fork.
#[derive(Debug)]
pub(super) struct Plan {
    /// Flags of the first `unshare`: a plain mount namespace when atto holds
    /// CAP_SYS_ADMIN, else a user namespace too.
    pub(super) unshare: libc::c_int,
    /// Whether a second user + mount namespace follows the mounts. Needed when the
    /// command runs as uid 0: it keeps its capabilities across exec, and in a namespace of
    /// its own it could clone the workspace mount without the read-only mounts on top.
    /// Mounts copied into a less privileged namespace are locked together: they can no
    /// longer be unmounted, made writable or cloned apart.
    pub(super) lock: bool,
    /// `/proc/self/uid_map` contents: the effective uid mapped to itself.
    pub(super) uid_map: Vec<u8>,
    /// `/proc/self/gid_map` contents: the effective gid mapped to itself.
    pub(super) gid_map: Vec<u8>,
    /// The directories to make read-only, canonical, NUL-terminated.
    pub(super) dirs: Vec<CString>,
}

/// What planning found.
#[derive(Debug)]
pub(super) enum Outcome {
    /// No configured directory exists beneath a writable path: nothing to mount.
    Nothing,
    /// Commands will see `dirs` read-only.
    Protected { plan: Plan, dirs: Vec<PathBuf> },
    /// This system does not allow the namespace; `dirs` stay writable.
    Unavailable { dirs: Vec<PathBuf>, why: io::Error },
}

/// Plans the namespace for the configured read-only directories that exist beneath a
/// writable path, and probes it once.
pub(super) fn plan(read_only: &[PathBuf], writable: &[PathBuf], how: MountNamespace) -> Outcome {
    let mut dirs: Vec<PathBuf> = Vec::new();
    for dir in read_only {
        // A directory that does not exist is not protected; one outside the writable
        // paths is already read-only under Landlock.
        let Ok(dir) = dir.canonicalize() else {
            continue;
        };
        if writable.iter().any(|w| dir.starts_with(w)) && !dirs.contains(&dir) {
            dirs.push(dir);
        }
    }
    if dirs.is_empty() {
        return Outcome::Nothing;
    }
    let mut cdirs = Vec::with_capacity(dirs.len());
    for dir in &dirs {
        match CString::new(dir.as_os_str().as_bytes()) {
            Ok(c) => cdirs.push(c),
            Err(_) => {
                return Outcome::Unavailable {
                    why: io::Error::new(
                        io::ErrorKind::InvalidInput,
                        format!("{} contains a NUL byte", dir.display()),
                    ),
                    dirs,
                };
            }
        }
    }
    let (uid, gid) = effective_ids();
    let privileged = how == MountNamespace::Auto && has_cap_sys_admin();
    let plan = Plan {
        unshare: if privileged {
            libc::CLONE_NEWNS
        } else {
            libc::CLONE_NEWUSER | libc::CLONE_NEWNS
        },
        lock: uid == 0,
        uid_map: format!("{uid} {uid} 1\n").into_bytes(),
        gid_map: format!("{gid} {gid} 1\n").into_bytes(),
        dirs: cdirs,
    };
    match probe(&plan) {
        Ok(()) => Outcome::Protected { plan, dirs },
        Err(why) => Outcome::Unavailable { dirs, why },
    }
}

/// The sentence for a gap: which directories stay writable and why.
pub(super) fn gap(dirs: &[PathBuf], why: &io::Error) -> String {
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
fn effective_ids() -> (libc::uid_t, libc::gid_t) {
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
        let code = match child::enter_mount_namespace(plan) {
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
