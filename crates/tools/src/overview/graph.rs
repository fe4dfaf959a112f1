//! The reference graph between files and PageRank over it. A file using a name points at
//! the files defining it, but only as far as the name plausibly means them: an import that
//! says where the name comes from narrows the definers to that module (or drops the edge,
//! for a standard-library or third-party module); otherwise the edge weighs by how specific
//! the name is: one defined in many files shares its weight among them, one used by most
//! files (`std`, `Result`, `cfg`) weighs almost nothing, a two-letter one little.

use std::collections::HashMap;

use super::index::Index;
use super::parse::Link;

/// A name defined in more files than this (`new`, `run`, `__init__`) says nothing about
/// which file a use means; its uses are not counted (and would cost files × files).
const MAX_DEFINERS: usize = 16;

/// PageRank's damping and rounds.
const DAMPING: f64 = 0.85;
const ROUNDS: usize = 20;

/// The name other files use to refer to a symbol: a method's own name, none for an impl.
pub(crate) fn ref_name<'a>(name: &'a str, kind: &str) -> Option<&'a str> {
    if kind == "impl" {
        return None;
    }
    Some(name.rsplit('.').next().unwrap_or(name))
}

/// Modules whose names are never this repository's.
const FOREIGN_ROOTS: &[&str] = &["std", "core", "alloc", "proc_macro"];

/// The graph of the files of one scope, nodes numbered as the files given to `new`.
pub(crate) struct Graph {
    /// Edges out of each node: (target, weight).
    edges: Vec<Vec<(usize, f64)>>,
    /// (file, name) → files whose use of the name resolved to that file.
    pub uses: HashMap<(usize, String), u32>,
}

/// Whether `file`'s path names the module `from` comes from (its last segment, as a
/// directory or a file stem).
fn path_names(file: &str, from: &str) -> bool {
    let last = from
        .trim_end_matches(['/', '.'])
        .rsplit(['/', ':', '.'])
        .find(|s| !s.is_empty() && !matches!(*s, "self" | "super" | "crate" | "js" | "ts"));
    let Some(last) = last else { return true };
    file.split('/').any(|part| {
        let stem = part.split('.').next().unwrap_or(part);
        stem == last
    })
}

/// Whether an import comes from outside the repository.
fn foreign(link: &Link, first_party: &dyn Fn(&str) -> bool) -> bool {
    let from = link.from.as_str();
    if from.starts_with('.') || from.is_empty() {
        return false;
    }
    let root = from.split(['/', ':', '.']).next().unwrap_or(from);
    if FOREIGN_ROOTS.contains(&root) {
        return true;
    }
    if matches!(root, "crate" | "self" | "super") {
        return false;
    }
    !first_party(root)
}

impl Graph {
    /// The graph of `files` of `index`.
    pub(crate) fn new(index: &Index, files: &[&str]) -> Self {
        let mut defs: HashMap<&str, Vec<usize>> = HashMap::new();
        let mut df: HashMap<&str, u32> = HashMap::new();
        // Path components and crate/package names: an import from one of them is ours.
        let mut ours: std::collections::HashSet<&str> = std::collections::HashSet::new();
        for (i, rel) in files.iter().enumerate() {
            for part in rel.split('/') {
                ours.insert(part.split('.').next().unwrap_or(part));
            }
            let Some(e) = index.get(*rel) else { continue };
            for s in &e.facts.symbols {
                if let Some(name) = ref_name(&s.name, &s.kind) {
                    let d = defs.entry(name).or_default();
                    if d.last() != Some(&i) {
                        d.push(i);
                    }
                }
            }
            for u in &e.facts.uses {
                *df.entry(u.as_str()).or_default() += 1;
            }
        }
        let first_party =
            |root: &str| ours.contains(root) || ours.contains(root.replace('-', "_").as_str());
        let n = files.len().max(1) as f64;
        let mut edges = vec![Vec::new(); files.len()];
        let mut uses: HashMap<(usize, &str), u32> = HashMap::new();
        for (a, rel) in files.iter().enumerate() {
            let Some(e) = index.get(*rel) else { continue };
            let imported: HashMap<&str, &Link> = e
                .facts
                .imports
                .iter()
                .map(|l| (l.name.as_str(), l))
                .collect();
            let mut out: HashMap<usize, f64> = HashMap::new();
            for used in &e.facts.uses {
                let used = used.as_str();
                let Some(definers) = defs.get(used).filter(|d| d.len() <= MAX_DEFINERS) else {
                    continue;
                };
                let mut targets: Vec<usize> =
                    definers.iter().copied().filter(|d| *d != a).collect();
                if let Some(link) = imported.get(used) {
                    if foreign(link, &first_party) {
                        continue;
                    }
                    let named: Vec<usize> = targets
                        .iter()
                        .copied()
                        .filter(|d| path_names(files[*d], &link.from))
                        .collect();
                    if !named.is_empty() {
                        targets = named;
                    }
                }
                if targets.is_empty() {
                    continue;
                }
                let common = f64::from(df.get(used).copied().unwrap_or(1));
                let mut weight = (n / common).ln().max(0.0) / targets.len() as f64;
                if used.chars().count() <= 2 {
                    weight *= 0.1;
                }
                for t in targets {
                    *uses.entry((t, used)).or_default() += 1;
                    *out.entry(t).or_default() += weight;
                }
            }
            edges[a] = out.into_iter().filter(|(_, w)| *w > 0.0).collect();
            edges[a].sort_by_key(|(t, _)| *t);
        }
        Graph {
            edges,
            uses: uses
                .into_iter()
                .map(|((t, name), n)| ((t, name.to_owned()), n))
                .collect(),
        }
    }

    /// PageRank with restarts drawn from `personal` (one weight per node, not all zero).
    pub(crate) fn rank(&self, personal: &[f64]) -> Vec<f64> {
        let n = self.edges.len();
        if n == 0 {
            return Vec::new();
        }
        let total: f64 = personal.iter().sum();
        let p: Vec<f64> = if total > 0.0 {
            personal.iter().map(|w| w / total).collect()
        } else {
            vec![1.0 / n as f64; n]
        };
        let out_weight: Vec<f64> = self
            .edges
            .iter()
            .map(|e| e.iter().map(|(_, w)| w).sum())
            .collect();
        let mut rank = p.clone();
        for _ in 0..ROUNDS {
            let mut next: Vec<f64> = p.iter().map(|x| (1.0 - DAMPING) * x).collect();
            let mut dangling = 0.0;
            for (a, edges) in self.edges.iter().enumerate() {
                if out_weight[a] <= 0.0 {
                    dangling += rank[a];
                    continue;
                }
                for (t, w) in edges {
                    next[*t] += DAMPING * rank[a] * w / out_weight[a];
                }
            }
            for (x, pi) in next.iter_mut().zip(&p) {
                *x += DAMPING * dangling * pi;
            }
            rank = next;
        }
        rank
    }
}
