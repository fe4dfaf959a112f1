//! Checkpoints through the front door: real git, real temp workspaces, assertions on files.
// Tests fail loudly on setup errors; workspace lints deny these outside #[test] functions.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use atto_checkpoint::{CheckpointError, Checkpoints, Limits, SnapshotLabel};
use tempfile::TempDir;

struct Fixture {
    _root: TempDir,
    ws: PathBuf,
    data: PathBuf,
}

fn fixture() -> Fixture {
    let root = tempfile::tempdir().unwrap();
    let ws = root.path().join("ws");
    let data = root.path().join("data");
    fs::create_dir_all(&ws).unwrap();
    Fixture {
        _root: root,
        ws,
        data,
    }
}

impl Fixture {
    fn open(&self, limits: Limits) -> Checkpoints {
        Checkpoints::open(&self.data, &self.ws, limits).unwrap()
    }
    fn write(&self, path: &str, text: &str) {
        let full = self.ws.join(path);
        fs::create_dir_all(full.parent().unwrap()).unwrap();
        fs::write(full, text).unwrap();
    }
    fn read(&self, path: &str) -> Option<String> {
        fs::read_to_string(self.ws.join(path)).ok()
    }
    fn git(&self, args: &[&str]) -> String {
        let out = Command::new("git")
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "-c",
                "commit.gpgsign=false",
            ])
            .args(args)
            .current_dir(&self.ws)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }
}

fn label(turn: u32, tool: Option<&str>) -> SnapshotLabel {
    SnapshotLabel {
        turn,
        tool: tool.map(str::to_owned),
        note: format!("turn {turn}"),
    }
}

/// Every file under `dir`, with its bytes.
fn dump(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.insert(path.clone(), fs::read(&path).unwrap());
            }
        }
    }
    out
}

#[test]
fn restore_brings_back_written_commanded_created_and_deleted_files() {
    let f = fixture();
    f.write("src/written.rs", "fn original() {}\n");
    f.write("by_command.txt", "before\n");
    f.write("gone.txt", "doomed\n");
    f.write("untouched.txt", "same\n");
    let cp = f.open(Limits::default());
    let first = cp.snapshot(&label(1, Some("write_file"))).unwrap();
    assert_eq!(first.id, 1);

    f.write("src/written.rs", "fn edited() {}\n");
    let out = Command::new("sh")
        .args(["-c", "echo after > by_command.txt"])
        .current_dir(&f.ws)
        .status()
        .unwrap();
    assert!(out.success());
    f.write("new/dir/created.txt", "fresh\n");
    fs::remove_file(f.ws.join("gone.txt")).unwrap();
    let second = cp.snapshot(&label(1, Some("bash"))).unwrap();
    assert_eq!(second.id, 2);
    assert_eq!(
        second.files_changed,
        [
            "by_command.txt",
            "gone.txt",
            "new/dir/created.txt",
            "src/written.rs"
        ]
    );

    let report = cp.restore(1).unwrap();
    assert_eq!(
        report.safety_snapshot, 2,
        "nothing changed since snapshot 2"
    );
    assert_eq!(
        report.restored,
        ["by_command.txt", "gone.txt", "src/written.rs"]
    );
    assert_eq!(report.deleted, ["new/dir/created.txt"]);
    assert_eq!(
        f.read("src/written.rs").as_deref(),
        Some("fn original() {}\n")
    );
    assert_eq!(f.read("by_command.txt").as_deref(), Some("before\n"));
    assert_eq!(f.read("gone.txt").as_deref(), Some("doomed\n"));
    assert!(
        !f.ws.join("new").exists(),
        "emptied directories are removed"
    );
    assert!(
        !f.ws.join(".git").exists(),
        "a non-git workspace stays non-git"
    );

    // Restoring twice changes nothing more.
    let again = cp.restore(1).unwrap();
    assert!(
        again.restored.is_empty() && again.deleted.is_empty(),
        "{again:?}"
    );
    assert_eq!(
        f.read("src/written.rs").as_deref(),
        Some("fn original() {}\n")
    );

    // Undoing the restore: restore the safety snapshot it took.
    let undo = cp.restore(report.safety_snapshot).unwrap();
    assert_eq!(undo.deleted, ["gone.txt"]);
    assert_eq!(
        f.read("src/written.rs").as_deref(),
        Some("fn edited() {}\n")
    );
    assert_eq!(f.read("by_command.txt").as_deref(), Some("after\n"));
    assert_eq!(f.read("new/dir/created.txt").as_deref(), Some("fresh\n"));
    assert_eq!(f.read("gone.txt"), None);
}

#[test]
fn users_git_repository_is_untouched() {
    let f = fixture();
    f.git(&["init", "-q"]);
    f.write("tracked.txt", "v1\n");
    f.write("vendor/lib/inner.txt", "nested\n");
    // A nested repository without any commit: git would refuse to add it as a gitlink.
    Command::new("git")
        .args(["init", "-q"])
        .current_dir(f.ws.join("vendor/lib"))
        .status()
        .unwrap();
    f.git(&["add", "tracked.txt"]);
    f.git(&["commit", "-q", "-m", "init"]);
    f.write("tracked.txt", "v2 uncommitted\n");
    f.write("untracked.txt", "u\n");
    let status_before = f.git(&["status", "--porcelain", "--untracked-files=all"]);
    let git_before = dump(&f.ws.join(".git"));
    let nested_before = dump(&f.ws.join("vendor/lib/.git"));

    let cp = f.open(Limits::default());
    let first = cp.snapshot(&label(1, None)).unwrap();
    f.write("tracked.txt", "v3 by agent\n");
    let second = cp.snapshot(&label(1, Some("edit_file"))).unwrap();
    assert_eq!(second.files_changed, ["tracked.txt"]);
    cp.restore(first.id).unwrap();
    assert_eq!(f.read("tracked.txt").as_deref(), Some("v2 uncommitted\n"));
    assert_eq!(f.read("vendor/lib/inner.txt").as_deref(), Some("nested\n"));

    assert_eq!(
        dump(&f.ws.join(".git")),
        git_before,
        ".git must be byte-identical"
    );
    assert_eq!(dump(&f.ws.join("vendor/lib/.git")), nested_before);
    let status_after = f.git(&["status", "--porcelain", "--untracked-files=all"]);
    assert_eq!(status_after, status_before);
    assert!(!status_after.contains("atto"), "{status_after}");
}

#[test]
fn gitignored_files_are_neither_snapshotted_nor_touched() {
    let f = fixture();
    f.write(".gitignore", "*.log\ntarget/\n");
    f.write("app.log", "log v1\n");
    f.write("target/out.bin", "bin v1\n");
    f.write("main.rs", "fn main() {}\n");
    let cp = f.open(Limits::default());
    cp.snapshot(&label(1, None)).unwrap();

    f.write("app.log", "log v2\n");
    f.write("target/new.bin", "new\n");
    f.write("main.rs", "fn main() { changed() }\n");
    let second = cp.snapshot(&label(1, Some("bash"))).unwrap();
    assert_eq!(
        second.files_changed,
        ["main.rs"],
        "ignored files are not in snapshots"
    );

    let report = cp.restore(1).unwrap();
    assert_eq!(report.restored, ["main.rs"]);
    assert!(report.deleted.is_empty(), "{report:?}");
    assert_eq!(f.read("main.rs").as_deref(), Some("fn main() {}\n"));
    assert_eq!(f.read("app.log").as_deref(), Some("log v2\n"));
    assert_eq!(f.read("target/new.bin").as_deref(), Some("new\n"));
    assert_eq!(f.read("target/out.bin").as_deref(), Some("bin v1\n"));
}

#[test]
fn identical_snapshots_are_recorded_once_per_turn() {
    let f = fixture();
    f.write("a.txt", "a\n");
    let cp = f.open(Limits::default());
    let one = cp.snapshot(&label(1, None)).unwrap();
    let same = cp.snapshot(&label(1, Some("write_file"))).unwrap();
    assert_eq!(same, one);
    // A new turn gets its own start marker even when nothing changed.
    let next_turn = cp.snapshot(&label(2, None)).unwrap();
    assert_eq!(next_turn.id, 2);
    assert!(next_turn.files_changed.is_empty());
    let listed = cp.list(10).unwrap();
    assert_eq!(listed.iter().map(|s| s.id).collect::<Vec<_>>(), [2, 1]);
    assert_eq!(listed[1].tool, None);
    assert_eq!(listed[0].note, "turn 2");
}

#[test]
fn undo_last_turn_returns_to_the_state_before_the_turn() {
    let f = fixture();
    f.write("a.txt", "turn0\n");
    let cp = f.open(Limits::default());
    cp.snapshot(&label(1, Some("write_file"))).unwrap();
    f.write("a.txt", "turn1\n");
    cp.snapshot(&label(2, Some("write_file"))).unwrap();
    f.write("a.txt", "turn2 first\n");
    cp.snapshot(&label(2, Some("bash"))).unwrap();
    f.write("b.txt", "turn2 second\n");

    let report = cp.undo_last_turn(2).unwrap();
    assert_eq!(f.read("a.txt").as_deref(), Some("turn1\n"));
    assert_eq!(f.read("b.txt"), None);
    assert_eq!(report.deleted, ["b.txt"]);
    let err = cp.undo_last_turn(9).unwrap_err();
    assert!(
        matches!(err, CheckpointError::NoCheckpointInTurn { turn: 9 }),
        "{err}"
    );
}

#[test]
fn restore_paths_touches_only_the_paths_named() {
    let f = fixture();
    f.write("a.txt", "a0\n");
    f.write("b.txt", "b0\n");
    f.write("d[1].txt", "literal name\n");
    let cp = f.open(Limits::default());
    let before = cp.snapshot(&label(1, Some("plan_step"))).unwrap();
    // Two steps ran side by side: one changed a.txt, created new/c.txt and deleted
    // d[1].txt; the other changed b.txt and created d1.txt.
    f.write("a.txt", "a1\n");
    f.write("new/c.txt", "c\n");
    f.write("b.txt", "b1\n");
    f.write("d1.txt", "matches the pattern d[1].txt\n");
    fs::remove_file(f.ws.join("d[1].txt")).unwrap();

    let paths: Vec<String> = ["a.txt", "new/c.txt", "d[1].txt", "never-existed.txt"]
        .map(str::to_owned)
        .to_vec();
    let report = cp.restore_paths(before.id, &paths).unwrap();
    assert_eq!(report.restored, ["a.txt", "d[1].txt"]);
    assert_eq!(report.deleted, ["new/c.txt"]);
    assert_eq!(f.read("a.txt").as_deref(), Some("a0\n"));
    assert_eq!(f.read("d[1].txt").as_deref(), Some("literal name\n"));
    assert!(!f.ws.join("new").exists(), "the emptied directory is gone");
    assert_eq!(f.read("b.txt").as_deref(), Some("b1\n"), "not named: kept");
    assert_eq!(
        f.read("d1.txt").as_deref(),
        Some("matches the pattern d[1].txt\n"),
        "paths are names, not patterns"
    );

    // The next snapshot sees the workspace as it is (the siblings' files included), and
    // the safety snapshot undoes the partial restore.
    let after = cp.snapshot(&label(2, Some("write_file"))).unwrap();
    cp.restore(report.safety_snapshot).unwrap();
    assert_eq!(f.read("a.txt").as_deref(), Some("a1\n"));
    cp.restore(after.id).unwrap();
    assert_eq!(f.read("a.txt").as_deref(), Some("a0\n"));
    assert_eq!(f.read("b.txt").as_deref(), Some("b1\n"));
    assert_eq!(f.read("new/c.txt"), None);
    let err = cp.restore_paths(99, &paths).unwrap_err();
    assert!(
        matches!(err, CheckpointError::UnknownId { id: 99 }),
        "{err}"
    );
}

#[test]
fn changed_between_lists_what_happened_between_two_snapshots() {
    let f = fixture();
    f.write("kept.txt", "k\n");
    f.write("edited.txt", "e0\n");
    f.write("gone.txt", "g\n");
    let cp = f.open(Limits::default());
    let before = cp.snapshot_quick(&label(3, Some("bash"))).unwrap();
    // What one command did: an edit, a new file in a new directory, a deletion.
    f.write("edited.txt", "e1\n");
    f.write("out/new.txt", "n\n");
    fs::remove_file(f.ws.join("gone.txt")).unwrap();
    let after = cp.snapshot_quick(&label(3, None)).unwrap();
    assert_ne!(before.id, after.id);
    assert_eq!(
        cp.changed_between(before.id, after.id).unwrap(),
        ["edited.txt", "gone.txt", "out/new.txt"]
    );

    // A command that changed nothing: the snapshot after it is the one before it, and
    // finding that out starts no git process.
    let (unchanged, spent) = {
        let start = cp.git_calls();
        let again = cp.snapshot_quick(&label(3, None)).unwrap();
        let changed = cp.changed_between(after.id, again.id).unwrap();
        (changed, cp.git_calls() - start)
    };
    assert!(unchanged.is_empty());
    assert_eq!(spent, 0);

    // Another handle (a stale list) finds both ids by reading the list again.
    f.write("kept.txt", "k1\n");
    let later = f
        .open(Limits::default())
        .snapshot_quick(&label(4, None))
        .unwrap();
    assert_eq!(
        cp.changed_between(after.id, later.id).unwrap(),
        ["kept.txt"]
    );
    let err = cp.changed_between(99, after.id).unwrap_err();
    assert!(
        matches!(err, CheckpointError::UnknownId { id: 99 }),
        "{err}"
    );
}

#[test]
fn size_cap_disables_checkpoints_loudly() {
    let f = fixture();
    f.write("big.txt", &"x".repeat(4096));
    let cp = f.open(Limits {
        max_workspace_bytes: 1024,
        ..Limits::default()
    });
    let err = cp.snapshot(&label(1, None)).unwrap_err();
    assert!(matches!(err, CheckpointError::Disabled { .. }), "{err}");
    assert!(err.to_string().contains("CHECKPOINTS ARE OFF"), "{err}");
    assert!(cp.list(5).unwrap().is_empty());
}

#[test]
fn size_cap_holds_for_snapshots_the_watcher_serves() {
    let f = fixture();
    f.write("small.txt", "x");
    let cp = f.open(Limits {
        max_workspace_bytes: 1024,
        ..Limits::default()
    });
    cp.snapshot(&label(1, None)).unwrap();
    f.write("small.txt", "edited");
    let watched = cp.snapshot(&label(1, None)).unwrap();
    assert!(watched.scan.starts_with("watcher"), "{}", watched.scan);
    // Edits that add up past the cap, each below it: the bound of the bytes written since
    // the walk passes it, the snapshot walks, and the walk refuses.
    f.write("a.txt", &"a".repeat(600));
    cp.snapshot(&label(1, None)).unwrap();
    f.write("b.txt", &"b".repeat(600));
    let err = cp.snapshot(&label(1, None)).unwrap_err();
    assert!(matches!(err, CheckpointError::Disabled { .. }), "{err}");
    // Back under the cap: snapshots again.
    fs::remove_file(f.ws.join("b.txt")).unwrap();
    cp.snapshot(&label(1, None)).unwrap();
}

#[test]
fn old_snapshots_are_pruned_and_unknown_ids_are_reported() {
    let f = fixture();
    let cp = f.open(Limits {
        max_snapshots: 3,
        ..Limits::default()
    });
    for i in 0..5 {
        f.write("a.txt", &format!("{i}\n"));
        cp.snapshot(&label(1, None)).unwrap();
    }
    let ids: Vec<u32> = cp.list(10).unwrap().iter().map(|s| s.id).collect();
    assert_eq!(ids, [5, 4, 3]);
    let listed = cp.list(10).unwrap();
    assert_eq!(listed[0].files_changed, ["a.txt"]);
    assert!(
        listed[2].files_changed.is_empty(),
        "oldest kept has no predecessor"
    );
    let err = cp.restore(1).unwrap_err();
    assert_eq!(err.to_string(), "no checkpoint 1; /restore list shows them");
    assert_eq!(
        f.read("a.txt").as_deref(),
        Some("4\n"),
        "a failed restore changes nothing"
    );
}

#[test]
fn reopening_finds_the_same_side_repository() {
    let f = fixture();
    f.write("a.txt", "a\n");
    let first = f.open(Limits::default());
    first.snapshot(&label(1, None)).unwrap();
    let again = f.open(Limits::default());
    assert_eq!(again.side_repo(), first.side_repo());
    assert_eq!(again.list(5).unwrap().len(), 1);
    assert!(first.side_repo().starts_with(f.data.join("checkpoints")));
}

#[test]
fn a_snapshots_text_is_read_back_for_the_paths_asked() {
    let f = fixture();
    f.write("src/a.py", "def kept():\n    pass\n");
    f.write("b with space.txt", "spaced\n");
    let cp = f.open(Limits::default());
    let snap = cp.snapshot(&label(1, Some("write_file"))).unwrap();
    f.write("src/a.py", "changed\n");
    let read = cp
        .read_at(
            snap.id,
            &[
                "src/a.py".to_owned(),
                "b with space.txt".to_owned(),
                "never.txt".to_owned(),
            ],
        )
        .unwrap();
    assert_eq!(
        read.get("src/a.py").map(String::as_str),
        Some("def kept():\n    pass\n")
    );
    assert_eq!(
        read.get("b with space.txt").map(String::as_str),
        Some("spaced\n")
    );
    assert!(!read.contains_key("never.txt"));
}

/// Loose objects written into the side repository (borrowed ones are not among them).
fn loose_objects(side: &Path) -> usize {
    fs::read_dir(side.join("objects"))
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().len() == 2)
        .map(|e| fs::read_dir(e.path()).unwrap().count())
        .sum()
}

#[test]
fn a_git_workspace_is_snapshotted_from_the_users_index_without_rehashing_it() {
    let f = fixture();
    f.git(&["init", "-q"]);
    for i in 0..40 {
        f.write(
            &format!("src/m{}/f{i}.txt", i % 4),
            &format!("committed {i}\n"),
        );
    }
    f.write("staged.txt", "v1\n");
    f.write("unstaged.txt", "v1\n");
    f.git(&["add", "-A"]);
    f.git(&["commit", "-q", "-m", "init"]);
    f.write("staged.txt", "v2 staged\n");
    f.git(&["add", "staged.txt"]);
    f.write("unstaged.txt", "v2 unstaged\n");
    f.write("untracked.txt", "new\n");
    // Out of git's racy window, as a checkout usually is: its stat data is then trusted.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let git_before = dump(&f.ws.join(".git"));
    let status_before = f.git(&["status", "--porcelain", "--untracked-files=all"]);
    let before = dump(&f.ws);

    let cp = f.open(Limits::default());
    let first = cp.snapshot(&label(1, None)).unwrap();
    let side = cp.side_repo().to_path_buf();
    let alternates = fs::read_to_string(side.join("objects/info/alternates")).unwrap();
    assert!(
        alternates.trim_end().ends_with("/.git/objects"),
        "{alternates}"
    );
    // Only what differs from the user's index was hashed: the unstaged and untracked files,
    // the trees above them and the commit (the staged blob is the user's).
    let written = loose_objects(&side);
    assert!(written <= 5, "{written} objects written for 43 files");

    f.write("unstaged.txt", "by the agent\n");
    f.write("src/m1/f1.txt", "by the agent\n");
    fs::remove_file(f.ws.join("staged.txt")).unwrap();
    f.write("created.txt", "by the agent\n");
    cp.snapshot(&label(1, Some("bash"))).unwrap();
    cp.restore(first.id).unwrap();
    let mut restored = dump(&f.ws);
    restored.retain(|p, _| !p.starts_with(f.ws.join(".git")));
    let mut expected = before;
    expected.retain(|p, _| !p.starts_with(f.ws.join(".git")));
    assert_eq!(restored, expected);
    assert_eq!(
        dump(&f.ws.join(".git")),
        git_before,
        ".git must be byte-identical"
    );
    assert_eq!(
        f.git(&["status", "--porcelain", "--untracked-files=all"]),
        status_before
    );

    // A collection copies what snapshots borrow: they survive the user's repository going away.
    cp.collect().unwrap();
    fs::rename(f.ws.join(".git"), f.data.join("moved-git")).unwrap();
    f.write("src/m2/f2.txt", "changed again\n");
    cp.restore(first.id).unwrap();
    assert_eq!(f.read("src/m2/f2.txt").as_deref(), Some("committed 2\n"));
    assert_eq!(f.read("staged.txt").as_deref(), Some("v2 staged\n"));
}
