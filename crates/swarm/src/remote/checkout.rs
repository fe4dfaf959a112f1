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
/// removes its clone instead. A clone is made only when none is idle, so a pool holds as
/// many as the node ran attempts at once (its disk held them then), up to this many: a
/// node running more attempts side by side than the pool keeps would start all but those
/// from a new clone, sent and checking out the whole base, every time.
const MAX_IDLE: usize = 16;

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
    let (dir, taken, _in_use) = match clones {
        Clones::Fresh(scratch) => (scratch.join(format!("atto-worker-{id}")), false, None),
        Clones::Pooled(pool) => {
            remove_abandoned(pool, ABANDONED_AFTER);
            take(pool, &id)
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
/// last attempt's result, and the first commit of its history, the base that attempt
/// started from (the coordinator may not have stored the result yet, but it made the
/// base). Its git directory is scrubbed first: nothing the last worker left there runs.
async fn holds(work: &Path) -> Result<Vec<String>, String> {
    scrub_git_dir(work)?;
    let listed = git(work, &["rev-list", "--first-parent", "HEAD"])
        .await
        .map(|out| text(&out))
        .unwrap_or_default();
    let mut commits: Vec<String> = listed.lines().take(1).map(str::to_owned).collect();
    if let Some(first) = listed
        .lines()
        .last()
        .filter(|c| commits.first().map(String::as_str) != Some(*c))
    {
        commits.push(first.to_owned());
    }
    Ok(commits)
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

/// A clone of `pool` for attempt `id`: an idle one moved to `busy-ID` (true), else a new
/// directory there, and its lock, held for as long as the attempt uses it (`None` when
/// it could not be taken; nothing is removed for it then).
fn take(pool: &Path, id: &str) -> (PathBuf, bool, Option<std::fs::File>) {
    let dir = pool.join(format!("busy-{id}"));
    let taken = take_idle(pool, &dir);
    if !taken {
        let _ = std::fs::create_dir_all(&dir);
    }
    let lock = std::fs::File::open(&dir)
        .ok()
        .filter(|lock| lock.try_lock().is_ok());
    (dir, taken, lock)
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

/// How long a `busy-` clone no one holds stays before it is removed: one made by an
/// older atto, which did not lock its clones, may still be in use.
const ABANDONED_AFTER: std::time::Duration = std::time::Duration::from_secs(3600);

/// Removes the clones of `pool` whose node side was killed mid-attempt (SIGKILL, a job
/// cancelled): `busy-`, unlocked (the kernel released the dead process's lock) and
/// unchanged for `after`, by their status-change time, which the rename or making that
/// named them `busy-` set: one just taken, not locked yet, is never removed. Each is a
/// whole checkout that nothing else removes.
fn remove_abandoned(pool: &Path, after: std::time::Duration) {
    use std::os::unix::fs::MetadataExt as _;
    let Ok(entries) = std::fs::read_dir(pool) else {
        return;
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    for entry in entries.flatten() {
        if !entry.file_name().to_string_lossy().starts_with("busy-") {
            continue;
        }
        let Ok(lock) = std::fs::File::open(entry.path()) else {
            continue;
        };
        let changed = lock.metadata().map_or(i64::MAX, |m| m.ctime());
        let old = u64::try_from(changed).is_ok_and(|t| now.saturating_sub(t) >= after.as_secs());
        if old && lock.try_lock().is_ok() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// How many idle clones `pool` holds.
fn idle_clones(pool: &Path) -> std::io::Result<usize> {
    Ok(std::fs::read_dir(pool)?
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("idle-"))
        .count())
}

/// Returns a served clone to `pool`, off the task branch, into the first free slot
/// `idle-0` … `idle-15`, or removes it when none is free. The slot is taken by renaming the
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
mod tests;
