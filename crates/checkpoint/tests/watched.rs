//! Snapshots taken from the file watcher's list of changed paths hold exactly what a walk of
//! the whole workspace would find, and fall back to that walk whenever the watcher cannot
//! vouch for what changed: real git, real inotify, real temp workspaces.
// Tests fail loudly on setup errors; workspace lints deny these outside #[test] functions.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![cfg(target_os = "linux")]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use atto_checkpoint::{Checkpoints, Limits, Snapshot, SnapshotLabel};
use tempfile::TempDir;

struct Fixture {
    root: TempDir,
    ws: PathBuf,
}

fn fixture() -> Fixture {
    let root = tempfile::tempdir().unwrap();
    let ws = root.path().join("ws");
    fs::create_dir_all(&ws).unwrap();
    let f = Fixture { root, ws };
    f.write(".gitignore", "*.log\nbuild/\n");
    for i in 0..30 {
        f.write(&format!("src/m{}/f{i}.txt", i % 3), &format!("file {i}\n"));
    }
    f.write("lonely/only.txt", "alone\n");
    fs::create_dir_all(f.ws.join("empty/inner")).unwrap();
    f
}

impl Fixture {
    /// Watches from the first file on, so these small workspaces take the watcher's path.
    fn open(&self, data: &str) -> Checkpoints {
        let limits = Limits {
            watch_from_files: 0,
            // A loaded test machine can keep the daemon's thread from answering in 300 ms;
            // these tests are about what it answers.
            daemon_timeout: std::time::Duration::from_secs(20),
            ..Limits::default()
        };
        Checkpoints::open(&self.root.path().join(data), &self.ws, limits).unwrap()
    }
    fn write(&self, path: &str, text: &str) {
        let full = self.ws.join(path);
        fs::create_dir_all(full.parent().unwrap()).unwrap();
        fs::write(full, text).unwrap();
    }
    fn git(&self, side: &Path, args: &[&str]) -> String {
        let mut cmd = Command::new("git");
        cmd.arg(format!("--git-dir={}", side.display())).args(args);
        checked(cmd)
    }
    /// A snapshot's tree and recorded empty directories.
    fn state(&self, cp: &Checkpoints, s: &Snapshot) -> (String, Vec<String>) {
        let side = cp.side_repo();
        let tree = self.git(side, &["rev-parse", &format!("{}^{{tree}}", s.commit)]);
        let message = self.git(side, &["log", "-1", "--format=%B", &s.commit]);
        let dirs = message
            .lines()
            .filter(|l| l.starts_with("atto-empty-dir: "))
            .map(str::to_owned)
            .collect();
        (tree.trim().to_owned(), dirs)
    }
    /// What a walk of the whole workspace finds now: a snapshot in a fresh data dir.
    fn walked(&self, n: usize) -> (String, Vec<String>) {
        let cp = self.open(&format!("fresh{n}"));
        let s = cp.snapshot(&label(1)).unwrap();
        assert!(s.scan.starts_with("walk"), "{}", s.scan);
        self.state(&cp, &s)
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
fn file_changes_are_recorded_from_the_watcher_exactly_as_a_walk_would() {
    let f = fixture();
    let cp = f.open("data");
    let first = cp.snapshot(&label(1)).unwrap();
    assert!(
        first.scan.starts_with("walk (first snapshot"),
        "{}",
        first.scan
    );

    // Edit, create, delete and rename files; an ignored file changes too.
    f.write("src/m0/f0.txt", "edited\n");
    f.write("src/m1/new.txt", "created\n");
    fs::remove_file(f.ws.join("src/m2/f2.txt")).unwrap();
    fs::rename(f.ws.join("src/m1/f1.txt"), f.ws.join("src/m0/renamed.txt")).unwrap();
    f.write("src/m0/debug.log", "ignored\n");
    // The last file of a directory goes: the directory stays, empty.
    fs::remove_file(f.ws.join("lonely/only.txt")).unwrap();
    let second = cp.snapshot(&label(1)).unwrap();
    // Seven paths reported, the ignored one among them: git leaves that one out.
    assert_eq!(second.scan, "watcher (7 paths)");
    let mut changed = second.files_changed.clone();
    changed.sort();
    assert_eq!(
        changed,
        [
            "lonely/only.txt",
            "src/m0/f0.txt",
            "src/m0/renamed.txt",
            "src/m1/f1.txt",
            "src/m1/new.txt",
            "src/m2/f2.txt"
        ]
    );
    assert_eq!(f.state(&cp, &second), f.walked(1));

    // Nothing changed: no new snapshot, no git.
    let calls = cp.git_calls();
    assert_eq!(cp.snapshot_quick(&label(1)).unwrap().id, second.id);
    assert_eq!(cp.git_calls(), calls);
    // A file comes back into the empty directory; an ignored one leaves another empty.
    f.write("lonely/back.txt", "back\n");
    f.write("empty/inner/note.log", "ignored\n");
    let third = cp.snapshot(&label(1)).unwrap();
    assert_eq!(third.scan, "watcher (2 paths)");
    assert_eq!(f.state(&cp, &third), f.walked(2));

    cp.restore(first.id).unwrap();
    assert_eq!(
        fs::read_to_string(f.ws.join("src/m1/f1.txt")).unwrap(),
        "file 1\n"
    );
    assert!(!f.ws.join("src/m0/renamed.txt").exists());
    assert!(!f.ws.join("lonely/back.txt").exists());
    assert_eq!(f.state(&cp, &first), f.walked(3));
    cp.restore(third.id).unwrap();
    assert_eq!(f.state(&cp, &third), f.walked(4));
}

#[test]
fn directory_changes_and_an_overflow_fall_back_to_a_walk() {
    let f = fixture();
    let cp = f.open("data");
    let first = cp.snapshot(&label(1)).unwrap();

    // What a `bash` command does: directories created, removed and renamed.
    fs::create_dir_all(f.ws.join("src/m0/deep/er")).unwrap();
    f.write("src/m0/deep/er/x.txt", "x\n");
    fs::rename(f.ws.join("src/m1"), f.ws.join("src/m9")).unwrap();
    fs::remove_dir_all(f.ws.join("empty")).unwrap();
    fs::create_dir_all(f.ws.join("build/out")).unwrap();
    let second = cp.snapshot(&label(1)).unwrap();
    assert_eq!(
        second.scan,
        "walk (a directory was created, removed or moved)"
    );
    assert_eq!(f.state(&cp, &second), f.walked(1));

    // The walk re-armed the watcher, new directories included.
    f.write("src/m0/deep/er/x.txt", "changed\n");
    f.write("src/m9/f1.txt", "changed\n");
    let third = cp.snapshot(&label(1)).unwrap();
    assert_eq!(third.scan, "watcher (2 paths)");
    assert_eq!(f.state(&cp, &third), f.walked(2));

    // More events than the kernel queues: the watcher says so and the walk takes over.
    let limit: usize = fs::read_to_string("/proc/sys/fs/inotify/max_queued_events")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(16_384);
    for i in 0..=limit / 2 + 1 {
        f.write("src/m0/a.txt", &i.to_string());
        f.write("src/m2/b.txt", &i.to_string());
    }
    let fourth = cp.snapshot(&label(1)).unwrap();
    assert_eq!(fourth.scan, "walk (the watcher's event queue overflowed)");
    assert_eq!(f.state(&cp, &fourth), f.walked(3));
    f.write(".gitignore", "*.log\n");
    let fifth = cp.snapshot(&label(1)).unwrap();
    assert_eq!(fifth.scan, "walk (a .gitignore changed)");
    assert_eq!(f.state(&cp, &fifth), f.walked(4));

    cp.restore(first.id).unwrap();
    assert_eq!(f.state(&cp, &first), f.walked(5));
    assert!(f.ws.join("src/m1/f1.txt").exists() && !f.ws.join("src/m9").exists());
    assert!(f.ws.join("empty/inner").is_dir());
}

#[test]
fn a_new_process_walks_once_then_watches() {
    let f = fixture();
    f.open("data").snapshot(&label(1)).unwrap();
    f.write("src/m0/f0.txt", "between processes\n");
    let cp = f.open("data");
    let first = cp.snapshot(&label(2)).unwrap();
    assert!(
        first.scan.starts_with("walk (first snapshot"),
        "{}",
        first.scan
    );
    assert_eq!(f.state(&cp, &first), f.walked(1));
    f.write("src/m0/f3.txt", "in this process\n");
    let second = cp.snapshot(&label(2)).unwrap();
    assert_eq!(second.scan, "watcher (1 paths)");
    assert_eq!(f.state(&cp, &second), f.walked(2));
}

#[test]
fn a_walk_names_what_differs_from_the_index_and_falls_back_to_a_scan_when_git_cannot() {
    let f = fixture();
    f.open("data").snapshot(&label(1)).unwrap();
    // Between processes: edits, a deletion, new files, and a file that became a directory.
    f.write("src/m0/f0.txt", "edited\n");
    fs::remove_file(f.ws.join("src/m1/f1.txt")).unwrap();
    f.write("src/m2/new.txt", "new\n");
    f.write("src/m2/new.log", "ignored\n");
    let cp = f.open("data");
    let second = cp.snapshot(&label(2)).unwrap();
    assert_eq!(f.state(&cp, &second), f.walked(1));
    fs::remove_file(f.ws.join("src/m0/f3.txt")).unwrap();
    fs::create_dir(f.ws.join("src/m0/f3.txt")).unwrap();
    f.write("src/m0/f3.txt/inner.txt", "inside\n");
    let cp = f.open("data");
    let third = cp.snapshot(&label(3)).unwrap();
    assert_eq!(f.state(&cp, &third), f.walked(2));
    cp.restore(second.id).unwrap();
    assert_eq!(
        fs::read_to_string(f.ws.join("src/m0/f3.txt")).unwrap(),
        "file 3\n"
    );
    assert_eq!(f.state(&cp, &second), f.walked(3));
}

#[test]
fn git_is_asked_for_untracked_files_only_when_the_walk_met_one() {
    let f = fixture();
    f.open("data").snapshot(&label(1)).unwrap();
    f.write("src/m0/f0.txt", "edited\n");
    let cp = f.open("data");
    let before = cp.git_calls();
    let edited = cp.snapshot(&label(2)).unwrap();
    let edit_calls = cp.git_calls() - before;
    assert_eq!(f.state(&cp, &edited), f.walked(1));

    f.write("src/m1/f1.txt", "edited too\n");
    f.write("src/m2/new.txt", "new\n");
    f.write("src/m2/new.log", "ignored\n");
    let cp = f.open("data");
    let before = cp.git_calls();
    let added = cp.snapshot(&label(3)).unwrap();
    assert_eq!(
        cp.git_calls() - before,
        edit_calls + 1,
        "one more git process: check-ignore"
    );
    assert_eq!(f.state(&cp, &added), f.walked(2));
    let side = cp.side_repo();
    let listed = f.git(side, &["ls-tree", "-r", "--name-only", &added.commit]);
    assert!(listed.contains("src/m2/new.txt") && !listed.contains("new.log"));
}

/// A watch daemon for the side repository of `cp`, on a thread of this test, with `idle`;
/// returns once it answers.
fn daemon(
    f: &Fixture,
    cp: &Checkpoints,
    idle: std::time::Duration,
) -> std::thread::JoinHandle<atto_checkpoint::WatchStop> {
    let socket = cp.side_repo().join("atto-watch.sock");
    let start = std::time::Instant::now();
    let spawn = || {
        let (side, ws) = (cp.side_repo().to_path_buf(), f.ws.clone());
        let options = atto_checkpoint::WatchOptions {
            idle,
            ..Default::default()
        };
        std::thread::spawn(move || atto_checkpoint::run_watch_daemon(&side, &ws, options).unwrap())
    };
    let mut handle = spawn();
    while !socket.exists() {
        assert!(start.elapsed().as_secs() < 20, "the daemon never listened");
        if handle.is_finished() {
            match handle.join() {
                // The lock of a daemon that stopped can live on for a moment in a process
                // another test thread is starting (between its fork and its exec, the child
                // holds a copy of every descriptor). Daemons in processes of their own do
                // not share descriptors.
                Ok(atto_checkpoint::WatchStop::AlreadyRunning) => handle = spawn(),
                other => panic!("the daemon stopped before it listened: {other:?}"),
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    handle
}

#[test]
fn a_new_process_asks_the_watch_daemon_instead_of_walking() {
    let f = fixture();
    let cp = f.open("data");
    let long = std::time::Duration::from_secs(60);
    let running = daemon(&f, &cp, long);
    // The first process walks (there is no record yet) and leaves one.
    let first = cp.snapshot(&label(1)).unwrap();
    assert!(
        first.scan.starts_with("walk (first snapshot"),
        "{}",
        first.scan
    );
    drop(cp);

    // Between processes: an edit, a new file, a deletion, an ignored file.
    f.write("src/m0/f0.txt", "between processes\n");
    f.write("src/m1/new.txt", "new\n");
    fs::remove_file(f.ws.join("src/m2/f2.txt")).unwrap();
    f.write("src/m0/x.log", "ignored\n");
    let cp = f.open("data");
    let before = cp.git_calls();
    let second = cp.snapshot_quick(&label(2)).unwrap();
    assert_eq!(second.scan, "watch daemon (4 paths)");
    // The list, the base's trees above the paths (one `cat-file`), which new files no ignore
    // rule covers (`check-ignore`), commit-tree and update-ref. The new trees are written
    // without git and no index is read: no update-index, write-tree or read-tree.
    assert_eq!(cp.git_calls() - before, 5);
    assert_eq!(f.state(&cp, &second), f.walked(1));
    // Later snapshots of that process ask the daemon too.
    f.write("src/m1/f1.txt", "in this process\n");
    let third = cp.snapshot(&label(2)).unwrap();
    assert_eq!(third.scan, "watch daemon (1 paths)");
    assert_eq!(f.state(&cp, &third), f.walked(2));
    // Restores write files; the daemon reports them like any other change.
    cp.restore(first.id).unwrap();
    assert_eq!(f.state(&cp, &first), f.walked(3));
    drop(cp);
    let cp = f.open("data");
    let after_restore = cp.snapshot(&label(3)).unwrap();
    assert!(
        after_restore.scan.starts_with("watch daemon"),
        "{}",
        after_restore.scan
    );
    assert_eq!(f.state(&cp, &after_restore), f.walked(4));

    // A directory created: the daemon lost track and stops; the next process walks.
    fs::create_dir(f.ws.join("src/m0/newdir")).unwrap();
    f.write("src/m0/newdir/inner.txt", "inner\n");
    let stop = running.join().unwrap();
    assert_eq!(
        stop,
        atto_checkpoint::WatchStop::Lost("a directory was created, removed or moved".into())
    );
    assert!(!cp.side_repo().join("atto-watch.sock").exists());
    drop(cp);
    let cp = f.open("data");
    let walked = cp.snapshot(&label(4)).unwrap();
    assert!(
        walked.scan.starts_with("walk (first snapshot"),
        "{}",
        walked.scan
    );
    assert_eq!(f.state(&cp, &walked), f.walked(5));
}

#[test]
fn a_restarted_daemon_or_an_idle_one_is_not_trusted_for_what_it_did_not_see() {
    let f = fixture();
    let cp = f.open("data");
    let short = std::time::Duration::from_millis(300);
    let first_daemon = daemon(&f, &cp, short);
    cp.snapshot(&label(1)).unwrap();
    drop(cp);
    // Nobody asks: it stops when idle, and a change made while no daemon ran...
    assert_eq!(
        first_daemon.join().unwrap(),
        atto_checkpoint::WatchStop::Idle
    );
    f.write("src/m0/f0.txt", "while nobody watched\n");
    // ...is not lost when a new daemon starts: its points are not the old one's.
    let cp = f.open("data");
    let second_daemon = daemon(&f, &cp, std::time::Duration::from_secs(60));
    let second = cp.snapshot(&label(2)).unwrap();
    assert_eq!(
        second.scan,
        "walk (the watch daemon cannot tell: the watch daemon restarted)"
    );
    assert_eq!(f.state(&cp, &second), f.walked(1));
    // Its socket removed (the side repository deleted, say): it stops.
    fs::remove_file(cp.side_repo().join("atto-watch.sock")).unwrap();
    assert_eq!(
        second_daemon.join().unwrap(),
        atto_checkpoint::WatchStop::Gone
    );
}

#[test]
fn modes_links_deep_paths_and_gits_order_are_recorded_from_the_watcher_exactly_as_a_walk_would() {
    use std::os::unix::fs::PermissionsExt as _;
    let f = fixture();
    // Names that sort differently as files and as directories ("a.b" < "a/" < "a0"), a deep
    // file, a script and a link.
    f.write("src/a.b", "dot\n");
    f.write("src/a/x.txt", "in a\n");
    f.write("src/a0", "zero\n");
    f.write("d1/d2/d3/d4/leaf.txt", "leaf\n");
    f.write("d1/d2/d3/d4/other.txt", "other\n");
    f.write("run.sh", "#!/bin/sh\n");
    std::os::unix::fs::symlink("src/a.b", f.ws.join("link")).unwrap();
    let cp = f.open("data");
    let first = cp.snapshot(&label(1)).unwrap();

    fs::set_permissions(f.ws.join("run.sh"), fs::Permissions::from_mode(0o755)).unwrap();
    fs::remove_file(f.ws.join("link")).unwrap();
    std::os::unix::fs::symlink("src/a0", f.ws.join("link")).unwrap();
    std::os::unix::fs::symlink("../run.sh", f.ws.join("src/new-link")).unwrap();
    f.write("src/a/y.txt", "new in a\n");
    f.write("src/a.b", "dot edited\n");
    f.write("d1/d2/d3/d4/leaf.txt", "leaf edited\n");
    fs::remove_file(f.ws.join("d1/d2/d3/d4/other.txt")).unwrap();
    f.write("tool", "#!/bin/sh\n");
    fs::set_permissions(f.ws.join("tool"), fs::Permissions::from_mode(0o700)).unwrap();
    let second = cp.snapshot(&label(2)).unwrap();
    assert!(second.scan.starts_with("watcher ("), "{}", second.scan);
    assert_eq!(f.state(&cp, &second), f.walked(1));

    // The trees along these paths were read or written by the last snapshot and are kept:
    // only commit-tree and update-ref run.
    f.write("d1/d2/d3/d4/leaf.txt", "leaf edited again\n");
    f.write("src/a/x.txt", "a edited\n");
    let before = cp.git_calls();
    let third = cp.snapshot_quick(&label(3)).unwrap();
    assert_eq!(third.scan, "watcher (2 paths)");
    assert_eq!(cp.git_calls() - before, 2);
    assert_eq!(f.state(&cp, &third), f.walked(2));

    // The last file of a deep directory goes: the trees above it go too, and the directory
    // stays as an empty one.
    fs::remove_file(f.ws.join("d1/d2/d3/d4/leaf.txt")).unwrap();
    let fourth = cp.snapshot(&label(4)).unwrap();
    assert!(fourth.scan.starts_with("watcher ("), "{}", fourth.scan);
    assert_eq!(f.state(&cp, &fourth), f.walked(3));

    cp.restore(first.id).unwrap();
    assert_eq!(f.state(&cp, &first), f.walked(4));
    assert_eq!(
        fs::read_link(f.ws.join("link")).unwrap(),
        PathBuf::from("src/a.b")
    );
    assert_eq!(
        fs::read_to_string(f.ws.join("d1/d2/d3/d4/other.txt")).unwrap(),
        "other\n"
    );
    cp.restore(second.id).unwrap();
    assert_eq!(f.state(&cp, &second), f.walked(5));
    let mode = fs::metadata(f.ws.join("tool"))
        .unwrap()
        .permissions()
        .mode();
    assert_ne!(mode & 0o100, 0, "{mode:o}");
}

/// The tree `git add -A` makes of the workspace, in a repository of its own (so that neither
/// the user's repository nor the side repository is involved).
fn reference_tree(f: &Fixture) -> String {
    let git_dir = f.root.path().join("reference.git");
    let index = f.root.path().join("reference.index");
    let _ = fs::remove_file(&index);
    let git = |args: &[&str]| {
        let mut cmd = Command::new("git");
        cmd.arg(format!("--git-dir={}", git_dir.display()))
            .arg(format!("--work-tree={}", f.ws.display()))
            .env("GIT_INDEX_FILE", &index)
            .args(args)
            .current_dir(&f.ws);
        checked(cmd).trim().to_owned()
    };
    if !git_dir.exists() {
        let mut cmd = Command::new("git");
        cmd.args(["init", "-q", "--bare"]).arg(&git_dir);
        checked(cmd);
    }
    git(&["add", "-A"]);
    git(&["write-tree"])
}

fn user_git(f: &Fixture, args: &[&str]) {
    let mut cmd = Command::new("git");
    cmd.args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(args)
        .current_dir(&f.ws);
    checked(cmd);
}

/// Runs `cmd`, failing the test unless it succeeds; its stdout.
fn checked(mut cmd: Command) -> String {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn a_first_walk_in_a_git_workspace_edits_the_tree_of_the_users_index_instead_of_loading_it() {
    let f = fixture();
    user_git(&f, &["init", "-q"]);
    user_git(&f, &["add", "-A"]);
    user_git(&f, &["commit", "-qm", "base"]);
    // Out of the racy window, as a checkout some time ago would be.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let user_index = fs::read(f.ws.join(".git/index")).unwrap();
    // Unstaged changes: an edit, a deletion, a new file, an ignored one.
    f.write("src/m0/f0.txt", "edited, not staged\n");
    fs::remove_file(f.ws.join("src/m1/f1.txt")).unwrap();
    f.write("src/m2/new.txt", "untracked\n");
    f.write("src/m2/new.log", "ignored\n");
    let cp = f.open("data");
    let first = cp.snapshot_quick(&label(1)).unwrap();
    assert!(first.scan.starts_with("walk ("), "{}", first.scan);
    // The index's own tree, edited: one cat-file for the trees above the three paths, one
    // check-ignore for the new file, commit-tree and update-ref. No git process read the
    // index (update-index, write-tree or ls-files would have).
    assert_eq!(cp.git_calls(), 4);
    let (tree, _) = f.state(&cp, &first);
    assert_eq!(tree, reference_tree(&f));

    // Staged changes invalidate the index's tree: git updates the index as before.
    f.write("src/m0/f3.txt", "staged\n");
    user_git(&f, &["add", "src/m0/f3.txt"]);
    f.write("src/m0/f6.txt", "edited after\n");
    let cp = f.open("data2");
    let second = cp.snapshot_quick(&label(1)).unwrap();
    let (tree, _) = f.state(&cp, &second);
    assert_eq!(tree, reference_tree(&f));
    assert!(cp.git_calls() > 4, "{}", cp.git_calls());

    // Restoring the first snapshot brings the unstaged state back; the user's index is theirs.
    cp.restore(second.id).unwrap();
    let cp = f.open("data");
    cp.restore(first.id).unwrap();
    assert_eq!(
        fs::read_to_string(f.ws.join("src/m0/f0.txt")).unwrap(),
        "edited, not staged\n"
    );
    assert!(!f.ws.join("src/m1/f1.txt").exists());
    assert_ne!(
        fs::read(f.ws.join(".git/index")).unwrap(),
        user_index,
        "the user staged"
    );
    user_git(&f, &["diff", "--cached", "--quiet", "--", "src/m1"]);
}

#[test]
fn a_daemon_that_does_not_answer_costs_a_process_one_timeout_not_one_per_snapshot() {
    let f = fixture();
    let limits = Limits {
        watch_from_files: 0,
        daemon_timeout: std::time::Duration::from_millis(200),
        ..Limits::default()
    };
    let open = || Checkpoints::open(&f.root.path().join("data"), &f.ws, limits).unwrap();
    let cp = open();
    // A stuck daemon: it takes connections and never answers.
    let listener =
        std::os::unix::net::UnixListener::bind(cp.side_repo().join("atto-watch.sock")).unwrap();
    let taken = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    {
        let taken = std::sync::Arc::clone(&taken);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                taken.lock().unwrap().push(stream);
            }
        });
    }
    let connections = || taken.lock().unwrap().len();
    let first = cp.snapshot(&label(1)).unwrap();
    assert!(first.scan.starts_with("walk"), "{}", first.scan);
    assert_eq!(connections(), 1);
    for turn in 2..5 {
        f.write("src/m0/f0.txt", &format!("turn {turn}\n"));
        let later = cp.snapshot(&label(turn)).unwrap();
        assert!(later.scan.starts_with("watcher ("), "{}", later.scan);
        assert_eq!(f.state(&cp, &later), f.walked(turn as usize - 2));
    }
    assert_eq!(connections(), 1, "not asked again by this process");
    drop(cp);
    // The next process tries once.
    let cp = open();
    cp.snapshot(&label(5)).unwrap();
    assert_eq!(connections(), 2);
}
