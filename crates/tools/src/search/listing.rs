//! The files a whole walk of a directory found (see `for_each_file`), kept between calls so
//! that `glob` and `grep` in a large workspace need not walk it again while nothing was added,
//! removed or renamed in it.
//!
//! A listing is trusted only after a check that costs one `lstat` per directory, not per
//! file: adding, removing or renaming an entry changes its directory's modification time, and
//! every ignore file the walk could have read (`.gitignore`, `.ignore`, a repository's
//! `.git/info/exclude`, in the walked directories and above them) is checked by its own. A
//! directory modified within [`RACY`] of the walk may change again within one timestamp tick
//! unseen, so such a listing is not kept at all. What is not checked: the user's global git
//! excludes file, read when a walk starts (a change there shows at the next walk that is
//! not served from a listing). Symbolic links are kept as candidates and resolved again at
//! each use (their target can change without their directory changing). File contents are
//! never kept: `grep` reads them each time.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Mutex};
use std::time::{Duration, SystemTime};

/// How close to a walk a directory's modification counts as possibly unseen (the coarsest
/// common file timestamps tick every two seconds).
const RACY: Duration = Duration::from_secs(2);
/// Listings kept, one per walked directory.
const MAX_ROOTS: usize = 8;
/// A walk that found more files than this is not kept.
const MAX_FILES: usize = 2_000_000;
/// Ignore files a directory may hold, as the walk reads them.
const IGNORE_FILES: [&str; 2] = [".gitignore", ".ignore"];

/// What a listed path is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    File,
    /// A symbolic link: a file only if it resolves to one inside the workspace.
    Link,
}

/// The files of one whole walk, in walk order.
#[derive(Debug)]
pub(crate) struct Listing {
    /// Every path whose modification time vouches for the listing: the directories read and
    /// the ignore files that were there; `None` for one that was absent.
    checked: Vec<(PathBuf, Option<SystemTime>)>,
    /// The files' paths relative to the walked directory, one after another.
    paths: String,
    ends: Vec<usize>,
    kinds: Vec<Kind>,
}

impl Listing {
    /// The files, in walk order, relative to the walked directory.
    pub(crate) fn files(&self) -> impl Iterator<Item = (&Path, Kind)> {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts
            .zip(&self.ends)
            .zip(&self.kinds)
            .map(|((start, end), kind)| (Path::new(&self.paths[start..*end]), *kind))
    }

    /// Whether nothing the listing rests on changed since.
    fn holds(&self) -> bool {
        self.checked
            .iter()
            .all(|(path, seen)| modified(path) == *seen)
    }
}

/// A walk being recorded into a listing.
pub(crate) struct Recorder {
    root: PathBuf,
    started: SystemTime,
    listing: Listing,
    racy: bool,
}

impl Recorder {
    /// Before a walk of `root` starts: what is above it counts too (the walk reads the
    /// ignore files of every directory above `root`).
    pub(crate) fn new(root: &Path) -> Self {
        let mut recorder = Self {
            root: root.to_path_buf(),
            started: SystemTime::now(),
            listing: Listing {
                checked: Vec::new(),
                paths: String::new(),
                ends: Vec::new(),
                kinds: Vec::new(),
            },
            racy: false,
        };
        // Only their ignore files: other entries come and go above a workspace all the time.
        for dir in root.ancestors().skip(1) {
            for name in IGNORE_FILES {
                recorder.check(dir.join(name));
            }
            if dir.join(".git").exists() {
                recorder.check(dir.join(".git/info/exclude"));
            }
        }
        recorder
    }

    /// A directory the walk entered.
    pub(crate) fn dir(&mut self, dir: &Path) {
        self.check(dir.to_path_buf());
        for name in IGNORE_FILES {
            self.check_existing(dir.join(name));
        }
        if dir.join(".git").exists() {
            self.check(dir.join(".git/info/exclude"));
        }
    }

    /// A file (or a link) the walk yielded.
    pub(crate) fn file(&mut self, path: &Path, kind: Kind) {
        let rel = path.strip_prefix(&self.root).ok().and_then(Path::to_str);
        let Some(text) = rel.filter(|t| !t.is_empty()) else {
            // Not kept: a listing holds UTF-8 paths only.
            self.racy = true;
            return;
        };
        self.listing.paths.push_str(text);
        self.listing.ends.push(self.listing.paths.len());
        self.listing.kinds.push(kind);
    }

    fn check(&mut self, path: PathBuf) {
        let seen = modified(&path);
        self.note(seen);
        self.listing.checked.push((path, seen));
    }

    /// Only when it exists: creating it changes its directory, which is checked.
    fn check_existing(&mut self, path: PathBuf) {
        if let Some(seen) = modified(&path) {
            self.note(Some(seen));
            self.listing.checked.push((path, Some(seen)));
        }
    }

    fn note(&mut self, seen: Option<SystemTime>) {
        let settled = seen.is_none_or(|t| t + RACY < self.started);
        self.racy |= !settled;
    }

    /// Keeps the listing of a walk that ran to its end.
    pub(crate) fn keep(self) {
        if self.racy || self.listing.kinds.len() > MAX_FILES {
            forget(&self.root);
            return;
        }
        let mut kept = lock();
        if kept.len() >= MAX_ROOTS && !kept.contains_key(&self.root) {
            kept.clear();
        }
        kept.insert(self.root, Arc::new(self.listing));
    }
}

fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::symlink_metadata(path).ok()?.modified().ok()
}

type Kept = HashMap<PathBuf, Arc<Listing>>;

fn lock() -> std::sync::MutexGuard<'static, Kept> {
    static KEPT: LazyLock<Mutex<Kept>> = LazyLock::new(Mutex::default);
    KEPT.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The listing of `root`, when one is kept and nothing it rests on changed.
pub(crate) fn kept(root: &Path) -> Option<Arc<Listing>> {
    let listing = lock().get(root).cloned()?;
    if listing.holds() {
        Some(listing)
    } else {
        forget(root);
        None
    }
}

fn forget(root: &Path) {
    lock().remove(root);
}
