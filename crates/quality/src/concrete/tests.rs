use std::collections::BTreeMap;
use std::path::Path;

use super::*;
use crate::TaskKind;

fn task(description: &str) -> QualityTask {
    QualityTask {
        id: "t1".to_owned(),
        kind: TaskKind::Implement,
        description: description.to_owned(),
        ..QualityTask::default()
    }
}

fn write(root: &Path, rel: &str, content: impl AsRef<[u8]>) {
    let path = root.join(rel);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(path, content).unwrap();
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

fn before(items: &[(&str, &str)]) -> BTreeMap<String, String> {
    items
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn messages(findings: &[Finding]) -> Vec<&str> {
    findings.iter().map(|f| f.message.as_str()).collect()
}

#[test]
fn json_that_does_not_parse_is_a_finding_with_its_line() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "ok.json", r#"{"a": [1, 2], "b": {"c": null}}"#);
    write(dir.path(), "bad.json", "{\n  \"a\": 1,\n}\n");
    // tsconfig allows comments and trailing commas.
    write(
        dir.path(),
        "tsconfig.json",
        "{\n  // strict\n  \"compilerOptions\": {\"strict\": true, /* x */},\n}\n",
    );
    let found = check(
        &task("Update the config"),
        &strings(&["ok.json", "bad.json", "tsconfig.json"]),
        dir.path(),
        &BTreeMap::new(),
    );
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].file.as_deref(), Some("bad.json"));
    assert_eq!(found[0].line, Some(3));
    assert!(
        found[0].message.contains("not valid JSON"),
        "{}",
        found[0].message
    );
    assert_eq!(found[0].stage, Stage::Concrete);
}

#[test]
fn brackets_beyond_the_allowance_are_a_finding() {
    let dir = tempfile::tempdir().unwrap();
    // Four blocks left open: past the allowance of three.
    let cut_off = "export function a() {\n  if (x) {\n    for (;;) {\n      while (y) {\n";
    write(dir.path(), "src/cut.ts", cut_off);
    // Three open is tolerated; brackets in strings, comments, templates and regexes
    // do not count.
    let tolerated = "function b() {\n  if (x) {\n    for (;;) {\n";
    write(dir.path(), "src/three.js", tolerated);
    let noisy = "const s = '{{{{';\n// }}}}\n/* (((( */\nconst t = `${a} {{{{ ${b}`;\n\
                 const r = /[{(]+/g;\nconst q = \"[[[[\";\nfunction f(a) { return a / 2; }\n";
    write(dir.path(), "src/noisy.jsx", noisy);
    let python = "def f():\n    s = '((((('\n    t = \"\"\"\n    [[[[[[\n    \"\"\"\n    \
                  # {{{{{\n    return (1, [2], {3: 4})\n";
    write(dir.path(), "src/p.py", python);
    let open_py = "x = f(((((1)\n";
    write(dir.path(), "src/open.py", open_py);
    let found = check(
        &task("Refactor the loops"),
        &strings(&[
            "src/cut.ts",
            "src/three.js",
            "src/noisy.jsx",
            "src/p.py",
            "src/open.py",
        ]),
        dir.path(),
        &BTreeMap::new(),
    );
    let files: Vec<_> = found.iter().filter_map(|f| f.file.as_deref()).collect();
    assert_eq!(files, ["src/cut.ts", "src/open.py"], "{found:?}");
    assert!(
        found[0].message.contains("4 '{' but 0 '}'"),
        "{}",
        found[0].message
    );
    assert!(
        found[1].message.contains("5 '(' but 1 ')'"),
        "{}",
        found[1].message
    );
}

#[test]
fn bracket_counts_skip_strings_comments_templates_and_regexes() {
    // Text, dialect, then (opens, closes) of (), [] and {}.
    type Case<'a> = (&'a str, Dialect, [(usize, usize); 3]);
    let table: &[Case<'_>] = &[
        ("f(a[1], {b: 2})", Dialect::Script, [(1, 1), (1, 1), (1, 1)]),
        (
            "'(' + \"[\" // {\n",
            Dialect::Script,
            [(0, 0), (0, 0), (0, 0)],
        ),
        (
            "`a ${ {x: `${y}`}.x } b`",
            Dialect::Script,
            [(0, 0), (0, 0), (3, 3)],
        ),
        (
            "x = a / b / c; y = /\\(/.test(s)",
            Dialect::Script,
            [(1, 1), (0, 0), (0, 0)],
        ),
        ("return /[)]/", Dialect::Script, [(0, 0), (0, 0), (0, 0)]),
        (
            "'''(\n''' + \"[\" # {",
            Dialect::Python,
            [(0, 0), (0, 0), (0, 0)],
        ),
        (
            "f'{x}' + r'\\'' + g(1)",
            Dialect::Python,
            [(1, 1), (0, 0), (0, 0)],
        ),
        (
            "s = 'unterminated (\nx = [1]",
            Dialect::Python,
            [(0, 0), (1, 1), (0, 0)],
        ),
    ];
    for (text, dialect, want) in table {
        let got = count_brackets(text, *dialect);
        let got: Vec<(usize, usize)> = got.iter().map(|c| (c.opens, c.closes)).collect();
        assert_eq!(got, want.to_vec(), "{text}");
    }
}

#[test]
fn a_removed_function_is_found_through_before() {
    let dir = tempfile::tempdir().unwrap();
    let old = "import re\n\nPATTERN = re.compile('x')\n\ndef parse(s):\n    return s\n\n\
               def render(s):\n    return s\n\nclass Cache:\n    def get(self, k):\n        \
               return k\n\n    def put(self, k, v):\n        pass\n";
    let new = "import re\n\nPATTERN = re.compile('x')\n\ndef parse(s):\n    return s.strip()\n\n\
               class Cache:\n    def get(self, k):\n        return k\n";
    write(dir.path(), "src/util.py", new);
    let found = check(
        &task("Fix `parse` so it strips whitespace"),
        &strings(&["src/util.py"]),
        dir.path(),
        &before(&[("src/util.py", old)]),
    );
    let got = messages(&found);
    assert_eq!(got.len(), 2, "{got:?}");
    assert!(
        got[0].contains("src/util.py") && got[0].contains("method `Cache.put`"),
        "{got:?}"
    );
    assert!(got[1].contains("function `render`"), "{got:?}");
    assert!(
        found
            .iter()
            .all(|f| f.file.as_deref() == Some("src/util.py"))
    );
}

#[test]
fn removals_the_task_asks_for_are_not_findings() {
    let dir = tempfile::tempdir().unwrap();
    let old = "def keep():\n    pass\n\ndef old_api():\n    pass\n";
    write(dir.path(), "a.py", "def keep():\n    pass\n");
    let modified = strings(&["a.py"]);
    let was = before(&[("a.py", old)]);
    for description in [
        "Remove the deprecated `old_api` function",
        "Delete old_api() from a.py",
    ] {
        let found = check(&task(description), &modified, dir.path(), &was);
        assert_eq!(messages(&found), Vec::<&str>::new(), "{description}");
    }
}

#[test]
fn a_renamed_symbol_the_task_names_is_found() {
    let dir = tempfile::tempdir().unwrap();
    let old = "def load_config(p):\n    pass\n\ndef _unused():\n    pass\n";
    // The worker renamed the function the task named and dropped the dead helper.
    write(dir.path(), "cfg.py", "def load_cfg(p):\n    pass\n");
    let modified = strings(&["cfg.py"]);
    let was = before(&[("cfg.py", old)]);
    // A cleanup that does not name what to remove: only the named symbol must stay.
    let found = check(
        &task("Remove dead code from cfg.py; keep `load_config` working"),
        &modified,
        dir.path(),
        &was,
    );
    let got = messages(&found);
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(
        got[0].contains("`load_config`") && got[0].contains("cfg.py"),
        "{got:?}"
    );
    // A rename the task asks for: the old name may go, the new one must exist.
    write(
        dir.path(),
        "cfg.py",
        "def load_cfg(p):\n    pass\n\ndef _unused():\n    pass\n",
    );
    let rename = task("Rename `load_config` to `read_config` in cfg.py");
    let found = check(&rename, &modified, dir.path(), &was);
    let got = messages(&found);
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(
        got[0].contains("`read_config`, which the task asks for"),
        "{got:?}"
    );
    write(
        dir.path(),
        "cfg.py",
        "def read_config(p):\n    pass\n\ndef _unused():\n    pass\n",
    );
    assert_eq!(check(&rename, &modified, dir.path(), &was), Vec::new());
}

#[test]
fn a_symbol_the_task_asks_for_must_be_defined() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "src/user.py",
        "class User:\n    def check_email(self):\n        pass\n",
    );
    let mut t = task("Add validate_email() to the User class in src/user.py");
    t.target_files = strings(&["src/user.py"]);
    let modified = strings(&["src/user.py"]);
    let found = check(&t, &modified, dir.path(), &BTreeMap::new());
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].file.as_deref(), Some("src/user.py"));
    assert!(found[0].message.contains("`validate_email`"), "{found:?}");
    // A method of that name counts.
    write(
        dir.path(),
        "src/user.py",
        "class User:\n    def validate_email(self):\n        pass\n",
    );
    assert_eq!(
        check(&t, &modified, dir.path(), &BTreeMap::new()),
        Vec::new()
    );
    // A name that may be a field is not required to be a symbol.
    let field = task("Add `timeout` to the settings in src/user.py");
    assert_eq!(
        check(&field, &modified, dir.path(), &BTreeMap::new()),
        Vec::new()
    );
    // With a Go file changed too, the symbol may live there: no claim.
    write(dir.path(), "main.go", "package main\n");
    let both = strings(&["src/user.py", "main.go"]);
    let go = task("Add `sanitize()` to the service");
    assert_eq!(check(&go, &both, dir.path(), &BTreeMap::new()), Vec::new());
}

#[test]
fn a_symbol_moved_to_another_modified_file_is_not_removed() {
    let dir = tempfile::tempdir().unwrap();
    let old = "export function slugify(s: string) { return s; }\n\
               export class Router {\n  route() {}\n  mount() {}\n}\n";
    write(
        dir.path(),
        "src/router.ts",
        "export class Router {\n  route() {}\n}\n",
    );
    write(
        dir.path(),
        "src/text.ts",
        "export const slugify = (s: string) => s;\n",
    );
    let found = check(
        &task("Move string helpers out of the router"),
        &strings(&["src/router.ts", "src/text.ts"]),
        dir.path(),
        &before(&[("src/router.ts", old)]),
    );
    let got = messages(&found);
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(got[0].contains("method `Router.mount`"), "{got:?}");
}

#[test]
fn removed_rust_and_tsx_symbols_are_found() {
    let dir = tempfile::tempdir().unwrap();
    let old_rs = "pub struct Cache;\nimpl Cache {\n    pub fn get(&self) {}\n    \
                  pub fn clear(&self) {}\n}\npub const LIMIT: usize = 3;\nfn helper() {}\n";
    write(
        dir.path(),
        "src/lib.rs",
        "pub struct Cache;\nimpl Cache {\n    pub fn get(&self) {}\n}\n\
         pub const LIMIT: usize = 4;\n",
    );
    let old_tsx = "export function App() { return <div/>; }\nexport type Props = {a: number};\n";
    write(
        dir.path(),
        "ui/App.tsx",
        "export function App() { return <p/>; }\n",
    );
    let found = check(
        &task("Tune the cache limit"),
        &strings(&["src/lib.rs", "ui/App.tsx"]),
        dir.path(),
        &before(&[("src/lib.rs", old_rs), ("ui/App.tsx", old_tsx)]),
    );
    let got = messages(&found);
    assert_eq!(got.len(), 3, "{got:?}");
    assert!(got[0].contains("method `Cache.clear`"), "{got:?}");
    assert!(got[1].contains("function `helper`"), "{got:?}");
    assert!(got[2].contains("type `Props`"), "{got:?}");
}

#[test]
fn binary_and_non_utf8_files_skip_the_text_checks() {
    let dir = tempfile::tempdir().unwrap();
    let mut binary = b"{{{{{{((((((\0\x01\x02".to_vec();
    binary.extend(std::iter::repeat_n(0xffu8, 4096));
    write(dir.path(), "data.py", &binary);
    write(dir.path(), "latin1.ts", b"const s = '\xe9';\n{{{{{{\n");
    write(dir.path(), "blob.json", &binary);
    let found = check(
        &task("Regenerate the fixtures"),
        &strings(&["data.py", "latin1.ts", "blob.json"]),
        dir.path(),
        &before(&[("data.py", "def f():\n    pass\n")]),
    );
    // The binary JSON is not JSON; the others are skipped without a finding.
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].file.as_deref(), Some("blob.json"));
}

#[cfg(unix)]
#[test]
fn a_symlink_out_of_the_workspace_is_reported_and_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    write(outside.path(), "secret.ts", "{{{{{{{{{{");
    std::fs::create_dir_all(outside.path().join("d")).unwrap();
    write(outside.path(), "d/x.json", "not json");
    std::os::unix::fs::symlink(outside.path().join("secret.ts"), dir.path().join("link.ts"))
        .unwrap();
    std::os::unix::fs::symlink(outside.path().join("d"), dir.path().join("dir")).unwrap();
    // A symlink that stays inside is read through.
    write(dir.path(), "real.json", "{}");
    std::os::unix::fs::symlink(dir.path().join("real.json"), dir.path().join("alias.json"))
        .unwrap();
    let found = check(
        &task("Update the files"),
        &strings(&[
            "link.ts",
            "dir/x.json",
            "alias.json",
            "../escape.py",
            "/etc/hostname",
        ]),
        dir.path(),
        &BTreeMap::new(),
    );
    let files: Vec<_> = found.iter().filter_map(|f| f.file.as_deref()).collect();
    assert_eq!(
        files,
        ["link.ts", "dir/x.json", "../escape.py", "/etc/hostname"],
        "{found:?}"
    );
    assert!(
        found
            .iter()
            .all(|f| f.message.contains("outside the workspace") && !f.message.contains("JSON")),
        "{found:?}"
    );
}

#[test]
fn missing_files_are_fine_only_when_the_task_deletes() {
    let dir = tempfile::tempdir().unwrap();
    let modified = strings(&["src/old.py"]);
    let found = check(
        &task("Fix the parser"),
        &modified,
        dir.path(),
        &BTreeMap::new(),
    );
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].message.contains("src/old.py is missing"),
        "{found:?}"
    );
    let found = check(
        &task("Delete the legacy parser in src/old.py"),
        &modified,
        dir.path(),
        &before(&[("src/old.py", "def legacy():\n    pass\n")]),
    );
    assert_eq!(found, Vec::new());
}

#[test]
fn empty_files_are_findings_except_package_markers() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "pkg/__init__.py", "");
    write(dir.path(), "pkg/core.py", "\n  \n");
    write(dir.path(), "pkg/gone.py", "");
    let found = check(
        &task("Create the package"),
        &strings(&[
            "pkg/__init__.py",
            "pkg/core.py",
            "pkg/gone.py",
            "pkg/core.py",
        ]),
        dir.path(),
        &BTreeMap::new(),
    );
    let files: Vec<_> = found.iter().filter_map(|f| f.file.as_deref()).collect();
    assert_eq!(files, ["pkg/core.py", "pkg/gone.py"], "{found:?}");
    assert!(found.iter().all(|f| f.message.contains("is empty")));
    // A package marker that had content and lost it is a finding.
    let found = check(
        &task("Create the package"),
        &strings(&["pkg/__init__.py"]),
        dir.path(),
        &before(&[("pkg/__init__.py", "from .core import run\n")]),
    );
    assert_eq!(found.len(), 1, "{found:?}");
}

#[test]
fn files_past_the_read_cap_get_only_the_existence_check() {
    let dir = tempfile::tempdir().unwrap();
    let big = "{".repeat(usize::try_from(MAX_READ).unwrap() + 10);
    write(dir.path(), "big.js", &big);
    write(dir.path(), "big.json", &big);
    let found = check(
        &task("Bundle"),
        &strings(&["big.js", "big.json"]),
        dir.path(),
        &before(&[("big.js", "function gone() {}\n")]),
    );
    assert_eq!(found, Vec::new());
}

#[test]
fn symbols_are_read_per_language() {
    let table: &[(&str, Lang, &[&str])] = &[
        (
            "import os\nX = 1\na, b = 1, 2\n@dec\ndef f():\n    def inner(): pass\n\
             class C:\n    y = 2\n    async def m(self): pass\n    @property\n    \
             def p(self): pass\ntype Alias = int\n",
            Lang::Python,
            &["Alias", "C", "C.m", "C.p", "X", "f"],
        ),
        (
            "export default function main() {}\nfunction* gen() {}\nconst a = 1, b = () => 2;\n\
             let {c} = o;\nexport class K { constructor() {} #priv() {} static s() {} }\n",
            Lang::JavaScript,
            &[
                "K",
                "K.#priv",
                "K.constructor",
                "K.s",
                "a",
                "b",
                "gen",
                "main",
            ],
        ),
        (
            "export interface I { x: number }\ntype T = string;\nenum E { A }\n\
             declare function d(): void;\nexport abstract class A { abstract m(): void; n() {} }\n\
             namespace N {}\n",
            Lang::TypeScript,
            &["A", "A.m", "A.n", "E", "I", "N", "T", "d"],
        ),
        (
            "export const App = () => <div>{x}</div>;\nfunction Row() { return <tr/>; }\n",
            Lang::Tsx,
            &["App", "Row"],
        ),
        (
            "pub fn f() {}\nstruct S;\nenum E {}\ntrait T { fn t(&self); }\n\
             impl<X> T for S<X> { fn t(&self) {} }\nimpl a::B { fn new() {} }\n\
             const C: u8 = 1;\nstatic ST: u8 = 1;\nmacro_rules! m { () => {} }\n\
             mod inner { pub fn g() {} }\n",
            Lang::Rust,
            &[
                "B.new", "C", "E", "S", "S.t", "ST", "T", "T.t", "f", "inner", "inner.g", "m",
            ],
        ),
    ];
    for (text, lang, want) in table {
        let got: Vec<String> = symbols_of(text, *lang)
            .unwrap()
            .into_iter()
            .map(|s| s.name)
            .collect();
        assert_eq!(got, want.to_vec(), "{lang:?}");
    }
}

#[test]
fn task_symbols_are_read_from_the_wording() {
    let read = |description: &str| {
        TaskSymbols::from_task(&QualityTask {
            description: description.to_owned(),
            ..QualityTask::default()
        })
    };
    let set = |items: &[&str]| -> std::collections::BTreeSet<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    };
    let t = read("Add validate_email(), validate_password() and a `Validator` class to user.py");
    assert_eq!(
        t.wanted,
        set(&["Validator", "validate_email", "validate_password"])
    );
    let t = read("Implement `retry()` using `time.sleep()` and call `os.path.join()`");
    assert_eq!(t.wanted, set(&["retry"]));
    assert_eq!(t.mentioned, set(&["join", "retry", "sleep"]));
    let t = read("Rename `load` to `read_config`. Remove `old_api`.");
    assert_eq!(t.removed, set(&["load", "old_api"]));
    assert_eq!(
        t.renamed,
        vec![("load".to_owned(), "read_config".to_owned())]
    );
    assert!(!t.removal_unspecified);
    let t = read("Remove dead code and fix `parse_header`");
    assert!(t.removal_unspecified);
    assert!(t.wanted.is_empty() && t.removed.is_empty());
    let t = read("Write tests for `parse` in tests/test_parse.py");
    assert!(t.wanted.is_empty(), "{t:?}");
    let t = QualityTask {
        description: "Improve validation".to_owned(),
        acceptance: vec!["user.py contains validate_email()".to_owned()],
        ..QualityTask::default()
    };
    assert_eq!(TaskSymbols::from_task(&t).wanted, set(&["validate_email"]));
}

#[test]
fn locate_tells_files_from_everything_else() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    write(&root, "a/b.txt", "x");
    assert!(matches!(
        locate(&root, "a/b.txt"),
        Located::File { len: 1, .. }
    ));
    assert!(matches!(
        locate(&root, "./a/../a/b.txt"),
        Located::File { .. }
    ));
    let absolute = root.join("a/b.txt");
    assert!(matches!(
        locate(&root, absolute.to_str().unwrap()),
        Located::File { .. }
    ));
    assert_eq!(locate(&root, "a"), Located::Dir);
    assert_eq!(locate(&root, "a/nope.txt"), Located::Missing);
    assert_eq!(locate(&root, "nope/nope.txt"), Located::Missing);
    assert_eq!(locate(&root, "../x"), Located::Outside);
    assert_eq!(locate(&root, "/etc/passwd"), Located::Outside);
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(root.join("gone"), root.join("dangling")).unwrap();
        assert_eq!(locate(&root, "dangling"), Located::BrokenLink);
    }
}

#[test]
fn only_the_changed_part_is_compared_but_the_whole_file_settles_it() {
    let dir = tempfile::tempdir().unwrap();
    // `f` is defined twice; the change removes the first definition only, and `g`
    // is removed though a caller still names it.
    let old = "def f():\n    return 1\n\ndef g():\n    return 2\n\ndef h():\n    return g()\n\n\
               def f():\n    return 3\n";
    let new = "def h():\n    return g()\n\ndef f():\n    return 3\n";
    write(dir.path(), "m.py", new);
    let found = check(
        &task("Tidy m.py"),
        &strings(&["m.py"]),
        dir.path(),
        &before(&[("m.py", old)]),
    );
    let got = messages(&found);
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(got[0].contains("function `g`"), "{got:?}");
}

#[test]
fn a_function_pushed_into_another_is_gone() {
    let dir = tempfile::tempdir().unwrap();
    let old = "export function a() {\n  return 1;\n}\n\nexport function b() {\n  return 2;\n}\n\n\
               export const c = 3;\n";
    // `b` now sits inside `a`: no longer a top-level symbol.
    let new = "export function a() {\n  return 1;\n\nfunction b() {\n  return 2;\n}\n}\n\n\
               export const c = 3;\n";
    write(dir.path(), "m.js", new);
    let found = check(
        &task("Tidy m.js"),
        &strings(&["m.js"]),
        dir.path(),
        &before(&[("m.js", old)]),
    );
    let got = messages(&found);
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(got[0].contains("function `b`"), "{got:?}");
}

#[test]
fn top_level_lines_are_declarations_outside_brackets_and_strings() {
    let py =
        "import os\n@dec\ndef a():\n    '''\ndef fake():\n'''\n    x = (\n1)\n# note\nelse_ = 1\n";
    let lines: Vec<&str> = scan(py, Dialect::Python)
        .top_level_lines
        .iter()
        .map(|at| py[*at..].lines().next().unwrap())
        .collect();
    assert_eq!(lines, ["import os", "@dec", "else_ = 1"]);
    let js =
        "const a = `\nconst b = 1`;\nfunction f() {\nconst c = 2;\n}\n// x\nexport class K {}\n";
    let lines: Vec<&str> = scan(js, Dialect::Script)
        .top_level_lines
        .iter()
        .map(|at| js[*at..].lines().next().unwrap())
        .collect();
    assert_eq!(
        lines,
        ["const a = `", "function f() {", "export class K {}"]
    );
}

#[test]
fn deep_nesting_is_walked_to_a_bound() {
    let depth = 10_000;
    let text = format!("{}{}", "mod a { ".repeat(depth), "}".repeat(depth));
    let symbols = symbols_of(&text, Lang::Rust).unwrap();
    // The top module and sixteen levels of members below it.
    assert_eq!(symbols.len(), 17);
}

#[test]
fn many_removed_symbols_are_reported_to_a_bound() {
    let dir = tempfile::tempdir().unwrap();
    let old: String = (0..150)
        .map(|i| format!("def f{i}():\n    pass\n\n"))
        .collect();
    write(dir.path(), "m.py", "X = 1\n");
    let found = check(
        &task("Tidy m.py"),
        &strings(&["m.py"]),
        dir.path(),
        &before(&[("m.py", &old)]),
    );
    assert_eq!(found.len(), 21, "{found:?}");
    assert_eq!(
        found[20].message,
        "… and at least 80 more symbol problems like these"
    );
}

#[tokio::test]
async fn the_pipeline_stops_at_pre_flight_then_at_the_concrete_checks() {
    let dir = tempfile::tempdir().unwrap();
    let old = "def parse(s):\n    return s\n\ndef render(s):\n    return s\n";
    write(
        dir.path(),
        "src/util.py",
        "def parse(s):\n    return s.strip()\n",
    );
    let modified = strings(&["src/util.py"]);
    let was = before(&[("src/util.py", old)]);
    let config = crate::QualityConfig {
        enable_verification: false,
        ..crate::QualityConfig::default()
    };
    let runner = crate::LocalRunner::new(dir.path().to_path_buf());
    let t = task("Fix `parse` so it strips whitespace");
    let mut result = crate::WorkerResult {
        text: "Changed src/util.py and checked README.md".to_owned(),
        ..crate::WorkerResult::default()
    };
    let assess = |result: crate::WorkerResult| {
        let (t, modified, was, config, runner, dir) = (&t, &modified, &was, &config, &runner, &dir);
        async move {
            crate::assess(&crate::Input {
                task: t,
                result: &result,
                modified,
                before: was,
                workspace: dir.path(),
                attempt: 1,
                progress: None,
                config,
                runner,
                judge: None,
            })
            .await
        }
    };
    // No tool calls: V7, score 0, before any file is looked at.
    let outcome = assess(result.clone()).await;
    assert_eq!(outcome.verdict, crate::Verdict::NeedsRetry);
    assert_eq!(outcome.score, Some(0));
    assert_eq!(outcome.findings[0].stage, Stage::Preflight);
    assert_eq!(outcome.findings[0].code.as_deref(), Some("V7"));
    assert_eq!(outcome.artifacts, ["src/util.py"]);
    // With tool calls: the removed function is the concrete finding, in the retry too.
    result.actions.push(crate::ToolAction {
        tool: "edit_file".to_owned(),
        ..crate::ToolAction::default()
    });
    let outcome = assess(result.clone()).await;
    assert_eq!(outcome.score, Some(1));
    assert_eq!(outcome.findings.len(), 1, "{:?}", outcome.findings);
    assert_eq!(outcome.findings[0].stage, Stage::Concrete);
    let retry = outcome.retry.unwrap();
    assert!(
        retry.previous_feedback.contains("function `render`"),
        "{}",
        retry.previous_feedback
    );
    // Restored: the checks pass and, with no judge, nothing scores it.
    write(
        dir.path(),
        "src/util.py",
        "def parse(s):\n    return s.strip()\n\ndef render(s):\n    return s\n",
    );
    let outcome = assess(result).await;
    assert_eq!(outcome.verdict, crate::Verdict::Pass);
    assert_eq!((outcome.score, outcome.findings.len()), (None, 0));
}
