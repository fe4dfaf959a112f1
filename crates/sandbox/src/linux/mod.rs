//! Linux implementation: Landlock ruleset and seccomp filter built in the parent, both
//! applied in the child by `child::restrict`.
//!
//! Owns the split between "prepare before fork" (may allocate, may fail with a message)
//! and "apply after fork" (raw syscalls only). Does not know about tools or policy.

mod child;
mod ruleset;
mod seccomp;

use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::sync::Arc;

use crate::{SandboxError, SandboxSupport};

/// Everything the child needs, ready before fork.
#[derive(Debug)]
pub(crate) struct Prepared {
    /// Landlock ruleset, close-on-exec, kept open for the session.
    ruleset: OwnedFd,
    /// Seccomp network filter; `None` when the network is allowed.
    filter: Option<seccomp::Filter>,
}

pub(crate) fn probe() -> SandboxSupport {
    let (landlock_abi, landlock_unavailable) = match ruleset::kernel_abi() {
        Ok(abi) => (abi, None),
        Err(why) => (0, Some(why)),
    };
    SandboxSupport {
        landlock_abi,
        landlock_unavailable,
        seccomp: seccomp::available(),
    }
}

/// Builds the ruleset and filter; returns them with the configured restrictions this
/// kernel cannot enforce.
pub(crate) fn prepare(
    writable: &[PathBuf],
    allow_network: bool,
) -> Result<(Prepared, Vec<String>), SandboxError> {
    let abi = ruleset::kernel_abi().map_err(|reason| SandboxError::Unsupported { reason })?;
    let ruleset = ruleset::build(writable, allow_network, abi)?;
    let seccomp_ok = seccomp::available();
    let filter = if allow_network || !seccomp_ok {
        None
    } else {
        Some(seccomp::network_filter()?)
    };
    let mut gaps = Vec::new();
    if abi < 3 {
        gaps.push(format!(
            "truncating files outside the writable paths is not blocked (Landlock ABI {abi} lacks truncate control)"
        ));
    }
    if !allow_network {
        match (abi >= 4, seccomp_ok) {
            (true, true) => {}
            (false, true) => gaps.push(format!(
                "network restriction not applied by Landlock (ABI {abi} lacks TCP rules); seccomp still blocks it"
            )),
            (true, false) => gaps.push(
                "only TCP is blocked: seccomp is unavailable, so UDP and other sockets are not"
                    .to_string(),
            ),
            (false, false) => gaps.push(format!(
                "network restriction not applied: Landlock ABI {abi} lacks TCP rules and seccomp is unavailable"
            )),
        }
    }
    Ok((Prepared { ruleset, filter }, gaps))
}

/// Installs the pre-exec hook on `cmd`.
pub(crate) fn install(prepared: &Arc<Prepared>, cmd: &mut tokio::process::Command) {
    let prepared = Arc::clone(prepared);
    let hook = move || child::restrict(&prepared.ruleset, prepared.filter.as_ref());
    #[expect(
        unsafe_code,
        reason = "pre_exec is unsafe: the hook runs between fork and exec"
    )]
    // SAFETY: the hook runs in the forked child, where only async-signal-safe work is
    // allowed. It only reads memory prepared before fork (the ruleset fd and the compiled
    // filter behind the Arc, cloned here in the parent) and makes raw syscalls; it does
    // not allocate, lock, or drop anything.
    unsafe {
        cmd.pre_exec(hook);
    }
}
