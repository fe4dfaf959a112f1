//! Reading the tools' output: failed test names (pytest, cargo, go, jest, vitest, TAP and
//! node's spec reporter), errors with their places (mypy, tsc, ruff, eslint's stylish
//! format), a program that is not installed, and the line that best says what went wrong.
//! Plain functions over text; running the tools is `verify`'s.

use std::path::{Path, PathBuf};

use super::Tool;
use crate::{CompileError, Severity};

/// Longest line quoted from a tool's output.
const MAX_LINE: usize = 200;

/// Turns the paths tools print (absolute, `./`-prefixed) into workspace-relative ones.
pub(super) struct Places {
    workspace: PathBuf,
    canonical: Option<PathBuf>,
}

impl Places {
    pub(super) fn new(workspace: &Path) -> Self {
        Places {
            workspace: workspace.to_path_buf(),
            canonical: workspace.canonicalize().ok(),
        }
    }

    fn relative(&self, file: &str) -> String {
        let path = Path::new(file);
        for root in std::iter::once(&self.workspace).chain(self.canonical.as_ref()) {
            if let Ok(rest) = path.strip_prefix(root) {
                return rest.to_string_lossy().into_owned();
            }
        }
        file.strip_prefix("./").unwrap_or(file).to_owned()
    }
}

/// `text` without terminal colours and carriage returns.
pub(super) fn plain(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\x1b' => {
                if chars.next_if_eq(&'[').is_some() {
                    // A CSI sequence ends at its first byte in '@'..='~'.
                    for c in chars.by_ref() {
                        if ('@'..='~').contains(&c) {
                            break;
                        }
                    }
                } else {
                    chars.next();
                }
            }
            '\r' => {
                if chars.peek() != Some(&'\n') {
                    out.push('\n');
                }
            }
            c => out.push(c),
        }
    }
    out
}

/// The program whose absence stopped the command, if that is what happened: the shell's
/// `x: not found`, `python3 -m pytest` without pytest, npx that would have to fetch a
/// package.
pub(super) fn missing_program(tool: Tool, exit_code: Option<i32>, text: &str) -> Option<String> {
    if exit_code == Some(0) {
        return None;
    }
    if tool == Tool::Pytest && text.lines().any(|l| l.ends_with("No module named pytest")) {
        return Some("pytest".to_owned());
    }
    // npx (`--no`) prints only its own `npm error` lines when it cannot find the program.
    if matches!(tool, Tool::Tsc | Tool::Eslint)
        && text
            .lines()
            .any(|l| l.starts_with("npm error") || l.starts_with("npm ERR!"))
    {
        let program = if tool == Tool::Tsc { "tsc" } else { "eslint" };
        return Some(program.to_owned());
    }
    if exit_code != Some(127) {
        return None;
    }
    // `sh: 1: mypy: not found`, `bash: mypy: command not found`, pyenv's shim likewise.
    text.lines().rev().find_map(|l| {
        let head = l
            .strip_suffix(": command not found")
            .or_else(|| l.strip_suffix(": not found"))?;
        let program = head.rsplit(": ").next()?.trim();
        (!program.is_empty() && !program.contains(' ')).then(|| program.to_owned())
    })
}

/// Names of the failed tests, in order, each once.
pub(super) fn failed_tests(tool: Tool, text: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for line in text.lines() {
        let name = match tool {
            Tool::Pytest => pytest_failure(line),
            Tool::Cargo => line
                .trim()
                .strip_prefix("test ")
                .and_then(|l| l.strip_suffix(" ... FAILED")),
            Tool::Go => line
                .trim_start()
                .strip_prefix("--- FAIL: ")
                .map(|l| l.split(" (").next().unwrap_or(l)),
            Tool::Npm => node_failure(line.trim()),
            Tool::Mypy | Tool::Tsc | Tool::Ruff | Tool::Eslint => None,
        };
        if let Some(name) = name.map(str::trim).filter(|n| !n.is_empty())
            && !names.iter().any(|n| n == name)
        {
            names.push(name.to_owned());
        }
    }
    names
}

/// `FAILED tests/test_a.py::test_x - AssertionError` or `ERROR tests/test_b.py - …`.
fn pytest_failure(line: &str) -> Option<&str> {
    let rest = line
        .strip_prefix("FAILED ")
        .or_else(|| line.strip_prefix("ERROR "))?;
    // A parametrized id's brackets may hold " - ": look for the reason after them.
    let from = match (rest.find('['), rest.find(" - ")) {
        (Some(open), Some(dash)) if open < dash => rest[open..].find(']').map_or(0, |c| open + c),
        _ => 0,
    };
    Some(rest[from..].find(" - ").map_or(rest, |i| &rest[..from + i]))
}

/// A failed test in the output of jest (`● Suite › name`), vitest (`FAIL  file > name`),
/// TAP (`not ok 1 - name`) or node's spec reporter (`✖ name (1.2ms)`).
fn node_failure(line: &str) -> Option<&str> {
    if let Some(name) = line.strip_prefix("● ") {
        return (!name.starts_with("Console")).then_some(name);
    }
    if let Some(rest) = line.strip_prefix("FAIL ") {
        return rest.contains(" > ").then_some(rest);
    }
    if let Some(rest) = line.strip_prefix("not ok ") {
        if rest.contains("# SKIP") || rest.contains("# TODO") {
            return None;
        }
        return rest.split_once(" - ").map(|(_, name)| name);
    }
    if let Some(rest) = line.strip_prefix("✖ ") {
        if rest.ends_with(':') {
            return None;
        }
        return Some(match rest.rfind(" (") {
            Some(i) if rest.ends_with("ms)") => &rest[..i],
            _ => rest,
        });
    }
    None
}

/// How many tests failed, from a summary line (`2 failed`, `3 failing`, `# fail 1`), when
/// the names could not be read.
pub(super) fn failed_count(text: &str) -> Option<usize> {
    let mut found = None;
    for line in text.lines() {
        let words: Vec<&str> = line
            .split_whitespace()
            .map(|w| w.trim_matches(|c: char| matches!(c, ',' | ';' | '|' | '.' | ':')))
            .collect();
        for pair in words.windows(2) {
            let n = match pair {
                [n, "failed" | "failing"] => n.parse::<usize>().ok(),
                ["fail", n] => n.parse::<usize>().ok(),
                _ => None,
            };
            if let Some(n) = n.filter(|&n| n > 0) {
                found = Some(n);
            }
        }
    }
    found
}

/// Type and lint errors with their places; warnings are left out.
pub(super) fn errors(tool: Tool, text: &str, places: &Places) -> Vec<CompileError> {
    let error = |file: &str, line: Option<u32>, message: &str| CompileError {
        file: places.relative(file),
        line,
        message: clip(message.trim()),
        severity: Severity::Error,
    };
    match tool {
        Tool::Mypy => text
            .lines()
            .filter_map(|l| {
                let (place, message) = l.split_once(": error: ")?;
                let mut parts = place.split(':');
                let file = parts.next()?;
                Some(error(
                    file,
                    parts.next().and_then(|n| n.parse().ok()),
                    message,
                ))
            })
            .collect(),
        Tool::Tsc => text
            .lines()
            .filter_map(|l| {
                let (file, line, message) = tsc_error(l)?;
                Some(error(file, line, message))
            })
            .collect(),
        Tool::Ruff => text
            .lines()
            .filter_map(|l| {
                let mut parts = l.splitn(4, ':');
                let (file, line, column, message) =
                    (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
                column.parse::<u32>().ok()?;
                let message = message.trim().replacen(" [*]", "", 1);
                Some(error(file, Some(line.parse().ok()?), &message))
            })
            .collect(),
        Tool::Eslint => eslint_errors(text)
            .into_iter()
            .map(|(file, line, message)| error(file, line, &message))
            .collect(),
        Tool::Pytest | Tool::Npm | Tool::Go | Tool::Cargo => Vec::new(),
    }
}

/// `a.ts(1,7): error TS2322: …` (plain) or `a.ts:1:7 - error TS2322: …` (pretty).
fn tsc_error(line: &str) -> Option<(&str, Option<u32>, &str)> {
    if let Some(i) = line.find("): error TS") {
        let head = &line[..i];
        let open = head.rfind('(')?;
        let number = head[open + 1..].split(',').next()?.parse().ok();
        return Some((&head[..open], number, &line[i + "): error ".len()..]));
    }
    let i = line.find(" - error TS")?;
    let mut place = line[..i].split(':');
    let file = place.next()?;
    let number = place.next()?.parse().ok();
    Some((file, number, &line[i + " - error ".len()..]))
}

/// eslint's stylish format: a file's path, then `  1:7  error  message  rule` lines.
fn eslint_errors(text: &str) -> Vec<(&str, Option<u32>, String)> {
    let mut found = Vec::new();
    let mut file = None;
    for line in text.lines() {
        if !line.starts_with(char::is_whitespace) {
            if Path::new(line.trim_end()).is_absolute() {
                file = Some(line.trim_end());
            }
            continue;
        }
        let Some(file) = file else { continue };
        let parts: Vec<&str> = line
            .split("  ")
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .collect();
        let [place, "error", said @ ..] = parts.as_slice() else {
            continue;
        };
        let Some(number) = place.split(':').next().and_then(|n| n.parse().ok()) else {
            continue;
        };
        let message = match said {
            [] => continue,
            [message] => (*message).to_owned(),
            [message @ .., rule] if !rule.contains(' ') => {
                format!("{} ({rule})", message.join("  "))
            }
            all => all.join("  "),
        };
        found.push((file, Some(number), message));
    }
    found
}

/// `file:line: error: message`, as the seed's suggestions show an error.
pub(super) fn error_line(e: &CompileError) -> String {
    match e.line {
        Some(line) => format!("{}:{line}: error: {}", e.file, e.message),
        None => format!("{}: error: {}", e.file, e.message),
    }
}

/// The line that best says what went wrong: the first `error: …` or `SomeError: …`, else
/// the last line that is not npm's or node's chatter.
pub(super) fn telling_line(text: &str) -> Option<String> {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !is_chatter(l))
        .collect();
    let line = lines.iter().find(|l| is_error_line(l)).or(lines.last())?;
    Some(clip(line))
}

fn is_error_line(line: &str) -> bool {
    let lower = line.to_ascii_lowercase();
    if lower.starts_with("error:") || lower.starts_with("error[") {
        return true;
    }
    let word = line.split([' ', ':', '[', '(']).next().unwrap_or("");
    word.len() > "Error".len()
        && word.ends_with("Error")
        && line[word.len()..].trim_start().starts_with([':', '['])
}

fn is_chatter(line: &str) -> bool {
    [
        "npm warn",
        "npm WARN",
        "npm notice",
        "npm error A complete log",
        "Node.js v",
        "> ",
    ]
    .iter()
    .any(|p| line.starts_with(p))
}

/// `line` cut to [`MAX_LINE`] bytes on a char boundary.
fn clip(line: &str) -> String {
    if line.len() <= MAX_LINE {
        return line.to_owned();
    }
    let mut end = MAX_LINE;
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &line[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failed_tests_are_named_from_each_runners_output() {
        let table: &[(Tool, &str, &[&str])] = &[
            (
                Tool::Pytest,
                "..F\n=========================== short test summary info \
                 ============================\n\
                 FAILED tests/test_a.py::test_bad - AssertionError: nope\n\
                 FAILED tests/test_a.py::TestK::test_m - assert False\n\
                 FAILED tests/test_p.py::test_x[a - b] - assert 0\n\
                 ERROR tests/test_b.py - ModuleNotFoundError: No module named 'requests'\n\
                 2 failed, 1 passed in 0.02s\n",
                &[
                    "tests/test_a.py::test_bad",
                    "tests/test_a.py::TestK::test_m",
                    "tests/test_p.py::test_x[a - b]",
                    "tests/test_b.py",
                ],
            ),
            (
                Tool::Cargo,
                "running 2 tests\ntest tests::good ... ok\ntest tests::bad ... FAILED\n\n\
                 failures:\n\n---- tests::bad stdout ----\n\nfailures:\n    tests::bad\n\n\
                 test result: FAILED. 1 passed; 1 failed; 0 ignored\n",
                &["tests::bad"],
            ),
            (
                Tool::Go,
                "--- FAIL: TestAdd (0.00s)\n    --- FAIL: TestAdd/zero (0.00s)\n        \
                 a_test.go:9: got 1\nFAIL\nFAIL\texample.com/a\t0.002s\n",
                &["TestAdd", "TestAdd/zero"],
            ),
            (
                Tool::Npm,
                // jest, vitest, TAP (node 20) and node's spec reporter, one after another.
                "  ● math › adds\n\n    expect(received).toBe(expected)\n  ● Console\n\
                 \x20FAIL  src/a.test.ts > math > subtracts\n\
                 not ok 1 - multiplies\nnot ok 2 - later # TODO\nok 3 - fine\n\
                 ✖ divides (1.25ms)\n✖ failing tests:\n✖ divides (1.25ms)\n",
                &[
                    "math › adds",
                    "src/a.test.ts > math > subtracts",
                    "multiplies",
                    "divides",
                ],
            ),
        ];
        for (tool, output, expected) in table {
            assert_eq!(failed_tests(*tool, output), *expected, "{tool:?}");
        }
    }

    #[test]
    fn a_failure_count_is_read_when_names_are_not() {
        assert_eq!(failed_count("  2 passing (5ms)\n  3 failing\n"), Some(3));
        assert_eq!(failed_count("# tests 2\n# pass 1\n# fail 1\n"), Some(1));
        assert_eq!(
            failed_count("Tests:       1 failed, 2 passed, 3 total\n"),
            Some(1)
        );
        assert_eq!(failed_count("0 failed\nall good\n"), None);
    }

    #[test]
    fn errors_are_read_with_workspace_relative_places() {
        let places = Places::new(Path::new("/w"));
        let table: &[(Tool, &str, &[&str])] = &[
            (
                Tool::Mypy,
                "src/m.py:4: error: Incompatible return value type (got \"str\", expected \
                 \"int\")  [return-value]\nsrc/m.py:5: note: see here\n\
                 Found 1 error in 1 file (checked 2 source files)\n",
                &[
                    "src/m.py:4: error: Incompatible return value type (got \"str\", expected \
                   \"int\")  [return-value]",
                ],
            ),
            (
                Tool::Tsc,
                "src/a.ts(1,7): error TS2322: Type 'string' is not assignable to type \
                 'number'.\nb.ts:3:1 - error TS2304: Cannot find name 'x'.\n",
                &[
                    "src/a.ts:1: error: TS2322: Type 'string' is not assignable to type \
                     'number'.",
                    "b.ts:3: error: TS2304: Cannot find name 'x'.",
                ],
            ),
            (
                Tool::Ruff,
                "src/m.py:1:8: F401 [*] `os` imported but unused\nFound 1 error.\n\
                 [*] 1 fixable with the `--fix` option.\n",
                &["src/m.py:1: error: F401 `os` imported but unused"],
            ),
            (
                Tool::Eslint,
                "\n/w/src/a.js\n  1:7  error  'x' is assigned a value but never used  \
                 no-unused-vars\n  2:1  warning  Unexpected console statement  no-console\n\
                 \n/w/b.js\n  3:5  error  Parsing error: Unexpected token\n\n\
                 ✖ 3 problems (2 errors, 1 warning)\n",
                &[
                    "src/a.js:1: error: 'x' is assigned a value but never used \
                     (no-unused-vars)",
                    "b.js:3: error: Parsing error: Unexpected token",
                ],
            ),
        ];
        for (tool, output, expected) in table {
            let lines: Vec<String> = errors(*tool, output, &places)
                .iter()
                .map(error_line)
                .collect();
            assert_eq!(lines, *expected, "{tool:?}");
        }
    }

    #[test]
    fn a_missing_program_is_named() {
        let table: &[(Tool, Option<i32>, &str, Option<&str>)] = &[
            (
                Tool::Mypy,
                Some(127),
                "sh: 1: mypy: not found\n",
                Some("mypy"),
            ),
            (
                Tool::Ruff,
                Some(127),
                "pyenv: ruff: command not found\n\nThe `ruff' command exists in these \
                 Python versions:\n",
                Some("ruff"),
            ),
            (
                Tool::Npm,
                Some(127),
                "> t@1.0.0 test\n> jest\n\nsh: 1: jest: not found\n",
                Some("jest"),
            ),
            (
                Tool::Pytest,
                Some(1),
                "/usr/bin/python3: No module named pytest\n",
                Some("pytest"),
            ),
            (
                Tool::Eslint,
                Some(1),
                "npm error npx canceled due to missing packages and no YES option: \
                 [\"eslint@9.1.0\"]\n",
                Some("eslint"),
            ),
            // A test that fails on a missing import is a failed test, not a missing runner.
            (
                Tool::Pytest,
                Some(2),
                "E   ModuleNotFoundError: No module named 'requests'\n",
                None,
            ),
            (Tool::Tsc, Some(1), "a.ts(1,7): error TS2322: x\n", None),
        ];
        for (tool, code, output, expected) in table {
            assert_eq!(
                missing_program(*tool, *code, output).as_deref(),
                *expected,
                "{output}"
            );
        }
    }

    #[test]
    fn the_telling_line_is_the_error_not_the_chatter() {
        let node = "\n> t@1.0.0 test\n> node test.js\n\nnode:assert:125\n  throw new \
                    AssertionError(obj);\n  ^\n\nAssertionError [ERR_ASSERTION]: Expected \
                    values to be strictly equal:\n\n2 !== 3\n\n    at Object.<anonymous> \
                    (/w/test.js:2:8)\n\nNode.js v20.20.2\n";
        assert_eq!(
            telling_line(node).as_deref(),
            Some("AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:")
        );
        assert_eq!(
            telling_line("Compiling x\nerror[E0425]: cannot find value `y`\n").as_deref(),
            Some("error[E0425]: cannot find value `y`")
        );
        assert_eq!(
            telling_line("one\nlast words\nnpm warn x\n").as_deref(),
            Some("last words")
        );
        assert_eq!(telling_line("\n\n"), None);
    }

    #[test]
    fn colours_and_carriage_returns_are_dropped() {
        assert_eq!(
            plain("\x1b[31mFAILED\x1b[0m x\r\nbar\rbaz"),
            "FAILED x\nbar\nbaz"
        );
    }
}
