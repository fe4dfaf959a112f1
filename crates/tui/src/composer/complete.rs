//! Completions for the composer: slash commands with their argument hints (from the shared
//! command table) and `@path` file names (from an index of the workspace built on a
//! background thread, so the UI never walks the disk). This module only proposes; the
//! composer decides what to insert.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

/// Most files the `@path` index holds; a bigger tree is indexed up to this many.
pub const MAX_INDEXED_FILES: usize = 20_000;
/// Most entries a completion menu shows.
pub const MAX_ITEMS: usize = 8;

/// What a completion replaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Replaces {
    /// The whole first line (`/name …`).
    Command,
    /// The `@word` that ends at the cursor; holds the byte offset of its `@`.
    Path(usize),
}

/// One entry in the menu.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion {
    /// Text that replaces what was typed.
    pub insert: String,
    /// Shown beside it: arguments and what it does.
    pub hint: String,
    /// Whether the command takes arguments (accepting it then leaves room to type them).
    pub takes_args: bool,
}

/// A slash command as the menu offers it: the literal words, then the argument hint.
#[derive(Debug, Clone)]
struct CommandEntry {
    literal: String,
    args: String,
    about: String,
}

/// Commands the TUI handles itself, beside the shared table.
const LOCAL: &[(&str, &str)] = &[("/queue", "show the drafts queued for after this turn")];

fn command_entries() -> &'static [CommandEntry] {
    static ENTRIES: OnceLock<Vec<CommandEntry>> = OnceLock::new();
    ENTRIES.get_or_init(|| {
        let table = atto_core::commands::COMMANDS
            .iter()
            .map(|c| (c.usage, c.about))
            .chain(LOCAL.iter().copied());
        table
            .map(|(usage, about)| {
                // Literal words run until the first placeholder (`N`, `[..]`, `a|b`, `"..."`).
                let mut literal = Vec::new();
                let mut args = Vec::new();
                for word in usage.split_whitespace() {
                    let placeholder = !args.is_empty()
                        || word.contains(['[', ']', '|', '"'])
                        || word.chars().any(|c| c.is_ascii_uppercase());
                    if placeholder {
                        args.push(word);
                    } else {
                        literal.push(word);
                    }
                }
                CommandEntry {
                    literal: literal.join(" "),
                    args: args.join(" "),
                    about: about.to_owned(),
                }
            })
            .collect()
    })
}

/// Commands matching the first line typed so far: those it is a prefix of, and, once
/// arguments are being typed, the command they belong to (for its hint).
pub fn commands(line: &str) -> Vec<Completion> {
    if !line.starts_with('/') || line.contains('\n') {
        return Vec::new();
    }
    let typed = line.trim_start();
    let mut items: Vec<Completion> = Vec::new();
    for entry in command_entries() {
        let matches = entry.literal.starts_with(typed)
            || (typed.starts_with(&entry.literal)
                && typed[entry.literal.len()..].starts_with(' ')
                && !entry.args.is_empty());
        if !matches || items.iter().any(|i| i.insert == entry.literal) {
            continue;
        }
        let hint = if entry.args.is_empty() {
            entry.about.clone()
        } else {
            format!("{}  {}", entry.args, entry.about)
        };
        items.push(Completion {
            insert: entry.literal.clone(),
            hint,
            takes_args: !entry.args.is_empty(),
        });
    }
    // Once the line is exactly one command, the menu only repeats it: keep it for the hint
    // while arguments are typed, drop it for a complete command without arguments.
    if let [only] = items.as_slice()
        && only.insert == typed
        && !only.takes_args
    {
        return Vec::new();
    }
    items.truncate(MAX_ITEMS);
    items
}

/// Whether `line` is a slash command that takes no arguments, typed in full.
pub fn is_complete_command(line: &str) -> bool {
    let line = line.trim();
    command_entries()
        .iter()
        .any(|e| e.literal == line && e.args.is_empty())
}

/// Paths of the workspace, indexed once on a background thread.
#[derive(Clone, Default)]
pub struct FileIndex {
    files: Arc<OnceLock<Vec<String>>>,
}

impl FileIndex {
    /// Starts indexing `root` (respecting `.gitignore`, skipping hidden files) on a
    /// background thread and returns at once; until it finishes, `@` offers nothing.
    pub fn build(root: PathBuf) -> FileIndex {
        let index = FileIndex::default();
        let files = Arc::clone(&index.files);
        // If the thread cannot start, `@` completion is simply empty.
        let _ = std::thread::Builder::new()
            .name("atto-file-index".to_owned())
            .spawn(move || {
                let _ = files.set(walk(&root));
            });
        index
    }

    /// An index of exactly these paths (for tests and for callers that already know them).
    pub fn from_paths(paths: Vec<String>) -> FileIndex {
        let index = FileIndex::default();
        let _ = index.files.set(paths);
        index
    }

    /// Whether the background walk has finished.
    pub fn ready(&self) -> bool {
        self.files.get().is_some()
    }

    /// Paths matching `query`: those starting with it first, then those whose file name
    /// starts with it, then those containing it; at most `MAX_ITEMS`.
    pub fn matches(&self, query: &str) -> Vec<String> {
        let Some(files) = self.files.get() else {
            return Vec::new();
        };
        let query = query.to_lowercase();
        let mut ranked: Vec<(u8, &String)> = files
            .iter()
            .filter_map(|path| {
                let lower = path.to_lowercase();
                let name = lower.rsplit('/').next().unwrap_or(&lower);
                if lower.starts_with(&query) {
                    Some((0, path))
                } else if name.starts_with(&query) {
                    Some((1, path))
                } else if lower.contains(&query) {
                    Some((2, path))
                } else {
                    None
                }
            })
            .collect();
        ranked.sort_by(|a, b| {
            a.0.cmp(&b.0)
                .then(a.1.len().cmp(&b.1.len()))
                .then(a.1.cmp(b.1))
        });
        ranked
            .into_iter()
            .take(MAX_ITEMS)
            .map(|(_, p)| p.clone())
            .collect()
    }
}

/// Relative paths of the files under `root`, sorted, capped at `MAX_INDEXED_FILES`.
fn walk(root: &std::path::Path) -> Vec<String> {
    let mut files = Vec::new();
    let walker = ignore::WalkBuilder::new(root)
        .hidden(true)
        .git_ignore(true)
        .require_git(false)
        .build();
    for entry in walker.flatten() {
        if files.len() >= MAX_INDEXED_FILES {
            break;
        }
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        if let Ok(rel) = entry.path().strip_prefix(root) {
            files.push(rel.to_string_lossy().replace('\\', "/"));
        }
    }
    files.sort();
    files
}
