//! The part of a file a change touched, cut at top-level declaration lines so it parses
//! on its own: a symbol outside it is the same text in the same top-level context
//! before and after, so only the part needs parsing to see what the change removed.

use std::ops::Range;

/// The changed part of a file, in the text before and the text after.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Region {
    /// Its bytes in the text before.
    pub before: Range<usize>,
    /// Its bytes in the text after.
    pub after: Range<usize>,
}

/// The smallest region covering every difference between `before` and `after` that
/// starts and ends at a top-level line of both (`*_lines`, ascending offsets), or the
/// whole texts when there is no such cut. `None` when the texts are equal.
pub fn changed(
    before: &str,
    after: &str,
    before_lines: &[usize],
    after_lines: &[usize],
) -> Option<Region> {
    let (b, a) = (before.as_bytes(), after.as_bytes());
    let prefix = b.iter().zip(a).take_while(|(x, y)| x == y).count();
    if prefix == b.len() && prefix == a.len() {
        return None;
    }
    let room = b.len().min(a.len()) - prefix;
    let suffix = b
        .iter()
        .rev()
        .zip(a.iter().rev())
        .take(room)
        .take_while(|(x, y)| x == y)
        .count();
    let (old_end, new_end) = (b.len() - suffix, a.len() - suffix);
    // The text up to a cut inside the common prefix is the same in both, and so is the
    // lexer's state there; a line that begins at or before the first difference is
    // a cut when both texts call it one (its first word may lie in the change).
    let start = before_lines
        .iter()
        .rev()
        .copied()
        .filter(|at| *at <= prefix)
        .find(|at| after_lines.binary_search(at).is_ok())
        .unwrap_or(0);
    // After the change the texts agree again; a cut there must be one in both, at the
    // same distance from their ends.
    let end = before_lines
        .iter()
        .copied()
        .filter(|at| *at >= old_end)
        .find(|at| after_lines.binary_search(&(at - old_end + new_end)).is_ok());
    let (before_end, after_end) = match end {
        Some(at) => (at, at - old_end + new_end),
        None => (b.len(), a.len()),
    };
    Some(Region {
        before: start..before_end,
        after: start..after_end,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::concrete::brackets::{Dialect, scan};

    fn region(before: &str, after: &str) -> Option<(String, String)> {
        let lines = |t: &str| scan(t, Dialect::Python).top_level_lines;
        let r = changed(before, after, &lines(before), &lines(after))?;
        Some((before[r.before].to_owned(), after[r.after].to_owned()))
    }

    #[test]
    fn a_change_is_cut_to_the_declarations_around_it() {
        let before =
            "import os\n\ndef a():\n    return 1\n\ndef b():\n    return 2\n\ndef c():\n    pass\n";
        let after =
            "import os\n\ndef a():\n    return 1\n\ndef b():\n    return 3\n\ndef c():\n    pass\n";
        assert_eq!(
            region(before, after),
            Some((
                "def b():\n    return 2\n\n".to_owned(),
                "def b():\n    return 3\n\n".to_owned()
            ))
        );
        assert_eq!(region(before, before), None);
    }

    #[test]
    fn a_change_that_opens_a_string_runs_to_the_end() {
        let before = "def a():\n    pass\n\ndef b():\n    pass\n";
        let after = "def a():\n    x = '''\n    pass\n\ndef b():\n    pass\n";
        let (old, new) = region(before, after).unwrap();
        assert_eq!((old.as_str(), new.as_str()), (before, after));
    }

    #[test]
    fn a_decorator_stays_with_its_function() {
        let before = "@cache\ndef a():\n    return 1\n\nX = 1\n";
        let after = "@cache\ndef a():\n    return 2\n\nX = 1\n";
        let (old, _) = region(before, after).unwrap();
        assert_eq!(old, "@cache\ndef a():\n    return 1\n\n");
    }
}
