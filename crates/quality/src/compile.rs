//! Compilation checks of the files a worker changed, the pipeline's first stage: syntax,
//! types and imports, with the file and line of each error, before any model is paid to
//! judge the work.
//!
//! The changed files are grouped by language and each group is checked at once: JSON in
//! process (`json`), Python in one `python3` process (`python`), JavaScript in one `node`
//! process (`javascript`), TypeScript and JSX through one `tsc` run per project
//! (`typescript`). Those interpreters are the machine's, found on `PATH` outside the
//! workspace (`program`): a `.venv/bin/python` or `node_modules/.bin/tsc` the repository
//! carries is never started by a check. Files that were deleted are skipped; files that resolve outside the
//! workspace (symlinks included), binary files and very large ones are not read and get a
//! warning. A checker that could not run (not installed, refused, timed out) gives a
//! warning that says so: a group is never passed in silence.
//!
//! Does not own: the project's own tests, type checks and lint (`verify`), nor how commands
//! are run (the caller's `CommandRunner`).

mod javascript;
mod json;
mod program;
mod python;
mod typescript;

use std::collections::HashSet;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use crate::{CommandOutput, CommandRunner, CompileError, Severity};

/// Longest a Python or JavaScript checker process may run.
const CHECK_TIMEOUT: Duration = Duration::from_secs(60);
/// Longest one `tsc` run may take: it reads the project's types too.
const TSC_TIMEOUT: Duration = Duration::from_secs(120);
/// Source files larger than this are generated, not written: not worth seconds of parsing.
const MAX_SOURCE_BYTES: u64 = 2 * 1024 * 1024;
/// JSON is parsed in process without building a tree, so it may be larger.
const MAX_JSON_BYTES: u64 = 16 * 1024 * 1024;
/// Findings kept per checker, so one broken generated file cannot flood the retry context.
const MAX_FINDINGS: usize = 200;
/// Longest message kept from a checker.
const MAX_MESSAGE: usize = 400;

/// Checks `files` (workspace-relative) by language, batched; errors and warnings with
/// their places, in the order of `files`.
pub async fn check(
    workspace: &Path,
    files: &[String],
    runner: &dyn CommandRunner,
) -> Vec<CompileError> {
    let owned_workspace = workspace.to_path_buf();
    let owned_files = files.to_vec();
    // Resolving, sniffing and parsing JSON read the disk: off the async threads.
    let triaged = tokio::task::spawn_blocking(move || triage(&owned_workspace, &owned_files)).await;
    let mut triage = match triaged {
        Ok(triage) => triage,
        Err(err) => {
            return vec![CompileError {
                file: files.first().cloned().unwrap_or_default(),
                line: None,
                message: format!(
                    "the changed files were not checked: the check stopped ({err}); \
                     run the project's own build to check them"
                ),
                severity: Severity::Warning,
            }];
        }
    };
    let (python, (scripts, typescript)) =
        tokio::join!(python::check(workspace, &triage.python, runner), async {
            let scripts = javascript::check(workspace, &triage.javascript, runner).await;
            // Sources only a JSX parser can read join the `.jsx` files for tsc.
            let mut jsx = triage.jsx.clone();
            jsx.extend(scripts.jsx.iter().cloned());
            let typescript = typescript::check(workspace, &triage.typescript, &jsx, runner).await;
            (scripts.findings, typescript)
        });
    triage.findings.extend(python);
    triage.findings.extend(scripts);
    triage.findings.extend(typescript);
    let order = |file: &str| files.iter().position(|f| f == file).unwrap_or(usize::MAX);
    triage
        .findings
        .sort_by_key(|e| (order(&e.file), e.line.unwrap_or(0)));
    triage.findings
}

/// A changed file that will be checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Target {
    /// As the caller named it: findings use this name.
    pub name: String,
    /// Its real path, inside the workspace.
    pub path: PathBuf,
}

/// The changed files sorted into what each checker gets, and what triage itself found.
#[derive(Debug, Default)]
struct Triage {
    python: Vec<Target>,
    javascript: Vec<Target>,
    typescript: Vec<Target>,
    jsx: Vec<Target>,
    findings: Vec<CompileError>,
}

/// The languages checked, by extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Language {
    Python,
    JavaScript,
    Jsx,
    TypeScript,
    Json,
}

impl Language {
    fn of(name: &str) -> Option<Language> {
        let extension = Path::new(name).extension()?.to_str()?.to_ascii_lowercase();
        match extension.as_str() {
            "py" => Some(Language::Python),
            "js" | "mjs" | "cjs" => Some(Language::JavaScript),
            "jsx" => Some(Language::Jsx),
            "ts" | "tsx" | "mts" | "cts" => Some(Language::TypeScript),
            "json" => Some(Language::Json),
            _ => None,
        }
    }

    fn size_limit(self) -> u64 {
        match self {
            Language::Json => MAX_JSON_BYTES,
            Language::Python | Language::JavaScript | Language::Jsx | Language::TypeScript => {
                MAX_SOURCE_BYTES
            }
        }
    }
}

/// Resolves each file, drops the deleted ones, refuses the ones outside the workspace,
/// sniffs for binary content, checks JSON, and groups the rest.
fn triage(workspace: &Path, files: &[String]) -> Triage {
    let mut triage = Triage::default();
    let root = match workspace.canonicalize() {
        Ok(root) => root,
        Err(err) => {
            if let Some(first) = files.iter().find(|f| Language::of(f).is_some()) {
                triage.findings.push(warning(
                    first,
                    format!(
                        "the changed files were not checked: the workspace {} cannot be \
                         read ({err})",
                        workspace.display()
                    ),
                ));
            }
            return triage;
        }
    };
    let mut seen = HashSet::new();
    for name in files {
        let Some(language) = Language::of(name) else {
            continue;
        };
        match checkable(&root, name, language, &mut seen) {
            Ok(Some(path)) => triage.add(
                Target {
                    name: name.clone(),
                    path,
                },
                language,
            ),
            Ok(None) => {}
            Err(why) => triage.findings.push(warning(name, why)),
        }
    }
    triage
}

impl Triage {
    /// Hands a file to its language's checker; JSON is checked here, at once.
    fn add(&mut self, target: Target, language: Language) {
        match language {
            Language::Json => self.findings.extend(json::check(&target)),
            Language::Python => self.python.push(target),
            Language::JavaScript => self.javascript.push(target),
            Language::Jsx => self.jsx.push(target),
            Language::TypeScript => self.typescript.push(target),
        }
    }
}

/// Where a changed file is, when it will be checked: `Ok(None)` for a file with nothing to
/// compile (deleted, a directory, named twice), `Err` with why it is not checked (unreadable,
/// outside the workspace under `root`, too large, binary).
fn checkable(
    root: &Path,
    name: &str,
    language: Language,
    seen: &mut HashSet<PathBuf>,
) -> Result<Option<PathBuf>, String> {
    let unreadable = |err: std::io::Error| format!("not checked: it cannot be read ({err})");
    let path = match root.join(name).canonicalize() {
        Ok(path) => path,
        // Deleted (or a dangling link): nothing left to compile.
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(unreadable(err)),
    };
    if !path.starts_with(root) {
        return Err(
            "not checked: the path resolves outside the workspace (a symlink or `..`), \
             so it was not read"
                .to_owned(),
        );
    }
    if !seen.insert(path.clone()) {
        return Ok(None);
    }
    let size = match std::fs::metadata(&path) {
        Ok(meta) if meta.is_file() => meta.len(),
        // A directory with a source-like name: nothing to compile.
        Ok(_) => return Ok(None),
        Err(err) => return Err(unreadable(err)),
    };
    if size > language.size_limit() {
        return Err(format!(
            "not checked: {:.1} MB is over the {} MB limit for this kind of file \
             (generated files are not compiled here)",
            size as f64 / 1e6,
            language.size_limit() / (1024 * 1024)
        ));
    }
    match looks_binary(&path) {
        Ok(false) => Ok(Some(path)),
        Ok(true) => Err("not checked: binary content (NUL bytes) in a source file".to_owned()),
        Err(err) => Err(unreadable(err)),
    }
}

/// Whether the file's first 8 KiB hold a NUL byte, as git decides it.
fn looks_binary(path: &Path) -> std::io::Result<bool> {
    let mut head = Vec::with_capacity(8192);
    std::fs::File::open(path)?
        .take(8192)
        .read_to_end(&mut head)?;
    Ok(head.contains(&0))
}

/// An error at a place.
pub(crate) fn error(file: &str, line: Option<u32>, message: String) -> CompileError {
    CompileError {
        file: file.to_owned(),
        line,
        message: bounded(message),
        severity: Severity::Error,
    }
}

/// Something that could not be checked, or is worth knowing.
pub(crate) fn warning(file: &str, message: String) -> CompileError {
    CompileError {
        file: file.to_owned(),
        line: None,
        message: bounded(message),
        severity: Severity::Warning,
    }
}

/// One warning for a whole group whose checker could not run, or ran wrong: on the
/// group's first file, naming how many files it covers.
pub(crate) fn group_warning(targets: &[Target], what: &str, why: &str) -> Vec<CompileError> {
    let Some(first) = targets.first() else {
        return Vec::new();
    };
    let count = match targets.len() {
        1 => String::new(),
        n => format!(" ({n} files)"),
    };
    vec![warning(
        &first.name,
        format!("{what} was not checked{count}: {why}"),
    )]
}

/// Why a checker's run gave no usable answer, or `None` when it ran.
pub(crate) fn did_not_run(out: &CommandOutput, program: &str, install: &str) -> Option<String> {
    if let Some(reason) = &out.refused {
        return Some(format!("the command was not run ({reason})"));
    }
    if out.timed_out {
        return Some(format!("{program} did not finish in time; {}", out.output));
    }
    if out.exit_code == Some(127) {
        return Some(format!("{program} is not installed; {install}"));
    }
    None
}

/// What a checker script printed: one JSON object per finding, then `{"done": N}`.
#[derive(Debug, Default)]
pub(crate) struct Report {
    /// Errors and warnings, named as the caller named the files.
    pub findings: Vec<CompileError>,
    /// Files the script could not parse but a JSX parser might.
    pub jsx: Vec<Target>,
    /// The script got to its end.
    pub finished: bool,
}

/// One line of a checker script's output.
#[derive(Debug, Deserialize)]
struct ReportLine {
    /// Index of the file in the script's arguments.
    i: Option<usize>,
    line: Option<u32>,
    msg: Option<String>,
    kind: Option<String>,
    jsx: Option<bool>,
    done: Option<usize>,
    omitted: Option<usize>,
}

/// Reads a checker script's output; lines that are not its JSON (a warning the runtime
/// printed on stderr) are ignored.
pub(crate) fn read_report(output: &str, targets: &[Target]) -> Report {
    let mut report = Report::default();
    for text in output.lines().filter(|l| l.starts_with('{')) {
        let Ok(line) = serde_json::from_str::<ReportLine>(text) else {
            continue;
        };
        if line.done.is_some() {
            report.finished = true;
            if let (Some(omitted), Some(first)) = (line.omitted.filter(|n| *n > 0), targets.first())
            {
                report.findings.push(warning(
                    &first.name,
                    format!("{omitted} more findings were left out"),
                ));
            }
            continue;
        }
        let Some(target) = line.i.and_then(|i| targets.get(i)) else {
            continue;
        };
        if line.jsx == Some(true) {
            report.jsx.push(target.clone());
            continue;
        }
        let message = line.msg.unwrap_or_default();
        if report.findings.len() >= MAX_FINDINGS {
            continue;
        }
        report.findings.push(match line.kind.as_deref() {
            Some("warning") => warning(&target.name, message),
            _ => error(&target.name, line.line.filter(|l| *l > 0), message),
        });
    }
    report
}

/// `text` quoted for `sh -c`.
pub(crate) fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// `text` cut to the message limit, on a character boundary.
pub(crate) fn bounded(text: String) -> String {
    if text.len() <= MAX_MESSAGE {
        return text;
    }
    let mut end = MAX_MESSAGE;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

/// The last lines of a checker's output, for a warning that says what went wrong.
pub(crate) fn tail(output: &str) -> String {
    let lines: Vec<&str> = output.trim().lines().collect();
    let start = lines.len().saturating_sub(3);
    bounded(lines[start..].join(" | "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn languages_by_extension() {
        let table = [
            ("a.py", Some(Language::Python)),
            ("a.PY", Some(Language::Python)),
            ("a.pyi", None),
            ("a.js", Some(Language::JavaScript)),
            ("a.mjs", Some(Language::JavaScript)),
            ("a.cjs", Some(Language::JavaScript)),
            ("a.jsx", Some(Language::Jsx)),
            ("a.ts", Some(Language::TypeScript)),
            ("a.d.ts", Some(Language::TypeScript)),
            ("a.tsx", Some(Language::TypeScript)),
            ("a.json", Some(Language::Json)),
            ("Makefile", None),
            ("a.png", None),
        ];
        for (name, language) in table {
            assert_eq!(Language::of(name), language, "{name}");
        }
    }

    #[test]
    fn quoting_survives_quotes() {
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote("a b"), "'a b'");
    }

    #[test]
    fn long_messages_are_cut_on_a_character_boundary() {
        let text = "é".repeat(MAX_MESSAGE);
        let cut = bounded(text);
        assert!(cut.len() <= MAX_MESSAGE + "…".len());
        assert!(cut.ends_with('…'));
    }
}
