//! Recognising, after the fact, a write the sandbox denied, from a command's output.
//!
//! Landlock denials surface as ordinary `EACCES` errors ("Permission denied"), so a line
//! counts only when it names a path outside the writable paths that atto itself could
//! write: then the sandbox, not file permissions, is what stopped the command. Owns that
//! heuristic and the sentence shown to the model. Does not look at exit codes: a script
//! may carry on after a denied write.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

/// Error texts a denied write produces (EACCES, EROFS, EPERM).
const MARKERS: &[&str] = &[
    "Permission denied",
    "Read-only file system",
    "Operation not permitted",
];

/// A write outside the writable paths that the sandbox refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeniedWrite {
    /// The path the command tried to write, absolute.
    pub path: PathBuf,
    /// The error line that named it.
    pub line: String,
}

impl DeniedWrite {
    /// The sentence for the model.
    pub fn message(&self) -> String {
        format!(
            "the sandbox denied a write outside the workspace ({}: {}); ask the user to approve running it unsandboxed if it is needed",
            self.path.display(),
            self.line.trim()
        )
    }
}

pub(crate) fn find(output: &str, cwd: &Path, writable: &[PathBuf]) -> Option<DeniedWrite> {
    output
        .lines()
        .filter(|line| MARKERS.iter().any(|m| line.contains(m)))
        .find_map(|line| {
            candidates(line).into_iter().find_map(|cand| {
                let path = resolve(&cwd.join(cand));
                let outside = !writable.iter().any(|w| path.starts_with(w));
                (outside && writable_by_us(&path)).then(|| DeniedWrite {
                    path,
                    line: line.to_string(),
                })
            })
        })
}

/// Paths a line may name: quoted strings first, then bare tokens that look like paths.
fn candidates(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for (open, close) in [('\'', '\''), ('‘', '’'), ('"', '"'), ('`', '\'')] {
        let mut rest = line;
        while let Some(start) = rest.find(open) {
            let after = &rest[start + open.len_utf8()..];
            let Some(end) = after.find(close) else { break };
            let quoted = &after[..end];
            if !quoted.is_empty() && !out.contains(&quoted) {
                out.push(quoted);
            }
            rest = &after[end + close.len_utf8()..];
        }
    }
    for token in line.split(|c: char| c.is_whitespace()) {
        let token = token.trim_matches(|c: char| matches!(c, ':' | ',' | ';' | '\'' | '"' | '`'));
        let pathlike =
            token.starts_with('/') || token.starts_with("./") || token.starts_with("../");
        if pathlike && !out.contains(&token) {
            out.push(token);
        }
    }
    out
}

/// `path` made absolute without `.`/`..`, with its longest existing prefix canonical
/// (symlinks resolved) so it compares with the canonical writable paths.
fn resolve(path: &Path) -> PathBuf {
    let mut lexical = PathBuf::new();
    for part in path.components() {
        match part {
            Component::ParentDir => {
                lexical.pop();
            }
            Component::CurDir => {}
            other => lexical.push(other),
        }
    }
    let mut existing = lexical.as_path();
    let mut tail = Vec::new();
    while !existing.exists() {
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                tail.push(name.to_os_string());
                existing = parent;
            }
            _ => return lexical,
        }
    }
    let mut resolved = existing
        .canonicalize()
        .unwrap_or_else(|_| existing.to_path_buf());
    resolved.extend(tail.iter().rev());
    resolved
}

/// Whether atto (unsandboxed) could write `path`: the file itself when it exists, or
/// the directory that would hold it. A path whose directory does not exist cannot have
/// been denied a write (that fails with "No such file"), e.g. bash's `/dev/tcp/...`.
fn writable_by_us(path: &Path) -> bool {
    if path.exists() && access_w(path) {
        return true;
    }
    path.parent()
        .is_some_and(|dir| dir.is_dir() && access_w(dir))
}

#[expect(unsafe_code, reason = "access(2) has no safe wrapper in std")]
fn access_w(path: &Path) -> bool {
    let Ok(c) = CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: `c` is a valid NUL-terminated string that outlives the call; access only
    // reads it.
    unsafe { libc::access(c.as_ptr(), libc::W_OK) == 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_cover_common_tools() {
        let table: &[(&str, &[&str])] = &[
            (
                "touch: cannot touch '/opt/x': Permission denied",
                &["/opt/x"],
            ),
            ("bash: line 1: /opt/x: Permission denied", &["/opt/x"]),
            (
                "mkdir: cannot create directory ‘/opt/d’: Permission denied",
                &["/opt/d"],
            ),
            (
                "PermissionError: [Errno 13] Permission denied: '/opt/p'",
                &["/opt/p"],
            ),
            ("sh: 1: cannot create ../up: Permission denied", &["../up"]),
            (
                "mv: cannot move 'a' to '/opt/b': Permission denied",
                &["a", "/opt/b"],
            ),
        ];
        for (line, want) in table {
            assert_eq!(&candidates(line), want, "{line}");
        }
    }

    #[test]
    fn flags_only_paths_outside_that_we_could_write() {
        let ws = tempfile::tempdir().unwrap();
        let ws_path = ws.path().canonicalize().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let out_path = outside.path().canonicalize().unwrap();
        let writable = vec![ws_path.clone()];

        let inside = format!(
            "touch: cannot touch '{}/f': Permission denied",
            ws_path.display()
        );
        assert_eq!(find(&inside, &ws_path, &writable), None);
        assert_eq!(
            find(
                "touch: cannot touch 'rel': Permission denied",
                &ws_path,
                &writable
            ),
            None
        );

        let line = format!(
            "touch: cannot touch '{}/f': Permission denied",
            out_path.display()
        );
        let hit = find(&format!("ok\n{line}\n"), &ws_path, &writable).unwrap();
        assert_eq!(hit.path, out_path.join("f"));
        assert!(
            hit.message()
                .contains("the sandbox denied a write outside the workspace")
        );

        // `..` out of the workspace resolves to the outside path.
        let rel = format!("../{}/g", out_path.file_name().unwrap().to_string_lossy());
        let line = format!("bash: {rel}: Permission denied");
        let cwd = ws_path.clone();
        if out_path.parent() == cwd.parent() {
            assert_eq!(
                find(&line, &cwd, &writable).unwrap().path,
                out_path.join("g")
            );
        }

        // A path whose directory does not exist (bash's /dev/tcp) is no denied write.
        let tcp = "bash: /dev/tcp/127.0.0.1/9: Permission denied";
        assert_eq!(find(tcp, &ws_path, &writable), None);

        // Without a marker nothing is flagged.
        let quiet = format!("wrote '{}/f'", out_path.display());
        assert_eq!(find(&quiet, &ws_path, &writable), None);
    }
}
