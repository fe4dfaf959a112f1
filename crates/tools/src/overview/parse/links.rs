//! What a file imports and re-exports: Python `from … import` and `__all__`,
//! TypeScript/JavaScript import and export clauses, Rust `use`/`pub use` trees and
//! `pub mod` declarations. Which symbols a file defines is the parent's business.

use atto_syntax::tree_sitter::Node;

use super::{FileFacts, Link, MAX_NAME, field, text_of};

/// The text of a string literal node without its quotes.
fn unquoted<'a>(node: Node<'_>, text: &'a str) -> &'a str {
    text_of(node, text).trim_matches(|c| matches!(c, '"' | '\'' | '`'))
}

/// `__all__ = ["a", "b"]` (or a tuple) at a Python module's top level.
pub(super) fn python_all(stmt: Node<'_>, text: &str, out: &mut FileFacts) {
    let Some(assign) = stmt.named_child(0).filter(|a| a.kind() == "assignment") else {
        return;
    };
    if field(assign, "left", text) != Some("__all__") {
        return;
    }
    let Some(list) = assign.child_by_field_name("right") else {
        return;
    };
    let mut c = list.walk();
    for item in list.named_children(&mut c) {
        if item.kind() == "string" {
            let name = unquoted(item, text);
            if !name.is_empty() && name.len() <= MAX_NAME {
                out.exports.push(Link {
                    from: String::new(),
                    name: name.to_owned(),
                });
            }
        }
    }
}

/// `from .models import A, B as C` / `from . import x` / `from .api import *`.
pub(super) fn python_import(stmt: Node<'_>, text: &str, out: &mut FileFacts) {
    let Some(module) = field(stmt, "module_name", text) else {
        return;
    };
    let mut c = stmt.walk();
    let mut any = false;
    for name in stmt.children_by_field_name("name", &mut c) {
        let name = match name.kind() {
            "aliased_import" => field(name, "name", text).unwrap_or(""),
            _ => text_of(name, text),
        };
        if !name.is_empty() {
            any = true;
            out.imports.push(Link {
                from: module.to_owned(),
                name: name.to_owned(),
            });
        }
    }
    if !any {
        out.imports.push(Link {
            from: module.to_owned(),
            name: "*".to_owned(),
        });
    }
}

/// The names of a TypeScript/JavaScript import or export clause: `{ a, b as c }`,
/// `* as ns`, a default import; `*` when there is no clause.
fn clause_names(stmt: Node<'_>, text: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut stack = vec![stmt];
    while let Some(n) = stack.pop() {
        match n.kind() {
            "import_specifier" | "export_specifier" => {
                if let Some(name) = field(n, "name", text) {
                    names.push(name.to_owned());
                }
            }
            "namespace_import" | "namespace_export" => names.push("*".to_owned()),
            "identifier" if n.parent().is_some_and(|p| p.kind() == "import_clause") => {
                names.push(text_of(n, text).to_owned());
            }
            "string" | "statement_block" | "class_body" => {}
            _ => {
                let mut c = n.walk();
                stack.extend(n.named_children(&mut c));
            }
        }
    }
    if names.is_empty() {
        names.push("*".to_owned());
    }
    names
}

pub(super) fn script_import(stmt: Node<'_>, text: &str, out: &mut FileFacts) {
    let Some(source) = stmt.child_by_field_name("source") else {
        return;
    };
    let from = unquoted(source, text).to_owned();
    for name in clause_names(stmt, text) {
        out.imports.push(Link {
            from: from.clone(),
            name,
        });
    }
}

/// `export * from './x'`, `export { a } from './x'`, `export { z }`.
pub(super) fn script_export(stmt: Node<'_>, text: &str, out: &mut FileFacts) {
    let from = stmt
        .child_by_field_name("source")
        .map(|s| unquoted(s, text).to_owned());
    let has_clause = {
        let mut c = stmt.walk();
        stmt.named_children(&mut c)
            .any(|n| matches!(n.kind(), "export_clause" | "namespace_export"))
    };
    if from.is_none() && !has_clause {
        return;
    }
    for name in clause_names(stmt, text) {
        out.exports.push(Link {
            from: from.clone().unwrap_or_default(),
            name,
        });
    }
}

/// Rust `use` and `pub use` trees and `pub mod x;` declarations, read from the file's
/// tokens so that those inside macro calls (`cfg_rt! { pub mod runtime; }`) count too.
pub(super) fn rust_links(tokens: &[(&str, bool)], out: &mut FileFacts) {
    let words: Vec<&str> = tokens.iter().map(|(t, _)| *t).collect();
    let mut i = 0;
    while i < words.len() {
        let public = i > 0 && words[i - 1] == "pub";
        match words[i] {
            "mod" if public && words.get(i + 2) == Some(&";") => {
                if let Some(name) = words.get(i + 1) {
                    out.exports.push(Link {
                        from: String::new(),
                        name: (*name).to_owned(),
                    });
                }
                i += 3;
            }
            "use" => {
                let end = words[i..]
                    .iter()
                    .position(|w| *w == ";")
                    .map_or(words.len(), |p| i + p);
                let mut paths = Vec::new();
                use_tree(&words[i + 1..end], &mut Vec::new(), &mut paths);
                let to = if public {
                    &mut out.exports
                } else {
                    &mut out.imports
                };
                for mut path in paths {
                    let name = path.pop().unwrap_or_default();
                    if !name.is_empty() {
                        to.push(Link {
                            from: path.join("::"),
                            name,
                        });
                    }
                }
                i = end + 1;
            }
            _ => i += 1,
        }
    }
}

/// Expands a use tree's tokens (`a::{b, c::{d as e, *}}`) into paths, returning how
/// many tokens it read.
fn use_tree<'a>(words: &[&'a str], prefix: &mut Vec<&'a str>, out: &mut Vec<Vec<String>>) -> usize {
    let depth = prefix.len();
    let mut i = 0;
    if words.first() == Some(&"::") {
        i += 1;
    }
    while let Some(w) = words.get(i) {
        match *w {
            "{" => {
                i += 1;
                while let Some(w) = words.get(i) {
                    match *w {
                        "}" => {
                            i += 1;
                            break;
                        }
                        "," => i += 1,
                        _ => i += use_tree(&words[i..], prefix, out).max(1),
                    }
                }
                prefix.truncate(depth);
                return i;
            }
            "}" | "," => break,
            "*" => {
                let mut p: Vec<String> = prefix.iter().map(|s| (*s).to_owned()).collect();
                p.push("*".to_owned());
                out.push(p);
                prefix.truncate(depth);
                return i + 1;
            }
            name => {
                prefix.push(name);
                i += 1;
                if words.get(i) == Some(&"::") {
                    i += 1;
                    continue;
                }
                if words.get(i) == Some(&"as") {
                    i += 2;
                }
                out.push(prefix.iter().map(|s| (*s).to_owned()).collect());
                prefix.truncate(depth);
                return i;
            }
        }
    }
    prefix.truncate(depth);
    i
}
