//! `isolation: worktree`: every attempt works in a git worktree of its own, made from a
//! snapshot of the workspace as it is at dispatch (tracked and untracked files, not the
//! ignored ones), and its changes are merged back into the workspace only when the task
//! passes. The user's index, HEAD and branches are never touched: snapshots are commit
//! objects written through a temporary index, referenced by no branch.
//!
//! Merging is per file and three-way (`git merge-file`) between the snapshot (base),
//! the workspace now (other workers' passed changes) and the worktree; all files merge or
//! none are written, and the conflicting paths are reported. Both sides are read and the
//! merge written beneath a directory handle, never through a symlink at the file itself:
//! a worker that leaves a link to `~/.ssh/id_rsa` in its worktree gets the merge refused,
//! not the key's bytes copied into the workspace. Likewise git never reads a worktree
//! through its `.git` file once a worker ran there: the git directory read when atto made
//! the worktree is named to every git run on it, so a worker that rewrites the file to name
//! another repository of the user's gets neither that repository read nor objects written
//! into it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, PoisonError};

use atto_tools::beneath::{Kind, Workspace as Beneath};
use tokio::process::Command;

mod pool;
pub use pool::{Pool, Ready};

/// A worktree an attempt works in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Worktree {
    /// Its directory.
    pub dir: PathBuf,
    /// The snapshot commit it started from.
    pub base: String,
    /// Its git directory, read when atto made it (before any worker ran there). Every git
    /// run on the worktree goes through it, never through the worktree's `.git` file: a
    /// worker may rewrite that to name another repository of the user's.
    pub git_dir: PathBuf,
}

impl Worktree {
    /// The worktree or checkout at `dir`, its git directory read now: for a directory no
    /// worker has run in yet.
    pub async fn open(dir: &Path, base: &str) -> Result<Worktree, String> {
        let git_dir = text(git(dir, &["rev-parse", "--absolute-git-dir"], None).await?);
        Ok(Worktree {
            dir: dir.to_path_buf(),
            base: base.to_owned(),
            git_dir: PathBuf::from(git_dir),
        })
    }

    /// Runs git on this worktree through its git directory.
    pub(crate) async fn git(&self, args: &[&str], index: Option<&Path>) -> Result<Vec<u8>, String> {
        self.at().git(args, index).await
    }

    fn at(&self) -> At<'_> {
        At {
            dir: &self.dir,
            git_dir: Some(&self.git_dir),
        }
    }
}

/// Where a git run works: a directory, through the git directory atto recorded for it when
/// there is one (a worktree's), otherwise as git finds it.
#[derive(Clone, Copy)]
struct At<'a> {
    dir: &'a Path,
    git_dir: Option<&'a Path>,
}

impl At<'_> {
    async fn git(self, args: &[&str], index: Option<&Path>) -> Result<Vec<u8>, String> {
        run_git_in(self.dir, self.git_dir, args, index, false).await
    }
}

/// A file the attempt changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// Added or modified.
    Write(String),
    /// Deleted.
    Delete(String),
}

impl Change {
    /// Its workspace-relative path.
    pub fn path(&self) -> &str {
        match self {
            Change::Write(p) | Change::Delete(p) => p,
        }
    }
}

async fn git(dir: &Path, args: &[&str], index: Option<&Path>) -> Result<Vec<u8>, String> {
    run_git(dir, args, index, false).await
}

/// Runs git in `dir` as atto (snapshot and base commits are atto's, referenced by no
/// branch: they need no user identity), with `index` as its index when given, and with
/// fixed dates when `fixed_dates` (a remote base must be the same commit for the same tree).
pub(crate) async fn run_git(
    dir: &Path,
    args: &[&str],
    index: Option<&Path>,
    fixed_dates: bool,
) -> Result<Vec<u8>, String> {
    run_git_in(dir, None, args, index, fixed_dates).await
}

/// [`run_git`], with `git_dir` as the repository and `dir` as its work tree when given.
async fn run_git_in(
    dir: &Path,
    git_dir: Option<&Path>,
    args: &[&str],
    index: Option<&Path>,
    fixed_dates: bool,
) -> Result<Vec<u8>, String> {
    let mut cmd = Command::new("git");
    if let Some(git_dir) = git_dir {
        cmd.env("GIT_DIR", git_dir).env("GIT_WORK_TREE", dir);
    }
    cmd.arg("-C")
        .arg(dir)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_AUTHOR_NAME", "atto swarm")
        .env("GIT_AUTHOR_EMAIL", "atto@localhost")
        .env("GIT_COMMITTER_NAME", "atto swarm")
        .env("GIT_COMMITTER_EMAIL", "atto@localhost")
        .kill_on_drop(true);
    if let Some(index) = index {
        cmd.env("GIT_INDEX_FILE", index);
    }
    if fixed_dates {
        cmd.env("GIT_AUTHOR_DATE", "1700000000 +0000")
            .env("GIT_COMMITTER_DATE", "1700000000 +0000");
    }
    let out = cmd
        .output()
        .await
        .map_err(|e| format!("git could not be run: {e}"))?;
    stdout_of(args, out, true)
}

/// Its stdout when git `args` succeeded (and its input was written whole: `written`), or
/// an error naming the command, with what git said.
fn stdout_of(args: &[&str], out: std::process::Output, written: bool) -> Result<Vec<u8>, String> {
    if out.status.success() && written {
        Ok(out.stdout)
    } else {
        Err(format!(
            "git {} failed: {}",
            subcommand(args),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// Runs git in `dir` with `input` on its stdin; its stdout.
pub(crate) async fn run_git_input(
    dir: &Path,
    args: &[&str],
    input: Vec<u8>,
) -> Result<Vec<u8>, String> {
    run_git_to(dir, args, input, Stdio::piped()).await
}

/// Runs git in `dir` with `input` on its stdin and its stdout going to `stdout`; what it
/// wrote there when that is a pipe.
pub(crate) async fn run_git_to(
    dir: &Path,
    args: &[&str],
    input: Vec<u8>,
    stdout: Stdio,
) -> Result<Vec<u8>, String> {
    use tokio::io::AsyncWriteExt as _;
    let mut child = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(Stdio::piped())
        .stdout(stdout)
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("git could not be run: {e}"))?;
    let mut stdin = child.stdin.take().ok_or("git: no stdin")?;
    // Written while the output is read: neither pipe fills and stops the other.
    let writing = async move {
        let written = stdin.write_all(&input).await;
        drop(stdin);
        written
    };
    let (written, out) = tokio::join!(writing, child.wait_with_output());
    let out = out.map_err(|e| format!("git {}: {e}", subcommand(args)))?;
    stdout_of(args, out, written.is_ok())
}

/// The git command `args` run (`fetch` of `-c fetch.fsckObjects=true fetch …`), to name
/// it in an error.
fn subcommand<'a>(args: &[&'a str]) -> &'a str {
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match *arg {
            "-c" | "-C" => {
                rest.next();
            }
            a if a.starts_with('-') => {}
            a => return a,
        }
    }
    ""
}

/// Held around every git run that adds, moves or removes a worktree of a repository, one
/// lock per repository: two at once trip over git's bookkeeping of worktrees (`failed to
/// read .git/worktrees/…/commondir`), and a walk of every worktree's HEAD (a fetch's
/// connectivity check) fails on one being added or removed at that moment.
pub(crate) async fn repository_lock(workspace: &Path) -> tokio::sync::OwnedMutexGuard<()> {
    static LOCKS: KeyedLocks = KeyedLocks::new();
    let key = std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_path_buf());
    LOCKS.lock(key).await
}

/// One async lock per path, made when first asked for and forgotten once no one holds or
/// waits for it.
pub(crate) struct KeyedLocks(
    std::sync::Mutex<BTreeMap<PathBuf, std::sync::Weak<tokio::sync::Mutex<()>>>>,
);

impl KeyedLocks {
    pub(crate) const fn new() -> KeyedLocks {
        KeyedLocks(std::sync::Mutex::new(BTreeMap::new()))
    }

    /// Waits for `key`'s lock and holds it until the guard is dropped.
    pub(crate) async fn lock(&self, key: PathBuf) -> tokio::sync::OwnedMutexGuard<()> {
        let lock = {
            // Only read, pruned and inserted into: a panic elsewhere leaves it whole.
            let mut locks = self.0.lock().unwrap_or_else(PoisonError::into_inner);
            locks.retain(|_, lock| lock.strong_count() > 0);
            match locks.get(&key).and_then(std::sync::Weak::upgrade) {
                Some(lock) => lock,
                None => {
                    let lock = Arc::new(tokio::sync::Mutex::new(()));
                    locks.insert(key, Arc::downgrade(&lock));
                    lock
                }
            }
        };
        lock.lock_owned().await
    }
}

fn text(bytes: Vec<u8>) -> String {
    String::from_utf8_lossy(&bytes).trim().to_owned()
}

/// A commit of `dir`'s files as they are now (tracked and untracked, ignored ones left
/// out), written through a temporary index so the user's index is untouched.
///
/// Attempts dispatched together (a swarm's first wave) share one: a snapshot begun after
/// this one was asked for holds every merge finished before it was asked (merges and
/// snapshots take turns), so it serves as this one's.
pub async fn snapshot(dir: &Path, scratch: &Path) -> Result<String, String> {
    let asked = SNAPSHOT_TURNS.fetch_add(1, Ordering::SeqCst);
    // Not while an attempt merges back: its files would be read half written.
    let _merging = MERGING.lock().await;
    let key = dir.to_path_buf();
    let last = LAST_SNAPSHOTS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get(&key)
        .cloned();
    if let Some((began, commit)) = last
        && began > asked
    {
        return Ok(commit);
    }
    let began = SNAPSHOT_TURNS.fetch_add(1, Ordering::SeqCst);
    let commit = snapshot_of(At { dir, git_dir: None }, scratch).await?;
    #[cfg(test)]
    tests::SNAPSHOTS_TAKEN
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(key.clone());
    LAST_SNAPSHOTS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(key, (began, commit.clone()));
    Ok(commit)
}

/// Counts the snapshots asked for and begun, in one order.
static SNAPSHOT_TURNS: AtomicU64 = AtomicU64::new(0);

/// Each directory's last snapshot: when it began (in [`SNAPSHOT_TURNS`]) and its commit.
static LAST_SNAPSHOTS: std::sync::Mutex<BTreeMap<PathBuf, (u64, String)>> =
    std::sync::Mutex::new(BTreeMap::new());

/// [`snapshot`] of a directory, through its recorded git directory when it has one; the
/// caller holds [`MERGING`].
async fn snapshot_of(at: At<'_>, scratch: &Path) -> Result<String, String> {
    let head = at
        .git(&["rev-parse", "--verify", "--quiet", "HEAD"], None)
        .await
        .ok()
        .map(text);
    let tree = tree_in(at, scratch, head.as_deref()).await?;
    let mut args = vec!["commit-tree", tree.as_str(), "-m", "atto swarm snapshot"];
    if let Some(head) = &head {
        args.extend(["-p", head.as_str()]);
    }
    Ok(text(at.git(&args, None).await?))
}

/// The tree of the files of `at` as they are now, written through a temporary index in
/// `scratch`: a copy of the directory's own when it can serve (its stat data lets `add`
/// hash only the files changed since: on 5,000 files, ~10 ms instead of ~65), otherwise
/// `from` read (every file hashed).
async fn tree_in(at: At<'_>, scratch: &Path, from: Option<&str>) -> Result<String, String> {
    std::fs::create_dir_all(scratch).map_err(|e| format!("{}: {e}", scratch.display()))?;
    let index = scratch.join(format!("index-{}", uuid::Uuid::new_v4().simple()));
    let result = async {
        let seeded = seed_index(at, &index).await
            && at
                .git(&["add", "-A", "--", "."], Some(&index))
                .await
                .is_ok();
        if !seeded {
            let _ = std::fs::remove_file(&index);
            if let Some(from) = from {
                at.git(&["read-tree", from], Some(&index)).await?;
            }
            at.git(&["add", "-A", "--", "."], Some(&index)).await?;
        }
        Ok(text(at.git(&["write-tree"], Some(&index)).await?))
    }
    .await;
    let _ = std::fs::remove_file(&index);
    result
}

/// Copies `dir`'s own index to `index` when `git add -A` can start from it (checkpoints'
/// seeding rule: its time kept, no entry marked assume-unchanged or skip-worktree, no split
/// or sparse index). A worktree's is in its git directory; another directory's is asked of
/// git.
async fn seed_index(at: At<'_>, index: &Path) -> bool {
    let own = match at.git_dir {
        Some(git_dir) => git_dir.join("index"),
        None => {
            let args = ["rev-parse", "--path-format=absolute", "--git-path", "index"];
            match at.git(&args, None).await {
                Ok(out) => PathBuf::from(text(out)),
                Err(_) => return false,
            }
        }
    };
    atto_checkpoint::copy_index(&own, index)
}

/// Makes a detached worktree of `workspace` at `base` in `dir`, with the workspace's
/// top-level ignored directories (virtual environments, `node_modules`) linked in so the
/// project's tests can run there.
pub async fn create(workspace: &Path, base: &str, dir: &Path) -> Result<Worktree, String> {
    if let Some(parent) = dir.parent() {
        std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
    }
    let target = dir.display().to_string();
    let repository = repository_lock(workspace).await;
    git(
        workspace,
        &["worktree", "add", "--detach", "--quiet", &target, base],
        None,
    )
    .await?;
    drop(repository);
    link_ignored(workspace, dir).await;
    let tree = Worktree::open(dir, base).await;
    if tree.is_err() {
        remove_dir(workspace, dir).await;
    }
    tree
}

/// Links the workspace's top-level ignored directories (virtual environments,
/// `node_modules`) into the worktree at `dir`, so the project's tests can run there.
async fn link_ignored(workspace: &Path, dir: &Path) {
    let ignored = git(
        workspace,
        &[
            "ls-files",
            "--others",
            "--ignored",
            "--exclude-standard",
            "--directory",
            "-z",
        ],
        None,
    )
    .await
    .unwrap_or_default();
    for entry in ignored.split(|b| *b == 0) {
        let rel = String::from_utf8_lossy(entry);
        let rel = rel.trim_end_matches('/');
        // Top-level directories only; never atto's own or git's.
        if rel.is_empty() || rel.contains('/') || rel.starts_with(".git") || rel == ".atto" {
            continue;
        }
        let from = workspace.join(rel);
        let to = dir.join(rel);
        if from.is_dir() && !to.exists() {
            let _ = std::os::unix::fs::symlink(&from, &to);
        }
    }
}

/// What the attempt changed in its worktree, against the snapshot it started from.
pub async fn changes(tree: &Worktree, scratch: &Path) -> Result<Vec<Change>, String> {
    // Its files' tree only (no commit is needed to compare), not while an attempt merges.
    let now = {
        let _merging = MERGING.lock().await;
        tree_in(tree.at(), scratch, Some(&tree.base)).await?
    };
    let out = tree
        .git(
            &[
                "diff",
                "--name-status",
                "--no-renames",
                "-z",
                &tree.base,
                &now,
            ],
            None,
        )
        .await?;
    Ok(listed(&tree.dir, &out))
}

/// What a remote attempt changed: the commit it returned, against the snapshot it started
/// from. One git run, no file of the worktree read; what the checks left in the worktree
/// after it was checked out is not the worker's work and is not listed.
pub async fn changes_returned(tree: &Worktree, commit: &str) -> Result<Vec<Change>, String> {
    let args = [
        "diff-tree",
        "-r",
        "--name-status",
        "--no-renames",
        "-z",
        &tree.base,
        commit,
    ];
    Ok(listed(&tree.dir, &tree.git(&args, None).await?))
}

/// The changes `git diff --name-status -z` lists, those under a linked ignored directory
/// of worktree `dir` left out.
fn listed(dir: &Path, out: &[u8]) -> Vec<Change> {
    let mut fields = out.split(|b| *b == 0).filter(|f| !f.is_empty());
    let mut changes = Vec::new();
    while let (Some(status), Some(path)) = (fields.next(), fields.next()) {
        let path = String::from_utf8_lossy(path).into_owned();
        if is_linked(dir, &path) {
            continue;
        }
        changes.push(if status.first() == Some(&b'D') {
            Change::Delete(path)
        } else {
            Change::Write(path)
        });
    }
    changes
}

/// Whether `rel` lies under one of the ignored directories linked into the worktree.
fn is_linked(dir: &Path, rel: &str) -> bool {
    let first = rel.split('/').next().unwrap_or(rel);
    std::fs::symlink_metadata(dir.join(first)).is_ok_and(|m| m.file_type().is_symlink())
}

/// Held from reading the workspace's files to writing the merge, and while a snapshot is
/// taken: two attempts merging at once would otherwise both read the same file and the
/// second write would drop the first's lines, and a snapshot could read a file half
/// written.
static MERGING: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Merges the attempt's changes into the workspace: every file three-way against the
/// snapshot, all or nothing. `Err` lists the paths that conflict (nothing was written).
pub async fn merge_back(
    workspace: &Path,
    tree: &Worktree,
    changes: &[Change],
    scratch: &Path,
) -> Result<Vec<String>, Vec<String>> {
    let _merging = MERGING.lock().await;
    let all = || {
        changes
            .iter()
            .map(|c| c.path().to_owned())
            .collect::<Vec<_>>()
    };
    let (Ok(ours_root), Ok(theirs_root)) = (Beneath::open(workspace), Beneath::open(&tree.dir))
    else {
        return Err(all());
    };
    let mut writes: Vec<(String, Option<Content>)> = Vec::new();
    let mut conflicts = Vec::new();
    let paths: Vec<&str> = changes.iter().map(Change::path).collect();
    let Ok(bases) = at_base(workspace, &tree.base, &paths).await else {
        return Err(all());
    };
    for (change, base) in changes.iter().zip(bases) {
        let rel = change.path();
        let (Ok(ours), Ok(theirs)) = (
            read_beneath(&ours_root, rel),
            match change {
                Change::Write(_) => read_beneath(&theirs_root, rel),
                Change::Delete(_) => Ok(None),
            },
        ) else {
            // A link, a directory or a device where a file should be: not merged.
            conflicts.push(rel.to_owned());
            continue;
        };
        if ours.as_ref().map(|c| &c.bytes) == theirs.as_ref().map(|c| &c.bytes) {
            continue;
        }
        if ours.as_ref().map(|c| &c.bytes) == base.as_ref() {
            writes.push((rel.to_owned(), theirs));
            continue;
        }
        // Both sides changed it: a three-way merge of the texts.
        match (ours, theirs) {
            (Some(ours), Some(theirs)) => {
                let base = base.as_deref().unwrap_or(b"");
                match merge_file(&ours.bytes, base, &theirs.bytes, scratch).await {
                    Some(bytes) => writes.push((
                        rel.to_owned(),
                        Some(Content {
                            bytes,
                            mode: theirs.mode,
                        }),
                    )),
                    None => conflicts.push(rel.to_owned()),
                }
            }
            _ => conflicts.push(rel.to_owned()),
        }
    }
    if !conflicts.is_empty() {
        return Err(conflicts);
    }
    write_merged(&ours_root, writes)
}

/// What commit `base` holds at each of `paths` (`None`: no file there), read in one
/// `git cat-file --batch` run (a path holding a line break, which that cannot take, by a
/// run of its own).
pub(crate) async fn at_base(
    workspace: &Path,
    base: &str,
    paths: &[&str],
) -> Result<Vec<Option<Vec<u8>>>, String> {
    let mut input = Vec::new();
    for rel in paths.iter().filter(|p| !p.contains('\n')) {
        input.extend(format!("{base}:{rel}\n").into_bytes());
    }
    let out = run_git_input(workspace, &["cat-file", "--batch"], input).await?;
    let mut batch = Batch(&out);
    let mut contents = Vec::with_capacity(paths.len());
    for rel in paths {
        contents.push(if rel.contains('\n') {
            git(workspace, &["show", &format!("{base}:{rel}")], None)
                .await
                .ok()
        } else {
            batch.next_blob()?
        });
    }
    Ok(contents)
}

/// The output of `git cat-file --batch`, read one object at a time.
struct Batch<'a>(&'a [u8]);

impl Batch<'_> {
    /// The next object's content when it is a blob; `None` when it is missing or another
    /// kind of object.
    fn next_blob(&mut self) -> Result<Option<Vec<u8>>, String> {
        let end = self
            .0
            .iter()
            .position(|b| *b == b'\n')
            .ok_or("git cat-file: output cut short")?;
        let header = String::from_utf8_lossy(&self.0[..end]).into_owned();
        self.0 = &self.0[end + 1..];
        // `<object id> <type> <size>`; anything else (`<name> missing`) has no content.
        let words: Vec<&str> = header.split(' ').collect();
        let [id, kind, size] = words[..] else {
            return Ok(None);
        };
        let (Ok(size), true) = (
            size.parse::<usize>(),
            id.bytes().all(|b| b.is_ascii_hexdigit()),
        ) else {
            return Ok(None);
        };
        let body = self
            .0
            .get(..size)
            .ok_or("git cat-file: output cut short")?
            .to_vec();
        self.0 = self.0.get(size + 1..).unwrap_or_default();
        Ok((kind == "blob").then_some(body))
    }
}

/// Writes (or removes, for `None`) each merged file in the workspace; `Err` names the
/// first that could not be.
fn write_merged(
    ours_root: &Beneath,
    writes: Vec<(String, Option<Content>)>,
) -> Result<Vec<String>, Vec<String>> {
    let mut written = Vec::new();
    for (rel, content) in writes {
        let target = ours_root.resolve(&rel).map_err(|_| vec![rel.clone()])?;
        let result = match content {
            Some(content) => target
                .write_atomic(&content.bytes, Some(content.mode))
                .map(drop),
            None => match target.remove() {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                other => other,
            },
        };
        if result.is_err() {
            return Err(vec![rel]);
        }
        written.push(rel);
    }
    Ok(written)
}

/// A file's bytes and permission bits, as read beneath a directory handle.
struct Content {
    bytes: Vec<u8>,
    mode: u32,
}

/// The regular file at `rel` beneath `root` (`None` when nothing is there); an error when
/// it leads outside, or the name is a link, a directory or anything but a file.
fn read_beneath(root: &Beneath, rel: &str) -> std::io::Result<Option<Content>> {
    use std::io::Read;
    use std::os::unix::fs::PermissionsExt;
    let target = root
        .resolve(rel)
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    match target.kind()? {
        None => Ok(None),
        Some(Kind::File) => {
            let mut file = target.open_read()?;
            let mode = file.metadata()?.permissions().mode() & 0o7777;
            let mut bytes = Vec::new();
            file.read_to_end(&mut bytes)?;
            Ok(Some(Content { bytes, mode }))
        }
        Some(Kind::Dir | Kind::Other) => Err(std::io::ErrorKind::InvalidData.into()),
    }
}

/// `git merge-file -p`: the merged text, `None` on a conflict.
async fn merge_file(ours: &[u8], base: &[u8], theirs: &[u8], scratch: &Path) -> Option<Vec<u8>> {
    let id = uuid::Uuid::new_v4().simple().to_string();
    let paths: Vec<PathBuf> = ["ours", "base", "theirs"]
        .iter()
        .map(|n| scratch.join(format!("{id}.{n}")))
        .collect();
    let wrote = std::fs::create_dir_all(scratch).is_ok()
        && std::fs::write(&paths[0], ours).is_ok()
        && std::fs::write(&paths[1], base).is_ok()
        && std::fs::write(&paths[2], theirs).is_ok();
    let out = if wrote {
        Command::new("git")
            .arg("merge-file")
            .arg("-p")
            .args(&paths)
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .await
            .ok()
    } else {
        None
    };
    for p in &paths {
        let _ = std::fs::remove_file(p);
    }
    let out = out?;
    (out.status.code() == Some(0)).then_some(out.stdout)
}

/// Removes the worktree (and git's record of it).
pub async fn remove(workspace: &Path, tree: &Worktree) {
    remove_dir(workspace, &tree.dir).await;
}

/// Removes the worktree of `workspace` at `dir` (and the directory, should git refuse).
pub async fn remove_dir(workspace: &Path, dir: &Path) {
    let target = dir.display().to_string();
    let _repository = repository_lock(workspace).await;
    if git(workspace, &["worktree", "remove", "--force", &target], None)
        .await
        .is_err()
    {
        let _ = std::fs::remove_dir_all(dir);
        let _ = git(workspace, &["worktree", "prune"], None).await;
    }
}

#[cfg(test)]
mod tests;
