//! Bracket counting for Python and JavaScript/TypeScript with a small lexer that skips
//! strings, comments, and (in JavaScript) regular expression literals, so a `{` in a
//! string does not count. It counts; it does not parse: a file cut off mid-way shows as
//! more opens than closes. One pass over the bytes.
//!
//! The same pass notes the lines that start a top-level declaration (outside any
//! bracket, string or comment), where `region` may cut a file so only the part a change
//! touched is parsed.

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
    scan(text, dialect).counts
}

/// What one lexing pass found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scan {
    /// Opens and closes of `()`, `[]` and `{}`.
    pub counts: [BracketCount; 3],
    /// Byte offsets of the lines that start a top-level declaration, ascending.
    pub top_level_lines: Vec<usize>,
}

/// Counts the brackets of `text` and finds its top-level declaration lines.
pub fn scan(text: &str, dialect: Dialect) -> Scan {
    let mut counter = Counter {
        dialect,
        parens: [0; 2],
        squares: [0; 2],
        curlies: [0; 2],
        depth: 0,
        lines: Vec::new(),
    };
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
    Scan {
        counts: [
            kind('(', ')', counter.parens),
            kind('[', ']', counter.squares),
            kind('{', '}', counter.curlies),
        ],
        top_level_lines: counter.lines,
    }
}

struct Counter {
    dialect: Dialect,
    parens: [usize; 2],
    squares: [usize; 2],
    curlies: [usize; 2],
    /// Opens minus closes of every kind so far.
    depth: isize,
    lines: Vec<usize>,
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
            _ => return,
        }
        self.depth += if matches!(b, b'(' | b'[' | b'{') {
            1
        } else {
            -1
        };
    }

    /// Called where the lexer stands in code at offset `i`: notes `i` when a line
    /// starts there, outside every bracket, with a top-level declaration.
    fn at(&mut self, s: &[u8], i: usize) {
        if self.depth == 0 && (i == 0 || s[i - 1] == b'\n') && top_level_line(s, i, self.dialect) {
            self.lines.push(i);
        }
    }
}

/// Whether the line at `i` (outside brackets, strings and comments) starts a top-level
/// statement a file may be cut before. Python: flush left, not a comment (one may sit
/// flush left inside a body), not a continuation (`else:`, a `\` line). JavaScript: a
/// declaration keyword or a decorator, flush left. Neither right after a decorator.
fn top_level_line(s: &[u8], i: usize, dialect: Dialect) -> bool {
    let line = &s[i..];
    let word_end = line
        .iter()
        .position(|b| !(b.is_ascii_alphanumeric() || *b == b'_'))
        .unwrap_or(line.len());
    let word = &line[..word_end];
    let fits = match dialect {
        Dialect::Python => {
            line.first().is_some_and(|b| {
                !b.is_ascii_whitespace() && *b != b'#' && *b != b')' && *b != b']' && *b != b'}'
            }) && !matches!(word, b"else" | b"elif" | b"except" | b"finally")
                && !(i >= 2 && s[i - 2] == b'\\')
        }
        Dialect::Script => {
            line.first() == Some(&b'@')
                || matches!(
                    word,
                    b"export"
                        | b"import"
                        | b"function"
                        | b"class"
                        | b"const"
                        | b"let"
                        | b"var"
                        | b"interface"
                        | b"type"
                        | b"enum"
                        | b"async"
                        | b"declare"
                        | b"abstract"
                        | b"namespace"
                        | b"module"
                )
        }
    };
    fits && !after_decorator(s, i)
}

/// Whether the last non-blank line before `i` starts with `@`.
fn after_decorator(s: &[u8], i: usize) -> bool {
    let before = &s[..i];
    let mut end = before.len();
    while end > 0 {
        let start = before[..end - 1]
            .iter()
            .rposition(|b| *b == b'\n')
            .map_or(0, |p| p + 1);
        let line = &before[start..end];
        if let Some(first) = line.iter().find(|b| !b.is_ascii_whitespace()) {
            return *first == b'@';
        }
        end = start;
    }
    false
}

fn python(s: &[u8], counter: &mut Counter) {
    let mut i = 0;
    while i < s.len() {
        counter.at(s, i);
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
        if templates.is_empty() {
            counter.at(s, i);
        }
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
