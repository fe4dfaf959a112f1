//! The coordinator side's tests: the base published, results stored and checked out.

#![allow(clippy::unwrap_used)]

use super::*;
use crate::isolation;
use crate::testing::sh;

fn repo() -> tempfile::TempDir {
    crate::testing::git_repo(
        "printf 'one\\ntwo\\nthree\\n' > a.txt && git add . && git commit -qm init && \
         echo untracked > new.txt",
    )
}

/// What a worker does with a bundle: clone, change, commit, bundle the branch.
fn work_remotely(base: &Base, branch: &str, script: &str) -> ResultEvent {
    let remote = tempfile::tempdir().unwrap();
    let b = base.bundle.display();
    sh(
        remote.path(),
        &format!(
            "git init -q && git bundle unbundle {b} >/dev/null && \
             git checkout -q -b {branch} {c} && git config user.email w@x && \
             git config user.name w && {script} && git add -A && git commit -qm work && \
             git bundle create -q out.bundle refs/heads/{branch} ^{c}",
            c = base.commit
        ),
    );
    let commit = std::process::Command::new("git")
        .args(["rev-parse", "HEAD"])
        .current_dir(remote.path())
        .output()
        .unwrap();
    ResultEvent {
        branch: branch.to_owned(),
        commit: String::from_utf8(commit.stdout).unwrap().trim().to_owned(),
        bundle: base64::engine::general_purpose::STANDARD
            .encode(std::fs::read(remote.path().join("out.bundle")).unwrap()),
    }
}

/// Every bundle file packed, in this test binary.
pub(super) static PACKED: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn attempts_asking_for_the_same_base_at_once_have_it_packed_once() {
    let ws = repo();
    let scratch = tempfile::tempdir().unwrap();
    let snap = isolation::snapshot(ws.path(), scratch.path())
        .await
        .unwrap();
    let commit = base_commit(ws.path(), &snap).await.unwrap();
    let asks = (0..8).map(|_| {
        let (ws, scratch, commit) = (
            ws.path().to_owned(),
            scratch.path().to_owned(),
            commit.clone(),
        );
        tokio::spawn(async move { bundle_for(&ws, &commit, &[], &scratch).await })
    });
    // Spawned before any is awaited: all eight ask at once.
    let asks: Vec<_> = asks.collect();
    let mut bundles = Vec::new();
    for ask in asks {
        bundles.push(ask.await.unwrap().unwrap().unwrap());
    }
    assert!(bundles.iter().all(|b| *b == bundles[0]), "{bundles:?}");
    let packed = PACKED
        .lock()
        .unwrap()
        .iter()
        .filter(|p| **p == bundles[0])
        .count();
    assert_eq!(packed, 1, "the same base was packed {packed} times");
    // Every asker got the whole, readable bundle.
    let bundle = bundles[0].display().to_string();
    git_out(ws.path(), &["bundle", "verify", "-q", &bundle]);
}

/// A workspace, its scratch directory, the snapshot an attempt starts from, the
/// attempt's worktree and its published base.
async fn published() -> (tempfile::TempDir, tempfile::TempDir, String, Worktree, Base) {
    published_in(repo()).await
}

/// [`published`] from workspace `ws`.
async fn published_in(
    ws: tempfile::TempDir,
) -> (tempfile::TempDir, tempfile::TempDir, String, Worktree, Base) {
    let scratch = tempfile::tempdir().unwrap();
    let snap = isolation::snapshot(ws.path(), scratch.path())
        .await
        .unwrap();
    let tree = isolation::create(ws.path(), &snap, &scratch.path().join("wt"))
        .await
        .unwrap();
    let base = publish(ws.path(), &snap, scratch.path()).await.unwrap();
    (ws, scratch, snap, tree, base)
}

#[tokio::test]
async fn a_branch_returned_as_a_bundle_lands_in_the_worktree_and_merges_back() {
    let (ws, scratch, snap, tree, base) = published().await;
    // The same tree is the same base: one bundle for every attempt from it.
    assert_eq!(
        publish(ws.path(), &snap, scratch.path()).await.unwrap(),
        base
    );
    let name = branch("s1", "t1", 1);
    let returned = work_remotely(
        &base,
        &name,
        "printf 'ONE\\ntwo\\nthree\\n' > a.txt && rm new.txt && echo c > c.txt",
    );
    receive(ws.path(), &base.commit, &name, &returned, &tree)
        .await
        .unwrap();
    // The checks ran in the worktree and left a file: not the worker's work.
    std::fs::write(tree.dir.join("checks.log"), "ran\n").unwrap();
    let scanned = isolation::changes(&tree, scratch.path()).await.unwrap();
    assert!(scanned.iter().any(|c| c.path() == "checks.log"));
    let mut changes = isolation::changes_returned(&tree, &returned.commit)
        .await
        .unwrap();
    changes.sort_by(|a, b| a.path().cmp(b.path()));
    assert_eq!(
        changes,
        vec![
            isolation::Change::Write("a.txt".into()),
            isolation::Change::Write("c.txt".into()),
            isolation::Change::Delete("new.txt".into()),
        ]
    );
    isolation::merge_back(ws.path(), &tree, &changes, scratch.path())
        .await
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(ws.path().join("a.txt")).unwrap(),
        "ONE\ntwo\nthree\n"
    );
    assert!(!ws.path().join("new.txt").exists());
    assert!(!ws.path().join("checks.log").exists());
    // The user's branches did not move; the attempt is kept under refs/atto/.
    sh(
        ws.path(),
        "test \"$(git branch --format='%(refname)')\" = refs/heads/master || test \"$(git branch --format='%(refname)')\" = refs/heads/main",
    );
    sh(
        ws.path(),
        &format!("git rev-parse --verify -q refs/{name} >/dev/null"),
    );
}

/// A remote result's file lands as a checkout writes it: the repository's attributes
/// give it CRLF line ends, as in the worktree it was checked in.
#[tokio::test]
async fn a_remote_results_file_lands_as_a_checkout_writes_it() {
    let ws = repo();
    sh(ws.path(), "echo '*.crlf text eol=crlf' > .gitattributes");
    let (ws, scratch, _, tree, base) = published_in(ws).await;
    let name = branch("s1", "t1", 1);
    let returned = work_remotely(&base, &name, "printf 'x\\ny\\n' > d.crlf");
    receive(ws.path(), &base.commit, &name, &returned, &tree)
        .await
        .unwrap();
    let checked_out = std::fs::read(tree.dir.join("d.crlf")).unwrap();
    assert_eq!(checked_out, b"x\r\ny\r\n");
    let changes = isolation::changes_returned(&tree, &returned.commit)
        .await
        .unwrap();
    isolation::merge_back(ws.path(), &tree, &changes, scratch.path())
        .await
        .unwrap();
    assert_eq!(
        std::fs::read(ws.path().join("d.crlf")).unwrap(),
        checked_out
    );
}

/// A remote attempt's worktree is a parked one whose base is not checked out (its
/// result will be): once the result is, it holds exactly the returned tree, nothing
/// of what the last attempt left there.
#[tokio::test]
async fn a_result_lands_whole_in_a_parked_worktree_its_base_never_checked_out_in() {
    let (ws, scratch, _, tree, base) = published().await;
    let pool = isolation::Pool::new(scratch.path().join("parking"), 2);
    let first = branch("s1", "t1", 1);
    let returned = work_remotely(&base, &first, "echo c > c.txt && echo ONE > a.txt");
    receive(ws.path(), &base.commit, &first, &returned, &tree)
        .await
        .unwrap();
    // The checks left a file and changed another; then the worktree was parked.
    std::fs::write(tree.dir.join("left.txt"), "x\n").unwrap();
    std::fs::write(tree.dir.join("c.txt"), "edited\n").unwrap();
    pool.give_back(ws.path(), &tree).await;
    // The workspace moved on; the next attempt starts from it.
    std::fs::write(ws.path().join("b.txt"), "b\n").unwrap();
    let snap = isolation::snapshot(ws.path(), scratch.path())
        .await
        .unwrap();
    let next = publish(ws.path(), &snap, scratch.path()).await.unwrap();
    let dir = scratch.path().join("wt2");
    let tree = pool
        .take_parked(ws.path(), &snap, &dir, isolation::Ready::Result)
        .await
        .unwrap()
        .unwrap();
    let second = branch("s1", "t2", 1);
    let returned = work_remotely(&next, &second, "rm new.txt && echo d > d.txt");
    receive(ws.path(), &next.commit, &second, &returned, &tree)
        .await
        .unwrap();
    // Exactly the returned tree: every file and nothing else.
    let listed = git_out(&tree.dir, &["ls-files", "--others", "--modified"]);
    assert_eq!(listed, "", "not the result's: {listed}");
    let head = git_out(&tree.dir, &["rev-parse", "HEAD"]);
    assert_eq!(head.trim(), returned.commit);
    assert!(!tree.dir.join("c.txt").exists() && !tree.dir.join("left.txt").exists());
    assert_eq!(
        std::fs::read_to_string(tree.dir.join("b.txt")).unwrap(),
        "b\n"
    );
    assert_eq!(
        std::fs::read_to_string(tree.dir.join("a.txt")).unwrap(),
        "one\ntwo\nthree\n"
    );
    let changes = isolation::changes_returned(&tree, &returned.commit)
        .await
        .unwrap();
    assert_eq!(
        changes,
        vec![
            isolation::Change::Write("d.txt".into()),
            isolation::Change::Delete("new.txt".into()),
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn results_fetch_while_other_attempts_worktrees_come_and_go() {
    let ws = repo();
    // Files enough that adding and removing a worktree takes a while, as in the bench.
    sh(
        ws.path(),
        "mkdir pkg && for n in $(seq 500); do echo \"x = $n\" > pkg/m$n.py; done",
    );
    let scratch = tempfile::tempdir().unwrap();
    let snap = isolation::snapshot(ws.path(), scratch.path())
        .await
        .unwrap();
    let base = publish(ws.path(), &snap, scratch.path()).await.unwrap();
    // Twelve attempts, three rounds each, ending together as in the scale-out bench:
    // each fetches its result while others add and remove their worktrees.
    let mut jobs = tokio::task::JoinSet::new();
    for i in 0..12 {
        let rounds: Vec<(String, ResultEvent)> = (1..=3)
            .map(|round| {
                let name = branch("s1", &format!("t{i}"), round);
                let returned = work_remotely(&base, &name, &format!("echo {round} > f{i}"));
                (name, returned)
            })
            .collect();
        let (ws, scratch) = (ws.path().to_path_buf(), scratch.path().to_path_buf());
        let (base, snap) = (base.clone(), snap.clone());
        jobs.spawn(async move {
            for (round, (name, returned)) in rounds.iter().enumerate() {
                let dir = scratch.join(format!("wt{i}-{round}"));
                let tree = isolation::create(&ws, &snap, &dir).await.unwrap();
                let got = receive(&ws, &base.commit, name, returned, &tree).await;
                isolation::remove(&ws, &tree).await;
                got.map_err(|e| format!("t{i} round {round}: {e}"))?;
            }
            Ok::<(), String>(())
        });
    }
    let mut failed = Vec::new();
    while let Some(joined) = jobs.join_next().await {
        if let Err(e) = joined.unwrap() {
            failed.push(e);
        }
    }
    assert!(failed.is_empty(), "{failed:#?}");
}

#[tokio::test]
async fn a_result_on_another_branch_or_with_another_commit_is_refused() {
    let (ws, _scratch, _snap, tree, base) = published().await;
    let name = branch("s1", "t1", 1);
    let mut returned = work_remotely(&base, &name, "echo x > x.txt");
    returned.branch = branch("s1", "t2", 1);
    let err = receive(ws.path(), &base.commit, &name, &returned, &tree)
        .await
        .unwrap_err();
    assert!(err.contains("not \"atto/swarm/s1/t1/attempt-1\""), "{err}");

    // A commit announced but not the one the bundle holds.
    let mut returned = work_remotely(&base, &name, "echo y > y.txt");
    returned.commit = "0".repeat(40);
    let err = receive(ws.path(), &base.commit, &name, &returned, &tree)
        .await
        .unwrap_err();
    assert!(err.contains("not the commit it announced"), "{err}");
    assert!(!tree.dir.join("y.txt").exists());
}

#[test]
fn a_bundles_tip_is_read_from_its_header_alone() {
    let (a, b) = ("a".repeat(40), "b".repeat(40));
    let v2 = format!("# v2 git bundle\n-{b} base\n{a} refs/heads/x\n\nPACK{a} refs/heads/y\n");
    assert_eq!(bundle_tip(v2.as_bytes(), "refs/heads/x"), Some(a.clone()));
    // Past the empty line is the pack, never the header.
    assert_eq!(bundle_tip(v2.as_bytes(), "refs/heads/y"), None);
    let v3 = format!("# v3 git bundle\n@object-format=sha1\n{a} refs/heads/x\n\n");
    assert_eq!(bundle_tip(v3.as_bytes(), "refs/heads/x"), Some(a.clone()));
    let twice = format!("# v2 git bundle\n{a} refs/heads/x\n{b} refs/heads/x\n\n");
    assert_eq!(bundle_tip(twice.as_bytes(), "refs/heads/x"), None);
    let other = format!("# v9 git bundle\n{a} refs/heads/x\n\n");
    assert_eq!(bundle_tip(other.as_bytes(), "refs/heads/x"), None);
    assert_eq!(bundle_tip(b"", "refs/heads/x"), None);
}

/// Runs git in `dir`, its output trimmed.
fn git_out(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// A worker's branch whose tree holds an entry git refuses (`.git`: on checkout it
/// would be the worktree's repository) beside `extra` good files: its result and the
/// bad tree's id.
fn refused_result(base: &Base, name: &str, extra: usize) -> (ResultEvent, String) {
    let remote = tempfile::tempdir().unwrap();
    let r = remote.path();
    sh(
        r,
        &format!(
            "git init -q && git bundle unbundle {} >/dev/null && mkdir files && \
             for n in $(seq 0 {extra}); do echo $n > files/f$(printf %03d $n); done",
            base.bundle.display()
        ),
    );
    let names: Vec<String> = (0..=extra).map(|n| format!("files/f{n:03}")).collect();
    let mut args = vec!["hash-object", "-w"];
    args.extend(names.iter().map(String::as_str));
    let blobs = git_out(r, &args);
    // Git's raw tree format, entries in name order: `.git` first.
    let mut raw = Vec::new();
    let entries = std::iter::once(".git".to_owned()).chain((1..=extra).map(|n| format!("f{n:03}")));
    for (entry, blob) in entries.zip(blobs.lines()) {
        raw.extend(format!("100644 {entry}\0").into_bytes());
        raw.extend(
            (0..blob.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&blob[i..i + 2], 16).unwrap()),
        );
    }
    std::fs::write(r.join("tree.bin"), raw).unwrap();
    let bad = git_out(
        r,
        &["hash-object", "-w", "-t", "tree", "--literally", "tree.bin"],
    );
    let identity = ["-c", "user.name=w", "-c", "user.email=w@x"];
    let mut args = identity.to_vec();
    args.extend(["commit-tree", &bad, "-p", &base.commit, "-m", "bad"]);
    let commit = git_out(r, &args);
    git_out(r, &["update-ref", &format!("refs/heads/{name}"), &commit]);
    let tip = format!("refs/heads/{name}");
    let not_base = format!("^{}", base.commit);
    git_out(
        r,
        &["bundle", "create", "-q", "out.bundle", &tip, &not_base],
    );
    let returned = ResultEvent {
        branch: name.to_owned(),
        commit,
        bundle: base64::engine::general_purpose::STANDARD
            .encode(std::fs::read(r.join("out.bundle")).unwrap()),
    };
    (returned, bad)
}

/// A result holding objects git refuses never lands, whether its few objects would be
/// stored loose or its many as a pack: they are checked before anything is kept, and
/// the attempt fails.
#[tokio::test]
async fn a_result_holding_objects_git_refuses_is_not_taken() {
    let (ws, _scratch, _snap, tree, base) = published().await;
    for (task, extra) in [("t1", 0), ("t2", 120)] {
        let name = branch("s1", task, 1);
        let (returned, bad) = refused_result(&base, &name, extra);
        let err = receive(ws.path(), &base.commit, &name, &returned, &tree)
            .await
            .unwrap_err();
        assert!(err.contains("could not be fetched"), "{extra}: {err}");
        // Nothing of it is kept: no ref, no object.
        let kept = |what: &str| {
            std::process::Command::new("git")
                .args(["cat-file", "-e", what])
                .current_dir(ws.path())
                .status()
                .unwrap()
                .success()
        };
        assert!(!kept(&bad), "{extra}: the refused tree was kept");
        assert!(!kept(&returned.commit), "{extra}: its commit was kept");
        assert!(!tree.dir.join(".git").is_dir());
    }
    // The same sizes without the bad entry land.
    for (task, files) in [("t3", 1), ("t4", 120)] {
        let name = branch("s1", task, 1);
        let script = format!("mkdir many && for n in $(seq {files}); do echo $n > many/$n; done");
        let returned = work_remotely(&base, &name, &script);
        receive(ws.path(), &base.commit, &name, &returned, &tree)
            .await
            .unwrap();
        assert!(tree.dir.join(format!("many/{files}")).is_file());
    }
}
