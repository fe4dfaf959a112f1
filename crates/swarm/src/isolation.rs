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
//! not the key's bytes copied into the workspace.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, PoisonError};

use atto_tools::beneath::{Kind, Workspace as Beneath};
use tokio::process::Command;

/// A worktree an attempt works in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Worktree {
    /// Its directory.
    pub dir: PathBuf,
    /// The snapshot commit it started from.
    pub base: String,
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
    let mut cmd = Command::new("git");
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
    if out.status.success() {
        Ok(out.stdout)
    } else {
        Err(format!(
            "git {} failed: {}",
            subcommand(args),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
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

/// Held around every git run that adds or removes a worktree of a repository or fetches
/// into it, one lock per repository: a fetch's connectivity walk reads the HEAD of every
/// worktree, and fails (`bad object worktrees/…/HEAD`) on one being added or removed at
/// that moment by another attempt.
pub(crate) async fn repository_lock(workspace: &Path) -> tokio::sync::OwnedMutexGuard<()> {
    type Locks = BTreeMap<PathBuf, Arc<tokio::sync::Mutex<()>>>;
    static LOCKS: std::sync::Mutex<Locks> = std::sync::Mutex::new(BTreeMap::new());
    let key = std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_path_buf());
    let lock = {
        // The map is only read and inserted into: a panic elsewhere leaves it whole.
        let mut locks = LOCKS.lock().unwrap_or_else(PoisonError::into_inner);
        locks.entry(key).or_default().clone()
    };
    lock.lock_owned().await
}

fn text(bytes: Vec<u8>) -> String {
    String::from_utf8_lossy(&bytes).trim().to_owned()
}

/// A commit of `dir`'s files as they are now (tracked and untracked, ignored ones left
/// out), written through a temporary index so the user's index is untouched.
pub async fn snapshot(dir: &Path, scratch: &Path) -> Result<String, String> {
    // Not while an attempt merges back: its files would be read half written.
    let _merging = MERGING.lock().await;
    std::fs::create_dir_all(scratch).map_err(|e| format!("{}: {e}", scratch.display()))?;
    let index = scratch.join(format!("index-{}", uuid::Uuid::new_v4().simple()));
    let result = async {
        let head = git(dir, &["rev-parse", "--verify", "--quiet", "HEAD"], None)
            .await
            .ok()
            .map(text);
        // From the directory's own index when it can be read: its stat data lets `add`
        // hash only the files changed since (on 5,000 files, ~10 ms instead of ~65), and
        // its skip-worktree entries keep a sparse checkout's absent files. Otherwise
        // from HEAD, every file hashed.
        let seeded = seed_index(dir, &index).await
            && git(dir, &["add", "-A", "--", "."], Some(&index))
                .await
                .is_ok();
        if !seeded {
            let _ = std::fs::remove_file(&index);
            if let Some(head) = &head {
                git(dir, &["read-tree", head], Some(&index)).await?;
            }
            git(dir, &["add", "-A", "--", "."], Some(&index)).await?;
        }
        let tree = text(git(dir, &["write-tree"], Some(&index)).await?);
        let mut args = vec!["commit-tree", tree.as_str(), "-m", "atto swarm snapshot"];
        if let Some(head) = &head {
            args.extend(["-p", head.as_str()]);
        }
        Ok(text(git(dir, &args, Some(&index)).await?))
    }
    .await;
    let _ = std::fs::remove_file(&index);
    result
}

/// Copies `dir`'s own index to `index`, keeping its modification time: git reads an
/// entry changed in the same instant the index was written as possibly changed by
/// comparing the two times, and a copy dated now would hide such a change.
async fn seed_index(dir: &Path, index: &Path) -> bool {
    let Ok(own) = git(
        dir,
        &["rev-parse", "--path-format=absolute", "--git-path", "index"],
        None,
    )
    .await
    else {
        return false;
    };
    let own = PathBuf::from(text(own));
    let copied = (|| {
        let modified = std::fs::metadata(&own)?.modified()?;
        std::fs::copy(&own, index)?;
        std::fs::File::options()
            .write(true)
            .open(index)?
            .set_modified(modified)
    })();
    copied.is_ok()
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
    Ok(Worktree {
        dir: dir.to_path_buf(),
        base: base.to_owned(),
    })
}

/// What the attempt changed in its worktree, against the snapshot it started from.
pub async fn changes(tree: &Worktree, scratch: &Path) -> Result<Vec<Change>, String> {
    let now = snapshot(&tree.dir, scratch).await?;
    let out = git(
        &tree.dir,
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
    let mut fields = out.split(|b| *b == 0).filter(|f| !f.is_empty());
    let mut changes = Vec::new();
    while let (Some(status), Some(path)) = (fields.next(), fields.next()) {
        let path = String::from_utf8_lossy(path).into_owned();
        if is_linked(&tree.dir, &path) {
            continue;
        }
        changes.push(if status.first() == Some(&b'D') {
            Change::Delete(path)
        } else {
            Change::Write(path)
        });
    }
    Ok(changes)
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
    for change in changes {
        let rel = change.path();
        let base = git(workspace, &["show", &format!("{}:{rel}", tree.base)], None)
            .await
            .ok();
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
    let dir = tree.dir.display().to_string();
    let _repository = repository_lock(workspace).await;
    if git(workspace, &["worktree", "remove", "--force", &dir], None)
        .await
        .is_err()
    {
        let _ = std::fs::remove_dir_all(&tree.dir);
        let _ = git(workspace, &["worktree", "prune"], None).await;
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::testing::sh;

    fn repo() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        sh(
            dir.path(),
            "git init -q && git config user.email a@b && git config user.name a && \
             printf 'one\\ntwo\\nthree\\n' > a.txt && echo keep > b.txt && git add . && \
             git commit -qm init && echo untracked > new.txt && mkdir venv && \
             echo 'venv/' > .gitignore && echo lib > venv/lib.py",
        );
        dir
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
        let ws = repo();
        let scratch = tempfile::tempdir().unwrap();
        let base = snapshot(ws.path(), scratch.path()).await.unwrap();
        let tree = create(ws.path(), &base, &scratch.path().join("wt"))
            .await
            .unwrap();
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
        let ws = repo();
        let scratch = tempfile::tempdir().unwrap();
        let base = snapshot(ws.path(), scratch.path()).await.unwrap();
        let tree = create(ws.path(), &base, &scratch.path().join("wt"))
            .await
            .unwrap();
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
        sh(
            ws.path(),
            "git init -q && git config user.email a@b && git config user.name a && \
             git add . && git commit -qm init",
        );
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
        let ws = tempfile::tempdir().unwrap();
        sh(
            ws.path(),
            "git init -q && git config user.email a@b && git config user.name a && \
             mkdir -p here there && echo h > here/h.txt && echo t > there/t.txt && \
             echo top > top.txt && git add . && git commit -qm init && \
             git sparse-checkout set here && test ! -e there/t.txt && \
             echo changed > here/h.txt",
        );
        let scratch = tempfile::tempdir().unwrap();
        let snap = snapshot(ws.path(), scratch.path()).await.unwrap();
        let show = |rev: &str| {
            let out = std::process::Command::new("git")
                .args(["show", rev])
                .current_dir(ws.path())
                .output()
                .unwrap();
            (
                out.status.success(),
                String::from_utf8_lossy(&out.stdout).into_owned(),
            )
        };
        assert_eq!(show(&format!("{snap}:there/t.txt")), (true, "t\n".into()));
        assert_eq!(
            show(&format!("{snap}:here/h.txt")),
            (true, "changed\n".into())
        );
        assert_eq!(show(&format!("{snap}:top.txt")), (true, "top\n".into()));
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
        let out = std::process::Command::new("git")
            .args(["show", &format!("{snap}:b.txt")])
            .current_dir(ws.path())
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), "KEEP\n");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn a_snapshot_never_sees_a_file_half_merged() {
        let ws = tempfile::tempdir().unwrap();
        let old = "old line\n".repeat(400_000);
        let new = "new line\n".repeat(400_000);
        std::fs::write(ws.path().join("big.txt"), &old).unwrap();
        sh(
            ws.path(),
            "git init -q && git config user.email a@b && git config user.name a && \
             git add . && git commit -qm init",
        );
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
}
