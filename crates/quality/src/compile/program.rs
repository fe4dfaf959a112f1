//! The interpreters the compile checks run (`python3`, `node`, `tsc`): programs atto picks
//! from the machine, never ones the repository carries. A checked workspace may hold a
//! `.venv/bin/python` or a `node_modules/.bin/tsc` that does anything when started, and
//! the checks run without asking anyone, so every directory of `PATH` that lies inside the
//! workspace (or is relative, which resolves inside it) is left out, both when the program
//! is looked up and in the `PATH` it runs with (a `#!/usr/bin/env node` script finds
//! `node` there).
//!
//! Does not decide whether the command may run (the caller's runner and gate do).

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use super::shell_quote;

/// A program from the machine and the `PATH` it runs with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Program {
    /// Where it is: a `PATH` directory outside the workspace.
    pub path: PathBuf,
    /// `PATH` without the directories inside the workspace.
    search: OsString,
}

impl Program {
    /// `name` as found on this process's `PATH`, outside `workspace`.
    pub(crate) fn find(name: &str, workspace: &Path) -> Option<Program> {
        let path = std::env::var_os("PATH")?;
        find_in(name, &path, workspace)
    }

    /// The start of a `sh -c` command line that runs this program with its `PATH`.
    pub(crate) fn command(&self) -> String {
        format!(
            "PATH={} {}",
            shell_quote(&self.search.to_string_lossy()),
            shell_quote(&self.path.to_string_lossy())
        )
    }
}

/// `name` in the directories of `path` that lie outside `workspace`.
pub(crate) fn find_in(name: &str, path: &OsStr, workspace: &Path) -> Option<Program> {
    let root = workspace
        .canonicalize()
        .unwrap_or_else(|_| workspace.to_path_buf());
    let outside = |p: &Path| {
        p.canonicalize()
            .is_ok_and(|real| !real.starts_with(&root) && !real.starts_with(workspace))
    };
    let dirs: Vec<PathBuf> = std::env::split_paths(path)
        .filter(|dir| dir.is_absolute() && outside(dir))
        .collect();
    let search = std::env::join_paths(&dirs).ok()?;
    dirs.iter()
        .map(|dir| dir.join(name))
        // A link from a system directory back into the workspace is the workspace's.
        .find(|candidate| executable(candidate) && outside(candidate))
        .map(|path| Program { path, search })
}

#[cfg(unix)]
fn executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    path.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn executable(path: &Path) -> bool {
    path.is_file()
}

#[cfg(all(test, unix))]
#[expect(
    clippy::unwrap_used,
    reason = "the tests set up their own files; a failure there fails the test"
)]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    use super::*;

    fn program(dir: &Path, name: &str) -> PathBuf {
        std::fs::create_dir_all(dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    #[test]
    fn directories_inside_the_workspace_are_never_searched() {
        let tmp = tempfile::tempdir().unwrap();
        let workspace = tmp.path().join("ws");
        let system = tmp.path().join("usr/bin");
        let venv = workspace.join(".venv/bin");
        let modules = workspace.join("node_modules/.bin");
        program(&venv, "python3");
        program(&modules, "tsc");
        let python = program(&system, "python3");
        // A system directory that links into the workspace is the workspace too.
        std::os::unix::fs::symlink(&modules, tmp.path().join("linked")).unwrap();
        let path = std::env::join_paths([
            venv.clone(),
            modules.clone(),
            tmp.path().join("linked"),
            PathBuf::from("node_modules/.bin"),
            PathBuf::from("."),
            system.clone(),
        ])
        .unwrap();
        let found = find_in("python3", &path, &workspace).unwrap();
        assert_eq!(found.path, python);
        assert_eq!(found.search, system.as_os_str(), "the PATH it runs with");
        assert_eq!(find_in("tsc", &path, &workspace), None);
    }

    #[test]
    fn a_system_program_that_links_into_the_workspace_is_not_used() {
        let tmp = tempfile::tempdir().unwrap();
        let workspace = tmp.path().join("ws");
        let hostile = program(&workspace.join(".venv/bin"), "python3");
        let system = tmp.path().join("bin");
        std::fs::create_dir_all(&system).unwrap();
        std::os::unix::fs::symlink(&hostile, system.join("python3")).unwrap();
        let plain = program(&tmp.path().join("usr/bin"), "python3");
        let path = std::env::join_paths([system, tmp.path().join("usr/bin")]).unwrap();
        assert_eq!(find_in("python3", &path, &workspace).unwrap().path, plain);
    }

    #[test]
    fn a_file_that_cannot_be_executed_is_not_a_program() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("bin");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("node"), "text").unwrap();
        let path = std::env::join_paths([dir]).unwrap();
        assert_eq!(find_in("node", &path, &tmp.path().join("ws")), None);
    }

    #[test]
    fn the_command_sets_the_path_it_was_found_with() {
        let program = Program {
            path: PathBuf::from("/usr/bin/python3"),
            search: OsString::from("/usr/bin:/bin"),
        };
        assert_eq!(program.command(), "PATH='/usr/bin:/bin' '/usr/bin/python3'");
    }
}
