//! Linux implementation: namespace plan (PID, mounts, user), Landlock ruleset and seccomp
//! filter built in the parent, all applied in the child by `child::restrict`.
//!
//! Owns the split between "prepare before fork" (may allocate, may fail with a message)
//! and "apply after fork" (raw syscalls only), and the gaps: what this system cannot
//! enforce of the configured restriction, in words. Does not know about tools or policy.

mod child;
mod mounts;
mod placeholders;
mod ruleset;
mod seccomp;

use std::os::fd::OwnedFd;
use std::sync::Arc;

use crate::{Compiled, Layout, SandboxConfig, SandboxError, SandboxSupport};

/// Everything the child needs, ready before fork.
#[derive(Debug)]
pub(crate) struct Prepared {
    /// The namespaces: PID, mounts (read-only directories, private `/tmp`, hidden paths)
    /// and the user namespace that locks them; `None` when the system does not allow them.
    mounts: Option<mounts::Plan>,
    /// Landlock ruleset, close-on-exec, kept open for the session.
    ruleset: OwnedFd,
    /// Seccomp filter (devices, and the network when it is off); `None` without seccomp.
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

/// Builds the namespace plan, ruleset and filter for one restriction.
pub(crate) fn prepare(
    layout: &Layout<'_>,
    config: &SandboxConfig,
) -> Result<Compiled, SandboxError> {
    let allow_network = config.allow_network;
    let abi = ruleset::kernel_abi().map_err(|reason| SandboxError::Unsupported { reason })?;
    let ruleset = ruleset::build(layout.writable, allow_network, abi)?;
    let seccomp_ok = seccomp::available();
    let filter = if seccomp_ok {
        let network = (!allow_network).then_some(config.allow_unix_sockets);
        Some(seccomp::filter(network)?)
    } else {
        None
    };
    let mut gaps = Vec::new();
    let mut namespaces = Ok(());
    let (plan, read_only, protects_read_only, tmp_mounted) =
        match mounts::plan(layout, config.mount_namespace) {
            mounts::Outcome::Protected { plan, dirs } => {
                let tmp = plan.mounts_tmp();
                (Some(plan), dirs, true, tmp)
            }
            mounts::Outcome::Unavailable { dirs, why } => {
                gaps.extend(mounts::gaps(layout, &dirs, &why));
                namespaces = Err(why.to_string());
                (None, Vec::new(), dirs.is_empty(), false)
            }
        };
    if !seccomp_ok {
        gaps.push(
            "making device files is not refused by seccomp (unavailable); Landlock still limits where"
                .to_string(),
        );
    }
    if abi < 3 {
        gaps.push(format!(
            "truncating files outside the writable paths is not blocked (Landlock ABI {abi} lacks truncate control)"
        ));
    }
    if abi < ruleset::SCOPE_ABI {
        gaps.push(format!(
            "signals to processes outside the sandbox are not blocked (Landlock ABI {abi} lacks scoping)"
        ));
        if !allow_network {
            gaps.push(format!(
                "abstract unix sockets outside the sandbox stay reachable (Landlock ABI {abi} lacks scoping)"
            ));
        }
    }
    if !allow_network {
        match (abi >= 4, seccomp_ok) {
            (true, true) => {}
            (false, true) => gaps.push(format!(
                "network restriction not applied by Landlock (ABI {abi} lacks TCP rules); seccomp still blocks it"
            )),
            (true, false) => gaps.push(
                "only TCP is blocked: seccomp is unavailable, so UDP, unix and other sockets are not"
                    .to_string(),
            ),
            (false, false) => gaps.push(format!(
                "network restriction not applied: Landlock ABI {abi} lacks TCP rules and seccomp is unavailable"
            )),
        }
    }
    Ok(Compiled {
        prepared: Prepared {
            mounts: plan,
            ruleset,
            filter,
        },
        gaps,
        read_only,
        protects_read_only,
        tmp_mounted,
        namespaces,
        seccomp: seccomp_ok,
        root: mounts::effective_ids().0 == 0,
    })
}

/// Installs the pre-exec hook on `cmd`.
pub(crate) fn install(prepared: &Arc<Prepared>, cmd: &mut tokio::process::Command) {
    let prepared = Arc::clone(prepared);
    let hook = move || {
        child::restrict(
            prepared.mounts.as_ref(),
            &prepared.ruleset,
            prepared.filter.as_ref(),
        )
    };
    #[expect(
        unsafe_code,
        reason = "pre_exec is unsafe: the hook runs between fork and exec"
    )]
    // SAFETY: the hook runs in the forked child, where only async-signal-safe work is
    // allowed. It only reads memory prepared before fork (the namespace plan, the ruleset
    // fd and the compiled filter behind the Arc, cloned here in the parent) and makes raw
    // syscalls; it does not allocate, lock, or drop anything.
    unsafe {
        cmd.pre_exec(hook);
    }
}
