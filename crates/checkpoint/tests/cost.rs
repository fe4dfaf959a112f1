//! What a snapshot costs, counted in git processes, and that the shortcuts behind those counts
//! never lose a change: real git, real temp workspaces, assertions on files.
// Tests fail loudly on setup errors; workspace lints deny these outside #[test] functions.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use atto_checkpoint::{Checkpoints, Limits, SnapshotLabel};
use tempfile::TempDir;

struct Fixture {
    _root: TempDir,
    ws: PathBuf,
    data: PathBuf,
}

fn fixture(files: usize) -> Fixture {
    let root = tempfile::tempdir().unwrap();
    let ws = root.path().join("ws");
    let data = root.path().join("data");
    fs::create_dir_all(&ws).unwrap();
    let f = Fixture {
        _root: root,
        ws,
        data,
    };
    for i in 0..files {
        f.write(&format!("src/f{i}.txt"), &format!("file {i}\n"));
    }
    f
}

impl Fixture {
    fn open(&self) -> Checkpoints {
        Checkpoints::open(&self.data, &self.ws, Limits::default()).unwrap()
    }
    fn write(&self, path: &str, text: &str) {
        let full = self.ws.join(path);
        fs::create_dir_all(full.parent().unwrap()).unwrap();
        fs::write(full, text).unwrap();
    }
    fn read(&self, path: &str) -> Option<String> {
        fs::read_to_string(self.ws.join(path)).ok()
    }
}

fn label(turn: u32, tool: &str) -> SnapshotLabel {
    SnapshotLabel {
        turn,
        tool: Some(tool.to_owned()),
        note: String::new(),
    }
}

/// Runs `git --git-dir=<side> <args>` as a user would, and returns stdout.
fn side_git(side: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("--git-dir")
        .arg(side)
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Runs `op` and returns how many git processes it started.
fn calls<T>(cp: &Checkpoints, op: impl FnOnce() -> T) -> (T, u64) {
    let before = cp.git_calls();
    let value = op();
    (value, cp.git_calls() - before)
}

#[test]
fn opening_starts_no_git_and_git_accepts_the_repository_it_writes() {
    let f = fixture(3);
    let cp = f.open();
    assert_eq!(cp.git_calls(), 0, "no `git init`");
    let side = cp.side_repo().to_path_buf();
    assert_eq!(
        side_git(&side, &["rev-parse", "--is-bare-repository"]),
        "true\n"
    );

    // A creation interrupted before its last steps is finished by the next open.
    fs::remove_file(side.join("HEAD")).unwrap();
    fs::remove_file(side.join("config")).unwrap();
    let cp = f.open();
    assert_eq!(cp.git_calls(), 0);
    let (first, n) = calls(&cp, || cp.snapshot_quick(&label(1, "write_file")).unwrap());
    assert_eq!(
        n, 4,
        "add -A, write-tree, commit-tree, update-ref; the list of a new repository is known"
    );
    assert_eq!(first.id, 1);
    assert!(first.files_changed.is_empty());
    side_git(&side, &["fsck", "--strict", "--no-dangling"]);
    assert_eq!(
        side_git(&side, &["cat-file", "-t", &first.commit]),
        "commit\n"
    );
}

#[test]
fn an_unchanged_workspace_costs_no_git_in_the_same_turn_and_two_in_a_new_one() {
    let f = fixture(10);
    let cp = f.open();
    let first = cp.snapshot_quick(&label(1, "write_file")).unwrap();

    let (same, n) = calls(&cp, || cp.snapshot_quick(&label(1, "bash")).unwrap());
    assert_eq!(n, 0);
    assert_eq!(same, first);
    let (listed, n) = calls(&cp, || cp.snapshot(&label(1, "bash")).unwrap());
    assert_eq!(
        (n, listed.id),
        (0, 1),
        "no older snapshot to list changes against"
    );

    let (next, n) = calls(&cp, || cp.snapshot_quick(&label(2, "bash")).unwrap());
    assert_eq!(n, 2, "commit-tree and update-ref only");
    assert_eq!((next.id, next.turn), (2, 2));
    let (again, n) = calls(&cp, || cp.snapshot_quick(&label(2, "edit_file")).unwrap());
    assert_eq!((n, again.id), (0, 2));

    // The watcher names the file; the trees above it are read once (`cat-file`) and the new
    // ones written without git: then commit-tree and update-ref.
    f.write("src/f3.txt", "changed\n");
    let (changed, n) = calls(&cp, || cp.snapshot_quick(&label(2, "bash")).unwrap());
    assert_eq!(n, 3);
    assert_eq!(changed.id, 3);
    assert!(changed.files_changed.is_empty(), "quick snapshots skip it");
    let (listed, _) = calls(&cp, || cp.list(1).unwrap());
    assert_eq!(listed[0].files_changed, ["src/f3.txt"]);
}

#[test]
fn restores_are_exact_after_snapshots_that_skipped_git() {
    let f = fixture(0);
    f.write("a.txt", "one\n");
    let cp = f.open();
    let one = cp.snapshot_quick(&label(1, "write_file")).unwrap();
    assert_eq!(cp.snapshot_quick(&label(1, "bash")).unwrap().id, one.id);
    f.write("a.txt", "two\n");
    f.write("b.txt", "new\n");
    let two = cp.snapshot_quick(&label(1, "bash")).unwrap();
    let turn_two = cp.snapshot_quick(&label(2, "bash")).unwrap();
    assert_eq!((two.id, turn_two.id), (2, 3));
    fs::remove_file(f.ws.join("b.txt")).unwrap();
    f.write("a.txt", "three\n");
    let (three, n) = calls(&cp, || cp.snapshot_quick(&label(2, "bash")).unwrap());
    assert_eq!(
        (three.id, n),
        (4, 2),
        "the trees are kept: commit-tree and update-ref"
    );

    let report = cp.restore(one.id).unwrap();
    assert_eq!(report.safety_snapshot, 4);
    assert_eq!(f.read("a.txt").as_deref(), Some("one\n"));
    assert_eq!(f.read("b.txt"), None);
    // The restore changed files: the next snapshot must see it, not trust the old fingerprint.
    let after = cp.snapshot_quick(&label(2, "bash")).unwrap();
    assert_eq!(after.id, 5);
    cp.undo_last_turn(2).unwrap();
    assert_eq!(f.read("a.txt").as_deref(), Some("two\n"));
    assert_eq!(f.read("b.txt").as_deref(), Some("new\n"));
    cp.restore(three.id).unwrap();
    assert_eq!(f.read("a.txt").as_deref(), Some("three\n"));
    assert_eq!(f.read("b.txt"), None);
}

/// git's racy-clean case: a rewrite with the same size whose mtime is put back. On Linux the
/// change time usually still moves; a rewrite within one clock tick, where it does not, is
/// pinned down by the racy-rule tests in `fingerprint`.
#[test]
fn a_same_size_rewrite_with_the_same_mtime_is_captured() {
    let f = fixture(5);
    f.write("a.txt", "one\n");
    let cp = f.open();
    let one = cp.snapshot_quick(&label(1, "write_file")).unwrap();
    let path = f.ws.join("a.txt");
    let mtime = fs::metadata(&path).unwrap().modified().unwrap();
    f.write("a.txt", "two\n");
    fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    assert_eq!(fs::metadata(&path).unwrap().modified().unwrap(), mtime);
    let two = cp.snapshot_quick(&label(1, "bash")).unwrap();
    assert_eq!(two.id, 2, "the rewrite is a new state");
    cp.restore(one.id).unwrap();
    assert_eq!(f.read("a.txt").as_deref(), Some("one\n"));
    cp.restore(two.id).unwrap();
    assert_eq!(f.read("a.txt").as_deref(), Some("two\n"));
}

#[test]
fn a_new_process_reuses_the_stored_fingerprint() {
    let f = fixture(10);
    let first = f.open().snapshot_quick(&label(1, "write_file")).unwrap();
    let cp = f.open();
    let (same, n) = calls(&cp, || cp.snapshot_quick(&label(1, "bash")).unwrap());
    assert_eq!(same, first);
    assert_eq!(n, 1, "only reading the snapshot list");
    f.write("src/f1.txt", "changed\n");
    let (changed, n) = calls(&cp, || cp.snapshot_quick(&label(1, "bash")).unwrap());
    assert_eq!((changed.id, n), (2, 3), "cat-file, commit-tree, update-ref");
}

#[test]
fn a_stale_list_in_another_handle_does_not_take_a_used_id() {
    let f = fixture(2);
    let a = f.open();
    let b = f.open();
    a.snapshot_quick(&label(1, "write_file")).unwrap();
    assert_eq!(b.snapshot_quick(&label(1, "bash")).unwrap().id, 1);
    f.write("x.txt", "by a\n");
    assert_eq!(a.snapshot_quick(&label(1, "bash")).unwrap().id, 2);
    f.write("x.txt", "by b\n");
    // b still believes snapshot 1 is the newest: update-ref refuses id 2, b reads and retries.
    assert_eq!(b.snapshot_quick(&label(1, "bash")).unwrap().id, 3);
    let ids: Vec<u32> = b.list(10).unwrap().iter().map(|s| s.id).collect();
    assert_eq!(ids, [3, 2, 1]);
    b.restore(2).unwrap();
    assert_eq!(f.read("x.txt").as_deref(), Some("by a\n"));
}

/// `git add -A` keeps updating a tracked file that a new `.gitignore` rule matches, but the
/// walk no longer sees it: the fingerprint must not stand in for git then.
#[test]
fn a_tracked_file_that_becomes_ignored_is_not_hidden_by_the_fingerprint() {
    let f = fixture(2);
    f.write("out.log", "v1\n");
    let cp = f.open();
    cp.snapshot_quick(&label(1, "write_file")).unwrap();
    f.write(".gitignore", "*.log\n");
    let ignored = cp.snapshot_quick(&label(1, "bash")).unwrap();
    f.write("out.log", "v2, longer\n");
    let after = cp.snapshot_quick(&label(1, "bash")).unwrap();
    assert_eq!(after.id, ignored.id + 1, "the change reached git");
}

#[test]
fn line_endings_and_attributes_do_not_change_snapshotted_bytes() {
    let f = fixture(0);
    f.write(".gitattributes", "* text=auto\n*.id ident\n");
    f.write("crlf.txt", "a\r\nb\r\n");
    f.write("x.id", "$Id$\n");
    let cp = f.open();
    let first = cp.snapshot(&label(1, "write_file")).unwrap();
    f.write("crlf.txt", "changed\n");
    fs::remove_file(f.ws.join("x.id")).unwrap();
    cp.snapshot(&label(1, "bash")).unwrap();
    cp.restore(first.id).unwrap();
    assert_eq!(f.read("crlf.txt").as_deref(), Some("a\r\nb\r\n"));
    assert_eq!(f.read("x.id").as_deref(), Some("$Id$\n"));
}

#[test]
fn one_handle_serves_many_threads() {
    fn shareable<T: Send + Sync>(_: &T) {}
    let f = fixture(4);
    let cp = Arc::new(f.open());
    shareable(&cp);
    let start = cp.snapshot_quick(&label(1, "write_file")).unwrap();
    let ws = Arc::new(f.ws.clone());
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let cp = Arc::clone(&cp);
            let ws = Arc::clone(&ws);
            std::thread::spawn(move || {
                for i in 0..3 {
                    fs::write(ws.join(format!("t{t}.txt")), format!("{i}\n")).unwrap();
                    cp.snapshot_quick(&label(1, "bash")).unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let last = cp.snapshot_quick(&label(1, "bash")).unwrap();
    let listed = cp.list(100).unwrap();
    assert_eq!(listed[0].id, last.id);
    assert!(listed.windows(2).all(|w| w[0].id > w[1].id));
    assert_eq!(listed.last().unwrap().id, start.id);
    cp.restore(start.id).unwrap();
    for t in 0..4 {
        assert_eq!(
            f.read(&format!("t{t}.txt")),
            None,
            "created after snapshot 1"
        );
    }
}
