//! Names the commit `atto --version` was built from (`ATTO_COMMIT`): the short hash, or
//! `unknown` outside a git checkout. (Uncommitted changes are not tracked: watching the
//! index would rebuild the binary on every `git status`.)
//!
//! Only files that exist are watched: cargo treats a watched path that is missing as
//! changed, so watching `packed-refs` in a checkout that has none relinked the binary on
//! every build.

use std::path::Path;
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

fn watch(path: &Path) {
    println!("cargo:rerun-if-changed={}", path.display());
}

fn main() {
    let commit = git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown".to_owned());
    println!("cargo:rustc-env=ATTO_COMMIT={commit}");
    // Rebuilt when HEAD moves: a commit or a checkout. In a linked worktree HEAD is the
    // worktree's own, while branches and `packed-refs` live in the common directory.
    let (Some(dir), Some(common)) = (
        git(&["rev-parse", "--absolute-git-dir"]),
        git(&["rev-parse", "--path-format=absolute", "--git-common-dir"]),
    ) else {
        return;
    };
    let (dir, common) = (Path::new(&dir), Path::new(&common));
    watch(&dir.join("HEAD"));
    let packed = common.join("packed-refs");
    if packed.is_file() {
        watch(&packed);
    }
    match git(&["symbolic-ref", "-q", "HEAD"]) {
        Some(head) if common.join(&head).is_file() => watch(&common.join(head)),
        // The branch is packed or not born yet: its loose file appears in this directory
        // when it moves (a small directory; cargo looks at its entries' times).
        Some(head) => {
            if let Some(parent) = common.join(head).parent().filter(|p| p.is_dir()) {
                watch(parent);
            }
        }
        None => {}
    }
}
