//! The composer: the multi-line input at the bottom of the screen. It owns the text and
//! cursor, prompt history, the completion menu (slash commands and `@path`), folded large
//! pastes, and the drafts queued while a turn runs. It knows nothing of keys or of the
//! terminal: `keys` decides which edit a key press means, `view` draws the result.

pub mod complete;
pub mod files;

use complete::{Completion, Replaces};
use files::FileIndex;

/// A paste longer than this many characters (or lines) is folded into a placeholder.
pub const FOLD_PASTE_CHARS: usize = 1_000;
/// See `FOLD_PASTE_CHARS`.
pub const FOLD_PASTE_LINES: usize = 15;

/// The input being edited and everything around it.
#[derive(Default)]
pub struct Composer {
    text: String,
    /// Byte offset into `text`, always on a char boundary.
    cursor: usize,
    history: Vec<String>,
    /// Which history entry is shown, while browsing it.
    history_pos: Option<usize>,
    /// The draft set aside while browsing history.
    stash: String,
    queued: Vec<String>,
    /// Folded pastes: the placeholder in `text`, and what it stands for.
    pastes: Vec<(String, String)>,
    items: Vec<Completion>,
    /// Menu entries as the view shows them: (insert text, hint).
    menu: Vec<(String, String)>,
    /// What accepting the highlighted completion replaces.
    replaces: Option<Replaces>,
    selected: usize,
    /// Esc closed the menu; it stays closed until the next edit.
    menu_hidden: bool,
    files: FileIndex,
}

/// What accepting a completion inserted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Accepted {
    /// The completed text.
    pub insert: String,
    /// It was a slash command that needs arguments typed after it.
    pub takes_args: bool,
    /// It was a slash command (not a path).
    pub command: bool,
}

impl Composer {
    /// An empty composer completing `@path` from `files`.
    pub fn new(files: FileIndex) -> Composer {
        Composer {
            files,
            ..Composer::default()
        }
    }

    /// Walks the workspace again for `@` completion, in the background.
    pub fn refresh_files(&self) {
        self.files.refresh();
    }

    /// The text as typed (folded pastes still folded).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The cursor, a byte offset into `text()`.
    pub fn cursor(&self) -> usize {
        self.cursor
    }

    /// Nothing typed.
    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// Replaces the text (a rewound prompt put back for editing), cursor at the end.
    pub fn set_text(&mut self, text: &str) {
        self.text = text.to_owned();
        self.cursor = self.text.len();
        self.history_pos = None;
        self.edited();
    }

    /// Empties the input (queued drafts stay).
    pub fn clear(&mut self) {
        self.text.clear();
        self.cursor = 0;
        self.pastes.clear();
        self.history_pos = None;
        self.edited();
    }

    /// Types one character at the cursor.
    pub fn insert_char(&mut self, c: char) {
        if c.is_control() && c != '\n' && c != '\t' {
            return;
        }
        self.text.insert(self.cursor, c);
        self.cursor += c.len_utf8();
        self.edited();
    }

    /// Inserts text at the cursor (control characters other than newline and tab dropped).
    pub fn insert_str(&mut self, s: &str) {
        let clean: String = s
            .chars()
            .filter(|c| !c.is_control() || *c == '\n' || *c == '\t')
            .collect();
        self.text.insert_str(self.cursor, &clean);
        self.cursor += clean.len();
        self.edited();
    }

    /// Starts a new line at the cursor.
    pub fn newline(&mut self) {
        self.insert_char('\n');
    }

    /// Pasted text: inserted as is when short; a long paste is folded into a placeholder
    /// such as `[pasted 1,048,576 chars]` that `submit` expands again.
    pub fn paste(&mut self, text: &str) {
        let text = text.replace("\r\n", "\n").replace('\r', "\n");
        let chars = text.chars().count();
        if chars <= FOLD_PASTE_CHARS && text.lines().count() <= FOLD_PASTE_LINES {
            self.insert_str(&text);
            return;
        }
        let base = format!("[pasted {} chars]", thousands(chars));
        let mut placeholder = base.clone();
        let mut n = 1;
        while self.pastes.iter().any(|(p, _)| *p == placeholder) {
            n += 1;
            placeholder = format!("{} #{n}]", base.trim_end_matches(']'));
        }
        self.insert_str(&placeholder);
        self.pastes.push((placeholder, text));
    }

    /// Deletes the character before the cursor.
    pub fn backspace(&mut self) {
        if let Some(prev) = prev_boundary(&self.text, self.cursor) {
            self.text.replace_range(prev..self.cursor, "");
            self.cursor = prev;
            self.edited();
        }
    }

    /// Deletes the character under the cursor.
    pub fn delete(&mut self) {
        if let Some(next) = next_boundary(&self.text, self.cursor) {
            self.text.replace_range(self.cursor..next, "");
            self.edited();
        }
    }

    /// Deletes the word before the cursor (Ctrl-W, Alt-Backspace).
    pub fn delete_word_back(&mut self) {
        let start = word_left(&self.text, self.cursor);
        if start < self.cursor {
            self.text.replace_range(start..self.cursor, "");
            self.cursor = start;
            self.edited();
        }
    }

    /// One character left.
    pub fn left(&mut self) {
        if let Some(prev) = prev_boundary(&self.text, self.cursor) {
            self.cursor = prev;
        }
    }

    /// One character right.
    pub fn right(&mut self) {
        if let Some(next) = next_boundary(&self.text, self.cursor) {
            self.cursor = next;
        }
    }

    /// To the start of the previous word.
    pub fn word_left(&mut self) {
        self.cursor = word_left(&self.text, self.cursor);
    }

    /// To the end of the next word.
    pub fn word_right(&mut self) {
        let rest = &self.text[self.cursor..];
        let skip_space = rest.len() - rest.trim_start().len();
        let word = rest[skip_space..]
            .find(char::is_whitespace)
            .unwrap_or(rest.len() - skip_space);
        self.cursor += skip_space + word;
    }

    /// To the start of the current line.
    pub fn home(&mut self) {
        self.cursor = self.line_start();
    }

    /// To the end of the current line.
    pub fn end(&mut self) {
        self.cursor = self.text[self.cursor..]
            .find('\n')
            .map_or(self.text.len(), |i| self.cursor + i);
    }

    /// ↑: the line above, or the previous prompt when on the first line (or while already
    /// browsing history).
    pub fn up(&mut self) {
        if self.browsing() || self.line_start() == 0 {
            self.history_prev();
        } else {
            let col = self.column();
            let above_end = self.line_start() - 1;
            let above_start = self.text[..above_end].rfind('\n').map_or(0, |i| i + 1);
            self.cursor = at_column(&self.text, above_start, above_end, col);
        }
    }

    /// ↓: the line below, or the next prompt (then the stashed draft) when on the last line.
    pub fn down(&mut self) {
        let below = self.text[self.cursor..].find('\n');
        match below {
            Some(i) if !self.browsing() => {
                let col = self.column();
                let start = self.cursor + i + 1;
                let end = self.text[start..]
                    .find('\n')
                    .map_or(self.text.len(), |j| start + j);
                self.cursor = at_column(&self.text, start, end, col);
            }
            _ => self.history_next(),
        }
    }

    /// Sends the input: returns it with folded pastes expanded, trimmed, and records it in
    /// history. `None` (and nothing changes) when only whitespace was typed.
    pub fn submit(&mut self) -> Option<String> {
        let expanded = self.expanded();
        let prompt = expanded.trim();
        if prompt.is_empty() {
            return None;
        }
        let prompt = prompt.to_owned();
        let typed = self.text.trim().to_owned();
        if self.history.last() != Some(&typed) {
            self.history.push(typed);
        }
        self.clear();
        Some(prompt)
    }

    /// The last prompt sent, as it was typed (what ↑ recalls first).
    pub fn last_prompt(&self) -> Option<&str> {
        self.history.last().map(String::as_str)
    }

    /// Drafts waiting for the running turn to end, oldest first.
    pub fn queued(&self) -> &[String] {
        &self.queued
    }

    /// Adds a draft to send when the running turn ends.
    pub fn queue(&mut self, prompt: String) {
        self.queued.push(prompt);
    }

    /// The oldest queued draft, to send now.
    pub fn pop_queued(&mut self) -> Option<String> {
        (!self.queued.is_empty()).then(|| self.queued.remove(0))
    }

    /// Drops the newest queued draft (Esc on an empty composer).
    pub fn discard_last_queued(&mut self) -> Option<String> {
        self.queued.pop()
    }

    /// Whether the completion menu is showing.
    pub fn menu_open(&self) -> bool {
        !self.menu.is_empty()
    }

    /// The menu as the view draws it: (insert text, hint).
    pub fn completions(&self) -> &[(String, String)] {
        &self.menu
    }

    /// The highlighted menu entry.
    pub fn selected(&self) -> usize {
        self.selected
    }

    /// Moves the highlight up, wrapping.
    pub fn menu_up(&mut self) {
        if !self.menu.is_empty() {
            self.selected = (self.selected + self.menu.len() - 1) % self.menu.len();
        }
    }

    /// Moves the highlight down, wrapping.
    pub fn menu_down(&mut self) {
        if !self.menu.is_empty() {
            self.selected = (self.selected + 1) % self.menu.len();
        }
    }

    /// Closes the menu until the next edit.
    pub fn hide_menu(&mut self) {
        self.menu_hidden = true;
        self.set_items(Vec::new(), None);
    }

    /// Re-reads completions (after the file index finished, for instance).
    pub fn refresh(&mut self) {
        if !self.menu_hidden {
            self.complete();
        }
    }

    /// Whether the highlighted entry is a command already typed in full (perhaps with
    /// arguments after it): Enter then sends rather than completes.
    pub fn selected_is_typed(&self) -> bool {
        let Some(item) = self.items.get(self.selected) else {
            return false;
        };
        self.replaces == Some(Replaces::Command)
            && self
                .text
                .trim_start()
                .strip_prefix(&item.insert)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with(' '))
    }

    /// Puts the highlighted completion in place of what it completes. `None` when the menu
    /// is closed or the entry is already typed in full.
    pub fn accept(&mut self) -> Option<Accepted> {
        let item = self.items.get(self.selected)?.clone();
        match self.replaces? {
            Replaces::Command => {
                let line = self.text.trim_start();
                if line.starts_with(&item.insert) && line.len() > item.insert.len() {
                    return None; // arguments are being typed: the entry is only a hint
                }
                let mut text = item.insert.clone();
                if item.takes_args {
                    text.push(' ');
                }
                self.set_text(&text);
                if item.takes_args {
                    // Keep showing the argument hint.
                    self.complete();
                } else {
                    self.hide_menu();
                }
                Some(Accepted {
                    insert: item.insert,
                    takes_args: item.takes_args,
                    command: true,
                })
            }
            Replaces::Path(start) => {
                let mut insert = item.insert.clone();
                insert.push(' ');
                self.text.replace_range(start..self.cursor, &insert);
                self.cursor = start + insert.len();
                self.hide_menu();
                Some(Accepted {
                    insert: item.insert,
                    takes_args: false,
                    command: false,
                })
            }
        }
    }

    fn browsing(&self) -> bool {
        self.history_pos
            .is_some_and(|pos| self.history.get(pos) == Some(&self.text))
    }

    fn history_prev(&mut self) {
        let pos = match self.history_pos.filter(|_| self.browsing()) {
            Some(0) => return,
            Some(pos) => pos - 1,
            None if self.history.is_empty() => return,
            None => {
                self.stash = std::mem::take(&mut self.text);
                self.history.len() - 1
            }
        };
        self.show_history(pos);
    }

    fn history_next(&mut self) {
        let Some(pos) = self.history_pos.filter(|_| self.browsing()) else {
            return;
        };
        if pos + 1 < self.history.len() {
            self.show_history(pos + 1);
        } else {
            let stash = std::mem::take(&mut self.stash);
            self.set_text(&stash);
        }
    }

    fn show_history(&mut self, pos: usize) {
        let entry = self.history.get(pos).cloned().unwrap_or_default();
        self.set_text(&entry);
        self.history_pos = Some(pos);
    }

    fn line_start(&self) -> usize {
        self.text[..self.cursor].rfind('\n').map_or(0, |i| i + 1)
    }

    fn column(&self) -> usize {
        self.text[self.line_start()..self.cursor].chars().count()
    }

    fn expanded(&self) -> String {
        let mut found: Vec<(usize, usize)> = self
            .pastes
            .iter()
            .enumerate()
            .filter_map(|(i, (p, _))| self.text.find(p.as_str()).map(|at| (at, i)))
            .collect();
        found.sort_unstable();
        let mut out = String::with_capacity(self.text.len());
        let mut from = 0;
        for (at, i) in found {
            if at < from {
                continue;
            }
            let (placeholder, content) = &self.pastes[i];
            out.push_str(&self.text[from..at]);
            out.push_str(content);
            from = at + placeholder.len();
        }
        out.push_str(&self.text[from..]);
        out
    }

    /// After any edit: leave history browsing state alone, reopen the menu.
    fn edited(&mut self) {
        self.menu_hidden = false;
        self.complete();
    }

    fn complete(&mut self) {
        if self.text.starts_with('/') && !self.text.contains('\n') {
            let items = complete::commands(&self.text);
            self.set_items(items, Some(Replaces::Command));
            return;
        }
        let before = &self.text[..self.cursor];
        let start = before.rfind(char::is_whitespace).map_or(0, |i| {
            i + before[i..].chars().next().map_or(1, char::len_utf8)
        });
        if let Some(query) = before[start..].strip_prefix('@') {
            let items = self
                .files
                .matches(query)
                .into_iter()
                .map(|path| Completion {
                    insert: format!("@{path}"),
                    hint: String::new(),
                    takes_args: false,
                })
                .collect();
            self.set_items(items, Some(Replaces::Path(start)));
            return;
        }
        self.set_items(Vec::new(), None);
    }

    fn set_items(&mut self, items: Vec<Completion>, replaces: Option<Replaces>) {
        self.menu = items
            .iter()
            .map(|i| (i.insert.clone(), i.hint.clone()))
            .collect();
        self.items = items;
        self.replaces = replaces;
        if self.selected >= self.menu.len() {
            self.selected = 0;
        }
    }
}

/// `1048576` → `1,048,576`.
pub fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn prev_boundary(text: &str, at: usize) -> Option<usize> {
    text[..at].char_indices().next_back().map(|(i, _)| i)
}

fn next_boundary(text: &str, at: usize) -> Option<usize> {
    text[at..].chars().next().map(|c| at + c.len_utf8())
}

fn word_left(text: &str, at: usize) -> usize {
    let before = text[..at].trim_end();
    before.rfind(char::is_whitespace).map_or(0, |i| {
        i + before[i..].chars().next().map_or(1, char::len_utf8)
    })
}

/// The byte offset of character column `col` in the line `start..end`, or its end.
fn at_column(text: &str, start: usize, end: usize, col: usize) -> usize {
    text[start..end]
        .char_indices()
        .nth(col)
        .map_or(end, |(i, _)| start + i)
}
