//! Recording a snapshot from the watcher's list of changed paths (see `watch`): the trees of
//! the last snapshot are edited along those paths only and written as new tree objects (see
//! `object`), so the cost follows what changed — the depth of each change and the bytes of the
//! changed files — rather than the size of the workspace. No index is read or written: at
//! 200,000 files, git's `update-index` and `write-tree` would each load a 17 MB index.
//!
//! git stays the judge of which new files a snapshot holds (`check-ignore`); the trees along
//! the changed paths come from `cat-file` once and are then kept in memory by object id, so a
//! process's later snapshots start no git process here at all. This module does not decide
//! when the watcher's answer is good enough (`watch`, `since` and `record` do), and never walks
//! the workspace: whatever it cannot settle from the changed paths alone (a directory where a
//! file was, a file where a directory was, many new files) sends the snapshot to a walk.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use crate::beneath::{Beneath, Type};
use crate::error::CheckpointError;
use crate::git::{Git, path_of};
use crate::index::Compared;
use crate::object::{self, ObjectError, Oid, Store, TreeEntry};
use crate::record::State;
use crate::{Checkpoints, walk};

/// Above this many new files, a walk settles them for less than naming each to git.
const MAX_NEW_FILES: usize = 64;
/// Tree entries kept in memory between snapshots (about 100 bytes each).
const MAX_CACHED_ENTRIES: usize = 50_000;

/// Which watcher named the changed paths.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Source {
    /// This process's own (see `watch`).
    Process,
    /// The watch daemon (see `daemon`).
    Daemon,
}

impl Source {
    /// How a snapshot's `scan` names it.
    pub(crate) fn label(self) -> &'static str {
        match self {
            Source::Process => "watcher",
            Source::Daemon => "watch daemon",
        }
    }
}

/// The workspace as a snapshot saw it.
#[derive(Debug, Clone)]
pub(crate) struct RecordedTree {
    pub(crate) tree: String,
    pub(crate) empty_dirs: Vec<Vec<u8>>,
    /// At least the bytes of its files, as the size cap counts them: exact after a walk, then
    /// raised by every file written since (what was there before is not subtracted). A
    /// snapshot that would pass the cap walks, and the walk counts exactly.
    pub(crate) bytes: u64,
}

/// What recording from the watcher's paths yields.
pub(crate) enum Watched {
    /// The workspace now, how many paths were looked at, and which watcher named them.
    Recorded(RecordedTree, usize, Source),
    /// The watcher cannot answer; walk, for this reason.
    Walk(String),
}

/// Tree objects read or written, by id: what they hold never changes, so they stay true for
/// any snapshot that shares them.
#[derive(Debug, Default)]
pub(crate) struct TreeCache {
    by_oid: HashMap<Oid, Vec<TreeEntry>>,
    entries: usize,
}

impl TreeCache {
    fn get(&self, oid: &Oid) -> Option<&Vec<TreeEntry>> {
        self.by_oid.get(oid)
    }

    fn insert(&mut self, oid: Oid, entries: Vec<TreeEntry>) {
        if self.entries + entries.len() > MAX_CACHED_ENTRIES {
            self.by_oid.clear();
            self.entries = 0;
        }
        self.entries += entries.len();
        if let Some(old) = self.by_oid.insert(oid, entries) {
            self.entries -= old.len();
        }
    }

    /// The tree at `dir` (`/`-separated, `""` for the root) below `root`.
    fn resolve(&self, root: Oid, dir: &[u8]) -> DirLookup {
        let mut oid = root;
        for name in components(dir) {
            let Some(entries) = self.get(&oid) else {
                return DirLookup::Unknown;
            };
            match entries.iter().find(|e| e.name == name) {
                Some(e) if e.is_tree() => oid = e.oid,
                _ => return DirLookup::Absent,
            }
        }
        if self.get(&oid).is_some() {
            DirLookup::Found(oid)
        } else {
            DirLookup::Unknown
        }
    }
}

/// Where a directory stands in a tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DirLookup {
    /// A tree, loaded.
    Found(Oid),
    /// Nothing, or something that is not a tree.
    Absent,
    /// Not known without reading a tree that is not loaded.
    Unknown,
}

/// What the base tree holds at a changed path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BaseEntry {
    /// A file or a symbolic link.
    File,
    /// Nothing.
    Nothing,
    /// A directory or a submodule.
    Other,
}

/// How many files an edit added to the base tree and removed from it, and the bytes of the
/// files it wrote.
#[derive(Debug, Clone, Copy, Default)]
struct Count {
    added: u64,
    removed: u64,
    bytes: u64,
}

/// A change to make to the base tree.
#[derive(Debug, Clone)]
enum Change {
    Set { mode: &'static [u8], oid: Oid },
    Remove,
}

/// Why recording from the changed paths stopped: walk instead, or fail the snapshot.
enum Fallback {
    Walk(String),
    Fail(CheckpointError),
}

impl From<CheckpointError> for Fallback {
    fn from(e: CheckpointError) -> Self {
        Fallback::Fail(e)
    }
}

/// What stands at a changed path; `None` for nothing there, or no directory above it (a
/// link standing for one holds nothing beneath the workspace).
fn kind_at(ws: &Beneath, path: &Path) -> Result<Option<Type>, Fallback> {
    match ws.lstat(path) {
        Ok(kind) => Ok(Some(kind)),
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
            ) =>
        {
            Ok(None)
        }
        Err(e) => Err(Fallback::Walk(format!(
            "a changed path could not be read: {e}"
        ))),
    }
}

/// New files: git says which no ignore rule covers (a few; many go to a walk); the
/// ignored ones are dropped.
fn drop_ignored(git: &Git, new_files: &mut Vec<(&Path, &[u8])>) -> Result<(), Fallback> {
    if new_files.len() > MAX_NEW_FILES {
        return Err(walk_because("too many new files to name"));
    }
    for name in ignored(git, new_files)? {
        new_files.retain(|(_, n)| *n != name.as_slice());
    }
    Ok(())
}

fn walk_because(why: &str) -> Fallback {
    Fallback::Walk(why.to_owned())
}

impl Checkpoints {
    /// The workspace from a watcher's list of changed paths — this process's own, or the
    /// watch daemon's (see `link`) — when one has a list and this handle's last snapshot (or
    /// the daemon's record) is what they changed.
    pub(crate) fn watched(&self, state: &mut State) -> Result<Watched, CheckpointError> {
        let (paths, source) = match self.changed(state) {
            Ok(found) => found,
            Err(why) => return Ok(Watched::Walk(why)),
        };
        let Some(base) = state.base.clone() else {
            return Ok(Watched::Walk("no snapshot to compare with".into()));
        };
        if paths.is_empty() {
            return Ok(Watched::Recorded(base, 0, source));
        }
        match self.edited(&mut state.trees, &base, &paths) {
            Ok((now, _)) => Ok(Watched::Recorded(now, paths.len(), source)),
            Err(Fallback::Walk(why)) => Ok(Watched::Walk(why)),
            Err(Fallback::Fail(e)) => Err(e),
        }
    }

    /// `base` with the workspace's content at `paths` (workspace-relative) edited in, whatever
    /// a watcher said: `Ok(Err(why))` when only a walk can tell.
    pub(crate) fn edited_at(
        &self,
        trees: &mut TreeCache,
        base: &RecordedTree,
        paths: &[PathBuf],
    ) -> Result<Result<RecordedTree, String>, CheckpointError> {
        match self.edited(trees, base, paths) {
            Ok((now, _)) => Ok(Ok(now)),
            Err(Fallback::Walk(why)) => Ok(Err(why)),
            Err(Fallback::Fail(e)) => Err(e),
        }
    }

    /// After a walk, the tree of the workspace from the private index's own tree (its cache
    /// tree, valid when it was written by `write-tree` or a commit) and the files the walk
    /// found to differ from the index or missing from it, edited in as the watcher's paths
    /// are; with how many files that tree holds. `None` when the index has no valid tree, or
    /// the walk met too many new files to list, or the edit needs a walk: git then updates the
    /// index.
    pub(crate) fn edited_index_tree(
        &self,
        trees: &mut TreeCache,
        compared: &Compared,
        empty_dirs: &[Vec<u8>],
    ) -> Result<Option<(String, Option<u64>)>, CheckpointError> {
        let Some(root) = compared.tree else {
            return Ok(None);
        };
        let new_files: &[Vec<u8>] = match (&compared.new_files, compared.unindexed) {
            (_, false) => &[],
            (Some(listed), true) => listed,
            (None, true) => return Ok(None),
        };
        let paths: Vec<PathBuf> = compared
            .changed
            .iter()
            .chain(new_files)
            .map(|p| path_of(p))
            .collect();
        let base = RecordedTree {
            tree: object::hex(&root),
            empty_dirs: empty_dirs.to_vec(),
            // The walk that compared held the workspace under the cap already.
            bytes: 0,
        };
        match self.edited(trees, &base, &paths) {
            Ok((now, count)) => {
                let files = (compared.entries + count.added).checked_sub(count.removed);
                Ok(Some((now.tree, files)))
            }
            Err(Fallback::Walk(_)) => Ok(None),
            Err(Fallback::Fail(e)) => Err(e),
        }
    }

    /// The base tree's id, with the trees along `dirs` loaded.
    fn load_base(
        &self,
        trees: &mut TreeCache,
        base: &RecordedTree,
        dirs: &BTreeSet<Vec<u8>>,
    ) -> Result<Oid, Fallback> {
        let root = object::parse_hex(&base.tree).ok_or_else(|| CheckpointError::Corrupt {
            what: format!("tree id {:?} of the last snapshot", base.tree),
            side: self.git.side().to_path_buf(),
        })?;
        load_trees(&self.git, trees, root, dirs)?;
        if trees.get(&root).is_none() {
            return Err(walk_because("the base tree is not in the side repository"));
        }
        Ok(root)
    }

    /// `base` with the workspace's content at `paths` (workspace-relative), and how many
    /// files that added and removed.
    fn edited(
        &self,
        trees: &mut TreeCache,
        base: &RecordedTree,
        paths: &[PathBuf],
    ) -> Result<(RecordedTree, Count), Fallback> {
        let names: Vec<Vec<u8>> = paths.iter().map(|p| walk::relative_bytes(p)).collect();
        let dirs = ancestors(&names);
        let root = self.load_base(trees, base, &dirs)?;
        let mut count = Count::default();

        let store = Store::new(self.git.side());
        let ws =
            Beneath::open(&self.workspace).map_err(|e| CheckpointError::io(&self.workspace, e))?;
        let mut changes: BTreeMap<Vec<u8>, Change> = BTreeMap::new();
        let mut new_files: Vec<(&Path, &[u8])> = Vec::new();
        let mut seen: BTreeSet<&[u8]> = BTreeSet::new();
        for (path, name) in paths.iter().zip(&names) {
            if !seen.insert(name) {
                continue;
            }
            let held = held_at(trees, root, name);
            let kind = kind_at(&ws, path)?;
            match (held, kind) {
                (BaseEntry::Other, _) => {
                    return Err(walk_because("a changed path was a directory"));
                }
                (_, Some(Type::Dir)) => {
                    return Err(walk_because("a directory stands at a changed path"));
                }
                (_, Some(Type::Other)) => {
                    return Err(walk_because("a changed path is neither a file nor a link"));
                }
                (BaseEntry::File, None) => {
                    count.removed += 1;
                    changes.insert(name.clone(), Change::Remove);
                }
                // Created and removed since: nothing to record.
                (BaseEntry::Nothing, None) => {}
                (BaseEntry::File, Some(kind)) => {
                    let cap = |bytes| self.within_cap(base, &mut count, bytes);
                    changes.insert(name.clone(), blob(&store, &ws, path, kind, cap)?);
                }
                (BaseEntry::Nothing, Some(_)) => new_files.push((path.as_path(), name.as_slice())),
            }
        }
        drop_ignored(&self.git, &mut new_files)?;
        for (path, name) in new_files {
            match ws.lstat(path) {
                Ok(kind @ (Type::File { .. } | Type::Link)) => {
                    count.added += 1;
                    let cap = |bytes| self.within_cap(base, &mut count, bytes);
                    changes.insert(name.to_vec(), blob(&store, &ws, path, kind, cap)?);
                }
                _ => return Err(walk_because("a new file changed again while it was read")),
            }
        }
        if changes.is_empty() {
            return Ok((base.clone(), count));
        }
        let listed: Vec<(&[u8], &Change)> =
            changes.iter().map(|(k, v)| (k.as_slice(), v)).collect();
        let tree = match edit(&store, trees, Some(root), &listed)? {
            Some(oid) => oid,
            None => store.write("tree", b"").map_err(object_stop)?,
        };
        let empty_dirs = self.empty_dirs_after(trees, base, tree, &dirs)?;
        let now = RecordedTree {
            tree: object::hex(&tree),
            empty_dirs,
            bytes: base.bytes.saturating_add(count.bytes),
        };
        Ok((now, count))
    }

    /// Counts a file about to be stored (`bytes` long) against the size cap: a snapshot that might
    /// pass it walks instead, which counts exactly and refuses.
    fn within_cap(
        &self,
        base: &RecordedTree,
        count: &mut Count,
        bytes: u64,
    ) -> Result<(), Fallback> {
        count.bytes = count.bytes.saturating_add(bytes);
        if base.bytes.saturating_add(count.bytes) > self.limits.max_workspace_bytes {
            return Err(walk_because(
                "the files written since the last walk may pass the size cap",
            ));
        }
        Ok(())
    }

    /// The empty directories once files below `dirs` (the directories above the changed
    /// paths) were written or removed: no directory was created or removed, or the watcher
    /// would have said so. Only those directories can have changed: each is empty when it is
    /// still there and the new tree holds nothing in it.
    fn empty_dirs_after(
        &self,
        trees: &TreeCache,
        base: &RecordedTree,
        tree: Oid,
        dirs: &BTreeSet<Vec<u8>>,
    ) -> Result<Vec<Vec<u8>>, Fallback> {
        let mut empty: BTreeSet<Vec<u8>> = base.empty_dirs.iter().cloned().collect();
        for dir in dirs.iter().filter(|d| !d.is_empty()) {
            let held = match trees.resolve(tree, dir) {
                DirLookup::Found(_) => true,
                DirLookup::Absent => false,
                DirLookup::Unknown => return Err(walk_because("a new tree was not kept")),
            };
            let on_disk = self.workspace.join(path_of(dir)).is_dir();
            if on_disk && !held {
                empty.insert(dir.clone());
            } else {
                empty.remove(dir);
            }
        }
        Ok(empty.into_iter().collect())
    }
}

/// What an object that could not be written means for the snapshot.
fn object_stop(e: ObjectError) -> Fallback {
    match e {
        ObjectError::Store(path, source) => Fallback::Fail(CheckpointError::io(&path, source)),
        // The file went or changed as it was read: the walk sees it as it settled.
        ObjectError::Read(path, source) => Fallback::Walk(format!(
            "a changed file could not be read ({}: {source})",
            path.display()
        )),
        ObjectError::Moving(path) => Fallback::Walk(format!(
            "a changed file was written to as it was read ({})",
            path.display()
        )),
        ObjectError::Collision(path) => Fallback::Fail(CheckpointError::io(
            &path,
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "its content is a SHA-1 collision attack, which git refuses to store; \
                 no snapshot was taken",
            ),
        )),
    }
}

/// The blob the file or symbolic link at workspace path `rel` holds (`kind` as `lstat` saw
/// it), written to the store once `cap` accepted its size. The file is
/// opened beneath the workspace without following a link, and its mode read from the opened
/// descriptor: a link swapped in after the `lstat` is not followed but sends the snapshot to
/// a walk, which looks again.
fn blob(
    store: &Store,
    ws: &Beneath,
    rel: &Path,
    kind: Type,
    cap: impl FnOnce(u64) -> Result<(), Fallback>,
) -> Result<Change, Fallback> {
    let changed = |e: std::io::Error| {
        Fallback::Walk(format!(
            "a changed path changed as it was read ({}: {e})",
            rel.display()
        ))
    };
    if kind == Type::Link {
        let target = ws.read_link(rel).map_err(changed)?;
        let oid = store.write("blob", &target).map_err(object_stop)?;
        cap(0)?;
        return Ok(Change::Set {
            mode: object::MODE_LINK,
            oid,
        });
    }
    let (file, kind) = ws.open_file(rel).map_err(changed)?;
    cap(file.metadata().map_err(changed)?.len())?;
    let oid = store.write_file(file, rel).map_err(object_stop)?;
    let mode = match kind {
        Type::File { executable: true } => object::MODE_EXEC,
        _ => object::MODE_FILE,
    };
    Ok(Change::Set { mode, oid })
}

/// The `/`-separated components of a relative path (none for `""`).
fn components(path: &[u8]) -> impl Iterator<Item = &[u8]> {
    path.split(|b| *b == b'/').filter(|c| !c.is_empty())
}

/// The directory holding `path`: `""` for the root.
fn parent(path: &[u8]) -> &[u8] {
    path.iter()
        .rposition(|b| *b == b'/')
        .map_or(&[][..], |slash| &path[..slash])
}

/// Every directory above any of `names`, the root (`""`) included.
fn ancestors(names: &[Vec<u8>]) -> BTreeSet<Vec<u8>> {
    let mut dirs = BTreeSet::from([Vec::new()]);
    for name in names {
        let mut dir = parent(name);
        while !dir.is_empty() && dirs.insert(dir.to_vec()) {
            dir = parent(dir);
        }
    }
    dirs
}

/// What the tree `root` holds at `name`, its directory being loaded (or absent).
fn held_at(trees: &TreeCache, root: Oid, name: &[u8]) -> BaseEntry {
    let DirLookup::Found(dir) = trees.resolve(root, parent(name)) else {
        return BaseEntry::Nothing;
    };
    let leaf = name.rsplit(|b| *b == b'/').next().unwrap_or(name);
    match trees
        .get(&dir)
        .and_then(|entries| entries.iter().find(|e| e.name == leaf))
    {
        Some(e) if e.is_blob() => BaseEntry::File,
        Some(_) => BaseEntry::Other,
        None => BaseEntry::Nothing,
    }
}

/// Makes sure every tree at `dirs` below `root` that exists is in `trees`: the ones not kept
/// already are read in one `cat-file` process.
fn load_trees(
    git: &Git,
    trees: &mut TreeCache,
    root: Oid,
    dirs: &BTreeSet<Vec<u8>>,
) -> Result<(), Fallback> {
    let root_hex = object::hex(&root);
    let specs: Vec<Vec<u8>> = dirs
        .iter()
        .filter(|dir| trees.resolve(root, dir) == DirLookup::Unknown)
        .map(|dir| {
            let mut spec = root_hex.clone().into_bytes();
            if !dir.is_empty() {
                spec.push(b':');
                spec.extend_from_slice(dir);
            }
            spec
        })
        .collect();
    if specs.is_empty() {
        return Ok(());
    }
    if specs.iter().any(|s| s.contains(&b'\n')) {
        return Err(walk_because("a changed path holds a newline"));
    }
    let input: Vec<u8> = specs
        .iter()
        .flat_map(|s| s.iter().copied().chain([b'\n']))
        .collect();
    let out = git.run_with_input(&["cat-file", "--batch"], Some(&input))?;
    let corrupt = || {
        Fallback::Fail(CheckpointError::Corrupt {
            what: "cat-file --batch output".into(),
            side: git.side().to_path_buf(),
        })
    };
    let mut rest = out.as_slice();
    for spec in &specs {
        let end = rest.iter().position(|b| *b == b'\n').ok_or_else(corrupt)?;
        let head = &rest[..end];
        rest = &rest[end + 1..];
        if head.strip_suffix(b" missing") == Some(spec.as_slice()) {
            continue;
        }
        let mut words = head.split(|b| *b == b' ');
        let (Some(oid), Some(kind), Some(size), None) =
            (words.next(), words.next(), words.next(), words.next())
        else {
            return Err(corrupt());
        };
        let oid = std::str::from_utf8(oid)
            .ok()
            .and_then(object::parse_hex)
            .ok_or_else(corrupt)?;
        let size: usize = std::str::from_utf8(size)
            .ok()
            .and_then(|s| s.parse().ok())
            .ok_or_else(corrupt)?;
        let body = rest.get(..size).ok_or_else(corrupt)?;
        if rest.get(size) != Some(&b'\n') {
            return Err(corrupt());
        }
        rest = &rest[size + 1..];
        if kind == b"tree" {
            trees.insert(oid, object::parse_tree(body).ok_or_else(corrupt)?);
        }
    }
    Ok(())
}

/// Which of the new files (workspace path, `/`-separated name) an ignore rule covers, as git
/// decides (`.gitignore` files, the side repository's `info/exclude`; never the user's own
/// excludes file), in one process.
fn ignored(git: &Git, new_files: &[(&Path, &[u8])]) -> Result<Vec<Vec<u8>>, Fallback> {
    if new_files.is_empty() {
        return Ok(Vec::new());
    }
    let input: Vec<u8> = new_files
        .iter()
        .flat_map(|(_, name)| name.iter().copied().chain([0]))
        .collect();
    // Exit status 1: none is ignored.
    let out = git.run_with_input_allowing(
        &["check-ignore", "--no-index", "-z", "--stdin"],
        Some(&input),
        &[1],
    )?;
    Ok(crate::git::split_nul_bytes(&out)
        .into_iter()
        .map(<[u8]>::to_vec)
        .collect())
}

/// `tree` (`None`: an empty one) with `changes` (paths relative to it, sorted) made; `None`
/// when nothing is left in it. New trees are written to `store` and kept in `trees`.
fn edit(
    store: &Store,
    trees: &mut TreeCache,
    tree: Option<Oid>,
    changes: &[(&[u8], &Change)],
) -> Result<Option<Oid>, Fallback> {
    let mut entries = match tree {
        Some(oid) => trees
            .get(&oid)
            .cloned()
            .ok_or_else(|| walk_because("a tree above a changed path was not read"))?,
        None => Vec::new(),
    };
    let mut i = 0;
    while i < changes.len() {
        let (path, change) = changes[i];
        let Some(slash) = path.iter().position(|b| *b == b'/') else {
            entries.retain(|e| e.name != path);
            if let Change::Set { mode, oid } = change {
                entries.push(TreeEntry {
                    mode: mode.to_vec(),
                    name: path.to_vec(),
                    oid: *oid,
                });
            }
            i += 1;
            continue;
        };
        // Every change below the directory `name` (sorted, so they are next to each other).
        let name = &path[..slash];
        let below = |p: &[u8]| p.len() > slash && p[..slash] == *name && p[slash] == b'/';
        let end = i + changes[i..].iter().take_while(|(p, _)| below(p)).count();
        let inner: Vec<(&[u8], &Change)> = changes[i..end]
            .iter()
            .map(|(p, c)| (&p[slash + 1..], *c))
            .collect();
        i = end;
        let child = match entries.iter().position(|e| e.name == name) {
            Some(at) if entries[at].is_tree() => Some(entries.remove(at).oid),
            Some(_) => {
                return Err(walk_because(
                    "a file or submodule stands where a changed path's directory is",
                ));
            }
            None => None,
        };
        if let Some(oid) = edit(store, trees, child, &inner)? {
            entries.push(TreeEntry {
                mode: object::MODE_TREE.to_vec(),
                name: name.to_vec(),
                oid,
            });
        }
    }
    if entries.is_empty() {
        return Ok(None);
    }
    let data = object::format_tree(&mut entries);
    let oid = store.write("tree", &data).map_err(object_stop)?;
    trees.insert(oid, entries);
    Ok(Some(oid))
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    /// The `lstat` saw a file; by the time it is opened a link to a file outside stands there.
    #[test]
    fn a_link_swapped_in_after_the_check_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let side = dir.path().join("side.git");
        std::fs::create_dir_all(side.join("objects")).unwrap();
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::write(ws.join("a.txt"), "inside").unwrap();
        std::fs::write(dir.path().join("secret"), "outside").unwrap();
        let beneath = Beneath::open(&ws).unwrap();
        let rel = Path::new("a.txt");
        let checked = beneath.lstat(rel).unwrap();
        std::fs::remove_file(ws.join("a.txt")).unwrap();
        std::os::unix::fs::symlink(dir.path().join("secret"), ws.join("a.txt")).unwrap();

        let store = Store::new(&side);
        let stored = blob(&store, &beneath, rel, checked, |_| Ok(()));
        assert!(
            matches!(stored, Err(Fallback::Walk(_))),
            "re-read by a walk"
        );
        let stored_any = std::fs::read_dir(side.join("objects")).unwrap().next();
        assert!(stored_any.is_none(), "nothing was stored");
    }
}
