//! A restore never overwrites an edit that no snapshot holds, even one the file watcher
//! could not see: real git, real inotify, real temp workspaces.
// Tests fail loudly on setup errors; workspace lints deny these outside #[test] functions.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![cfg(target_os = "linux")]

use std::fs;
use std::path::PathBuf;

use atto_checkpoint::{Checkpoints, Limits, SnapshotLabel};
use tempfile::TempDir;

struct Fixture {
    root: TempDir,
    ws: PathBuf,
}

fn fixture() -> Fixture {
    let root = tempfile::tempdir().unwrap();
    let ws = root.path().join("ws");
    fs::create_dir_all(ws.join("src")).unwrap();
    fs::write(ws.join("src/a.txt"), "one\n").unwrap();
    fs::write(ws.join("b.txt"), "bee\n").unwrap();
    Fixture { root, ws }
}

impl Fixture {
    fn open(&self) -> Checkpoints {
        let limits = Limits {
            watch_from_files: 0,
            ..Limits::default()
        };
        Checkpoints::open(&self.root.path().join("data"), &self.ws, limits).unwrap()
    }
    fn read(&self, path: &str) -> String {
        fs::read_to_string(self.ws.join(path)).unwrap()
    }
}

fn label(turn: u32) -> SnapshotLabel {
    SnapshotLabel {
        turn,
        tool: Some("edit".into()),
        note: String::new(),
    }
}

/// inotify reports a change to the directory entry the writer went through: a write through a
/// hard link in a directory nobody watches reaches the workspace's file unseen, as a write
/// through a shared `mmap` or on a network file system would.
fn write_unseen(f: &Fixture, path: &str, text: &str) {
    let outside = f.root.path().join("outside");
    fs::create_dir_all(&outside).unwrap();
    let link = outside.join("link");
    let _ = fs::remove_file(&link);
    fs::hard_link(f.ws.join(path), &link).unwrap();
    fs::write(&link, text).unwrap();
}

#[test]
fn an_edit_the_watcher_did_not_see_survives_a_restore_and_comes_back_with_its_undo() {
    let f = fixture();
    let cp = f.open();
    let first = cp.snapshot(&label(1)).unwrap();
    assert!(first.scan.starts_with("walk"), "{}", first.scan);
    fs::write(f.ws.join("src/a.txt"), "two\n").unwrap();
    let second = cp.snapshot(&label(2)).unwrap();
    assert!(second.scan.starts_with("watcher"), "{}", second.scan);

    write_unseen(&f, "src/a.txt", "the user's edit\n");
    let report = cp.restore(first.id).unwrap();
    assert_eq!(f.read("src/a.txt"), "one\n");
    assert_eq!(report.restored, vec!["src/a.txt".to_owned()]);

    cp.restore(report.safety_snapshot).unwrap();
    assert_eq!(f.read("src/a.txt"), "the user's edit\n");
}

#[test]
fn a_file_the_watcher_did_not_see_change_is_checked_before_a_partial_restore_deletes_it() {
    let f = fixture();
    let cp = f.open();
    let first = cp.snapshot(&label(1)).unwrap();
    fs::write(f.ws.join("new.txt"), "created\n").unwrap();
    cp.snapshot(&label(2)).unwrap();

    write_unseen(&f, "new.txt", "edited unseen\n");
    let report = cp.restore_paths(first.id, &["new.txt"]).unwrap();
    assert_eq!(report.deleted, vec!["new.txt".to_owned()]);
    assert!(!f.ws.join("new.txt").exists());

    cp.restore(report.safety_snapshot).unwrap();
    assert_eq!(f.read("new.txt"), "edited unseen\n");
    assert_eq!(f.read("b.txt"), "bee\n");
}
