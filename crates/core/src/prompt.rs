//! The system prompt: built once per session from the tools actually offered and the
//! project's own instructions, so it is byte-stable across turns (and days) and providers
//! can cache it. Volatile facts (mode, date, model) go after the cached prefix, in each
//! user message's context.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Files whose contents are project instructions, looked up in each directory from the
/// workspace root down to the working directory.
const INSTRUCTION_FILES: &[&str] = &["AGENTS.md", "CLAUDE.md", ".atto/rules.md"];

/// Instructions longer than this are cut, so a huge file cannot crowd out the task.
const MAX_INSTRUCTION_BYTES: usize = 32 * 1024;

/// One project instruction file found on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectInstructions {
    /// Path relative to the workspace root.
    pub path: String,
    /// Its contents (cut at 32 KB).
    pub text: String,
}

/// Where instruction files are looked for: AGENTS.md, CLAUDE.md and .atto/rules.md in
/// each directory from `workspace` down to `cwd` (outermost first), whether they exist or
/// not. `cwd` outside the workspace means only the root.
pub fn instruction_paths(workspace: &Path, cwd: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = vec![workspace.to_path_buf()];
    if let Ok(rest) = cwd.strip_prefix(workspace) {
        let mut dir = workspace.to_path_buf();
        for part in rest.components() {
            dir.push(part);
            dirs.push(dir.clone());
        }
    }
    dirs.iter()
        .flat_map(|dir| INSTRUCTION_FILES.iter().map(|name| dir.join(name)))
        .collect()
}

/// Finds AGENTS.md, CLAUDE.md and .atto/rules.md from `workspace` down to `cwd`
/// (outermost first). `cwd` outside the workspace means only the root is searched.
pub fn find_project_instructions(workspace: &Path, cwd: &Path) -> Vec<ProjectInstructions> {
    find_project_instructions_with(workspace, cwd, &|_, _| true)
}

/// [`find_project_instructions`], keeping only the files `admit` accepts, judged on the
/// very bytes that become the instructions (the front end leaves out a file a command
/// wrote that the user has not seen yet).
pub fn find_project_instructions_with(
    workspace: &Path,
    cwd: &Path,
    admit: &dyn Fn(&Path, &[u8]) -> bool,
) -> Vec<ProjectInstructions> {
    let mut found = Vec::new();
    for path in instruction_paths(workspace, cwd) {
        let Ok(bytes) = std::fs::read(&path) else {
            continue;
        };
        if !admit(&path, &bytes) {
            continue;
        }
        let mut text = String::from_utf8_lossy(&bytes).into_owned();
        if text.len() > MAX_INSTRUCTION_BYTES {
            text.truncate(text.floor_char_boundary(MAX_INSTRUCTION_BYTES));
            text.push_str("\n[... cut: the file is longer than 32 KB ...]");
        }
        let rel = path.strip_prefix(workspace).unwrap_or(&path);
        found.push(ProjectInstructions {
            path: rel.display().to_string(),
            text,
        });
    }
    found
}

/// How agent modes work; stable, so the current mode is a fact appended to each prompt.
const MODES: &str = "\n# Agent modes\n\
Each user message names the current mode (\"[atto] Agent mode: ...\"); atto enforces it \
whatever you attempt:\n\
- BUILD: every tool.\n\
- PLAN: reads, searches and provably read-only commands run; writes and other commands are \
queued as proposed changes for the user to approve. When a call answers \"[PLAN MODE] Change \
queued for approval\", do not retry or verify it (it is not on disk yet); go on. A later edit \
to a file with queued changes applies to the file as it will be: read that with read_file and \
\"pending\": true. Say why before each change; end by summarizing the plan.\n\
- REVIEW: read-only; writes and commands are refused.\n\
- DEBUG: reads plus test commands (pytest, cargo test, npm test, go test, make test, mypy, \
ruff check, tsc --noEmit, eslint) only.\n\
A \"[PLAN REVIEW]\" note reports which proposed changes were approved or rejected and how \
they ran.\n";

/// The fact appended to each user message: the mode this turn runs in.
pub(crate) fn mode_line(mode: atto_protocol::AgentMode) -> String {
    use atto_protocol::AgentMode;
    let detail = match mode {
        AgentMode::Build => "",
        AgentMode::Plan => " (writes and non-read-only commands are queued for approval, not run)",
        AgentMode::Review => " (read-only: writes and commands are refused)",
        AgentMode::Debug => " (reads and test commands only)",
    };
    format!("[atto] Agent mode: {}{detail}", mode.label())
}

/// The active session goal, as each prompt carries it.
pub(crate) fn goal_line(objective: &str) -> String {
    format!(
        "[atto] Session goal (active): \"{objective}\". When it is met, call goal_update with \
         status complete; if you cannot go on without the user, call goal_update with status \
         blocked and say why."
    )
}

/// What the system prompt is built from.
pub(crate) struct PromptInputs<'a> {
    pub workspace: &'a Path,
    pub tool_names: &'a [&'a str],
    pub instructions: &'a [ProjectInstructions],
}

/// Builds the system prompt. Tool guidance names only tools that are offered.
pub(crate) fn system_prompt(inputs: &PromptInputs<'_>) -> String {
    let has = |name: &str| inputs.tool_names.contains(&name);
    let mut p = String::with_capacity(2048);
    p.push_str(
        "You are atto, a coding agent working in the user's repository through tools. \
         Do what the user asks, no more: keep changes minimal and in the style of the \
         surrounding code. Be concise; say what you changed and what you verified.\n",
    );
    let mut rules: Vec<&str> = Vec::new();
    if has("read_file") && (has("edit_file") || has("write_file")) {
        rules.push("Read a file before changing it; never guess its contents.");
    }
    if has("edit_file") {
        rules.push(
            "Prefer edit_file for changes to existing files; old_string must match exactly, \
             indentation included.",
        );
    }
    if has("write_file") {
        rules.push("Use write_file for new files or complete rewrites.");
    }
    if has("grep") || has("glob") || has("list_files") {
        rules.push("Search before assuming where code lives.");
    }
    if has("bash") {
        rules.push(
            "Use bash to build, test and run code (with a timeout; no interactive programs).",
        );
    }
    rules.push("Independent read-only calls may go in one reply; they run in parallel.");
    rules.push("If a call fails, read the error and change the approach; do not repeat the call.");
    p.push_str("\n# Working rules\n");
    for rule in rules {
        let _ = writeln!(p, "- {rule}");
    }
    p.push_str(MODES);
    let _ = write!(
        p,
        "\n# Environment\n- Workspace root: {}\n- Paths are relative to the workspace root; \
         access outside it is refused.\n- OS: {}\n",
        inputs.workspace.display(),
        std::env::consts::OS
    );
    for inst in inputs.instructions {
        let _ = write!(
            p,
            "\n# Project instructions ({})\n{}\n",
            inst.path,
            inst.text.trim_end()
        );
    }
    p
}

/// The volatile facts each user turn carries after the cached prefix: today's date and
/// the model this turn's requests go to (codewhale's `<turn_meta>`).
pub(crate) fn turn_meta(date: &str, model: &str) -> String {
    format!("<turn_meta>date: {date} (UTC); model: {model}</turn_meta>")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompt_names_only_offered_tools() {
        let inputs = PromptInputs {
            workspace: Path::new("/w"),
            tool_names: &["read_file", "edit_file", "grep"],
            instructions: &[],
        };
        let p = system_prompt(&inputs);
        assert!(p.contains("edit_file"));
        assert!(!p.contains("write_file"));
        assert!(!p.contains("bash"));
    }

    #[test]
    fn instructions_found_from_root_down_to_cwd() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("a/b/.atto")).unwrap();
        std::fs::write(root.join("AGENTS.md"), "root rules").unwrap();
        std::fs::write(root.join("a/CLAUDE.md"), "a rules").unwrap();
        std::fs::write(root.join("a/b/.atto/rules.md"), "b rules").unwrap();
        std::fs::write(root.join("a/b/AGENTS.md"), "not on path? yes it is").unwrap();
        let found = find_project_instructions(root, &root.join("a/b"));
        let paths: Vec<_> = found.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "AGENTS.md",
                "a/CLAUDE.md",
                "a/b/AGENTS.md",
                "a/b/.atto/rules.md"
            ]
        );
        let only_root = find_project_instructions(root, Path::new("/elsewhere"));
        assert_eq!(only_root.len(), 1);
    }
}
