//! One source file read with tree-sitter: the top-level symbols it defines (with their
//! line, whether they are public and documented), the names it uses, what it imports and
//! what it re-exports. Rust, Python, JavaScript, TypeScript (and TSX) and Go.
//! Only the file's top level (and the insides of Rust `impl`/`mod`, Python classes and
//! TypeScript namespaces, one level) is walked for definitions; a Rust macro call at the
//! top level (`cfg_rt! { ... }`) is read as the items it wraps. Every identifier leaf
//! counts as a use. Resolving imports to files is the ranking's business, not this one's.

mod links;

use atto_syntax::tree_sitter::Node;

use links::{python_all, python_import, rust_links, script_export, script_import};

/// Longest symbol or identifier kept.
const MAX_NAME: usize = 80;

/// Files larger than this are not parsed (generated code, bundles).
pub(crate) const MAX_FILE_BYTES: u64 = 512 * 1024;

/// How deep Rust macro calls wrapping items are read (`cfg_a! { cfg_b! { ... } }`).
const MAX_MACRO_DEPTH: usize = 2;

pub(crate) use atto_syntax::Lang;

/// A symbol a file defines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Symbol {
    /// `fn`, `struct`, `class`, `def`, `type`, `const`, ...
    pub kind: String,
    /// Its name (`impl Type` for a Rust impl block, `Type.method` for a Go method).
    pub name: String,
    /// 1-based line.
    pub line: u32,
    /// Visible outside its package: Rust `pub` (not `pub(crate)`), a Python name without a
    /// leading `_`, a TypeScript/JavaScript `export`, a capitalised Go name.
    pub public: bool,
    /// Lines of its doc comment (Rust `///`, a Python docstring, `/** */`, a Go comment),
    /// 0 for none.
    pub doc: u32,
}

/// A name one file takes from, or offers to, another module.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Link {
    /// The module as written: `crate::sync` (Rust), `._models` (Python), `./schemas.js`
    /// (TypeScript); empty for a name of the file's own module (`__all__`, `export { z }`).
    pub from: String,
    /// The name taken, `*` for all of them.
    pub name: String,
}

/// What the overview keeps of one file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct FileFacts {
    pub symbols: Vec<Symbol>,
    /// Distinct identifiers the file uses, sorted.
    pub uses: Vec<String>,
    /// Names it imports (Rust `use`, Python `from ... import`, TypeScript `import`).
    pub imports: Vec<Link>,
    /// What it makes public for others: Rust `pub use` and `pub mod x;`, Python
    /// `__all__`, TypeScript `export ... from` and `export { x }`.
    pub exports: Vec<Link>,
    /// Names its module documentation points at (`` `Mutex` ``, `[spawn]`), sorted: what
    /// the authors present first.
    pub mentions: Vec<String>,
}

/// The symbols and uses of `text`; `None` when it cannot be parsed.
pub(crate) fn facts(text: &str, lang: Lang) -> Option<FileFacts> {
    let tree = atto_syntax::with_parser(lang, |p| p.parse(text, None))??;
    let root = tree.root_node();
    let mut out = FileFacts::default();
    let at = Place {
        text,
        lang,
        base_line: 0,
        macro_depth: 0,
    };
    definitions(root, at, 0, &mut out);
    out.mentions = module_doc(root, text, lang);
    let tokens = leaves(root, text);
    out.uses = identifiers(&tokens);
    if lang == Lang::Rust {
        rust_links(&tokens, &mut out);
    }
    Some(out)
}

/// Where a walk is: the text its nodes index, and the line its first line is at in the
/// file (a macro's body is parsed on its own).
#[derive(Clone, Copy)]
struct Place<'a> {
    text: &'a str,
    lang: Lang,
    base_line: u32,
    macro_depth: usize,
}

fn text_of<'a>(node: Node<'_>, text: &'a str) -> &'a str {
    text.get(node.byte_range()).unwrap_or("")
}

fn field<'a>(node: Node<'_>, name: &str, text: &'a str) -> Option<&'a str> {
    node.child_by_field_name(name)
        .map(|n| text_of(n, text))
        .filter(|s| !s.is_empty() && s.len() <= MAX_NAME)
}

fn line(node: Node<'_>, base: u32) -> u32 {
    u32::try_from(node.start_position().row + 1)
        .unwrap_or(u32::MAX)
        .saturating_add(base)
}

/// Lines of the doc comment just above `node` (past attributes and decorators), 0 for none.
fn doc_lines(node: Node<'_>, text: &str, lang: Lang) -> u32 {
    let mut lines = 0;
    let mut below = node.start_position().row;
    let mut prev = node.prev_named_sibling();
    while let Some(p) = prev {
        prev = p.prev_named_sibling();
        if p.kind() == "attribute_item" || p.kind() == "decorator" {
            below = p.start_position().row;
            continue;
        }
        if !p.kind().contains("comment") || p.end_position().row + 1 < below {
            break;
        }
        let c = text_of(p, text);
        let doc = match lang {
            Lang::Rust => (c.starts_with("///") && !c.starts_with("////")) || c.starts_with("/**"),
            Lang::Go => true,
            _ => c.starts_with("/**"),
        };
        below = p.start_position().row;
        // An ordinary comment between the doc and the item (`// Alias for old name`).
        if !doc {
            continue;
        }
        let rows = p.end_position().row - p.start_position().row + 1;
        lines += u32::try_from(rows).unwrap_or(u32::MAX);
    }
    lines
}

/// Lines of the docstring a Python class or function body opens with, 0 for none.
fn docstring(item: Node<'_>) -> u32 {
    item.child_by_field_name("body")
        .and_then(|b| b.named_child(0))
        .filter(|s| s.kind() == "expression_statement")
        .and_then(|s| s.named_child(0))
        .filter(|e| e.kind() == "string")
        .map_or(0, |e| {
            u32::try_from(e.end_position().row - e.start_position().row + 1).unwrap_or(u32::MAX)
        })
}

/// Most names kept from a file's module documentation.
const MAX_MENTIONS: usize = 200;

/// The names a file's module documentation points at: Rust `//!` and `/*! */`, a Python
/// module docstring, a leading `/** */` or Go package comment.
fn module_doc(root: Node<'_>, text: &str, lang: Lang) -> Vec<String> {
    let mut found = std::collections::BTreeSet::new();
    let mut c = root.walk();
    for (i, child) in root.named_children(&mut c).enumerate() {
        let t = text_of(child, text);
        let doc = match lang {
            Lang::Rust => {
                child.kind().contains("comment") && (t.starts_with("//!") || t.starts_with("/*!"))
            }
            Lang::Python => {
                i == 0
                    && child.kind() == "expression_statement"
                    && child.named_child(0).is_some_and(|e| e.kind() == "string")
            }
            _ => child.kind().contains("comment") && (lang == Lang::Go || t.starts_with("/**")),
        };
        if doc {
            doc_names(t, &mut found);
        } else if lang != Lang::Rust && !child.kind().contains("comment") {
            break;
        }
        if found.len() >= MAX_MENTIONS {
            break;
        }
    }
    found.into_iter().collect()
}

/// The names in a doc's `` `code` `` spans and `[links]`: `tokio::spawn()` → `spawn`.
fn doc_names(doc: &str, out: &mut std::collections::BTreeSet<String>) {
    let mut rest = doc;
    while let Some(open) = rest.find(['`', '[']) {
        let close = if rest[open..].starts_with('`') {
            '`'
        } else {
            ']'
        };
        let after = &rest[open + 1..];
        let Some(len) = after.find(close) else { break };
        // A link's label is often code too: [`Mutex`].
        let span = after[..len].trim_matches('`');
        rest = &after[len + 1..];
        if span.len() > MAX_NAME || span.contains(char::is_whitespace) {
            continue;
        }
        let span = span.split(['(', '<', '!']).next().unwrap_or("");
        let name = span.rsplit(['.', ':']).next().unwrap_or("");
        if name.len() >= 2
            && name.starts_with(|c: char| c.is_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_alphanumeric() || c == '_')
        {
            out.insert(name.to_owned());
        }
    }
}

/// Whether a Rust item is `pub` with no restriction.
fn rust_pub(item: Node<'_>, text: &str) -> bool {
    let mut c = item.walk();
    item.named_children(&mut c)
        .any(|n| n.kind() == "visibility_modifier" && text_of(n, text) == "pub")
}

/// Collects the definitions in the body of `item`, a top-level `impl`, `mod`, class or
/// namespace: one level down, no further.
fn members(item: Node<'_>, at: Place<'_>, depth: usize, out: &mut FileFacts) {
    if depth == 0
        && let Some(body) = item.child_by_field_name("body")
    {
        definitions(body, at, depth + 1, out);
    }
}

/// The items of a Rust macro call's `{ ... }` body, parsed on their own.
fn macro_items(call: Node<'_>, at: Place<'_>, depth: usize, out: &mut FileFacts) {
    if at.macro_depth >= MAX_MACRO_DEPTH {
        return;
    }
    let mut c = call.walk();
    let Some(body) = call
        .named_children(&mut c)
        .find(|n| n.kind() == "token_tree")
    else {
        return;
    };
    let inner = text_of(body, at.text);
    if !inner.starts_with('{') || inner.len() < 2 {
        return;
    }
    let inner = &inner[1..inner.len() - 1];
    let Some(Some(tree)) = atto_syntax::with_parser(Lang::Rust, |p| p.parse(inner, None)) else {
        return;
    };
    let inside = Place {
        text: inner,
        lang: Lang::Rust,
        base_line: line(body, at.base_line) - 1,
        macro_depth: at.macro_depth + 1,
    };
    definitions(tree.root_node(), inside, depth, out);
}

/// Collects the definitions among `node`'s children; `depth` bounds nesting.
fn definitions(node: Node<'_>, at: Place<'_>, depth: usize, out: &mut FileFacts) {
    let mut cursor = node.walk();
    for child in node.named_children(&mut cursor) {
        let one = Child {
            node,
            child,
            at,
            depth,
            doc: doc_lines(child, at.text, at.lang),
        };
        match at.lang {
            Lang::Rust => rust_definition(&one, out),
            Lang::Python => python_definition(&one, out),
            Lang::JavaScript | Lang::TypeScript | Lang::Tsx => script_definition(&one, out),
            Lang::Go => go_definition(&one, out),
        }
    }
}

/// One child of the node whose definitions are collected.
struct Child<'t, 'a> {
    /// The parent.
    node: Node<'t>,
    child: Node<'t>,
    at: Place<'a>,
    depth: usize,
    /// Lines of documentation above it.
    doc: u32,
}

impl Child<'_, '_> {
    /// Records a symbol at the child's line.
    fn push(&self, out: &mut FileFacts, kind: &str, name: String, public: bool, doc: u32) {
        out.symbols.push(Symbol {
            kind: kind.to_owned(),
            name,
            line: line(self.child, self.at.base_line),
            public,
            doc,
        });
    }

    /// The text of the child's field `f`.
    fn name(&self, f: &str) -> Option<String> {
        field(self.child, f, self.at.text).map(str::to_owned)
    }
}

fn rust_definition(one: &Child<'_, '_>, out: &mut FileFacts) {
    let (child, at, depth, doc) = (one.child, one.at, one.depth, one.doc);
    let text = at.text;
    let k = child.kind();
    if k == "macro_invocation" {
        if depth == 0 {
            macro_items(child, at, depth, out);
        }
        return;
    }
    let kind = match k {
        "function_item" | "function_signature_item" => "fn",
        "struct_item" => "struct",
        "enum_item" => "enum",
        "trait_item" => "trait",
        "type_item" => "type",
        "const_item" => "const",
        "static_item" => "static",
        "macro_definition" => "macro",
        "union_item" => "union",
        "mod_item" => "mod",
        "impl_item" => {
            let ty = field(child, "type", text).unwrap_or("?");
            let name = match field(child, "trait", text) {
                Some(tr) => format!("impl {tr} for {ty}"),
                None => format!("impl {ty}"),
            };
            one.push(out, "impl", name, false, doc);
            members(child, at, depth, out);
            return;
        }
        _ => return,
    };
    // An exported macro is public whatever its visibility says.
    let public = rust_pub(child, text)
        || (k == "macro_definition"
            && child
                .prev_named_sibling()
                .is_some_and(|p| text_of(p, text).contains("macro_export")));
    if let Some(n) = one.name("name") {
        one.push(out, kind, n, public, doc);
    }
    if k == "mod_item" {
        members(child, at, depth, out);
    }
}

fn python_definition(one: &Child<'_, '_>, out: &mut FileFacts) {
    let Child {
        child, at, depth, ..
    } = *one;
    let text = at.text;
    match child.kind() {
        "function_definition" => {
            if let Some(n) = one.name("name") {
                let public = !n.starts_with('_') || n.starts_with("__");
                one.push(out, "def", n, public, docstring(child));
            }
        }
        "class_definition" => {
            if let Some(n) = one.name("name") {
                one.push(
                    out,
                    "class",
                    n.clone(),
                    !n.starts_with('_'),
                    docstring(child),
                );
            }
            members(child, at, depth, out);
        }
        // Its children are the decorators and the definition itself.
        "decorated_definition" => definitions(child, at, depth, out),
        "expression_statement" if depth == 0 => python_all(child, text, out),
        "import_from_statement" if depth == 0 => {
            python_import(child, text, out);
        }
        _ => {}
    }
}

fn script_definition(one: &Child<'_, '_>, out: &mut FileFacts) {
    let (node, child, at, depth, doc) = (one.node, one.child, one.at, one.depth, one.doc);
    let text = at.text;
    let kind = match child.kind() {
        "function_declaration" | "generator_function_declaration" | "function_signature" => {
            "function"
        }
        "class_declaration" | "abstract_class_declaration" => "class",
        "interface_declaration" => "interface",
        "type_alias_declaration" => "type",
        "enum_declaration" => "enum",
        "method_definition" if depth > 0 => "method",
        "internal_module" | "module" => "namespace",
        "lexical_declaration" | "variable_declaration" if depth == 0 => {
            let public = node.kind() == "export_statement";
            let mut c = child.walk();
            for decl in child.named_children(&mut c) {
                if decl.kind() == "variable_declarator"
                    && let Some(n) = field(decl, "name", text)
                {
                    one.push(out, "const", n.to_owned(), public, doc);
                }
            }
            return;
        }
        "export_statement" => {
            script_export(child, text, out);
            let before = out.symbols.len();
            definitions(child, at, depth, out);
            for s in &mut out.symbols[before..] {
                s.public = true;
                s.doc = s.doc.max(doc);
            }
            return;
        }
        "import_statement" => {
            script_import(child, text, out);
            return;
        }
        "ambient_declaration" => {
            definitions(child, at, depth, out);
            return;
        }
        _ => return,
    };
    if let Some(n) = one.name("name") {
        let public = node.kind() == "export_statement" || depth > 0;
        one.push(out, kind, n, public, doc);
    }
    if matches!(kind, "class" | "namespace") {
        members(child, at, depth, out);
    }
}

fn go_definition(one: &Child<'_, '_>, out: &mut FileFacts) {
    let Child { child, at, doc, .. } = *one;
    let text = at.text;
    match child.kind() {
        "function_declaration" => {
            if let Some(n) = one.name("name") {
                one.push(out, "func", n.clone(), go_public(&n), doc);
            }
        }
        "method_declaration" => {
            let receiver = child
                .child_by_field_name("receiver")
                .map(|r| receiver_type(r, text))
                .unwrap_or_default();
            if let Some(n) = one.name("name") {
                let public = go_public(&n) && go_public(&receiver);
                one.push(out, "method", format!("{receiver}.{n}"), public, doc);
            }
        }
        "type_declaration" | "const_declaration" | "var_declaration" => {
            let kind = match child.kind() {
                "type_declaration" => "type",
                "const_declaration" => "const",
                _ => "var",
            };
            let mut c = child.walk();
            for spec in child.named_children(&mut c) {
                if let Some(n) = field(spec, "name", text) {
                    one.push(out, kind, n.to_owned(), go_public(n), doc);
                }
            }
        }
        _ => {}
    }
}

fn go_public(name: &str) -> bool {
    name.starts_with(|c: char| c.is_uppercase())
}

/// The type name of a Go method receiver: `(s *Server)` → `Server`.
fn receiver_type(receiver: Node<'_>, text: &str) -> String {
    let raw = text_of(receiver, text);
    raw.trim_matches(|c| c == '(' || c == ')')
        .split_whitespace()
        .last()
        .unwrap_or("")
        .trim_start_matches('*')
        .split('[')
        .next()
        .unwrap_or("")
        .to_owned()
}

/// The leaves of the tree in order, comments left out, each with whether it is an
/// identifier.
fn leaves<'a>(root: Node<'_>, text: &'a str) -> Vec<(&'a str, bool)> {
    let mut out = Vec::new();
    let mut cursor = root.walk();
    let mut descending = true;
    loop {
        if descending {
            let node = cursor.node();
            if node.child_count() == 0 {
                if !node.kind().contains("comment") {
                    out.push((text_of(node, text), node.kind().ends_with("identifier")));
                }
            } else if node.kind().contains("comment") || node.kind().ends_with("string") {
                // Neither a use nor a token of a `use` tree.
            } else if cursor.goto_first_child() {
                continue;
            }
        }
        if cursor.goto_next_sibling() {
            descending = true;
            continue;
        }
        if !cursor.goto_parent() {
            break;
        }
        descending = false;
    }
    out
}

/// Distinct identifiers among the leaves, sorted.
fn identifiers(tokens: &[(&str, bool)]) -> Vec<String> {
    let mut seen = std::collections::BTreeSet::new();
    for (name, ident) in tokens {
        if *ident && name.len() >= 2 && name.len() <= MAX_NAME {
            seen.insert(*name);
        }
    }
    seen.into_iter().map(str::to_owned).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::overview::tests::names;

    #[test]
    fn each_language_yields_its_top_level_symbols() {
        let rust = "pub struct Parser { x: u8 }\nimpl Parser {\n    pub fn parse(&self) {}\n}\nfn main() { let y = Parser { x: 1 }; }\n";
        assert_eq!(
            names(rust, Lang::Rust),
            [
                "struct Parser:1",
                "impl impl Parser:2",
                "fn parse:3",
                "fn main:5"
            ]
        );
        let py =
            "import os\nclass A:\n    def m(self):\n        pass\n@dec\ndef f():\n    return A()\n";
        assert_eq!(names(py, Lang::Python), ["class A:2", "def m:3", "def f:6"]);
        let ts = "export interface Opts { a: number }\nexport class C { run() {} }\nconst k = 1;\nexport function go(o: Opts) { return new C(); }\n";
        assert_eq!(
            names(ts, Lang::TypeScript),
            [
                "interface Opts:1",
                "class C:2",
                "method run:2",
                "const k:3",
                "function go:4"
            ]
        );
        let go = "package p\ntype Server struct{}\nfunc (s *Server) Run() {}\nfunc New() *Server { return &Server{} }\nconst X = 1\n";
        assert_eq!(
            names(go, Lang::Go),
            [
                "type Server:2",
                "method Server.Run:3",
                "func New:4",
                "const X:5"
            ]
        );
        let uses = facts(go, Lang::Go).unwrap().uses;
        assert!(uses.contains(&"Server".to_owned()), "{uses:?}");
    }
}
