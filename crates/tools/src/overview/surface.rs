//! The public surface of the indexed code, as the code itself declares it: what a Rust
//! crate root offers through `pub mod` and `pub use` chains, what a Python package's
//! `__init__.py` imports and lists in `__all__`, what a TypeScript/JavaScript package's
//! `index` file re-exports with `export ... from`. Each chain is followed file to file by
//! module path, the way the language resolves it; a name is credited to the file that
//! defines it. Owns no ranking: it says which files hold the surface and which names.

use std::collections::{BTreeSet, HashMap, VecDeque};

use super::index::Index;
use super::parse::{Lang, Link};

/// How many re-export hops a name is followed through to its definition.
const MAX_HOPS: usize = 6;

/// File → the surface names it defines (empty when a public module chain reaches the file
/// but no re-exported name was traced into it).
pub(crate) type Surface = HashMap<String, BTreeSet<String>>;

/// The surface of `index`.
pub(crate) fn surface(index: &Index) -> Surface {
    let mut out = Surface::new();
    rust(index, &mut out);
    python(index, &mut out);
    script(index, &mut out);
    out
}

fn defines(index: &Index, file: &str, name: &str) -> bool {
    index.get(file).is_some_and(|e| {
        e.facts
            .symbols
            .iter()
            .any(|s| s.kind != "impl" && s.name == name)
    })
}

fn mark(out: &mut Surface, file: &str, name: Option<&str>) {
    let names = out.entry(file.to_owned()).or_default();
    if let Some(n) = name {
        names.insert(n.to_owned());
    }
}

// ---- Rust -------------------------------------------------------------------------------

/// A crate: the directory its root `lib.rs` is in.
struct Crate<'a> {
    index: &'a Index,
    dir: String,
}

impl Crate<'_> {
    /// The file of module `segs` (`[]` is the root).
    fn module(&self, segs: &[String]) -> Option<String> {
        if segs.is_empty() {
            return Some(format!("{}lib.rs", self.dir));
        }
        let base = format!("{}{}", self.dir, segs.join("/"));
        [format!("{base}.rs"), format!("{base}/mod.rs")]
            .into_iter()
            .find(|f| self.index.contains_key(f))
    }

    /// The module path of `file`.
    fn segs_of(&self, file: &str) -> Vec<String> {
        let rest = file.strip_prefix(&self.dir).unwrap_or(file);
        let rest = rest.strip_suffix(".rs").unwrap_or(rest);
        let rest = rest
            .strip_suffix("/mod")
            .or_else(|| (rest == "lib").then_some(""))
            .unwrap_or(rest);
        rest.split('/')
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect()
    }

    /// The absolute module path `link` names from module `at`; `None` for another crate.
    fn absolute(&self, at: &[String], link: &Link) -> Option<Vec<String>> {
        let mut path: Vec<&str> = link.from.split("::").filter(|s| !s.is_empty()).collect();
        path.push(&link.name);
        let mut abs: Vec<String> = match path.first().copied() {
            Some("crate") => {
                path.remove(0);
                Vec::new()
            }
            Some("self") => {
                path.remove(0);
                at.to_vec()
            }
            Some("super") => {
                let mut here = at.to_vec();
                while path.first() == Some(&"super") {
                    path.remove(0);
                    here.pop();
                }
                here
            }
            // A child module of this one, or another crate.
            Some(first) => {
                let mut child = at.to_vec();
                child.push(first.to_owned());
                self.module(&child)?;
                at.to_vec()
            }
            None => return None,
        };
        abs.extend(path.into_iter().map(str::to_owned));
        Some(abs)
    }
}

fn rust(index: &Index, out: &mut Surface) {
    let roots: Vec<&String> = index
        .keys()
        .filter(|f| *f == "lib.rs" || f.ends_with("/lib.rs"))
        .filter(|f| !super::rank::lowered(f))
        .collect();
    for root in roots {
        let krate = Crate {
            index,
            dir: root.strip_suffix("lib.rs").unwrap_or("").to_owned(),
        };
        let mut queue: VecDeque<String> = VecDeque::from([root.clone()]);
        let mut seen: BTreeSet<String> = BTreeSet::new();
        while let Some(file) = queue.pop_front() {
            if !seen.insert(file.clone()) {
                continue;
            }
            mark(out, &file, None);
            let at = krate.segs_of(&file);
            let Some(entry) = index.get(&file) else {
                continue;
            };
            for link in &entry.facts.exports {
                let Some(abs) = krate.absolute(&at, link) else {
                    continue;
                };
                trace_rust(&krate, abs, 0, out, &mut queue);
            }
        }
    }
}

/// Credits the item at `abs` to the file defining it, or queues it when it is a module.
fn trace_rust(
    krate: &Crate<'_>,
    abs: Vec<String>,
    hops: usize,
    out: &mut Surface,
    queue: &mut VecDeque<String>,
) {
    let Some((name, parent)) = abs.split_last() else {
        return;
    };
    if name == "*" {
        if let Some(m) = krate.module(parent) {
            queue.push_back(m);
        }
        return;
    }
    if let Some(m) = krate.module(&abs) {
        queue.push_back(m);
        return;
    }
    // The deepest module of the path that has a file.
    let mut at = parent.to_vec();
    let file = loop {
        if let Some(f) = krate.module(&at) {
            break f;
        }
        if at.pop().is_none() {
            return;
        }
    };
    if defines(krate.index, &file, name) {
        mark(out, &file, Some(name));
        return;
    }
    // Re-exported again below: follow the link that brings the name in.
    if hops < MAX_HOPS
        && let Some(entry) = krate.index.get(&file)
    {
        let here = krate.segs_of(&file);
        let next = entry
            .facts
            .exports
            .iter()
            .chain(&entry.facts.imports)
            .find(|l| l.name == *name)
            .and_then(|l| krate.absolute(&here, l));
        if let Some(next) = next {
            trace_rust(krate, next, hops + 1, out, queue);
            return;
        }
    }
    // Defined by a macro or in a way the walk does not see: any file of that module
    // defining the name.
    let dir = format!("{}{}/", krate.dir, at.join("/"));
    for (f, _) in krate.index.iter().filter(|(f, _)| f.starts_with(&dir)) {
        if defines(krate.index, f, name) {
            mark(out, f, Some(name));
        }
    }
}

// ---- Python -----------------------------------------------------------------------------

fn parent_dir(file: &str) -> &str {
    file.rsplit_once('/').map_or("", |(d, _)| d)
}

fn join(dir: &str, rest: &str) -> String {
    if dir.is_empty() {
        rest.to_owned()
    } else {
        format!("{dir}/{rest}")
    }
}

/// The file of Python module `module` imported from `file`'s package.
fn python_module(index: &Index, file: &str, module: &str) -> Option<String> {
    let dots = module.chars().take_while(|c| *c == '.').count();
    let rest = &module[dots..];
    let mut dir = parent_dir(file).to_owned();
    if dots == 0 {
        // Absolute: the package of that name among the file's ancestors.
        let top = rest.split('.').next()?;
        let mut d = dir.as_str();
        loop {
            let name = d.rsplit('/').next().unwrap_or(d);
            if name == top {
                dir = parent_dir(d).to_owned();
                break;
            }
            if d.is_empty() {
                return None;
            }
            d = parent_dir(d);
        }
    } else {
        for _ in 1..dots {
            dir = parent_dir(&dir).to_owned();
        }
    }
    let base = join(&dir, &rest.replace('.', "/"));
    if rest.is_empty() {
        return Some(join(&dir, "__init__.py")).filter(|f| index.contains_key(f));
    }
    [
        format!("{base}.py"),
        format!("{base}/__init__.py"),
        format!("{base}.pyi"),
    ]
    .into_iter()
    .find(|f| index.contains_key(f))
}

fn python(index: &Index, out: &mut Surface) {
    let mut queue: VecDeque<String> = index
        .keys()
        .filter(|f| f.ends_with("__init__.py") && !super::rank::lowered(f))
        .filter(|f| {
            let up = parent_dir(parent_dir(f));
            !index.contains_key(&join(up, "__init__.py"))
        })
        .cloned()
        .collect();
    let mut seen = BTreeSet::new();
    while let Some(init) = queue.pop_front() {
        if !seen.insert(init.clone()) {
            continue;
        }
        let Some(entry) = index.get(&init) else {
            continue;
        };
        mark(out, &init, None);
        let listed: BTreeSet<&str> = entry
            .facts
            .exports
            .iter()
            .map(|l| l.name.as_str())
            .collect();
        for link in &entry.facts.imports {
            if !listed.is_empty() && link.name != "*" && !listed.contains(link.name.as_str()) {
                continue;
            }
            // `from . import sub`: a submodule.
            let module = if link.from.chars().all(|c| c == '.') {
                python_module(index, &init, &format!("{}{}", link.from, link.name))
            } else {
                python_module(index, &init, &link.from)
            };
            let Some(module) = module else { continue };
            if module.ends_with("__init__.py") {
                queue.push_back(module);
                continue;
            }
            mark(out, &module, None);
            let Some(m) = index.get(&module) else {
                continue;
            };
            let names: Vec<&str> = if link.name == "*" {
                let own: Vec<&str> = m.facts.exports.iter().map(|l| l.name.as_str()).collect();
                if own.is_empty() {
                    m.facts
                        .symbols
                        .iter()
                        .filter(|s| s.public)
                        .map(|s| s.name.as_str())
                        .collect()
                } else {
                    own
                }
            } else {
                vec![link.name.as_str()]
            };
            for name in names {
                if defines(index, &module, name) {
                    mark(out, &module, Some(name));
                }
            }
        }
    }
}

// ---- TypeScript / JavaScript ------------------------------------------------------------

/// The file `spec` (`./schemas.js`) names from `file`.
fn script_module(index: &Index, file: &str, spec: &str) -> Option<String> {
    if !spec.starts_with('.') {
        return None;
    }
    let mut parts: Vec<&str> = parent_dir(file)
        .split('/')
        .filter(|s| !s.is_empty())
        .collect();
    for seg in spec.split('/') {
        match seg {
            "." | "" => {}
            ".." => {
                parts.pop()?;
            }
            s => parts.push(s),
        }
    }
    let path = parts.join("/");
    let stem = [".js", ".mjs", ".cjs", ".jsx", ".ts", ".tsx"]
        .iter()
        .find_map(|e| path.strip_suffix(e))
        .unwrap_or(&path);
    [
        ".ts",
        ".tsx",
        ".mts",
        ".js",
        ".mjs",
        ".jsx",
        ".d.ts",
        "/index.ts",
        "/index.tsx",
        "/index.js",
    ]
    .iter()
    .map(|e| format!("{stem}{e}"))
    .chain(std::iter::once(path.clone()))
    .find(|f| index.contains_key(f))
}

fn script(index: &Index, out: &mut Surface) {
    // The package entries: the shallowest `index` files of the source (not compiled copies).
    let entries: Vec<&String> = index
        .keys()
        .filter(|f| {
            let name = f.rsplit('/').next().unwrap_or(f);
            matches!(
                Lang::of(f),
                Some(Lang::TypeScript | Lang::Tsx | Lang::JavaScript)
            ) && name.starts_with("index.")
                && !super::rank::lowered(f)
        })
        .collect();
    let Some(depth) = entries.iter().map(|f| f.matches('/').count()).min() else {
        return;
    };
    let mut queue: VecDeque<String> = entries
        .into_iter()
        .filter(|f| f.matches('/').count() <= depth + 1)
        .cloned()
        .collect();
    let mut seen = BTreeSet::new();
    while let Some(file) = queue.pop_front() {
        if !seen.insert(file.clone()) {
            continue;
        }
        mark(out, &file, None);
        let Some(entry) = index.get(&file) else {
            continue;
        };
        let local: BTreeSet<&str> = entry
            .facts
            .exports
            .iter()
            .filter(|l| l.from.is_empty())
            .map(|l| l.name.as_str())
            .collect();
        // Re-exports, and imports the file exports again (`import * as z ...; export { z }`).
        let links =
            entry
                .facts
                .exports
                .iter()
                .filter(|l| !l.from.is_empty())
                .chain(entry.facts.imports.iter().filter(|l| {
                    local.contains(l.name.as_str()) || l.name == "*" && !local.is_empty()
                }));
        for link in links {
            let Some(target) = script_module(index, &file, &link.from) else {
                continue;
            };
            if link.name != "*" && defines(index, &target, &link.name) {
                mark(out, &target, Some(&link.name));
            }
            queue.push_back(target);
        }
    }
}
