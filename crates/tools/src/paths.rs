//! The workspace boundary: turning a path argument into an absolute path inside the
//! workspace, and back into the workspace-relative form the model sees.
//!
//! `resolve` asks [`crate::beneath`] where the kernel resolves a path (symlinks, dangling
//! ones included, and `..` followed beneath the root) and refuses anything outside the
//! workspace. File tools keep the resolved handle instead, to act through it. Nothing
//! here checks permissions or modes; policy does. Also owns the cheap, bounded "did you
//! mean" lookup for missing paths.

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};

use crate::ToolError;
use crate::beneath::Workspace;

/// Directory entries looked at when suggesting similar names.
const SUGGEST_SCAN_LIMIT: usize = 2000;

/// Resolves `path` (relative to `workspace`, or absolute) to the absolute path the kernel
/// resolves it to beneath the workspace ([`Workspace::resolve`]). Anything outside the
/// workspace is `OutsideWorkspace`. For acting on the file, keep the [`Target`] instead:
/// a path returned here is looked up by name again by whoever uses it.
///
/// [`Target`]: crate::beneath::Target
pub fn resolve(workspace: &Path, path: &str) -> Result<PathBuf, ToolError> {
    Workspace::open(workspace)?
        .resolve(path)
        .map(|target| target.abs().to_path_buf())
}

/// Resolves a tool's path argument under the call's context: beneath the workspace, or
/// anywhere when the user turned trust on (`/trust`, `--trust`, yolo). The kernel follows
/// symlinks and `..` either way, so what is checked is where the path really leads.
pub fn resolve_for(ctx: &crate::ToolContext, path: &str) -> Result<PathBuf, ToolError> {
    Workspace::for_ctx(ctx)?
        .resolve(path)
        .map(|target| target.abs().to_path_buf())
}

/// `abs` relative to `workspace`, with `/` separators; "." for the root itself. A path
/// outside the workspace is returned whole.
pub fn relative(workspace: &Path, abs: &Path) -> String {
    let rel = abs
        .strip_prefix(workspace)
        .map(Path::to_path_buf)
        .ok()
        .or_else(|| {
            // The caller's root may not be canonical while `abs` is.
            let root = workspace.canonicalize().ok()?;
            abs.strip_prefix(&root).map(Path::to_path_buf).ok()
        });
    match rel {
        Some(rel) if rel.as_os_str().is_empty() => ".".to_string(),
        Some(rel) => join_slash(&rel),
        None => abs.to_string_lossy().into_owned(),
    }
}

fn join_slash(rel: &Path) -> String {
    let parts: Vec<_> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    parts.join("/")
}

/// Existing workspace paths whose names resemble the missing `abs`, best first (at
/// most three). Looks only in the directory of the first missing component, and only
/// at a bounded number of entries, so it stays cheap on huge trees.
pub(crate) fn suggest(workspace: &Path, abs: &Path) -> Vec<String> {
    // Find the first missing component and its existing parent.
    let mut dir = abs.to_path_buf();
    let mut missing: Option<OsString> = None;
    while !dir.exists() {
        match (dir.file_name().map(OsString::from), dir.parent()) {
            (Some(name), Some(parent)) => {
                missing = Some(name);
                dir = parent.to_path_buf();
            }
            _ => return Vec::new(),
        }
    }
    let Some(missing) = missing else {
        return Vec::new();
    };
    let want = missing.to_string_lossy().to_lowercase();
    let Ok(entries) = fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut scored: Vec<(usize, String)> = entries
        .take(SUGGEST_SCAN_LIMIT)
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let score = name_distance(&want, &name.to_lowercase())?;
            Some((score, name))
        })
        .collect();
    scored.sort();
    scored
        .into_iter()
        .take(3)
        .map(|(_, name)| relative(workspace, &dir.join(name)))
        .collect()
}

/// How far apart two file names are, or `None` when they are not worth suggesting.
fn name_distance(want: &str, have: &str) -> Option<usize> {
    if want == have {
        return Some(0);
    }
    let stem = |s: &str| s.split('.').next().unwrap_or(s).to_string();
    if stem(want) == stem(have) && !stem(want).is_empty() {
        return Some(1);
    }
    let d = levenshtein(want, have);
    let allowed = (want.chars().count() / 3).max(2);
    if d <= allowed {
        return Some(d + 1);
    }
    if want.len() >= 3 && (have.contains(want) || want.contains(have) && have.len() >= 3) {
        return Some(allowed + 2);
    }
    None
}

fn levenshtein(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().take(128).collect();
    let b: Vec<char> = b.chars().take(128).collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances() {
        assert_eq!(levenshtein("kitten", "sitting"), 3);
        assert_eq!(levenshtein("", "abc"), 3);
        assert!(name_distance("mian.rs", "main.rs").is_some());
        assert!(name_distance("main.rs", "main.py").is_some());
        assert!(name_distance("main.rs", "zzzzzzzz").is_none());
    }

    #[test]
    fn relative_forms() {
        let ws = Path::new("/w");
        assert_eq!(relative(ws, Path::new("/w")), ".");
        assert_eq!(relative(ws, Path::new("/w/a/b.rs")), "a/b.rs");
        assert_eq!(relative(ws, Path::new("/elsewhere/x")), "/elsewhere/x");
    }
}
