//! The node side's tests: the clone, the exchange over the launcher's pipes, the pool.

#![allow(clippy::unwrap_used)]

use super::*;
use crate::isolation;
use crate::remote::transport::{self, branch, preamble, publish};
use crate::testing::sh;

/// A workspace whose one commit holds `a.txt` = "one".
fn one_file_repo() -> tempfile::TempDir {
    crate::testing::git_repo("echo one > a.txt && git add . && git commit -qm init")
}

#[test]
fn only_task_branches_are_accepted() {
    for ok in [
        "atto/swarm/s1/t1/attempt-1",
        "atto/swarm/a-b/c_d/attempt-12",
    ] {
        assert!(valid_branch(ok), "{ok}");
    }
    for bad in [
        "main",
        "atto/swarm/s1/t1/attempt-",
        "atto/swarm/s1/../attempt-1",
        "atto/swarm/s1/t1/attempt-1/x",
        "--upload-pack=x",
        "atto/swarm/s 1/t1/attempt-1",
    ] {
        assert!(!valid_branch(bad), "{bad}");
    }
}

/// What the coordinator makes for a remote attempt of `ws` on branch `name`: the
/// attempt's worktree, the published base, and the worker's stdin carrying the base and
/// a first message.
async fn coordinator_side(
    ws: &Path,
    scratch: &Path,
    name: &str,
) -> (isolation::Worktree, transport::Base, Vec<u8>) {
    let snap = isolation::snapshot(ws, scratch).await.unwrap();
    let tree = isolation::create(ws, &snap, &scratch.join("wt"))
        .await
        .unwrap();
    let base = publish(ws, &snap, scratch).await.unwrap();
    let mut stdin = preamble(&base, name).unwrap();
    stdin.extend(b"{\"type\":\"user_input\",\"text\":\"go\"}\n");
    (tree, base, stdin)
}

/// Serves one attempt whose worker is the shell `script`: how it ended, and its stdout.
async fn serve_script(stdin: Vec<u8>, script: &str, node: &Node) -> (Served, String) {
    let command = vec!["sh".to_owned(), "-c".to_owned(), script.to_owned()];
    let mut out = Vec::new();
    let served = serve(std::io::Cursor::new(stdin), &mut out, &command, node)
        .await
        .unwrap();
    (served, String::from_utf8(out).unwrap())
}

/// A node that makes a fresh clone in `dir` for every attempt.
/// The text of `rel` in `dir`.
fn read(dir: &Path, rel: &str) -> String {
    std::fs::read_to_string(dir.join(rel)).unwrap()
}

fn fresh(dir: &Path) -> Node {
    Node {
        clones: Clones::Fresh(dir.to_owned()),
        name: None,
    }
}

/// The whole trip, as it goes between a coordinator and a remote node: base out on
/// stdin, a worker (a shell standing in for `atto exec`) edits and prints its result,
/// the branch comes back in the last line and is checked out in the attempt's
/// worktree. The worker never sees the coordinator's directories.
#[tokio::test]
async fn the_worker_runs_in_a_clone_and_its_branch_comes_back_on_stdout() {
    let ws = one_file_repo();
    let scratch = tempfile::tempdir().unwrap();
    let node = tempfile::tempdir().unwrap();
    let name = branch("s1", "t1", 2);
    let (tree, base, stdin) = coordinator_side(ws.path(), scratch.path(), &name).await;
    let ws_path = ws.path().display().to_string();
    let script = format!(
        "read -r op; case \"$op\" in *user_input*) ;; *) exit 3;; esac; \
         test ! -e {ws_path}/.git/x || exit 4; test \"$(cat a.txt)\" = one || exit 5; \
         echo two > a.txt; echo new > b.txt; \
         echo '{{\"type\":\"result\",\"status\":\"completed\"}}'"
    );
    let (served, text) = serve_script(stdin, &script, &fresh(node.path())).await;
    assert_eq!(served, Served::Returned(0));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    // A fresh clone holds nothing: the whole base was sent.
    let have: HaveEvent = serde_json::from_str(lines[0]).unwrap();
    assert!(have.commits.is_empty());
    assert!(lines[1].contains("\"result\""));
    let returned: ResultEvent = serde_json::from_str(lines[2]).unwrap();
    // The clone in node-local scratch is gone.
    assert_eq!(std::fs::read_dir(node.path()).unwrap().count(), 0);
    transport::receive(ws.path(), &base.commit, &name, &returned, &tree)
        .await
        .unwrap();
    assert_eq!(read(&tree.dir, "a.txt"), "two\n");
    assert_eq!(read(&tree.dir, "b.txt"), "new\n");
}

/// Attempts ending together on one node never leave more idle clones than the pool
/// keeps: each is put back into a numbered slot by a rename, which fails on a slot
/// another clone holds, so the last ones are removed instead. A node that ran six at once
/// keeps six.
#[tokio::test]
async fn clones_put_back_together_never_overfill_the_pool() {
    let ws = one_file_repo();
    for (together, kept) in [(6, 6), (20, MAX_IDLE)] {
        let node = tempfile::tempdir().unwrap();
        let dirs = busy_clones(ws.path(), node.path(), together);
        let header = clone_header();
        let mut backs = tokio::task::JoinSet::new();
        for dir in &dirs {
            let (node, dir, header) = (node.path().to_owned(), dir.clone(), header.clone());
            backs.spawn(async move { put_back(&node, &dir, &header).await });
        }
        while backs.join_next().await.is_some() {}
        assert_eq!(idle_clones(node.path()).unwrap(), kept);
        assert!(dirs.iter().all(|d| !d.exists()));
    }
}

fn clone_header() -> BaseHeader {
    BaseHeader {
        commit: String::new(),
        branch: branch("s1", "t1", 1),
        bytes: 0,
    }
}

/// `count` clones of `ws` taken on `node` (`busy-N`), on the task branch.
fn busy_clones(ws: &Path, node: &Path, count: usize) -> Vec<PathBuf> {
    let header = clone_header();
    let mut dirs = Vec::new();
    for n in 0..count {
        let dir = node.join(format!("busy-{n}"));
        sh(
            node,
            &format!(
                "git clone -q {} {}/work && git -C {1}/work checkout -q -b {}",
                ws.display(),
                dir.display(),
                header.branch
            ),
        );
        dirs.push(dir);
    }
    dirs
}

/// A worker that commits on its own (`git commit` in its shell) still returns all of
/// its work: its commits and what it left uncommitted, on the task branch.
#[tokio::test]
async fn a_commit_the_worker_made_comes_back_with_what_it_left() {
    let ws = one_file_repo();
    let scratch = tempfile::tempdir().unwrap();
    let node = tempfile::tempdir().unwrap();
    let name = branch("s1", "t1", 1);
    let (tree, base, stdin) = coordinator_side(ws.path(), scratch.path(), &name).await;
    let script = "read -r op; echo two > a.txt; git -c user.name=w -c user.email=w@x \
         commit -qam mine; echo later > c.txt; \
         echo '{\"type\":\"result\",\"status\":\"completed\"}'";
    let (served, text) = serve_script(stdin, script, &fresh(node.path())).await;
    assert_eq!(served, Served::Returned(0));
    let returned: ResultEvent = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    transport::receive(ws.path(), &base.commit, &name, &returned, &tree)
        .await
        .unwrap();
    assert_eq!(read(&tree.dir, "a.txt"), "two\n");
    assert_eq!(read(&tree.dir, "c.txt"), "later\n");
}

/// In a Slurm job the node's name is the first line, before the base is even read:
/// an attempt lost at any point is known by where it ran.
#[tokio::test]
async fn a_named_node_says_so_first() {
    let node = tempfile::tempdir().unwrap();
    let command = vec!["true".to_owned()];
    let mut out = Vec::new();
    let served = serve(
        std::io::Cursor::new(b"not a header\n".to_vec()),
        &mut out,
        &command,
        &Node {
            clones: Clones::Fresh(node.path().to_owned()),
            name: Some("n2".into()),
        },
    )
    .await;
    assert!(served.is_err());
    // Its name, then what it holds (a fresh clone: nothing), then it read the header.
    let text = String::from_utf8(out).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let first: NodeEvent = serde_json::from_str(lines[0]).unwrap();
    assert_eq!(first.node, "n2");
    let have: HaveEvent = serde_json::from_str(lines[1]).unwrap();
    assert_eq!(have.commits, Vec::<String>::new());
    assert_eq!(lines.len(), 2);
}

/// A pooled clone serves the next attempt as a fresh one would: the base's files and
/// nothing the last worker left, not its untracked or ignored files, hooks, excludes
/// or branch.
#[tokio::test]
async fn a_pooled_clone_serves_the_next_attempt_as_if_fresh() {
    let ws = one_file_repo();
    let scratch = tempfile::tempdir().unwrap();
    let node = tempfile::tempdir().unwrap();
    let pool = Node {
        clones: Clones::Pooled(node.path().to_owned()),
        name: None,
    };
    let snap = isolation::snapshot(ws.path(), scratch.path())
        .await
        .unwrap();
    let base = publish(ws.path(), &snap, scratch.path()).await.unwrap();
    let hooked = node.path().join("hook-ran");
    let first = format!(
        "read -r op; echo two > a.txt; echo b > b.txt; echo junk > junk.log; \
         echo '*.log' >> .git/info/exclude; touch .git/first-was-here; \
         printf '#!/bin/sh\\ntouch {}\\n' > .git/hooks/post-checkout; \
         chmod +x .git/hooks/post-checkout; \
         echo '{{\"type\":\"result\",\"status\":\"completed\"}}'",
        hooked.display()
    );
    let second = "read -r op; test -e .git/first-was-here || exit 9; \
         test \"$(cat a.txt)\" = one || exit 5; test ! -e b.txt || exit 6; \
         test ! -e junk.log || exit 7; echo kept > new.log; \
         echo '{\"type\":\"result\",\"status\":\"completed\"}'";
    let mut names = Vec::new();
    for (task, script) in [("t1", first.as_str()), ("t2", second)] {
        let name = branch("s1", task, 1);
        let mut stdin = preamble(&base, &name).unwrap();
        stdin.extend(b"{\"type\":\"user_input\",\"text\":\"go\"}\n");
        let (served, text) = serve_script(stdin, script, &pool).await;
        assert_eq!(served, Served::Returned(0), "{task}");
        assert_eq!(idle_clones(node.path()).unwrap(), 1, "{task}");
        let returned: ResultEvent = serde_json::from_str(text.lines().last().unwrap()).unwrap();
        names.push((name, returned));
    }
    assert!(!hooked.exists(), "the last worker's hook ran");
    // The idle clone is off every task branch: none piles up in it.
    let idle = std::fs::read_dir(node.path())
        .unwrap()
        .flatten()
        .find(|e| e.file_name().to_string_lossy().starts_with("idle-"))
        .unwrap()
        .path()
        .join("work");
    sh(
        &idle,
        "test -z \"$(git for-each-ref refs/heads)\" && ! git symbolic-ref -q HEAD",
    );
    let tree = isolation::create(ws.path(), &snap, &scratch.path().join("wt"))
        .await
        .unwrap();
    let (name, returned) = &names[1];
    transport::receive(ws.path(), &base.commit, name, returned, &tree)
        .await
        .unwrap();
    assert_eq!(read(&tree.dir, "new.log"), "kept\n");
    assert_eq!(read(&tree.dir, "a.txt"), "one\n");
    assert!(!tree.dir.join("b.txt").exists());
}

#[tokio::test]
async fn a_broken_stdout_stops_the_worker_and_sends_nothing() {
    let ws = one_file_repo();
    let scratch = tempfile::tempdir().unwrap();
    let node = tempfile::tempdir().unwrap();
    let snap = isolation::snapshot(ws.path(), scratch.path())
        .await
        .unwrap();
    let base = publish(ws.path(), &snap, scratch.path()).await.unwrap();
    let stdin = preamble(&base, &branch("s1", "t1", 1)).unwrap();
    let marker = node.path().join("still-running");
    // It prints, then would keep working for a long time and leave a mark.
    let script = format!("echo started; sleep 30; touch {}", marker.display());
    let command = vec!["sh".to_owned(), "-c".to_owned(), script];
    let (reader, writer) = tokio::io::duplex(64);
    drop(reader);
    let started = std::time::Instant::now();
    let err = serve(
        std::io::Cursor::new(stdin),
        writer,
        &command,
        &Node {
            clones: Clones::Fresh(node.path().to_owned()),
            name: None,
        },
    )
    .await
    .unwrap_err();
    assert!(err.contains("broke"), "{err}");
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    assert!(!marker.exists());
}

/// One attempt as it goes over a launcher's pipes: the node's `git_have` line read,
/// the base published for it, the task sent; the node's `git_have`, the size of the
/// `git_base` bundle sent, and the node's stdout after the `git_have` line.
async fn handshake(
    ws: &Path,
    scratch: &Path,
    snapshot: &str,
    name: &str,
    node: &Node,
    script: &str,
) -> (Served, HaveEvent, u64, String) {
    use tokio::io::AsyncWriteExt as _;
    let commit = transport::base_commit(ws, snapshot).await.unwrap();
    let (mut to_node, node_in) = tokio::io::duplex(1 << 16);
    let (node_out, from_node) = tokio::io::duplex(1 << 16);
    let command = vec!["sh".to_owned(), "-c".to_owned(), script.to_owned()];
    let serving = serve(node_in, node_out, &command, node);
    let coordinating = async {
        let mut reader = tokio::io::BufReader::new(from_node);
        let mut first = String::new();
        reader.read_line(&mut first).await.unwrap();
        let have: HaveEvent = serde_json::from_str(&first).unwrap();
        let bundle = transport::bundle_for(ws, &commit, &have.commits, scratch)
            .await
            .unwrap();
        let mut stdin = transport::preamble_of(&commit, bundle.as_deref(), name).unwrap();
        let header_end = stdin.iter().position(|b| *b == b'\n').unwrap();
        let header: BaseHeader = serde_json::from_slice(&stdin[..header_end]).unwrap();
        stdin.extend(b"{\"type\":\"user_input\",\"text\":\"go\"}\n");
        to_node.write_all(&stdin).await.unwrap();
        drop(to_node);
        let mut rest = String::new();
        reader.read_to_string(&mut rest).await.unwrap();
        (have, header.bytes, rest)
    };
    let (served, (have, bytes, rest)) = tokio::join!(serving, coordinating);
    (served.unwrap(), have, bytes, rest)
}

/// A workspace of `a.txt` and sixty data files, a scratch directory, and a node keeping
/// its clones in a pool (its directory, kept alive by the caller).
fn pooled_node_of_sixty_files() -> (
    tempfile::TempDir,
    tempfile::TempDir,
    tempfile::TempDir,
    Node,
) {
    let ws = one_file_repo();
    sh(
        ws.path(),
        "mkdir data && for n in $(seq 60); do seq $n 2000 > data/f$n.txt; done && \
         git add -A && git commit -qm files",
    );
    let node = tempfile::tempdir().unwrap();
    let pool = Node {
        clones: Clones::Pooled(node.path().to_owned()),
        name: None,
    };
    (ws, tempfile::tempdir().unwrap(), node, pool)
}

/// A pooled clone says what it holds, and the coordinator sends only what that does
/// not reach: the files changed since the clone's last attempt, or nothing at all when
/// it holds the base.
#[tokio::test]
async fn a_node_is_sent_only_what_its_clone_does_not_hold() {
    let (ws, scratch, _node, pool) = pooled_node_of_sixty_files();
    let done = "echo '{\"type\":\"result\",\"status\":\"completed\"}'";
    let mut sent = Vec::new();
    let mut held = Vec::new();
    for (n, check) in [(1, "one"), (2, "changed"), (3, "changed")] {
        if n == 2 {
            std::fs::write(ws.path().join("a.txt"), "changed\n").unwrap();
        }
        let snap = isolation::snapshot(ws.path(), scratch.path())
            .await
            .unwrap();
        let name = branch("s1", &format!("t{n}"), 1);
        let script = format!(
            "read -r op; test \"$(cat a.txt)\" = {check} || exit 5; test -e data/f60.txt || exit 6; \
             echo {n} > out{n}.txt; {done}"
        );
        let (served, have, bytes, rest) =
            handshake(ws.path(), scratch.path(), &snap, &name, &pool, &script).await;
        assert_eq!(served, Served::Returned(0), "attempt {n}: {rest}");
        // The result fetched, as the coordinator does: the next have names it.
        let returned: ResultEvent = serde_json::from_str(rest.lines().last().unwrap()).unwrap();
        let tree = isolation::create(ws.path(), &snap, &scratch.path().join(format!("wt{n}")))
            .await
            .unwrap();
        let base = transport::base_commit(ws.path(), &snap).await.unwrap();
        transport::receive(ws.path(), &base, &name, &returned, &tree)
            .await
            .unwrap();
        assert_eq!(read(&tree.dir, &format!("out{n}.txt")), format!("{n}\n"));
        let full = publish(ws.path(), &snap, scratch.path()).await.unwrap();
        sent.push((bytes, std::fs::metadata(&full.bundle).unwrap().len()));
        held.push(have.commits);
    }
    // The first clone was new: it held nothing and got the whole base.
    assert!(held[0].is_empty());
    assert_eq!(sent[0].0, sent[0].1);
    // The second held the first's result and the base that started from: a.txt's change
    // came, not the 60 files.
    assert_eq!(held[1].len(), 2);
    assert!(sent[1].0 * 10 < sent[1].1, "{sent:?}");
    // The third's base is the parent of the result its clone holds: nothing was sent.
    assert_eq!(sent[2].0, 0);
}

/// A node's clone goes back to its pool as soon as its result is sent, and the next
/// attempt may take it before the coordinator stored that result (it waits for a slot to
/// check it in): the base that result started from is named too, so that attempt is still
/// sent only what changed, not the whole base.
#[tokio::test]
async fn a_node_whose_last_result_is_not_stored_yet_is_sent_only_what_changed() {
    let (ws, scratch, _node, pool) = pooled_node_of_sixty_files();
    let script = "read -r op; echo out > out.txt; \
                  echo '{\"type\":\"result\",\"status\":\"completed\"}'";
    let snap = isolation::snapshot(ws.path(), scratch.path())
        .await
        .unwrap();
    let first = branch("s1", "t1", 1);
    let (served, _, _, _) =
        handshake(ws.path(), scratch.path(), &snap, &first, &pool, script).await;
    assert_eq!(served, Served::Returned(0));
    // Its result is not stored; the workspace moved on.
    std::fs::write(ws.path().join("a.txt"), "changed\n").unwrap();
    let snap = isolation::snapshot(ws.path(), scratch.path())
        .await
        .unwrap();
    let second = branch("s1", "t2", 1);
    let (served, have, bytes, rest) =
        handshake(ws.path(), scratch.path(), &snap, &second, &pool, script).await;
    assert_eq!(served, Served::Returned(0), "{rest}");
    assert_eq!(have.commits.len(), 2);
    let full = publish(ws.path(), &snap, scratch.path()).await.unwrap();
    let whole = std::fs::metadata(&full.bundle).unwrap().len();
    assert!(bytes * 10 < whole, "sent {bytes} of {whole} bytes");
}

/// A node side killed mid-attempt (SIGKILL, its job cancelled) leaves its clone `busy-`;
/// the next attempt on the node removes it once no process holds its lock and it has been
/// unchanged for a while, and never a clone in use, a recent one or an idle one.
#[test]
fn a_clone_its_node_side_abandoned_is_removed_and_one_in_use_is_kept() {
    let node = tempfile::tempdir().unwrap();
    let clone = |name: &str| {
        let dir = node.path().join(name);
        std::fs::create_dir_all(dir.join("work")).unwrap();
        std::fs::write(dir.join("work/a.txt"), "one\n").unwrap();
        dir
    };
    let (dead, held, idle) = (clone("busy-dead"), clone("busy-held"), clone("idle-0"));
    // In use: its attempt holds the lock.
    let in_use = std::fs::File::open(&held).unwrap();
    in_use.try_lock().unwrap();
    // Just named `busy-`: kept, held or not.
    remove_abandoned(node.path(), ABANDONED_AFTER);
    assert!(dead.exists() && held.exists() && idle.exists());
    // Unchanged for long enough (here: any time at all).
    remove_abandoned(node.path(), std::time::Duration::ZERO);
    assert!(!dead.exists(), "the abandoned clone was kept");
    assert!(held.exists() && idle.exists());
    // Once its attempt let go, it goes too.
    drop(in_use);
    remove_abandoned(node.path(), std::time::Duration::ZERO);
    assert!(!held.exists());
}

/// A clone taken from the pool, or made new, is locked while its attempt uses it.
#[test]
fn a_clone_in_use_is_locked() {
    let node = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(node.path().join("idle-0/work")).unwrap();
    for (id, from_pool) in [("a", true), ("b", false)] {
        let (dir, taken, lock) = take(node.path(), id);
        assert_eq!(taken, from_pool);
        assert!(dir.is_dir() && !node.path().join("idle-0").exists());
        let other = std::fs::File::open(&dir).unwrap();
        assert!(other.try_lock().is_err(), "clone {id} was not locked");
        drop(lock);
        assert!(other.try_lock().is_ok());
    }
}
