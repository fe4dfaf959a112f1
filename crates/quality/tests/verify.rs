//! The verification gate through the front door: small real projects written into temp
//! directories, the real toolchains run by `LocalRunner`, assertions on what the gate
//! reports. A test whose tool is missing says SKIPPED here and fails under `CI=true`,
//! where scripts/test.sh installs pytest, mypy, ruff, typescript and eslint.
// Tests fail loudly on setup errors; workspace lints deny these outside #[test] functions.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use atto_quality::verify::{self, Verification};
use atto_quality::{
    BoxFuture, CommandOutput, CommandRequest, CommandRunner, LocalRunner, Purpose, Severity,
    TaskKind,
};
use tempfile::TempDir;

/// Writes `files` into a new temp directory.
fn project(files: &[(&str, &str)]) -> TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

async fn verify_in(dir: &Path, kind: TaskKind) -> Verification {
    let runner = LocalRunner::new(dir.to_path_buf());
    verify::run(dir, kind, &runner, Duration::from_secs(120)).await
}

/// Whether `probe` succeeds; when it does not, the test is reported as skipped, or fails
/// under CI, where the tool must be there.
fn have(test: &str, probe: &str, what: &str) -> bool {
    let ok = std::process::Command::new("sh")
        .args(["-c", probe])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "{what} is missing under CI (`{probe}` failed): scripts/test.sh must install it"
        );
        atto_testkit::skipped(
            &format!("quality verify::{test}"),
            &format!("{what} is missing"),
        );
    }
    ok
}

fn have_pytest(test: &str) -> bool {
    have(test, "python3 -m pytest --version", "pytest")
}

fn run_named<'a>(v: &'a Verification, name: &str) -> &'a verify::CheckRun {
    v.runs
        .iter()
        .find(|r| r.name == name)
        .unwrap_or_else(|| panic!("no {name} run in {v:#?}"))
}

#[tokio::test]
async fn a_failing_pytest_test_is_named_in_the_test_failures() {
    if !have_pytest("a_failing_pytest_test") {
        return;
    }
    let dir = project(&[(
        "tests/test_math.py",
        "def test_adds():\n    assert 1 + 1 == 2\n\n\
         def test_subtracts():\n    assert 3 - 1 == 1, 'off by one'\n",
    )]);
    let v = verify_in(dir.path(), TaskKind::Test).await;
    assert_eq!(v.runs.len(), 1, "{v:#?}");
    let run = &v.runs[0];
    assert_eq!(run.command, "python3 -m pytest --tb=short -q");
    assert!(!run.passed);
    assert_eq!(v.test_failures, ["tests/test_math.py::test_subtracts"]);
    assert_eq!(v.suggestions, ["[tests] FAILED: 1 test failed"]);
    assert_eq!(
        v.summary(),
        "[tests] FAILED: 1 test failed\n  - tests/test_math.py::test_subtracts\n"
    );
    assert!(run.output.contains("off by one"), "{}", run.output);
    assert!(!v.passed(TaskKind::Test));
}

#[tokio::test]
async fn a_passing_pytest_project_passes() {
    if !have_pytest("a_passing_pytest_project") {
        return;
    }
    let dir = project(&[(
        "tests/test_ok.py",
        "def test_adds():\n    assert 1 + 1 == 2\n",
    )]);
    let v = verify_in(dir.path(), TaskKind::Test).await;
    assert!(v.passed(TaskKind::Test), "{v:#?}");
    assert!(!v.no_runner);
    assert_eq!(v.summary(), "[tests] PASSED\n");
    assert!(v.test_failures.is_empty() && v.suggestions.is_empty());
}

#[tokio::test]
async fn a_mypy_type_error_is_reported_with_its_file_and_line() {
    if !have("a_mypy_type_error", "mypy --version", "mypy") {
        return;
    }
    let dir = project(&[
        (
            "pyproject.toml",
            "[project]\nname = \"app\"\nversion = \"0.1.0\"\n",
        ),
        (
            "src/app.py",
            "def count() -> int:\n    total = 0\n    return \"many\"\n",
        ),
    ]);
    let v = verify_in(dir.path(), TaskKind::Implement).await;
    let run = run_named(&v, "type_check");
    assert_eq!(run.command, "mypy .");
    assert!(!run.passed);
    let error = v
        .errors
        .iter()
        .find(|e| e.file == "src/app.py")
        .unwrap_or_else(|| panic!("no error in src/app.py: {v:#?}"));
    assert_eq!(error.line, Some(3));
    assert_eq!(error.severity, Severity::Error);
    assert!(error.message.contains("Incompatible return value type"));
    assert!(
        v.suggestions
            .iter()
            .any(|s| s.starts_with("[type_check] FAILED: src/app.py:3: error: Incompatible")),
        "{:?}",
        v.suggestions
    );
    assert!(
        v.summary()
            .contains("[type_check] FAILED: src/app.py:3: error: Incompatible")
    );
    assert!(!v.passed(TaskKind::Implement));
}

#[tokio::test]
async fn a_ruff_lint_error_is_reported_with_its_file_and_line() {
    if !have("a_ruff_lint_error", "ruff --version", "ruff") {
        return;
    }
    let dir = project(&[
        (
            "pyproject.toml",
            "[project]\nname = \"app\"\nversion = \"0.1.0\"\n",
        ),
        ("app.py", "import os\n\nVALUE = 1\n"),
    ]);
    let v = verify_in(dir.path(), TaskKind::Implement).await;
    let run = run_named(&v, "lint");
    assert!(!run.passed);
    let error = v
        .errors
        .iter()
        .find(|e| e.message.starts_with("F401"))
        .unwrap_or_else(|| panic!("no F401: {v:#?}"));
    assert_eq!((error.file.as_str(), error.line), ("app.py", Some(1)));
    assert!(
        v.suggestions
            .iter()
            .any(|s| s.starts_with("[lint] FAILED: app.py:1: error: F401")),
        "{:?}",
        v.suggestions
    );
    assert!(!v.passed(TaskKind::Implement));
}

#[tokio::test]
async fn a_failing_npm_test_script_fails_the_tests_check() {
    if !have(
        "a_failing_npm_test",
        "npm --version && node --version",
        "node and npm",
    ) {
        return;
    }
    let dir = project(&[
        (
            "package.json",
            r#"{"name": "calc", "version": "1.0.0", "scripts": {"test": "node test.js"}}"#,
        ),
        (
            "test.js",
            "const assert = require('node:assert');\nassert.strictEqual(1 + 1, 3);\n",
        ),
    ]);
    let v = verify_in(dir.path(), TaskKind::Test).await;
    assert_eq!(v.runs.len(), 1, "{v:#?}");
    let run = &v.runs[0];
    assert_eq!(run.command, "npm test");
    assert!(!run.passed && !run.not_run && !run.timed_out);
    assert!(
        run.finding
            .starts_with("`npm test` exited with code 1: AssertionError"),
        "{}",
        run.finding
    );
    assert_eq!(v.suggestions, [format!("[tests] FAILED: {}", run.finding)]);
    assert!(!v.passed(TaskKind::Test));
}

#[tokio::test]
async fn node_test_failures_are_named() {
    if !have(
        "node_test_failures",
        "npm --version && node --version",
        "node and npm",
    ) {
        return;
    }
    let dir = project(&[
        (
            "package.json",
            r#"{"name": "calc", "version": "1.0.0", "scripts": {"test": "node --test"}}"#,
        ),
        (
            "calc.test.js",
            "const test = require('node:test');\nconst assert = require('node:assert');\n\
             test('adds numbers', () => { assert.strictEqual(1 + 1, 3); });\n\
             test('keeps zero', () => { assert.strictEqual(0, 0); });\n",
        ),
    ]);
    let v = verify_in(dir.path(), TaskKind::Test).await;
    assert_eq!(v.test_failures, ["adds numbers"], "{v:#?}");
    assert_eq!(v.runs[0].finding, "1 test failed");
}

#[tokio::test]
async fn a_tsc_type_error_is_reported_with_its_file_and_line() {
    if !have(
        "a_tsc_type_error",
        "npx --no -- tsc --version",
        "typescript (tsc)",
    ) {
        return;
    }
    let dir = project(&[
        ("tsconfig.json", r#"{"compilerOptions": {"strict": true}}"#),
        (
            "src/total.ts",
            "export function total(): number {\n  const n: number = \"three\";\n  return n;\n}\n",
        ),
    ]);
    let v = verify_in(dir.path(), TaskKind::Implement).await;
    let run = run_named(&v, "type_check");
    assert_eq!(run.command, "npx --no -- tsc --noEmit");
    assert!(!run.passed && !run.not_run, "{run:#?}");
    assert_eq!(v.errors.len(), 1, "{v:#?}");
    let error = &v.errors[0];
    assert_eq!((error.file.as_str(), error.line), ("src/total.ts", Some(2)));
    assert!(error.message.starts_with("TS2322:"), "{}", error.message);
    // No test runner here, which only a test task minds.
    assert!(v.no_runner);
    assert!(!v.passed(TaskKind::Implement));
}

#[tokio::test]
async fn an_eslint_error_is_reported_with_its_file_and_line() {
    if !have("an_eslint_error", "npx --no -- eslint --version", "eslint") {
        return;
    }
    let dir = project(&[
        ("package.json", r#"{"name": "app", "version": "1.0.0"}"#),
        (
            "eslint.config.mjs",
            "export default [{ rules: { 'no-unused-vars': 'error' } }];\n",
        ),
        ("src/app.js", "const unused = 1;\n"),
    ]);
    let v = verify_in(dir.path(), TaskKind::Implement).await;
    let run = run_named(&v, "lint");
    assert!(!run.passed && !run.not_run, "{run:#?}");
    assert_eq!(v.errors.len(), 1, "{v:#?}");
    let error = &v.errors[0];
    assert_eq!((error.file.as_str(), error.line), ("src/app.js", Some(1)));
    assert!(
        error.message.ends_with("(no-unused-vars)"),
        "{}",
        error.message
    );
}

#[tokio::test]
async fn a_test_task_without_a_runner_fails_with_no_runner() {
    let dir = project(&[("README.md", "# notes\n")]);
    let v = verify_in(dir.path(), TaskKind::Test).await;
    assert!(v.runs.is_empty());
    assert!(v.no_runner);
    assert!(!v.passed(TaskKind::Test));
    assert!(v.passed(TaskKind::Document));
    assert!(
        v.summary()
            .starts_with("[tests] NOT RUN: no test runner detected")
    );
    assert!(v.suggestions[0].starts_with("[tests] NOT RUN: no test runner detected"));
}

/// The processes whose working directory is `dir` (Linux `/proc`; none elsewhere).
fn processes_in(dir: &Path) -> Vec<String> {
    let dir = dir.canonicalize().unwrap();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|e| std::fs::read_link(e.path().join("cwd")).is_ok_and(|cwd| cwd == dir))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect()
}

#[tokio::test]
async fn a_suite_that_never_ends_is_killed_at_the_timeout() {
    if !have_pytest("a_suite_that_never_ends") {
        return;
    }
    let marker = "sleep 613.2917";
    let dir = project(&[(
        "tests/test_hang.py",
        "import pathlib, subprocess, time\n\n\
         def test_hangs():\n    \
         subprocess.Popen(['sleep', '613.2917'])\n    \
         pathlib.Path('started').write_text('yes')\n    \
         time.sleep(600)\n",
    )]);
    let runner = LocalRunner::new(dir.path().to_path_buf());
    let started = Instant::now();
    let v = verify::run(dir.path(), TaskKind::Test, &runner, Duration::from_secs(2)).await;
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
    assert!(
        dir.path().join("started").exists(),
        "the suite never started"
    );
    let run = &v.runs[0];
    assert!(run.timed_out && !run.passed, "{run:#?}");
    assert!(run.finding.starts_with("timed out:"), "{}", run.finding);
    assert!(v.summary().starts_with("[tests] FAILED: timed out:"));
    assert!(!v.passed(TaskKind::Test));
    tokio::time::sleep(Duration::from_millis(200)).await;
    let left = std::process::Command::new("pgrep")
        .args(["-f", marker])
        .output()
        .unwrap();
    assert!(
        left.stdout.is_empty(),
        "the suite's child outlived the timeout"
    );
    assert_eq!(processes_in(dir.path()), Vec::<String>::new());
}

/// `LocalRunner` with cargo's build directory inside the project: the outer `cargo test`
/// may set `CARGO_TARGET_DIR`, and holds that directory's lock while tests run.
struct OwnTarget {
    inner: LocalRunner,
    target: PathBuf,
}

impl CommandRunner for OwnTarget {
    fn run<'a>(&'a self, request: CommandRequest<'a>) -> BoxFuture<'a, CommandOutput> {
        Box::pin(async move {
            let command = format!(
                "CARGO_TARGET_DIR='{}' CARGO_NET_OFFLINE=true {}",
                self.target.display(),
                request.command
            );
            self.inner
                .run(CommandRequest {
                    command: &command,
                    ..request
                })
                .await
        })
    }
}

#[tokio::test]
async fn a_failing_cargo_test_is_named() {
    let dir = project(&[
        (
            "Cargo.toml",
            "[package]\nname = \"fixture\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
             [workspace]\n",
        ),
        (
            "src/lib.rs",
            "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\n\
             #[cfg(test)]\nmod tests {\n    use super::*;\n\n    \
             #[test]\n    fn adds() {\n        assert_eq!(add(1, 2), 3);\n    }\n\n    \
             #[test]\n    fn adds_wrongly() {\n        assert_eq!(add(1, 2), 4);\n    }\n}\n",
        ),
    ]);
    let runner = OwnTarget {
        inner: LocalRunner::new(dir.path().to_path_buf()),
        target: dir.path().join("target"),
    };
    let v = verify::run(
        dir.path(),
        TaskKind::Test,
        &runner,
        Duration::from_secs(300),
    )
    .await;
    assert_eq!(v.runs.len(), 1, "{v:#?}");
    assert_eq!(v.runs[0].command, "cargo test");
    assert_eq!(v.test_failures, ["tests::adds_wrongly"], "{v:#?}");
    assert_eq!(v.suggestions, ["[tests] FAILED: 1 test failed"]);
    assert!(!v.passed(TaskKind::Test));
}

/// Refuses every command, as a policy gate would, and remembers what it was asked.
#[derive(Default)]
struct Refusing {
    asked: Mutex<Vec<(String, Purpose, Duration)>>,
}

impl CommandRunner for Refusing {
    fn run<'a>(&'a self, request: CommandRequest<'a>) -> BoxFuture<'a, CommandOutput> {
        self.asked.lock().unwrap().push((
            request.command.to_owned(),
            request.purpose,
            request.timeout,
        ));
        Box::pin(async {
            CommandOutput {
                refused: Some("the gate said no".to_owned()),
                ..CommandOutput::default()
            }
        })
    }
}

#[tokio::test]
async fn every_command_goes_through_the_runner_and_a_refusal_fails_the_check() {
    let dir = project(&[
        ("pyproject.toml", "[project]\nname = \"app\"\n"),
        ("tests/test_a.py", "def test_a():\n    pass\n"),
    ]);
    let runner = Refusing::default();
    let timeout = Duration::from_secs(42);
    let v = verify::run(dir.path(), TaskKind::Implement, &runner, timeout).await;
    let asked = runner.asked.lock().unwrap().clone();
    let expected: Vec<(String, Purpose, Duration)> = [
        "python3 -m pytest --tb=short -q",
        "mypy .",
        "ruff check --output-format concise .",
    ]
    .iter()
    .map(|c| ((*c).to_owned(), Purpose::Verification, timeout))
    .collect();
    assert_eq!(asked, expected);
    assert!(v.runs.iter().all(|r| !r.passed && r.not_run));
    assert_eq!(
        v.summary(),
        "[tests] NOT RUN: `python3 -m pytest --tb=short -q` was not run: the gate said no\n\
         [type_check] NOT RUN: `mypy .` was not run: the gate said no\n\
         [lint] NOT RUN: `ruff check --output-format concise .` was not run: the gate said no\n"
    );
    assert!(!v.passed(TaskKind::Implement));
}

#[tokio::test]
async fn a_tool_the_machine_lacks_is_not_run_and_fails() {
    // An empty PATH inside the command: the shell finds no mypy, ruff or python3.
    struct NoTools(LocalRunner);
    impl CommandRunner for NoTools {
        fn run<'a>(&'a self, request: CommandRequest<'a>) -> BoxFuture<'a, CommandOutput> {
            Box::pin(async move {
                let command = format!("PATH=/nonexistent; {}", request.command);
                self.0
                    .run(CommandRequest {
                        command: &command,
                        ..request
                    })
                    .await
            })
        }
    }
    let dir = project(&[("pyproject.toml", "[project]\nname = \"app\"\n")]);
    let runner = NoTools(LocalRunner::new(dir.path().to_path_buf()));
    let v = verify::run(
        dir.path(),
        TaskKind::Implement,
        &runner,
        Duration::from_secs(30),
    )
    .await;
    let run = run_named(&v, "type_check");
    assert!(!run.passed && run.not_run, "{run:#?}");
    assert!(
        run.finding.starts_with("mypy is not installed"),
        "{}",
        run.finding
    );
    assert!(
        v.suggestions.iter().any(
            |s| s.starts_with("[type_check] NOT RUN: mypy is not installed")
                && s.contains("python3 -m pip install mypy")
        ),
        "{:?}",
        v.suggestions
    );
    assert!(
        run_named(&v, "tests")
            .finding
            .starts_with("python3 is not installed")
    );
    assert!(!v.passed(TaskKind::Implement));
}
