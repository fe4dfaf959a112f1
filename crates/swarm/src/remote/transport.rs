//! The coordinator's side of the git transport. A remote attempt starts from a commit the
//! coordinator made of the snapshot's tree (no parents, fixed dates: the same tree is the
//! same commit), sent as a `git bundle` on the worker's stdin ahead of the stream-json
//! protocol: a `git_base` line saying its size, then the bundle's bytes. The node speaks
//! first: a `git_have` line names the commits the clone it took already holds (a pooled
//! clone's last result and the base that started from), and the bundle leaves out their
//! trees, so a node receives only what changed since its last attempt (nothing when it
//! holds the base).
//! The worker answers with a `git_result` line holding a bundle of its task branch against
//! that base, whose objects are stored in the workspace's repository (each checked) and
//! checked out in the attempt's worktree, where the quality pipeline and the three-way
//! merge see it exactly as a local attempt.
//!
//! A bundle on stdin works where nodes share no disk and no network path back to the
//! coordinator's repository (a compute node usually cannot reach the login node's git);
//! the stream the launcher already keeps open is the only channel it needs.

use std::path::{Path, PathBuf};

use base64::Engine as _;
use serde::{Deserialize, Serialize};

use crate::isolation::Worktree;

/// Longest `git_result` bundle accepted (base64 of it must fit in one protocol line).
pub const MAX_RESULT_BYTES: usize = 3 * 1024 * 1024;

/// The first line on a remote worker's stdin; `bytes` bytes of bundle follow it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "git_base")]
pub struct BaseHeader {
    /// The commit the attempt starts from.
    pub commit: String,
    /// The branch the worker commits its work to.
    pub branch: String,
    /// Size of the bundle that follows.
    pub bytes: u64,
}

/// The worker's last stream-json event: its task branch as a bundle against the base.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "git_result")]
pub struct ResultEvent {
    /// The branch it committed to.
    pub branch: String,
    /// The branch's commit.
    pub commit: String,
    /// The bundle, base64.
    pub bundle: String,
}

/// The node side's first protocol line on stdout: what the clone it took holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "git_have")]
pub struct HaveEvent {
    /// Commits whose objects the clone holds (none for a new clone).
    pub commits: Vec<String>,
}

/// How long the coordinator waits for a node's `git_have` before it sends the whole base
/// (counted from the launcher's start, so a Slurm job still pending then gets it all).
pub const HAVE_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// Most commits of a `git_have` line used.
pub const MAX_HAVES: usize = 4;

/// A remote worker's first line on stdout when it knows the Slurm node it runs on: an
/// attempt lost there is retried on another node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "worker_node")]
pub struct NodeEvent {
    /// The node's name, as Slurm knows it (`SLURMD_NODENAME`).
    pub node: String,
}

/// A published base: its commit and the bundle file that carries it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Base {
    /// The parentless commit of the snapshot's tree.
    pub commit: String,
    /// The bundle of it.
    pub bundle: PathBuf,
}

/// The task branch of one attempt, as the worker names it.
pub fn branch(swarm_id: &str, task_id: &str, attempt: u32) -> String {
    format!("atto/swarm/{swarm_id}/{task_id}/attempt-{attempt}")
}

/// Runs git in `dir` with atto's identity and fixed dates (the base commit must be the
/// same for the same tree).
pub(crate) async fn git(dir: &Path, args: &[&str]) -> Result<Vec<u8>, String> {
    crate::isolation::run_git(dir, args, None, true).await
}

pub(crate) fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).trim().to_owned()
}

/// The base commit of `snapshot`: a parentless commit of its tree with fixed dates, the
/// same for the same tree. One git run: commit-tree reads the snapshot's tree itself.
pub async fn base_commit(workspace: &Path, snapshot: &str) -> Result<String, String> {
    let tree = format!("{snapshot}^{{tree}}");
    Ok(text(
        &git(workspace, &["commit-tree", &tree, "-m", "atto swarm base"]).await?,
    ))
}

/// Publishes `snapshot`'s tree as a base for a node that holds nothing: the commit and a
/// bundle of all of it.
pub async fn publish(workspace: &Path, snapshot: &str, scratch: &Path) -> Result<Base, String> {
    let commit = base_commit(workspace, snapshot).await?;
    let bundle = bundle_for(workspace, &commit, &[], scratch)
        .await?
        .ok_or("the base is held by no node")?;
    Ok(Base { commit, bundle })
}

/// The bundle of base `commit` for a node whose clone holds `haves` (its `git_have` line:
/// its HEAD and the base that started from), the objects of those commits' trees left
/// out, or `None` when the node holds the base itself. A have the workspace does not hold
/// (another repository's, a malformed line, or a result not stored yet) is ignored; with
/// none left, the whole base is sent. Made once per base and haves, in `scratch`.
///
/// The bundle is written here, not by `git bundle create`: a base has no parent, so a
/// have is never its ancestor, and git's bundle leaves out only what ancestors it is
/// given reach. Its header names the haves as prerequisites (the node's git checks it
/// holds them before reading the pack) and the base as its one ref; the pack is what
/// `pack-objects` makes of the base with the haves' trees excluded.
pub async fn bundle_for(
    workspace: &Path,
    commit: &str,
    haves: &[String],
    scratch: &Path,
) -> Result<Option<PathBuf>, String> {
    let mut haves: Vec<&str> = haves
        .iter()
        .map(String::as_str)
        .filter(|h| is_object_id(h))
        .take(MAX_HAVES)
        .collect();
    haves.sort_unstable();
    haves.dedup();
    if haves.contains(&commit) {
        // The node's clone holds the base (its last attempt's, an ancestor of its HEAD).
        return Ok(None);
    }
    if !haves.is_empty() {
        // Only the commits the workspace holds can be left out: a node may name its last
        // result before the coordinator stored it, and the base it started from with it.
        let input = haves.iter().map(|h| format!("{h}\n")).collect::<String>();
        let out = crate::isolation::run_git_input(
            workspace,
            &["cat-file", "--batch-check"],
            input.into_bytes(),
        )
        .await
        .unwrap_or_default();
        let listed = String::from_utf8_lossy(&out);
        haves.retain(|h| {
            listed.lines().any(|l| {
                l.strip_prefix(*h)
                    .is_some_and(|rest| rest.starts_with(" commit "))
            })
        });
    }
    let name = std::iter::once(commit)
        .chain(haves.iter().copied())
        .collect::<Vec<_>>()
        .join("-");
    let bundle = scratch.join(format!("base-{name}.bundle"));
    // One writer per bundle: attempts dispatched together (a swarm's first wave, every
    // node new) ask for the same whole base at once, and each would pack all of it.
    static WRITING: crate::isolation::KeyedLocks = crate::isolation::KeyedLocks::new();
    let _writing = WRITING.lock(bundle.clone()).await;
    if bundle.is_file() {
        return Ok(Some(bundle));
    }
    std::fs::create_dir_all(scratch).map_err(|e| format!("{}: {e}", scratch.display()))?;
    let mut header = if commit.len() == 64 {
        "# v3 git bundle\n@object-format=sha256\n".to_owned()
    } else {
        "# v2 git bundle\n".to_owned()
    };
    let mut revs = format!("{commit}\n");
    for have in &haves {
        header.push_str(&format!("-{have}\n"));
        revs.push_str(&format!("^{have}^{{tree}}\n"));
    }
    header.push_str(&format!("{commit} refs/atto/swarm-base\n\n"));
    // Written aside and renamed: two attempts publishing at once never read half a file.
    let partial = scratch.join(format!("base-{}.partial", uuid::Uuid::new_v4().simple()));
    let written = write_bundle(workspace, &partial, &header, &revs).await;
    if let Err(err) = written {
        let _ = std::fs::remove_file(&partial);
        return Err(err);
    }
    std::fs::rename(&partial, &bundle).map_err(|e| format!("{}: {e}", bundle.display()))?;
    #[cfg(test)]
    tests::PACKED.lock().unwrap().push(bundle.clone());
    Ok(Some(bundle))
}

/// Writes `header`, then the pack `git pack-objects --revs` makes of `revs`, to `path`
/// (the pack streamed to the file, never held in memory).
async fn write_bundle(
    workspace: &Path,
    path: &Path,
    header: &str,
    revs: &str,
) -> Result<(), String> {
    use std::io::Write as _;
    let mut file = std::fs::File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
    file.write_all(header.as_bytes())
        .map_err(|e| format!("{}: {e}", path.display()))?;
    // The pack goes on after the header: git writes at the file's shared offset.
    let args = [
        "pack-objects",
        "--stdout",
        "--revs",
        "--delta-base-offset",
        "-q",
    ];
    let input = revs.as_bytes().to_vec();
    crate::isolation::run_git_to(workspace, &args, input, std::process::Stdio::from(file))
        .await
        .map(drop)
}

/// A full object id (SHA-1 or SHA-256), lowercase hex.
pub(crate) fn is_object_id(id: &str) -> bool {
    matches!(id.len(), 40 | 64)
        && id
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// What goes on the worker's stdin before the protocol: the `git_base` line and the
/// bundle's bytes.
pub fn preamble(base: &Base, branch: &str) -> Result<Vec<u8>, String> {
    preamble_of(&base.commit, Some(&base.bundle), branch)
}

/// [`preamble`] of base `commit` with `bundle` (`None`: the node holds the base, and no
/// bytes follow the line).
pub fn preamble_of(commit: &str, bundle: Option<&Path>, branch: &str) -> Result<Vec<u8>, String> {
    let bytes = match bundle {
        Some(path) => std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?,
        None => Vec::new(),
    };
    let header = BaseHeader {
        commit: commit.to_owned(),
        branch: branch.to_owned(),
        bytes: bytes.len() as u64,
    };
    let mut out = serde_json::to_vec(&header).map_err(|e| e.to_string())?;
    out.push(b'\n');
    out.extend(bytes);
    Ok(out)
}

/// Fetches the worker's returned branch into the workspace's repository (as
/// `refs/atto/swarm/…`, beside no branch of the user's) and checks it out in `tree`, the
/// attempt's worktree. Refuses a branch of another name, a commit that does not descend
/// from the base, and objects git's fsck rejects.
pub async fn receive(
    workspace: &Path,
    base: &str,
    expected_branch: &str,
    returned: &ResultEvent,
    tree: &Worktree,
) -> Result<(), String> {
    if returned.branch != expected_branch {
        return Err(format!(
            "the worker returned branch {:?}, not {expected_branch:?}",
            returned.branch
        ));
    }
    if !is_object_id(&returned.commit) {
        return Err(format!("the worker returned commit {:?}", returned.commit));
    }
    store(workspace, expected_branch, returned)
        .await
        .map_err(|e| format!("its result could not be fetched: {e}"))?;
    let got = &returned.commit;
    // Its ref, beside no branch of the user's, and the check that it starts from the base,
    // at once.
    let reference = format!("refs/{expected_branch}");
    let record = ["update-ref", reference.as_str(), got.as_str()];
    let ancestry = ["merge-base", "--is-ancestor", base, got.as_str()];
    let (recorded, descends) = tokio::join!(git(workspace, &record), git(workspace, &ancestry));
    recorded.map_err(|e| format!("its result could not be fetched: {e}"))?;
    descends.map_err(|_| format!("its branch does not start from the base {base}"))?;
    tree.git(&["checkout", "-q", "-f", "--detach", got], None)
        .await
        .map_err(|e| format!("its result could not be checked out: {e}"))?;
    Ok(())
}

/// Stores the returned bundle's objects (its tip named `branch`) in the workspace's
/// repository. The objects are stored as git fetch would store them (loose
/// when few, a pack when many), each checked first: fsck's rules (no `.git` entry, no
/// malformed object) and every object they name present.
async fn store(workspace: &Path, branch: &str, returned: &ResultEvent) -> Result<(), String> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(returned.bundle.as_bytes())
        .map_err(|e| format!("its bundle is not base64: {e}"))?;
    let holds = bundle_tip(&bytes, &format!("refs/heads/{branch}"))
        .ok_or_else(|| format!("its bundle holds no branch {branch:?}"))?;
    if holds != returned.commit {
        return Err(format!(
            "its branch holds {holds}, not the commit it announced ({})",
            returned.commit
        ));
    }
    let start = pack_start(&bytes).ok_or("its bundle holds no pack")?;
    let pack = { bytes }.split_off(start);
    let how: &[&str] = if pack_objects(&pack) < UNPACK_LIMIT {
        &["unpack-objects", "-q", "--strict"]
    } else {
        &["index-pack", "--stdin", "--fix-thin", "--strict"]
    };
    crate::isolation::run_git_input(workspace, how, pack).await?;
    Ok(())
}

/// Fewer objects than this are stored loose, as `git fetch` does (`transfer.unpackLimit`).
const UNPACK_LIMIT: u32 = 100;

/// Where the pack a bundle carries starts: after its header's empty line.
fn pack_start(bundle: &[u8]) -> Option<usize> {
    let start = bundle.windows(2).position(|w| w == b"\n\n")? + 2;
    bundle[start..].starts_with(b"PACK").then_some(start)
}

/// How many objects a pack says it holds (its header's count).
fn pack_objects(pack: &[u8]) -> u32 {
    pack.get(8..12)
        .and_then(|n| n.try_into().ok())
        .map_or(0, u32::from_be_bytes)
}

/// The object a bundle's header names for `reference` (`None` when it names none, or names
/// it twice). The header: a `# v2 git bundle` or `# v3 git bundle` line, v3's `@`
/// capabilities, `-<id>` prerequisites and `<id> <ref>` lines, then an empty line.
fn bundle_tip(bundle: &[u8], reference: &str) -> Option<String> {
    let mut lines = bundle.split(|b| *b == b'\n');
    let signature = lines.next()?;
    if signature != b"# v2 git bundle" && signature != b"# v3 git bundle" {
        return None;
    }
    let mut tips = lines
        .take_while(|l| !l.is_empty())
        .filter(|l| !l.starts_with(b"-") && !l.starts_with(b"@"))
        .filter_map(|l| {
            let l = std::str::from_utf8(l).ok()?;
            let (id, name) = l.split_once(' ')?;
            (name == reference).then(|| id.to_owned())
        });
    let tip = tips.next()?;
    tips.next().is_none().then_some(tip)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::isolation;
    use crate::testing::sh;

    fn repo() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        sh(
            dir.path(),
            "git init -q && git config user.email a@b && git config user.name a && \
             printf 'one\\ntwo\\nthree\\n' > a.txt && git add . && git commit -qm init && \
             echo untracked > new.txt",
        );
        dir
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
        let out = std::process::Command::new("git")
            .args(["bundle", "verify", "-q"])
            .arg(&bundles[0])
            .current_dir(ws.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// A workspace, its scratch directory, the snapshot an attempt starts from, the
    /// attempt's worktree and its published base.
    async fn published() -> (tempfile::TempDir, tempfile::TempDir, String, Worktree, Base) {
        let ws = repo();
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
        let entries =
            std::iter::once(".git".to_owned()).chain((1..=extra).map(|n| format!("f{n:03}")));
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
            let script =
                format!("mkdir many && for n in $(seq {files}); do echo $n > many/$n; done");
            let returned = work_remotely(&base, &name, &script);
            receive(ws.path(), &base.commit, &name, &returned, &tree)
                .await
                .unwrap();
            assert!(tree.dir.join(format!("many/{files}")).is_file());
        }
    }
}
