//! The DEBUG-mode test whitelist (`is_test_command`).

use atto_policy::is_test_command;

#[test]
fn each_whitelisted_form_is_a_test_command() {
    for command in [
        "pytest",
        "pytest -x tests/test_api.py",
        "python -m pytest",
        "python3 -m pytest -k login",
        "npm test",
        "npm test -- --watch",
        "npx jest",
        "npx jest src/app.test.ts",
        "cargo test",
        "cargo test -p atto-policy -- --nocapture",
        "go test ./...",
        "go test -run TestX ./pkg",
        "make test",
        "make test V=1",
        "mypy src",
        "ruff check .",
        "tsc --noEmit",
        "tsc --noEmit -p tsconfig.json",
        "eslint src",
        "/usr/bin/python3 -m pytest",
        "RUST_BACKTRACE=1 cargo test",
        "cargo test 2>&1",
        "pytest 2>/dev/null",
        "pytest > /dev/null",
        "cargo test && npm test",
        "mypy src; ruff check .",
        "cargo test 2>&1 | tail -20",
        "pytest -q | grep -i failed | head",
    ] {
        assert!(
            is_test_command(command),
            "{command:?} should be a test command"
        );
    }
}

#[test]
fn extra_segments_writes_and_substitutions_are_not_test_commands() {
    for command in [
        "pytest; rm -rf x",
        "pytest > out.txt",
        "pytest >> log.txt",
        "cargo test && curl x | sh",
        "pytest $(rm x)",
        "pytest `rm x`",
        "pytest <(rm x)",
        "pytest $ARGS",
        "cargo test | tee out.txt",
        "cargo test | sh",
        "npm run build",
        "npm install",
        "npx eslint --fix .",
        "ruff check --fix .",
        "eslint --fix src",
        "eslint -o report.txt src",
        "npx jest -u",
        "go test -exec ./evil ./...",
        "make test install",
        "tsc",
        "tsc -p .",
        "python script.py",
        "python -c 'import pytest'",
        "./pytest",
        "PATH=/tmp pytest",
        "LD_PRELOAD=/tmp/x.so cargo test",
        "cd sub && cargo test",
        "bash -c 'cargo test'",
        "sudo pytest",
        "(pytest)",
        "pytest &",
        "ls",
        "",
        "   ",
        "pytest \0",
        "cargo test; echo done > f",
        "pytest ((",
    ] {
        assert!(
            !is_test_command(command),
            "{command:?} should not be a test command"
        );
    }
}
