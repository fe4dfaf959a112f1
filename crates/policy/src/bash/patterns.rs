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

/// Minimal fnmatch (`*`, `?`, `[…]`) used to ask whether a globbed program
/// name could be a dangerous one.
pub(crate) fn glob_match(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    glob_at(&p, &n)
}

fn glob_at(p: &[char], n: &[char]) -> bool {
    match p.first() {
        None => n.is_empty(),
        Some('*') => (0..=n.len()).any(|k| glob_at(&p[1..], &n[k..])),
        Some('?') => !n.is_empty() && glob_at(&p[1..], &n[1..]),
        Some('[') => {
            let Some(close) = p.iter().skip(1).position(|&c| c == ']') else {
                return n.first() == Some(&'[') && glob_at(&p[1..], &n[1..]);
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
            hit != negate && glob_at(&p[close + 2..], &n[1..])
        }
        Some(&c) => n.first() == Some(&c) && glob_at(&p[1..], &n[1..]),
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
}
