//! Ranking the index and writing the map. Files rank by what the code says is its surface
//! (`surface`), then by PageRank over the references that resolve to them (`graph`),
//! restarting at the surface and at what the task names (`focus`); tests, examples,
//! benches, vendored and generated code rank below the library unless the focus names
//! them. Each file appears once, its symbols once each, the re-exported and documented
//! public ones first; the map is cut to a byte budget, best files first.

use std::collections::{BTreeSet, HashSet};
use std::fmt::Write as _;

use super::graph::{Graph, ref_name};
use super::index::Index;
use super::parse::Symbol;
use super::surface::{Surface, surface};

/// Room kept for the closing line.
const FOOTER: usize = 160;

/// Restart weight of a surface file, and of a file the focus names, against 1 for others.
const SURFACE_RESTART: f64 = 20.0;
const FOCUS_RESTART: f64 = 200.0;

/// How much more a surface file's rank counts.
const SURFACE_BOOST: f64 = 8.0;

/// How much the references weigh within the surface, where what the docs present
/// matters more than how often the crate's own internals use a file.
const PAGERANK_EXPONENT: f64 = 0.25;

/// A focus word naming more files than this is not specific enough to raise any.
const MAX_FOCUS_FILES: usize = 8;

/// How much more a surface file counts when the surface's module docs point at it.
const MENTIONED: f64 = 2.0;

/// Directories whose code is not the library itself.
const LOWERED_DIRS: &[&str] = &[
    "test",
    "tests",
    "testing",
    "__tests__",
    "spec",
    "specs",
    "testdata",
    "fixtures",
    "example",
    "examples",
    "bench",
    "benches",
    "benchmarks",
    "vendor",
    "vendored",
    "third_party",
    "node_modules",
    "docs",
    "doc",
];

/// Whether `rel` is a test, example, bench or vendored file by its path.
pub(crate) fn lowered(rel: &str) -> bool {
    let (dirs, name) = rel.rsplit_once('/').unwrap_or(("", rel));
    dirs.split('/').any(|d| LOWERED_DIRS.contains(&d))
        || name.ends_with("_test.go")
        || name.ends_with(".pb.go")
        || name.ends_with("_pb2.py")
        || name.ends_with(".min.js")
        || name == "conftest.py"
        || (name.starts_with("test_") && name.ends_with(".py"))
        || name.ends_with("_test.py")
        || name.ends_with("_tests.rs")
        || [".test.", ".spec.", ".bench."]
            .iter()
            .any(|m| name.contains(m))
}

/// The compiled copies among `files`: a `.js`, `.cjs`, `.mjs` or `.d.ts` file whose
/// TypeScript source is in the tree too (`dist/a/b.js` beside `src/a/b.ts`).
fn compiled(files: &[&str]) -> HashSet<String> {
    fn key(path: &str, drop: &[&str]) -> String {
        let mut removed = false;
        path.split('/')
            .filter(|p| {
                let skip = !removed && drop.contains(p);
                removed |= skip;
                !skip
            })
            .collect::<Vec<_>>()
            .join("/")
    }
    let mut sources = HashSet::new();
    for f in files {
        if let Some(stem) = [".ts", ".tsx", ".mts", ".cts"]
            .iter()
            .find_map(|e| f.strip_suffix(e))
            .filter(|s| !s.ends_with(".d"))
        {
            sources.insert(key(stem, &["src"]));
        }
    }
    let mut out = HashSet::new();
    for f in files {
        let stem = [".d.ts", ".d.cts", ".d.mts", ".js", ".cjs", ".mjs"]
            .iter()
            .find_map(|e| f.strip_suffix(e));
        if let Some(stem) = stem
            && sources.contains(&key(stem, &["dist", "lib", "build", "out", "esm", "cjs"]))
        {
            out.insert((*f).to_owned());
        }
    }
    out
}

/// What the task names: words (identifiers, module names) and paths.
#[derive(Debug, Default)]
pub(crate) struct Focus {
    words: Vec<String>,
}

impl Focus {
    /// The focus of free text: its words of three or more characters and its paths.
    pub(crate) fn of(text: &str) -> Self {
        let words = text
            .split(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | '/' | '.' | '-')))
            .map(|w| w.trim_matches(['.', '-', '/']).trim_start_matches('@'))
            .filter(|w| w.chars().count() >= 3)
            .map(str::to_lowercase)
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        Focus { words }
    }

    /// Whether `word` names `lower` (a lowercased path: a directory, a file stem) or a
    /// symbol of it.
    fn names(word: &str, lower: &str, symbols: &[Symbol]) -> bool {
        if word.contains('/') || word.contains('.') {
            return lower.ends_with(word) || lower.contains(&format!("{word}/"));
        }
        let singular = word.strip_suffix('s').unwrap_or(word);
        lower.split('/').any(|part| {
            let stem = part.split('.').next().unwrap_or(part);
            stem == word || stem == singular
        }) || symbols
            .iter()
            .any(|s| s.kind != "impl" && s.name.eq_ignore_ascii_case(word))
    }

    /// How much the focus names each of `files` (0 for not at all): each word's weight is
    /// shared among the files it names, and a word naming many files (`new`, `from`,
    /// `client` in a client library) says nothing about which one is meant.
    fn weights(&self, index: &Index, files: &[&str]) -> Vec<f64> {
        let mut out = vec![0.0; files.len()];
        if self.words.is_empty() {
            return out;
        }
        let lower: Vec<String> = files.iter().map(|f| f.to_lowercase()).collect();
        for word in &self.words {
            let hits: Vec<usize> = files
                .iter()
                .enumerate()
                .filter(|(i, f)| {
                    index
                        .get(**f)
                        .is_some_and(|e| Focus::names(word, &lower[*i], &e.facts.symbols))
                })
                .map(|(i, _)| i)
                .collect();
            if hits.is_empty() || hits.len() > MAX_FOCUS_FILES {
                continue;
            }
            for i in &hits {
                out[*i] += 1.0 / hits.len() as f64;
            }
        }
        out
    }

    /// Whether the focus names a lowered directory (`tests`, `examples`) of `rel`.
    fn lifts(&self, rel: &str) -> bool {
        let lower = rel.to_lowercase();
        self.words.iter().any(|w| {
            lower
                .split('/')
                .any(|part| part.split('.').next() == Some(w.as_str()))
        })
    }
}

/// What ranking one scope of an index needs before a focus is known: its files, the
/// reference graph, the surface, the compiled copies and what the surface's docs point
/// at. Kept beside the index, so that a new focus costs PageRank and the writing only.
pub(crate) struct Prepared {
    names: Vec<String>,
    graph: Graph,
    surface: Surface,
    /// Per file: how prominent its docs make it, for surface files (`prominence`).
    prominent: Vec<Option<f64>>,
    /// Per file: a test, example, bench, vendored file or compiled copy.
    below: Vec<bool>,
}

/// The ranking inputs of the files under `scope` (a relative directory, `""` for all).
pub(crate) fn prepare(index: &Index, scope: &str) -> Prepared {
    let mut names: Vec<&str> = index
        .keys()
        .map(String::as_str)
        .filter(|rel| scope.is_empty() || rel.starts_with(scope))
        .collect();
    names.sort_unstable();
    let graph = Graph::new(index, &names);
    let mut surface: Surface = surface(index);
    let generated = compiled(&names);
    // What the surface's module documentation points at.
    let mentioned: HashSet<String> = surface
        .keys()
        .filter_map(|f| index.get(f))
        .flat_map(|e| e.facts.mentions.iter().cloned())
        .collect();
    // A macro the surface's docs name is surface wherever it is defined: exported macros
    // live at the crate root whatever module defines them.
    for rel in &names {
        let Some(e) = index.get(*rel) else { continue };
        for s in &e.facts.symbols {
            if s.kind == "macro" && mentioned.contains(&s.name) && !lowered(rel) {
                surface
                    .entry((*rel).to_owned())
                    .or_default()
                    .insert(s.name.clone());
            }
        }
    }
    let mentioned: HashSet<&str> = mentioned.iter().map(String::as_str).collect();
    let prominent = names
        .iter()
        .map(|rel| {
            let e = index.get(*rel)?;
            let exported = surface.get(*rel)?;
            Some(prominence(
                rel,
                &e.facts.symbols,
                Some(exported),
                &mentioned,
            ))
        })
        .collect();
    let below = names
        .iter()
        .map(|rel| lowered(rel) || generated.contains(*rel))
        .collect();
    Prepared {
        names: names.into_iter().map(str::to_owned).collect(),
        graph,
        surface,
        prominent,
        below,
    }
}

/// The map of the files under `scope`, at most `max_bytes` long, raised toward what
/// `focus` names.
#[cfg(test)]
pub(crate) fn render(index: &Index, scope: &str, max_bytes: usize, focus: &Focus) -> String {
    render_prepared(index, &prepare(index, scope), scope, max_bytes, focus)
}

/// The map of what `prepared` holds (made by `prepare` from `index` and `scope`).
pub(crate) fn render_prepared(
    index: &Index,
    prepared: &Prepared,
    scope: &str,
    max_bytes: usize,
    focus: &Focus,
) -> String {
    let names: Vec<&str> = prepared.names.iter().map(String::as_str).collect();
    let (graph, surface) = (&prepared.graph, &prepared.surface);
    let ranked = ranked_files(index, prepared, &names, focus);
    let mut out = format!(
        "Repository map: {} source files ({} with symbols){}; public surface and most used \
         first, \"N uses\" = files using it.\n",
        names.len(),
        ranked.len(),
        if scope.is_empty() {
            String::new()
        } else {
            format!(" under {scope}")
        }
    );
    // Breadth before depth: at the default size, more files with their first few symbols.
    let per_file = (max_bytes / 2_000).clamp(3, 12);
    let limit = max_bytes.saturating_sub(FOOTER);
    let mut shown = 0;
    let empty = BTreeSet::new();
    'files: for (i, _, _) in &ranked {
        let rel = names[*i];
        let Some(e) = index.get(rel) else { continue };
        let header = format!("{rel}\n");
        if out.len() + header.len() > limit {
            break;
        }
        out.push_str(&header);
        shown += 1;
        let exported = surface.get(rel).unwrap_or(&empty);
        let lines = symbol_lines(&e.facts.symbols, exported, |name| {
            graph.uses.get(&(*i, name.to_owned())).copied().unwrap_or(0)
        });
        for (n, line) in lines.iter().enumerate() {
            if n == per_file {
                let _ = writeln!(out, "  … {} more", lines.len() - n);
                break;
            }
            if out.len() + line.len() > limit {
                break 'files;
            }
            out.push_str(line);
        }
    }
    if shown < ranked.len() {
        let _ = writeln!(
            out,
            "(… {} more files with symbols; call again with a larger max_bytes, a path to \
             map part of the tree, or a focus)",
            ranked.len() - shown
        );
    }
    out
}

/// The files with symbols, best first: (index in `names`, below the fold, score). Files
/// below the fold come last whatever their score; the focus raises what it names.
fn ranked_files(
    index: &Index,
    prepared: &Prepared,
    names: &[&str],
    focus: &Focus,
) -> Vec<(usize, bool, f64)> {
    let (graph, surface) = (&prepared.graph, &prepared.surface);
    let focused = focus.weights(index, names);
    let personal: Vec<f64> = names
        .iter()
        .zip(&focused)
        .map(|(f, focused)| {
            1.0 + if surface.contains_key(*f) {
                SURFACE_RESTART
            } else {
                0.0
            } + FOCUS_RESTART * focused
        })
        .collect();
    let pagerank = graph.rank(&personal);
    let n = names.len() as f64;
    let mut ranked: Vec<(usize, bool, f64)> = Vec::new();
    for (i, rel) in names.iter().enumerate() {
        let Some(e) = index.get(*rel) else { continue };
        if e.facts.symbols.is_empty() {
            continue;
        }
        let below = prepared.below[i] && !focus.lifts(rel);
        let mut score = pagerank.get(i).copied().unwrap_or(0.0) * n;
        if let Some(prominent) = prepared.prominent[i] {
            score = SURFACE_BOOST * score.powf(PAGERANK_EXPONENT) * prominent;
        }
        ranked.push((i, below, score));
    }
    // What the focus names outright joins the best of the map, whatever its standing: a
    // word naming one file lifts it to the top, one naming several lifts each by a share.
    let best = ranked.iter().map(|r| r.2).fold(0.0, f64::max);
    for r in &mut ranked {
        r.2 += best * focused[r.0].min(1.0);
    }
    ranked.sort_by(|a, b| {
        a.1.cmp(&b.1)
            .then(b.2.total_cmp(&a.2))
            .then_with(|| names[a.0].cmp(names[b.0]))
    });
    ranked
}

/// How prominently a surface file's own documentation presents it: the lines of doc
/// comment on its public items, and how many of its names (or its module's name) the
/// surface's module docs point at.
fn prominence(
    rel: &str,
    symbols: &[Symbol],
    exported: Option<&BTreeSet<String>>,
    mentioned: &HashSet<&str>,
) -> f64 {
    // The longest doc among the names the surface traced here (else its public items): a
    // file is as prominent as its best-documented entry point, not as long as it is.
    let doc: u32 = symbols
        .iter()
        .filter(|s| match exported {
            Some(names) if !names.is_empty() => names.contains(&s.name),
            _ => s.public,
        })
        .map(|s| s.doc)
        .max()
        .unwrap_or(0);
    let module = {
        let mut parts = rel.rsplit('/');
        let file = parts.next().unwrap_or(rel);
        let stem = file.split('.').next().unwrap_or(file);
        if matches!(stem, "mod" | "__init__" | "index") {
            parts.next().unwrap_or(stem)
        } else {
            stem
        }
    };
    let named = symbols
        .iter()
        .filter(|s| s.public && s.kind != "impl")
        .map(|s| s.name.as_str())
        .chain(std::iter::once(module))
        .collect::<HashSet<_>>()
        .into_iter()
        .filter(|name| mentioned.contains(name))
        .count();
    (1.0 + f64::from(doc).ln_1p()) * if named > 0 { MENTIONED } else { 1.0 }
}

/// A file's symbol lines, each name once: re-exported first, then documented public,
/// public, the rest (impl blocks last), each group by uses, then by line.
fn symbol_lines(
    symbols: &[Symbol],
    exported: &BTreeSet<String>,
    uses: impl Fn(&str) -> u32,
) -> Vec<String> {
    let mut seen = HashSet::new();
    let mut rows: Vec<(u8, u32, &Symbol)> = Vec::new();
    for s in symbols {
        if !seen.insert(s.name.as_str()) {
            continue;
        }
        let n = ref_name(&s.name, &s.kind).map_or(0, &uses);
        let class = if exported.contains(&s.name) {
            0
        } else if s.kind == "impl" {
            4
        } else if s.public && s.doc > 0 {
            1
        } else if s.public {
            2
        } else {
            3
        };
        rows.push((class, n, s));
    }
    rows.sort_by(|a, b| {
        a.0.cmp(&b.0)
            .then(b.1.cmp(&a.1))
            .then(a.2.line.cmp(&b.2.line))
    });
    rows.into_iter()
        .map(|(_, n, s)| {
            let mut line = format!("  {} {} :{}", s.kind, s.name, s.line);
            if n > 0 {
                let _ = write!(line, " ({n} uses)");
            }
            line.push('\n');
            line
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::index::Entry;
    use super::super::parse::{FileFacts, Symbol};
    use super::*;

    fn file(symbols: &[(&str, &str)], uses: &[&str]) -> Entry {
        Entry {
            size: 1,
            mtime_ns: 1,
            facts: FileFacts {
                symbols: symbols
                    .iter()
                    .enumerate()
                    .map(|(i, (kind, name))| Symbol {
                        kind: (*kind).into(),
                        name: (*name).into(),
                        line: u32::try_from(i + 1).unwrap(),
                        public: true,
                        doc: 0,
                    })
                    .collect(),
                uses: uses.iter().map(|u| (*u).into()).collect(),
                ..FileFacts::default()
            },
        }
    }

    #[test]
    fn the_most_used_file_leads_and_the_budget_holds() {
        let mut index = Index::new();
        index.insert(
            "core.rs".into(),
            file(&[("struct", "Core"), ("fn", "helper")], &[]),
        );
        index.insert("a.rs".into(), file(&[("fn", "a")], &["Core"]));
        index.insert(
            "b.rs".into(),
            file(&[("fn", "b")], &["Core", "helper", "a"]),
        );
        let map = render(&index, "", 10_000, &Focus::default());
        let order: Vec<&str> = map.lines().filter(|l| l.ends_with(".rs")).collect();
        assert_eq!(order, ["core.rs", "a.rs", "b.rs"], "{map}");
        assert!(
            map.contains("  struct Core :1 (2 uses)\n  fn helper :2 (1 uses)"),
            "{map}"
        );
        for budget in [300, 350, 400, 500] {
            let small = render(&index, "", budget, &Focus::default());
            assert!(small.len() <= budget, "{budget}: {}", small.len());
        }
        let small = render(&index, "", 330, &Focus::default());
        assert!(small.contains("more files"), "{small}");
    }

    #[test]
    fn compiled_copies_and_tests_are_told_apart_from_the_library() {
        let files = [
            "src/v4/schemas.ts",
            "v4/schemas.js",
            "v4/schemas.d.ts",
            "index.d.ts",
            "src/index.ts",
            "types.d.ts",
        ];
        let generated = compiled(&files);
        let mut got: Vec<&str> = generated.iter().map(String::as_str).collect();
        got.sort_unstable();
        assert_eq!(got, ["index.d.ts", "v4/schemas.d.ts", "v4/schemas.js"]);
        for (path, low) in [
            ("tests/mutex.rs", true),
            ("src/sync/mutex.rs", false),
            ("pkg/server_test.go", true),
            ("httpx/_client.py", false),
            ("tests/test_client.py", true),
            ("src/a.test.ts", true),
            ("benches/spawn.rs", true),
            ("third_party/x/y.c.py", true),
        ] {
            assert_eq!(lowered(path), low, "{path}");
        }
    }
}
