//! Python: one interpreter process for every changed `.py` file, running
//! `python_check.py` (syntax by `compile`, imports looked up without importing them). The
//! project's virtual environment (`.venv`, `venv`) is used when it has one, so imports
//! resolve against what the project installed.

use std::path::Path;

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
    let command = command(workspace, targets);
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

/// The command line: the interpreter, the script, and the files' real paths.
pub(super) fn command(workspace: &Path, targets: &[Target]) -> String {
    let mut command = format!("{} -B -c {}", interpreter(workspace), shell_quote(SCRIPT));
    for target in targets {
        command.push(' ');
        command.push_str(&shell_quote(&target.path.to_string_lossy()));
    }
    command
}

/// The project's virtual environment's interpreter, else `python3`.
fn interpreter(workspace: &Path) -> String {
    for venv in [".venv", "venv"] {
        let python = Path::new(venv).join("bin").join("python");
        if workspace.join(&python).is_file() {
            return shell_quote(&python.to_string_lossy());
        }
    }
    "python3".to_owned()
}
