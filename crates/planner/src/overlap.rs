//! The one rule for whether two pieces of work may touch the same file, used wherever work
//! runs side by side: the swarm's scheduler (tasks' target and relevant files) and parallel
//! plan steps (steps' declared files).
//!
//! Two declared workspace-relative paths overlap when, normalized, they are the same or one
//! lies inside the other (a directory holds its files). A path that cannot be compared
//! safely (empty, a pattern, `..`, absolute outside the workspace) overlaps every path:
//! what is not known to be apart is kept apart. Who may touch which file while running is
//! not decided here.

use std::path::Path;

use atto_relpath::{Globs, Parent, Policy, Start, Whitespace};

/// How declared paths are read: to be compared, so what cannot be compared safely is
/// refused (and then overlaps everything): a pattern, any `..` even one that stays inside
/// (`src/../lib` would need the file system to be sure), the workspace itself.
pub const DECLARED: Policy = Policy {
    whitespace: Whitespace::Trim,
    globs: Globs::Refuse,
    parent: Parent::Refuse,
    start: Start::Refuse,
};

/// A declared path as workspace-relative `/`-separated components: `./` and a leading
/// workspace root dropped. `None` for what cannot be compared safely: empty, a pattern,
/// `..`, or an absolute path outside the workspace.
pub fn normalize(path: &str, workspace: &Path) -> Option<String> {
    atto_relpath::normalize(path, workspace, DECLARED)
}

/// Whether two declared workspace-relative paths may name the same file (see the module
/// docs): work that declares them must not run side by side.
pub fn overlaps(a: &str, b: &str) -> bool {
    let (Some(a), Some(b)) = (normalize(a, Path::new("")), normalize(b, Path::new(""))) else {
        return true;
    };
    let inside = |x: &str, y: &str| x.strip_prefix(y).is_some_and(|rest| rest.starts_with('/'));
    a == b || inside(&a, &b) || inside(&b, &a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_file_or_a_directory_and_what_it_holds_overlap() {
        let cases = [
            ("src/a.rs", "src/a.rs", true),
            ("./src/a.rs", "src/a.rs", true),
            ("src", "src/a.rs", true),
            ("src/a.rs", "src/", true),
            ("src/a.rs", "src/b.rs", false),
            ("src/a", "src/ab.rs", false),
            ("src/*.rs", "docs/x.md", true),
            ("../a.rs", "b.rs", true),
            ("/etc/passwd", "b.rs", true),
            ("", "b.rs", true),
        ];
        for (a, b, expected) in cases {
            assert_eq!(overlaps(a, b), expected, "{a} ~ {b}");
            assert_eq!(overlaps(b, a), expected, "{b} ~ {a}");
        }
    }
}
