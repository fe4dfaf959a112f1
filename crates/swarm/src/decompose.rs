//! Breaking the user's task into typed swarm tasks with the model: the JSON asked for,
//! its validation (shape, kinds, ids, unknown and self dependencies, cycles, paths,
//! limits) and re-asks that quote the exact error (`atto_llm::reask`, as the planner's
//! plans do).

use std::collections::{HashMap, HashSet};
use std::path::Path;

use atto_llm::reask::{AskError, Exchange, MAX_REASKS, ask_until_parsed};
use atto_llm::{ModelClient, ModelError};
use atto_protocol::Usage;
use atto_quality::TaskKind;
use serde::Deserialize;

use crate::task::SwarmTask;

/// Output limit of a decomposition answer.
const MAX_OUTPUT: u32 = 8_000;

/// The kinds a task may have, as the model writes them.
const KINDS: &[(&str, TaskKind)] = &[
    ("implement", TaskKind::Implement),
    ("test", TaskKind::Test),
    ("refactor", TaskKind::Refactor),
    ("fix", TaskKind::Fix),
    ("document", TaskKind::Document),
    ("research", TaskKind::Research),
    ("review", TaskKind::Review),
    ("other", TaskKind::Other),
];

/// The system prompt of a decomposition.
pub fn system_prompt(max_tasks: usize) -> String {
    let kinds: Vec<&str> = KINDS.iter().map(|(n, _)| *n).collect();
    format!(
        "You are atto's swarm coordinator. You do not do the work: you split it into tasks that \
         separate workers run in parallel where their dependencies allow, each in its own \
         session with the workspace's tools.\n\n\
         Answer with ONE JSON object and nothing else, of this shape:\n\
         {{\"tasks\": [{{\"id\": \"task-1\", \"type\": \"implement\", \"description\": \"what to \
         do, concretely\", \"dependencies\": [], \"target_files\": [\"src/x.py\"], \
         \"relevant_files\": [], \"acceptance_criteria\": [\"...\"]}}]}}\n\n\
         Rules: type is one of {kinds}. dependencies lists ids of tasks that must be done \
         first. target_files are the files the task changes (workspace-relative); tasks that \
         change the same file cannot run at the same time, so give each file to one task \
         where you can. Put tests in their own test tasks depending on what they test. At \
         most {max_tasks} tasks; no cycles.",
        kinds = kinds.join(", ")
    )
}

/// The first request's text: the task and what the workspace holds.
pub fn request_text(goal: &str, workspace: &Path) -> String {
    let files = workspace_files(workspace, 200);
    let listing = if files.is_empty() {
        "(the workspace is empty)".to_owned()
    } else {
        files.join("\n")
    };
    format!("Split this task into swarm tasks:\n\n{goal}\n\nFiles in the workspace:\n{listing}")
}

/// Up to `limit` workspace-relative files, shallow first, hidden and build directories
/// left out.
pub fn workspace_files(workspace: &Path, limit: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut queue = std::collections::VecDeque::from([(workspace.to_path_buf(), String::new())]);
    while let Some((dir, rel)) = queue.pop_front() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut entries: Vec<_> = entries.flatten().collect();
        entries.sort_by_key(std::fs::DirEntry::file_name);
        for entry in entries {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.')
                || matches!(
                    name.as_str(),
                    "node_modules" | "target" | "__pycache__" | "dist" | "build" | "venv"
                )
            {
                continue;
            }
            let path = if rel.is_empty() {
                name
            } else {
                format!("{rel}/{name}")
            };
            match entry.file_type() {
                Ok(t) if t.is_dir() => queue.push_back((entry.path(), path)),
                Ok(t) if t.is_file() => {
                    out.push(path);
                    if out.len() >= limit {
                        return out;
                    }
                }
                _ => {}
            }
        }
    }
    out
}

#[derive(Debug, Deserialize)]
struct Draft {
    tasks: Vec<DraftTask>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DraftTask {
    id: String,
    #[serde(rename = "type", alias = "kind")]
    kind: String,
    description: String,
    #[serde(default)]
    dependencies: Vec<String>,
    #[serde(default)]
    target_files: Vec<String>,
    #[serde(default)]
    relevant_files: Vec<String>,
    #[serde(default)]
    acceptance_criteria: Vec<String>,
}

/// The JSON object in `answer` (fences and prose around it are dropped).
fn json_of(answer: &str) -> Option<&str> {
    let start = answer.find('{')?;
    let end = answer.rfind('}')?;
    (end > start).then(|| &answer[start..=end])
}

/// Turns the model's answer into tasks, or into the one error the model is re-asked with.
pub fn parse(answer: &str, max_tasks: usize) -> Result<Vec<SwarmTask>, String> {
    let json = json_of(answer).ok_or("the answer holds no JSON object")?;
    let draft: Draft =
        serde_json::from_str(json).map_err(|e| format!("the JSON does not fit the shape: {e}"))?;
    if draft.tasks.is_empty() {
        return Err("\"tasks\" is empty".to_owned());
    }
    if draft.tasks.len() > max_tasks {
        return Err(format!(
            "{} tasks; at most {max_tasks} are allowed, merge some",
            draft.tasks.len()
        ));
    }
    let mut tasks = Vec::with_capacity(draft.tasks.len());
    let mut seen = HashSet::new();
    for d in draft.tasks {
        let id = d.id.trim().to_owned();
        if !crate::task::is_valid_id(&id) {
            return Err(format!(
                "task id {:?} must be 1–{} of A-Z a-z 0-9 _ - (it names a directory and a \
                 worker's argument)",
                d.id,
                crate::task::MAX_ID_LEN
            ));
        }
        if !seen.insert(id.clone()) {
            return Err(format!("task id {id} is used twice"));
        }
        let kind = KINDS
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(d.kind.trim()))
            .map(|(_, k)| *k)
            .ok_or_else(|| {
                let names: Vec<&str> = KINDS.iter().map(|(n, _)| *n).collect();
                format!(
                    "task {id} has type {:?}; use one of {}",
                    d.kind,
                    names.join(", ")
                )
            })?;
        if d.description.trim().is_empty() {
            return Err(format!("task {id} has an empty description"));
        }
        for f in d.target_files.iter().chain(&d.relevant_files) {
            if !is_relative_inside(f) {
                return Err(format!(
                    "task {id} names file {f:?}; files must be workspace-relative, without `..`"
                ));
            }
        }
        tasks.push(SwarmTask {
            id,
            kind,
            description: d.description.trim().to_owned(),
            dependencies: d.dependencies.iter().map(|s| s.trim().to_owned()).collect(),
            target_files: dedup(d.target_files),
            relevant_files: dedup(d.relevant_files),
            acceptance_criteria: d.acceptance_criteria,
            ..SwarmTask::default()
        });
    }
    validate(&tasks)?;
    Ok(tasks)
}

fn dedup(files: Vec<String>) -> Vec<String> {
    let mut seen = HashSet::new();
    files
        .into_iter()
        .map(|f| f.trim().trim_start_matches("./").to_owned())
        .filter(|f| seen.insert(f.clone()))
        .collect()
}

/// Whether `path` is a plain workspace-relative path.
pub fn is_relative_inside(path: &str) -> bool {
    let p = Path::new(path.trim());
    !path.trim().is_empty()
        && p.is_relative()
        && p.components().all(|c| {
            matches!(
                c,
                std::path::Component::Normal(_) | std::path::Component::CurDir
            )
        })
}

/// Dependencies name existing other tasks and form no cycle.
pub fn validate(tasks: &[SwarmTask]) -> Result<(), String> {
    let ids: HashSet<&str> = tasks.iter().map(|t| t.id.as_str()).collect();
    for t in tasks {
        for d in &t.dependencies {
            if d == &t.id {
                return Err(format!("task {} depends on itself", t.id));
            }
            if !ids.contains(d.as_str()) {
                return Err(format!("task {} depends on {d}, which is not a task", t.id));
            }
        }
    }
    if let Some(cycle) = find_cycle(tasks) {
        return Err(format!(
            "the dependencies form a cycle: {}",
            cycle.join(" → ")
        ));
    }
    Ok(())
}

/// A dependency cycle, as ids from its first task back to it.
pub fn find_cycle(tasks: &[SwarmTask]) -> Option<Vec<String>> {
    let deps: HashMap<&str, &[String]> = tasks
        .iter()
        .map(|t| (t.id.as_str(), t.dependencies.as_slice()))
        .collect();
    // 0 unvisited, 1 on the path, 2 done.
    let mut mark: HashMap<&str, u8> = HashMap::new();
    for t in tasks {
        let mut path: Vec<&str> = Vec::new();
        let mut stack: Vec<(&str, usize)> = vec![(t.id.as_str(), 0)];
        while let Some((node, i)) = stack.pop() {
            if i == 0 {
                match mark.get(node).copied().unwrap_or(0) {
                    2 => continue,
                    1 => {
                        let from = path.iter().position(|n| *n == node).unwrap_or(0);
                        let mut cycle: Vec<String> =
                            path[from..].iter().map(|s| (*s).to_owned()).collect();
                        cycle.push(node.to_owned());
                        return Some(cycle);
                    }
                    _ => {
                        mark.insert(node, 1);
                        path.push(node);
                    }
                }
            }
            let next = deps.get(node).and_then(|d| d.get(i));
            match next {
                Some(dep) => {
                    stack.push((node, i + 1));
                    stack.push((dep.as_str(), 0));
                }
                None => {
                    mark.insert(node, 2);
                    path.pop();
                }
            }
        }
    }
    None
}

/// How a decomposition ended.
#[derive(Debug)]
pub struct Decomposed {
    /// The tasks, or the last error.
    pub tasks: Result<Vec<SwarmTask>, String>,
    /// Requests made.
    pub attempts: u32,
    /// Tokens they used.
    pub usage: Usage,
}

/// Asks `client` to decompose `goal` until it answers valid tasks, re-asking at most
/// [`MAX_REASKS`] times with the error. `hint` is added to the first request (a
/// re-decomposition says why).
pub async fn decompose(
    client: &dyn ModelClient,
    goal: &str,
    workspace: &Path,
    max_tasks: usize,
    hint: Option<&str>,
) -> Decomposed {
    let system = system_prompt(max_tasks);
    let mut text = request_text(goal, workspace);
    if let Some(hint) = hint {
        text.push_str("\n\n");
        text.push_str(hint);
    }
    let exchange = Exchange {
        system: &system,
        first: text,
        answer: "tasks",
        max_output_tokens: MAX_OUTPUT,
        effort: None,
        max_reasks: MAX_REASKS,
    };
    // Nothing cancels a decomposition but its time limit.
    let asked = ask_until_parsed(client, exchange, std::future::pending(), |answer| {
        parse(answer, max_tasks)
    })
    .await;
    let attempts = asked.attempts;
    let tasks = asked.value.map_err(|err| match err {
        AskError::Request(err) => format!("the decomposition request failed: {err}"),
        AskError::Cancelled => {
            format!(
                "the decomposition request failed: {}",
                ModelError::Cancelled
            )
        }
        AskError::TimedOut(limit) => format!(
            "the model did not answer the decomposition within {}s",
            limit.as_secs()
        ),
        AskError::Invalid(last_error) => {
            format!("no valid decomposition after {attempts} answers; the last error: {last_error}")
        }
    });
    Decomposed {
        tasks,
        attempts,
        usage: asked.usage,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn answer(tasks: &str) -> String {
        format!("```json\n{{\"tasks\": [{tasks}]}}\n```")
    }

    #[test]
    fn a_valid_answer_becomes_tasks() {
        let a = answer(
            r#"{"id":"task-1","type":"implement","description":"Add a parser","target_files":["src/p.py","./src/p.py"]},
               {"id":"task-2","type":"TEST","description":"Test it","dependencies":["task-1"]}"#,
        );
        let tasks = parse(&a, 30).unwrap();
        assert_eq!(tasks.len(), 2);
        assert_eq!(tasks[0].target_files, vec!["src/p.py"]);
        assert_eq!(tasks[1].kind, TaskKind::Test);
        assert_eq!(tasks[1].dependencies, vec!["task-1"]);
    }

    #[test]
    fn each_fault_is_named_for_the_reask() {
        let cases = [
            (
                answer(r#"{"id":"a","type":"build","description":"x"}"#),
                "type \"build\"",
            ),
            (
                answer(r#"{"id":"a","type":"fix","description":"x","dependencies":["b"]}"#),
                "depends on b, which is not a task",
            ),
            (
                answer(r#"{"id":"a","type":"fix","description":"x","dependencies":["a"]}"#),
                "depends on itself",
            ),
            (
                answer(
                    r#"{"id":"a","type":"fix","description":"x","dependencies":["b"]},{"id":"b","type":"fix","description":"y","dependencies":["a"]}"#,
                ),
                "cycle: a → b → a",
            ),
            (
                answer(
                    r#"{"id":"a","type":"fix","description":"x"},{"id":"a","type":"fix","description":"y"}"#,
                ),
                "used twice",
            ),
            (
                answer(
                    r#"{"id":"a","type":"fix","description":"x","target_files":["../etc/passwd"]}"#,
                ),
                "without `..`",
            ),
            (
                answer(
                    r#"{"id":"a","type":"fix","description":"x","target_files":["/etc/passwd"]}"#,
                ),
                "workspace-relative",
            ),
            (
                answer(r#"{"id":"a","type":"fix","description":" "}"#),
                "empty description",
            ),
            (
                answer(r#"{"id":"a","type":"fix","description":"x","surprise":1}"#),
                "unknown field",
            ),
            (
                answer(r#"{"id":"../../x","type":"fix","description":"x"}"#),
                "A-Z a-z 0-9 _ -",
            ),
            (
                answer(r#"{"id":"a;b","type":"fix","description":"x"}"#),
                "A-Z a-z 0-9 _ -",
            ),
            (
                answer(r#"{"id":"$(id)","type":"fix","description":"x"}"#),
                "A-Z a-z 0-9 _ -",
            ),
            ("no json here".to_owned(), "no JSON object"),
            (answer(""), "\"tasks\" is empty"),
        ];
        for (text, expected) in cases {
            let err = parse(&text, 30).unwrap_err();
            assert!(err.contains(expected), "{err} should contain {expected}");
        }
        let many: Vec<String> = (0..4)
            .map(|i| format!(r#"{{"id":"t{i}","type":"fix","description":"x"}}"#))
            .collect();
        assert!(
            parse(&answer(&many.join(",")), 3)
                .unwrap_err()
                .contains("at most 3")
        );
    }

    #[test]
    fn the_listing_skips_hidden_and_build_directories() {
        let dir = tempfile::tempdir().unwrap();
        for f in [
            "a.py",
            "src/b.py",
            ".git/config",
            "node_modules/x.js",
            "target/y",
        ] {
            let p = dir.path().join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "x").unwrap();
        }
        assert_eq!(workspace_files(dir.path(), 10), vec!["a.py", "src/b.py"]);
        assert_eq!(workspace_files(dir.path(), 1), vec!["a.py"]);
    }
}
