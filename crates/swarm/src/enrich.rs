//! The seed's post-decomposition enrichment pipeline, run before scheduling. In the seed's
//! order: flag thin tasks (short description, no actionable verb, no files); give every
//! task the structures of its files (code context) and, when it has none, acceptance
//! criteria by kind; then ask the model, one request per task, to flesh out the tasks
//! still thin. Reports which tasks stayed thin and whether most of them did, so the
//! coordinator can ask for a new decomposition.
//!
//! Does not own the decomposition, whether enrichment runs at all
//! (`SwarmConfig::enable_task_enrichment`), or what the coordinator does with the report.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use atto_relpath::{Globs, Parent, Policy, Start, Whitespace};
use std::time::Duration;

use atto_llm::{ModelClient, ModelRequest, ModelResponse};
use atto_protocol::{Message, Usage};
use atto_quality::TaskKind;
use atto_quality::concrete::{symbol_lang, symbols_of};
use serde_json::{Map, Value};
use tokio::io::AsyncReadExt;

use crate::task::SwarmTask;

/// Words that make a description actionable (matched case-insensitively as whole words,
/// with `-s`, `-es`, `-d`, `-ed` and `-ing` forms), separated by white space.
const VERBS: &str = "\
add implement create write fix update remove delete refactor rename move extract \
test document validate handle support replace convert parse build generate configure \
install migrate integrate optimize optimise improve change modify edit introduce \
define expose split merge clean format check verify ensure review analyze analyse \
investigate research compute calculate return raise log cache store load save \
register enable disable deprecate upgrade port serialize deserialize render display \
emit describe explain summarize audit benchmark debug reproduce resolve correct \
patch wire connect read list set use make";

/// Bytes of one file read for its structures.
const MAX_FILE_BYTES: u64 = 256 * 1024;

/// Structures listed per file.
const MAX_SYMBOLS: usize = 40;

/// Bytes of a task's code context.
const MAX_CONTEXT: usize = 4 * 1024;

/// Output tokens of one enrichment request.
const MAX_OUTPUT_TOKENS: u32 = 1200;

/// How long one enrichment request may take.
const TIMEOUT: Duration = Duration::from_secs(120);

/// Entries of the workspace listing the model sees.
const MAX_LISTED: usize = 150;

/// Directories never listed for the model: build output, dependencies, caches.
const UNLISTED: &[&str] = &[
    "target",
    "node_modules",
    "__pycache__",
    "dist",
    "build",
    "venv",
];

const SYSTEM: &str = "You prepare one task of a coding swarm for a worker agent that will \
see only this task. Its description is too thin to act on. Rewrite it so a worker can do \
it without guessing: name the files, the functions or classes, and the expected \
behaviour. Stay within what the task asks; do not widen it. Use workspace-relative paths \
only. Answer with ONE JSON object and nothing else:\n\
{\"description\": \"...\", \"target_files\": [\"path\"], \"acceptance_criteria\": \
[\"...\"], \"technical_constraints\": [\"...\"], \"modification_instructions\": \"1. ...\\n2. \
...\", \"test_expectations\": [\"...\"]}";

/// What enrichment did to a decomposition.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Enrichment {
    /// Tasks found thin before enrichment (step 1), by id.
    pub thin: Vec<String>,
    /// Tasks enrichment changed (code context, criteria, the model's additions) and that
    /// are not still thin.
    pub enriched: Vec<String>,
    /// Tasks still thin afterwards.
    pub still_thin: Vec<String>,
    /// More than half of the thin tasks stayed thin: decompose again.
    pub redecompose: bool,
    /// Tokens of the enrichment requests.
    pub usage: Usage,
    /// What they cost; `None` when a price or a usage was unknown.
    pub cost_usd: Option<f64>,
    /// Why the model could not enrich a task (`task-2: …`), for the user.
    pub notes: Vec<String>,
}

/// Why a task is thin (empty: it is not): a description under `min_chars` characters, no
/// actionable verb, no target or relevant files.
pub fn thin_reasons(task: &SwarmTask, min_chars: usize) -> Vec<String> {
    let mut reasons = Vec::new();
    let chars = task.description.trim().chars().count();
    if chars < min_chars {
        reasons.push(format!("description is {chars} chars, under {min_chars}"));
    }
    if !has_verb(&task.description) {
        reasons.push("no actionable verb".to_owned());
    }
    if task.target_files.is_empty() && task.relevant_files.is_empty() {
        reasons.push("no target or relevant files".to_owned());
    }
    reasons
}

/// Runs the pipeline over `tasks` (changed in place). `model` is asked about the tasks
/// still thin after the rule-based steps; without one they stay as they are.
pub async fn enrich(
    tasks: &mut [SwarmTask],
    workspace: &Path,
    min_chars: usize,
    model: Option<&dyn ModelClient>,
) -> Enrichment {
    let mut out = Enrichment {
        cost_usd: Some(0.0),
        ..Enrichment::default()
    };
    let before = tasks.to_vec();
    // 1. Quality check.
    let thin: Vec<bool> = tasks
        .iter()
        .map(|t| !thin_reasons(t, min_chars).is_empty())
        .collect();
    // 2. Code context and 3. rule-based criteria, for every task.
    for task in tasks.iter_mut() {
        if task.code_context.is_none() {
            task.code_context = code_context(workspace, task).await;
        }
        if task.acceptance_criteria.is_empty() {
            task.acceptance_criteria = rule_criteria(task);
        }
    }
    // 4. The model, for the tasks still thin.
    if let Some(model) = model {
        let mut listing = None;
        for (task, old) in tasks.iter_mut().zip(&before) {
            let reasons = thin_reasons(task, min_chars);
            if reasons.is_empty() {
                continue;
            }
            let listing = match &listing {
                Some(listing) => listing,
                None => listing.insert(workspace_listing(workspace).await),
            };
            let prompt = prompt(task, &reasons, listing);
            match ask(model, prompt, &mut out).await {
                Ok(reply) => {
                    let files = task.target_files.len();
                    merge(task, &reply, old.acceptance_criteria.is_empty());
                    if task.target_files.len() > files && old.code_context.is_none() {
                        task.code_context = code_context(workspace, task).await;
                    }
                }
                Err(why) => out.notes.push(format!("{}: {why}", task.id)),
            }
        }
    }
    // 5. What changed, what stayed thin.
    for ((task, old), was_thin) in tasks.iter_mut().zip(&before).zip(&thin) {
        let still_thin = *was_thin && !thin_reasons(task, min_chars).is_empty();
        if *was_thin {
            out.thin.push(task.id.clone());
            if still_thin {
                out.still_thin.push(task.id.clone());
            }
        }
        if let Some(note) = change_note(old, task) {
            task.enrichment = Some(note);
            // What it gained is kept, but a task still thin was not enriched enough to
            // say so: it is reported once, as still thin.
            if !still_thin {
                out.enriched.push(task.id.clone());
            }
        }
    }
    out.redecompose = !tasks.is_empty() && out.still_thin.len() * 2 > out.thin.len();
    out
}

/// Whether `text` has an actionable verb as a word of its own.
fn has_verb(text: &str) -> bool {
    text.split(|c: char| !c.is_alphanumeric()).any(|word| {
        let word = word.to_lowercase();
        VERBS.split_whitespace().any(|verb| {
            let inflected = word
                .strip_prefix(verb)
                .is_some_and(|rest| matches!(rest, "" | "s" | "es" | "d" | "ed" | "ing"));
            // remove → removing
            let dropped_e = verb
                .strip_suffix('e')
                .and_then(|stem| word.strip_prefix(stem))
                .is_some_and(|rest| rest == "ing");
            inflected || dropped_e
        })
    })
}

/// Acceptance criteria by kind (step 3), the target files' first for tasks that write.
fn rule_criteria(task: &SwarmTask) -> Vec<String> {
    let mut criteria = Vec::new();
    if task.kind.is_action() {
        for file in &task.target_files {
            criteria.push(format!("File '{file}' exists and is non-empty"));
        }
    }
    let by_kind: &[&str] = match task.kind {
        TaskKind::Implement => &[
            "Contains described functions/classes",
            "Imports resolve without errors",
            "No syntax errors in modified files",
        ],
        TaskKind::Test => &["Tests are run and their output shown", "New tests pass"],
        TaskKind::Refactor => &[
            "Behaviour unchanged: existing tests still pass",
            "No syntax errors in modified files",
        ],
        TaskKind::Document => &["Documentation describes the change"],
        TaskKind::Fix => &[
            "The defect no longer occurs",
            "No syntax errors in modified files",
        ],
        TaskKind::Research | TaskKind::Review | TaskKind::Other => &["The result answers the task"],
    };
    criteria.extend(by_kind.iter().map(|c| (*c).to_owned()));
    criteria
}

/// The structures of the task's files that exist (step 2): one line per file, bounded.
async fn code_context(workspace: &Path, task: &SwarmTask) -> Option<String> {
    let mut out = String::new();
    let mut seen = Vec::new();
    for rel in task.files().filter_map(|f| clean_rel(f)) {
        if seen.contains(&rel) {
            continue;
        }
        let Some(text) = read_inside(workspace, &rel).await else {
            continue;
        };
        let line = describe_file(&rel, &text);
        seen.push(rel);
        if !out.is_empty() {
            out.push('\n');
        }
        if out.len() + line.len() > MAX_CONTEXT {
            let mut end = MAX_CONTEXT.saturating_sub(out.len() + '…'.len_utf8());
            while !line.is_char_boundary(end) {
                end -= 1;
            }
            out.push_str(&line[..end]);
            out.push('…');
            break;
        }
        out.push_str(&line);
    }
    let out = out.trim_end().to_owned();
    (!out.is_empty()).then_some(out)
}

/// `src/models/user.py: class UserCreateRequest, function validate_email, …`.
fn describe_file(rel: &str, text: &str) -> String {
    let symbols = symbol_lang(rel).and_then(|lang| symbols_of(text, lang));
    match symbols {
        Some(symbols) if symbols.is_empty() => format!("{rel}: no classes or functions"),
        Some(symbols) => {
            let mut line = format!("{rel}: ");
            for (i, s) in symbols.iter().take(MAX_SYMBOLS).enumerate() {
                if i > 0 {
                    line.push_str(", ");
                }
                let _ = write!(line, "{} {}", s.kind, s.name);
            }
            if symbols.len() > MAX_SYMBOLS {
                let _ = write!(line, ", … (+{} more)", symbols.len() - MAX_SYMBOLS);
            }
            line
        }
        None => format!("{rel}: {} lines", text.lines().count()),
    }
}

/// How a task's files are read: patterns kept, so that a target the model gives as
/// `src/*.py` still keeps the task apart from every other in the scheduler (the planner's
/// [`atto_planner::overlap::DECLARED`] refuses them); any `..` refused, so nothing above
/// the workspace is ever read for the model.
const TASK_FILE: Policy = Policy {
    whitespace: Whitespace::Trim,
    globs: Globs::Keep,
    parent: Parent::Refuse,
    start: Start::Refuse,
};

/// `rel` as a clean workspace-relative path (`./a/b` → `a/b`); `None` for absolute paths
/// and paths with `..`.
fn clean_rel(rel: &str) -> Option<String> {
    atto_relpath::normalize(rel, Path::new(""), TASK_FILE)
}

/// The start of the file `rel` of `workspace`, if it is a file inside it (symlinks that
/// lead out do not count).
async fn read_inside(workspace: &Path, rel: &str) -> Option<String> {
    let rel = clean_rel(rel)?;
    let root = tokio::fs::canonicalize(workspace).await.ok()?;
    let path: PathBuf = tokio::fs::canonicalize(root.join(rel)).await.ok()?;
    if !path.starts_with(&root) {
        return None;
    }
    let file = tokio::fs::File::open(&path).await.ok()?;
    if !file.metadata().await.ok()?.is_file() {
        return None;
    }
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES)
        .read_to_end(&mut bytes)
        .await
        .ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// The workspace's top two levels (`src/`, `src/models/`, `README.md`), for the model.
async fn workspace_listing(workspace: &Path) -> String {
    let mut lines = Vec::new();
    'top: for (name, is_dir) in entries(workspace).await {
        if lines.len() >= MAX_LISTED {
            break;
        }
        lines.push(format!("{name}{}", if is_dir { "/" } else { "" }));
        if !is_dir {
            continue;
        }
        for (child, child_is_dir) in entries(&workspace.join(&name)).await {
            if lines.len() >= MAX_LISTED {
                break 'top;
            }
            lines.push(format!(
                "{name}/{child}{}",
                if child_is_dir { "/" } else { "" }
            ));
        }
    }
    if lines.len() >= MAX_LISTED {
        lines.push("… (more not listed)".to_owned());
    }
    lines.join("\n")
}

/// A directory's listable entries, sorted: no hidden ones, no build output.
async fn entries(dir: &Path) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    let Ok(mut read) = tokio::fs::read_dir(dir).await else {
        return out;
    };
    while let Ok(Some(entry)) = read.next_entry().await {
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        if name.starts_with('.') || UNLISTED.contains(&name.as_str()) {
            continue;
        }
        let is_dir = entry.file_type().await.is_ok_and(|t| t.is_dir());
        out.push((name, is_dir));
    }
    out.sort();
    out
}

/// What the model reads about one thin task.
fn prompt(task: &SwarmTask, reasons: &[String], listing: &str) -> String {
    let mut out = format!(
        "## Task {} ({})\n{}\n",
        task.id,
        task.kind.as_str(),
        task.description.trim()
    );
    if !task.target_files.is_empty() {
        let _ = writeln!(out, "Target files: {}", task.target_files.join(", "));
    }
    if !task.relevant_files.is_empty() {
        let _ = writeln!(out, "Relevant files: {}", task.relevant_files.join(", "));
    }
    let _ = writeln!(out, "Why it is thin: {}", reasons.join("; "));
    if !task.acceptance_criteria.is_empty() {
        out.push_str("\n## Acceptance criteria so far\n");
        for c in &task.acceptance_criteria {
            let _ = writeln!(out, "- {c}");
        }
    }
    if let Some(context) = &task.code_context {
        let _ = write!(out, "\n## Code context\n{context}\n");
    }
    let _ = write!(out, "\n## Files in the workspace (top levels)\n{listing}\n");
    out
}

/// One enrichment request; its usage is added to `out`. `Err` says why there is no
/// usable answer.
async fn ask(
    model: &dyn ModelClient,
    prompt: String,
    out: &mut Enrichment,
) -> Result<Map<String, Value>, String> {
    let messages = [Message::User {
        text: prompt,
        context: None,
    }];
    let request = ModelRequest {
        system: Cow::Borrowed(SYSTEM),
        messages: Cow::Borrowed(&messages),
        tools: Cow::Owned(Vec::new()),
        max_output_tokens: MAX_OUTPUT_TOKENS,
        effort: None,
        temperature: Some(0.2),
    };
    let mut ignore = |_| {};
    let response = match tokio::time::timeout(TIMEOUT, model.stream(&request, &mut ignore)).await {
        Ok(Ok(response)) => response,
        Ok(Err(err)) => return Err(format!("the enrichment request failed: {err}")),
        Err(_) => {
            return Err(format!(
                "the enrichment request did not answer within {} s",
                TIMEOUT.as_secs()
            ));
        }
    };
    account(out, &response);
    let text = response.text();
    parse_reply(&text).ok_or_else(|| {
        format!(
            "the model's answer was not a JSON object: {}",
            text.chars().take(200).collect::<String>()
        )
    })
}

/// Adds a response's tokens and cost to the totals.
fn account(out: &mut Enrichment, response: &ModelResponse) {
    atto_llm::add_usage(&mut out.usage, &response.usage);
    let cost = if response.usage_reported {
        atto_llm::cost_usd(&response.model, &response.usage)
    } else {
        None
    };
    out.cost_usd = out.cost_usd.zip(cost).map(|(a, b)| a + b);
}

/// The JSON object in a model's answer, fenced or wrapped in prose.
fn parse_reply(text: &str) -> Option<Map<String, Value>> {
    let start = text.find('{')?;
    let end = text.rfind('}')?;
    match serde_json::from_str(text.get(start..=end)?) {
        Ok(Value::Object(map)) => Some(map),
        _ => None,
    }
}

/// Merges the model's answer into `task`. `rules` says the criteria came from
/// `rule_criteria`, so new target files get theirs.
fn merge(task: &mut SwarmTask, reply: &Map<String, Value>, rules: bool) {
    if let Some(description) = text_field(reply, "description")
        && description.chars().count() > task.description.trim().chars().count()
    {
        task.description = description;
    }
    let files = task.target_files.len();
    let proposed = list_field(reply, "target_files");
    union(
        &mut task.target_files,
        proposed.iter().filter_map(|f| clean_rel(f)),
    );
    if rules && task.target_files.len() > files {
        let old = std::mem::take(&mut task.acceptance_criteria);
        task.acceptance_criteria = rule_criteria(task);
        union(&mut task.acceptance_criteria, old);
    }
    union(
        &mut task.acceptance_criteria,
        list_field(reply, "acceptance_criteria"),
    );
    union(
        &mut task.technical_constraints,
        list_field(reply, "technical_constraints"),
    );
    if let Some(steps) = text_field(reply, "modification_instructions") {
        task.modification_instructions = Some(steps);
    }
    union(
        &mut task.test_expectations,
        list_field(reply, "test_expectations"),
    );
}

/// Appends the items of `new` not already in `list`.
fn union(list: &mut Vec<String>, new: impl IntoIterator<Item = String>) {
    for item in new {
        if !list.contains(&item) {
            list.push(item);
        }
    }
}

/// A text field; a list of lines is joined.
fn text_field(reply: &Map<String, Value>, key: &str) -> Option<String> {
    let text = match reply.get(key)? {
        Value::String(s) => s.trim().to_owned(),
        Value::Array(_) => list_field(reply, key).join("\n"),
        _ => return None,
    };
    (!text.is_empty()).then_some(text)
}

/// A list field; a lone string is a list of one.
fn list_field(reply: &Map<String, Value>, key: &str) -> Vec<String> {
    let items: Vec<&Value> = match reply.get(key) {
        Some(Value::Array(items)) => items.iter().collect(),
        Some(one @ Value::String(_)) => vec![one],
        _ => Vec::new(),
    };
    items
        .into_iter()
        .filter_map(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

/// `description 14→312 chars, +1 target file, +4 criteria, +2 constraints`; `None` when
/// nothing changed.
fn change_note(old: &SwarmTask, new: &SwarmTask) -> Option<String> {
    let mut parts = Vec::new();
    if old.description != new.description {
        parts.push(format!(
            "description {}→{} chars",
            old.description.trim().chars().count(),
            new.description.trim().chars().count()
        ));
    }
    let added = |old: &[String], new: &[String], one: &str, many: &str| {
        let n = new.len().saturating_sub(old.len());
        (n > 0).then(|| format!("+{n} {}", if n == 1 { one } else { many }))
    };
    parts.extend(added(
        &old.target_files,
        &new.target_files,
        "target file",
        "target files",
    ));
    parts.extend(added(
        &old.acceptance_criteria,
        &new.acceptance_criteria,
        "criterion",
        "criteria",
    ));
    parts.extend(added(
        &old.technical_constraints,
        &new.technical_constraints,
        "constraint",
        "constraints",
    ));
    if old.modification_instructions != new.modification_instructions {
        parts.push("instructions".to_owned());
    }
    parts.extend(added(
        &old.test_expectations,
        &new.test_expectations,
        "test expectation",
        "test expectations",
    ));
    if old.code_context != new.code_context {
        parts.push("code context".to_owned());
    }
    (!parts.is_empty()).then(|| parts.join(", "))
}

#[cfg(test)]
mod tests;
