//! The read-only tree tools: `list_files`, `glob` and `grep`, and what they share: a
//! gitignore-aware walk and glob filtering.
//!
//! Every walk respects `.gitignore`, `.ignore` and git excludes even outside a git
//! repository, includes hidden files, never enters `.git/`, and does not follow
//! symlinks (so a link cannot lead a walk out of the workspace).

mod glob;
mod grep;
mod list;

use std::path::{Path, PathBuf};

use globset::{GlobBuilder, GlobMatcher};

pub use glob::GlobTool;
pub use grep::GrepTool;
pub use list::ListFilesTool;

use crate::{ToolContext, ToolError, paths};

/// How often (in walk entries) the walks check for cancellation.
const CANCEL_CHECK_EVERY: usize = 256;

/// A sorted, gitignore-aware walk of `root`, `.git/` excluded.
pub(crate) fn walk(root: &Path, max_depth: Option<usize>) -> ignore::Walk {
    walk_within(root, max_depth, None)
}

/// [`walk`], entering only the directories on the way to or below `within` (relative to
/// `root`): a glob whose path starts with literal directories never matches anything outside
/// them, so a walk of a large workspace need not visit the rest. The walk still starts at
/// `root`, so ignore rules and symbolic links are treated exactly as in a full walk.
fn walk_within(root: &Path, max_depth: Option<usize>, within: Option<PathBuf>) -> ignore::Walk {
    let mut builder = ignore::WalkBuilder::new(root);
    let top = root.to_path_buf();
    builder
        .hidden(false)
        .require_git(false)
        .follow_links(false)
        .max_depth(max_depth)
        .sort_by_file_name(|a, b| a.cmp(b))
        .filter_entry(move |e| {
            if e.file_name() == ".git" {
                return false;
            }
            match &within {
                Some(prefix) if e.file_type().is_some_and(|t| t.is_dir()) => {
                    let rel = e.path().strip_prefix(&top).unwrap_or(e.path());
                    rel.starts_with(prefix) || prefix.starts_with(rel)
                }
                _ => true,
            }
        });
    builder.build()
}

/// Resolves an optional directory-or-file argument (default: the workspace root) and
/// checks it exists.
pub(crate) fn resolve_existing(
    ctx: &ToolContext,
    path: Option<&str>,
) -> Result<PathBuf, ToolError> {
    let abs = paths::resolve_for(ctx, path.unwrap_or("."))?;
    if abs.exists() {
        Ok(abs)
    } else {
        Err(ToolError::NotFound {
            path: paths::relative(&ctx.workspace, &abs),
            suggestions: paths::suggest(&ctx.workspace, &abs),
        })
    }
}

/// A glob over paths relative to the search root. A pattern without `/` matches file
/// names at any depth (as ripgrep's `-g`); one with `/` matches the relative path, where
/// `*` stays within a directory and `**` crosses them.
pub(crate) struct PathGlob {
    matcher: GlobMatcher,
    name_only: bool,
}

impl PathGlob {
    pub(crate) fn new(pattern: &str) -> Result<Self, ToolError> {
        let trimmed = pattern.trim();
        let trimmed = trimmed.strip_prefix("./").unwrap_or(trimmed);
        if trimmed.is_empty() {
            return Err(ToolError::InvalidArguments("glob pattern is empty".into()));
        }
        let matcher = GlobBuilder::new(trimmed)
            .literal_separator(true)
            .build()
            .map_err(|e| ToolError::InvalidArguments(format!("invalid glob {pattern:?}: {e}")))?
            .compile_matcher();
        Ok(Self {
            matcher,
            name_only: !trimmed.contains('/'),
        })
    }

    /// The directories every match lies in (relative to the search root): the pattern's
    /// leading components that hold no glob syntax, its last component left out; `None` when
    /// there are none.
    pub(crate) fn literal_dir(&self) -> Option<PathBuf> {
        if self.name_only {
            return None;
        }
        let pattern = self.matcher.glob().glob();
        let mut components: Vec<&str> = pattern.split('/').collect();
        components.pop();
        let literal: Vec<&str> = components
            .into_iter()
            .take_while(|c| {
                !c.is_empty()
                    && *c != "."
                    && *c != ".."
                    && !c.contains(['*', '?', '[', ']', '{', '}', '\\'])
            })
            .collect();
        (!literal.is_empty()).then(|| literal.iter().collect())
    }

    /// Whether `rel` (relative to the search root) matches.
    pub(crate) fn is_match(&self, rel: &Path) -> bool {
        if self.name_only {
            rel.file_name().is_some_and(|n| self.matcher.is_match(n))
        } else {
            self.matcher.is_match(rel)
        }
    }
}

/// The regular files under `root` (and symlinks to files inside the workspace), in walk
/// order, as (absolute path, path relative to `root`); with `within`, only those in that
/// directory (relative to `root`; see [`walk_within`]). Stops when `visit` returns false.
pub(crate) fn for_each_file(
    ctx: &ToolContext,
    root: &Path,
    within: Option<PathBuf>,
    mut visit: impl FnMut(&Path, &Path) -> bool,
) -> Result<(), ToolError> {
    for (n, entry) in walk_within(root, None, within).enumerate() {
        if n % CANCEL_CHECK_EVERY == 0 && ctx.cancel.is_cancelled() {
            return Err(ToolError::Cancelled);
        }
        let Ok(entry) = entry else { continue };
        let is_file = match entry.file_type() {
            Some(t) if t.is_file() => true,
            // A link is only followed to a file inside the workspace.
            Some(t) if t.is_symlink() => {
                paths::resolve(&ctx.workspace, &entry.path().to_string_lossy())
                    .is_ok_and(|target| target.is_file())
            }
            _ => false,
        };
        if !is_file {
            continue;
        }
        let rel = entry.path().strip_prefix(root).unwrap_or(entry.path());
        let rel = if rel.as_os_str().is_empty() {
            // `root` itself is a file: match on its name.
            Path::new(entry.file_name())
        } else {
            rel
        };
        if !visit(entry.path(), rel) {
            break;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_globs_literal_directories_are_where_its_matches_lie() {
        let cases = [
            ("*.rs", None),
            ("src/*.rs", Some("src")),
            ("./src/deep/**/*.rs", Some("src/deep")),
            ("src/a*/x.rs", Some("src")),
            ("**/er/*.rs", None),
            ("../outside/*.rs", None),
            ("src/{a,b}/x.rs", Some("src")),
        ];
        for (pattern, want) in cases {
            let glob = PathGlob::new(pattern).unwrap();
            assert_eq!(glob.literal_dir(), want.map(PathBuf::from), "{pattern}");
        }
    }
}
