//! Running the real `git` binary against a side repository. Every call passes `--git-dir` and
//! `--work-tree` together, a fixed set of `-c` settings, a private index file and a scrubbed
//! environment, so neither the user's repository nor their git configuration can leak in.
//! This module knows how to run git (and counts every process it starts); it does not know
//! what a checkpoint is.
//!
//! Many atto processes may use one side repository at once. Each handle therefore stages in
//! an index file of its own (`atto-indexes/<pid>-<random>`, removed when the handle goes),
//! seeded from the last one published to `atto-index` so a new process does not rehash the
//! whole workspace; and a git command that fails only because another process holds a lock
//! (`index.lock`, a ref's or `packed-refs`' lock) is run again after a short, growing pause.

use std::ffi::{OsStr, OsString};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use crate::error::CheckpointError;
use crate::seed;

/// Settings that make the side repository behave the same on every machine.
const CONFIG: &[&str] = &[
    "core.autocrlf=false",
    "core.quotepath=off",
    "core.fsmonitor=false",
    "core.untrackedCache=false",
    "gc.auto=0",
    "user.name=atto",
    "user.email=atto@localhost",
    "commit.gpgsign=false",
];

/// Where the private index files live, inside the side repository.
pub(crate) const INDEX_DIR: &str = "atto-indexes";
/// The index last published by any handle: the seed of a new handle's private one.
const SHARED_INDEX: &str = "atto-index";
/// Commands that have no use for the private index, run with none: some read it all the same
/// (`diff-tree --stdin` loads every entry: 45 MB at 200,000 files). Commands that keep what the
/// index names alive (`repack`, `prune`) are not among them.
const WITHOUT_INDEX: &[&str] = &[
    "cat-file",
    "check-ignore",
    "commit-tree",
    "diff-tree",
    "for-each-ref",
    "pack-refs",
    "update-ref",
];
/// Pauses before running a command again that failed on another process's lock file.
const LOCK_RETRIES_MS: &[u64] = &[5, 10, 20, 40, 80, 160, 320, 640];

/// A handle on one side repository and the workspace it snapshots.
#[derive(Debug, Clone)]
pub(crate) struct Git {
    side: PathBuf,
    workspace: PathBuf,
    index: Arc<PrivateIndex>,
    /// `-c core.excludesFile=…` and `-c core.attributesFile=…` pointing at paths that never
    /// exist: unset, git would read the user's `~/.config/git/ignore` and `attributes`.
    no_user_files: [OsString; 2],
    /// git processes started through this handle (and its clones).
    calls: Arc<AtomicU64>,
}

impl Git {
    pub(crate) fn new(side: PathBuf, workspace: PathBuf) -> Self {
        let name = format!("{}-{:08x}", std::process::id(), fastrand::u32(..));
        let index = Arc::new(PrivateIndex {
            path: side.join(INDEX_DIR).join(name),
            shared: side.join(SHARED_INDEX),
            seeded: AtomicBool::new(false),
        });
        let setting = |key: &str| {
            let mut s = OsString::from(format!("{key}="));
            s.push(side.join("no-user-file"));
            s
        };
        Self {
            no_user_files: [setting("core.excludesFile"), setting("core.attributesFile")],
            side,
            workspace,
            index,
            calls: Arc::default(),
        }
    }

    pub(crate) fn side(&self) -> &Path {
        &self.side
    }

    /// How many git processes this handle has started.
    pub(crate) fn calls(&self) -> u64 {
        self.calls.load(Ordering::Relaxed)
    }

    /// How many entries the private index holds, from its 12-byte header (`DIRC`, version,
    /// count); `None` when there is no readable index.
    pub(crate) fn index_entries(&self) -> Option<u64> {
        entries_in(&self.index.path)
    }

    /// The private index file.
    pub(crate) fn index_path(&self) -> &Path {
        &self.index.path
    }

    /// Makes sure the private index exists before `git add`, as a copy of the published one
    /// when there is one: git then rehashes only files whose stat data changed since. A side
    /// repository that never published one starts from the user's own index when it can (see
    /// `seed`), borrowing their objects.
    pub(crate) fn seed_index(&self) {
        if self.index.seeded.swap(true, Ordering::Relaxed) || self.index.path.exists() {
            return;
        }
        // Best effort: without a seed, `git add` builds the index from scratch (slower).
        if copy_keeping_mtime(&self.index.shared, &self.index.path).is_ok() {
            return;
        }
        let Some(user) = seed::user_repo(&self.workspace) else {
            return;
        };
        // The copy is checked again: the user's git may have replaced their index meanwhile.
        let copied = seed::copy_index(&user.index, &self.index.path)
            && seed::borrow_objects(&self.side, &user.objects).is_ok();
        if !copied {
            let _ = std::fs::remove_file(&self.index.path);
        }
    }

    /// Removes the private index and the published one, so the next `git add` builds one
    /// from scratch, from the workspace alone (never seeded from the user's index again in
    /// this process).
    pub(crate) fn drop_index(&self) {
        self.index.seeded.store(true, Ordering::Relaxed);
        let _ = std::fs::remove_file(&self.index.path);
        let _ = std::fs::remove_file(&self.index.shared);
    }

    /// Publishes the private index as the seed for handles opened later. Best effort, as
    /// [`Git::seed_index`].
    pub(crate) fn publish_index(&self) {
        let _ = copy_keeping_mtime(&self.index.path, &self.index.shared);
    }

    /// Runs `git <args>` and returns its stdout.
    pub(crate) fn run<S: AsRef<OsStr>>(&self, args: &[S]) -> Result<Vec<u8>, CheckpointError> {
        self.run_with_input(args, None)
    }

    /// Runs `git <args>` with `input` on stdin and returns its stdout.
    pub(crate) fn run_with_input<S: AsRef<OsStr>>(
        &self,
        args: &[S],
        input: Option<&[u8]>,
    ) -> Result<Vec<u8>, CheckpointError> {
        self.run_with_input_allowing(args, input, &[])
    }

    /// As [`Git::run_with_input`], also taking the exit codes in `allowed` for success (a
    /// command that says "none" with its status, such as `check-ignore`).
    pub(crate) fn run_with_input_allowing<S: AsRef<OsStr>>(
        &self,
        args: &[S],
        input: Option<&[u8]>,
        allowed: &[i32],
    ) -> Result<Vec<u8>, CheckpointError> {
        let mut pauses = LOCK_RETRIES_MS.iter();
        loop {
            match self.run_once(args, input, allowed) {
                Err(CheckpointError::GitFailed { stderr, .. })
                    if is_lock_busy(&stderr) || is_vanished_file(&stderr) =>
                {
                    let Some(ms) = pauses.next() else {
                        return Err(CheckpointError::GitFailed {
                            command: describe(args),
                            stderr: format!(
                                "{stderr} (another atto process held the lock through {} tries)",
                                LOCK_RETRIES_MS.len() + 1
                            ),
                        });
                    };
                    // Jitter keeps processes that collided once from colliding again.
                    std::thread::sleep(Duration::from_millis(ms + fastrand::u64(0..=*ms)));
                }
                other => return other,
            }
        }
    }

    fn run_once<S: AsRef<OsStr>>(
        &self,
        args: &[S],
        input: Option<&[u8]>,
        allowed: &[i32],
    ) -> Result<Vec<u8>, CheckpointError> {
        let mut cmd = Command::new("git");
        scrub_env(&mut cmd, &self.side);
        let subcommand = args
            .iter()
            .map(|a| a.as_ref().to_string_lossy())
            .find(|a| !a.starts_with('-'));
        if subcommand.is_some_and(|s| WITHOUT_INDEX.contains(&s.as_ref())) {
            // An index file that never exists reads as empty.
            cmd.env("GIT_INDEX_FILE", self.side.join("atto-no-index"));
        } else {
            cmd.env("GIT_INDEX_FILE", &self.index.path);
        }
        let mut git_dir = OsString::from("--git-dir=");
        git_dir.push(&self.side);
        let mut work_tree = OsString::from("--work-tree=");
        work_tree.push(&self.workspace);
        cmd.arg(git_dir).arg(work_tree);
        for setting in CONFIG {
            cmd.arg("-c").arg(setting);
        }
        for setting in &self.no_user_files {
            cmd.arg("-c").arg(setting);
        }
        cmd.args(args);
        cmd.current_dir(&self.workspace);
        self.calls.fetch_add(1, Ordering::Relaxed);
        output(cmd, &describe(args), input, allowed)
    }

    /// Runs `git <args>` and returns stdout as one trimmed line (an object id, a ref).
    pub(crate) fn line<S: AsRef<OsStr>>(&self, args: &[S]) -> Result<String, CheckpointError> {
        let out = self.run(args)?;
        Ok(String::from_utf8_lossy(&out).trim().to_owned())
    }
}

/// This handle's own index file; removed when the last clone of the handle goes.
#[derive(Debug)]
struct PrivateIndex {
    path: PathBuf,
    shared: PathBuf,
    seeded: AtomicBool,
}

impl Drop for PrivateIndex {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// How many entries the index file at `path` holds, from its 12-byte header (`DIRC`,
/// version, count).
fn entries_in(path: &Path) -> Option<u64> {
    let mut head = [0u8; 12];
    std::fs::File::open(path).ok()?.read_exact(&mut head).ok()?;
    let [b'D', b'I', b'R', b'C', _, _, _, _, c0, c1, c2, c3] = head else {
        return None;
    };
    Some(u64::from(u32::from_be_bytes([c0, c1, c2, c3])))
}

/// Whether `git add` failed only because a file vanished between its listing and its
/// read: another process (or another atto) removed or renamed it meanwhile. Running the
/// command again sees the workspace as it now is.
pub(crate) fn is_vanished_file(stderr: &str) -> bool {
    stderr.contains("unable to stat") && stderr.contains("No such file or directory")
        || stderr.contains("failed to insert into database")
        || stderr.contains("unable to index file")
}

/// Whether git failed only because another process held a lock file it needed: git says
/// "Unable to create '<path>.lock': File exists." and did nothing else.
pub(crate) fn is_lock_busy(stderr: &str) -> bool {
    stderr.contains(".lock") && stderr.contains("File exists")
}

/// Copies `from` to `to` through a temporary sibling and a rename, keeping `from`'s mtime:
/// git trusts an index entry's stat data only when the file is older than the index itself.
pub(crate) fn copy_keeping_mtime(from: &Path, to: &Path) -> std::io::Result<()> {
    let modified = std::fs::metadata(from)?.modified()?;
    let mut tmp = to.as_os_str().to_owned();
    tmp.push(format!(
        ".tmp-{}-{:08x}",
        std::process::id(),
        fastrand::u32(..)
    ));
    let tmp = PathBuf::from(tmp);
    let copied = std::fs::copy(from, &tmp).and_then(|_| {
        std::fs::File::options()
            .write(true)
            .open(&tmp)?
            .set_modified(modified)
    });
    let renamed = copied.and_then(|()| std::fs::rename(&tmp, to));
    if renamed.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    renamed
}

/// Removes every inherited `GIT_*` variable (a hook or an outer git could have set `GIT_DIR`,
/// `GIT_WORK_TREE`, `GIT_INDEX_FILE` or `GIT_CONFIG*`), then points global and system config
/// at nothing so a user's hooks, fsmonitor or excludes cannot change what a snapshot holds.
fn scrub_env(cmd: &mut Command, side: &Path) {
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("GIT_") {
            cmd.env_remove(key);
        }
    }
    cmd.env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        // A path that is never created: git reads a missing global config as empty.
        .env("GIT_CONFIG_GLOBAL", side.join("no-global-config"))
        .env("LC_ALL", "C");
}

fn describe<S: AsRef<OsStr>>(args: &[S]) -> String {
    args.iter()
        .take(3)
        .map(|a| a.as_ref().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

fn output(
    mut cmd: Command,
    what: &str,
    input: Option<&[u8]>,
    allowed: &[i32],
) -> Result<Vec<u8>, CheckpointError> {
    cmd.stdin(if input.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let mut child = cmd.spawn().map_err(|e| CheckpointError::GitMissing {
        detail: e.to_string(),
    })?;
    let stdin = child.stdin.take();
    // Input is written from its own thread: git may fill its stdout pipe before it has read
    // all of stdin (`cat-file --batch`, `diff-tree --stdin`), and both sides would wait.
    let out = std::thread::scope(|scope| {
        if let (Some(bytes), Some(mut stdin)) = (input, stdin) {
            scope.spawn(move || {
                // A write error here means git exited early; its status and stderr say why.
                let _ = stdin.write_all(bytes);
            });
        }
        child.wait_with_output()
    })
    .map_err(|e| CheckpointError::GitFailed {
        command: what.to_owned(),
        stderr: e.to_string(),
    })?;
    if out.status.success() || out.status.code().is_some_and(|c| allowed.contains(&c)) {
        return Ok(out.stdout);
    }
    Err(CheckpointError::GitFailed {
        command: what.to_owned(),
        stderr: one_line(&out.stderr, out.status.code()),
    })
}

/// Folds git's stderr into one line of at most 300 characters.
fn one_line(stderr: &[u8], code: Option<i32>) -> String {
    let text = String::from_utf8_lossy(stderr);
    let mut line = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ");
    if line.is_empty() {
        line = format!(
            "exit status {}",
            code.map_or("unknown".into(), |c| c.to_string())
        );
    }
    if line.chars().count() > 300 {
        line = line.chars().take(300).collect::<String>() + "…";
    }
    line
}

/// A workspace-relative path from the bytes git stores for it. File names are bytes: on Unix
/// every byte comes back as it was; elsewhere git's names are UTF-8 (`/` becomes the
/// platform's separator when the path is used).
#[cfg(unix)]
pub(crate) fn path_of(bytes: &[u8]) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    PathBuf::from(OsStr::from_bytes(bytes))
}

#[cfg(not(unix))]
pub(crate) fn path_of(bytes: &[u8]) -> PathBuf {
    PathBuf::from(String::from_utf8_lossy(bytes).into_owned())
}

/// Splits NUL-terminated output (`-z`) into byte strings.
pub(crate) fn split_nul_bytes(out: &[u8]) -> Vec<&[u8]> {
    out.split(|b| *b == 0).filter(|s| !s.is_empty()).collect()
}

#[cfg(test)]
mod race_tests {
    use super::{is_lock_busy, is_vanished_file};

    #[test]
    fn a_file_that_vanished_or_a_held_lock_is_worth_another_try() {
        let vanished = "error: open(\".atto-write-u3Ri7L\"): No such file or directory\n\
                        fatal: unable to stat '.atto-write-u3Ri7L': No such file or directory";
        assert!(is_vanished_file(vanished));
        assert!(is_lock_busy(
            "fatal: Unable to create '/x/index.lock': File exists."
        ));
        for other in [
            "fatal: not a git repository",
            "error: pathspec 'x' did not match any file(s) known to git",
            "fatal: unable to stat 'x': Permission denied",
        ] {
            assert!(!is_vanished_file(other) && !is_lock_busy(other), "{other}");
        }
    }
}

#[cfg(test)]
mod index_tests {
    use super::Git;

    /// `diff-tree --stdin` reads the whole index when there is one (a corrupt one makes it
    /// fail): commands that have no use for it must not be given the private index.
    #[test]
    fn commands_without_use_for_the_index_do_not_read_it() {
        let dir = tempfile::tempdir().unwrap();
        let side = dir.path().join("side.git");
        crate::side::ensure(&side).unwrap();
        let ws = dir.path().join("ws");
        std::fs::create_dir(&ws).unwrap();
        let git = Git::new(side, ws);
        let empty = git
            .run_with_input(&["mktree"], Some(b""))
            .map(|out| String::from_utf8_lossy(&out).trim().to_owned())
            .unwrap();
        std::fs::write(git.index_path(), b"not an index").unwrap();
        let pair = format!("{empty} {empty}\n");
        git.run_with_input(&["diff-tree", "--stdin", "-r", "-z"], Some(pair.as_bytes()))
            .unwrap();
        git.run(&["for-each-ref"]).unwrap();
        assert!(git.run(&["ls-files"]).is_err(), "ls-files reads the index");
    }
}
