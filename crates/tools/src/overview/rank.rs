//! Ranking the index and writing the map: a file ranks by how many other files use the
//! names it defines (a name defined in several files shares its uses among them), its
//! symbols by their own uses. The map is cut to a byte budget, best files first.

use std::collections::HashMap;
use std::fmt::Write as _;

use super::index::Index;

/// Symbols shown per file before "… N more".
const SYMBOLS_PER_FILE: usize = 12;

/// Room kept for the closing line.
const FOOTER: usize = 160;

/// A name defined in more files than this (`new`, `run`, `__init__`) says nothing about
/// which file a use means; its uses are not counted (and would cost files × files).
const MAX_DEFINERS: usize = 16;

/// The name other files use to refer to a symbol: a method's own name, none for an impl.
fn ref_name<'a>(name: &'a str, kind: &str) -> Option<&'a str> {
    if kind == "impl" {
        return None;
    }
    Some(name.rsplit('.').next().unwrap_or(name))
}

/// The map of the files under `scope` (a relative directory, `""` for all), at most
/// `max_bytes` long.
pub(crate) fn render(index: &Index, scope: &str, max_bytes: usize) -> String {
    let files: Vec<(&String, &super::index::Entry)> = index
        .iter()
        .filter(|(rel, _)| scope.is_empty() || rel.starts_with(scope))
        .collect();
    // name → files defining it.
    let mut defs: HashMap<&str, Vec<&str>> = HashMap::new();
    for (rel, e) in &files {
        for s in &e.facts.symbols {
            if let Some(name) = ref_name(&s.name, &s.kind) {
                let definers = defs.entry(name).or_default();
                if definers.last() != Some(&rel.as_str()) {
                    definers.push(rel);
                }
            }
        }
    }
    // (file, name) → files using it; file → score.
    let mut uses: HashMap<(&str, &str), u32> = HashMap::new();
    let mut score: HashMap<&str, f64> = HashMap::new();
    for (rel, e) in &files {
        for used in &e.facts.uses {
            let Some(definers) = defs.get(used.as_str()).filter(|d| d.len() <= MAX_DEFINERS) else {
                continue;
            };
            let share = 1.0 / definers.len() as f64;
            for d in definers {
                if *d != rel.as_str() {
                    *uses.entry((d, used.as_str())).or_default() += 1;
                    *score.entry(d).or_default() += share;
                }
            }
        }
    }
    let mut ranked: Vec<&(&String, &super::index::Entry)> = files
        .iter()
        .filter(|(_, e)| !e.facts.symbols.is_empty())
        .collect();
    ranked.sort_by(|a, b| {
        let sa = score.get(a.0.as_str()).copied().unwrap_or(0.0);
        let sb = score.get(b.0.as_str()).copied().unwrap_or(0.0);
        sb.total_cmp(&sa).then_with(|| a.0.cmp(b.0))
    });
    let mut out = format!(
        "Repository map: {} source files ({} with symbols){}; most used first, \"N uses\" = \
         files using it.\n",
        files.len(),
        ranked.len(),
        if scope.is_empty() {
            String::new()
        } else {
            format!(" under {scope}")
        }
    );
    let limit = max_bytes.saturating_sub(FOOTER);
    let mut shown = 0;
    'files: for (rel, e) in &ranked {
        let header = format!("{rel}\n");
        if out.len() + header.len() > limit {
            break;
        }
        out.push_str(&header);
        shown += 1;
        let mut symbols: Vec<(&super::parse::Symbol, u32)> = e
            .facts
            .symbols
            .iter()
            .map(|s| {
                let n = ref_name(&s.name, &s.kind)
                    .and_then(|name| uses.get(&(rel.as_str(), name)))
                    .copied()
                    .unwrap_or(0);
                (s, n)
            })
            .collect();
        symbols.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.line.cmp(&b.0.line)));
        for (i, (s, n)) in symbols.iter().enumerate() {
            if i == SYMBOLS_PER_FILE {
                let _ = writeln!(out, "  … {} more", symbols.len() - i);
                break;
            }
            let mut line = format!("  {} {} :{}", s.kind, s.name, s.line);
            if *n > 0 {
                let _ = write!(line, " ({n} uses)");
            }
            line.push('\n');
            if out.len() + line.len() > limit {
                break 'files;
            }
            out.push_str(&line);
        }
    }
    if shown < ranked.len() {
        let _ = writeln!(
            out,
            "(… {} more files with symbols; call again with a larger max_bytes or a path to \
             map part of the tree)",
            ranked.len() - shown
        );
    }
    out
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
                    })
                    .collect(),
                uses: uses.iter().map(|u| (*u).into()).collect(),
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
        let map = render(&index, "", 10_000);
        let order: Vec<&str> = map.lines().filter(|l| l.ends_with(".rs")).collect();
        assert_eq!(order, ["core.rs", "a.rs", "b.rs"], "{map}");
        assert!(
            map.contains("  struct Core :1 (2 uses)\n  fn helper :2 (1 uses)"),
            "{map}"
        );
        for budget in [300, 350, 400, 500] {
            let small = render(&index, "", budget);
            assert!(small.len() <= budget, "{budget}: {}", small.len());
        }
        assert!(
            render(&index, "", 330).contains("more files"),
            "{}",
            render(&index, "", 330)
        );
    }
}
