//! The one protected-path list: where a write always goes to a person.
//!
//! Repository internals (`.git`), atto's project directory (`.atto`) and
//! attocode's (`.attocode`, whose `swarm.yaml` atto reads) hold hooks,
//! configuration and swarm settings that run later, outside any sandbox.
//! They are protected wherever they sit in the workspace (a vendored
//! repository's `.git/hooks` runs as surely as the top one's), and so are
//! atto's own config and data directories, which only the binary can
//! compute (`ProtectedPaths::new` takes them).
//!
//! Users: the gate (file tools), the bash classifier (commands that write),
//! the CLI (the sandbox's read-only mounts) and the swarm mailbox. This
//! module only answers "is this path protected"; what a protected write
//! leads to (an ask in every mode) is the gate's decision.

use std::path::{Component, Path, PathBuf};

/// Directory names protected wherever they appear in a path.
pub const PROTECTED_NAMES: &[&str] = &[".git", ".atto", ".attocode"];

/// The protected set of one session: the names above, and atto's own
/// config and data directories as absolute paths.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProtectedPaths {
    atto_dirs: Vec<PathBuf>,
}

impl ProtectedPaths {
    /// The protected set with atto's config and data directories (as the
    /// binary computes them; empty in tests and embedders without them).
    pub fn new(atto_dirs: Vec<PathBuf>) -> Self {
        ProtectedPaths { atto_dirs }
    }

    /// atto's own config and data directories.
    pub fn atto_dirs(&self) -> &[PathBuf] {
        &self.atto_dirs
    }

    /// Is `path` (workspace-relative, or absolute) protected?
    pub fn contains(&self, path: &Path) -> bool {
        has_protected_name(path) || self.atto_dirs.iter().any(|d| path.starts_with(d))
    }

    /// The directories a sandbox must mount read-only for `workspace`: each
    /// protected name at the workspace's top, and atto's own directories.
    /// Nested ones (`vendor/x/.git`) are not listed: the gate and the
    /// classifier ask for them, and the sandbox cannot enumerate a tree that
    /// commands may grow.
    pub fn read_only_dirs(&self, workspace: &Path) -> Vec<PathBuf> {
        PROTECTED_NAMES
            .iter()
            .map(|n| workspace.join(n))
            .chain(self.atto_dirs.iter().cloned())
            .collect()
    }

    /// The protected directories at the workspace's top that a sandbox keeps commands
    /// from creating when they do not exist (`.atto`, `.attocode`): what they would hold
    /// is obeyed by the next session. Not `.git`, whose empty directory would make git
    /// misread the repository.
    pub fn uncreatable_dirs(&self, workspace: &Path) -> Vec<PathBuf> {
        PROTECTED_NAMES
            .iter()
            .filter(|n| **n != ".git")
            .map(|n| workspace.join(n))
            .collect()
    }
}

/// Does any component of `path` name a protected directory?
pub fn has_protected_name(path: &Path) -> bool {
    path.components().any(|c| match c {
        Component::Normal(name) => PROTECTED_NAMES.iter().any(|p| name == *p),
        _ => false,
    })
}

/// Is `path`, as written in a command (`~/.config/atto/x`, `sub/.git/hooks`),
/// protected? A command does not carry the binary's computed directories,
/// so atto's config and data directories are recognised by their default
/// spelling (`…/.config/atto`, `…/share/atto`).
pub fn is_protected_text(path: &str) -> bool {
    let p = Path::new(path.trim());
    if has_protected_name(p) {
        return true;
    }
    let names: Vec<&std::ffi::OsStr> = p
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n),
            _ => None,
        })
        .collect();
    names
        .windows(2)
        .any(|w| (w[0] == ".config" || w[0] == "share") && w[1] == "atto")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_protected_at_any_depth() {
        for p in [
            ".git",
            ".git/config",
            "./.atto/x",
            "a/b/.attocode/swarm.yaml",
        ] {
            assert!(has_protected_name(Path::new(p)), "{p}");
        }
        for p in [".gitignore", ".github/x", "src/git/x.rs", ".attocoderc"] {
            assert!(!has_protected_name(Path::new(p)), "{p}");
        }
    }

    #[test]
    fn atto_dirs_are_protected_by_path_and_by_spelling() {
        let set = ProtectedPaths::new(vec![PathBuf::from("/home/u/.local/share/atto")]);
        assert!(set.contains(Path::new("/home/u/.local/share/atto/atto.db")));
        assert!(!set.contains(Path::new("/home/u/.local/share/other")));
        assert!(is_protected_text("~/.config/atto/config.toml"));
        assert!(is_protected_text("$HOME/.local/share/atto/atto.db"));
        assert!(!is_protected_text("~/.config/attolint"));
    }

    #[test]
    fn the_sandbox_gets_every_name_and_atto_dir() {
        let set = ProtectedPaths::new(vec![PathBuf::from("/cfg/atto")]);
        let dirs = set.read_only_dirs(Path::new("/ws"));
        for n in PROTECTED_NAMES {
            assert!(dirs.contains(&Path::new("/ws").join(n)), "{n}");
        }
        assert!(dirs.contains(&PathBuf::from("/cfg/atto")));
        assert_eq!(
            set.uncreatable_dirs(Path::new("/ws")),
            [PathBuf::from("/ws/.atto"), PathBuf::from("/ws/.attocode")]
        );
    }
}
