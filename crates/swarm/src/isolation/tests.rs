//! Worktree isolation's tests: snapshots, worktrees, merging back.

#![allow(clippy::unwrap_used)]

use super::*;
use crate::testing::sh;

/// `rel` as the commit `snap` holds it, or `None` when it holds no such file.
fn file_at(ws: &Path, snap: &str, rel: &str) -> Option<String> {
    let out = std::process::Command::new("git")
        .args(["show", &format!("{snap}:{rel}")])
        .current_dir(ws)
        .output()
        .unwrap();
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// A workspace: `a.txt` (three lines) and `b.txt` committed, `new.txt` untracked, an
/// ignored `venv/` (its `.gitignore` untracked).
pub(super) fn repo() -> tempfile::TempDir {
    crate::testing::git_repo(
        "printf 'one\\ntwo\\nthree\\n' > a.txt && echo keep > b.txt && git add . && \
         git commit -qm init && echo untracked > new.txt && mkdir venv && \
         echo 'venv/' > .gitignore && echo lib > venv/lib.py",
    )
}

/// Every directory a snapshot was taken of, in this test binary.
pub(super) static SNAPSHOTS_TAKEN: std::sync::Mutex<Vec<PathBuf>> =
    std::sync::Mutex::new(Vec::new());

fn snapshots_taken(dir: &Path) -> usize {
    let taken = SNAPSHOTS_TAKEN.lock().unwrap();
    taken.iter().filter(|d| *d == dir).count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn attempts_asking_for_a_snapshot_together_share_one_and_a_later_one_sees_changes() {
    let ws = repo();
    let scratch = tempfile::tempdir().unwrap();
    // Eight ask while a merge holds the workspace: the first snapshot begins after all
    // eight asked, so it serves every one.
    let merging = MERGING.lock().await;
    let asks: Vec<_> = (0..8)
        .map(|_| {
            let (ws, scratch) = (ws.path().to_owned(), scratch.path().to_owned());
            tokio::spawn(async move { snapshot(&ws, &scratch).await })
        })
        .collect();
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    drop(merging);
    let mut commits = Vec::new();
    for ask in asks {
        commits.push(ask.await.unwrap().unwrap());
    }
    assert!(commits.iter().all(|c| *c == commits[0]), "{commits:?}");
    assert_eq!(snapshots_taken(ws.path()), 1);
    assert_eq!(
        file_at(ws.path(), &commits[0], "new.txt").as_deref(),
        Some("untracked\n")
    );
    // Asked after a change (and after the last snapshot began): a snapshot of its own.
    std::fs::write(ws.path().join("new.txt"), "changed\n").unwrap();
    let later = snapshot(ws.path(), scratch.path()).await.unwrap();
    assert_ne!(later, commits[0]);
    assert_eq!(
        file_at(ws.path(), &later, "new.txt").as_deref(),
        Some("changed\n")
    );
    assert_eq!(snapshots_taken(ws.path()), 2);
}

/// A workspace ([`repo`]), its scratch directory, a snapshot of it and a worktree of that.
async fn fresh_worktree() -> (tempfile::TempDir, tempfile::TempDir, String, Worktree) {
    let ws = repo();
    let scratch = tempfile::tempdir().unwrap();
    let base = snapshot(ws.path(), scratch.path()).await.unwrap();
    let tree = create(ws.path(), &base, &scratch.path().join("wt"))
        .await
        .unwrap();
    (ws, scratch, base, tree)
}

#[tokio::test]
async fn a_worktree_starts_from_the_workspace_as_it_is_and_merges_back_on_request() {
    let ws = repo();
    let scratch = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.txt"), "one\ntwo\nthree\nfour\n").unwrap();
    let index_before = std::fs::read(ws.path().join(".git/index")).unwrap();
    let base = snapshot(ws.path(), scratch.path()).await.unwrap();
    let tree = create(ws.path(), &base, &scratch.path().join("wt"))
        .await
        .unwrap();
    // Uncommitted and untracked files are there; the ignored venv is linked.
    assert_eq!(
        std::fs::read_to_string(tree.dir.join("a.txt")).unwrap(),
        "one\ntwo\nthree\nfour\n"
    );
    assert_eq!(
        std::fs::read_to_string(tree.dir.join("new.txt")).unwrap(),
        "untracked\n"
    );
    assert!(tree.dir.join("venv/lib.py").exists());
    // The user's index did not move.
    assert_eq!(
        std::fs::read(ws.path().join(".git/index")).unwrap(),
        index_before
    );

    // The attempt edits line 1, deletes b.txt, adds c.txt and writes into the venv.
    std::fs::write(tree.dir.join("a.txt"), "ONE\ntwo\nthree\nfour\n").unwrap();
    std::fs::remove_file(tree.dir.join("b.txt")).unwrap();
    std::fs::write(tree.dir.join("c.txt"), "new\n").unwrap();
    let mut changes = changes(&tree, scratch.path()).await.unwrap();
    changes.sort_by(|a, b| a.path().cmp(b.path()));
    assert_eq!(
        changes,
        vec![
            Change::Write("a.txt".into()),
            Change::Delete("b.txt".into()),
            Change::Write("c.txt".into())
        ]
    );
    // Meanwhile the workspace changed line 3 of a.txt: both merge.
    std::fs::write(ws.path().join("a.txt"), "one\ntwo\nTHREE\nfour\n").unwrap();
    let written = merge_back(ws.path(), &tree, &changes, scratch.path())
        .await
        .unwrap();
    assert_eq!(written.len(), 3);
    assert_eq!(
        std::fs::read_to_string(ws.path().join("a.txt")).unwrap(),
        "ONE\ntwo\nTHREE\nfour\n"
    );
    assert!(!ws.path().join("b.txt").exists());
    assert_eq!(
        std::fs::read_to_string(ws.path().join("c.txt")).unwrap(),
        "new\n"
    );
    remove(ws.path(), &tree).await;
    assert!(!tree.dir.exists());
}

#[tokio::test]
async fn a_link_the_worker_left_is_never_followed_into_the_workspace() {
    let ws = repo();
    let scratch = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("id_rsa");
    std::fs::write(&secret, "PRIVATE KEY\n").unwrap();
    sh(
        ws.path(),
        "mkdir src && echo code > src/lib.rs && git add . && git commit -qm src",
    );
    let base = snapshot(ws.path(), scratch.path()).await.unwrap();
    let tree = create(ws.path(), &base, &scratch.path().join("wt"))
        .await
        .unwrap();
    // A new file and an existing one, each a link to a file outside.
    std::os::unix::fs::symlink(&secret, tree.dir.join("src/key.txt")).unwrap();
    std::fs::remove_file(tree.dir.join("src/lib.rs")).unwrap();
    std::os::unix::fs::symlink(&secret, tree.dir.join("src/lib.rs")).unwrap();
    std::fs::write(tree.dir.join("c.txt"), "new\n").unwrap();
    let changes = changes(&tree, scratch.path()).await.unwrap();
    let mut err = merge_back(ws.path(), &tree, &changes, scratch.path())
        .await
        .unwrap_err();
    err.sort();
    assert_eq!(err, vec!["src/key.txt", "src/lib.rs"]);
    assert!(!ws.path().join("src/key.txt").exists());
    assert!(!ws.path().join("c.txt").exists(), "all or nothing");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("src/lib.rs")).unwrap(),
        "code\n"
    );
}

#[tokio::test]
async fn a_merged_file_keeps_the_mode_the_worker_gave_it() {
    use std::os::unix::fs::PermissionsExt;
    let (ws, scratch, _, tree) = fresh_worktree().await;
    let script = tree.dir.join("run.sh");
    std::fs::write(&script, "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let changes = changes(&tree, scratch.path()).await.unwrap();
    merge_back(ws.path(), &tree, &changes, scratch.path())
        .await
        .unwrap();
    let mode = std::fs::metadata(ws.path().join("run.sh"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o755);
}

#[tokio::test]
async fn a_conflict_writes_nothing_and_names_the_file() {
    let (ws, scratch, _, tree) = fresh_worktree().await;
    std::fs::write(tree.dir.join("a.txt"), "uno\ntwo\nthree\n").unwrap();
    std::fs::write(tree.dir.join("c.txt"), "new\n").unwrap();
    std::fs::write(ws.path().join("a.txt"), "eins\ntwo\nthree\n").unwrap();
    let changes = changes(&tree, scratch.path()).await.unwrap();
    let err = merge_back(ws.path(), &tree, &changes, scratch.path())
        .await
        .unwrap_err();
    assert_eq!(err, vec!["a.txt"]);
    assert!(
        !ws.path().join("c.txt").exists(),
        "nothing is written on a conflict"
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("a.txt")).unwrap(),
        "eins\ntwo\nthree\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn attempts_merging_at_once_each_keep_their_lines() {
    let ws = tempfile::tempdir().unwrap();
    let lines: String = (0..8)
        .map(|i| format!("line{i}\nkeep{i}a\nkeep{i}b\n"))
        .collect();
    std::fs::write(ws.path().join("shared.txt"), &lines).unwrap();
    crate::testing::git_init(ws.path(), "git add . && git commit -qm init");
    let scratch = tempfile::tempdir().unwrap();
    let base = snapshot(ws.path(), scratch.path()).await.unwrap();
    let mut trees = Vec::new();
    for i in 0..8 {
        let tree = create(ws.path(), &base, &scratch.path().join(format!("wt{i}")))
            .await
            .unwrap();
        let mine = lines.replace(&format!("line{i}\n"), &format!("line{i} done\n"));
        std::fs::write(tree.dir.join("shared.txt"), mine).unwrap();
        trees.push(tree);
    }
    // Eight passed attempts merge back at the same moment, as the coordinator's jobs do.
    let mut jobs = tokio::task::JoinSet::new();
    for tree in trees {
        let ws = ws.path().to_path_buf();
        let scratch = scratch.path().to_path_buf();
        jobs.spawn(async move {
            let changes = changes(&tree, &scratch).await.unwrap();
            merge_back(&ws, &tree, &changes, &scratch).await.unwrap();
        });
    }
    while jobs.join_next().await.is_some() {}
    let merged = std::fs::read_to_string(ws.path().join("shared.txt")).unwrap();
    for i in 0..8 {
        assert!(
            merged.contains(&format!("line{i} done\n")),
            "line {i} lost:\n{merged}"
        );
    }
}

#[tokio::test]
async fn a_worktree_whose_git_file_names_another_repository_is_still_read_as_atto_made_it() {
    // A worker may rewrite its worktree's `.git` file to name another repository of
    // the user's: the coordinator's git runs there must neither read that repository
    // nor write objects into it.
    let ws = repo();
    let other = tempfile::tempdir().unwrap();
    sh(other.path(), "git init -q");
    let objects = || {
        std::process::Command::new("sh")
            .args(["-c", "find .git/objects -type f | wc -l"])
            .current_dir(other.path())
            .output()
            .unwrap()
            .stdout
    };
    let before = objects();
    let scratch = tempfile::tempdir().unwrap();
    let base = snapshot(ws.path(), scratch.path()).await.unwrap();
    let tree = create(ws.path(), &base, &scratch.path().join("wt"))
        .await
        .unwrap();
    std::fs::write(
        tree.dir.join(".git"),
        format!("gitdir: {}\n", other.path().join(".git").display()),
    )
    .unwrap();
    std::fs::write(tree.dir.join("c.txt"), "new\n").unwrap();
    let found = changes(&tree, scratch.path()).await.unwrap();
    assert_eq!(found, vec![Change::Write("c.txt".into())]);
    assert_eq!(
        objects(),
        before,
        "objects were written into the other repository"
    );
}

#[test]
fn an_error_names_the_git_command_not_its_options() {
    assert_eq!(
        subcommand(&["-c", "fetch.fsckObjects=true", "fetch", "-q"]),
        "fetch"
    );
    assert_eq!(subcommand(&["checkout", "-q"]), "checkout");
    assert_eq!(subcommand(&["-C", "dir", "--no-pager", "show"]), "show");
}

#[tokio::test]
async fn a_snapshot_of_a_sparse_checkout_keeps_the_files_outside_it() {
    // Files a sparse checkout leaves out of the working tree are still the project's:
    // a snapshot (an attempt's base, a remote worker's tree) holds them unchanged.
    let ws = crate::testing::git_repo(
        "mkdir -p here there && echo h > here/h.txt && echo t > there/t.txt && \
         echo top > top.txt && git add . && git commit -qm init && \
         git sparse-checkout set here && test ! -e there/t.txt && \
         echo changed > here/h.txt",
    );
    let scratch = tempfile::tempdir().unwrap();
    let snap = snapshot(ws.path(), scratch.path()).await.unwrap();
    let at = |rel: &str| file_at(ws.path(), &snap, rel);
    assert_eq!(at("there/t.txt").as_deref(), Some("t\n"));
    assert_eq!(at("here/h.txt").as_deref(), Some("changed\n"));
    assert_eq!(at("top.txt").as_deref(), Some("top\n"));
}

#[tokio::test]
async fn a_snapshot_takes_a_file_the_user_told_git_to_assume_unchanged_as_it_is() {
    // `git update-index --assume-unchanged` (or `--skip-worktree`) keeps a local edit out
    // of `git status`; the workers still work on the files as they are.
    let ws = repo();
    let scratch = tempfile::tempdir().unwrap();
    sh(
        ws.path(),
        "git update-index --assume-unchanged a.txt && echo local > a.txt && \
         git update-index --skip-worktree b.txt && echo mine > b.txt",
    );
    let snap = snapshot(ws.path(), scratch.path()).await.unwrap();
    let at = |rel: &str| file_at(ws.path(), &snap, rel);
    assert_eq!(at("a.txt").as_deref(), Some("local\n"));
    assert_eq!(at("b.txt").as_deref(), Some("mine\n"));
}

#[tokio::test]
async fn a_snapshot_sees_a_change_that_left_size_and_time_as_they_were() {
    // The snapshot starts from the workspace's own index (its stat data spares hashing
    // unchanged files): a file rewritten with the same size and then given back its
    // old time must still be read again, as git's own racy-entry check reads it.
    let ws = repo();
    let scratch = tempfile::tempdir().unwrap();
    let file = ws.path().join("b.txt");
    let before = std::fs::metadata(&file).unwrap().modified().unwrap();
    std::fs::write(&file, "KEEP\n").unwrap();
    std::fs::File::options()
        .write(true)
        .open(&file)
        .unwrap()
        .set_modified(before)
        .unwrap();
    let snap = snapshot(ws.path(), scratch.path()).await.unwrap();
    assert_eq!(
        file_at(ws.path(), &snap, "b.txt").as_deref(),
        Some("KEEP\n")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_snapshot_never_sees_a_file_half_merged() {
    let ws = tempfile::tempdir().unwrap();
    let old = "old line\n".repeat(400_000);
    let new = "new line\n".repeat(400_000);
    std::fs::write(ws.path().join("big.txt"), &old).unwrap();
    crate::testing::git_init(ws.path(), "git add . && git commit -qm init");
    let scratch = tempfile::tempdir().unwrap();
    for round in 0..6 {
        let (from, to) = if round % 2 == 0 {
            (&old, &new)
        } else {
            (&new, &old)
        };
        assert_eq!(
            &std::fs::read_to_string(ws.path().join("big.txt")).unwrap(),
            from
        );
        let base = snapshot(ws.path(), scratch.path()).await.unwrap();
        let tree = create(ws.path(), &base, &scratch.path().join(format!("wt{round}")))
            .await
            .unwrap();
        std::fs::write(tree.dir.join("big.txt"), to).unwrap();
        let found = changes(&tree, scratch.path()).await.unwrap();
        // Another attempt's snapshot is taken while this one merges.
        let merging = {
            let (ws, scratch) = (ws.path().to_path_buf(), scratch.path().to_path_buf());
            tokio::spawn(async move { merge_back(&ws, &tree, &found, &scratch).await })
        };
        let mut seen = Vec::new();
        while !merging.is_finished() {
            let snap = snapshot(ws.path(), scratch.path()).await.unwrap();
            let out = std::process::Command::new("git")
                .args(["show", &format!("{snap}:big.txt")])
                .current_dir(ws.path())
                .output()
                .unwrap();
            seen.push(out.stdout.len());
        }
        merging.await.unwrap().unwrap();
        assert!(
            seen.iter().all(|n| *n == old.len()),
            "a snapshot saw {seen:?} bytes, not the whole file ({})",
            old.len()
        );
    }
}

#[tokio::test]
async fn what_the_base_holds_is_read_for_every_path_in_one_run() {
    let ws = repo();
    sh(
        ws.path(),
        "mkdir dir && echo in > dir/f && printf 'x\\n' > 'two words' && \
         printf 'nl\\n' > \"$(printf 'line\\nbreak')\" && printf '' > empty && \
         git add -A && git commit -qm more",
    );
    let scratch = tempfile::tempdir().unwrap();
    let base = snapshot(ws.path(), scratch.path()).await.unwrap();
    let paths = [
        "a.txt",
        "missing.txt",
        "dir",
        "two words",
        "line\nbreak",
        "empty",
        "new.txt",
        "dir/f",
    ];
    let got = at_base(ws.path(), &base, &paths).await.unwrap();
    let want: Vec<Option<&[u8]>> = vec![
        Some(b"one\ntwo\nthree\n"),
        None,
        None,
        Some(b"x\n"),
        Some(b"nl\n"),
        Some(b""),
        Some(b"untracked\n"),
        Some(b"in\n"),
    ];
    assert_eq!(
        got,
        want.into_iter()
            .map(|c| c.map(<[u8]>::to_vec))
            .collect::<Vec<_>>()
    );
}
