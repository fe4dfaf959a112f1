//! The verification gate: the project's own tests, type checks and lint, run through the
//! caller's [`CommandRunner`], their output read into failed test names, errors with their
//! places and the seed's lines (`[tests] FAILED: 2 tests failed`, `[lint] PASSED`).
//!
//! Runners are found by the project's files (the seed's table): pytest, `npm test`,
//! `go test`, `cargo test` for tests; mypy and tsc for types; ruff and eslint for lint.
//! Every command is a [`Purpose::Verification`] request: the caller's gate and sandbox
//! decide whether project code may run here. A check that did not run (the gate refused
//! it, the tool is not installed, it was killed at its time limit) fails the gate, because
//! missing evidence is not a pass. Deliberate exceptions: a `go.mod` on a machine
//! without `go`, or Python tests where the machine's `python3` has no pytest (asked by atto
//! with `-I`, never read from output the project's code could fake), is not a runner but a
//! "not run" line with how to install it (a test task there still fails: no runner); mypy
//! or ruff that the machine's `PATH` (outside the workspace) has no working copy of is
//! likewise "not run", never a failure; and a pytest
//! run that collects no tests passes unless the task is a test task (`npm test` gets
//! `--passWithNoTests` from the seed for the same reason).
//!
//! Owns: detection, the commands, reading their output (`parse`). Does not own: running
//! commands (the runner), or what a failed gate does to the task (`pipeline`).

mod parse;

use std::ffi::OsStr;
use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use crate::{CommandOutput, CommandRequest, CommandRunner, CompileError, Purpose, TaskKind};

/// Output kept in a [`CheckRun`]: its end, where the summaries are.
const OUTPUT_TAIL: usize = 4 * 1024;
/// Failed tests or errors kept from one check; the finding still counts them all.
const MAX_ITEMS: usize = 50;
/// Items listed under a check in [`Verification::summary`].
const SUMMARY_ITEMS: usize = 20;
/// Error lines turned into suggestions, per check.
const MAX_ERROR_SUGGESTIONS: usize = 10;

/// One check the gate ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckRun {
    /// `tests`, `type_check` or `lint`.
    pub name: String,
    /// The command line.
    pub command: String,
    /// It ran and passed.
    pub passed: bool,
    /// The end of its output.
    pub output: String,
    /// It was killed at its time limit.
    pub timed_out: bool,
    /// It did not run: the gate refused it or its tool is missing (`finding` says which).
    pub not_run: bool,
    /// What it found, in one line (`2 tests failed`, `src/a.py:3: error: …`); empty when
    /// it passed with nothing to say.
    pub finding: String,
    /// Failed test names or error lines, listed under the finding.
    pub items: Vec<String>,
}

/// What the gate found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Verification {
    /// The checks run, in order.
    pub runs: Vec<CheckRun>,
    /// Names of failed tests.
    pub test_failures: Vec<String>,
    /// Type and lint errors with their places.
    pub errors: Vec<CompileError>,
    /// What to fix, by check (`[tests] …`).
    pub suggestions: Vec<String>,
    /// No test runner was found for the project.
    pub no_runner: bool,
    /// Checks the project calls for that could not run here because their tool is not
    /// installed, as (check name, what is missing and how to install it):
    /// (`type_check`, `mypy is not installed …`). Not run, which is not a failure.
    pub not_run: Vec<(String, String)>,
}

impl Verification {
    /// Whether the evidence lets a task of `kind` pass.
    pub fn passed(&self, kind: TaskKind) -> bool {
        self.runs.iter().all(|r| r.passed) && !(kind.is_test() && self.no_runner)
    }

    /// The seed's summary lines (`[tests] FAILED: …`, `[lint] PASSED`), each check with
    /// its failed tests or errors listed under it.
    pub fn summary(&self) -> String {
        let mut out = String::new();
        for r in &self.runs {
            let status = if r.passed {
                "PASSED"
            } else if r.not_run {
                "NOT RUN"
            } else {
                "FAILED"
            };
            let _ = write!(out, "[{}] {status}", r.name);
            if !r.finding.is_empty() {
                let _ = write!(out, ": {}", r.finding);
            }
            out.push('\n');
            for item in r.items.iter().take(SUMMARY_ITEMS) {
                let _ = writeln!(out, "  - {item}");
            }
            if r.items.len() > SUMMARY_ITEMS {
                let _ = writeln!(out, "  - … and {} more", r.items.len() - SUMMARY_ITEMS);
            }
        }
        if self.no_runner {
            let _ = writeln!(out, "[tests] NOT RUN: {NO_RUNNER}");
        }
        for (check, note) in &self.not_run {
            let _ = writeln!(out, "[{check}] NOT RUN: {note}");
        }
        out
    }
}

/// What the summary says when no test runner was found.
const NO_RUNNER: &str = "no test runner detected (looked for pyproject.toml, pytest.ini, \
                         Python files under tests/, a package.json test script, go.mod, \
                         Cargo.toml)";

/// Detects the project's runners and runs them through `runner`, one after the other,
/// each bounded by `timeout`.
pub async fn run(
    workspace: &Path,
    kind: TaskKind,
    runner: &dyn CommandRunner,
    timeout: Duration,
) -> Verification {
    let detected = detect(workspace, std::env::var_os("PATH").as_deref());
    run_detected(detected, workspace, kind, runner, timeout).await
}

/// [`run`] over what detection found.
async fn run_detected(
    detected: Detected,
    workspace: &Path,
    kind: TaskKind,
    runner: &dyn CommandRunner,
    timeout: Duration,
) -> Verification {
    let places = parse::Places::new(workspace);
    let mut v = Verification {
        no_runner: !detected
            .planned
            .iter()
            .any(|p| p.tool.check() == Check::Tests),
        not_run: detected
            .notes
            .iter()
            .map(|(check, note)| (check.name().to_owned(), note.clone()))
            .collect(),
        ..Verification::default()
    };
    for planned in &detected.planned {
        let out = runner
            .run(CommandRequest {
                command: &planned.command,
                purpose: Purpose::Verification,
                timeout,
            })
            .await;
        let found = assess(planned, &out, kind, timeout, &places);
        v.test_failures.extend(found.test_failures);
        v.errors.extend(found.errors);
        v.suggestions.extend(found.suggestions);
        v.runs.push(found.run);
    }
    if v.no_runner && kind.is_test() {
        let mut s = String::from(
            "[tests] NOT RUN: no test runner detected; give the project tests it can run \
             (pytest tests under tests/, a package.json test script, go test, cargo test)",
        );
        for (_, note) in detected.notes.iter().filter(|(c, _)| *c == Check::Tests) {
            let _ = write!(s, "; {note}");
        }
        v.suggestions.push(s);
    }
    v
}

/// The three kinds of check, by their names in the seed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Check {
    Tests,
    Types,
    Lint,
}

impl Check {
    fn name(self) -> &'static str {
        match self {
            Check::Tests => "tests",
            Check::Types => "type_check",
            Check::Lint => "lint",
        }
    }
}

/// The tool behind a command: which check it is and how its output reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tool {
    Pytest,
    Npm,
    Go,
    Cargo,
    Mypy,
    Tsc,
    Ruff,
    Eslint,
}

impl Tool {
    fn check(self) -> Check {
        match self {
            Tool::Pytest | Tool::Npm | Tool::Go | Tool::Cargo => Check::Tests,
            Tool::Mypy | Tool::Tsc => Check::Types,
            Tool::Ruff | Tool::Eslint => Check::Lint,
        }
    }

    /// How to get `program`, found missing while running this tool's command.
    fn install_hint(self, program: &str) -> String {
        match program {
            "pytest" | "mypy" | "ruff" => format!("`python3 -m pip install {program}`"),
            "tsc" => "`npm install --save-dev typescript`".to_owned(),
            "eslint" => "`npm install --save-dev eslint`".to_owned(),
            "npm" | "npx" | "node" => "install Node.js".to_owned(),
            "cargo" => "install Rust (rustup)".to_owned(),
            "go" => "install Go".to_owned(),
            _ if self == Tool::Npm => "`npm install`".to_owned(),
            _ => format!("install {program}"),
        }
    }
}

/// A command the project's files ask for.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Planned {
    tool: Tool,
    command: String,
}

/// What detection found: the commands, in order, and why an expected one is missing.
#[derive(Debug, Default)]
struct Detected {
    planned: Vec<Planned>,
    notes: Vec<(Check, String)>,
}

/// Reads the project's files to choose its commands: tests, then type checks, then lint.
/// `path` is the `PATH` searched for `go`.
fn detect(workspace: &Path, path: Option<&OsStr>) -> Detected {
    let file = |name: &str| workspace.join(name).is_file();
    let pyproject = file("pyproject.toml");
    let package = read_package(workspace);
    let mut d = Detected::default();
    let mut plan = |tool: Tool, command: &str| {
        d.planned.push(Planned {
            tool,
            command: command.to_owned(),
        });
    };
    let python_tests = pyproject || file("pytest.ini") || has_python(&workspace.join("tests"), 3);
    let pytest_missing = python_tests && !pytest_installed(workspace, path);
    if python_tests && !pytest_missing {
        plan(Tool::Pytest, "python3 -m pytest --tb=short -q");
    }
    if let Some(script) = package.as_ref().and_then(|p| p.test_script.as_deref()) {
        // Only jest and vitest know `--passWithNoTests`; `node --test` rejects it.
        if script.contains("jest") || script.contains("vitest") {
            plan(Tool::Npm, "npm test -- --passWithNoTests");
        } else {
            plan(Tool::Npm, "npm test");
        }
    }
    let go_mod = file("go.mod");
    if go_mod && on_path("go", path) {
        plan(Tool::Go, "go test ./...");
    }
    if file("Cargo.toml") {
        plan(Tool::Cargo, "cargo test");
    }
    // mypy and ruff run as the machine's programs: where they are not installed the
    // check is "not run" with how to get them, never a failure of the work.
    let mypy = pyproject && installed("mypy", workspace, path);
    if mypy {
        plan(Tool::Mypy, "mypy .");
    }
    // `--no`: run the project's or the machine's tsc and eslint, never fetch a package.
    if file("tsconfig.json") {
        plan(Tool::Tsc, "npx --no -- tsc --noEmit");
    }
    let ruff = pyproject && installed("ruff", workspace, path);
    if ruff {
        plan(Tool::Ruff, "ruff check --output-format concise .");
    }
    if package.as_ref().is_some_and(|p| p.eslint_config) || has_eslint_config(workspace) {
        plan(Tool::Eslint, "npx --no -- eslint .");
    }
    if pytest_missing {
        d.notes.push((
            Check::Tests,
            format!(
                "pytest is not installed, so the tests were not run; install it: {}",
                Tool::Pytest.install_hint("pytest")
            ),
        ));
    }
    if go_mod && !on_path("go", path) {
        d.notes.push((
            Check::Tests,
            "go.mod is here but go is not installed, so go test was not run".to_owned(),
        ));
    }
    for (tool, program, wanted) in [
        (Tool::Mypy, "mypy", pyproject && !mypy),
        (Tool::Ruff, "ruff", pyproject && !ruff),
    ] {
        if wanted {
            d.notes.push((
                tool.check(),
                format!(
                    "{program} is not installed, so `{program}` was not run; install it: {}",
                    tool.install_hint(program)
                ),
            ));
        }
    }
    d
}

/// What `package.json` says about tests and lint.
struct Package {
    /// `scripts.test`, unless it is the placeholder `npm init` writes.
    test_script: Option<String>,
    /// An `eslintConfig` key.
    eslint_config: bool,
}

fn read_package(workspace: &Path) -> Option<Package> {
    let text = std::fs::read_to_string(workspace.join("package.json")).ok()?;
    let json: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    let test_script = json
        .pointer("/scripts/test")
        .and_then(|s| s.as_str())
        .filter(|s| !s.contains("no test specified"))
        .map(str::to_owned);
    Some(Package {
        test_script,
        eslint_config: json.get("eslintConfig").is_some(),
    })
}

fn has_eslint_config(workspace: &Path) -> bool {
    [
        "eslint.config.js",
        "eslint.config.mjs",
        "eslint.config.cjs",
        "eslint.config.ts",
        "eslint.config.mts",
        "eslint.config.cts",
        ".eslintrc",
        ".eslintrc.js",
        ".eslintrc.cjs",
        ".eslintrc.json",
        ".eslintrc.yml",
        ".eslintrc.yaml",
    ]
    .iter()
    .any(|name| workspace.join(name).is_file())
}

/// Whether `dir` holds a `.py` file within `depth` levels.
fn has_python(dir: &Path, depth: u32) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.flatten().any(|entry| {
        let path = entry.path();
        if path.is_dir() {
            depth > 1 && has_python(&path, depth - 1)
        } else {
            path.extension().is_some_and(|e| e == "py")
        }
    })
}

/// Whether the machine's `python3` (the first on `path` outside `workspace`) imports
/// pytest. Asked by atto, not read from the tests' output, which the project's code could
/// fake: `-I` from `/` reads nothing of the repository. A `python3` that does not answer
/// counts as one without pytest.
fn pytest_installed(workspace: &Path, path: Option<&OsStr>) -> bool {
    let Some(python) = path.and_then(|p| {
        std::env::split_paths(p)
            .filter(|dir| !dir.starts_with(workspace))
            .map(|dir| dir.join("python3"))
            .find(|f| f.is_file())
    }) else {
        return false;
    };
    std::process::Command::new(python)
        .args(["-I", "-c", "import pytest"])
        .current_dir("/")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Whether the machine's `program` (the first on `path` outside `workspace`, never one the
/// repository carries) answers `--version` from `/`. Found is not enough: a version
/// manager's shim (pyenv) is on `PATH` for tools it has not installed, and fails.
fn installed(program: &str, workspace: &Path, path: Option<&OsStr>) -> bool {
    let Some(found) = path.and_then(|p| {
        std::env::split_paths(p)
            .filter(|dir| !dir.starts_with(workspace))
            .map(|dir| dir.join(program))
            .find(|f| f.is_file())
    }) else {
        return false;
    };
    std::process::Command::new(found)
        .arg("--version")
        .current_dir("/")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Whether a file named `program` is in one of `path`'s directories (the caller's sandbox
/// may see another `PATH`; this is the machine's).
fn on_path(program: &str, path: Option<&OsStr>) -> bool {
    path.is_some_and(|p| std::env::split_paths(p).any(|dir| dir.join(program).is_file()))
}

/// One check's results, before they join the [`Verification`].
struct Assessed {
    run: CheckRun,
    test_failures: Vec<String>,
    errors: Vec<CompileError>,
    suggestions: Vec<String>,
}

/// Reads what `planned`'s command did.
fn assess(
    planned: &Planned,
    out: &CommandOutput,
    kind: TaskKind,
    timeout: Duration,
    places: &parse::Places,
) -> Assessed {
    let check = planned.tool.check();
    let command = &planned.command;
    let text = parse::plain(&out.output);
    let mut a = Assessed {
        run: CheckRun {
            name: check.name().to_owned(),
            command: command.clone(),
            passed: false,
            output: tail(&text, OUTPUT_TAIL),
            timed_out: out.timed_out,
            not_run: false,
            finding: String::new(),
            items: Vec::new(),
        },
        test_failures: Vec::new(),
        errors: Vec::new(),
        suggestions: Vec::new(),
    };
    if let Some(reason) = &out.refused {
        a.run.not_run = true;
        a.run.finding = format!("`{command}` was not run: {reason}");
        a.run.output.clone_from(reason);
    } else if out.timed_out {
        a.run.finding = format!(
            "timed out: `{command}` was killed after {}, its time limit; a test may hang or \
             wait for input",
            seconds(timeout)
        );
    } else if out.exit_code == Some(0) {
        a.run.passed = true;
    } else if let Some(program) = parse::missing_program(planned.tool, out.exit_code, &text) {
        a.run.not_run = true;
        a.run.finding = format!(
            "{program} is not installed, so `{command}` did not run; install it: {}",
            planned.tool.install_hint(&program)
        );
    } else if planned.tool == Tool::Pytest && out.exit_code == Some(5) {
        // pytest's "no tests collected": nothing failed, but nothing was shown either.
        a.run.passed = !kind.is_test();
        a.run.finding = "no tests were collected".to_owned();
        if kind.is_test() {
            a.run
                .finding
                .push_str("; write them as tests/test_*.py with functions named test_*");
        }
    } else if check == Check::Tests {
        failed_tests(&mut a, planned.tool, out.exit_code, &text);
    } else {
        failed_errors(&mut a, planned.tool, out.exit_code, &text, places);
    }
    if !a.run.passed && a.suggestions.is_empty() {
        let status = if a.run.not_run { "NOT RUN" } else { "FAILED" };
        a.suggestions
            .push(format!("[{}] {status}: {}", check.name(), a.run.finding));
    }
    a
}

/// A failed test run: its failed tests by name, or the output's most telling line.
fn failed_tests(a: &mut Assessed, tool: Tool, exit_code: Option<i32>, text: &str) {
    let names = parse::failed_tests(tool, text);
    let count = if names.is_empty() {
        parse::failed_count(text)
    } else {
        Some(names.len())
    };
    a.run.finding = match count {
        Some(1) => "1 test failed".to_owned(),
        Some(n) => format!("{n} tests failed"),
        None => exited(&a.run.command, exit_code, text),
    };
    a.run.items = names.into_iter().take(MAX_ITEMS).collect();
    a.test_failures.clone_from(&a.run.items);
}

/// A failed type check or lint: its errors with their places, or the most telling line.
fn failed_errors(
    a: &mut Assessed,
    tool: Tool,
    exit_code: Option<i32>,
    text: &str,
    places: &parse::Places,
) {
    let errors = parse::errors(tool, text, places);
    let lines: Vec<String> = errors.iter().map(parse::error_line).collect();
    let name = a.run.name.clone();
    a.run.finding = match lines.as_slice() {
        [] => exited(&a.run.command, exit_code, text),
        [one] => one.clone(),
        many => format!("{} errors", many.len()),
    };
    if lines.len() > 1 {
        a.run.items = lines.iter().take(MAX_ITEMS).cloned().collect();
    }
    a.suggestions = lines
        .iter()
        .take(MAX_ERROR_SUGGESTIONS)
        .map(|l| format!("[{name}] FAILED: {l}"))
        .collect();
    if lines.len() > MAX_ERROR_SUGGESTIONS {
        a.suggestions.push(format!(
            "[{name}] FAILED: … and {} more; run `{}` to see them all",
            lines.len() - MAX_ERROR_SUGGESTIONS,
            a.run.command
        ));
    }
    a.errors = errors.into_iter().take(MAX_ITEMS).collect();
}

/// `` `cmd` exited with code 1: <the telling line> ``.
fn exited(command: &str, exit_code: Option<i32>, text: &str) -> String {
    let how = match exit_code {
        Some(code) => format!("`{command}` exited with code {code}"),
        None => format!("`{command}` was killed by a signal"),
    };
    match parse::telling_line(text) {
        Some(line) => format!("{how}: {line}"),
        None => how,
    }
}

/// `2 s`, or `300 ms` under a second.
fn seconds(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{} ms", d.as_millis())
    }
}

/// The last `max` bytes of `text`, cut on a line (or at least a char) boundary.
fn tail(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut start = text.len() - max;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    let rest = &text[start..];
    let rest = match rest.find('\n') {
        Some(i) if i + 1 < rest.len() => &rest[i + 1..],
        _ => rest,
    };
    format!("[…]\n{rest}")
}

#[cfg(test)]
mod tests;
