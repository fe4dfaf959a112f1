//! The DEBUG-mode test whitelist: is a command line *only* a test run?
//!
//! The seeds allow `pytest`, `python -m pytest`, `npm test`, `npx jest`,
//! `cargo test`, `go test`, `make test`, `mypy`, `ruff check`,
//! `tsc --noEmit` and `eslint`. Judged with the same parser as `classify`:
//! every statement must be such a command (chained with `&&`, `||`, `;`), with
//! no expansion or substitution in it and no redirection that writes.
//! Deliberate tightenings: flags that rewrite files (`ruff check --fix`,
//! `eslint --fix`, `jest -u`) or run other programs (`go test -exec`) are not
//! test commands. A test command may be piped into read-only filters
//! (`cargo test 2>&1 | tail -20`): the filters must classify SAFE.

use tree_sitter::Node;

use super::command::normalize_program;
use super::defs::is_dangerous_var;
use super::words::{self, Word};
use super::{BashRisk, MAX_COMMAND_BYTES, block, classify, with_parser};

/// True when `command` only runs whitelisted test commands.
pub fn is_test_command(command: &str) -> bool {
    if command.len() > MAX_COMMAND_BYTES || command.contains('\0') || command.trim().is_empty() {
        return false;
    }
    let filters = with_parser(|parser| {
        let parsed = super::parse(parser, command)?;
        let root = parsed.tree.root_node();
        if root.has_error() {
            return None;
        }
        let mut filters = Vec::new();
        let mut tests = 0usize;
        statements(root, parsed.text.as_bytes(), &mut filters, &mut tests)?;
        (tests > 0).then_some(filters)
    });
    match filters.flatten() {
        Some(filters) => filters.iter().all(|f| classify(f).risk == BashRisk::Safe),
        None => false,
    }
}

/// Checks every statement under `node`; `None` as soon as one is not a test.
fn statements(
    node: Node<'_>,
    src: &[u8],
    filters: &mut Vec<String>,
    tests: &mut usize,
) -> Option<()> {
    let mut cursor = node.walk();
    let kids: Vec<Node<'_>> = node.children(&mut cursor).collect();
    for child in kids {
        match child.kind() {
            // A background job outlives the call that started it.
            "&" => return None,
            _ if !child.is_named() => {}
            "comment" => {}
            "list" => statements(child, src, filters, tests)?,
            "pipeline" => {
                let mut c = child.walk();
                let stages: Vec<Node<'_>> = child.named_children(&mut c).collect();
                let (first, rest) = stages.split_first()?;
                test_statement(*first, src)?;
                for s in rest {
                    filters.push(s.utf8_text(src).ok()?.to_string());
                }
                *tests += 1;
            }
            _ => {
                test_statement(child, src)?;
                *tests += 1;
            }
        }
    }
    Some(())
}

/// A test command, possibly with redirections that do not write files.
fn test_statement(node: Node<'_>, src: &[u8]) -> Option<()> {
    match node.kind() {
        "command" => test_command(node, src),
        "redirected_statement" => {
            let body = node.child_by_field_name("body")?;
            let mut cursor = node.walk();
            let redirects: Vec<Node<'_>> = node.named_children(&mut cursor).skip(1).collect();
            for r in redirects {
                harmless_redirect(r, src)?;
            }
            test_command(body, src)
        }
        _ => None,
    }
}

fn harmless_redirect(node: Node<'_>, src: &[u8]) -> Option<()> {
    if node.kind() != "file_redirect" {
        return None;
    }
    let mut cursor = node.walk();
    let op = node.children(&mut cursor).find(|c| !c.is_named())?.kind();
    let dest = node.child_by_field_name("destination")?;
    let w = words::eval(dest, src);
    if w.dynamic {
        return None;
    }
    if matches!(op, "<" | "<&") {
        return Some(());
    }
    block::redirect_risk(op, &w, Some(dest.kind()))
        .is_none()
        .then_some(())
}

fn test_command(node: Node<'_>, src: &[u8]) -> Option<()> {
    if node.kind() != "command" {
        return None;
    }
    let mut argv: Vec<Word> = Vec::new();
    let mut cursor = node.walk();
    let kids: Vec<(Option<&str>, Node<'_>)> = node
        .children(&mut cursor)
        .enumerate()
        .map(|(i, c)| (node.field_name_for_child(i as u32), c))
        .collect();
    for (field, child) in kids {
        match (field, child.kind()) {
            (_, "variable_assignment") => {
                let name = child.child_by_field_name("name")?.utf8_text(src).ok()?;
                let value = child
                    .child_by_field_name("value")
                    .map(|v| words::eval(v, src));
                if is_dangerous_var(name) || value.is_some_and(|v| v.dynamic) {
                    return None;
                }
            }
            (Some("name" | "argument"), _) => argv.push(words::eval(child, src)),
            (Some("redirect"), _) => harmless_redirect(child, src)?,
            _ => {}
        }
    }
    if argv.iter().any(|w| w.dynamic || w.glob) {
        return None;
    }
    let (prog, trusted) = normalize_program(&argv.first()?.text);
    if !trusted {
        return None;
    }
    let args: Vec<&str> = argv[1..].iter().map(|w| w.text.as_str()).collect();
    whitelisted(&prog, &args).then_some(())
}

fn whitelisted(prog: &str, args: &[&str]) -> bool {
    let has = |flags: &[&str]| {
        args.iter().any(|a| {
            flags
                .iter()
                .any(|f| a == f || (f.starts_with("--") && a.starts_with(&format!("{f}="))))
        })
    };
    match (prog, args) {
        ("pytest" | "py.test", _) => true,
        (p, ["-m", "pytest", ..]) if p.starts_with("python") => true,
        ("npm", ["test" | "t", ..]) => true,
        ("npx", ["jest", ..]) => !has(&["-u", "--updateSnapshot", "--ci=false"]),
        ("cargo", ["test", ..]) => true,
        ("go", ["test", ..]) => !has(&["-exec", "-toolexec", "-o"]),
        ("make", ["test", rest @ ..]) => rest.iter().all(|a| a.starts_with('-') || a.contains('=')),
        ("mypy", _) => true,
        ("ruff", ["check", ..]) => !has(&["--fix", "--unsafe-fixes", "--add-noqa"]),
        ("tsc", _) => has(&["--noEmit"]),
        ("eslint", _) => !has(&["--fix", "-o", "--output-file"]),
        _ => false,
    }
}
