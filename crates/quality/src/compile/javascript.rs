//! JavaScript: one `node` process for every changed `.js`, `.mjs` and `.cjs` file, running
//! `javascript_check.js`, which parses each file as Node would load it and runs none of
//! them. A `.js` file that only a JSX parser could read is handed back for `tsc`. `node` is
//! the machine's, never one the workspace carries (`program`).

use std::path::Path;

use super::program::Program;
use super::{
    CHECK_TIMEOUT, Report, Target, did_not_run, group_warning, read_report, shell_quote, tail,
};
use crate::{CommandRequest, CommandRunner, Purpose};

/// The checker, run with `node -e`.
const SCRIPT: &str = include_str!("javascript_check.js");

/// Checks the JavaScript files in one process.
pub(super) async fn check(
    workspace: &Path,
    targets: &[Target],
    runner: &dyn CommandRunner,
) -> Report {
    if targets.is_empty() {
        return Report::default();
    }
    let Some(node) = Program::find("node", workspace) else {
        return Report {
            findings: group_warning(
                targets,
                "JavaScript",
                "no node was found outside the workspace (the project's own programs are not \
                 run unasked); install Node.js to check JavaScript files",
            ),
            ..Report::default()
        };
    };
    let command = command(&node, targets);
    let out = runner
        .run(CommandRequest {
            command: &command,
            purpose: Purpose::Check,
            timeout: CHECK_TIMEOUT,
        })
        .await;
    if let Some(why) = did_not_run(&out, "node", "install Node.js to check JavaScript files") {
        return Report {
            findings: group_warning(targets, "JavaScript", &why),
            ..Report::default()
        };
    }
    let mut report = read_report(&out.output, targets);
    if !report.finished {
        report.findings.extend(group_warning(
            targets,
            "JavaScript",
            &format!("the checker stopped early: {}", tail(&out.output)),
        ));
    }
    report
}

/// The command line: `--experimental-vm-modules` for `vm.SourceTextModule` (parsing ES
/// modules without running them), `--expose-internals` for the line of a module's syntax
/// error, `--no-warnings` to keep the experimental notices out of the output.
fn command(node: &Program, targets: &[Target]) -> String {
    let mut command = format!(
        "{} --experimental-vm-modules --expose-internals --no-warnings -e {}",
        node.command(),
        shell_quote(SCRIPT)
    );
    for target in targets {
        command.push(' ');
        command.push_str(&shell_quote(&target.path.to_string_lossy()));
    }
    command
}
