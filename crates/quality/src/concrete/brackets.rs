//! Bracket counting for Python and JavaScript/TypeScript with a small lexer that skips
//! strings, comments, and (in JavaScript) regular expression literals, so a `{` in a
//! string does not count. It counts; it does not parse: a file cut off mid-way shows as
//! more opens than closes. One pass over the bytes, no allocation.

/// Which lexical rules apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// Python: `#` comments, `'`/`"` strings and their triple-quoted forms.
    Python,
    /// JavaScript and TypeScript (and JSX): `//` and `/* */` comments, `'`/`"`
    /// strings, template literals with `${}`, regular expression literals.
    Script,
}

impl Dialect {
    /// The dialect of a file by its extension, for the files the check covers.
    pub fn of(rel: &str) -> Option<Dialect> {
        match super::extension(rel)?.as_str() {
            "py" | "pyi" => Some(Dialect::Python),
            "js" | "jsx" | "mjs" | "cjs" | "ts" | "tsx" | "mts" | "cts" => Some(Dialect::Script),
            _ => None,
        }
    }
}

/// Opens and closes of one bracket kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BracketCount {
    /// The opening bracket.
    pub open: char,
    /// The closing bracket.
    pub close: char,
    /// How many opens.
    pub opens: usize,
    /// How many closes.
    pub closes: usize,
}

/// Counts `()`, `[]` and `{}` in code, outside strings and comments.
pub fn count_brackets(text: &str, dialect: Dialect) -> [BracketCount; 3] {
    let mut counter = Counter::default();
    match dialect {
        Dialect::Python => python(text.as_bytes(), &mut counter),
        Dialect::Script => script(text.as_bytes(), &mut counter),
    }
    let kind = |open, close, [opens, closes]: [usize; 2]| BracketCount {
        open,
        close,
        opens,
        closes,
    };
    [
        kind('(', ')', counter.parens),
        kind('[', ']', counter.squares),
        kind('{', '}', counter.curlies),
    ]
}

#[derive(Default)]
struct Counter {
    parens: [usize; 2],
    squares: [usize; 2],
    curlies: [usize; 2],
}

impl Counter {
    fn bracket(&mut self, b: u8) {
        match b {
            b'(' => self.parens[0] += 1,
            b')' => self.parens[1] += 1,
            b'[' => self.squares[0] += 1,
            b']' => self.squares[1] += 1,
            b'{' => self.curlies[0] += 1,
            b'}' => self.curlies[1] += 1,
            _ => {}
        }
    }
}

fn python(s: &[u8], counter: &mut Counter) {
    let mut i = 0;
    while i < s.len() {
        match s[i] {
            b'#' => i = skip_line(s, i),
            q @ (b'\'' | b'"') => {
                if s.get(i + 1) == Some(&q) && s.get(i + 2) == Some(&q) {
                    i = skip_triple(s, i + 3, q);
                } else {
                    i = skip_quoted(s, i + 1, q);
                }
            }
            b => {
                counter.bracket(b);
                i += 1;
            }
        }
    }
}

/// Past a `'`/`"` string starting after its quote; an unterminated one ends at the line.
fn skip_quoted(s: &[u8], mut i: usize, q: u8) -> usize {
    while i < s.len() {
        match s[i] {
            b'\\' => i += 2,
            b'\n' => return i + 1,
            b if b == q => return i + 1,
            _ => i += 1,
        }
    }
    s.len()
}

fn skip_triple(s: &[u8], mut i: usize, q: u8) -> usize {
    while i < s.len() {
        match s[i] {
            b'\\' => i += 2,
            b if b == q && s.get(i + 1) == Some(&q) && s.get(i + 2) == Some(&q) => return i + 3,
            _ => i += 1,
        }
    }
    s.len()
}

fn skip_line(s: &[u8], i: usize) -> usize {
    s[i..]
        .iter()
        .position(|b| *b == b'\n')
        .map_or(s.len(), |p| i + p + 1)
}

fn script(s: &[u8], counter: &mut Counter) {
    // Curly depth at which each open `${` of a template literal started: a `}` back
    // at that depth resumes the template.
    let mut templates: Vec<usize> = Vec::new();
    let mut depth = 0usize;
    // The last significant byte, to tell a regex literal from a division.
    let mut last = b'\n';
    let mut last_word_start = 0;
    let mut i = 0;
    while i < s.len() {
        let b = s[i];
        match b {
            b'/' if s.get(i + 1) == Some(&b'/') => {
                i = skip_line(s, i);
                continue;
            }
            b'/' if s.get(i + 1) == Some(&b'*') => {
                i = s[i + 2..]
                    .windows(2)
                    .position(|w| w == b"*/")
                    .map_or(s.len(), |p| i + 2 + p + 2);
                continue;
            }
            b'/' if regex_allowed(last, &s[last_word_start..i]) => {
                i = skip_regex(s, i + 1);
                last = b'/';
                continue;
            }
            b'\'' | b'"' => i = skip_quoted(s, i + 1, b),
            b'`' => {
                let (next, opened) = skip_template(s, i + 1);
                i = next;
                if opened {
                    templates.push(depth);
                    depth += 1;
                    counter.bracket(b'{');
                }
            }
            b'}' if templates.last() == Some(&(depth.saturating_sub(1))) && depth > 0 => {
                templates.pop();
                depth -= 1;
                counter.bracket(b'}');
                let (next, opened) = skip_template(s, i + 1);
                i = next;
                if opened {
                    templates.push(depth);
                    depth += 1;
                    counter.bracket(b'{');
                }
            }
            _ => {
                match b {
                    b'{' => depth += 1,
                    b'}' => depth = depth.saturating_sub(1),
                    _ => {}
                }
                counter.bracket(b);
                if !b.is_ascii_whitespace() {
                    if is_word(b) && (i == 0 || !is_word(s[i - 1])) {
                        last_word_start = i;
                    }
                    last = b;
                }
                i += 1;
                continue;
            }
        }
        last = b'"';
    }
}

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$'
}

/// Whether a `/` after `last` (and the word ending there) starts a regex literal rather
/// than dividing.
fn regex_allowed(last: u8, word: &[u8]) -> bool {
    const KEYWORDS: &[&[u8]] = &[
        b"return",
        b"typeof",
        b"instanceof",
        b"in",
        b"of",
        b"new",
        b"delete",
        b"void",
        b"throw",
        b"case",
        b"do",
        b"else",
        b"yield",
        b"await",
    ];
    if is_word(last) {
        let word: &[u8] = word
            .iter()
            .position(|b| !is_word(*b))
            .map_or(word, |end| &word[..end]);
        return KEYWORDS.contains(&word);
    }
    !matches!(last, b')' | b']' | b'}' | b'"')
}

/// Past a regex literal starting after its `/`; a line break ends a would-be regex.
fn skip_regex(s: &[u8], mut i: usize) -> usize {
    let mut in_class = false;
    while i < s.len() {
        match s[i] {
            b'\\' => i += 2,
            b'\n' => return i,
            b'[' => {
                in_class = true;
                i += 1;
            }
            b']' => {
                in_class = false;
                i += 1;
            }
            b'/' if !in_class => return i + 1,
            _ => i += 1,
        }
    }
    s.len()
}

/// Past template text starting after a `` ` `` or a substitution's `}`: to the closing
/// backtick (`false`) or into a `${` substitution (`true`).
fn skip_template(s: &[u8], mut i: usize) -> (usize, bool) {
    while i < s.len() {
        match s[i] {
            b'\\' => i += 2,
            b'`' => return (i + 1, false),
            b'$' if s.get(i + 1) == Some(&b'{') => return (i + 2, true),
            _ => i += 1,
        }
    }
    (s.len(), false)
}
