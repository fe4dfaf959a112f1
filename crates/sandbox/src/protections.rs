//! The session's sandbox state, protection by protection: from what preparing found
//! (namespaces allowed or not, seccomp, the private `/tmp`, directories that do not
//! exist), whether each protection of the sandbox holds for this session's commands, and
//! why not when it does not. Decides nothing about commands.

use atto_protocol::{ProtectionName, SandboxProtection};

use crate::{Compiled, SandboxConfig};

/// What [`of`] reads.
pub(crate) struct Facts<'a> {
    pub(crate) compiled: &'a Compiled,
    pub(crate) config: &'a SandboxConfig,
    /// Read-only directories that do not exist beneath a writable path.
    pub(crate) missing: &'a [String],
    /// Whether a writable or read-only path lies beneath `/tmp`.
    pub(crate) tmp_under_workspace: bool,
}

/// Each protection of one prepared restriction, applied or a gap with its reason.
pub(crate) fn of(f: &Facts<'_>) -> Vec<SandboxProtection> {
    let c = f.compiled;
    let ns = c.namespaces.clone();
    let when = |name, result: Result<(), String>| SandboxProtection {
        name,
        applied: result.is_ok(),
        gap: result.err(),
    };
    let no_namespace = |what: &str| {
        ns.clone()
            .map_err(|why| format!("{what}: this system does not allow the namespaces ({why})"))
    };
    vec![
        // Landlock alone already refuses every write; the namespaces make it `EROFS`.
        when(ProtectionName::NoWriteUnasked, Ok(())),
        when(
            ProtectionName::ReadOnlyDirs,
            if c.protects_read_only {
                Ok(())
            } else {
                no_namespace("the read-only directories stay writable")
            },
        ),
        when(
            ProtectionName::MissingDirs,
            if f.missing.is_empty() {
                Ok(())
            } else {
                Err(format!(
                    "{} do not exist yet: a command may create them",
                    f.missing.join(", ")
                ))
            },
        ),
        when(
            ProtectionName::Devices,
            if c.seccomp {
                Ok(())
            } else {
                Err("seccomp is unavailable: devices may be made where writes are allowed".into())
            },
        ),
        when(
            ProtectionName::Processes,
            no_namespace("other processes stay visible"),
        ),
        when(
            ProtectionName::RootCapabilities,
            if c.root {
                no_namespace("a command run by root keeps root's capabilities")
            } else {
                Ok(())
            },
        ),
        when(
            ProtectionName::PrivateTmp,
            match (f.config.private_tmp, c.tmp_mounted) {
                (_, true) => Ok(()),
                (false, false) => Err("not configured".into()),
                (true, false) if f.tmp_under_workspace => Err(
                    "the workspace lies beneath /tmp: TMPDIR points to a private directory instead"
                        .into(),
                ),
                (true, false) => no_namespace("/tmp is shared"),
            },
        ),
        when(
            ProtectionName::HiddenSecrets,
            no_namespace("the credential stores stay readable"),
        ),
        when(
            ProtectionName::Network,
            if f.config.allow_network {
                Err("allowed by the configuration".into())
            } else {
                Ok(())
            },
        ),
    ]
}
