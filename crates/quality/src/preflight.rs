//! Pre-flight checks: model-free rejections of results that cannot be right, before the
//! concrete checks and the (paid) judge. Owns the seed's V4, V6, V7, V10 and V11 and the
//! word lists they read a task or a report with. Does not own file contents beyond a
//! target's size (that is `concrete`), or deciding retries (that is the pipeline).
//!
//! The first check that fails wins, in this order, cheapest and most decisive first:
//! - **V7** (score 0): an action task with no tool calls. Counting costs nothing, and no
//!   tool calls means no work at all, the strongest verdict there is.
//! - **V10** (score 1): no files modified, no tool calls, and the task asks for
//!   something to be made. A few words of the description, no I/O. After V7 it only
//!   catches kinds V7 lets through (research, review, other).
//! - **V4** (score 1): every target file is missing or empty. A `stat` per target.
//! - **V6** (score 1): the closure report is nothing but budget excuses. Reads one
//!   bounded report.
//! - **V11** (score 1): a test task that ran tools but shows no test run. Scans every
//!   command and output, the largest input, so it goes last.
//!
//! Every scan is bounded: long texts are read at their head and tail only.

use std::path::Path;

use crate::concrete::{Located, locate};
use crate::{QualityConfig, QualityTask, ToolAction, WorkerResult};

/// Why pre-flight rejected a result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection {
    /// The seed's code (`V4`, `V6`, `V7`, `V10`, `V11`).
    pub code: &'static str,
    /// The score it gets.
    pub score: u8,
    /// What is wrong, for the worker.
    pub message: String,
}

/// The first pre-flight check `result` fails, if any.
pub fn check(
    task: &QualityTask,
    result: &WorkerResult,
    modified: &[String],
    workspace: &Path,
    config: &QualityConfig,
) -> Option<Rejection> {
    v7_no_tool_calls(task, result)
        .or_else(|| v10_nothing_created(task, result, modified))
        .or_else(|| v4_targets_empty(task, workspace))
        .or_else(|| v6_budget_excuses(result))
        .or_else(|| v11_no_test_run(task, result, config))
}

/// Kinds whose work cannot be done without tools: the action kinds. Research, review
/// and other tasks may be answered from the context they were given.
pub fn needs_tool_calls(task: &QualityTask) -> bool {
    task.kind.is_action()
}

fn v7_no_tool_calls(task: &QualityTask, result: &WorkerResult) -> Option<Rejection> {
    (needs_tool_calls(task) && result.actions.is_empty()).then(|| Rejection {
        code: "V7",
        score: 0,
        message: format!(
            "no tool calls were made, so no work was done; a {} task needs the tools (read, \
             edit, run) to change and check the files",
            task.kind.as_str()
        ),
    })
}

fn v10_nothing_created(
    task: &QualityTask,
    result: &WorkerResult,
    modified: &[String],
) -> Option<Rejection> {
    (modified.is_empty() && result.actions.is_empty() && implies_creation(&task.description)).then(
        || Rejection {
            code: "V10",
            score: 1,
            message: "the task asks for something to be created, but no file was modified and \
                      no tool was called; write the files with the tools instead of describing \
                      them"
                .to_owned(),
        },
    )
}

/// Whether a target counts against V4.
enum TargetState {
    Missing,
    Empty,
    /// Present with content, or not checkable (outside the workspace, a directory, …):
    /// either way not evidence of missing work.
    Fine,
}

fn v4_targets_empty(task: &QualityTask, workspace: &Path) -> Option<Rejection> {
    if !task.kind.is_action() || task.target_files.is_empty() {
        return None;
    }
    // A task that deletes or moves files expects some targets to be gone.
    let deleting = implies_deletion(&task.description);
    let root = std::fs::canonicalize(workspace).ok()?;
    let mut states = Vec::with_capacity(task.target_files.len());
    for target in task.target_files.iter().take(MAX_TARGETS) {
        let state = match locate(&root, target) {
            Located::Missing | Located::BrokenLink if !deleting => TargetState::Missing,
            Located::File { len: 0, .. } => TargetState::Empty,
            Located::File { path, len } if len <= BLANK_PROBE => match std::fs::read(&path) {
                Ok(bytes) if bytes.iter().all(u8::is_ascii_whitespace) => TargetState::Empty,
                _ => TargetState::Fine,
            },
            _ => TargetState::Fine,
        };
        if matches!(state, TargetState::Fine) {
            return None;
        }
        states.push((target, state));
    }
    let list = states
        .iter()
        .map(|(t, s)| {
            let what = if matches!(s, TargetState::Missing) {
                "missing"
            } else {
                "empty"
            };
            format!("{t} ({what})")
        })
        .collect::<Vec<_>>()
        .join(", ");
    Some(Rejection {
        code: "V4",
        score: 1,
        message: format!("every target file is missing or empty: {list}; write them"),
    })
}

/// Bytes of a task description read for its wording.
const MAX_DESCRIPTION: usize = 64 * 1024;

/// Most targets V4 looks at.
const MAX_TARGETS: usize = 200;

/// Files at most this long are read to tell whitespace from content.
const BLANK_PROBE: u64 = 64;

/// Longest closure report V6 reads; a longer one has substance by its length alone.
const MAX_REPORT: usize = 16 * 1024;

fn v6_budget_excuses(result: &WorkerResult) -> Option<Rejection> {
    let report = result.closure_report.as_deref()?;
    is_budget_excuse(report).then(|| Rejection {
        code: "V6",
        score: 1,
        message: "the closure report only says the budget (time, tokens, iterations) ran out \
                  and reports no work; do the smallest useful part of the task and report what \
                  was done"
            .to_owned(),
    })
}

/// Whether `report` is only about running out of budget: at least one budget excuse and
/// no clause that reports work or says anything else of substance. Apologies and
/// admissions of no progress ("could not finish", "no files were created") are filler.
pub fn is_budget_excuse(report: &str) -> bool {
    if report.len() > MAX_REPORT {
        return false;
    }
    let lower = report.to_lowercase();
    let mut excuses = 0;
    for clause in lower.split(['.', '!', '?', ';', '\n']) {
        let words: Vec<&str> = words(clause).collect();
        if words.is_empty() {
            continue;
        }
        let negated = words
            .iter()
            .any(|w| listed(NEGATIONS, w) || w.ends_with("n't"));
        let work = words.iter().any(|w| listed(WORK, w));
        if work && !negated {
            return false;
        }
        let budget = words.iter().any(|w| listed(BUDGET_NOUNS, w))
            && words.iter().any(|w| listed(BUDGET_CUES, w));
        if budget {
            excuses += 1;
        } else if !(work || words.iter().all(|w| listed(FILLER, w))) {
            return false;
        }
    }
    excuses > 0
}

const BUDGET_NOUNS: &str = "budget budgets time token tokens iteration iterations turn turns step \
    steps context quota credits limit limits max_iterations max_turns max_steps";

const BUDGET_CUES: &str = "ran run running out exhausted exceeded exceeding hit reached limit \
    limits limited due because insufficient enough remaining left constraint constraints \
    constrained maxed capped";

const WORK: &str = "created added implemented wrote written fixed updated modified changed edited \
    refactored removed deleted renamed moved extracted replaced executed tested passed passing \
    completed finished built generated installed configured documented verified";

const NEGATIONS: &str = "not no none never nothing cannot unable without failed";

/// Words of apologies, headings and admissions of no progress.
const FILLER: &str = "i we was were is am be been have has had could couldn't can't cannot unable \
    not no none nothing to the a an this that it any anything all of and or so my me before yet \
    finish complete completed incomplete done do did didn't get task work sorry unfortunately \
    apologies apologize closure report summary status result results stopping stopped here \
    partial progress made changes files file failed fail further more";

/// Keywords that show a test run in a command or its output (the seed's list and the
/// common runners).
const TEST_WORDS: &str = "pytest unittest jest vitest mocha nextest rspec phpunit ctest passed \
    failed error failures";

/// Two-word keywords, first word then second.
const TEST_PAIRS: &[(&str, &str)] = &[
    ("npm", "test"),
    ("yarn", "test"),
    ("pnpm", "test"),
    ("bun", "test"),
    ("go", "test"),
    ("cargo", "test"),
    ("mvn", "test"),
    ("gradle", "test"),
    ("dotnet", "test"),
    ("test", "suite"),
    ("test", "result"),
    ("tests", "ran"),
];

/// Bytes of one command's output V11 reads at each end.
const OUTPUT_WINDOW: usize = 32 * 1024;

fn v11_no_test_run(
    task: &QualityTask,
    result: &WorkerResult,
    config: &QualityConfig,
) -> Option<Rejection> {
    if !config.test_require_execution_evidence
        || !task.kind.is_test()
        || result.actions.is_empty()
        || result.actions.iter().any(shows_test_run)
    {
        return None;
    }
    Some(Rejection {
        code: "V11",
        score: 1,
        message: "no test run shows in the tool calls (no pytest, npm test, go test, cargo \
                  test … and no pass/fail output); run the tests and fix what fails"
            .to_owned(),
    })
}

/// Whether `action` ran tests: flagged so, or a command whose text or output names a
/// runner or a result. Only commands count: a file written or read that mentions
/// `pytest` is not a run.
pub fn shows_test_run(action: &ToolAction) -> bool {
    if action.not_run.is_some() {
        return false;
    }
    if action.is_test_run {
        return true;
    }
    let command = command_text(action);
    if command.is_none() && action.exit_code.is_none() && !is_command_tool(&action.tool) {
        return false;
    }
    let command = command.unwrap_or_default();
    has_test_words(&command)
        || has_test_words(head(&action.output, OUTPUT_WINDOW))
        || has_test_words(tail(&action.output, OUTPUT_WINDOW))
}

/// Whether a tool's name says it runs commands. The actions judged here are any worker's,
/// MCP and other agents' tools included, and a `ToolAction` carries only the name, so the
/// words a command-running tool's name holds are matched (atto's own `bash` among them)
/// rather than a built-in tool's kind.
fn is_command_tool(tool: &str) -> bool {
    let tool = tool.to_ascii_lowercase();
    [
        "bash", "shell", "exec", "run", "terminal", "command", "test",
    ]
    .iter()
    .any(|t| tool.contains(t))
}

/// The command line of a command-running action (`command`, `cmd` or `script`; a
/// string or a list of words).
fn command_text(action: &ToolAction) -> Option<String> {
    let value = match &action.arguments {
        serde_json::Value::String(s) if is_command_tool(&action.tool) => {
            return Some(head(s, OUTPUT_WINDOW).to_owned());
        }
        serde_json::Value::Object(map) => ["command", "cmd", "script"]
            .iter()
            .find_map(|k| map.get(*k))?,
        _ => return None,
    };
    match value {
        serde_json::Value::String(s) => Some(head(s, OUTPUT_WINDOW).to_owned()),
        serde_json::Value::Array(items) => Some(
            items
                .iter()
                .take(64)
                .filter_map(serde_json::Value::as_str)
                .collect::<Vec<_>>()
                .join(" "),
        ),
        _ => None,
    }
}

fn has_test_words(text: &str) -> bool {
    if text.is_empty() {
        return false;
    }
    let lower = text.to_lowercase();
    let mut previous = "";
    for word in words(&lower) {
        if listed(TEST_WORDS, word) || TEST_PAIRS.contains(&(previous, word)) {
            return true;
        }
        previous = word;
    }
    false
}

/// Whether the description asks for something to be made: a creation verb where a
/// clause starts (the imperative position: "Create …", "…, then add …"), or "new file".
/// A verb after "to" or inside a relative clause ("how to build") does not count.
pub fn implies_creation(description: &str) -> bool {
    const VERBS: &str = "create add write implement generate build scaffold";
    const STARTERS: &str = "and then also please first next finally";
    let lower = head(description, MAX_DESCRIPTION).to_lowercase();
    for clause in lower.split(['.', '!', '?', ';', ':', ',', '\n', '(', ')']) {
        let mut previous = "";
        let mut at_start = true;
        for word in words(clause) {
            if previous == "new" && (word == "file" || word == "files") {
                return true;
            }
            if at_start && listed(VERBS, word) {
                return true;
            }
            at_start = listed(STARTERS, word) || word.chars().all(|c| c.is_ascii_digit());
            previous = word;
        }
    }
    false
}

/// Whether the description asks for files or code to go (delete, remove, rename, move):
/// then a modified file that no longer exists, or a missing target, is the work itself.
pub fn implies_deletion(description: &str) -> bool {
    const WORDS: &str = "delete deletes deleted deleting deletion remove removes removed removing \
        removal rename renames renaming move moves moving drop drops dropping erase erasing \
        unlink rm mv";
    let lower = head(description, MAX_DESCRIPTION).to_lowercase();
    words(&lower).any(|w| listed(WORDS, w))
}

/// Whether `word` is one of the space-separated words of `list`.
pub(crate) fn listed(list: &str, word: &str) -> bool {
    list.split_ascii_whitespace().any(|w| w == word)
}

/// The words of `text`: runs of letters, digits, `_` and `'`.
pub(crate) fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '\''))
        .map(|w| w.trim_matches('\''))
        .filter(|w| !w.is_empty())
}

/// At most the first `max` bytes of `text`, cut at a character boundary.
pub(crate) fn head(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// At most the last `max` bytes of `text`, cut at a character boundary.
pub(crate) fn tail(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return "";
    }
    let mut start = text.len() - max;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TaskKind;
    use serde_json::json;

    fn task(kind: TaskKind, description: &str) -> QualityTask {
        QualityTask {
            id: "t1".to_owned(),
            kind,
            description: description.to_owned(),
            ..QualityTask::default()
        }
    }

    fn bash(command: &str, output: &str) -> ToolAction {
        ToolAction {
            tool: "bash".to_owned(),
            arguments: json!({ "command": command }),
            output: output.to_owned(),
            exit_code: Some(0),
            is_test_run: false,
            not_run: None,
        }
    }

    fn write(path: &str, content: &str) -> ToolAction {
        ToolAction {
            tool: "write_file".to_owned(),
            arguments: json!({ "path": path, "content": content }),
            output: "written".to_owned(),
            exit_code: None,
            is_test_run: false,
            not_run: None,
        }
    }

    fn with_actions(actions: Vec<ToolAction>) -> WorkerResult {
        WorkerResult {
            text: "done".to_owned(),
            actions,
            ..WorkerResult::default()
        }
    }

    fn run(task: &QualityTask, result: &WorkerResult, modified: &[&str]) -> Option<Rejection> {
        let dir = tempfile::tempdir().unwrap();
        let modified: Vec<String> = modified.iter().map(|s| (*s).to_owned()).collect();
        check(
            task,
            result,
            &modified,
            dir.path(),
            &QualityConfig::default(),
        )
    }

    #[test]
    fn v7_an_action_task_without_tool_calls_scores_zero() {
        let r = run(
            &task(TaskKind::Fix, "Fix the parser"),
            &with_actions(vec![]),
            &[],
        )
        .unwrap();
        assert_eq!((r.code, r.score), ("V7", 0));
        assert!(r.message.contains("no tool calls"), "{}", r.message);
        // One tool call is enough for V7; a research task needs none.
        let one = with_actions(vec![bash("ls", "a.py")]);
        assert_eq!(run(&task(TaskKind::Fix, "Fix the parser"), &one, &[]), None);
        assert_eq!(
            run(
                &task(TaskKind::Research, "Explain the parser"),
                &with_actions(vec![]),
                &[]
            ),
            None
        );
    }

    #[test]
    fn v10_a_creation_task_with_nothing_made_fails() {
        let r = run(
            &task(
                TaskKind::Research,
                "Write a report on the cache in docs/cache.md",
            ),
            &with_actions(vec![]),
            &[],
        )
        .unwrap();
        assert_eq!((r.code, r.score), ("V10", 1));
        // Not a creation: the verb is not where a clause starts.
        let r = run(
            &task(TaskKind::Research, "Find out how to build the project"),
            &with_actions(vec![]),
            &[],
        );
        assert_eq!(r, None);
        // Files were modified: something was made.
        let r = run(
            &task(TaskKind::Other, "Create docs/cache.md"),
            &with_actions(vec![]),
            &["docs/cache.md"],
        );
        assert_eq!(r, None);
    }

    #[test]
    fn creation_and_deletion_are_read_from_the_description() {
        for (text, creates) in [
            ("Create src/a.py", true),
            ("Fix the bug, then add a regression test", true),
            ("1. implement the cache", true),
            ("Put the helper in a new file", true),
            ("Explain how the build works", false),
            ("Research how to generate the bindings", false),
            ("Review the code that writes logs", false),
        ] {
            assert_eq!(implies_creation(text), creates, "{text}");
        }
        assert!(implies_deletion("Remove the legacy module"));
        assert!(implies_deletion("rm old.py and rename new.py"));
        assert!(!implies_deletion("Fix the parser"));
    }

    #[test]
    fn v4_every_target_missing_or_empty_fails() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("empty.py"), "  \n").unwrap();
        let mut t = task(TaskKind::Implement, "Implement the cache");
        t.target_files = vec!["empty.py".to_owned(), "src/missing.py".to_owned()];
        let result = with_actions(vec![bash("ls", "")]);
        let config = QualityConfig::default();
        let r = check(&t, &result, &[], dir.path(), &config).unwrap();
        assert_eq!((r.code, r.score), ("V4", 1));
        assert!(
            r.message.contains("empty.py (empty)")
                && r.message.contains("src/missing.py (missing)"),
            "{}",
            r.message
        );
        // One target with content is enough.
        std::fs::write(dir.path().join("empty.py"), "x = 1\n").unwrap();
        assert_eq!(check(&t, &result, &[], dir.path(), &config), None);
        // A task that deletes its targets expects them gone.
        std::fs::remove_file(dir.path().join("empty.py")).unwrap();
        t.description = "Delete the obsolete modules".to_owned();
        assert_eq!(check(&t, &result, &[], dir.path(), &config), None);
    }

    #[test]
    fn v4_does_not_judge_targets_outside_the_workspace() {
        let dir = tempfile::tempdir().unwrap();
        let mut t = task(TaskKind::Implement, "Implement the cache");
        t.target_files = vec!["../elsewhere.py".to_owned()];
        let result = with_actions(vec![bash("ls", "")]);
        assert_eq!(
            check(&t, &result, &[], dir.path(), &QualityConfig::default()),
            None
        );
    }

    #[test]
    fn v6_a_report_of_only_budget_excuses_fails() {
        for report in [
            "I ran out of budget.",
            "Could not finish due to token limit. Sorry!",
            "Unfortunately I was unable to complete the task: max iterations reached.\nNo files \
             were created.",
            "Status: incomplete. Time budget exhausted before any changes were made.",
        ] {
            let mut result = with_actions(vec![bash("ls", "")]);
            result.closure_report = Some(report.to_owned());
            let r = run(
                &task(TaskKind::Implement, "Implement the cache"),
                &result,
                &[],
            );
            let r = r.unwrap_or_else(|| panic!("no rejection for {report:?}"));
            assert_eq!((r.code, r.score), ("V6", 1), "{report}");
        }
    }

    #[test]
    fn v6_a_report_with_work_or_substance_passes() {
        for report in [
            "Implemented parse() and added tests. Ran out of time before the docs.",
            "The loader now reads YAML; the token limit was not an issue.",
            "The cache lives in src/cache.py and is keyed by path.",
            "",
        ] {
            let mut result = with_actions(vec![bash("ls", "")]);
            result.closure_report = Some(report.to_owned());
            let r = run(
                &task(TaskKind::Implement, "Implement the cache"),
                &result,
                &[],
            );
            assert_eq!(r, None, "{report}");
        }
        assert!(!is_budget_excuse(&"I ran out of budget. ".repeat(2_000)));
    }

    #[test]
    fn v11_a_test_task_without_a_test_run_fails() {
        let t = task(TaskKind::Test, "Write tests for the parser");
        // Writing a file that mentions pytest is not running it.
        let result = with_actions(vec![
            write("tests/test_parser.py", "import pytest\n# all passed\n"),
            bash("ls tests", "test_parser.py"),
        ]);
        let r = run(&t, &result, &["tests/test_parser.py"]).unwrap();
        assert_eq!((r.code, r.score), ("V11", 1));
        // Off in the config: no rejection.
        let dir = tempfile::tempdir().unwrap();
        let config = QualityConfig {
            test_require_execution_evidence: false,
            ..QualityConfig::default()
        };
        assert_eq!(check(&t, &result, &[], dir.path(), &config), None);
        // Only test tasks.
        let fix = task(TaskKind::Fix, "Fix the parser");
        assert_eq!(run(&fix, &result, &["tests/test_parser.py"]), None);
    }

    #[test]
    fn v11_a_test_run_that_was_denied_is_no_evidence() {
        let t = task(TaskKind::Test, "Write tests for the parser");
        // The command names pytest and its text says "5 passed", but it never ran.
        let denied = ToolAction {
            is_test_run: true,
            not_run: Some("denied".to_owned()),
            ..bash("pytest -q", "5 passed")
        };
        let result = with_actions(vec![
            write("tests/test_parser.py", "def test_x():\n    assert True\n"),
            denied,
        ]);
        let r = run(&t, &result, &["tests/test_parser.py"]).unwrap();
        assert_eq!((r.code, r.score), ("V11", 1));
    }

    #[test]
    fn v11_any_evidence_of_a_test_run_passes() {
        let t = task(TaskKind::Test, "Write tests for the parser");
        let flagged = ToolAction {
            is_test_run: true,
            ..bash("./check.sh", "")
        };
        let list = ToolAction {
            arguments: json!({ "command": ["cargo", "test", "-q"] }),
            ..bash("", "")
        };
        for action in [
            bash("python -m pytest -q", ""),
            bash("npm test", ""),
            bash("go test ./...", ""),
            bash("./run.sh", "==== 3 passed in 0.12s ===="),
            bash("make check", "Error: expected 2, got 3"),
            flagged,
            list,
        ] {
            let result = with_actions(vec![write("t.py", "x"), action.clone()]);
            assert_eq!(run(&t, &result, &["t.py"]), None, "{action:?}");
        }
        // The evidence at the end of a long output still counts.
        let long = format!("{}\n5 passed", "x".repeat(1_000_000));
        let result = with_actions(vec![bash("./run.sh", &long)]);
        assert_eq!(run(&t, &result, &[]), None);
    }

    #[test]
    fn the_order_is_v7_v10_v4_v6_v11() {
        // A test task with no tool calls and empty targets: V7 wins over V4.
        let dir = tempfile::tempdir().unwrap();
        let mut t = task(TaskKind::Test, "Write tests");
        t.target_files = vec!["missing.py".to_owned()];
        let config = QualityConfig::default();
        let none = with_actions(vec![]);
        assert_eq!(
            check(&t, &none, &[], dir.path(), &config).unwrap().code,
            "V7"
        );
        // With a tool call but empty targets and an excuse report: V4 before V6 and V11.
        let mut result = with_actions(vec![bash("ls", "")]);
        result.closure_report = Some("I ran out of budget.".to_owned());
        assert_eq!(
            check(&t, &result, &[], dir.path(), &config).unwrap().code,
            "V4"
        );
        std::fs::write(dir.path().join("missing.py"), "def test_a(): pass\n").unwrap();
        assert_eq!(
            check(&t, &result, &[], dir.path(), &config).unwrap().code,
            "V6"
        );
        result.closure_report = None;
        assert_eq!(
            check(&t, &result, &[], dir.path(), &config).unwrap().code,
            "V11"
        );
    }

    #[test]
    fn head_and_tail_cut_at_character_boundaries() {
        let text = "ééé";
        assert_eq!(head(text, 3), "é");
        assert_eq!(tail(text, 3), "é");
        assert_eq!(tail("short", 10), "");
    }
}
