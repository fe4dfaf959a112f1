//! Which files changed since the last snapshot, as the kernel reports them (inotify), so that a
//! snapshot costs what changed instead of a walk of the whole workspace.
//!
//! Every directory the snapshot walk visits is watched before its entries are read (see
//! `walk`), so a change is either seen by that walk or reported here: nothing falls between.
//! Events are read only when a snapshot asks, under the handle's lock; the kernel queues them
//! meanwhile and, since it queues them inside the very system call that changes a file, a
//! write that returned before the snapshot started is always among them — whichever process
//! made it (a `bash` command's children included).
//!
//! The watcher answers only for file-level changes it could place. It gives up — and the next
//! snapshot walks the workspace again, re-arming every watch — when the kernel's queue
//! overflowed, a watch could not be added, a directory was created, removed or moved, a
//! `.gitignore` changed (what a snapshot holds may have changed anywhere below it), or more
//! paths changed than are worth naming one by one. It does not decide what a snapshot holds:
//! `record` asks git about the paths it reports.
//!
//! inotify sees only what goes through this machine's kernel as a write to the file's
//! directory entry: a network or FUSE file system (NFS, SMB/CIFS, 9p, virtiofs and every other
//! FUSE file system, Ceph, AFS, GFS2, OCFS2, Lustre, VirtualBox shared folders) changes files
//! behind its back. So a directory is trusted only on a local file system known to report every
//! write (see [`KNOWN_LOCAL`], an allowlist: an unknown file system counts as blind); a walk
//! that meets any other leaves the watcher unable to answer until a walk finds none, so every
//! snapshot there walks, and says why in its `atto-scan` line.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// Above this many changed paths, a walk is the cheaper way to look at them.
const MAX_PATHS: usize = 10_000;

/// File systems (`statfs` type, from `linux/magic.h`) where every change to a file goes through
/// this kernel and so reaches inotify.
#[cfg(target_os = "linux")]
const KNOWN_LOCAL: &[(u64, &str)] = &[
    (0xEF53, "ext2/3/4"),
    (0x5846_5342, "xfs"),
    (0x9123_683E, "btrfs"),
    (0x0102_1994, "tmpfs"),
    (0x8584_58F6, "ramfs"),
    (0x794C_7630, "overlayfs"),
    (0xF2F5_2010, "f2fs"),
    (0x2FC1_2FC1, "zfs"),
    (0xCA45_1A4E, "bcachefs"),
    (0x5265_4973, "reiserfs"),
    (0x3153_464A, "jfs"),
    (0x3434, "nilfs2"),
    (0x4D44, "vfat"),
    (0x2011_BAB0, "exfat"),
    (0x7366_746E, "ntfs3"),
    (0x482B, "hfsplus"),
];

/// Why the watcher is not trusted on a directory outside [`KNOWN_LOCAL`].
const BLIND: &str = "the workspace is (partly) on a network, FUSE or other file system whose \
                     changes inotify does not all see";

/// What the watcher can say about the workspace since the last snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Since {
    /// Only these files (workspace-relative) may have changed.
    Paths(Vec<PathBuf>),
    /// The watcher cannot tell; the reason goes into the checkpoint record.
    Unknown(&'static str),
}

/// A watch on every directory of the workspace a snapshot holds.
#[derive(Debug)]
pub(crate) struct Watcher {
    #[cfg(target_os = "linux")]
    inotify: inotify::Inotify,
    /// The directory (workspace-relative) of each watch.
    #[cfg(target_os = "linux")]
    dirs: HashMap<inotify::WatchDescriptor, PathBuf>,
    dirty: BTreeSet<PathBuf>,
    /// Why the dirty set cannot be trusted, when it cannot.
    lost: Option<&'static str>,
    /// The last walk watched a directory on a file system inotify is blind to (see
    /// [`KNOWN_LOCAL`]): nothing this watcher says is trusted until a walk finds none.
    blind: bool,
}

impl Watcher {
    /// A watcher with no watch yet; `None` where inotify is unavailable.
    #[cfg(target_os = "linux")]
    pub(crate) fn new() -> Option<Self> {
        Some(Self {
            inotify: inotify::Inotify::init().ok()?,
            dirs: HashMap::new(),
            dirty: BTreeSet::new(),
            lost: Some("no walk armed the watcher yet"),
            blind: false,
        })
    }

    #[cfg(not(target_os = "linux"))]
    pub(crate) fn new() -> Option<Self> {
        None
    }

    /// A full walk is about to look at every file: what was dirty is covered by it. Events
    /// still queued belong to changes the walk will see; they are read and dropped.
    pub(crate) fn start_walk(&mut self) {
        self.drain();
        self.dirty.clear();
        self.lost = None;
        self.blind = false;
    }

    /// The walk did not finish (a failure, the size cap): it vouches for nothing.
    pub(crate) fn walk_failed(&mut self) {
        self.lost = Some("the last walk did not finish");
    }

    /// Watches directory `rel` (workspace-relative; empty for the root) at `full`. Called by
    /// the walk before it reads the directory's entries.
    #[cfg(target_os = "linux")]
    pub(crate) fn watch(&mut self, full: &Path, rel: &Path) {
        use inotify::WatchMask;
        let mask = WatchMask::MODIFY
            | WatchMask::ATTRIB
            | WatchMask::CLOSE_WRITE
            | WatchMask::CREATE
            | WatchMask::DELETE
            | WatchMask::MOVED_FROM
            | WatchMask::MOVED_TO
            | WatchMask::DELETE_SELF
            | WatchMask::MOVE_SELF
            | WatchMask::DONT_FOLLOW
            | WatchMask::ONLYDIR
            | WatchMask::EXCL_UNLINK;
        self.blind |= !sees_every_change(full);
        match self.inotify.watches().add(full, mask) {
            // The same directory watched again (a re-walk) keeps its descriptor.
            Ok(wd) => {
                self.dirs.insert(wd, rel.to_path_buf());
            }
            Err(_) => self.lost = Some("a directory could not be watched (inotify limit?)"),
        }
    }

    #[cfg(not(target_os = "linux"))]
    pub(crate) fn watch(&mut self, _full: &Path, _rel: &Path) {}

    /// Reads every queued event and says what changed since the last [`Watcher::take`] or
    /// walk; the dirty set starts empty again.
    pub(crate) fn take(&mut self) -> Since {
        self.drain();
        if self.blind {
            return Since::Unknown(BLIND);
        }
        if let Some(why) = self.lost {
            return Since::Unknown(why);
        }
        if self.dirty.len() > MAX_PATHS {
            self.lost = Some("too many paths changed to name them");
            return Since::Unknown("too many paths changed to name them");
        }
        Since::Paths(std::mem::take(&mut self.dirty).into_iter().collect())
    }

    /// Marks the dirty set unusable until the next walk (a snapshot that took it failed).
    pub(crate) fn forget(&mut self, why: &'static str) {
        self.lost = Some(why);
    }

    #[cfg(target_os = "linux")]
    fn drain(&mut self) {
        use inotify::EventMask;
        let mut buffer = [0u8; 16 * 1024];
        loop {
            let events = match self.inotify.read_events(&mut buffer) {
                Ok(events) => events,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return,
                Err(_) => {
                    self.lost = Some("the watcher's events could not be read");
                    return;
                }
            };
            let mut any = false;
            for event in events {
                any = true;
                let mask = event.mask;
                if mask.contains(EventMask::Q_OVERFLOW) {
                    self.lost = Some("the watcher's event queue overflowed");
                    continue;
                }
                if mask.contains(EventMask::IGNORED) {
                    self.dirs.remove(&event.wd);
                    continue;
                }
                let structural = mask.intersects(EventMask::DELETE_SELF | EventMask::MOVE_SELF)
                    || (mask.contains(EventMask::ISDIR)
                        && mask.intersects(
                            EventMask::CREATE
                                | EventMask::DELETE
                                | EventMask::MOVED_FROM
                                | EventMask::MOVED_TO,
                        ));
                if structural {
                    self.lost = Some("a directory was created, removed or moved");
                    continue;
                }
                let (Some(dir), Some(name)) = (self.dirs.get(&event.wd), event.name) else {
                    // A directory's own attributes: nothing a snapshot holds.
                    if !self.dirs.contains_key(&event.wd) {
                        self.lost = Some("an event came from an unknown directory");
                    }
                    continue;
                };
                if name == ".gitignore" {
                    self.lost = Some("a .gitignore changed");
                    continue;
                }
                if self.lost.is_none() {
                    self.dirty.insert(dir.join(name));
                }
            }
            if !any {
                return;
            }
        }
    }

    #[cfg(not(target_os = "linux"))]
    fn drain(&mut self) {}
}

/// Whether directory `full` is on a file system in [`KNOWN_LOCAL`]; one that cannot be asked
/// counts as blind.
#[cfg(target_os = "linux")]
fn sees_every_change(full: &Path) -> bool {
    rustix::fs::statfs(full).is_ok_and(|fs| {
        let kind = u64::try_from(fs.f_type).unwrap_or(u64::MAX);
        KNOWN_LOCAL.iter().any(|(magic, _)| *magic == kind)
    })
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    fn armed(root: &Path, dirs: &[&str]) -> Watcher {
        let Some(mut w) = Watcher::new() else {
            panic!("inotify is unavailable")
        };
        w.start_walk();
        for d in dirs {
            w.watch(&root.join(d), Path::new(d));
        }
        w
    }

    #[test]
    fn file_changes_are_named_and_directory_changes_give_up() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/a.rs"), "a").unwrap();
        let mut w = armed(dir.path(), &["", "src"]);
        assert_eq!(w.take(), Since::Paths(vec![]));
        std::fs::write(dir.path().join("src/a.rs"), "b").unwrap();
        std::fs::write(dir.path().join("top.txt"), "t").unwrap();
        std::fs::rename(dir.path().join("top.txt"), dir.path().join("moved.txt")).unwrap();
        let want = ["moved.txt", "src/a.rs", "top.txt"]
            .map(PathBuf::from)
            .to_vec();
        assert_eq!(w.take(), Since::Paths(want));
        assert_eq!(w.take(), Since::Paths(vec![]), "taken once");

        std::fs::create_dir(dir.path().join("src/new")).unwrap();
        assert!(matches!(w.take(), Since::Unknown(_)));
        assert!(matches!(w.take(), Since::Unknown(_)), "until a walk");
        w.start_walk();
        std::fs::write(dir.path().join(".gitignore"), "x").unwrap();
        assert_eq!(w.take(), Since::Unknown("a .gitignore changed"));
    }

    #[test]
    fn a_directory_on_a_file_system_outside_the_allowlist_is_never_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = armed(dir.path(), &[""]);
        assert_eq!(
            w.take(),
            Since::Paths(vec![]),
            "the test's own file system is local"
        );
        // procfs stands for any file system not known to report every change.
        w.start_walk();
        w.watch(dir.path(), Path::new(""));
        w.watch(Path::new("/proc/self"), Path::new("proc"));
        assert_eq!(w.take(), Since::Unknown(BLIND));
        assert_eq!(w.take(), Since::Unknown(BLIND), "until a walk finds none");
        w.start_walk();
        w.watch(dir.path(), Path::new(""));
        assert_eq!(w.take(), Since::Paths(vec![]));
    }

    #[test]
    fn an_overflowing_queue_gives_up() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = armed(dir.path(), &[""]);
        let limit: usize = std::fs::read_to_string("/proc/sys/fs/inotify/max_queued_events")
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(16_384);
        // Alternating files: the kernel merges only identical consecutive events.
        for i in 0..=limit / 2 + 1 {
            std::fs::write(dir.path().join("a"), i.to_string()).unwrap();
            std::fs::write(dir.path().join("b"), i.to_string()).unwrap();
        }
        assert_eq!(
            w.take(),
            Since::Unknown("the watcher's event queue overflowed")
        );
    }
}
