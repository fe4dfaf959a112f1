//! The one rule for whether two pieces of work may touch the same file, used wherever work
//! runs side by side: the swarm's scheduler (tasks' target and relevant files) and parallel
//! plan steps (steps' declared files).
//!
//! Two declared workspace-relative paths overlap when, normalized, they are the same or one
//! lies inside the other (a directory holds its files). A path that cannot be compared
//! safely (empty, a pattern, `..`, absolute outside the workspace) overlaps every path:
//! what is not known to be apart is kept apart. Who may touch which file while running is
//! not decided here.

use std::path::{Component, Path};

/// A declared path as workspace-relative `/`-separated components: `./` and a leading
/// workspace root dropped. `None` for what cannot be compared safely: empty, a pattern,
/// `..`, or an absolute path outside the workspace.
pub fn normalize(path: &str, workspace: &Path) -> Option<String> {
    let path = path.trim();
    if path.is_empty() || path.contains(['*', '?', '[', '{']) {
        return None;
    }
    let path = Path::new(path);
    let relative = path.strip_prefix(workspace).unwrap_or(path);
    let mut parts = Vec::new();
    for component in relative.components() {
        match component {
            Component::CurDir => {}
            Component::Normal(part) => parts.push(part.to_string_lossy().into_owned()),
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
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
