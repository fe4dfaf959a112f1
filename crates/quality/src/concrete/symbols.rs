//! Reading the symbols a file declares with tree-sitter: functions, classes, methods and
//! top-level consts and types of Python, JavaScript, TypeScript (and TSX) and Rust.
//! Only declarations are walked, never function bodies. Does not own what the symbols
//! must be (that is `symbol_rules`).

use std::collections::BTreeMap;

pub use atto_syntax::Lang;
use atto_syntax::tree_sitter::{InputEdit, Node, Point, Tree};
use atto_syntax::with_parser;

/// Longest symbol name kept.
pub(super) const MAX_NAME: usize = 200;

/// Deepest nesting of classes and modules walked (a hostile file may nest thousands).
const MAX_DEPTH: usize = 16;

/// The language of `rel` when the symbol checks read it: every language atto parses but Go,
/// which has no symbol rules here (its files count as other code, see `is_other_code`).
pub fn symbol_lang(rel: &str) -> Option<Lang> {
    Lang::of(rel).filter(|l| *l != Lang::Go)
}

/// A declared symbol.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Symbol {
    /// Its name, qualified by its owner for methods (`Parser.parse`).
    pub name: String,
    /// `function`, `class`, `method`, `const` or `type`.
    pub kind: &'static str,
}

/// The symbols `text` declares; `None` when it could not be parsed at all.
pub fn symbols_of(text: &str, lang: Lang) -> Option<Vec<Symbol>> {
    let tree = with_parser(lang, |p| p.parse(text, None))??;
    Some(
        collect(&tree, text, lang)
            .into_iter()
            .map(|(name, kind)| Symbol { name, kind })
            .collect(),
    )
}

/// Symbols by name (qualified for methods), with their kind.
pub(super) type SymbolMap = BTreeMap<String, &'static str>;

/// The symbols of `text`, and whether its tree has syntax errors (a symbol may hide in
/// an error node).
pub(super) fn parse_full(lang: Lang, text: &str) -> Option<(SymbolMap, bool)> {
    let tree = with_parser(lang, |p| p.parse(text, None))??;
    Some((collect(&tree, text, lang), tree.root_node().has_error()))
}

/// The symbols of `before` and of `after`, parsing `after` incrementally from the tree
/// of `before`.
pub(super) fn parse_pair(lang: Lang, before: &str, after: &str) -> Option<(SymbolMap, SymbolMap)> {
    with_parser(lang, |parser| {
        let mut tree = parser.parse(before, None)?;
        let before_symbols = collect(&tree, before, lang);
        tree.edit(&edit_between(before, after));
        let tree = parser.parse(after, Some(&tree))?;
        Some((before_symbols, collect(&tree, after, lang)))
    })?
}

/// The one edit that turns `before` into `after`: everything between their common
/// prefix and common suffix.
fn edit_between(before: &str, after: &str) -> InputEdit {
    let (b, a) = (before.as_bytes(), after.as_bytes());
    let prefix = b.iter().zip(a).take_while(|(x, y)| x == y).count();
    let room = b.len().min(a.len()) - prefix;
    let suffix = b
        .iter()
        .rev()
        .zip(a.iter().rev())
        .take(room)
        .take_while(|(x, y)| x == y)
        .count();
    let old_end = b.len() - suffix;
    let new_end = a.len() - suffix;
    InputEdit {
        start_byte: prefix,
        old_end_byte: old_end,
        new_end_byte: new_end,
        start_position: point_at(b, prefix),
        old_end_position: point_at(b, old_end),
        new_end_position: point_at(a, new_end),
    }
}

fn point_at(text: &[u8], offset: usize) -> Point {
    let upto = &text[..offset];
    let row = upto.iter().filter(|b| **b == b'\n').count();
    let line_start = upto.iter().rposition(|b| *b == b'\n').map_or(0, |p| p + 1);
    Point::new(row, offset - line_start)
}

fn collect(tree: &Tree, text: &str, lang: Lang) -> SymbolMap {
    let mut out = SymbolMap::new();
    let src = text.as_bytes();
    let root = tree.root_node();
    match lang {
        Lang::Python => python(root, src, None, &mut out),
        Lang::JavaScript | Lang::TypeScript | Lang::Tsx => script(root, src, None, &mut out),
        Lang::Rust => rust(root, src, None, &mut out),
        // Not read (see `symbol_lang`).
        Lang::Go => {}
    }
    out
}

fn name_of<'s>(node: Node<'_>, field: &str, src: &'s [u8]) -> Option<&'s str> {
    let name = node.child_by_field_name(field)?.utf8_text(src).ok()?;
    (!name.is_empty() && name.len() <= MAX_NAME).then_some(name)
}

/// The owner name for the members of `name` under `owner`, while nesting is shallow
/// enough to walk.
fn nested(owner: Option<&str>, name: &str) -> Option<String> {
    match owner {
        None => Some(name.to_owned()),
        Some(o) if o.matches('.').count() + 1 < MAX_DEPTH => Some(format!("{o}.{name}")),
        Some(_) => None,
    }
}

fn add(out: &mut SymbolMap, owner: Option<&str>, name: &str, kind: &'static str) {
    let name = match owner {
        Some(owner) => format!("{owner}.{name}"),
        None => name.to_owned(),
    };
    out.entry(name).or_insert(kind);
}

fn python(node: Node<'_>, src: &[u8], owner: Option<&str>, out: &mut SymbolMap) {
    let mut cursor = node.walk();
    for child in node.named_children(&mut cursor) {
        python_item(child, src, owner, out);
    }
}

fn python_item(node: Node<'_>, src: &[u8], owner: Option<&str>, out: &mut SymbolMap) {
    match node.kind() {
        "function_definition" => {
            if let Some(name) = name_of(node, "name", src) {
                let kind = if owner.is_some() {
                    "method"
                } else {
                    "function"
                };
                add(out, owner, name, kind);
            }
        }
        "class_definition" => {
            if let Some(name) = name_of(node, "name", src) {
                add(out, owner, name, "class");
                if let (Some(body), Some(qualified)) =
                    (node.child_by_field_name("body"), nested(owner, name))
                {
                    python(body, src, Some(&qualified), out);
                }
            }
        }
        "decorated_definition" => {
            if let Some(def) = node.child_by_field_name("definition") {
                python_item(def, src, owner, out);
            }
        }
        // Module-level names only: class attributes and locals are not the file's API.
        "expression_statement" if owner.is_none() => {
            let mut cursor = node.walk();
            for assignment in node.named_children(&mut cursor) {
                if assignment.kind() != "assignment" {
                    continue;
                }
                let Some(left) = assignment.child_by_field_name("left") else {
                    continue;
                };
                if left.kind() == "identifier"
                    && let Ok(name) = left.utf8_text(src)
                {
                    add(out, None, name, "const");
                }
            }
        }
        "type_alias_statement" if owner.is_none() => {
            if let Some(left) = node.child_by_field_name("left")
                && let Ok(text) = left.utf8_text(src)
            {
                let name = text.split(['[', ' ']).next().unwrap_or(text);
                if !name.is_empty() && name.len() <= MAX_NAME {
                    add(out, None, name, "type");
                }
            }
        }
        _ => {}
    }
}

fn script(node: Node<'_>, src: &[u8], owner: Option<&str>, out: &mut SymbolMap) {
    let mut cursor = node.walk();
    for child in node.named_children(&mut cursor) {
        script_item(child, src, owner, out);
    }
}

fn script_item(node: Node<'_>, src: &[u8], owner: Option<&str>, out: &mut SymbolMap) {
    match node.kind() {
        "function_declaration" | "generator_function_declaration" | "function_signature" => {
            if let Some(name) = name_of(node, "name", src) {
                add(out, owner, name, "function");
            }
        }
        "class_declaration" | "abstract_class_declaration" | "class" => {
            let Some(name) = name_of(node, "name", src) else {
                return;
            };
            add(out, owner, name, "class");
            let Some(body) = node.child_by_field_name("body") else {
                return;
            };
            let mut cursor = body.walk();
            for member in body.named_children(&mut cursor) {
                if matches!(
                    member.kind(),
                    "method_definition" | "method_signature" | "abstract_method_signature"
                ) {
                    let Some(key) = member.child_by_field_name("name") else {
                        continue;
                    };
                    if !matches!(
                        key.kind(),
                        "property_identifier" | "private_property_identifier"
                    ) {
                        continue;
                    }
                    if let Ok(method) = key.utf8_text(src) {
                        add(out, Some(name), method, "method");
                    }
                }
            }
        }
        "lexical_declaration" | "variable_declaration" if owner.is_none() => {
            let mut cursor = node.walk();
            for declarator in node.named_children(&mut cursor) {
                if declarator.kind() != "variable_declarator" {
                    continue;
                }
                let Some(name) = declarator.child_by_field_name("name") else {
                    continue;
                };
                if name.kind() == "identifier"
                    && let Ok(name) = name.utf8_text(src)
                {
                    add(out, None, name, "const");
                }
            }
        }
        "interface_declaration" | "type_alias_declaration" | "enum_declaration" => {
            if let Some(name) = name_of(node, "name", src) {
                add(out, owner, name, "type");
            }
        }
        "internal_module" | "module" => {
            if let Some(name) = name_of(node, "name", src) {
                add(out, owner, name, "type");
            }
        }
        // `namespace N {}` at the top level parses as an expression statement.
        "export_statement" | "ambient_declaration" | "expression_statement" => {
            script(node, src, owner, out);
        }
        _ => {}
    }
}

fn rust(node: Node<'_>, src: &[u8], owner: Option<&str>, out: &mut SymbolMap) {
    let mut cursor = node.walk();
    for child in node.named_children(&mut cursor) {
        let kind = match child.kind() {
            "function_item" | "function_signature_item" => {
                if owner.is_some() {
                    "method"
                } else {
                    "function"
                }
            }
            "struct_item" | "enum_item" | "union_item" | "type_item" => "type",
            "const_item" | "static_item" => "const",
            "macro_definition" => "macro",
            "trait_item" | "mod_item" => {
                let Some(name) = name_of(child, "name", src) else {
                    continue;
                };
                add(
                    out,
                    owner,
                    name,
                    if child.kind() == "mod_item" {
                        "module"
                    } else {
                        "type"
                    },
                );
                if let (Some(body), Some(qualified)) =
                    (child.child_by_field_name("body"), nested(owner, name))
                {
                    rust(body, src, Some(&qualified), out);
                }
                continue;
            }
            "impl_item" => {
                let (Some(ty), Some(body)) = (
                    child.child_by_field_name("type"),
                    child.child_by_field_name("body"),
                ) else {
                    continue;
                };
                let Some(ty) = rust_type_name(ty, src) else {
                    continue;
                };
                if let Some(qualified) = nested(owner, ty) {
                    rust(body, src, Some(&qualified), out);
                }
                continue;
            }
            _ => continue,
        };
        if let Some(name) = name_of(child, "name", src) {
            add(out, owner, name, kind);
        }
    }
}

/// `Foo` of `Foo`, `Foo<T>` or `a::b::Foo`.
fn rust_type_name<'s>(ty: Node<'_>, src: &'s [u8]) -> Option<&'s str> {
    let node = match ty.kind() {
        "generic_type" => ty.child_by_field_name("type")?,
        _ => ty,
    };
    let node = match node.kind() {
        "scoped_type_identifier" => node.child_by_field_name("name")?,
        _ => node,
    };
    let name = node.utf8_text(src).ok()?;
    (!name.is_empty() && name.len() <= MAX_NAME).then_some(name)
}

/// The last part of a qualified name.
pub(super) fn bare(name: &str) -> &str {
    name.rsplit('.').next().unwrap_or(name)
}

/// Whether `word` occurs in `text` as a whole identifier.
pub(super) fn contains_word(text: &str, word: &str) -> bool {
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'$';
    let bytes = text.as_bytes();
    text.match_indices(word).any(|(at, _)| {
        let before = at.checked_sub(1).map(|i| bytes[i]);
        let after = bytes.get(at + word.len()).copied();
        !before.is_some_and(ident) && !after.is_some_and(ident)
    })
}
