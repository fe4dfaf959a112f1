//! Platforms without Landlock: the sandbox is never available, and says so.

use std::sync::Arc;

use crate::{Compiled, Layout, SandboxConfig, SandboxError, SandboxSupport};

#[derive(Debug)]
pub(crate) struct Prepared;

const REASON: &str = "Landlock not supported on this platform (not Linux)";

pub(crate) fn probe() -> SandboxSupport {
    SandboxSupport {
        landlock_abi: 0,
        landlock_unavailable: Some(REASON.to_string()),
        seccomp: false,
    }
}

pub(crate) fn prepare(
    _layout: &Layout<'_>,
    _config: &SandboxConfig,
) -> Result<Compiled, SandboxError> {
    Err(SandboxError::Unsupported {
        reason: REASON.to_string(),
    })
}

pub(crate) fn install(_prepared: &Arc<Prepared>, _cmd: &mut tokio::process::Command) {}
