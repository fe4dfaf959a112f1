//! Atto's own evidence that the OS sandbox stopped a command: the paths the parsed
//! command line writes that the sandbox does not permit.
//!
//! Owns: that judgement, for the unsandboxed re-run offer. Deliberately never reads the
//! command's output: a command controls what it prints, so "Permission denied" in its
//! output proves nothing (a command could print it to earn an unsandboxed re-run).

use std::path::{Path, PathBuf};

use atto_policy::bash;
use atto_tools::Sandbox;

/// The paths `command` writes (as its command line shows) that `sandbox` keeps it from
/// writing but atto itself could write, resolved against `workspace`, where commands
/// start. Empty when every visible target is permitted, or could not be written anyway.
pub(crate) fn blocked_writes(command: &str, sandbox: &Sandbox, workspace: &Path) -> Vec<String> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    bash::write_targets(command)
        .into_iter()
        .filter(|target| {
            let path = resolve(target, workspace, home.as_deref());
            !sandbox.permits_write(&path, workspace) && atto_sandbox::could_write(&path, workspace)
        })
        .collect()
}

/// `target` as an absolute path: `~` expanded and relative paths joined to `workspace`
/// (the sandbox resolves `..` and symlinks as the kernel would).
fn resolve(target: &str, workspace: &Path, home: Option<&Path>) -> PathBuf {
    match (target.strip_prefix('~'), home) {
        (Some(rest), Some(home)) => home.join(rest.trim_start_matches('/')),
        _ => workspace.join(target),
    }
}

#[cfg(test)]
mod tests {
    use super::resolve;
    use std::path::Path;

    #[test]
    fn home_and_relative_targets_resolve() {
        // `..` and symlinks are the sandbox's to resolve (as the kernel would).
        let ws = Path::new("/nonexistent-ws/a");
        let home = Some(Path::new("/nonexistent-home"));
        assert_eq!(resolve("x/y", ws, home), Path::new("/nonexistent-ws/a/x/y"));
        assert_eq!(
            resolve("~/.ssh/k", ws, home),
            Path::new("/nonexistent-home/.ssh/k")
        );
        assert_eq!(resolve("/opt/x", ws, home), Path::new("/opt/x"));
    }
}
