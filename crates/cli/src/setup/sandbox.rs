//! The OS sandbox a session's commands run in: what they may write (the workspace and a
//! private `/tmp`), what they may never write (the protected paths) and what they cannot
//! read (the credential stores). Applying it is atto-sandbox's.

use std::path::{Path, PathBuf};

use atto_config::Config;
use atto_sandbox::{Sandbox, SandboxConfig};

use crate::permissions;

/// Prepares the OS sandbox for commands: writes only in the workspace and a private
/// `/tmp`, never in the repository's git directory, `.atto/`, `.attocode/` or atto's own
/// config and data; the credential stores hidden (`[sandbox] hide`, `unhide`).
/// Where it cannot be prepared, says why once (the reason is also the session's sandbox
/// state); WARN commands then always ask.
pub(crate) fn sandbox(
    workspace: &Path,
    config: &Config,
) -> Result<std::sync::Arc<Sandbox>, String> {
    prepare_sandbox(
        workspace,
        config.allow_network.unwrap_or(false),
        config.allow_unix_sockets.unwrap_or(false),
        hidden_paths(&config.sandbox.hide, &config.sandbox.unhide),
    )
    .map_err(|err| {
        eprintln!(
            "atto: warning: commands will run without an OS sandbox ({err}); every \
             command that is not provably read-only will ask for approval"
        );
        format!("no OS sandbox: {err}")
    })
}

/// The sandbox of [`sandbox`] from the two network settings, hiding the default
/// credential stores, without a word on failure.
pub(crate) fn sandbox_with(
    workspace: &Path,
    allow_network: bool,
    allow_unix_sockets: bool,
) -> Result<std::sync::Arc<Sandbox>, String> {
    prepare_sandbox(
        workspace,
        allow_network,
        allow_unix_sockets,
        hidden_paths(&[], &[]),
    )
}

fn prepare_sandbox(
    workspace: &Path,
    allow_network: bool,
    allow_unix_sockets: bool,
    hide: Vec<PathBuf>,
) -> Result<std::sync::Arc<Sandbox>, String> {
    let config = SandboxConfig {
        writable: vec![workspace.to_path_buf()],
        allow_network,
        allow_unix_sockets,
        read_only: read_only_dirs(workspace),
        // Missing ones exist only while a command runs, so no workspace gains a
        // directory that checkpoints and plan mode promise not to add.
        create_read_only: permissions::protected_paths().uncreatable_dirs(workspace),
        hide,
        private_tmp: true,
        ..SandboxConfig::default()
    };
    Sandbox::prepare(&config)
        .map(std::sync::Arc::new)
        .map_err(|err| err.to_string())
}

/// Credential stores commands cannot read unless unhidden: a model that reads
/// `~/.ssh/id_rsa` sends it to the model provider.
const HIDDEN: &[&str] = &[
    "~/.ssh",
    "~/.aws",
    "~/.config/gcloud",
    "~/.kube",
    "~/.docker",
    "~/.gnupg",
    "~/.netrc",
    "~/.git-credentials",
    "~/.config/gh",
];

/// `~/x` under the home directory, other paths as written.
fn expand_home(path: &str) -> PathBuf {
    match (path.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ => PathBuf::from(path),
    }
}

/// The paths hidden from commands: the credential stores and atto's own config and data
/// dirs, plus `hide`, minus `unhide` (compared once `~/` is expanded).
fn hidden_paths(hide: &[String], unhide: &[String]) -> Vec<PathBuf> {
    let unhidden: Vec<PathBuf> = unhide.iter().map(|p| expand_home(p)).collect();
    HIDDEN
        .iter()
        .map(|p| expand_home(p))
        .chain(permissions::protected_dirs().into_iter().map(PathBuf::from))
        .chain(hide.iter().map(|p| expand_home(p)))
        .filter(|p| !unhidden.contains(p))
        .collect()
}

/// What sandboxed commands may never write: the protected-path list's directories (the
/// workspace's `.git`, `.atto/`, `.attocode/`, atto's config and data dirs) and, when
/// `.git` is a file — a worktree or submodule — the git directory it points to and the
/// common directory behind that. Hooks and config
/// written there would run later, outside any sandbox.
fn read_only_dirs(workspace: &Path) -> Vec<PathBuf> {
    let mut dirs = permissions::protected_paths().read_only_dirs(workspace);
    let dot_git = workspace.join(".git");
    if dot_git.is_file()
        && let Ok(text) = std::fs::read_to_string(&dot_git)
        && let Some(target) = text.lines().find_map(|l| l.strip_prefix("gitdir:"))
    {
        let git_dir = workspace.join(target.trim());
        if let Ok(common) = std::fs::read_to_string(git_dir.join("commondir")) {
            dirs.push(git_dir.join(common.trim()));
        }
        dirs.push(git_dir);
    }
    dirs
}
