//! Reading a git index file, one entry at a time, without git: what `seed` checks before
//! copying the user's index, and what a process's first walk compares every file's stat data
//! with, so that git is then asked about the files that differ instead of scanning them all
//! again (`Compare`), and the tree the index records for all its entries (the root of its
//! cache tree), which a snapshot can edit instead of having git load the index. Versions 2, 3
//! and 4 (path prefix compression); SHA-1 only. Nothing here writes an index: git does.
//! Memory is bounded whatever the file says: entries are read one at a time (a header
//! may claim any count), and a path longer than `MAX_PATH` makes the index malformed.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use crate::fingerprint::Stat;

/// Entry flags (see git's `Documentation/gitformat-index.txt`).
const ASSUME_VALID: u16 = 0x8000;
const EXTENDED: u16 = 0x4000;
const STAGE: u16 = 0x3000;
const NAME_MASK: u16 = 0x0fff;
const SKIP_WORKTREE: u16 = 0x4000;
const INTENT_TO_ADD: u16 = 0x2000;
const GITLINK: u32 = 0o160_000;
const TYPE_MASK: u32 = 0o170_000;
/// Fixed part of an entry: ten 32-bit stat and mode fields, a SHA-1, 16 bits of flags.
const FIXED: usize = 40 + 20 + 2;
/// The longest path an entry may have (after a version 4 prefix): far above what any
/// filesystem takes, and small enough that a hostile index cannot make the reader hold
/// more. An entry past it is malformed.
const MAX_PATH: usize = 64 << 10;

/// One index entry: its path and the stat data git recorded (truncated to 32 bits, as git
/// keeps it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct IndexEntry {
    pub(crate) path: Vec<u8>,
    ctime: (u32, u32),
    mtime: (u32, u32),
    ino: u32,
    mode: u32,
    size: u32,
    /// Conflicted, assume-unchanged, skip-worktree, intent-to-add or a submodule: an entry
    /// `git add -A` would not treat as a plain file.
    pub(crate) unusual: bool,
}

/// Reads entries in order; `None` from [`Reader::next_entry`] ends them, and
/// [`Reader::finish`] says whether the rest of the file was sound.
pub(crate) struct Reader<R> {
    r: R,
    version: u32,
    /// How many entries the header says there are, and how many are left to read.
    total: u32,
    left: u32,
    /// The previous path (version 4 names are relative to it).
    path: Vec<u8>,
    failed: bool,
}

impl Reader<BufReader<std::fs::File>> {
    pub(crate) fn open(path: &Path) -> Option<Self> {
        let file = std::fs::File::open(path).ok()?;
        Reader::new(BufReader::with_capacity(1 << 16, file))
    }
}

impl<R: BufRead> Reader<R> {
    pub(crate) fn new(mut r: R) -> Option<Self> {
        let mut head = [0u8; 12];
        r.read_exact(&mut head).ok()?;
        if &head[..4] != b"DIRC" {
            return None;
        }
        let version = u32::from_be_bytes([head[4], head[5], head[6], head[7]]);
        let left = u32::from_be_bytes([head[8], head[9], head[10], head[11]]);
        (2..=4).contains(&version).then_some(Self {
            r,
            version,
            total: left,
            left,
            path: Vec::new(),
            failed: false,
        })
    }

    /// The next entry; `None` at the end or on a malformed one ([`Reader::finish`] tells).
    pub(crate) fn next_entry(&mut self) -> Option<IndexEntry> {
        if self.left == 0 || self.failed {
            return None;
        }
        let entry = self.read_entry();
        match entry {
            Some(_) => self.left -= 1,
            None => self.failed = true,
        }
        entry
    }

    fn read_entry(&mut self) -> Option<IndexEntry> {
        let mut fixed = [0u8; FIXED];
        self.r.read_exact(&mut fixed).ok()?;
        let word =
            |i: usize| u32::from_be_bytes([fixed[i], fixed[i + 1], fixed[i + 2], fixed[i + 3]]);
        let mode = word(24);
        let flags = u16::from_be_bytes([fixed[60], fixed[61]]);
        let mut unusual = flags & (ASSUME_VALID | STAGE) != 0 || mode & TYPE_MASK == GITLINK;
        let mut read = FIXED;
        if flags & EXTENDED != 0 {
            let mut extended = [0u8; 2];
            if self.version < 3 {
                return None;
            }
            self.r.read_exact(&mut extended).ok()?;
            unusual |= u16::from_be_bytes(extended) & (SKIP_WORKTREE | INTENT_TO_ADD) != 0;
            read += 2;
        }
        if self.version == 4 {
            let strip = usize::try_from(varint(&mut self.r)?).ok()?;
            let keep = self.path.len().checked_sub(strip)?;
            self.path.truncate(keep);
        } else {
            self.path.clear();
        }
        let mut rest = Vec::new();
        let most = u64::try_from(MAX_PATH.saturating_sub(self.path.len()) + 1).ok()?;
        if (&mut self.r).take(most).read_until(0, &mut rest).ok()? == 0 || rest.pop() != Some(0) {
            return None;
        }
        if self.version != 4 {
            // Entries are NUL-padded to a multiple of eight bytes (at least one NUL).
            let len = read + rest.len() + 1;
            let padding = (8 - len % 8) % 8;
            if padding > 0 {
                self.r.read_exact(&mut [0u8; 8][..padding]).ok()?;
            }
            let stated = usize::from(flags & NAME_MASK);
            if stated != usize::from(NAME_MASK) && stated != rest.len() {
                return None;
            }
        }
        self.path.extend_from_slice(&rest);
        Some(IndexEntry {
            path: self.path.clone(),
            ctime: (word(0), word(4)),
            mtime: (word(8), word(12)),
            ino: word(20),
            mode,
            size: word(36),
            unusual,
        })
    }

    /// Reads the rest: whether every entry was read and the extensions are ones the side
    /// repository can use. A split index (`link`) needs files the side repository does not
    /// have; a sparse index (`sdir`) holds directories where files should be.
    pub(crate) fn finish(self) -> bool {
        self.finish_with_tree().is_some()
    }

    /// As [`Reader::finish`], `None` standing for false; when sound, also the tree git
    /// recorded for all the entries (the root of the `TREE` extension), if it is valid.
    pub(crate) fn finish_with_tree(mut self) -> Option<Option<[u8; 20]>> {
        let total = self.total;
        while self.next_entry().is_some() {}
        if self.failed {
            return None;
        }
        let mut rest = Vec::new();
        self.r.read_to_end(&mut rest).ok()?;
        let mut at = 0;
        let mut root = None;
        while rest.len() >= at + 8 + 20 {
            let signature = &rest[at..at + 4];
            if signature == b"link" || signature == b"sdir" {
                return None;
            }
            let size = u32::from_be_bytes([rest[at + 4], rest[at + 5], rest[at + 6], rest[at + 7]]);
            let size = usize::try_from(size).unwrap_or(usize::MAX / 2);
            if signature == b"TREE" {
                root = rest
                    .get(at + 8..at.saturating_add(8).saturating_add(size))
                    .and_then(|data| root_tree(data, total));
            }
            at = at.saturating_add(8).saturating_add(size);
        }
        (rest.len() == at + 20).then_some(root)
    }
}

/// The root of a `TREE` extension (git's cache tree): the tree of every entry, when git
/// knows it (`entries` of them; an invalidated root says -1).
fn root_tree(data: &[u8], entries: u32) -> Option<[u8; 20]> {
    // The root node: an empty path, NUL, "<entry count> <subtree count>\n", the tree id.
    let (&0, rest) = data.split_first()? else {
        return None;
    };
    let newline = rest.iter().position(|b| *b == b'\n')?;
    let counts = std::str::from_utf8(&rest[..newline]).ok()?;
    let count: i64 = counts.split(' ').next()?.parse().ok()?;
    if count != i64::from(entries) {
        return None;
    }
    rest.get(newline + 1..newline + 21)?.try_into().ok()
}

fn varint(r: &mut impl Read) -> Option<u64> {
    // git's offset encoding: each continuation adds one before shifting.
    let mut byte = [0u8; 1];
    r.read_exact(&mut byte).ok()?;
    let mut value = u64::from(byte[0] & 0x7f);
    while byte[0] & 0x80 != 0 {
        r.read_exact(&mut byte).ok()?;
        value = value.checked_add(1)?.checked_shl(7)? | u64::from(byte[0] & 0x7f);
    }
    Some(value)
}

/// Whether git, seeing `stat` for `entry`'s file, would take the entry as up to date without
/// reading the file: same type and executable bit, size, mtime, ctime and inode (as git
/// truncates them), and the entry not racily clean — git's rule: its file was not touched
/// at or after the moment the index file was written (`index_mtime_ns`, the index's own
/// mtime; both come from the same filesystem clock, so a write in the same coarse tick as
/// the index counts as racy).
pub(crate) fn up_to_date(entry: &IndexEntry, stat: &Stat, index_mtime_ns: i128) -> bool {
    let split = |ns: i128| {
        let secs = ns.div_euclid(1_000_000_000);
        // git keeps the low 32 bits of the seconds (`(unsigned int)st_mtime`).
        (
            (secs & 0xffff_ffff) as u32,
            ns.rem_euclid(1_000_000_000) as u32,
        )
    };
    let entry_ns = |(s, n): (u32, u32)| i128::from(s) * 1_000_000_000 + i128::from(n);
    let racy = entry_ns(entry.mtime).max(entry_ns(entry.ctime)) >= index_mtime_ns;
    let file_mode = match stat.mode & TYPE_MASK {
        0o100_000 if stat.mode & 0o100 != 0 => 0o100_755,
        0o100_000 => 0o100_644,
        0o120_000 => 0o120_000,
        _ => return false,
    };
    !racy
        && entry.mode == file_mode
        && entry.size == (stat.size & 0xffff_ffff) as u32
        && entry.mtime == split(stat.mtime_ns)
        && entry.ctime == split(stat.ctime_ns)
        && entry.ino == (stat.ino & 0xffff_ffff) as u32
}

/// Compares the files of a walk, met in git's path order, with the entries of an index:
/// which entries git would have to look at again (their file changed, went, or was not seen
/// by the walk), so that a snapshot can name those paths to git instead of letting it scan
/// the workspace a second time. Files the index lacks are left to git (`ls-files --others`),
/// which alone decides which of them no ignore rule covers; the comparison only says whether
/// the walk met any.
pub(crate) struct Compare {
    reader: Reader<BufReader<std::fs::File>>,
    pending: Option<IndexEntry>,
    index_mtime_ns: i128,
    changed: Vec<Vec<u8>>,
    limit: usize,
    unusable: bool,
    unindexed: bool,
    /// The files met that the index lacks, while there are few.
    new_files: Option<Vec<Vec<u8>>>,
    entries: u64,
}

/// How many files the index lacks a comparison lists by name.
const MAX_NEW_FILES: usize = 64;

/// What a finished comparison found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Compared {
    /// The index entries that differ from the workspace.
    pub(crate) changed: Vec<Vec<u8>>,
    /// Whether the walk met files the index lacks. The walk honours only `.gitignore` files,
    /// and git ignores at least what they say, so when it met none, git would find no
    /// untracked file either.
    pub(crate) unindexed: bool,
    /// Those files, when there were few (`None`: too many to list).
    pub(crate) new_files: Option<Vec<Vec<u8>>>,
    /// How many entries the index holds.
    pub(crate) entries: u64,
    /// The tree of every entry of the index, when it says (its cache tree is valid).
    pub(crate) tree: Option<[u8; 20]>,
}

impl Compare {
    /// Compares with the index at `path`; gives up (see [`Compare::finish`]) past `limit`
    /// changed entries.
    pub(crate) fn open(path: &Path, limit: usize) -> Option<Self> {
        let modified = std::fs::metadata(path).ok()?.modified().ok()?;
        let index_mtime_ns = modified
            .duration_since(std::time::UNIX_EPOCH)
            .ok()
            .and_then(|d| i128::try_from(d.as_nanos()).ok())?;
        let mut reader = Reader::open(path)?;
        let entries = u64::from(reader.total);
        let pending = reader.next_entry();
        Some(Self {
            reader,
            pending,
            index_mtime_ns,
            changed: Vec::new(),
            limit,
            unusable: false,
            unindexed: false,
            new_files: Some(Vec::new()),
            entries,
        })
    }

    /// A file of the walk, at `path` (workspace-relative bytes), with its stat data when it
    /// could be read. Calls come in git's path order.
    pub(crate) fn file(&mut self, path: &[u8], stat: Option<&Stat>) {
        while let Some(entry) = &self.pending {
            if entry.unusual {
                self.unusable = true;
            }
            match entry.path.as_slice().cmp(path) {
                std::cmp::Ordering::Less => {
                    let gone = entry.path.clone();
                    self.note(gone);
                    self.pending = self.reader.next_entry();
                }
                std::cmp::Ordering::Equal => {
                    let fresh = stat.is_some_and(|s| up_to_date(entry, s, self.index_mtime_ns));
                    if !fresh {
                        self.note(path.to_vec());
                    }
                    self.pending = self.reader.next_entry();
                    return;
                }
                std::cmp::Ordering::Greater => break,
            }
        }
        self.unindexed = true;
        if let Some(list) = &mut self.new_files {
            if list.len() < MAX_NEW_FILES {
                list.push(path.to_vec());
            } else {
                self.new_files = None;
            }
        }
    }

    fn note(&mut self, path: Vec<u8>) {
        if self.changed.len() <= self.limit {
            self.changed.push(path);
        }
    }

    /// The index entries that differ from the workspace; `None` when the index could not be
    /// read through, holds entries `add -A` would treat differently, or more than the limit
    /// changed (a scan by git is then the cheaper way).
    pub(crate) fn finish(mut self) -> Option<Compared> {
        while let Some(entry) = self.pending.take() {
            self.unusable |= entry.unusual;
            self.note(entry.path);
            self.pending = self.reader.next_entry();
        }
        let tree = self.reader.finish_with_tree()?;
        (!self.unusable && self.changed.len() <= self.limit).then_some(Compared {
            changed: self.changed,
            unindexed: self.unindexed,
            new_files: self.new_files,
            entries: self.entries,
            tree,
        })
    }
}

#[cfg(test)]
mod tests {
    use std::process::Command;

    use super::*;

    fn git(dir: &Path, args: &[&str]) -> String {
        let out = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}");
        String::from_utf8(out.stdout).unwrap()
    }

    #[test]
    fn entries_read_back_as_git_lists_them_in_every_version() {
        let dir = tempfile::tempdir().unwrap();
        git(dir.path(), &["init", "-q"]);
        for name in [
            "a.txt",
            "a/b",
            "a-b",
            "src/deep/c.rs",
            "src/deep/cc.rs",
            "zz",
        ] {
            let path = dir.path().join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, name).unwrap();
        }
        git(dir.path(), &["add", "-A"]);
        let listed = git(dir.path(), &["ls-files"]);
        for version in ["2", "3", "4"] {
            git(dir.path(), &["update-index", "--index-version", version]);
            let mut reader = Reader::open(&dir.path().join(".git/index")).unwrap();
            let mut paths = String::new();
            while let Some(e) = reader.next_entry() {
                paths.push_str(std::str::from_utf8(&e.path).unwrap());
                paths.push('\n');
            }
            assert!(reader.finish(), "version {version}");
            assert_eq!(paths, listed, "version {version}");
        }
    }

    #[test]
    fn the_index_tree_is_read_when_valid_and_not_when_a_change_is_staged() {
        let dir = tempfile::tempdir().unwrap();
        git(dir.path(), &["init", "-q"]);
        for name in ["a.txt", "src/deep/c.rs", "src/d.rs"] {
            let path = dir.path().join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, name).unwrap();
        }
        git(dir.path(), &["add", "-A"]);
        git(dir.path(), &["commit", "-qm", "x"]);
        let tree = git(dir.path(), &["rev-parse", "HEAD^{tree}"]);
        let index = dir.path().join(".git/index");
        let read = || Reader::open(&index).unwrap().finish_with_tree().unwrap();
        let hex: String = read().unwrap().iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hex, tree.trim());
        std::fs::write(dir.path().join("src/d.rs"), "staged").unwrap();
        git(dir.path(), &["add", "src/d.rs"]);
        assert_eq!(read(), None);
    }

    #[test]
    fn a_settled_file_is_up_to_date_until_it_changes() {
        let dir = tempfile::tempdir().unwrap();
        git(dir.path(), &["init", "-q"]);
        let file = dir.path().join("f.txt");
        std::fs::write(&file, "one").unwrap();
        git(dir.path(), &["add", "-A"]);
        let index = dir.path().join(".git/index");
        let entry = || Reader::open(&index).unwrap().next_entry().unwrap();
        let stat = || Stat::of(&std::fs::symlink_metadata(&file).unwrap()).unwrap();
        let settled = i128::MAX / 2;
        assert!(up_to_date(&entry(), &stat(), settled));
        // Touched in the same clock tick as the index was written: git cannot vouch for it.
        let touched = stat().mtime_ns.max(stat().ctime_ns);
        assert!(!up_to_date(&entry(), &stat(), touched));
        assert!(up_to_date(&entry(), &stat(), touched + 1));
        std::fs::write(&file, "two!").unwrap();
        assert!(!up_to_date(&entry(), &stat(), settled));
    }

    /// An index stream: the header, `entries` (each a v4 entry adding `name` to the
    /// previous path), then `tail` repeated up to `len` bytes in all, counting what is read.
    struct Hostile {
        head: Vec<u8>,
        fill: u8,
        len: usize,
        read: std::rc::Rc<std::cell::Cell<usize>>,
    }

    impl Read for Hostile {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let at = self.read.get();
            if at >= self.len {
                return Ok(0);
            }
            let n = buf.len().min(self.len - at);
            for (i, b) in buf[..n].iter_mut().enumerate() {
                *b = self.head.get(at + i).copied().unwrap_or(self.fill);
            }
            self.read.set(at + n);
            Ok(n)
        }
    }

    fn header(version: u32, entries: u32) -> Vec<u8> {
        let mut head = b"DIRC".to_vec();
        head.extend_from_slice(&version.to_be_bytes());
        head.extend_from_slice(&entries.to_be_bytes());
        head
    }

    #[test]
    fn a_header_claiming_a_gigabyte_of_entries_is_refused_at_the_end_of_the_bytes() {
        // 2^24 entries of at least 64 bytes each: a 1 GB index, in a 12-byte file.
        let head = header(2, 1 << 24);
        assert!(!crate::seed::usable_index(&head[..]));
        let mut reader = Reader::new(&head[..]).unwrap();
        assert_eq!(reader.next_entry(), None);
        assert_eq!(reader.finish_with_tree(), None);
    }

    #[test]
    fn a_path_with_no_end_is_refused_at_the_path_limit_without_reading_on() {
        let read = std::rc::Rc::new(std::cell::Cell::new(0));
        let mut head = header(2, 1);
        head.extend_from_slice(&[0u8; FIXED]);
        let hostile = Hostile {
            head,
            fill: b'a',
            len: 200 << 20,
            read: read.clone(),
        };
        let mut reader = Reader::new(BufReader::new(hostile)).unwrap();
        assert_eq!(reader.next_entry(), None);
        assert!(read.get() <= 2 * MAX_PATH, "read {} bytes", read.get());
    }

    #[test]
    fn version_4_paths_growing_entry_by_entry_are_refused_at_the_path_limit() {
        // Each entry keeps the whole previous path (strip 0) and adds 1000 bytes.
        let mut index = header(4, 1 << 20);
        let mut entries = 0;
        while index.len() < 4 << 20 {
            index.extend_from_slice(&[0u8; FIXED]);
            index.push(0);
            index.extend_from_slice(&[b'a'; 1000]);
            index.push(0);
            entries += 1;
        }
        let mut reader = Reader::new(&index[..]).unwrap();
        let mut longest = 0;
        let mut read = 0;
        while let Some(entry) = reader.next_entry() {
            longest = longest.max(entry.path.len());
            read += 1;
        }
        assert!(read < entries, "all {entries} entries were taken");
        assert!(longest <= MAX_PATH, "a path of {longest} bytes");
    }
}
