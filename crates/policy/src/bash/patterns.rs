//! Bash brace expansion (`{rm,-rf,/}`) and glob matching (`/bin/r?`), as far
//! as a static reader needs them; both bounded so hostile input stays cheap.

/// Expands `{a,b,c}` groups (bash brace expansion) in a static word; at most
/// `limit` results so a hostile word cannot explode.
pub(crate) fn expand_braces(text: &str, limit: usize) -> Vec<String> {
    let mut out = vec![text.to_string()];
    let mut changed = true;
    while changed && out.len() <= limit {
        changed = false;
        let mut next = Vec::new();
        for s in &out {
            match one_brace_group(s) {
                Some((pre, alts, post)) => {
                    changed = true;
                    for a in alts {
                        next.push(format!("{pre}{a}{post}"));
                    }
                }
                None => next.push(s.clone()),
            }
        }
        out = next;
    }
    out.truncate(limit);
    out
}

/// Finds the first `{x,y}` group that contains a top-level comma.
fn one_brace_group(s: &str) -> Option<(&str, Vec<&str>, &str)> {
    let bytes = s.as_bytes();
    for (open, &b) in bytes.iter().enumerate() {
        if b != b'{' {
            continue;
        }
        let mut depth = 0usize;
        let mut commas = Vec::new();
        for (j, &c) in bytes.iter().enumerate().skip(open) {
            match c {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        if commas.is_empty() {
                            break;
                        }
                        let mut alts = Vec::new();
                        let mut start = open + 1;
                        for &k in &commas {
                            alts.push(&s[start..k]);
                            start = k + 1;
                        }
                        alts.push(&s[start..j]);
                        return Some((&s[..open], alts, &s[j + 1..]));
                    }
                }
                b',' if depth == 1 => commas.push(j),
                _ => {}
            }
        }
    }
    None
}

/// The longest glob a program name is matched against, in bytes.
const MAX_GLOB: usize = 4096;

/// Minimal fnmatch (`*`, `?`, `[…]`) used to ask whether a globbed program
/// name could be a dangerous one.
pub(crate) fn glob_match(pattern: &str, name: &str) -> bool {
    // No program is named by a word this long: it counts as possibly the dangerous one
    // (the strict side) instead of a table of its length times the name's.
    if pattern.len() > MAX_GLOB {
        return true;
    }
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    // Each (rest of pattern, rest of name) is decided once: otherwise every `*` tries each
    // split of the name again, exponential in the stars.
    let mut known = Known {
        width: n.len() + 1,
        cells: vec![None; (p.len() + 1) * (n.len() + 1)],
    };
    glob_at(&p, &n, &mut known)
}

/// What is decided, by the lengths of the pattern's and the name's rests.
struct Known {
    width: usize,
    cells: Vec<Option<bool>>,
}

fn glob_at(p: &[char], n: &[char], known: &mut Known) -> bool {
    let cell = p.len() * known.width + n.len();
    if let Some(Some(done)) = known.cells.get(cell) {
        return *done;
    }
    let matched = glob_step(p, n, known);
    if let Some(slot) = known.cells.get_mut(cell) {
        *slot = Some(matched);
    }
    matched
}

fn glob_step(p: &[char], n: &[char], known: &mut Known) -> bool {
    match p.first() {
        None => n.is_empty(),
        Some('*') => (0..=n.len()).any(|k| glob_at(&p[1..], &n[k..], known)),
        Some('?') => !n.is_empty() && glob_at(&p[1..], &n[1..], known),
        Some('[') => {
            let Some(close) = p.iter().skip(1).position(|&c| c == ']') else {
                return n.first() == Some(&'[') && glob_at(&p[1..], &n[1..], known);
            };
            let set = &p[1..close + 1];
            let Some(&c) = n.first() else {
                return false;
            };
            let (negate, set) = match set.first() {
                Some('!' | '^') => (true, &set[1..]),
                _ => (false, set),
            };
            let mut hit = false;
            let mut i = 0;
            while i < set.len() {
                if i + 2 < set.len() && set[i + 1] == '-' {
                    hit |= set[i] <= c && c <= set[i + 2];
                    i += 3;
                } else {
                    hit |= set[i] == c;
                    i += 1;
                }
            }
            hit != negate && glob_at(&p[close + 2..], &n[1..], known)
        }
        Some(&c) => n.first() == Some(&c) && glob_at(&p[1..], &n[1..], known),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expands_braces() {
        assert_eq!(expand_braces("{rm,-rf,/}", 16), vec!["rm", "-rf", "/"]);
        assert_eq!(expand_braces("/{etc,usr}", 16), vec!["/etc", "/usr"]);
        assert_eq!(expand_braces("{}", 16), vec!["{}"]);
    }

    #[test]
    fn globs() {
        assert!(glob_match("r?", "rm"));
        assert!(glob_match("[r]m", "rm"));
        assert!(glob_match("*", "rm"));
        assert!(!glob_match("r?", "ls"));
        assert!(glob_match("mkfs*", "mkfs.ext4"));
    }

    /// Found by the bash_classify fuzz target (a program word of 29 `*` and `print` took
    /// over 10 s): each star tried every split of the name again, exponential in the stars.
    #[test]
    fn many_stars_are_matched_in_bounded_time() {
        let start = std::time::Instant::now();
        let stars = "*".repeat(60);
        assert!(!glob_match(&format!("{stars}print"), "shred-and-wipe-all"));
        assert!(glob_match(&format!("{stars}?{stars}e"), "wipe"));
        assert!(
            start.elapsed() < std::time::Duration::from_secs(1),
            "{:?}",
            start.elapsed()
        );
    }
}
