//! Request complexity: a fast, deterministic guess at how much planning a user request
//! needs, as a score and one of the seeds' four tiers (SIMPLE < 0.5 ≤ MEDIUM < 1.5 ≤
//! COMPLEX ≤ 2.5 < DEEP_RESEARCH), with one human reason per signal that counted.
//!
//! Owns: the weighted heuristic behind [`classify`], the tier bounds ([`tier_for`]) and the
//! plan decision ([`should_create_plan`]). Deliberately does not decompose the task, look
//! at the workspace or call a model: it reads the words of the request only, so it can run
//! on every prompt (about 20 µs for 2 KB, in one pass per signal) and is wrong sometimes.
//!
//! # Signals and weights
//!
//! Each signal counts something and turns the count into points: the first one is worth
//! `first`, each further one `further`, up to `cap`. The score is the sum, floored at 0.
//! The weights were tuned on the table of requests in this module's tests.
//!
//! | signal | first | further | cap |
//! |---|---|---|---|
//! | length in words: 8–15 +0.1, 16–30 +0.2, 31–60 +0.35, 61–120 +0.5, more +0.7 | | | |
//! | change keywords (refactor, migrate, architect, implement, restructure, move, …) | +0.55 | +0.3 | 1.25 |
//! | research keywords (investigate, compare, benchmark, audit, explore, …) | +0.5 | +0.3 | 1.25 |
//! | actions opening a clause ("add …, then fix …"), from the second | +0.5 | +0.15 | 1.0 |
//! | sequencing markers (then, after that, finally, once …, before …) | +0.2 | +0.2 | 0.6 |
//! | list items (a numbered run 1. 2. …, or bullets), from the second | +0.5 | +0.25 | 1.0 |
//! | distinct file paths (a `/` or a source extension; not URLs) | +0.2 | +0.3 | 1.0 |
//! | deliverables in one comma list ("with auth, tests, and docs"), from the third | +0.6 | +0.2 | 1.0 |
//! | broad scope (all files, across the codebase, every module, everywhere, globs) | +0.3 | +0.2 | 0.75 |
//! | a question rather than an instruction | −0.5 | | |
//! | a very short request (3 words or fewer) | score capped at 0.4: always SIMPLE | | |
//!
//! Keywords are whole words, case-insensitive ("prefix" is not "fix"); research words
//! weigh on their own because exploration is what sets DEEP_RESEARCH apart.

use atto_protocol::{Complexity, ComplexityTier};

/// Score at and above which [`should_create_plan`] plans by default: COMPLEX and above.
///
/// The autonomous-agent spec plans when its raw score is "> threshold (3+)", a count of
/// keywords and file mentions; on this module's tier scale the same intent, "significant
/// planning needed", starts at COMPLEX.
pub const DEFAULT_PLAN_THRESHOLD: f64 = 1.5;

/// Lowest score of the MEDIUM tier.
pub const MEDIUM_FROM: f64 = 0.5;
/// Lowest score of the COMPLEX tier.
pub const COMPLEX_FROM: f64 = 1.5;
/// Highest score of the COMPLEX tier; anything above is DEEP_RESEARCH.
pub const COMPLEX_UP_TO: f64 = 2.5;

/// Points for a count of something, in hundredths so sums are exact and a score can land
/// exactly on a tier bound.
#[derive(Clone, Copy)]
struct Weight {
    first: i32,
    further: i32,
    cap: i32,
}

impl Weight {
    const fn new(first: i32, further: i32, cap: i32) -> Self {
        Weight {
            first,
            further,
            cap,
        }
    }

    /// `first` for one, plus `further` for each one more, at most `cap`; 0 for none.
    fn points(self, n: usize) -> i32 {
        if n == 0 {
            return 0;
        }
        // Past 100 every capped weight is already at its cap.
        let further = i32::try_from(n.min(100) - 1).unwrap_or(99);
        (self.first + self.further * further).min(self.cap)
    }
}

const CHANGE_KEYWORDS: Weight = Weight::new(55, 30, 125);
const RESEARCH_KEYWORDS: Weight = Weight::new(50, 30, 125);
/// Counted from the second action: one instruction is not a multi-step task.
const ACTIONS: Weight = Weight::new(50, 15, 100);
const SEQUENCE: Weight = Weight::new(20, 20, 60);
/// Counted from the second item, like actions.
const LIST_ITEMS: Weight = Weight::new(50, 25, 100);
const PATHS: Weight = Weight::new(20, 30, 100);
/// Counted from the third item: two things joined by "and" are one deliverable's worth.
const DELIVERABLES: Weight = Weight::new(60, 20, 100);
const SCOPE: Weight = Weight::new(30, 20, 75);
const QUESTION: i32 = -50;
const SHORT_WORDS: usize = 3;
const SHORT_CAP: i32 = 40;

/// The tier a score falls in: below 0.5 SIMPLE, below 1.5 MEDIUM, up to and including
/// 2.5 COMPLEX, above DEEP_RESEARCH (a NaN is SIMPLE).
pub fn tier_for(score: f64) -> ComplexityTier {
    if score.is_nan() || score < MEDIUM_FROM {
        ComplexityTier::Simple
    } else if score < COMPLEX_FROM {
        ComplexityTier::Medium
    } else if score <= COMPLEX_UP_TO {
        ComplexityTier::Complex
    } else {
        ComplexityTier::DeepResearch
    }
}

/// Whether a request this complex deserves a plan first: its score is at least
/// `threshold` (usually [`DEFAULT_PLAN_THRESHOLD`]).
pub fn should_create_plan(complexity: &Complexity, threshold: f64) -> bool {
    complexity.score >= threshold
}

/// Scores `request` with the weights of the module docs. Deterministic, linear in the
/// length of the request, and total: any string gets a tier.
pub fn classify(request: &str) -> Complexity {
    let lowered = request.to_ascii_lowercase();
    let tokens = scan_tokens(&lowered);
    let words = scan_words(&lowered);
    let mut reasons = Vec::new();
    let mut total = 0;
    // The reason is only formatted for a signal that counts.
    let mut add = |points: i32, reason: &dyn Fn() -> String| {
        if points != 0 {
            total += points;
            reasons.push(format!("{} ({})", reason(), signed(points)));
        }
    };

    add(length_points(tokens.len()), &|| {
        format!("{} words", tokens.len())
    });
    let (change, research) = keywords(&words);
    add(CHANGE_KEYWORDS.points(change.len()), &|| {
        format!("change keywords: {}", change.join(", "))
    });
    add(RESEARCH_KEYWORDS.points(research.len()), &|| {
        format!("research keywords: {}", research.join(", "))
    });
    let actions = actions(&words);
    add(ACTIONS.points(actions.saturating_sub(1)), &|| {
        format!("{actions} separate actions")
    });
    let (markers, names) = sequence_markers(&words);
    add(SEQUENCE.points(markers), &|| {
        format!(
            "{} ({})",
            counted(markers, "sequencing marker"),
            names.join(", ")
        )
    });
    let items = list_items(&lowered, &tokens);
    add(LIST_ITEMS.points(items.saturating_sub(1)), &|| {
        format!("{items} list items")
    });
    // A list whose items are separate actions is counted as actions already.
    let deliverables = if actions > 1 {
        0
    } else {
        deliverables(&lowered)
    };
    add(DELIVERABLES.points(deliverables.saturating_sub(2)), &|| {
        format!("{deliverables} deliverables in one list")
    });
    let paths = file_paths(&tokens);
    add(PATHS.points(paths), &|| {
        format!("mentions {}", counted(paths, "file path"))
    });
    let scopes = broad_scope(&words, &tokens);
    add(SCOPE.points(scopes.len()), &|| {
        format!("broad scope: {}", scopes.join(", "))
    });
    if is_question(request, &words, actions) {
        add(QUESTION, &|| {
            "asks a question rather than for a change".to_owned()
        });
    }
    settle(total, reasons, tokens.len())
}

/// The complexity of signals worth `total` hundredths in a request of `words` words: a
/// very short request is capped, and the score picks the tier.
fn settle(total: i32, mut reasons: Vec<String>, words: usize) -> Complexity {
    let mut total = total.max(0);
    if words <= SHORT_WORDS && total > SHORT_CAP {
        total = SHORT_CAP;
        reasons.push(format!(
            "very short request ({}): score capped at {}",
            counted(words, "word"),
            f64::from(SHORT_CAP) / 100.0
        ));
    }
    if reasons.is_empty() {
        reasons.push("no complexity signals".to_owned());
    }
    let score = f64::from(total) / 100.0;
    Complexity {
        score,
        tier: tier_for(score),
        reasons,
    }
}

/// `+0.25`, `-0.5`: hundredths shown as a signed point value.
fn signed(points: i32) -> String {
    format!("{:+}", f64::from(points) / 100.0)
}

/// `1 file path`, `3 file paths`.
fn counted(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

fn length_points(words: usize) -> i32 {
    match words {
        0..=7 => 0,
        8..=15 => 10,
        16..=30 => 20,
        31..=60 => 35,
        61..=120 => 50,
        _ => 70,
    }
}

/// One word of the (ASCII-lowercased) request.
struct Word<'a> {
    text: &'a str,
    /// Follows the start of the text or clause punctuation (`,;:!?)`, a newline, or a
    /// `.` that ends a sentence), so a verb here is an instruction.
    clause_start: bool,
}

/// Splits into words: runs of letters, digits, `_`, `-` and `'`, trimmed of `-` and `'`.
fn scan_words(lowered: &str) -> Vec<Word<'_>> {
    // Requests are nearly always ASCII, where bytes are characters and skip decoding.
    if lowered.is_ascii() {
        let chars = lowered.bytes().enumerate().map(|(i, b)| (i, char::from(b)));
        scan_words_in(lowered, chars)
    } else {
        scan_words_in(lowered, lowered.char_indices())
    }
}

fn scan_words_in<'a>(
    lowered: &'a str,
    chars: impl Iterator<Item = (usize, char)>,
) -> Vec<Word<'a>> {
    let mut words = Vec::with_capacity(lowered.len() / 6);
    let mut boundary = true;
    let mut start = None;
    let mut chars = chars.peekable();
    while let Some((i, c)) = chars.next() {
        let in_word = c.is_alphanumeric() || matches!(c, '_' | '-' | '\'');
        if in_word {
            start.get_or_insert(i);
            continue;
        }
        if let Some(s) = start.take() {
            push_word(
                &mut words,
                lowered.get(s..i).unwrap_or_default(),
                &mut boundary,
            );
        }
        let ends_sentence = c == '.' && chars.peek().is_none_or(|(_, n)| n.is_whitespace());
        if ends_sentence || matches!(c, ',' | ';' | ':' | '!' | '?' | ')' | '\n') {
            boundary = true;
        }
    }
    if let Some(s) = start {
        push_word(
            &mut words,
            lowered.get(s..).unwrap_or_default(),
            &mut boundary,
        );
    }
    words
}

/// Whitespace-separated tokens, with the quicker ASCII split when it gives the same.
fn scan_tokens(lowered: &str) -> Vec<&str> {
    if lowered.is_ascii() {
        lowered.split_ascii_whitespace().collect()
    } else {
        lowered.split_whitespace().collect()
    }
}

fn push_word<'a>(words: &mut Vec<Word<'a>>, raw: &'a str, boundary: &mut bool) {
    let text = raw.trim_matches(|c| c == '-' || c == '\'');
    if !text.is_empty() {
        words.push(Word {
            text,
            clause_start: *boundary,
        });
        *boundary = false;
    }
}

/// What a keyword says about the work.
#[derive(Clone, Copy, PartialEq, Eq)]
enum KeywordKind {
    /// Structural or substantial change: refactor, migrate, implement, …
    Change,
    /// Exploration before (or instead of) change: investigate, compare, benchmark, …
    Research,
}

/// The distinct change and research keywords, by base form, in order of first mention.
fn keywords(words: &[Word<'_>]) -> (Vec<&'static str>, Vec<&'static str>) {
    let mut change: Vec<&'static str> = Vec::new();
    let mut research: Vec<&'static str> = Vec::new();
    for word in words {
        let Some((base, kind)) = keyword(word.text) else {
            continue;
        };
        let found = match kind {
            KeywordKind::Change => &mut change,
            KeywordKind::Research => &mut research,
        };
        if !found.contains(&base) {
            found.push(base);
        }
    }
    (change, research)
}

/// The base form and kind of a complex keyword. Whole words only, so `prefix` is not
/// `fix` and `transport` is not `port`.
fn keyword(word: &str) -> Option<(&'static str, KeywordKind)> {
    use KeywordKind::{Change, Research};
    Some(match word {
        "refactor" | "refactors" | "refactored" | "refactoring" => ("refactor", Change),
        "migrate" | "migrates" | "migrated" | "migrating" | "migration" | "migrations" => {
            ("migrate", Change)
        }
        "architect" | "architecture" | "architectural" | "rearchitect" | "re-architect" => {
            ("architect", Change)
        }
        "restructure" | "restructures" | "restructured" | "restructuring" => {
            ("restructure", Change)
        }
        "redesign" | "redesigns" | "redesigned" | "redesigning" => ("redesign", Change),
        "rewrite" | "rewrites" | "rewriting" | "rewritten" => ("rewrite", Change),
        "overhaul" | "overhauls" | "overhauled" | "overhauling" => ("overhaul", Change),
        "modularize" | "modularise" | "decouple" | "decoupling" => ("decouple", Change),
        "implement" | "implements" | "implemented" | "implementing" | "implementation" => {
            ("implement", Change)
        }
        "extract" | "extracts" | "extracted" | "extracting" => ("extract", Change),
        // Not "integration": "integration tests" is a kind of test, not a task.
        "integrate" | "integrates" | "integrated" | "integrating" => ("integrate", Change),
        "optimize" | "optimise" | "optimizes" | "optimizing" | "optimization" => {
            ("optimize", Change)
        }
        "parallelize" | "parallelise" | "parallelizing" => ("parallelize", Change),
        "design" | "designing" => ("design", Change),
        "move" | "moving" => ("move", Change),
        "port" | "porting" => ("port", Change),
        "investigate" | "investigating" | "investigation" => ("investigate", Research),
        "research" | "researching" => ("research", Research),
        "compare" | "comparing" | "comparison" => ("compare", Research),
        "analyze" | "analyse" | "analyzing" | "analysing" | "analysis" => ("analyze", Research),
        "evaluate" | "evaluating" | "evaluation" => ("evaluate", Research),
        "benchmark" | "benchmarks" | "benchmarking" => ("benchmark", Research),
        "explore" | "exploring" | "exploration" => ("explore", Research),
        "audit" | "auditing" => ("audit", Research),
        "profile" | "profiling" => ("profile", Research),
        "prototype" | "prototyping" => ("prototype", Research),
        "diagnose" | "diagnosing" => ("diagnose", Research),
        "identify" | "identifying" => ("identify", Research),
        "understand" | "understanding" => ("understand", Research),
        _ => return None,
    })
}

/// How many instructions the request gives: action verbs that open a clause, directly
/// or after a lead-in ("and", "then", "please", "can you", "want to").
fn actions(words: &[Word<'_>]) -> usize {
    let mut actions = 0;
    for (i, word) in words.iter().enumerate() {
        if !is_action_verb(word.text) {
            continue;
        }
        let led_in = i.checked_sub(1).is_some_and(|p| match words[p].text {
            "and" | "then" | "also" | "please" | "first" | "finally" | "next" | "you" | "lets"
            | "let's" | "afterwards" | "lastly" => true,
            "that" | "this" => p > 0 && words[p - 1].text == "after",
            "to" => p > 0 && matches!(words[p - 1].text, "want" | "need" | "like" | "have"),
            _ => false,
        });
        if word.clause_start || led_in {
            actions += 1;
        }
    }
    actions
}

/// Imperative verbs a coding request starts its instructions with, in alphabetical order.
/// A `match`, not a list to search: it runs on every word, and compiles to a few integer
/// comparisons.
#[rustfmt::skip]
fn is_action_verb(word: &str) -> bool {
    matches!(
        word,
        "add" | "analyze" | "architect" | "audit" | "benchmark" | "build" | "bump" |
        "change" | "check" | "clean" | "commit" | "compare" | "configure" | "convert" |
        "cover" | "create" | "debug" | "delete" | "deploy" | "design" | "disable" |
        "document" | "drop" | "enable" | "ensure" | "evaluate" | "explore" | "expose" |
        "extract" | "figure" | "find" | "fix" | "format" | "generate" | "handle" |
        "identify" | "implement" | "improve" | "install" | "integrate" | "introduce" |
        "investigate" | "link" | "lint" | "log" | "look" | "make" | "measure" | "merge" |
        "migrate" | "move" | "optimize" | "persist" | "port" | "print" | "profile" |
        "prototype" | "publish" | "redesign" | "refactor" | "release" | "remove" |
        "rename" | "replace" | "research" | "restructure" | "review" | "rewrite" | "run" |
        "set" | "show" | "split" | "store" | "support" | "test" | "try" | "update" |
        "upgrade" | "use" | "validate" | "verify" | "wire" | "write"
    )
}

/// Words that order the work ("first … then", "after that", "once … ", "finally"),
/// counted per occurrence, with the distinct ones for the reason line.
fn sequence_markers(words: &[Word<'_>]) -> (usize, Vec<&'static str>) {
    let mut total = 0;
    let mut names: Vec<&'static str> = Vec::new();
    for (i, word) in words.iter().enumerate() {
        let next = words.get(i + 1).map(|w| w.text);
        let name = match word.text {
            "then" => "then",
            "afterwards" | "afterward" => "afterwards",
            "finally" | "lastly" => "finally",
            "subsequently" => "subsequently",
            "after" if matches!(next, Some("that" | "this" | "which")) => "after that",
            "followed" if next == Some("by") => "followed by",
            "once" if word.clause_start => "once",
            "before" if word.clause_start => "before",
            "next" if word.clause_start => "next",
            _ => continue,
        };
        total += 1;
        if !names.contains(&name) {
            names.push(name);
        }
    }
    (total, names)
}

/// Explicit steps: bullet lines plus a run of numbered items `1.` `2)` `(3)` in order.
/// Items of the longest comma list in one sentence ("authentication, tests, and
/// documentation": 3); 0 without one. A list needs two commas (one comma is "X, Y and Z",
/// too often the objects of one small action); items are short (up to five words), so
/// clauses are not items (a list of actions is counted by the actions signal instead).
/// Sentences end at ". " (not the dot of `auth.rs`).
fn deliverables(lowered: &str) -> usize {
    lowered
        .replace(". ", "\n")
        .split([';', ':', '\n', '?', '!'])
        .map(|sentence| {
            let parts: Vec<&str> = sentence.split(',').collect();
            let commas = parts.len().saturating_sub(1);
            let short = parts
                .iter()
                .skip(1)
                .all(|p| p.split_whitespace().count() <= 5);
            if commas >= 2 && short { commas + 1 } else { 0 }
        })
        .max()
        .unwrap_or(0)
}

/// A bullet is `-`, `*` or `•` and one space before text, so the removed lines of a
/// pasted diff (`-    let x`) are not steps.
fn list_items(lowered: &str, tokens: &[&str]) -> usize {
    let bullets = lowered
        .lines()
        .filter(|line| {
            let line = line.trim_start();
            ["- ", "* ", "• "]
                .iter()
                .filter_map(|b| line.strip_prefix(b))
                .any(|text| text.starts_with(|c: char| !c.is_whitespace()))
        })
        .count();
    let mut expected = 1;
    for token in tokens {
        let token = token.trim_start_matches('(');
        let Some(number) = token.strip_suffix(['.', ')', ':']) else {
            continue;
        };
        if number.len() <= 2
            && number.bytes().all(|b| b.is_ascii_digit())
            && number.parse::<usize>().ok() == Some(expected)
        {
            expected += 1;
        }
    }
    let numbered = expected - 1;
    bullets + if numbered >= 2 { numbered } else { 0 }
}

/// Distinct tokens that look like file or directory paths.
fn file_paths(tokens: &[&str]) -> usize {
    // Only the first few distinct paths matter (the weight is capped); bounding the list
    // keeps a pathological request linear.
    const TRACKED: usize = 16;
    let mut seen: Vec<&str> = Vec::new();
    let mut extra = 0;
    for token in tokens {
        let Some(path) = as_path(token) else { continue };
        if seen.contains(&path) {
            continue;
        }
        if seen.len() < TRACKED {
            seen.push(path);
        } else {
            extra += 1;
        }
    }
    seen.len() + extra
}

/// The path in a whitespace-separated token, without quotes, brackets, trailing
/// punctuation and `:line` suffixes; `None` for URLs, globs and ordinary words.
fn as_path(token: &str) -> Option<&str> {
    const WRAPPING: &[char] = &[
        '"', '\'', '`', '(', ')', '[', ']', '{', '}', '<', '>', ',', ';', '!', '?',
    ];
    // Most tokens are plain words: skip them before any trimming or searching.
    if !token.bytes().any(|b| b == b'/' || b == b'.') {
        return None;
    }
    let token = token
        .trim_start_matches(WRAPPING)
        .trim_end_matches(|c| WRAPPING.contains(&c) || c == '.' || c == ':');
    if token.contains("://") || token.starts_with("www.") || token.contains(['*', '@']) {
        return None;
    }
    let path = token.split(':').next().unwrap_or(token);
    (has_source_extension(path) || is_slash_path(path)).then_some(path)
}

fn has_source_extension(path: &str) -> bool {
    const EXTENSIONS: &[&str] = &[
        "rs", "py", "ts", "tsx", "js", "jsx", "mjs", "go", "java", "kt", "swift", "c", "h", "cc",
        "cpp", "hpp", "cs", "rb", "php", "sh", "sql", "md", "txt", "toml", "json", "yaml", "yml",
        "lock", "html", "css", "scss", "vue", "svelte", "proto", "xml", "ini",
    ];
    // Frameworks named like files.
    const NOT_FILES: &[&str] = &[
        "node.js",
        "next.js",
        "vue.js",
        "nuxt.js",
        "react.js",
        "three.js",
        "express.js",
        "d3.js",
    ];
    let Some((stem, ext)) = path.rsplit_once('.') else {
        return false;
    };
    let file_stem = stem.rsplit('/').next().unwrap_or(stem);
    !file_stem.is_empty()
        && file_stem
            .bytes()
            .any(|b| b.is_ascii_alphabetic() || b == b'_')
        && EXTENSIONS.contains(&ext)
        && !NOT_FILES.contains(&path)
}

/// `src/api`, `./x`, `~/.config/`, `docs/`, `/etc/hosts`, `a/b/c`; not `and/or` or a
/// slash command like `/fork`.
fn is_slash_path(path: &str) -> bool {
    const DIRS: &[&str] = &[
        "src", "lib", "crates", "tests", "test", "docs", "app", "apps", "pkg", "cmd", "internal",
        "packages", "scripts", "bin", "examples", "benches", "config", ".github",
    ];
    if !path.contains('/') || path.len() < 2 {
        return false;
    }
    if ["./", "../", "~/"].iter().any(|p| path.starts_with(p)) {
        return true;
    }
    let inner = path.trim_start_matches('/');
    let slashes = inner.trim_end_matches('/').matches('/').count();
    let segments_ok = inner
        .trim_end_matches('/')
        .split('/')
        .all(|s| !s.is_empty() && s.chars().any(char::is_alphanumeric));
    if !segments_ok {
        return false;
    }
    if path.starts_with('/') {
        return slashes >= 1;
    }
    path.ends_with('/')
        || slashes >= 2
        || inner.split('/').next().is_some_and(|s| DIRS.contains(&s))
}

/// Phrases that widen the change to the whole project: a quantifier followed within
/// three words by a place ("all the files", "across the codebase", "every crate"),
/// standalone words ("everywhere", "repo-wide"), and glob patterns.
fn broad_scope<'a>(words: &[Word<'a>], tokens: &[&str]) -> Vec<String> {
    // (quantifier, place) pairs, formatted once at the end; a place of "" is a standalone
    // word. Bounded: past three the weight is capped anyway.
    let mut found: Vec<(&'a str, &'a str)> = Vec::new();
    let mut note = |pair: (&'a str, &'a str)| {
        if !found.contains(&pair) && found.len() < 8 {
            found.push(pair);
        }
    };
    let mut i = 0;
    while i < words.len() {
        let word = words[i].text;
        if matches!(
            word,
            "everywhere" | "repo-wide" | "codebase-wide" | "project-wide" | "workspace-wide"
        ) {
            note((word, ""));
        } else if matches!(
            word,
            "all" | "every" | "each" | "entire" | "whole" | "across" | "throughout"
        ) {
            let place = (i + 1..words.len().min(i + 4)).find(|&j| is_place(words[j].text));
            if let Some(j) = place {
                note((word, words[j].text));
                i = j;
            }
        }
        i += 1;
    }
    let mut phrases: Vec<String> = found
        .iter()
        .map(|(word, place)| match *place {
            "" => format!("\"{word}\""),
            place => format!("\"{word} … {place}\""),
        })
        .collect();
    if tokens
        .iter()
        .any(|t| t.contains('*') && t.contains(['.', '/']))
    {
        phrases.push("glob pattern".to_owned());
    }
    phrases
}

/// What a broad quantifier can range over: "all *files*", "every *crate*" (sorted).
#[rustfmt::skip]
const PLACES: &[&str] = &[
    "apps", "caller", "callers", "codebase", "component", "components", "crate", "crates",
    "directories", "directory", "endpoint", "endpoints", "file", "files", "folder",
    "folders", "handlers", "layers", "module", "modules", "occurrences", "package",
    "packages", "places", "project", "references", "repo", "repos", "repository", "service",
    "services", "sites", "usages", "workspace",
];

fn is_place(word: &str) -> bool {
    PLACES.binary_search(&word).is_ok()
}

/// Words that open a question (sorted).
#[rustfmt::skip]
const QUESTION_WORDS: &[&str] = &[
    "are", "can", "could", "describe", "did", "do", "does", "explain", "how", "how's", "is",
    "should", "what", "what's", "when", "where", "where's", "which", "who", "why", "will",
    "would",
];

/// Whether the request asks rather than instructs: it opens with a question word, or
/// ends with `?` without giving any instruction. "Can you add …" is an instruction.
fn is_question(request: &str, words: &[Word<'_>], actions: usize) -> bool {
    let mut rest = words.iter().map(|w| w.text);
    let mut first = rest.next();
    if first == Some("please") {
        first = rest.next();
    }
    let Some(first) = first else {
        return false;
    };
    let polite = matches!(first, "can" | "could" | "would" | "will") && {
        let after_you = rest.next() == Some("you");
        let verb = rest.find(|w| *w != "please");
        after_you
            // "Can you show me …" asks to be shown.
            && verb.is_some_and(|v| is_action_verb(v) && v != "show")
    };
    if polite {
        return false;
    }
    let opens_question = QUESTION_WORDS.binary_search(&first).is_ok();
    opens_question || (request.trim_end().ends_with('?') && actions == 0)
}

#[cfg(test)]
mod tests;
