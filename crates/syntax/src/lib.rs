//! The source languages atto reads with tree-sitter (the codebase overview's map, the
//! quality pipeline's symbol checks, the swarm's task enrichment), told apart by file
//! extension, and one parser per language and thread, reused across calls. What a caller
//! reads from the tree is its own business.

use std::cell::RefCell;

pub use tree_sitter;
use tree_sitter::Parser;

/// A language atto parses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Lang {
    /// `.rs`.
    Rust,
    /// `.py`, `.pyi`.
    Python,
    /// `.js`, `.jsx`, `.mjs`, `.cjs`.
    JavaScript,
    /// `.ts`, `.mts`, `.cts`.
    TypeScript,
    /// `.tsx`.
    Tsx,
    /// `.go`.
    Go,
}

/// How many languages there are (one parser slot each).
const LANGS: usize = 6;

impl Lang {
    /// The language of a path by its file name's extension, in any case; `None` for a
    /// name without one (a dotfile such as `.py` has none).
    pub fn of(path: &str) -> Option<Lang> {
        let name = path.rsplit(['/', '\\']).next()?;
        let (stem, ext) = name.rsplit_once('.')?;
        if stem.is_empty() {
            return None;
        }
        Some(match ext.to_ascii_lowercase().as_str() {
            "rs" => Lang::Rust,
            "py" | "pyi" => Lang::Python,
            "js" | "jsx" | "mjs" | "cjs" => Lang::JavaScript,
            "ts" | "mts" | "cts" => Lang::TypeScript,
            "tsx" => Lang::Tsx,
            "go" => Lang::Go,
            _ => return None,
        })
    }

    fn language(self) -> tree_sitter::Language {
        match self {
            Lang::Rust => tree_sitter_rust::LANGUAGE.into(),
            Lang::Python => tree_sitter_python::LANGUAGE.into(),
            Lang::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Lang::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Lang::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Lang::Go => tree_sitter_go::LANGUAGE.into(),
        }
    }
}

thread_local! {
    /// One parser per language and thread, made at its first use.
    static PARSERS: RefCell<[Option<Parser>; LANGS]> = const { RefCell::new([const { None }; LANGS]) };
}

/// Runs `f` with this thread's parser for `lang`; `None` when the grammar cannot be loaded,
/// or when called from inside `f` (the parser is in use).
pub fn with_parser<R>(lang: Lang, f: impl FnOnce(&mut Parser) -> R) -> Option<R> {
    PARSERS.with(|cell| {
        let mut parsers = cell.try_borrow_mut().ok()?;
        let slot = &mut parsers[lang as usize];
        if slot.is_none() {
            let mut parser = Parser::new();
            parser.set_language(&lang.language()).ok()?;
            *slot = Some(parser);
        }
        slot.as_mut().map(f)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn languages_by_extension_in_any_case() {
        assert_eq!(Lang::of("src/lib.rs"), Some(Lang::Rust));
        assert_eq!(Lang::of("pkg/Mod.PY"), Some(Lang::Python));
        assert_eq!(Lang::of("web\\app.tsx"), Some(Lang::Tsx));
        assert_eq!(Lang::of("types.d.ts"), Some(Lang::TypeScript));
        assert_eq!(Lang::of("cmd/main.go"), Some(Lang::Go));
        assert_eq!(Lang::of(".py"), None, "a dotfile has no extension");
        assert_eq!(Lang::of("dir.rs/README"), None);
        assert_eq!(Lang::of("notes.txt"), None);
    }

    #[test]
    fn every_language_parses_and_a_parser_is_not_lent_twice() {
        for (lang, text) in [
            (Lang::Rust, "fn main() {}"),
            (Lang::Python, "def f(): pass"),
            (Lang::JavaScript, "function f() {}"),
            (Lang::TypeScript, "let x: number = 1;"),
            (Lang::Tsx, "const a = <div/>;"),
            (Lang::Go, "package main"),
        ] {
            let tree = with_parser(lang, |p| p.parse(text, None))
                .flatten()
                .unwrap();
            assert!(!tree.root_node().has_error(), "{lang:?}");
            let nested = with_parser(lang, |_| with_parser(lang, |_| ()));
            assert_eq!(nested, Some(None), "{lang:?}");
        }
    }
}
