//! The stat fingerprint: one number summing up what `lstat` says about every file a snapshot
//! would hold, so that a workspace unchanged since the newest snapshot costs no git process.
//! It is built during the walk that already visits every file's metadata, and it is kept for
//! the newest snapshot only, in memory and in `<side>/atto-fingerprint` for the next process.
//!
//! Trust rule. Equal fingerprints mean equal contents only if every change to a file changes
//! its stat data. A write normally moves ctime (which no program can set back) and mtime, but
//! both come from a clock with coarse ticks (milliseconds on most Linux filesystems, 1–2 s on
//! HFS+, ext3, FAT), so a write landing in the same tick as the stat data we recorded can
//! leave them all equal: git's "racy clean" problem. A file whose mtime or ctime lies within
//! [`RACY_WINDOW_NS`] of (or after) the moment the walk started is therefore *racy*, and its
//! content is hashed into the fingerprint as well. When racy files are too many or too large
//! to read cheaply, when a file cannot be stat'ed or read, or on platforms without a change
//! time, there is no fingerprint and the snapshot takes the full git path.
//!
//! To compare with a stored fingerprint the walk applies the racy rule at the stored
//! fingerprint's own start time, so both sides hash the same files' contents and a file that
//! has since aged out of the window does not look changed.
//!
//! This module decides what goes into a fingerprint and how it is stored; it does not walk
//! (that is `walk`) and does not decide when a fingerprint may stand for a snapshot (`lib`).

use std::fs::Metadata;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::side::write_atomically;

/// Files touched this close before the walk (or after its start) are racy. Two seconds covers
/// the coarsest common timestamp (FAT's) and the lag of the kernel's coarse clock.
pub(crate) const RACY_WINDOW_NS: i128 = 2_000_000_000;
/// Above this many racy files there is no fingerprint (reading them would cost more than git).
const RACY_MAX_FILES: usize = 512;
/// Above this many bytes in racy files there is no fingerprint.
const RACY_MAX_BYTES: u64 = 8 * 1024 * 1024;
/// Where the newest snapshot's fingerprint is kept, inside the side repository.
const FILE: &str = "atto-fingerprint";
/// The first word of that file; a new hashing scheme gets a new word.
const FORMAT: &str = "atto-fingerprint-2";

/// The fingerprint of one walk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Fingerprint {
    /// When the walk started, nanoseconds since the Unix epoch: the racy rule's reference.
    pub(crate) taken_ns: i128,
    /// The summary itself.
    pub(crate) value: u64,
}

/// A fingerprint that stands for a snapshot: the workspace held exactly that snapshot's tree
/// whenever a walk produced `fingerprint`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Known {
    pub(crate) id: u32,
    pub(crate) commit: String,
    pub(crate) fingerprint: Fingerprint,
}

impl Known {
    /// Reads the stored fingerprint; `None` when missing or unreadable (the full path then runs).
    pub(crate) fn load(side: &Path) -> Option<Self> {
        let text = std::fs::read_to_string(side.join(FILE)).ok()?;
        let mut words = text.split_whitespace();
        if words.next()? != FORMAT {
            return None;
        }
        let id = words.next()?.parse().ok()?;
        let commit = words.next()?.to_owned();
        let taken_ns = words.next()?.parse().ok()?;
        let value = u64::from_str_radix(words.next()?, 16).ok()?;
        Some(Self {
            id,
            commit,
            fingerprint: Fingerprint { taken_ns, value },
        })
    }

    /// Stores it for the next process. Best effort: without it a new process takes the full
    /// path once, which is slower but not wrong.
    pub(crate) fn save(&self, side: &Path) {
        let text = format!(
            "{FORMAT} {} {} {} {:016x}\n",
            self.id, self.commit, self.fingerprint.taken_ns, self.fingerprint.value
        );
        let _ = write_atomically(&side.join(FILE), &text);
    }
}

/// What `lstat` says about one file, reduced to what a content change can move.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Stat {
    pub(crate) mode: u32,
    pub(crate) size: u64,
    pub(crate) mtime_ns: i128,
    pub(crate) ctime_ns: i128,
    pub(crate) ino: u64,
}

impl Stat {
    #[cfg(unix)]
    pub(crate) fn of(meta: &Metadata) -> Option<Self> {
        use std::os::unix::fs::MetadataExt;
        let ns = |s: i64, n: i64| i128::from(s) * 1_000_000_000 + i128::from(n);
        Some(Self {
            mode: meta.mode(),
            size: meta.size(),
            mtime_ns: ns(meta.mtime(), meta.mtime_nsec()),
            ctime_ns: ns(meta.ctime(), meta.ctime_nsec()),
            ino: meta.ino(),
        })
    }

    /// Without a change time that programs cannot set, stat data proves nothing.
    #[cfg(not(unix))]
    pub(crate) fn of(_meta: &Metadata) -> Option<Self> {
        None
    }
}

/// The fingerprints one walk yields.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Fingerprints {
    /// Files and symlinks seen: what git's index should hold after `add -A`.
    pub(crate) files: u64,
    /// Racy rule applied at this walk's start: the one to store.
    pub(crate) current: Option<Fingerprint>,
    /// Racy rule applied at the stored fingerprint's start: the one to compare with it.
    pub(crate) earlier: Option<u64>,
}

/// Accumulates a fingerprint, one file at a time, in any order.
#[derive(Debug)]
pub(crate) struct Builder {
    now_ns: i128,
    earlier_ns: Option<i128>,
    /// Wrapping sums of per-file hashes: the order of the walk does not matter.
    sum_now: u64,
    sum_earlier: u64,
    files: u64,
    racy: Vec<Racy>,
    racy_bytes: u64,
    broken: bool,
}

/// A racy file whose content still has to be hashed, and which sums it belongs to.
#[derive(Debug)]
struct Racy {
    path: PathBuf,
    size: u64,
    stat_hash: u64,
    now: bool,
    earlier: bool,
}

impl Builder {
    /// `earlier_ns`: the start time of the stored fingerprint this walk will be compared with.
    pub(crate) fn new(now: SystemTime, earlier_ns: Option<i128>) -> Self {
        let now_ns = now
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| i128::try_from(d.as_nanos()).unwrap_or(i128::MAX));
        Self {
            now_ns,
            earlier_ns,
            sum_now: 0,
            sum_earlier: 0,
            files: 0,
            racy: Vec::new(),
            racy_bytes: 0,
            broken: false,
        }
    }

    /// Something the walk could not see properly: no fingerprint this time.
    pub(crate) fn broken(&mut self) {
        self.broken = true;
    }

    /// A regular file, or a symlink with its `link` target (which is all git stores of it).
    pub(crate) fn add(&mut self, path: &Path, meta: &Metadata, link: Option<&Path>) {
        match Stat::of(meta) {
            Some(stat) => self.add_stat(path, stat, link),
            None => self.broken(),
        }
    }

    pub(crate) fn add_stat(&mut self, path: &Path, stat: Stat, link: Option<&Path>) {
        self.files += 1;
        let mut h = DefaultHasher::new();
        path.as_os_str().as_encoded_bytes().hash(&mut h);
        stat.hash(&mut h);
        link.map(|l| l.as_os_str().as_encoded_bytes()).hash(&mut h);
        let stat_hash = h.finish();
        // A symlink's whole content (its target) is already in the hash.
        let newest = stat.mtime_ns.max(stat.ctime_ns);
        let racy_at = |start: i128| link.is_none() && newest > start - RACY_WINDOW_NS;
        let now = racy_at(self.now_ns);
        let earlier = self.earlier_ns.is_some_and(racy_at);
        if !now {
            self.sum_now = self.sum_now.wrapping_add(stat_hash);
        }
        if !earlier {
            self.sum_earlier = self.sum_earlier.wrapping_add(stat_hash);
        }
        if now || earlier {
            self.racy_bytes = self.racy_bytes.saturating_add(stat.size);
            self.racy.push(Racy {
                path: path.to_path_buf(),
                size: stat.size,
                stat_hash,
                now,
                earlier,
            });
        }
    }

    /// Hashes the racy files' contents and sums up. `extra` holds whatever else decides what
    /// a snapshot holds (the nested repositories it skips, the empty directories it records).
    pub(crate) fn finish(mut self, extra: &(&[Vec<u8>], &[Vec<u8>])) -> Fingerprints {
        let files = self.files;
        let none = Fingerprints {
            files,
            ..Fingerprints::default()
        };
        if self.broken || self.racy.len() > RACY_MAX_FILES || self.racy_bytes > RACY_MAX_BYTES {
            return none;
        }
        let mut content = Vec::new();
        for racy in &self.racy {
            if read_prefix(&racy.path, racy.size + 1, &mut content).is_err() {
                return none;
            }
            let mut h = DefaultHasher::new();
            racy.stat_hash.hash(&mut h);
            content.hash(&mut h);
            let hash = h.finish();
            if racy.now {
                self.sum_now = self.sum_now.wrapping_add(hash);
            }
            if racy.earlier {
                self.sum_earlier = self.sum_earlier.wrapping_add(hash);
            }
        }
        // `DefaultHasher::new()` is the same in every process of one build; a toolchain that
        // changes it only makes a stored fingerprint not match once.
        let value = |sum: u64| {
            let mut h = DefaultHasher::new();
            (FORMAT, sum, files, extra).hash(&mut h);
            h.finish()
        };
        Fingerprints {
            files,
            current: Some(Fingerprint {
                taken_ns: self.now_ns,
                value: value(self.sum_now),
            }),
            earlier: self.earlier_ns.map(|_| value(self.sum_earlier)),
        }
    }
}

/// Reads at most `limit` bytes of `path` into `buf`: a file that grew since it was stat'ed
/// already differs (by size), and is not worth reading whole.
fn read_prefix(path: &Path, limit: u64, buf: &mut Vec<u8>) -> std::io::Result<()> {
    buf.clear();
    std::fs::File::open(path)?.take(limit).read_to_end(buf)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    const T: i128 = 1_700_000_000_000_000_000;

    fn at(ns: i128) -> SystemTime {
        UNIX_EPOCH + Duration::from_nanos(u64::try_from(ns).unwrap())
    }

    fn stat(stamp_ns: i128) -> Stat {
        Stat {
            mode: 0o100_644,
            size: 4,
            mtime_ns: stamp_ns,
            ctime_ns: stamp_ns,
            ino: 7,
        }
    }

    fn print(path: &Path, stat: Stat, now_ns: i128, earlier_ns: Option<i128>) -> Fingerprints {
        let mut b = Builder::new(at(now_ns), earlier_ns);
        b.add_stat(path, stat, None);
        b.finish(&(&[], &[]))
    }

    /// The racy-clean case: same size, same mtime and ctime, other bytes.
    #[test]
    fn racy_files_are_told_apart_by_content() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.txt");
        let s = stat(T);
        std::fs::write(&path, "one\n").unwrap();
        let before = print(&path, s, T + 500_000_000, None).current.unwrap();
        std::fs::write(&path, "two\n").unwrap();
        let after = print(&path, s, T + 900_000_000, Some(before.taken_ns));
        assert_ne!(after.earlier, Some(before.value));
        std::fs::write(&path, "one\n").unwrap();
        let back = print(&path, s, T + 900_000_000, Some(before.taken_ns));
        assert_eq!(back.earlier, Some(before.value));
    }

    #[test]
    fn settled_files_are_compared_by_stat_alone_and_age_out_without_a_change() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.txt");
        std::fs::write(&path, "one\n").unwrap();
        let s = stat(T);
        // Racy when first recorded, settled by the next walk: compared under the old start
        // time it still matches, and the fingerprint to store no longer reads the file.
        let first = print(&path, s, T + 1_000_000_000, None).current.unwrap();
        let later = print(&path, s, T + 60_000_000_000, Some(first.taken_ns));
        assert_eq!(later.earlier, Some(first.value));
        let settled = later.current.unwrap();
        std::fs::write(&path, "two\n").unwrap();
        let again = print(&path, s, T + 61_000_000_000, Some(settled.taken_ns));
        assert_eq!(
            again.earlier,
            Some(settled.value),
            "outside the window only stat data counts"
        );
        let touched = print(
            &path,
            stat(T + 1),
            T + 61_000_000_000,
            Some(settled.taken_ns),
        );
        assert_ne!(touched.earlier, Some(settled.value));
    }

    #[test]
    fn too_many_racy_bytes_or_an_unreadable_file_give_no_fingerprint() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("gone.txt");
        assert_eq!(print(&missing, stat(T), T, None).current, None);
        let big = Stat {
            size: RACY_MAX_BYTES + 1,
            ..stat(T)
        };
        assert_eq!(print(&missing, big, T, None).current, None);
        // Not racy: never read, so a missing file does not matter.
        let old = print(&missing, stat(T), T + 10 * RACY_WINDOW_NS, None);
        assert!(old.current.is_some());
        assert_eq!(old.files, 1);
    }

    #[test]
    fn known_round_trips_through_its_file() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(Known::load(dir.path()), None);
        let known = Known {
            id: 12,
            commit: "c0ffee".into(),
            fingerprint: Fingerprint {
                taken_ns: T,
                value: 0xdead_beef,
            },
        };
        known.save(dir.path());
        assert_eq!(Known::load(dir.path()), Some(known));
        std::fs::write(dir.path().join(FILE), "other-format 1 c 2 3\n").unwrap();
        assert_eq!(Known::load(dir.path()), None);
    }
}
