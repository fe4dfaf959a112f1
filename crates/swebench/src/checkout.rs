//! The git side of a benchmark run: a fresh worktree of the task's repository at its base
//! commit, the diff the agent left in it, and removing it again.
//!
//! The user's checkout is only read (its commits) and gains a worktree entry for the
//! length of a run; its files, index and branches are never touched. Nothing here runs the
//! agent or writes predictions.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A worktree made for one instance; [`Worktree::remove`] takes it away again.
pub struct Worktree {
    /// The repository it was made from.
    repo: PathBuf,
    /// Where it is checked out.
    pub path: PathBuf,
    /// The full commit id it starts from, which the diff is taken against.
    pub base: String,
}

/// What the agent changed, as a patch against the base commit.
pub struct Changes {
    /// `git apply`-able patch text (binary files included); empty when nothing changed.
    pub patch: String,
    /// Paths the patch touches.
    pub files: Vec<String>,
}

/// `git` with the caller's repository overrides cleared and no hooks: the harness talks
/// to exactly the repository it names, and checking out runs nobody's scripts.
fn git(dir: &Path) -> Command {
    let mut cmd = Command::new("git");
    cmd.current_dir(dir)
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .env_remove("GIT_OBJECT_DIRECTORY")
        .args(["-c", "core.hooksPath=/dev/null"])
        .stdin(std::process::Stdio::null());
    cmd
}

/// Runs `cmd` and returns its stdout, or a one-line error naming `what`.
fn output(mut cmd: Command, what: &str) -> Result<Vec<u8>, String> {
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run git to {what}: {e}"))?;
    if out.status.success() {
        Ok(out.stdout)
    } else {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let reason = stderr.lines().rfind(|l| !l.trim().is_empty()).unwrap_or("");
        Err(format!("cannot {what}: {}", reason.trim()))
    }
}

fn text(bytes: Vec<u8>) -> String {
    String::from_utf8_lossy(&bytes).trim().to_owned()
}

/// The full id of `rev` (default HEAD) in `repo`, after checking `repo` is a git checkout.
pub fn resolve_base(repo: &Path, rev: Option<&str>) -> Result<String, String> {
    if !repo.is_dir() {
        return Err(format!("repository {} does not exist", repo.display()));
    }
    let mut check = git(repo);
    check.args(["rev-parse", "--git-dir"]);
    output(
        check,
        &format!("use {} as a git repository", repo.display()),
    )?;
    let rev = rev.unwrap_or("HEAD");
    let mut cmd = git(repo);
    cmd.args(["rev-parse", "--verify", "--quiet", "--end-of-options"])
        .arg(format!("{rev}^{{commit}}"));
    output(cmd, "").map(text).map_err(|_| {
        format!(
            "commit {rev} is not in {}; fetch it (git fetch origin {rev}) and rerun",
            repo.display()
        )
    })
}

impl Worktree {
    /// Checks out `base` (a full commit id) of `repo` in a new detached worktree at `path`.
    pub fn add(repo: &Path, base: &str, path: PathBuf) -> Result<Worktree, String> {
        let mut cmd = git(repo);
        cmd.args(["worktree", "add", "--detach", "--quiet"])
            .arg(&path)
            .arg(base);
        output(cmd, &format!("check out {base} in a worktree"))?;
        Ok(Worktree {
            repo: repo.to_path_buf(),
            path,
            base: base.to_owned(),
        })
    }

    /// Every change against the base commit: modified, deleted and new files, ignored
    /// files and `.git` left out. Stages in the worktree's own index to get there.
    pub fn changes(&self) -> Result<Changes, String> {
        let mut add = git(&self.path);
        add.args(["add", "-A"]);
        output(add, "stage the changes in the worktree")?;
        let diff = |extra: &[&str]| {
            let mut cmd = git(&self.path);
            // The user's diff settings must not change the patch's shape.
            cmd.args([
                "-c",
                "diff.noprefix=false",
                "-c",
                "diff.mnemonicPrefix=false",
            ])
            .args([
                "diff",
                "--cached",
                "--no-color",
                "--no-ext-diff",
                "--no-textconv",
            ])
            .args(extra)
            .arg(&self.base)
            .arg("--");
            cmd
        };
        let patch = output(diff(&["--binary", "--full-index"]), "diff the worktree")?;
        let names = output(diff(&["--name-only", "-z"]), "list the changed files")?;
        let files = names
            .split(|b| *b == 0)
            .filter(|n| !n.is_empty())
            .map(|n| String::from_utf8_lossy(n).into_owned())
            .collect();
        // Patches of text in another encoding are kept as close as JSON allows.
        let patch = String::from_utf8(patch)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
        Ok(Changes { patch, files })
    }

    /// Removes the worktree and its entry in the repository; a failure leaves a stale
    /// entry that `git worktree prune` clears, so it is only reported.
    pub fn remove(self) -> Result<(), String> {
        let mut cmd = git(&self.repo);
        cmd.args(["worktree", "remove", "--force", "--force"])
            .arg(&self.path);
        if output(cmd, "remove the worktree").is_ok() {
            return Ok(());
        }
        let _ = std::fs::remove_dir_all(&self.path);
        let mut prune = git(&self.repo);
        prune.args(["worktree", "prune"]);
        output(prune, "prune the worktree entry").map(|_| ())
    }
}
