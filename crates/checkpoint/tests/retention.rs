//! Collecting the side repository: snapshots past the retention policy go, the objects they
//! borrowed from the user's repository come in, and a checkpoint that can no longer be
//! restored says why without touching a file. Real git, real temp workspaces.
// Tests fail loudly on setup errors; workspace lints deny these outside #[test] functions.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::PathBuf;
use std::process::Command;

use atto_checkpoint::{CheckpointError, Checkpoints, Limits, SnapshotLabel};
use tempfile::TempDir;

struct Fixture {
    _root: TempDir,
    ws: PathBuf,
    data: PathBuf,
}

/// A git workspace whose files are all committed, so snapshots borrow their objects.
fn fixture() -> Fixture {
    let root = tempfile::tempdir().unwrap();
    let ws = root.path().join("ws");
    let data = root.path().join("data");
    fs::create_dir_all(ws.join("src")).unwrap();
    let f = Fixture {
        _root: root,
        ws,
        data,
    };
    for i in 0..10 {
        fs::write(
            f.ws.join(format!("src/f{i}.txt")),
            format!("committed {i}\n"),
        )
        .unwrap();
    }
    f.git(&["init", "-q"]);
    f.git(&["add", "-A"]);
    f.git(&["commit", "-q", "-m", "init"]);
    f
}

impl Fixture {
    fn open(&self, limits: Limits) -> Checkpoints {
        Checkpoints::open(&self.data, &self.ws, limits).unwrap()
    }
    fn read(&self, path: &str) -> String {
        fs::read_to_string(self.ws.join(path)).unwrap()
    }
    fn git(&self, args: &[&str]) {
        let out = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(["-c", "commit.gpgsign=false"])
            .args(args)
            .current_dir(&self.ws)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    /// The user's history is gone: a fresh repository where theirs was.
    fn recreate_users_repository(&self) {
        fs::remove_dir_all(self.ws.join(".git")).unwrap();
        self.git(&["init", "-q"]);
    }
}

fn label(turn: u32) -> SnapshotLabel {
    SnapshotLabel {
        turn,
        tool: Some("bash".into()),
        note: String::new(),
    }
}

#[test]
fn snapshots_survive_the_users_repository_being_recreated_after_a_collection() {
    let f = fixture();
    let cp = f.open(Limits::default());
    let first = cp.snapshot(&label(1)).unwrap();
    fs::write(f.ws.join("src/f3.txt"), "changed\n").unwrap();
    cp.snapshot(&label(2)).unwrap();

    let collected = cp.collect().unwrap().expect("no other collector");
    assert!(collected.dropped.is_empty(), "{collected:?}");
    assert!(collected.bytes_after > 0);
    f.recreate_users_repository();
    fs::write(f.ws.join("src/f7.txt"), "changed too\n").unwrap();
    cp.restore(first.id).unwrap();
    assert_eq!(f.read("src/f3.txt"), "committed 3\n");
    assert_eq!(f.read("src/f7.txt"), "committed 7\n");
}

#[test]
fn a_checkpoint_that_cannot_be_restored_says_why_and_changes_no_file() {
    let f = fixture();
    let cp = f.open(Limits::default());
    let first = cp.snapshot(&label(1)).unwrap();
    for i in [2, 5, 8] {
        fs::write(f.ws.join(format!("src/f{i}.txt")), "agent\n").unwrap();
    }
    cp.snapshot(&label(2)).unwrap();
    f.recreate_users_repository();

    let err = cp.restore(first.id).unwrap_err();
    assert!(
        matches!(err, CheckpointError::Unrestorable { id, .. } if id == first.id),
        "{err}"
    );
    let text = err.to_string();
    assert!(text.contains("no file was changed"), "{text}");
    for i in [2, 5, 8] {
        assert_eq!(f.read(&format!("src/f{i}.txt")), "agent\n");
    }
}

#[test]
fn collection_drops_snapshots_past_the_size_cap_but_always_keeps_the_newest() {
    let f = fixture();
    let cp = f.open(Limits {
        max_bytes: 1,
        ..Limits::default()
    });
    for turn in 1..=5 {
        fs::write(f.ws.join("src/f1.txt"), format!("turn {turn}\n")).unwrap();
        cp.snapshot(&label(turn)).unwrap();
    }
    let newest = cp.list(1).unwrap()[0].id;
    let collected = cp.collect().unwrap().unwrap();
    assert_eq!(collected.dropped.len(), 4, "{collected:?}");
    let left: Vec<u32> = cp.list(usize::MAX).unwrap().iter().map(|s| s.id).collect();
    assert_eq!(left, vec![newest]);
    assert!(
        collected.bytes_after <= collected.bytes_before,
        "{collected:?}"
    );
}

#[test]
fn collection_drops_snapshots_older_than_the_days_kept() {
    let f = fixture();
    let cp = f.open(Limits {
        keep_days: 0,
        ..Limits::default()
    });
    cp.snapshot(&label(1)).unwrap();
    fs::write(f.ws.join("src/f1.txt"), "later\n").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    let newest = cp.snapshot(&label(2)).unwrap();
    let collected = cp.collect().unwrap().unwrap();
    assert_eq!(collected.kept, 1, "{collected:?}");
    assert_eq!(cp.list(usize::MAX).unwrap()[0].id, newest.id);
}

#[test]
fn only_one_process_collects_at_a_time() {
    let f = fixture();
    let cp = f.open(Limits::default());
    cp.snapshot(&label(1)).unwrap();
    let lock = fs::File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(cp.side_repo().join("atto-collect.lock"))
        .unwrap();
    lock.lock().unwrap();
    assert!(
        cp.collect().unwrap().is_none(),
        "another collector holds the lock"
    );
    drop(lock);
    assert!(cp.collect().unwrap().is_some());
}

#[test]
fn a_handle_collects_in_the_background_every_so_many_snapshots() {
    let f = fixture();
    let cp = f.open(Limits {
        collect_every: 2,
        ..Limits::default()
    });
    let packs = || {
        fs::read_dir(cp.side_repo().join("objects/pack"))
            .map(|d| d.filter_map(Result::ok).count())
            .unwrap_or(0)
    };
    cp.snapshot(&label(1)).unwrap();
    assert_eq!(packs(), 0, "nothing collected after one snapshot");
    fs::write(f.ws.join("src/f1.txt"), "changed\n").unwrap();
    cp.snapshot(&label(2)).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !cp.side_repo().join("atto-collected").exists() {
        assert!(std::time::Instant::now() < deadline, "no collection ran");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(
        packs() > 0,
        "the second snapshot's collection packed the objects"
    );
}
