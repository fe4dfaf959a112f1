//! One source file read with tree-sitter: the top-level symbols it defines (with their
//! line) and the names it uses. Rust, Python, JavaScript, TypeScript (and TSX) and Go.
//! Only the file's top level (and the insides of Rust `impl`/`mod`, Python classes and
//! TypeScript namespaces, one level) is walked for definitions; every identifier leaf
//! counts as a use.

use atto_syntax::tree_sitter::Node;

/// Longest symbol or identifier kept.
const MAX_NAME: usize = 80;

/// Files larger than this are not parsed (generated code, bundles).
pub(crate) const MAX_FILE_BYTES: u64 = 512 * 1024;

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
}

/// What the overview keeps of one file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct FileFacts {
    pub symbols: Vec<Symbol>,
    /// Distinct identifiers the file uses, sorted.
    pub uses: Vec<String>,
}

/// The symbols and uses of `text`; `None` when it cannot be parsed.
pub(crate) fn facts(text: &str, lang: Lang) -> Option<FileFacts> {
    let tree = atto_syntax::with_parser(lang, |p| p.parse(text, None))??;
    let root = tree.root_node();
    let mut symbols = Vec::new();
    definitions(root, text, lang, 0, &mut symbols);
    Some(FileFacts {
        symbols,
        uses: identifiers(root, text),
    })
}

fn text_of<'a>(node: Node<'_>, text: &'a str) -> &'a str {
    text.get(node.byte_range()).unwrap_or("")
}

fn field<'a>(node: Node<'_>, name: &str, text: &'a str) -> Option<&'a str> {
    node.child_by_field_name(name)
        .map(|n| text_of(n, text))
        .filter(|s| !s.is_empty() && s.len() <= MAX_NAME)
}

fn line(node: Node<'_>) -> u32 {
    u32::try_from(node.start_position().row + 1).unwrap_or(u32::MAX)
}

/// Collects the definitions in the body of `item`, a top-level `impl`, `mod`, class or
/// namespace: one level down, no further.
fn members(item: Node<'_>, text: &str, lang: Lang, depth: usize, out: &mut Vec<Symbol>) {
    if depth == 0
        && let Some(body) = item.child_by_field_name("body")
    {
        definitions(body, text, lang, depth + 1, out);
    }
}

/// Collects the definitions among `node`'s children; `depth` bounds nesting.
fn definitions(node: Node<'_>, text: &str, lang: Lang, depth: usize, out: &mut Vec<Symbol>) {
    let mut cursor = node.walk();
    for child in node.named_children(&mut cursor) {
        let mut push = |kind: &str, name: String| {
            out.push(Symbol {
                kind: kind.to_owned(),
                name,
                line: line(child),
            });
        };
        let name = |f: &str| field(child, f, text).map(str::to_owned);
        match (lang, child.kind()) {
            (Lang::Rust, k) => {
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
                        push("impl", name);
                        members(child, text, lang, depth, out);
                        continue;
                    }
                    _ => continue,
                };
                if let Some(n) = name("name") {
                    push(kind, n);
                }
                if k == "mod_item" {
                    members(child, text, lang, depth, out);
                }
            }
            (Lang::Python, "function_definition") => {
                if let Some(n) = name("name") {
                    push("def", n);
                }
            }
            (Lang::Python, "class_definition") => {
                if let Some(n) = name("name") {
                    push("class", n);
                }
                members(child, text, lang, depth, out);
            }
            // Its children are the decorators and the definition itself.
            (Lang::Python, "decorated_definition") => definitions(child, text, lang, depth, out),
            (Lang::JavaScript | Lang::TypeScript | Lang::Tsx, k) => {
                let kind = match k {
                    "function_declaration"
                    | "generator_function_declaration"
                    | "function_signature" => "function",
                    "class_declaration" | "abstract_class_declaration" => "class",
                    "interface_declaration" => "interface",
                    "type_alias_declaration" => "type",
                    "enum_declaration" => "enum",
                    "method_definition" if depth > 0 => "method",
                    "internal_module" | "module" => "namespace",
                    "lexical_declaration" | "variable_declaration" if depth == 0 => {
                        let mut c = child.walk();
                        for decl in child.named_children(&mut c) {
                            if decl.kind() == "variable_declarator"
                                && let Some(n) = field(decl, "name", text)
                            {
                                push("const", n.to_owned());
                            }
                        }
                        continue;
                    }
                    "export_statement" | "ambient_declaration" => {
                        definitions(child, text, lang, depth, out);
                        continue;
                    }
                    _ => continue,
                };
                if let Some(n) = name("name") {
                    push(kind, n);
                }
                if matches!(kind, "class" | "namespace") {
                    members(child, text, lang, depth, out);
                }
            }
            (Lang::Go, "function_declaration") => {
                if let Some(n) = name("name") {
                    push("func", n);
                }
            }
            (Lang::Go, "method_declaration") => {
                let receiver = child
                    .child_by_field_name("receiver")
                    .map(|r| receiver_type(r, text))
                    .unwrap_or_default();
                if let Some(n) = name("name") {
                    push("method", format!("{receiver}.{n}"));
                }
            }
            (Lang::Go, "type_declaration" | "const_declaration" | "var_declaration") => {
                let kind = match child.kind() {
                    "type_declaration" => "type",
                    "const_declaration" => "const",
                    _ => "var",
                };
                let mut c = child.walk();
                for spec in child.named_children(&mut c) {
                    if let Some(n) = field(spec, "name", text) {
                        push(kind, n.to_owned());
                    }
                }
            }
            _ => {}
        }
    }
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

/// Distinct identifier leaves of the tree, sorted.
fn identifiers(root: Node<'_>, text: &str) -> Vec<String> {
    let mut seen = std::collections::BTreeSet::new();
    let mut cursor = root.walk();
    let mut descending = true;
    loop {
        if descending {
            let node = cursor.node();
            if node.child_count() == 0 {
                if node.kind().ends_with("identifier") {
                    let name = text_of(node, text);
                    if name.len() >= 2 && name.len() <= MAX_NAME && !seen.contains(name) {
                        seen.insert(name.to_owned());
                    }
                }
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
    seen.into_iter().collect()
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
