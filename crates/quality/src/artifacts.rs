//! The artifacts of a result: the files it is about, for the judge, the events and the
//! retry context. The task's target files and the modified files come as given (made
//! workspace-relative); paths mined from the worker's text count only when they name a
//! regular file inside the workspace. Does not own whether those files are any good
//! (that is `concrete`).
//!
//! The text can be huge (a worker's whole transcript): only its head and tail are
//! mined, and only a bounded number of candidates is looked up on disk.

use std::collections::BTreeSet;
use std::path::Path;

use crate::QualityTask;
use crate::concrete::{Located, locate, normalize};
use crate::preflight::{head, tail};

/// Bytes of the text mined at each end.
const WINDOW: usize = 512 * 1024;

/// Most distinct candidates looked up on disk.
const MAX_CANDIDATES: usize = 256;

/// Most paths mined from the text.
const MAX_MINED: usize = 100;

/// Longest candidate path.
const MAX_PATH: usize = 512;

/// Target files, modified files and paths named in `text` that exist in `workspace`.
pub fn collect(
    task: &QualityTask,
    modified: &[String],
    text: &str,
    workspace: &Path,
) -> Vec<String> {
    let root = std::fs::canonicalize(workspace).ok();
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for given in task.target_files.iter().chain(modified) {
        let path = root
            .as_deref()
            .and_then(|root| relative(root, workspace, given))
            .unwrap_or_else(|| given.clone());
        push(path, &mut seen, &mut out);
    }
    let Some(root) = root else {
        return out;
    };
    let mut tried = BTreeSet::new();
    let mut mined = 0;
    for part in [head(text, WINDOW), tail(text, WINDOW)] {
        for candidate in candidates(part) {
            if mined >= MAX_MINED || tried.len() >= MAX_CANDIDATES {
                return out;
            }
            let Some(rel) = relative(&root, workspace, candidate) else {
                continue;
            };
            if !tried.insert(rel.clone()) || seen.contains(&rel) {
                continue;
            }
            if matches!(locate(&root, &rel), Located::File { .. }) {
                mined += 1;
                push(rel, &mut seen, &mut out);
            }
        }
    }
    out
}

fn push(path: String, seen: &mut BTreeSet<String>, out: &mut Vec<String>) {
    if !path.is_empty() && seen.insert(path.clone()) {
        out.push(path);
    }
}

/// `path` as a clean workspace-relative path with `/` separators, or `None` when it
/// is outside the workspace (`root` is the canonical `workspace`).
fn relative(root: &Path, workspace: &Path, path: &str) -> Option<String> {
    let as_given = Path::new(path);
    let inside = if as_given.is_absolute() {
        as_given
            .strip_prefix(root)
            .or_else(|_| as_given.strip_prefix(workspace))
            .ok()?
    } else {
        as_given
    };
    let clean = normalize(root, inside.to_str()?)?;
    let parts: Vec<&str> = clean
        .components()
        .filter_map(|c| c.as_os_str().to_str())
        .collect();
    Some(parts.join("/"))
}

/// Path-like words of `text`: with a `/`, or a file name with an extension
/// (`src/auth.py`, `./index.ts`, `README.md`, `/abs/x.js`, `a.py:42`). URLs are not paths.
fn candidates(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| {
        c.is_whitespace()
            || matches!(
                c,
                '`' | '"'
                    | '\''
                    | '('
                    | ')'
                    | '<'
                    | '>'
                    | '['
                    | ']'
                    | '{'
                    | '}'
                    | ','
                    | ';'
                    | '|'
                    | '='
            )
    })
    .filter_map(|word| {
        if word.len() < 3 || word.len() > MAX_PATH || word.contains("://") {
            return None;
        }
        // `a.py:42:7` and `a.py:` → `a.py`; trailing sentence punctuation goes too.
        let word = word.split(':').next()?;
        let word = word.trim_end_matches(['.', '!', '?', '*']);
        let word = word.trim_start_matches('*');
        if word.is_empty() || word.starts_with('~') || word.starts_with('-') {
            return None;
        }
        let plausible = word.bytes().all(|b| {
            b.is_ascii_alphanumeric() || matches!(b, b'/' | b'.' | b'_' | b'-' | b'@' | b'+')
        });
        let has_extension = word
            .rsplit('/')
            .next()
            .and_then(|name| name.rsplit_once('.'))
            .is_some_and(|(stem, ext)| {
                !stem.is_empty()
                    && (1..=10).contains(&ext.len())
                    && ext.bytes().all(|b| b.is_ascii_alphanumeric())
            });
        (plausible && (word.contains('/') || has_extension)).then_some(word)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(targets: &[&str]) -> QualityTask {
        QualityTask {
            target_files: targets.iter().map(|s| (*s).to_owned()).collect(),
            ..QualityTask::default()
        }
    }

    fn workspace() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src/auth")).unwrap();
        std::fs::write(dir.path().join("src/auth/middleware.py"), "x = 1\n").unwrap();
        std::fs::write(dir.path().join("README.md"), "# r\n").unwrap();
        std::fs::write(dir.path().join("index.ts"), "export {}\n").unwrap();
        dir
    }

    #[test]
    fn targets_then_modified_then_mined_paths_that_exist() {
        let dir = workspace();
        let text = "Edited `src/auth/middleware.py` (see src/auth/middleware.py:42), updated \
                    ./index.ts and README.md. Also src/nowhere.py, https://x.io/a/b.js, and a \
                    directory src/auth/.";
        let got = collect(
            &task(&["src/new.py"]),
            &["./index.ts".to_owned(), "src/new.py".to_owned()],
            text,
            dir.path(),
        );
        assert_eq!(
            got,
            [
                "src/new.py",
                "index.ts",
                "src/auth/middleware.py",
                "README.md"
            ]
        );
    }

    #[test]
    fn paths_outside_the_workspace_are_not_mined() {
        let dir = workspace();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.txt"), "s").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(
            outside.path().join("secret.txt"),
            dir.path().join("link.txt"),
        )
        .unwrap();
        let abs_inside = dir.path().join("README.md");
        let text = format!(
            "{} ../../etc/passwd {}/secret.txt link.txt",
            abs_inside.display(),
            outside.path().display()
        );
        let got = collect(&task(&[]), &[], &text, dir.path());
        assert_eq!(got, ["README.md"]);
    }

    #[test]
    fn a_huge_text_is_mined_at_both_ends_only() {
        let dir = workspace();
        let mut text = String::from("start: README.md\n");
        // 10 MB of path-like noise in the middle, and a real path there that is skipped.
        let noise = "src/gen/file_0000.py ".repeat(10 * 1024 * 1024 / 21);
        text.push_str(&noise[..noise.len() / 2]);
        text.push_str(" index.ts ");
        text.push_str(&noise[noise.len() / 2..]);
        text.push_str("\nend: src/auth/middleware.py");
        let started = std::time::Instant::now();
        let got = collect(&task(&[]), &[], &text, dir.path());
        assert!(started.elapsed() < std::time::Duration::from_secs(2));
        assert_eq!(got, ["README.md", "src/auth/middleware.py"]);
    }

    #[test]
    fn candidates_are_path_like_words() {
        let words: Vec<&str> = candidates(
            "see src/a.py:12, `b.rs`; e.g. v1.2 (lib/) -flag ~/x.txt http://h/x.js **c.md**",
        )
        .collect();
        assert_eq!(words, ["src/a.py", "b.rs", "e.g", "v1.2", "lib/", "c.md"]);
    }
}
