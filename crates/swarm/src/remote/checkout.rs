//! The worker's side of the git transport (`atto swarm worker -- COMMAND…`, run by a
//! launcher on the remote node): says what the clone it takes holds (a `git_have` line on
//! stdout), reads the base bundle from stdin, clones it into
//! node-local scratch on the attempt's task branch, runs COMMAND (the `atto exec` worker)
//! there with the rest of stdin and all of its stdout passed through, then commits what it
//! changed and writes the branch back as a bundle in a last `git_result` line.
//!
//! Checking out every file of a large tree is most of what an attempt costs on the node, so
//! a node may keep its clones in a pool: a later attempt takes an idle clone, checks its
//! base out over the previous one (git writes only the files that differ), and removes
//! everything git does not track; a base the clone already holds is not unbundled again.
//!
//! The pipe is the only channel: nothing is read from or written to a disk the
//! coordinator might share. When the coordinator's end of stdout breaks (its `srun` or
//! `ssh` died), the worker is killed and nothing is sent; when stdin closes, the worker's
//! stdin closes too, so `--stop-on-stdin-close` stops it as it does locally.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use base64::Engine as _;
use tokio::io::{
    AsyncBufReadExt as _, AsyncRead, AsyncReadExt as _, AsyncWrite, AsyncWriteExt as _,
};

use super::transport::{
    BaseHeader, HaveEvent, MAX_RESULT_BYTES, NodeEvent, ResultEvent, git, is_object_id, text,
};

/// Longest `git_base` header line read.
const MAX_HEADER: u64 = 64 * 1024;

/// How the remote side of an attempt ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Served {
    /// The worker exited with this code and its branch was sent back.
    Returned(i32),
    /// The worker exited with this code; its work could not be sent back (why).
    NotReturned(i32, String),
}

/// A branch name the coordinator may ask for: `atto/swarm/{swarm}/{task}/attempt-N`, ids
/// as task ids are, so it is never an option or a path outside `refs/heads/atto/`.
fn valid_branch(name: &str) -> bool {
    let parts: Vec<&str> = name.split('/').collect();
    matches!(parts.as_slice(), ["atto", "swarm", swarm, task, attempt]
    if crate::task::is_valid_id(swarm)
        && crate::task::is_valid_id(task)
        && attempt.strip_prefix("attempt-").is_some_and(|n| {
            !n.is_empty() && n.len() <= 4 && n.bytes().all(|b| b.is_ascii_digit())
        }))
}

/// Idle clones a pool keeps (in slots `idle-0` …); an attempt that finds them all taken
/// removes its clone instead.
const MAX_IDLE: usize = 4;

/// Where the node makes an attempt's clone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Clones {
    /// A fresh clone in this node-local directory for every attempt, removed after.
    Fresh(PathBuf),
    /// Clones kept in this node-local directory (the user's own, mode 0700) between
    /// attempts: one is taken for each attempt and put back when its branch was sent.
    Pooled(PathBuf),
}

/// The node an attempt is served on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    /// Where the clone is made.
    pub clones: Clones,
    /// Its name, when the scheduler gave one (Slurm's `SLURMD_NODENAME`): sent first, so
    /// the coordinator knows where an attempt lost mid-task ran.
    pub name: Option<String>,
}

/// Serves one attempt: `input` is the worker's stdin as the launcher passes it (the
/// `git_base` line, the bundle, then the protocol), `output` its stdout, `command` the
/// worker to run, `node` where.
pub async fn serve<R, W>(
    input: R,
    mut output: W,
    command: &[String],
    node: &Node,
) -> Result<Served, String>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin,
{
    let (program, args) = command
        .split_first()
        .ok_or("no worker command was given after --")?;
    if let Some(name) = &node.name {
        let event = NodeEvent { node: name.clone() };
        write_line(&mut output, &event)
            .await
            .map_err(|e| format!("stdout could not be written: {e}"))?;
    }
    let clones = &node.clones;
    // A clone first: what it holds goes out before the base comes in.
    let id = uuid::Uuid::new_v4().simple().to_string();
    let (dir, taken) = match clones {
        Clones::Fresh(scratch) => (scratch.join(format!("atto-worker-{id}")), false),
        Clones::Pooled(pool) => {
            let dir = pool.join(format!("busy-{id}"));
            let taken = take_idle(pool, &dir);
            (dir, taken)
        }
    };
    let served = async {
        let haves = if taken {
            holds(&dir.join("work")).await?
        } else {
            Vec::new()
        };
        if !taken {
            std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        write_line(&mut output, &HaveEvent { commits: haves })
            .await
            .map_err(|e| format!("stdout could not be written: {e}"))?;
        let mut input = tokio::io::BufReader::new(input);
        let header = read_header(&mut input).await?;
        let served = in_clone(input, &mut output, &header, &dir, taken, program, args).await?;
        Ok::<_, String>((served, header))
    }
    .await;
    match (clones, &served) {
        (Clones::Pooled(pool), Ok((Served::Returned(_), header))) => {
            put_back(pool, &dir, header).await;
        }
        _ => {
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
    served.map(|(served, _)| served)
}

/// What a pooled clone holds, for the coordinator to leave out of the base: its HEAD, the
/// last attempt's result (its git directory scrubbed first: nothing the last worker left
/// there runs).
async fn holds(work: &Path) -> Result<Vec<String>, String> {
    scrub_git_dir(work)?;
    Ok(git(work, &["rev-parse", "-q", "--verify", "HEAD^{commit}"])
        .await
        .map(|out| text(&out))
        .into_iter()
        .filter(|h| !h.is_empty())
        .collect())
}

/// The `git_base` line off stdin, its branch and commit checked.
async fn read_header<R>(input: &mut tokio::io::BufReader<R>) -> Result<BaseHeader, String>
where
    R: AsyncRead + Unpin,
{
    let mut line = Vec::new();
    input
        .take(MAX_HEADER)
        .read_until(b'\n', &mut line)
        .await
        .map_err(|e| format!("stdin could not be read: {e}"))?;
    let header: BaseHeader = serde_json::from_slice(&line)
        .map_err(|e| format!("the first line on stdin is not a git_base header: {e}"))?;
    if !valid_branch(&header.branch) {
        return Err(format!("{:?} is not a swarm task branch", header.branch));
    }
    if !is_object_id(&header.commit) {
        return Err(format!("{:?} is not a commit id", header.commit));
    }
    Ok(header)
}

/// Moves an idle clone of `pool` to `dir`; false when there is none. Renaming is atomic,
/// so two attempts on one node never take the same clone.
fn take_idle(pool: &Path, dir: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(pool) else {
        return false;
    };
    entries.flatten().any(|entry| {
        entry.file_name().to_string_lossy().starts_with("idle-")
            && std::fs::rename(entry.path(), dir).is_ok()
    })
}

/// How many idle clones `pool` holds.
fn idle_clones(pool: &Path) -> std::io::Result<usize> {
    Ok(std::fs::read_dir(pool)?
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("idle-"))
        .count())
}

/// Returns a served clone to `pool`, off the task branch, into the first free slot
/// `idle-0` … `idle-3`, or removes it when none is free. The slot is taken by renaming the
/// clone onto it, which fails while another clone holds it (a directory with files is
/// never replaced): attempts ending at the same moment never overfill the pool.
async fn put_back(pool: &Path, dir: &Path, header: &BaseHeader) {
    let work = dir.join("work");
    // Scrubbed before git runs there again: a hook the worker planted would run now.
    let tidied = idle_clones(pool).is_ok_and(|n| n < MAX_IDLE)
        && scrub_git_dir(&work).is_ok()
        && off_branch(&work, &header.branch).await.is_ok();
    let placed = tidied
        && (0..MAX_IDLE)
            .any(|slot| std::fs::rename(dir, pool.join(format!("idle-{slot}"))).is_ok());
    if !placed {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// Detaches `work`'s HEAD at its commit and deletes `branch`, writing no file of the work
/// tree (the next attempt checks its own base out over it).
async fn off_branch(work: &Path, branch: &str) -> Result<(), String> {
    git(work, &["update-ref", "--no-deref", "HEAD", "HEAD"]).await?;
    git(work, &["update-ref", "-d", &format!("refs/heads/{branch}")]).await?;
    Ok(())
}

async fn in_clone<R, W>(
    mut input: tokio::io::BufReader<R>,
    output: &mut W,
    header: &BaseHeader,
    dir: &Path,
    reused: bool,
    program: &str,
    args: &[String],
) -> Result<Served, String>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin,
{
    let work = check_out_base(&mut input, header, dir, reused).await?;
    let mut child = tokio::process::Command::new(program)
        .args(args)
        .current_dir(&work)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("{program}: {e}"))?;
    let (Some(mut child_in), Some(mut child_out)) = (child.stdin.take(), child.stdout.take())
    else {
        return Err("the worker's pipes could not be opened".into());
    };
    // The rest of stdin goes to the worker; its end closes the worker's stdin.
    let feed = tokio::spawn(async move {
        let _ = tokio::io::copy(&mut input, &mut child_in).await;
    });
    let passed = tokio::io::copy(&mut child_out, output).await;
    let flushed = output.flush().await;
    feed.abort();
    if let Err(e) = passed.and(flushed.map(|()| 0)) {
        // The coordinator is gone: nobody would read the work, so none is done.
        let _ = child.start_kill();
        let _ = child.wait().await;
        return Err(format!(
            "the coordinator's end of stdout broke ({e}); the worker was stopped"
        ));
    }
    let status = child
        .wait()
        .await
        .map_err(|e| format!("the worker could not be waited for: {e}"))?;
    let code = status.code().unwrap_or(1);
    let event = match result_event(&work, header).await {
        Ok(event) => event,
        Err(why) => return Ok(Served::NotReturned(code, why)),
    };
    write_line(output, &event)
        .await
        .map_err(|e| format!("the result could not be written: {e}"))?;
    Ok(Served::Returned(code))
}

/// Writes `event` as one stream-json line and flushes it.
async fn write_line<W, E>(output: &mut W, event: &E) -> Result<(), String>
where
    W: AsyncWrite + Unpin,
    E: serde::Serialize,
{
    let mut line = serde_json::to_vec(event).map_err(|e| e.to_string())?;
    line.push(b'\n');
    output
        .write_all(&line)
        .await
        .and(output.flush().await)
        .map_err(|e| e.to_string())
}

/// Reads the base bundle off stdin and checks its commit out on the task branch in the
/// clone under `dir` (a new one, or one a pool kept when `reused`); returns the clone.
async fn check_out_base<R>(
    input: &mut tokio::io::BufReader<R>,
    header: &BaseHeader,
    dir: &Path,
    reused: bool,
) -> Result<std::path::PathBuf, String>
where
    R: AsyncRead + Unpin,
{
    let work = dir.join("work");
    if reused {
        // Its git directory was scrubbed when it was taken (`holds`).
        let held = git(
            &work,
            &["cat-file", "-e", &format!("{}^{{commit}}", header.commit)],
        )
        .await
        .is_ok();
        if held {
            let skipped = tokio::io::copy(&mut input.take(header.bytes), &mut tokio::io::sink())
                .await
                .map_err(|e| format!("the base bundle could not be read: {e}"))?;
            short_bundle(skipped, header)?;
        } else {
            unbundle(input, header, dir, &work).await?;
        }
        // Tracked files as the base has them (only those that differ are written), and
        // nothing else: what the last attempt left, ignored files too, is removed.
        git(
            &work,
            &["checkout", "-q", "-f", "-B", &header.branch, &header.commit],
        )
        .await?;
        git(&work, &["clean", "-q", "-ffdx"]).await?;
        return Ok(work);
    }
    let work_arg = work.display().to_string();
    git(dir, &["init", "-q", &work_arg]).await?;
    unbundle(input, header, dir, &work).await?;
    git(
        &work,
        &[
            "-c",
            "checkout.workers=0",
            "checkout",
            "-q",
            "-b",
            &header.branch,
            &header.commit,
        ],
    )
    .await?;
    Ok(work)
}

/// A reused clone's git directory as `git init` made it: the last worker may have changed
/// its config (a `core.fsmonitor` runs a program), hooks or excludes, and nothing of that
/// may reach the next attempt or the commit of its work.
fn scrub_git_dir(work: &Path) -> Result<(), String> {
    let git_dir = work.join(".git");
    for sub in ["hooks", "info"] {
        let path = git_dir.join(sub);
        if path.symlink_metadata().is_ok() {
            let removed = if path.is_dir() && !path.is_symlink() {
                std::fs::remove_dir_all(&path)
            } else {
                std::fs::remove_file(&path)
            };
            removed.map_err(|e| format!("{}: {e}", path.display()))?;
        }
    }
    let config = git_dir.join("config");
    std::fs::write(
        &config,
        "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n",
    )
    .map_err(|e| format!("{}: {e}", config.display()))
}

fn short_bundle(copied: u64, header: &BaseHeader) -> Result<(), String> {
    if copied == header.bytes {
        Ok(())
    } else {
        Err(format!(
            "stdin ended after {copied} of the base bundle's {} bytes",
            header.bytes
        ))
    }
}

/// Copies the base bundle off stdin into `dir` and unbundles it into the clone `work`.
async fn unbundle<R>(
    input: &mut tokio::io::BufReader<R>,
    header: &BaseHeader,
    dir: &Path,
    work: &Path,
) -> Result<(), String>
where
    R: AsyncRead + Unpin,
{
    let bundle = dir.join("base.bundle");
    {
        let mut file = tokio::fs::File::create(&bundle)
            .await
            .map_err(|e| format!("{}: {e}", bundle.display()))?;
        let copied = tokio::io::copy(&mut input.take(header.bytes), &mut file)
            .await
            .map_err(|e| format!("the base bundle could not be read: {e}"))?;
        short_bundle(copied, header)?;
        file.flush().await.map_err(|e| e.to_string())?;
    }
    git(work, &["bundle", "unbundle", &bundle.display().to_string()]).await?;
    let _ = std::fs::remove_file(&bundle);
    Ok(())
}

/// Commits everything the worker left in `work` on the task branch and bundles the branch
/// against the base.
async fn result_event(work: &Path, header: &BaseHeader) -> Result<ResultEvent, String> {
    // The commit made from the index directly: `git commit` would refresh the index once
    // more and could run hooks or sign; a commit of what HEAD holds (the base, or a commit
    // the worker made itself) plus what is left, on the task branch.
    git(work, &["add", "-A", "--", "."]).await?;
    let tree = text(&git(work, &["write-tree"]).await?);
    let message = format!("atto swarm: {}", header.branch);
    let commit = text(&git(work, &["commit-tree", &tree, "-p", "HEAD", "-m", &message]).await?);
    git(
        work,
        &[
            "update-ref",
            &format!("refs/heads/{}", header.branch),
            &commit,
        ],
    )
    .await?;
    let out: PathBuf = work.with_file_name("result.bundle");
    git(
        work,
        &[
            "bundle",
            "create",
            "-q",
            &out.display().to_string(),
            &format!("refs/heads/{}", header.branch),
            &format!("^{}", header.commit),
        ],
    )
    .await?;
    let bytes = std::fs::read(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    let _ = std::fs::remove_file(&out);
    if bytes.len() > MAX_RESULT_BYTES {
        return Err(format!(
            "its branch's bundle is {} bytes, more than the {MAX_RESULT_BYTES} one result may carry",
            bytes.len()
        ));
    }
    Ok(ResultEvent {
        branch: header.branch.clone(),
        commit,
        bundle: base64::engine::general_purpose::STANDARD.encode(bytes),
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::isolation;
    use crate::remote::transport::{self, branch, preamble, publish};
    use crate::testing::sh;

    /// A workspace whose one commit holds `a.txt` = "one".
    fn one_file_repo() -> tempfile::TempDir {
        let ws = tempfile::tempdir().unwrap();
        sh(
            ws.path(),
            "git init -q && git config user.email a@b && git config user.name a && \
             echo one > a.txt && git add . && git commit -qm init",
        );
        ws
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
        assert_eq!(
            std::fs::read_to_string(tree.dir.join("a.txt")).unwrap(),
            "two\n"
        );
        assert_eq!(
            std::fs::read_to_string(tree.dir.join("b.txt")).unwrap(),
            "new\n"
        );
    }

    /// Attempts ending together on one node never leave more idle clones than the pool
    /// keeps: each is put back into a numbered slot by a rename, which fails on a slot
    /// another clone holds, so the last ones are removed instead.
    #[tokio::test]
    async fn clones_put_back_together_never_overfill_the_pool() {
        let ws = one_file_repo();
        let node = tempfile::tempdir().unwrap();
        let header = BaseHeader {
            commit: String::new(),
            branch: branch("s1", "t1", 1),
            bytes: 0,
        };
        let mut dirs = Vec::new();
        for n in 0..6 {
            let dir = node.path().join(format!("busy-{n}"));
            sh(
                node.path(),
                &format!(
                    "git clone -q {} {}/work && git -C {1}/work checkout -q -b {}",
                    ws.path().display(),
                    dir.display(),
                    header.branch
                ),
            );
            dirs.push(dir);
        }
        let back = |n: usize| put_back(node.path(), &dirs[n], &header);
        tokio::join!(back(0), back(1), back(2), back(3), back(4), back(5));
        assert_eq!(idle_clones(node.path()).unwrap(), MAX_IDLE);
        assert!(dirs.iter().all(|d| !d.exists()));
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
        assert_eq!(
            std::fs::read_to_string(tree.dir.join("a.txt")).unwrap(),
            "two\n"
        );
        assert_eq!(
            std::fs::read_to_string(tree.dir.join("c.txt")).unwrap(),
            "later\n"
        );
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
        assert_eq!(
            std::fs::read_to_string(tree.dir.join("new.log")).unwrap(),
            "kept\n"
        );
        assert_eq!(
            std::fs::read_to_string(tree.dir.join("a.txt")).unwrap(),
            "one\n"
        );
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

    /// A pooled clone says what it holds, and the coordinator sends only what that does
    /// not reach: the files changed since the clone's last attempt, or nothing at all when
    /// it holds the base.
    #[tokio::test]
    async fn a_node_is_sent_only_what_its_clone_does_not_hold() {
        let ws = one_file_repo();
        sh(
            ws.path(),
            "mkdir data && for n in $(seq 60); do seq $n 2000 > data/f$n.txt; done && \
             git add -A && git commit -qm files",
        );
        let scratch = tempfile::tempdir().unwrap();
        let node = tempfile::tempdir().unwrap();
        let pool = Node {
            clones: Clones::Pooled(node.path().to_owned()),
            name: None,
        };
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
            assert_eq!(
                std::fs::read_to_string(tree.dir.join(format!("out{n}.txt"))).unwrap(),
                format!("{n}\n")
            );
            let full = publish(ws.path(), &snap, scratch.path()).await.unwrap();
            sent.push((bytes, std::fs::metadata(&full.bundle).unwrap().len()));
            held.push(have.commits);
        }
        // The first clone was new: it held nothing and got the whole base.
        assert!(held[0].is_empty());
        assert_eq!(sent[0].0, sent[0].1);
        // The second held the first's result: a.txt's change came, not the 60 files.
        assert_eq!(held[1].len(), 1);
        assert!(sent[1].0 * 10 < sent[1].1, "{sent:?}");
        // The third's base is the parent of the result its clone holds: nothing was sent.
        assert_eq!(sent[2].0, 0);
    }
}
