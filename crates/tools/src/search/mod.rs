//! The read-only tree tools: `list_files`, `glob` and `grep`, and what they share: a
//! gitignore-aware walk and glob filtering.
//!
//! Every walk respects `.gitignore`, `.ignore` and git excludes even outside a git
//! repository, includes hidden files, never enters `.git/`, and does not follow
//! symlinks (so a link cannot lead a walk out of the workspace).

mod glob;
mod grep;
mod list;
mod listing;

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
///
/// A whole walk that ran to its end is kept (see `listing`) and serves later calls while no
/// directory under `root` changed.
pub(crate) fn for_each_file(
    ctx: &ToolContext,
    root: &Path,
    within: Option<PathBuf>,
    mut visit: impl FnMut(&Path, &Path) -> bool,
) -> Result<(), ToolError> {
    if let Some(kept) = listing::kept(root) {
        for (n, (rel, kind)) in kept.files().enumerate() {
            if n % CANCEL_CHECK_EVERY == 0 && ctx.cancel.is_cancelled() {
                return Err(ToolError::Cancelled);
            }
            if within.as_ref().is_some_and(|w| !rel.starts_with(w)) {
                continue;
            }
            let path = root.join(rel);
            let is_file = match kind {
                listing::Kind::File => true,
                listing::Kind::Link => links_to_a_file(ctx, &path),
            };
            if is_file && !visit(&path, rel) {
                break;
            }
        }
        return Ok(());
    }
    // Only a whole walk is kept: one within a directory would not serve a later whole one.
    let mut recorder = (within.is_none() && root.is_dir()).then(|| listing::Recorder::new(root));
    for (n, entry) in walk_within(root, None, within).enumerate() {
        if n % CANCEL_CHECK_EVERY == 0 && ctx.cancel.is_cancelled() {
            return Err(ToolError::Cancelled);
        }
        let Ok(entry) = entry else {
            // Something could not be read: what the walk found is not the whole of it.
            recorder = None;
            continue;
        };
        let is_file = match entry.file_type() {
            Some(t) if t.is_dir() => {
                if let Some(r) = &mut recorder {
                    r.dir(entry.path());
                }
                false
            }
            Some(t) if t.is_file() => {
                if let Some(r) = &mut recorder {
                    r.file(entry.path(), listing::Kind::File);
                }
                true
            }
            // A link is only followed to a file inside the workspace.
            Some(t) if t.is_symlink() => {
                if let Some(r) = &mut recorder {
                    r.file(entry.path(), listing::Kind::Link);
                }
                links_to_a_file(ctx, entry.path())
            }
            _ => false,
        };
        if !is_file {
            continue;
        }
        if !visit(entry.path(), relative_to(root, entry.path())) {
            return Ok(());
        }
    }
    if let Some(recorder) = recorder {
        recorder.keep();
    }
    Ok(())
}

/// Whether the link at `path` resolves to a file inside the workspace.
fn links_to_a_file(ctx: &ToolContext, path: &Path) -> bool {
    paths::resolve(&ctx.workspace, &path.to_string_lossy()).is_ok_and(|target| target.is_file())
}

/// `path` relative to the walk's `root`; when `root` is itself a file, its name.
fn relative_to<'a>(root: &Path, path: &'a Path) -> &'a Path {
    let rel = path.strip_prefix(root).unwrap_or(path);
    if rel.as_os_str().is_empty() {
        path.file_name().map_or(rel, Path::new)
    } else {
        rel
    }
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
