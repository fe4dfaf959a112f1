//! The overview on real code nobody here wrote: a crate from the cargo registry cache
//! (Rust), tree-sitter-javascript's grammar (JavaScript), the `six` sdist (Python, fetched
//! by `scripts/test.sh` with pip) and `mitt`'s declarations (TypeScript, fetched with npm);
//! Go from a snippet in `parse`. And the index's reuse of what did not change.

use std::path::{Path, PathBuf};

use tokio_util::sync::CancellationToken;

use super::index;
use super::parse::{Lang, facts};

/// `CARGO_HOME/registry/src/*/<prefix>*`, the newest version found.
fn registry_crate(prefix: &str) -> Option<PathBuf> {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))?;
    let mut found = Vec::new();
    for registry in std::fs::read_dir(home.join("registry/src")).ok()?.flatten() {
        for entry in std::fs::read_dir(registry.path()).ok()?.flatten() {
            if entry.file_name().to_string_lossy().starts_with(prefix) {
                found.push(entry.path());
            }
        }
    }
    found.sort();
    found.pop()
}

/// A file fetched by `scripts/test.sh` under the workspace's `target/peers/`.
fn peer(rel: &str) -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/peers");
    let path = root.join(rel);
    path.is_file().then_some(path)
}

/// Whether the test can go on; a missing input fails under CI and is reported elsewhere.
fn have(test: &str, path: Option<&PathBuf>, what: &str) -> bool {
    if path.is_some() {
        return true;
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "{test}: {what} is missing (scripts/test.sh fetches it)"
    );
    atto_testkit::skipped(test, &format!("{what} is missing; run scripts/test.sh"));
    false
}

/// The symbols of `text` as `kind name:line`.
pub(super) fn names(text: &str, lang: Lang) -> Vec<String> {
    facts(text, lang)
        .unwrap()
        .symbols
        .into_iter()
        .map(|s| format!("{} {}:{}", s.kind, s.name, s.line))
        .collect()
}

fn symbols(path: &Path, lang: Lang) -> Vec<String> {
    names(&std::fs::read_to_string(path).unwrap(), lang)
}

#[test]
fn rust_symbols_of_a_registry_crate() {
    let test = "rust_symbols_of_a_registry_crate";
    let krate = registry_crate("similar-2.");
    if !have(test, krate.as_ref(), "the similar crate's source") {
        return;
    }
    let krate = krate.unwrap();
    let types = symbols(&krate.join("src/types.rs"), Lang::Rust);
    for want in [
        "enum Algorithm:",
        "enum ChangeTag:",
        "struct Change:",
        "enum DiffOp:",
    ] {
        assert!(
            types.iter().any(|s| s.starts_with(want)),
            "{want}: {types:?}"
        );
    }
    assert!(
        types
            .iter()
            .any(|s| s.starts_with("impl impl fmt::Display for ChangeTag")
                || s.starts_with("impl impl Display for ChangeTag")
                || s.contains("for ChangeTag")),
        "{types:?}"
    );
    let common = symbols(&krate.join("src/common.rs"), Lang::Rust);
    assert!(
        common.contains(&"fn capture_diff:13".to_owned()),
        "{common:?}"
    );
    // The whole crate as a map: within every budget, the most used types first.
    let cancel = CancellationToken::new();
    for budget in [1_000, 3_000, 8_000] {
        let map = super::overview(&krate, "", budget, "", None, &cancel).unwrap();
        assert!(map.len() <= budget, "{budget}: {}", map.len());
        assert!(map.contains("src/types.rs"), "{map}");
    }
}

#[test]
fn javascript_symbols_of_a_grammar() {
    let test = "javascript_symbols_of_a_grammar";
    let krate = registry_crate("tree-sitter-javascript-0.");
    if !have(test, krate.as_ref(), "tree-sitter-javascript's source") {
        return;
    }
    let found = symbols(&krate.unwrap().join("grammar.js"), Lang::JavaScript);
    for want in ["function commaSep1:", "function commaSep:"] {
        assert!(
            found.iter().any(|s| s.starts_with(want)),
            "{want}: {found:?}"
        );
    }
}

#[test]
fn python_symbols_of_an_sdist() {
    let test = "python_symbols_of_an_sdist";
    let six = peer("six-1.16.0/six.py");
    if !have(test, six.as_ref(), "the six sdist") {
        return;
    }
    let found = symbols(&six.unwrap(), Lang::Python);
    for want in [
        "def _add_doc:80",
        "class _LazyDescr:91",
        "class MovedModule:108",
        "def with_metaclass:",
        "def add_metaclass:",
    ] {
        assert!(
            found.iter().any(|s| s.starts_with(want)),
            "{want}: {found:?}"
        );
    }
    // Methods of a class are one level in, decorated functions are found.
    assert!(
        found.iter().any(|s| s.starts_with("def __get__:")),
        "{found:?}"
    );
}

#[test]
fn typescript_symbols_of_an_npm_package() {
    let test = "typescript_symbols_of_an_npm_package";
    let dts = peer("mitt/package/index.d.ts");
    if !have(test, dts.as_ref(), "the mitt package") {
        return;
    }
    let found = symbols(&dts.unwrap(), Lang::TypeScript);
    assert_eq!(
        found,
        [
            "type EventType:1",
            "type Handler:2",
            "type WildcardHandler:3",
            "type EventHandlerList:4",
            "type WildCardEventHandlerList:5",
            "type EventHandlerMap:6",
            "interface Emitter:7",
            "function mitt:21",
        ]
    );
}

#[test]
fn a_second_build_parses_nothing_and_a_change_parses_one_file() {
    let dir = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    for i in 0..20 {
        std::fs::write(
            root.join(format!("m{i}.py")),
            format!("def f{i}():\n    pass\n"),
        )
        .unwrap();
    }
    std::fs::write(root.join("main.go"), "package main\nfunc main() {}\n").unwrap();
    let cancel = CancellationToken::new();
    let (_, first) = index::build(&root, Some(cache.path()), &cancel).unwrap();
    assert_eq!((first.files, first.parsed), (21, 21));
    let (_, second) = index::build(&root, Some(cache.path()), &cancel).unwrap();
    assert_eq!((second.files, second.parsed), (21, 0));
    // A new process (no index in memory) reads the disk cache and parses nothing.
    index::forget_all();
    let (_, fresh) = index::build(&root, Some(cache.path()), &cancel).unwrap();
    assert_eq!((fresh.files, fresh.parsed), (21, 0));
    std::fs::write(root.join("m3.py"), "def changed():\n    pass\n").unwrap();
    let (index, third) = index::build(&root, Some(cache.path()), &cancel).unwrap();
    assert_eq!(third.parsed, 1);
    assert_eq!(index["m3.py"].facts.symbols[0].name, "changed");
    assert!(std::fs::read_dir(cache.path()).unwrap().count() == 1);
}

/// Writes `files` (relative path, text) under a new temporary directory.
fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (rel, text) in files {
        let path = dir.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

/// The files of a map, in its order.
fn files_of(map: &str) -> Vec<&str> {
    map.lines()
        .filter(|l| !l.starts_with(' ') && !l.starts_with('(') && !l.starts_with("Repository"))
        .map(|l| l.split(' ').next().unwrap_or(l))
        .collect()
}

/// A runtime crate in the manner of a real one: every file names `std`, `Result` and `cfg`,
/// which a private shim module and a type alias also define; the crate root re-exports its
/// API through `pub mod` and `pub use`, partly inside `cfg_*!` macros.
fn runtime_crate() -> tempfile::TempDir {
    let mut files: Vec<(String, String)> = vec![
        (
            "src/lib.rs".into(),
            "//! A runtime.\nmacro_rules! cfg_rt { ($($i:item)*) => { $($i)* } }\npub mod sync;\ncfg_rt! {\n    pub mod task;\n    pub use task::spawn;\n}\nmod loom;\nmod util;\n".into(),
        ),
        (
            "src/sync/mod.rs".into(),
            "//! Synchronisation.\nmod mutex;\npub use mutex::{Mutex, MutexGuard};\npub mod oneshot;\n".into(),
        ),
        (
            "src/sync/mutex.rs".into(),
            "use crate::loom::std;\n/// An async mutex.\npub struct Mutex<T> { v: std::cell::UnsafeCell<T> }\n/// Its guard.\npub struct MutexGuard<'a, T> { m: &'a Mutex<T> }\nimpl<T> Mutex<T> {\n    /// A new one.\n    pub fn new(v: T) -> Self { todo!() }\n}\n".into(),
        ),
        (
            "src/sync/oneshot.rs".into(),
            "/// A one-shot channel.\npub fn channel<T>() -> (Sender<T>, Receiver<T>) { todo!() }\npub struct Sender<T>(T);\npub struct Receiver<T>(T);\n".into(),
        ),
        (
            "src/task/mod.rs".into(),
            "mod spawn;\npub use spawn::spawn;\n".into(),
        ),
        (
            "src/task/spawn.rs".into(),
            "cfg_rt! {\n    /// Spawns a task.\n    pub fn spawn<F>(f: F) -> JoinHandle<F> { todo!() }\n}\n".into(),
        ),
        (
            "src/loom/std/mod.rs".into(),
            "pub(crate) mod std { pub(crate) use ::std::*; }\npub(crate) type Result<T> = ::std::result::Result<T, ()>;\nmacro_rules! cfg { () => {} }\n".into(),
        ),
        (
            "src/util/rand.rs".into(),
            "pub(crate) type Result<T> = std::result::Result<T, u8>;\npub(crate) fn fastrand() -> u32 { 4 }\n".into(),
        ),
        (
            "tests/mutex.rs".into(),
            "use rt::sync::Mutex;\n#[test]\nfn locks() { let m = Mutex::new(1); }\n#[test]\nfn from_raw() {}\nmod a { fn from_raw() {} }\n".into(),
        ),
    ];
    for i in 0..30 {
        files.push((
            format!("src/util/internal{i}.rs"),
            format!(
                "use std::fmt;\n#[cfg(test)]\nmod t {{}}\npub(crate) fn helper{i}() -> Result<(), fmt::Error> {{ let _ = std::mem::size_of::<u8>(); Ok(()) }}\n"
            ),
        ));
    }
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    tree(&refs)
}

#[test]
fn the_public_surface_leads_not_the_names_every_file_uses() {
    let dir = runtime_crate();
    let root = dir.path().canonicalize().unwrap();
    let map = super::overview(&root, "", 8_000, "", None, &CancellationToken::new()).unwrap();
    let order = files_of(&map);
    let surface = [
        "src/sync/mutex.rs",
        "src/sync/oneshot.rs",
        "src/task/spawn.rs",
    ];
    for want in surface {
        let at = order.iter().position(|f| *f == want);
        assert!(
            at.is_some_and(|at| at < 6),
            "{want} not among the first: {map}"
        );
    }
    let shim = order.iter().position(|f| *f == "src/loom/std/mod.rs");
    assert!(
        shim.is_none_or(|s| s > 5),
        "the std shim ranks among the first: {map}"
    );
    // Tests rank below the library; a name repeated in a file is shown once.
    let test = order.iter().position(|f| *f == "tests/mutex.rs").unwrap();
    let helper = order.iter().position(|f| *f == "src/util/rand.rs").unwrap();
    assert!(test > helper, "{map}");
    assert_eq!(map.matches("from_raw").count(), 1, "{map}");
}

/// The index of a tree written from `files`, kept in memory only.
fn indexed(files: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf, std::sync::Arc<index::Index>) {
    let dir = tree(files);
    let root = dir.path().canonicalize().unwrap();
    let (index, _) = index::build(&root, None, &CancellationToken::new()).unwrap();
    (dir, root, index)
}

/// `count` files that each use `name` and define one helper of their own.
fn users(
    dir: &str,
    ext: &str,
    count: usize,
    body: impl Fn(usize) -> String,
) -> Vec<(String, String)> {
    (0..count)
        .map(|i| (format!("{dir}/user{i}.{ext}"), body(i)))
        .collect()
}

fn as_refs(files: &[(String, String)]) -> Vec<(&str, &str)> {
    files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect()
}

#[test]
fn a_python_package_surface_is_what_its_init_imports_and_lists_in_all() {
    let mut files: Vec<(String, String)> = vec![
        (
            "pkg/__init__.py".into(),
            "\"\"\"A client library: see `Client`.\"\"\"\nfrom ._client import *\nfrom ._models import Response, _Hidden\n__all__ = [\"Client\", \"Response\"]\n".into(),
        ),
        (
            "pkg/_client.py".into(),
            "__all__ = [\"Client\"]\nclass Client:\n    \"\"\"Sends requests.\"\"\"\n    def get(self):\n        return helper()\n".into(),
        ),
        (
            "pkg/_models.py".into(),
            "class Response:\n    pass\nclass _Hidden:\n    pass\n".into(),
        ),
        (
            "pkg/_utils.py".into(),
            "def helper():\n    return 1\n".into(),
        ),
    ];
    files.extend(users("pkg/internal", "py", 12, |i| {
        format!("from .._utils import helper\ndef own{i}():\n    return helper()\n")
    }));
    let (_dir, root, index) = indexed(&as_refs(&files));
    let surface = super::surface::surface(&index);
    assert!(surface["pkg/_client.py"].contains("Client"), "{surface:?}");
    assert!(
        surface["pkg/_models.py"].contains("Response"),
        "{surface:?}"
    );
    // Imported by the root but not listed in `__all__`: not the surface.
    assert!(
        !surface["pkg/_models.py"].contains("_Hidden"),
        "{surface:?}"
    );
    assert!(!surface.contains_key("pkg/_utils.py"), "{surface:?}");
    let map = super::overview(&root, "", 8_000, "", None, &CancellationToken::new()).unwrap();
    let order = files_of(&map);
    let at = |f: &str| order.iter().position(|x| *x == f).unwrap();
    assert!(at("pkg/_client.py") < at("pkg/_utils.py"), "{map}");
    assert!(at("pkg/_models.py") < at("pkg/_utils.py"), "{map}");
}

#[test]
fn a_typescript_package_surface_follows_its_index_re_exports_and_not_compiled_copies() {
    let mut files: Vec<(String, String)> = vec![
        (
            "src/index.ts".into(),
            "import * as z from \"./external.js\";\nexport * from \"./external.js\";\nexport { z };\n".into(),
        ),
        (
            "src/external.ts".into(),
            "export * from \"./schemas.js\";\nexport { parse } from \"./parse.js\";\n".into(),
        ),
        (
            "src/schemas.ts".into(),
            "/** A string schema. */\nexport function string() { return 1; }\n".into(),
        ),
        (
            "src/parse.ts".into(),
            "export function parse() { return 2; }\nfunction inner() {}\n".into(),
        ),
        (
            "src/util.ts".into(),
            "export function assertNever() {}\n".into(),
        ),
        // The compiled copies a package ships beside its source.
        (
            "schemas.js".into(),
            "export function string() { return 1; }\n".into(),
        ),
        (
            "schemas.d.ts".into(),
            "export declare function string(): number;\n".into(),
        ),
    ];
    files.extend(users("src/internal", "ts", 12, |i| {
        format!("import {{ assertNever }} from \"../util.js\";\nexport function own{i}() {{ assertNever(); }}\n")
    }));
    let (_dir, root, index) = indexed(&as_refs(&files));
    let surface = super::surface::surface(&index);
    for want in [
        "src/index.ts",
        "src/external.ts",
        "src/schemas.ts",
        "src/parse.ts",
    ] {
        assert!(surface.contains_key(want), "{want}: {surface:?}");
    }
    assert!(surface["src/parse.ts"].contains("parse"), "{surface:?}");
    assert!(!surface.contains_key("src/util.ts"), "{surface:?}");
    let map = super::overview(&root, "", 8_000, "", None, &CancellationToken::new()).unwrap();
    let order = files_of(&map);
    let at = |f: &str| order.iter().position(|x| *x == f).unwrap();
    assert!(at("src/schemas.ts") < at("src/util.ts"), "{map}");
    // The compiled copies rank below every source file.
    assert!(at("schemas.js") > at("src/internal/user11.ts"), "{map}");
    assert!(at("schemas.d.ts") > at("src/internal/user11.ts"), "{map}");
}

#[test]
fn a_focus_raises_the_files_it_names_and_their_neighbours() {
    let mut files: Vec<(String, String)> = vec![
        (
            "src/timer.rs".into(),
            "use crate::wheel::Wheel;\npub(crate) fn arm(w: &Wheel) {}\n".into(),
        ),
        ("src/wheel.rs".into(), "pub(crate) struct Wheel;\n".into()),
    ];
    files.extend(users("src/other", "rs", 20, |i| {
        format!("pub(crate) fn own{i}() {{}}\n")
    }));
    let (_dir, root, _index) = indexed(&as_refs(&files));
    let cancel = CancellationToken::new();
    let first_three = |focus: &str| -> Vec<String> {
        let map = super::overview(&root, "", 8_000, focus, None, &cancel).unwrap();
        files_of(&map)
            .into_iter()
            .take(3)
            .map(str::to_owned)
            .collect()
    };
    let plain = first_three("");
    assert!(!plain.contains(&"src/timer.rs".to_owned()), "{plain:?}");
    let focused = first_three("make the timers fire on time");
    assert_eq!(
        focused[..2],
        ["src/timer.rs", "src/wheel.rs"],
        "{focused:?}"
    );
    // A word that names many files raises none of them.
    let vague = first_three("fix the other code");
    assert_eq!(vague, plain);
}

/// The session's focus (the files it changed, a step's files) reaches the
/// tool through its context: a file the session edited and its neighbour lead the map
/// even when the model asks with no focus of its own.
#[tokio::test]
async fn the_files_the_session_changed_raise_their_area_without_a_focus_argument() {
    use crate::{Tool, ToolContext};
    let mut files: Vec<(String, String)> = vec![
        (
            "src/timer.rs".into(),
            "use crate::wheel::Wheel;\npub(crate) fn arm(w: &Wheel) {}\n".into(),
        ),
        ("src/wheel.rs".into(), "pub(crate) struct Wheel;\n".into()),
    ];
    files.extend(users("src/other", "rs", 20, |i| {
        format!("pub(crate) fn own{i}() {{}}\n")
    }));
    let dir = tree(&as_refs(&files));
    let root = dir.path().canonicalize().unwrap();
    let tool = super::CodebaseOverviewTool::default();
    let first_two = |focus: &str| {
        let mut ctx = ToolContext::new(root.clone());
        ctx.focus = focus.to_owned();
        let tool = &tool;
        async move {
            let out = tool.run(serde_json::json!({}), &ctx).await.unwrap();
            files_of(&out.content)
                .into_iter()
                .take(2)
                .map(str::to_owned)
                .collect::<Vec<_>>()
        }
    };
    let plain = first_two("").await;
    assert!(!plain.contains(&"src/timer.rs".to_owned()), "{plain:?}");
    let edited = first_two("src/timer.rs").await;
    assert_eq!(edited, ["src/timer.rs", "src/wheel.rs"], "{edited:?}");
}
