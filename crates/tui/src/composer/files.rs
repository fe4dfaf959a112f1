//! The `@path` index: every file of the workspace (`.gitignore` honoured, hidden files
//! skipped), walked on a background thread and walked again when asked after a turn (the
//! agent may have added or removed files), kept as one string buffer so that a monorepo's
//! 200,000 paths cost a few megabytes, not a `String` each. Per keystroke the work is bounded:
//! a query that extends the previous one only looks at the previous query's hits, and the
//! menu keeps the best few without sorting everything. It never walks on the UI thread and
//! does not decide what a completion inserts (the composer does).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use super::complete::MAX_ITEMS;

/// Most files the index holds; a bigger tree is indexed up to this many.
pub const MAX_INDEXED_FILES: usize = 1_000_000;

/// Relative paths, `/`-separated, in walk order, stored back to back.
#[derive(Debug, Default)]
struct Paths {
    text: String,
    /// Where each path ends in `text`.
    ends: Vec<u32>,
}

impl Paths {
    fn from_iter<I: IntoIterator<Item = String>>(paths: I) -> Paths {
        let mut all = Paths::default();
        for path in paths {
            if !all.push(&path) {
                break;
            }
        }
        all
    }

    /// Appends `path`; false when the index is full.
    fn push(&mut self, path: &str) -> bool {
        let Ok(end) = u32::try_from(self.text.len() + path.len()) else {
            return false;
        };
        if self.ends.len() >= MAX_INDEXED_FILES {
            return false;
        }
        self.text.push_str(path);
        self.ends.push(end);
        true
    }

    fn len(&self) -> usize {
        self.ends.len()
    }

    fn get(&self, i: u32) -> &str {
        let i = i as usize;
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.text[start..self.ends[i] as usize]
    }
}

/// The hits of the last query, so that typing one more character narrows them.
struct Narrowed {
    query: String,
    paths: Arc<Paths>,
    hits: Vec<u32>,
}

/// What the background walk and the UI share.
#[derive(Default)]
struct Shared {
    paths: Mutex<Option<Arc<Paths>>>,
    walking: AtomicBool,
}

/// Paths of the workspace, indexed on a background thread.
#[derive(Default)]
pub struct FileIndex {
    shared: Arc<Shared>,
    root: Option<PathBuf>,
    last: Option<Narrowed>,
}

impl FileIndex {
    /// Starts indexing `root` on a background thread and returns at once; until it
    /// finishes, `@` offers nothing.
    pub fn build(root: PathBuf) -> FileIndex {
        let index = FileIndex {
            root: Some(root),
            ..FileIndex::default()
        };
        index.refresh();
        index
    }

    /// An index of exactly these paths (for tests and for callers that already know them).
    pub fn from_paths(paths: Vec<String>) -> FileIndex {
        let index = FileIndex::default();
        index.install(Paths::from_iter(paths));
        index
    }

    /// Walks the workspace again in the background (unless a walk is under way); the
    /// current paths keep answering until the new ones replace them.
    pub fn refresh(&self) {
        let Some(root) = self.root.clone() else {
            return;
        };
        if self.shared.walking.swap(true, Ordering::AcqRel) {
            return;
        }
        let shared = Arc::clone(&self.shared);
        let spawned = std::thread::Builder::new()
            .name("atto-file-index".to_owned())
            .spawn(move || {
                let paths = walk(&root);
                *shared.paths.lock().unwrap_or_else(PoisonError::into_inner) =
                    Some(Arc::new(paths));
                shared.walking.store(false, Ordering::Release);
            });
        // If the thread cannot start, `@` completion keeps what it had (or nothing).
        if spawned.is_err() {
            self.shared.walking.store(false, Ordering::Release);
        }
    }

    fn install(&self, paths: Paths) {
        *self
            .shared
            .paths
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(Arc::new(paths));
    }

    fn current(&self) -> Option<Arc<Paths>> {
        self.shared
            .paths
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Whether a walk has finished.
    pub fn ready(&self) -> bool {
        self.current().is_some()
    }

    /// How many paths the index holds.
    pub fn len(&self) -> usize {
        self.current().map_or(0, |p| p.len())
    }

    /// Whether the index holds no path (or has not finished its first walk).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Paths matching `query`, case-insensitively: those starting with it first, then those
    /// whose file name starts with it, then those containing it; shorter paths first within
    /// each; at most `MAX_ITEMS`.
    pub fn matches(&mut self, query: &str) -> Vec<String> {
        let Some(paths) = self.current() else {
            return Vec::new();
        };
        let query = query.to_lowercase();
        // Every hit of `query` contains the previous query when it extends it.
        let previous = self
            .last
            .take()
            .filter(|l| Arc::ptr_eq(&l.paths, &paths) && query.starts_with(l.query.as_str()));
        let mut best = Best::default();
        let mut hits = Vec::new();
        let mut consider = |i: u32| {
            let path = paths.get(i);
            if let Some(rank) = rank(path, &query) {
                hits.push(i);
                best.offer((rank, path.len(), i), &paths);
            }
        };
        match &previous {
            Some(p) => p.hits.iter().copied().for_each(&mut consider),
            None => (0..paths.len() as u32).for_each(&mut consider),
        }
        let found = best
            .0
            .iter()
            .map(|&(_, _, i)| paths.get(i).to_owned())
            .collect();
        self.last = Some(Narrowed { query, paths, hits });
        found
    }
}

/// The best `MAX_ITEMS` hits so far, in menu order: (rank, length, index), then path.
#[derive(Default)]
struct Best(Vec<(u8, usize, u32)>);

impl Best {
    fn offer(&mut self, hit: (u8, usize, u32), paths: &Paths) {
        let before = |a: &(u8, usize, u32), b: &(u8, usize, u32)| {
            (a.0, a.1, paths.get(a.2)) < (b.0, b.1, paths.get(b.2))
        };
        if self.0.len() == MAX_ITEMS && self.0.last().is_some_and(|last| !before(&hit, last)) {
            return;
        }
        let at = self.0.partition_point(|h| before(h, &hit));
        self.0.insert(at, hit);
        self.0.truncate(MAX_ITEMS);
    }
}

/// How well `path` matches `query` (already lowercase): 0 starts with it, 1 its file name
/// starts with it, 2 contains it.
fn rank(path: &str, query: &str) -> Option<u8> {
    if !path.is_ascii() {
        return rank_ascii(&path.to_lowercase(), query);
    }
    rank_ascii(path, query)
}

/// [`rank`] comparing ASCII letters without case (other bytes exactly).
fn rank_ascii(path: &str, query: &str) -> Option<u8> {
    let (p, q) = (path.as_bytes(), query.as_bytes());
    let starts = |s: &[u8]| s.len() >= q.len() && s[..q.len()].eq_ignore_ascii_case(q);
    if starts(p) {
        return Some(0);
    }
    let name = p.rsplit(|&b| b == b'/').next().unwrap_or(p);
    if starts(name) {
        return Some(1);
    }
    p.windows(q.len().max(1))
        .any(|w| w.eq_ignore_ascii_case(q))
        .then_some(2)
}

/// Relative paths of the files under `root`, in walk order, up to `MAX_INDEXED_FILES`.
fn walk(root: &Path) -> Paths {
    let walker = ignore::WalkBuilder::new(root)
        .hidden(true)
        .git_ignore(true)
        .require_git(false)
        .build();
    let files = walker
        .flatten()
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .filter_map(|e| {
            let rel = e.path().strip_prefix(root).ok()?;
            Some(rel.to_string_lossy().replace('\\', "/"))
        });
    Paths::from_iter(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index(paths: &[&str]) -> FileIndex {
        FileIndex::from_paths(paths.iter().map(|p| (*p).to_owned()).collect())
    }

    #[test]
    fn ranks_prefix_then_name_then_contains_shortest_first() {
        let mut i = index(&[
            "tests/main_test.rs",
            "src/main.rs",
            "main.rs",
            "docs/domain.md",
            "mainly/long/path.txt",
        ]);
        assert_eq!(
            i.matches("main"),
            [
                "main.rs",
                "mainly/long/path.txt",
                "src/main.rs",
                "tests/main_test.rs",
                "docs/domain.md"
            ]
        );
        assert_eq!(i.matches("MAIN.RS")[0], "main.rs");
    }

    #[test]
    fn narrowing_answers_as_a_fresh_search_does() {
        let paths: Vec<String> = (0..3000)
            .map(|n| format!("src/p{}/m{}/File{n}.py", n % 7, n % 13))
            .collect();
        let mut typed = FileIndex::from_paths(paths.clone());
        for q in [
            "", "f", "fi", "fil", "file1", "file12", "file1", "p3/m", "x",
        ] {
            let mut fresh = FileIndex::from_paths(paths.clone());
            assert_eq!(typed.matches(q), fresh.matches(q), "query {q:?}");
        }
    }

    #[test]
    fn non_ascii_paths_match_without_case() {
        let mut i = index(&["docs/Über.md", "src/uber.rs"]);
        assert_eq!(i.matches("über"), ["docs/Über.md"]);
    }

    #[test]
    fn keeps_the_best_few_of_many() {
        let paths: Vec<String> = (0..500).rev().map(|n| format!("f{n:03}")).collect();
        let mut i = FileIndex::from_paths(paths);
        let found = i.matches("f");
        assert_eq!(found.len(), MAX_ITEMS);
        assert_eq!(found[0], "f000");
        assert_eq!(found[MAX_ITEMS - 1], format!("f{:03}", MAX_ITEMS - 1));
    }
}
