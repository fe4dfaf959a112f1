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
mod tests;
