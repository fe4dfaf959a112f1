//! Finding `old_string` in a file for `edit_file`: exact first, then a
//! whitespace-tolerant line match used only when it is unambiguous, and, when nothing
//! matches, the nearest candidate lines to show the model.
//!
//! Replacement text is always inserted literally (no regex, so `$1` stays `$1`). File
//! I/O and the tool's output live in `edit`.

/// One edit applied to text in memory.
#[derive(Debug)]
pub(crate) struct Applied {
    /// The text after the edit.
    pub text: String,
    /// How many places were replaced.
    pub replacements: usize,
    /// Set when the whitespace-tolerant fallback matched: the 1-based line range.
    pub fuzzy_lines: Option<(usize, usize)>,
}

/// Above this many (file lines × old lines), candidate scoring samples old lines.
const FULL_SCORE_BUDGET: usize = 200_000;
/// Files with more lines than this get no candidate search.
const CANDIDATE_MAX_LINES: usize = 100_000;
/// Line numbers listed for ambiguous matches.
const MAX_LISTED: usize = 20;
/// Lines shown for the nearest candidate.
const MAX_CANDIDATE_LINES: usize = 20;

/// Replaces `old` with `new` in `text`. The error is the reason shown to the model.
pub(crate) fn apply(
    text: &str,
    old: &str,
    new: &str,
    replace_all: bool,
) -> Result<Applied, String> {
    if old.is_empty() {
        return Err("old_string is empty; there is no text to find".into());
    }
    if old == new {
        return Err("old_string and new_string are identical; there is nothing to change".into());
    }
    let starts: Vec<usize> = text.match_indices(old).map(|(i, _)| i).collect();
    match starts.len() {
        0 => fuzzy(text, old, new, replace_all),
        1 => Ok(Applied {
            text: text.replacen(old, new, 1),
            replacements: 1,
            fuzzy_lines: None,
        }),
        n if replace_all => Ok(Applied {
            text: text.replace(old, new),
            replacements: n,
            fuzzy_lines: None,
        }),
        n => {
            let lines: Vec<usize> = starts.iter().map(|&i| line_of(text, i)).collect();
            Err(format!(
                "old_string matches {n} places (lines {}). Include more surrounding lines to make it unique, or set replace_all=true to replace every one",
                list_numbers(&lines)
            ))
        }
    }
}

/// The whitespace-tolerant fallback: lines compared with whitespace runs collapsed and
/// ends trimmed; applied only when exactly one window of lines matches.
fn fuzzy(text: &str, old: &str, new: &str, replace_all: bool) -> Result<Applied, String> {
    let lines = Lines::new(text);
    let norm: Vec<String> = lines.iter().map(normalize).collect();
    // Blank lines at the edges of old_string are first read as blank lines of the file
    // (blank whatever whitespace they hold). When the file has none there, they are the
    // line breaks around the text (as in an exact match), so when new_string has as many
    // blank lines at that edge, both drop them and the file keeps its own: the edit
    // neither adds nor removes a line. Leading, then trailing, then both; the first that
    // matches decides, and matching more than one place is still refused.
    let mut tried = vec![(old, new)];
    let lead = without_leading_blank_lines(old, new);
    let trail = without_trailing_blank_lines(old, new);
    tried.extend(lead);
    tried.extend(trail);
    if let Some((o, n)) = lead {
        tried.extend(without_trailing_blank_lines(o, n));
    }
    let (old, new, matches) = tried
        .iter()
        .map(|&(o, n)| (o, n, windows(&norm, &normalized_lines(o))))
        .find(|(_, _, found)| !found.is_empty())
        .unwrap_or((old, new, Vec::new()));
    let had_newline = old.ends_with('\n');
    let old_body = strip_newline(old);
    let old_lines = normalized_lines(old);
    let k = old_lines.len();
    match matches[..] {
        [] => Err(not_found(&lines, &old_lines)),
        [i] => {
            let start = lines.start(i);
            let end = lines.end(i + k - 1);
            let replacement = if had_newline { strip_newline(new) } else { new };
            let replacement = reindent(
                replacement,
                old_body,
                lines.get(first_nonblank(old_body) + i),
            );
            let mut out = String::with_capacity(text.len() + replacement.len());
            out.push_str(&text[..start]);
            out.push_str(&replacement);
            out.push_str(&text[end..]);
            Ok(Applied {
                text: out,
                replacements: 1,
                fuzzy_lines: Some((i + 1, i + k)),
            })
        }
        _ => {
            let at: Vec<usize> = matches.iter().map(|i| i + 1).collect();
            let also = if replace_all {
                " (replace_all only applies to exact matches)"
            } else {
                ""
            };
            Err(format!(
                "old_string was not found exactly; ignoring whitespace it matches {} places (lines {}){also}. Copy the exact text from read_file, with enough surrounding lines to be unique",
                at.len(),
                list_numbers(&at)
            ))
        }
    }
}

/// `old`'s lines (without a final line break), whitespace-normalized.
fn normalized_lines(old: &str) -> Vec<String> {
    strip_newline(old).split('\n').map(normalize).collect()
}

/// Where `old_lines` matches whole lines of `norm` (already normalized).
fn windows(norm: &[String], old_lines: &[String]) -> Vec<usize> {
    let k = old_lines.len();
    if old_lines.iter().all(String::is_empty) || k > norm.len() {
        return Vec::new();
    }
    (0..=norm.len() - k)
        .filter(|&i| norm[i..i + k] == old_lines[..])
        .collect()
}

/// `old` and `new` without the blank lines that lead `old`, when `new` starts with as
/// many blank lines and something is left of `old`.
fn without_leading_blank_lines<'a>(old: &'a str, new: &'a str) -> Option<(&'a str, &'a str)> {
    let blank = leading_blank_lines(old);
    if blank.count == 0 || old[blank.len..].trim().is_empty() {
        return None;
    }
    let in_new = leading_blank_lines(new);
    if in_new.count < blank.count {
        return None;
    }
    // Drop just as many of new's blank lines: any more are lines the edit adds.
    let mut cut = 0;
    for _ in 0..blank.count {
        cut += new[cut..].find('\n')? + 1;
    }
    Some((&old[blank.len..], &new[cut..]))
}

/// `old` and `new` without the blank lines that end `old` (after its last line's own
/// break), when `new` ends with as many blank lines and something is left of `old`.
fn without_trailing_blank_lines<'a>(old: &'a str, new: &'a str) -> Option<(&'a str, &'a str)> {
    let (old_body, old_blank) = trailing_blank_lines(old)?;
    let (_, new_blank) = trailing_blank_lines(new)?;
    if new_blank < old_blank {
        return None;
    }
    // Keep new's extra blank lines: they are lines the edit adds.
    let mut keep = new.len();
    for _ in 0..old_blank {
        keep = new[..keep.checked_sub(1)?].rfind('\n')? + 1;
    }
    Some((old_body, &new[..keep]))
}

/// How many whitespace-only lines (ended by a break) lead `text`, and their length.
struct Leading {
    count: usize,
    len: usize,
}

fn leading_blank_lines(text: &str) -> Leading {
    let mut lead = Leading { count: 0, len: 0 };
    while let Some(end) = text[lead.len..].find('\n') {
        if !text[lead.len..lead.len + end].trim().is_empty() {
            break;
        }
        lead.len += end + 1;
        lead.count += 1;
    }
    lead
}

/// `text` up to and with the break of its last non-blank line, and how many blank lines
/// follow it; `None` when nothing follows that break or no line is non-blank.
fn trailing_blank_lines(text: &str) -> Option<(&str, usize)> {
    let last = text.trim_end().len();
    if last == 0 {
        return None;
    }
    let body_end = last + text[last..].find('\n')? + 1;
    let rest = &text[body_end..];
    if rest.is_empty() {
        return None;
    }
    // Each break ends a blank line; whitespace after the last break is one more.
    let breaks = rest.matches('\n').count();
    let unended = usize::from(!rest.ends_with('\n'));
    Some((&text[..body_end], breaks + unended))
}

/// The "not found" reason, with the closest window of lines when one is similar enough.
fn not_found(lines: &Lines<'_>, old_lines: &[String]) -> String {
    const BASE: &str = "old_string was not found (not even ignoring whitespace).";
    let Some((at, score)) = best_window(lines, old_lines) else {
        return format!("{BASE} Re-read the file with read_file and copy the text exactly");
    };
    if score < 0.5 {
        return format!(
            "{BASE} Nothing similar was found; re-read the file with read_file and copy the text exactly"
        );
    }
    let k = old_lines.len().min(lines.len() - at);
    let shown = k.min(MAX_CANDIDATE_LINES);
    let mut out = format!("{BASE} The closest match is lines {}-{}:\n", at + 1, at + k);
    for n in at..at + shown {
        out.push_str(&format!(
            "{:>6}\t{}\n",
            n + 1,
            crate::support::truncate_line(lines.get(n), 300)
        ));
    }
    if shown < k {
        out.push_str(&format!("       [... {} more lines]\n", k - shown));
    }
    out.push_str("Copy the exact current text into old_string");
    out
}

/// The start (0-based line) and mean similarity of the window most like `old_lines`.
fn best_window(lines: &Lines<'_>, old_lines: &[String]) -> Option<(usize, f64)> {
    let k = old_lines.len();
    if lines.len() == 0 || lines.len() > CANDIDATE_MAX_LINES {
        return None;
    }
    let file_grams: Vec<Vec<u64>> = lines.iter().map(|l| bigrams(&normalize(l))).collect();
    let old_grams: Vec<Vec<u64>> = old_lines.iter().map(|l| bigrams(l)).collect();
    // On big inputs score only the first, middle and last old lines.
    let sample: Vec<usize> = if lines.len().saturating_mul(k) <= FULL_SCORE_BUDGET {
        (0..k).collect()
    } else {
        let mut s = vec![0, k / 2, k - 1];
        s.dedup();
        s
    };
    let last_start = lines.len().saturating_sub(k);
    (0..=last_start)
        .map(|i| {
            let (sum, n) = sample
                .iter()
                .filter(|&&j| i + j < lines.len())
                .fold((0.0, 0usize), |(sum, n), &j| {
                    (sum + dice(&old_grams[j], &file_grams[i + j]), n + 1)
                });
            (i, if n == 0 { 0.0 } else { sum / n as f64 })
        })
        .fold(None, |best: Option<(usize, f64)>, (i, s)| match best {
            Some((_, b)) if b >= s => best,
            _ => Some((i, s)),
        })
}

/// Sorted character bigrams of `s`, packed into integers.
fn bigrams(s: &str) -> Vec<u64> {
    let chars: Vec<char> = s.chars().collect();
    let mut grams: Vec<u64> = chars
        .windows(2)
        .map(|w| (u64::from(u32::from(w[0])) << 32) | u64::from(u32::from(w[1])))
        .collect();
    grams.sort_unstable();
    grams
}

/// Dice coefficient of two sorted bigram multisets (1.0 for two empty lines).
fn dice(a: &[u64], b: &[u64]) -> f64 {
    if a.is_empty() && b.is_empty() {
        return 1.0;
    }
    let (mut i, mut j, mut common) = (0, 0, 0usize);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                common += 1;
                i += 1;
                j += 1;
            }
        }
    }
    2.0 * common as f64 / (a.len() + b.len()) as f64
}

/// Moves `new`'s indentation from the old text's to the file's, when they differ.
fn reindent(new: &str, old: &str, file_line: &str) -> String {
    let old_indent = indent_of(old.split('\n').nth(first_nonblank(old)).unwrap_or(""));
    let file_indent = indent_of(file_line);
    if old_indent == file_indent {
        return new.to_string();
    }
    new.split('\n')
        .map(|line| match line.strip_prefix(old_indent) {
            Some(rest) if !line.trim().is_empty() => format!("{file_indent}{rest}"),
            _ => line.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn indent_of(line: &str) -> &str {
    &line[..line.len() - line.trim_start().len()]
}

fn first_nonblank(text: &str) -> usize {
    text.split('\n')
        .position(|l| !l.trim().is_empty())
        .unwrap_or(0)
}

fn normalize(line: &str) -> String {
    line.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn strip_newline(s: &str) -> &str {
    let s = s.strip_suffix('\n').unwrap_or(s);
    s.strip_suffix('\r').unwrap_or(s)
}

/// 1-based line number of byte offset `at`.
fn line_of(text: &str, at: usize) -> usize {
    1 + text.as_bytes()[..at]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
}

fn list_numbers(numbers: &[usize]) -> String {
    let mut s: Vec<String> = numbers
        .iter()
        .take(MAX_LISTED)
        .map(usize::to_string)
        .collect();
    if numbers.len() > MAX_LISTED {
        s.push(format!("and {} more", numbers.len() - MAX_LISTED));
    }
    s.join(", ")
}

/// A text's lines (without terminators) and where each starts and ends.
struct Lines<'a> {
    text: &'a str,
    /// Byte ranges of each line, excluding `\n` and a `\r` before it.
    spans: Vec<(usize, usize)>,
}

impl<'a> Lines<'a> {
    fn new(text: &'a str) -> Self {
        let mut spans = Vec::new();
        let mut start = 0;
        for (i, b) in text.bytes().enumerate() {
            if b == b'\n' {
                let end = if i > start && text.as_bytes()[i - 1] == b'\r' {
                    i - 1
                } else {
                    i
                };
                spans.push((start, end));
                start = i + 1;
            }
        }
        if start < text.len() {
            spans.push((start, text.len()));
        }
        Self { text, spans }
    }
    fn len(&self) -> usize {
        self.spans.len()
    }
    fn start(&self, i: usize) -> usize {
        self.spans[i].0
    }
    fn end(&self, i: usize) -> usize {
        self.spans[i].1
    }
    fn get(&self, i: usize) -> &'a str {
        self.spans.get(i).map_or("", |&(s, e)| &self.text[s..e])
    }
    fn iter(&self) -> impl Iterator<Item = &'a str> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_single_and_literal_dollars() {
        let a = apply("let x = 1;\n", "1", "$1 $& $$", false).unwrap();
        assert_eq!(a.text, "let x = $1 $& $$;\n");
        assert_eq!(a.fuzzy_lines, None);
    }

    #[test]
    fn ambiguous_lists_lines() {
        let e = apply("a\nb\na\n", "a", "c", false).unwrap_err();
        assert!(e.contains("matches 2 places (lines 1, 3)"), "{e}");
        assert_eq!(
            apply("a\nb\na\n", "a", "c", true).unwrap().text,
            "c\nb\nc\n"
        );
    }

    #[test]
    fn fuzzy_reindents() {
        let text = "fn f() {\n    if x {\n        y();\n    }\n}\n";
        let a = apply(text, "if x {\n  y();\n}\n", "if z {\n  w();\n}\n", false).unwrap();
        assert_eq!(a.text, "fn f() {\n    if z {\n      w();\n    }\n}\n");
        assert_eq!(a.fuzzy_lines, Some((2, 4)));
    }

    #[test]
    fn fuzzy_keeps_crlf_terminators() {
        let a = apply("a\r\n  b  c\r\nd\r\n", "b c", "X", false).unwrap();
        assert_eq!(a.text, "a\r\n  X\r\nd\r\n");
    }

    #[test]
    fn leading_blank_line_neither_adds_nor_drops_newlines() {
        // (file, old_string, new_string, expected): indentation differs, so every case
        // goes through the whitespace-tolerant match.
        let cases = [
            // No blank line in the file: the leading break is the previous line's end.
            (
                "a\n\tfoo();\nb\n",
                "\n  foo();",
                "\n  bar();",
                "a\n\tbar();\nb\n",
            ),
            (
                "a\n\tfoo();\nb\n",
                "\n  foo();\n",
                "\n  bar();\n",
                "a\n\tbar();\nb\n",
            ),
            (
                "a\n\tfoo();\nb\n",
                "  \n  foo();\n",
                "  \n  bar();\n",
                "a\n\tbar();\nb\n",
            ),
            // A blank line in the file stays.
            (
                "a\n\n\tfoo();\nb\n",
                "\n  foo();",
                "\n  bar();",
                "a\n\n\tbar();\nb\n",
            ),
            (
                "a\r\n\tfoo();\r\nb\r\n",
                "\r\n  foo();",
                "\r\n  bar();",
                "a\r\n\tbar();\r\nb\r\n",
            ),
        ];
        for (text, old, new, want) in cases {
            let a = apply(text, old, new, false).unwrap();
            assert_eq!(a.text, want, "{old:?} -> {new:?} in {text:?}");
            assert!(a.fuzzy_lines.is_some());
        }
        // new_string without the break would join lines: not guessed, reported.
        let e = apply("a\n\tfoo();\nb\n", "\n  foo();", "  bar();", false).unwrap_err();
        assert!(e.contains("old_string was not found"), "{e}");
    }

    #[test]
    fn not_found_points_at_nearest_lines() {
        let text = "one\ntwo\nfn compute_total(items: &[Item]) -> u32 {\nthree\n";
        let e = apply(
            text,
            "fn compute_totals(items: &[Item]) -> u64 {",
            "x",
            false,
        )
        .unwrap_err();
        assert!(e.contains("closest match is lines 3-3"), "{e}");
        assert!(e.contains("     3\tfn compute_total(items"), "{e}");
        let e = apply(text, "zzzzqqqq", "x", false).unwrap_err();
        assert!(e.contains("Nothing similar"), "{e}");
    }
}
