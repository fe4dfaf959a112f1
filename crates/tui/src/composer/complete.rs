//! Completions for the composer: slash commands with their argument hints (from the shared
//! command table) and `@path` file names (from the workspace's index in `files`, built on a
//! background thread, so the UI never walks the disk). This module only proposes; the
//! composer decides what to insert.

use std::sync::OnceLock;

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
        let table = atto_present::commands::COMMANDS
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
