//! Python: one interpreter process for every changed `.py` file, running
//! `python_check.py` (syntax by `compile`, imports looked up without importing them). The
//! interpreter is the machine's `python3`, isolated (`-I`: no `PYTHON*` variables, no user
//! site, no workspace directory on `sys.path`), never the project's virtual environment's
//! (`.venv/bin/python` is a program the repository carries). What the project installed
//! there is still found: the environment's `site-packages` directories are handed to the
//! checker, which reads them without running anything.

use std::path::{Path, PathBuf};

use super::program::Program;
use super::{CHECK_TIMEOUT, Target, did_not_run, group_warning, read_report, shell_quote, tail};
use crate::{CommandRequest, CommandRunner, CompileError, Purpose};

/// The checker, run with `python -c`.
const SCRIPT: &str = include_str!("python_check.py");

/// Checks the Python files in one process.
pub(super) async fn check(
    workspace: &Path,
    targets: &[Target],
    runner: &dyn CommandRunner,
) -> Vec<CompileError> {
    if targets.is_empty() {
        return Vec::new();
    }
    let Some(command) = command(workspace, targets) else {
        return group_warning(
            targets,
            "Python",
            "no python3 was found outside the workspace (the project's own interpreters are \
             not run unasked); install Python 3 to check Python files",
        );
    };
    let out = runner
        .run(CommandRequest {
            command: &command,
            purpose: Purpose::Check,
            timeout: CHECK_TIMEOUT,
        })
        .await;
    if let Some(why) = did_not_run(&out, "python3", "install Python 3 to check Python files") {
        return group_warning(targets, "Python", &why);
    }
    let report = read_report(&out.output, targets);
    if !report.finished {
        let mut findings = report.findings;
        findings.extend(group_warning(
            targets,
            "Python",
            &format!("the checker stopped early: {}", tail(&out.output)),
        ));
        return findings;
    }
    report.findings
}

/// The command line: the machine's interpreter, the script, the project environment's
/// package directories and the files' real paths; `None` when the machine has no
/// `python3` outside the workspace.
pub(super) fn command(workspace: &Path, targets: &[Target]) -> Option<String> {
    let python = Program::find("python3", workspace)?;
    let mut command = format!("{} -I -B -c {}", python.command(), shell_quote(SCRIPT));
    for site in site_packages(workspace) {
        command.push_str(" --site ");
        command.push_str(&shell_quote(&site.to_string_lossy()));
    }
    command.push_str(" --");
    for target in targets {
        command.push(' ');
        command.push_str(&shell_quote(&target.path.to_string_lossy()));
    }
    Some(command)
}

/// The `site-packages` directories of the project's virtual environment (`.venv`, `venv`),
/// as real directories inside the workspace.
fn site_packages(workspace: &Path) -> Vec<PathBuf> {
    let Ok(root) = workspace.canonicalize() else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for venv in [".venv", "venv"] {
        let Ok(entries) = std::fs::read_dir(root.join(venv).join("lib")) else {
            continue;
        };
        let mut sites: Vec<PathBuf> = entries
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("python"))
            .filter_map(|e| e.path().join("site-packages").canonicalize().ok())
            .filter(|site| site.starts_with(&root) && site.is_dir())
            .collect();
        sites.sort();
        found.extend(sites);
    }
    found
}
