//! The verification gate against real workspaces: which runners are detected, the lines
//! each check's output turns into, and what fails the gate when a check did not run.

use std::path::PathBuf;

use super::*;

fn workspace(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

/// A `PATH` with a `python3` that answers `import pytest` with `status`, and mypy
/// and ruff.
fn python_bin(status: i32) -> tempfile::TempDir {
    let bin = python_only(status);
    for tool in ["mypy", "ruff"] {
        executable(&bin.path().join(tool), "exit 0");
    }
    bin
}

/// A `PATH` with only a `python3` that answers `import pytest` with `status`.
fn python_only(status: i32) -> tempfile::TempDir {
    let bin = tempfile::tempdir().unwrap();
    executable(&bin.path().join("python3"), &format!("exit {status}"));
    bin
}

fn executable(path: &Path, body: &str) {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::write(path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn commands(dir: &Path, path: Option<&OsStr>) -> Vec<String> {
    let bin = python_bin(0);
    let with_python = bin.path().as_os_str().to_owned();
    detect(dir, path.or(Some(&with_python)))
        .planned
        .into_iter()
        .map(|p| p.command)
        .collect()
}

/// Files in a project, and the commands they call for.
type Case<'a> = (&'a [(&'a str, &'a str)], &'a [&'a str]);

#[test]
fn runners_are_detected_by_the_projects_files() {
    let table: &[Case<'_>] = &[
        (
            &[("pyproject.toml", "")],
            &[
                "python3 -m pytest --tb=short -q",
                "mypy .",
                "ruff check --output-format concise .",
            ],
        ),
        (
            &[("tests/test_a.py", "")],
            &["python3 -m pytest --tb=short -q"],
        ),
        // A tests/ directory of JavaScript is not pytest's.
        (&[("tests/a.test.js", "")], &[]),
        (
            &[("package.json", r#"{"scripts":{"test":"jest"}}"#)],
            &["npm test -- --passWithNoTests"],
        ),
        (
            &[("package.json", r#"{"scripts":{"test":"node --test"}}"#)],
            &["npm test"],
        ),
        (
            &[(
                "package.json",
                r#"{"scripts":{"test":"echo \"Error: no test specified\" && exit 1"}}"#,
            )],
            &[],
        ),
        (
            &[
                ("package.json", r#"{"eslintConfig":{}}"#),
                ("tsconfig.json", "{}"),
            ],
            &["npx --no -- tsc --noEmit", "npx --no -- eslint ."],
        ),
        (
            &[("package.json", "{}"), ("eslint.config.js", "")],
            &["npx --no -- eslint ."],
        ),
        (&[("Cargo.toml", "")], &["cargo test"]),
        (&[("README.md", "")], &[]),
    ];
    for (files, expected) in table {
        let dir = workspace(files);
        assert_eq!(commands(dir.path(), None), *expected, "{files:?}");
    }
}

#[test]
fn pytest_is_a_runner_only_where_the_machines_python_has_it() {
    let dir = workspace(&[("pytest.ini", ""), ("tests/test_a.py", "")]);
    let bin = python_bin(1);
    let without = detect(dir.path(), Some(bin.path().as_os_str()));
    assert!(without.planned.is_empty(), "{:?}", without.planned);
    assert_eq!(
        without.notes,
        [(
            Check::Tests,
            "pytest is not installed, so the tests were not run; install it: \
          `python3 -m pip install pytest`"
                .to_owned()
        )]
    );
    let v = Verification {
        not_run: vec![("tests".to_owned(), without.notes[0].1.clone())],
        ..Verification::default()
    };
    assert!(v.passed(TaskKind::Implement));
    assert!(
        v.summary()
            .contains("[tests] NOT RUN: pytest is not installed"),
        "{}",
        v.summary()
    );
    let bin = python_bin(0);
    let with = detect(dir.path(), Some(bin.path().as_os_str()));
    assert_eq!(with.planned.len(), 1);
    assert!(with.notes.is_empty());
}

#[test]
fn go_is_a_runner_only_where_go_is_installed() {
    let dir = workspace(&[("go.mod", "module x\n")]);
    let bin = workspace(&[("go", "")]);
    let with_go = bin.path().as_os_str().to_owned();
    assert_eq!(commands(dir.path(), Some(&with_go)), ["go test ./..."]);
    let without = detect(dir.path(), Some(OsStr::new("/nonexistent")));
    assert!(without.planned.is_empty());
    assert!(without.notes[0].1.contains("go is not installed"));
}

#[tokio::test]
async fn mypy_and_ruff_not_installed_are_not_run_with_how_to_install_them() {
    let dir = workspace(&[("pyproject.toml", "")]);
    let bin = python_only(0);
    let path = bin.path().as_os_str().to_owned();
    let detected = detect(dir.path(), Some(&path));
    let commands: Vec<&str> = detected
        .planned
        .iter()
        .map(|p| p.command.as_str())
        .collect();
    assert_eq!(commands, ["python3 -m pytest --tb=short -q"]);
    // Through the front door: the tests pass, the missing tools fail nothing.
    struct Passing;
    impl CommandRunner for Passing {
        fn run<'a>(&'a self, _: CommandRequest<'a>) -> crate::BoxFuture<'a, CommandOutput> {
            Box::pin(async { output(0, "1 passed") })
        }
    }
    let v = run_detected(
        detected,
        dir.path(),
        TaskKind::Implement,
        &Passing,
        Duration::from_secs(5),
    )
    .await;
    assert!(v.passed(TaskKind::Implement), "{}", v.summary());
    let summary = v.summary();
    assert!(
        summary.contains(
            "[type_check] NOT RUN: mypy is not installed, so `mypy` was not run; install \
             it: `python3 -m pip install mypy`"
        ),
        "{summary}"
    );
    assert!(
        summary.contains("[lint] NOT RUN: ruff is not installed"),
        "{summary}"
    );
    // A shim on PATH for a tool that is not installed (pyenv's exits 127) is no tool.
    let shims = tempfile::tempdir().unwrap();
    executable(&shims.path().join("mypy"), "exit 127");
    let path = std::env::join_paths([shims.path(), bin.path()]).unwrap();
    let detected = detect(dir.path(), Some(&path));
    assert!(detected.planned.iter().all(|p| p.tool != Tool::Mypy));
    // A `mypy` the repository carries on PATH is not the machine's.
    let venv = dir.path().join(".venv/bin");
    std::fs::create_dir_all(&venv).unwrap();
    executable(&venv.join("mypy"), "exit 0");
    let path = std::env::join_paths([venv, bin.path().to_path_buf()]).unwrap();
    let detected = detect(dir.path(), Some(&path));
    assert!(detected.planned.iter().all(|p| p.tool != Tool::Mypy));
}

fn run_with(tool: Tool, out: CommandOutput, kind: TaskKind) -> Assessed {
    let planned = Planned {
        tool,
        command: "cmd".to_owned(),
    };
    let places = parse::Places::new(&PathBuf::from("/w"));
    assess(&planned, &out, kind, Duration::from_secs(7), &places)
}

fn output(exit_code: i32, text: &str) -> CommandOutput {
    CommandOutput {
        exit_code: Some(exit_code),
        output: text.to_owned(),
        ..CommandOutput::default()
    }
}

#[test]
fn what_did_not_run_fails_and_says_why() {
    let refused = CommandOutput {
        refused: Some("denied by policy".to_owned()),
        ..CommandOutput::default()
    };
    let a = run_with(Tool::Pytest, refused, TaskKind::Implement);
    assert!(!a.run.passed && a.run.not_run);
    assert_eq!(
        a.suggestions,
        ["[tests] NOT RUN: `cmd` was not run: denied by policy"]
    );

    let missing = output(127, "sh: 1: mypy: not found\n");
    let a = run_with(Tool::Mypy, missing, TaskKind::Implement);
    assert!(!a.run.passed && a.run.not_run);
    assert!(
        a.run
            .finding
            .starts_with("mypy is not installed, so `cmd` did not run"),
        "{}",
        a.run.finding
    );
    assert!(a.run.finding.contains("python3 -m pip install mypy"));

    let timed_out = CommandOutput {
        timed_out: true,
        ..CommandOutput::default()
    };
    let a = run_with(Tool::Cargo, timed_out, TaskKind::Test);
    assert!(!a.run.passed && a.run.timed_out && !a.run.not_run);
    assert!(a.run.finding.contains("killed after 7 s"));
}

#[test]
fn no_tests_collected_fails_only_a_test_task() {
    let a = run_with(Tool::Pytest, output(5, "no tests ran"), TaskKind::Implement);
    assert!(a.run.passed);
    let a = run_with(Tool::Pytest, output(5, "no tests ran"), TaskKind::Test);
    assert!(!a.run.passed);
    assert!(a.suggestions[0].starts_with("[tests] FAILED: no tests were collected"));
}

#[test]
fn the_summary_is_the_seeds_block() {
    let v = Verification {
        runs: vec![
            CheckRun {
                name: "tests".into(),
                command: "python3 -m pytest --tb=short -q".into(),
                passed: false,
                output: String::new(),
                timed_out: false,
                not_run: false,
                finding: "2 tests failed".into(),
                items: vec![
                    "test_user_validation::test_empty_email".into(),
                    "test_user_validation::test_password_too_short".into(),
                ],
            },
            CheckRun {
                name: "type_check".into(),
                command: "mypy .".into(),
                passed: false,
                output: String::new(),
                timed_out: false,
                not_run: false,
                finding: "src/models/user.py:42: error: Argument 1 has incompatible type \
                          \"str\""
                    .into(),
                items: vec![],
            },
            CheckRun {
                name: "lint".into(),
                command: "ruff check .".into(),
                passed: true,
                output: String::new(),
                timed_out: false,
                not_run: false,
                finding: String::new(),
                items: vec![],
            },
        ],
        ..Verification::default()
    };
    assert_eq!(
        v.summary(),
        "[tests] FAILED: 2 tests failed\n  \
         - test_user_validation::test_empty_email\n  \
         - test_user_validation::test_password_too_short\n\
         [type_check] FAILED: src/models/user.py:42: error: Argument 1 has incompatible \
         type \"str\"\n\
         [lint] PASSED\n"
    );
    assert!(!v.passed(TaskKind::Implement));
}

#[test]
fn a_long_output_keeps_its_end() {
    let text = format!("{}\nlast line é\n", "x".repeat(10_000));
    let kept = tail(&text, 100);
    assert!(kept.len() <= 110);
    assert!(kept.ends_with("last line é\n"));
}
