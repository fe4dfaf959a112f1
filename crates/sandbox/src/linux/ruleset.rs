//! The Landlock ruleset: which writes are handled (all of them the kernel knows), where
//! they stay allowed, TCP bind/connect handled with no rule when the network is off, and
//! (ABI 6+) the scopes: no signals to processes outside the command's own domain, and no
//! connecting to abstract unix sockets made outside it while the network is off.
//!
//! Built with the `landlock` crate at the exact ABI the kernel reports, as a hard
//! requirement, so nothing is silently dropped; what an older ABI cannot express is
//! reported by the caller as a gap. Does not restrict anything itself: the ruleset fd is
//! handed to the child, which calls `landlock_restrict_self`.

use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset,
    RulesetAttr, RulesetCreatedAttr, Scope, path_beneath_rules,
};

use crate::SandboxError;
use crate::paths::DEVICES;

/// First ABI with `LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET` and `LANDLOCK_SCOPE_SIGNAL`.
pub(super) const SCOPE_ABI: u32 = 6;

/// The Landlock ABI version the kernel offers, or why there is none.
#[expect(unsafe_code, reason = "landlock_create_ruleset is a raw syscall")]
pub(super) fn kernel_abi() -> Result<u32, String> {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: with a null attribute, size 0 and the VERSION flag, the syscall only
    // returns the ABI version; it reads and writes no memory.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    if v >= 1 {
        return u32::try_from(v).map_err(|_| format!("Landlock reported ABI {v}"));
    }
    let err = std::io::Error::last_os_error();
    Err(match err.raw_os_error() {
        Some(libc::EOPNOTSUPP) => {
            "Landlock not supported by this kernel (ABI 0): built in but disabled at boot (add landlock to lsm=)".to_string()
        }
        Some(libc::ENOSYS) => "Landlock not supported by this kernel (ABI 0)".to_string(),
        _ => format!("Landlock not supported by this kernel (ABI 0): {err}"),
    })
}

/// The crate's name for kernel ABI `v`; a kernel newer than the crate maps to the
/// newest ABI the crate knows, which the kernel also supports.
fn crate_abi(v: u32) -> ABI {
    match v {
        0 => ABI::Unsupported,
        1 => ABI::V1,
        2 => ABI::V2,
        3 => ABI::V3,
        4 => ABI::V4,
        5 => ABI::V5,
        6 => ABI::V6,
        7 => ABI::V7,
        8 => ABI::V8,
        _ => ABI::V9,
    }
}

/// Creates the ruleset for kernel ABI `abi_version` and returns its fd.
pub(super) fn build(
    writable: &[PathBuf],
    allow_network: bool,
    abi_version: u32,
) -> Result<OwnedFd, SandboxError> {
    let abi = crate_abi(abi_version);
    let write = AccessFs::from_write(abi);
    let ll = |e: landlock::RulesetError| SandboxError::Landlock(e.to_string());
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(write)
        .map_err(ll)?;
    if !allow_network && abi_version >= 4 {
        // Handled with no rule: every TCP bind and connect is denied.
        ruleset = ruleset
            .handle_access(AccessNet::from_all(abi))
            .map_err(ll)?;
    }
    if abi_version >= SCOPE_ABI {
        // The command and its children share one domain, so they still signal each other.
        ruleset = ruleset.scope(Scope::Signal).map_err(ll)?;
        if !allow_network {
            ruleset = ruleset.scope(Scope::AbstractUnixSocket).map_err(ll)?;
        }
    }
    let mut created = ruleset.create().map_err(ll)?;
    for path in writable {
        created = created.add_rule(beneath(path, abi)?).map_err(ll)?;
    }
    // Devices missing on this system are skipped; rights are narrowed for files.
    created = created
        .add_rules(path_beneath_rules(DEVICES, write))
        .map_err(ll)?;
    let fd: Option<OwnedFd> = created.into();
    fd.ok_or_else(|| {
        SandboxError::Landlock("the kernel created no ruleset (Landlock unavailable)".to_string())
    })
}

/// A rule allowing every write beneath `path`, narrowed to file rights when it is a file.
fn beneath(path: &Path, abi: ABI) -> Result<PathBeneath<PathFd>, SandboxError> {
    let write = AccessFs::from_write(abi);
    let meta = std::fs::metadata(path).map_err(|source| SandboxError::WritablePath {
        path: path.to_path_buf(),
        source,
    })?;
    let fd = PathFd::new(path).map_err(|e| SandboxError::WritablePath {
        path: path.to_path_buf(),
        source: std::io::Error::other(e.to_string()),
    })?;
    let access = if meta.is_dir() {
        write
    } else {
        write & AccessFs::from_file(abi)
    };
    Ok(PathBeneath::new(fd, access))
}
