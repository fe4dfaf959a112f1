//! The compilation checks through their front door, `compile::check`, on small real
//! projects written into temporary directories and checked by the real toolchains
//! (python3, node, tsc). A test whose tool is missing fails under CI and is skipped, with a
//! note in `ATTO_SKIP_LOG`, elsewhere.

#![expect(
    clippy::unwrap_used,
    reason = "the helpers set up the test's own files; a failure there fails the test"
)]

use std::path::Path;
use std::time::Duration;

use atto_quality::compile::check;
use atto_quality::{
    BoxFuture, CommandOutput, CommandRequest, CommandRunner, CompileError, LocalRunner, Severity,
};

/// A temporary workspace.
struct Project {
    dir: tempfile::TempDir,
}

impl Project {
    fn new() -> Project {
        Project {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    fn write(&self, name: &str, text: impl AsRef<[u8]>) -> &Project {
        let path = self.root().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
        self
    }

    async fn check(&self, files: &[&str]) -> Vec<CompileError> {
        let files: Vec<String> = files.iter().map(|f| (*f).to_owned()).collect();
        let runner = LocalRunner::new(self.root().to_path_buf());
        check(self.root(), &files, &runner).await
    }
}

/// Whether `tool` is on PATH; when it is not, the test fails under CI and is skipped (and
/// says so) elsewhere.
fn have(test: &str, tool: &str) -> bool {
    let found = std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|d| d.join(tool).is_file()));
    if !found {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "{test} needs {tool}, which CI must install (scripts/test.sh does)"
        );
        atto_testkit::skipped(
            &format!("quality compile::{test}"),
            &format!("{tool} is not installed"),
        );
    }
    found
}

fn texts(found: &[CompileError]) -> Vec<String> {
    found.iter().map(CompileError::line_text).collect()
}

#[tokio::test]
async fn a_python_indentation_error_is_reported_at_its_line() {
    if !have("a_python_indentation_error", "python3") {
        return;
    }
    let mut source: String = (1..=41).map(|i| format!("x{i} = {i}\n")).collect();
    source.push_str("    y = 42\n");
    let project = Project::new();
    project
        .write("src/models/user.py", &source)
        .write("src/models/ok.py", "def f():\n    return 1\n")
        .write("src/auth/middleware.py", "def f(:\n    pass\n")
        .write("src/auth/ret.py", "x = 1\nreturn x\n");
    let found = project
        .check(&[
            "src/auth/middleware.py",
            "src/models/user.py",
            "src/models/ok.py",
            "src/auth/ret.py",
        ])
        .await;
    assert_eq!(
        texts(&found),
        [
            "src/auth/middleware.py:1 — SyntaxError: invalid syntax",
            "src/models/user.py:42 — SyntaxError: unexpected indent",
            "src/auth/ret.py:2 — SyntaxError: 'return' outside function",
        ],
        "{found:#?}"
    );
    assert!(found.iter().all(|e| e.severity == Severity::Error));
}

#[tokio::test]
async fn an_unresolved_python_import_is_an_error_at_its_line() {
    if !have("an_unresolved_python_import", "python3") {
        return;
    }
    let project = Project::new();
    project.write("pkg/__init__.py", "").write(
        "pkg/app.py",
        "import os\n\
         import os.path\n\
         import no_such_module_atto\n\
         from pkg.nothing_here import thing\n\
         from .missing_sibling import x\n\
         import xml.etree.NoSuchTree\n\
         def f():\n    import another_missing_atto\n",
    );
    let found = project.check(&["pkg/app.py"]).await;
    assert_eq!(
        texts(&found),
        [
            "pkg/app.py:3 — ImportError: No module named 'no_such_module_atto'",
            "pkg/app.py:4 — ImportError: No module named 'pkg.nothing_here'",
            "pkg/app.py:5 — ImportError: No module named '.missing_sibling'",
            "pkg/app.py:6 — ImportError: No module named 'xml.etree.NoSuchTree'",
            "pkg/app.py:8 — ImportError: No module named 'another_missing_atto'",
        ],
        "{found:#?}"
    );
}

#[tokio::test]
async fn resolvable_and_optional_python_imports_pass_and_nothing_runs() {
    if !have("resolvable_python_imports", "python3") {
        return;
    }
    let project = Project::new();
    project
        // Were the checker to import these, the marker files would appear.
        .write("ast.py", "open('ran-ast', 'w').write('x')\n")
        .write("pkg/__init__.py", "open('ran-pkg', 'w').write('x')\n")
        .write("pkg/util.py", "def f():\n    return 1\n")
        .write("pkg/sub/__init__.py", "")
        .write("pkg/sub/deep.py", "X = 1\n")
        .write("ns/mod.py", "Y = 2\n")
        .write("scripts/helper.py", "Z = 3\n")
        .write("scripts/tool.py", "import helper\nprint(helper.Z)\n")
        .write("src/lib_in_src/__init__.py", "")
        .write(
            "pkg/main.py",
            "from __future__ import annotations\n\
             import json, sys\n\
             import os.path\n\
             import pkg.util\n\
             import pkg.sub.deep as deep\n\
             from pkg.util import f\n\
             from .util import f as g\n\
             from . import util\n\
             from .sub.deep import X\n\
             from .. import anything\n\
             import ns.mod\n\
             import lib_in_src\n\
             import ast\n\
             try:\n    import ujson_not_installed_atto as fast\n\
             except ImportError:\n    import json as fast\n\
             if sys.version_info < (3, 0):\n    import py2_only_atto\n",
        );
    let found = project.check(&["pkg/main.py", "scripts/tool.py"]).await;
    assert_eq!(texts(&found), Vec::<String>::new());
    assert!(
        !project.root().join("ran-ast").exists(),
        "the checker ran ast.py"
    );
    assert!(
        !project.root().join("ran-pkg").exists(),
        "the checker ran pkg/__init__.py"
    );
}

#[tokio::test]
async fn a_typescript_type_error_names_its_file_and_line() {
    if !have("a_typescript_type_error", "tsc") {
        return;
    }
    let project = Project::new();
    project
        .write("src/math.ts", "export function add(a: number, b: number): number {\n  return a + b;\n}\n")
        .write(
            "src/main.ts",
            "import { add } from './math';\n\nconst total: number = add(1, 2);\nconst name: number = 'atto';\nexport { total, name };\n",
        )
        .write("src/unchanged.ts", "const broken: string = 5;\nexport {};\n");
    let found = project.check(&["src/main.ts", "src/math.ts"]).await;
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].severity, Severity::Error);
    assert!(
        found[0].line_text().starts_with(
            "src/main.ts:4 — TS2322: Type 'string' is not assignable to type 'number'"
        ),
        "{found:#?}"
    );
    // No config of the run is left behind.
    let left: Vec<_> = std::fs::read_dir(project.root())
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with(".atto-tsc"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[tokio::test]
async fn typescript_is_checked_with_the_projects_own_settings() {
    if !have("typescript_with_project_settings", "tsc") {
        return;
    }
    // A Vite-style solution config: the settings (JSX, strictness) live in the member.
    let project = Project::new();
    project
        .write(
            "tsconfig.json",
            "{\n  // solution\n  \"files\": [],\n  \"references\": [{ \"path\": \"./tsconfig.app.json\" }]\n}\n",
        )
        .write(
            "tsconfig.app.json",
            r#"{"compilerOptions": {"jsx": "preserve", "strict": true, "noImplicitAny": false, "noUnusedLocals": true}, "include": ["src"]}"#,
        )
        .write(
            "src/App.tsx",
            "export function App(props) {\n  const unused = 1;\n  return <div>{props.title}</div>;\n}\n",
        );
    let found = project.check(&["src/App.tsx"]).await;
    assert_eq!(texts(&found).len(), 1, "{found:#?}");
    assert!(
        found[0]
            .line_text()
            .starts_with("src/App.tsx:2 — TS6133: 'unused' is declared"),
        "{found:#?}"
    );
}

#[tokio::test]
async fn javascript_syntax_errors_have_their_lines_in_both_module_kinds() {
    if !have("javascript_syntax_errors", "node") {
        return;
    }
    let project = Project::new();
    project
        .write("bad.js", "let a = 1;\nlet b = ;\n")
        .write("esm.js", "import fs from 'fs';\nexport const a = fs;\n")
        .write("bad.mjs", "import x from 'y';\n\nexport const a = ;\n")
        .write(
            "ok.mjs",
            "const m = await import('fs');\nexport default m;\n",
        )
        .write(
            "ok.cjs",
            "#!/usr/bin/env node\nconst r = require('fs');\nmodule.exports = r;\nreturn;\n",
        )
        .write("bad.cjs", "export const a = 1;\n")
        .write("module/package.json", r#"{"type": "module"}"#)
        .write(
            "module/bad.js",
            "export const a = 1;\nexport const a = 2;\n",
        );
    let found = project
        .check(&[
            "bad.js",
            "esm.js",
            "bad.mjs",
            "ok.mjs",
            "ok.cjs",
            "bad.cjs",
            "module/bad.js",
        ])
        .await;
    assert_eq!(
        texts(&found),
        [
            "bad.js:2 — SyntaxError: Unexpected token ';'",
            "bad.mjs:3 — SyntaxError: Unexpected token ';'",
            "bad.cjs:1 — SyntaxError: Unexpected token 'export'",
            "module/bad.js:2 — SyntaxError: Identifier 'a' has already been declared",
        ],
        "{found:#?}"
    );
}

#[tokio::test]
async fn jsx_is_judged_by_tsc() {
    if !have("jsx_is_judged_by_tsc", "node") || !have("jsx_is_judged_by_tsc", "tsc") {
        return;
    }
    let project = Project::new();
    project
        .write("src/Good.jsx", "export const Good = () => <div>hi</div>;\n")
        .write(
            "src/Bad.jsx",
            "export const Bad = () => (\n  <div>{</div>\n);\n",
        )
        .write(
            "src/component.js",
            "export default function A() {\n  return <p>ok</p>;\n}\n",
        )
        .write(
            "src/broken.js",
            "export default function B() {\n  return <p>ok</p>;\n}\n}\n",
        );
    let found = project
        .check(&[
            "src/Good.jsx",
            "src/Bad.jsx",
            "src/component.js",
            "src/broken.js",
        ])
        .await;
    assert_eq!(
        texts(&found),
        [
            "src/Bad.jsx:2 — TS1109: Expression expected.",
            "src/broken.js:4 — TS1128: Declaration or statement expected.",
        ],
        "{found:#?}"
    );
}

#[tokio::test]
async fn malformed_json_is_an_error_at_its_line() {
    let project = Project::new();
    project
        .write(
            "package.json",
            "{\n  \"name\": \"x\",\n  \"private\": true,\n}\n",
        )
        .write("data/ok.json", "[1, 2, 3]\n")
        .write(
            "tsconfig.json",
            "{\n  // comments are fine here\n  \"compilerOptions\": {},\n}\n",
        );
    let found = project
        .check(&["package.json", "data/ok.json", "tsconfig.json"])
        .await;
    assert_eq!(
        texts(&found),
        ["package.json:4 — invalid JSON: trailing comma (column 1)"],
        "{found:#?}"
    );
}

#[tokio::test]
async fn binary_outside_deleted_and_huge_files_are_handled_without_reading_them() {
    let project = Project::new();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.json"), "{ not json").unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("secret.json"),
        project.root().join("link.json"),
    )
    .unwrap();
    std::fs::create_dir_all(project.root().join("inner")).unwrap();
    project
        .write(
            "image.py",
            b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR".as_slice(),
        )
        .write(
            "big.json",
            format!("[{}0]", "1234567890,".repeat(1_000_000)),
        )
        .write("huge.py", "x = 1\n".repeat(500_000))
        .write("notes.txt", "not checked at all");
    let name = outside
        .path()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let escape = format!("inner/../../{name}/secret.json");
    let started = std::time::Instant::now();
    let found = project
        .check(&[
            "link.json",
            escape.as_str(),
            "image.py",
            "deleted.py",
            "big.json",
            "huge.py",
            "notes.txt",
        ])
        .await;
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert!(
        found.iter().all(|e| e.severity == Severity::Warning),
        "{found:#?}"
    );
    let said: Vec<(&str, bool)> = found
        .iter()
        .map(|e| (e.file.as_str(), e.message.starts_with("not checked")))
        .collect();
    assert_eq!(
        said,
        [
            ("link.json", true),
            (escape.as_str(), true),
            ("image.py", true),
            ("huge.py", true),
        ],
        "{found:#?}"
    );
    assert!(
        found[0].message.contains("outside the workspace"),
        "{found:#?}"
    );
    assert!(found[2].message.contains("binary"), "{found:#?}");
    assert!(found[3].message.contains("limit"), "{found:#?}");
}

/// A runner standing for a machine without the tools, or a gate that refuses.
struct Missing {
    refuse: bool,
}

impl CommandRunner for Missing {
    fn run<'a>(&'a self, _request: CommandRequest<'a>) -> BoxFuture<'a, CommandOutput> {
        let refuse = self.refuse;
        Box::pin(async move {
            if refuse {
                CommandOutput {
                    refused: Some("denied by policy".to_owned()),
                    ..CommandOutput::default()
                }
            } else {
                CommandOutput {
                    exit_code: Some(127),
                    output: "sh: 1: not found".to_owned(),
                    ..CommandOutput::default()
                }
            }
        })
    }
}

#[tokio::test]
async fn a_checker_that_cannot_run_is_a_warning_never_a_silent_pass() {
    let project = Project::new();
    project
        .write("a.py", "x = (\n")
        .write("b.py", "y = 1\n")
        .write("c.js", "let = ;\n")
        .write("d.ts", "const x: number = 'no';\n");
    let files: Vec<String> = ["a.py", "b.py", "c.js", "d.ts"].map(str::to_owned).to_vec();
    for refuse in [false, true] {
        let found = check(project.root(), &files, &Missing { refuse }).await;
        assert!(
            found.iter().all(|e| e.severity == Severity::Warning),
            "{found:#?}"
        );
        let files: Vec<&str> = found.iter().map(|e| e.file.as_str()).collect();
        assert_eq!(files, ["a.py", "c.js", "d.ts"], "{found:#?}");
        assert!(
            found[0]
                .message
                .starts_with("Python was not checked (2 files): "),
            "{found:#?}"
        );
        assert!(
            found[1].message.starts_with("JavaScript was not checked: "),
            "{found:#?}"
        );
        assert!(
            found[2].message.starts_with("TypeScript was not checked: "),
            "{found:#?}"
        );
        let why = if refuse {
            "denied by policy"
        } else {
            "not installed"
        };
        assert!(found[0].message.contains(why), "{found:#?}");
        assert!(found[1].message.contains(why), "{found:#?}");
        // Where no tsc is installed at all, the runner is not asked.
        let tsc = &found[2].message;
        assert!(
            tsc.contains(why) || tsc.contains("tsc is not installed"),
            "{found:#?}"
        );
    }
}

/// Writes an executable script at `name` in the project that leaves `marker` behind when
/// it runs: a program the repository carries, which no check may start unasked.
#[cfg(unix)]
fn hostile(project: &Project, name: &str, marker: &str) {
    use std::os::unix::fs::PermissionsExt as _;
    let marker = project.root().join(marker);
    project.write(
        name,
        format!("#!/bin/sh\ntouch '{}'\nexit 0\n", marker.display()),
    );
    let path = project.root().join(name);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[cfg(unix)]
#[tokio::test]
async fn a_projects_own_python_is_never_run_by_the_check() {
    if !have("a_projects_own_python", "python3") {
        return;
    }
    let project = Project::new();
    hostile(&project, ".venv/bin/python", "ran-venv");
    hostile(&project, "venv/bin/python", "ran-venv2");
    // What the project installed in its environment is still found, by reading it.
    project
        .write(
            ".venv/lib/python3.99/site-packages/installed_atto/__init__.py",
            "",
        )
        .write("app.py", "import installed_atto\ndef f(:\n    pass\n");
    let found = project.check(&["app.py"]).await;
    assert!(
        !project.root().join("ran-venv").exists(),
        "ran .venv/bin/python"
    );
    assert!(
        !project.root().join("ran-venv2").exists(),
        "ran venv/bin/python"
    );
    // A system interpreter did the check: the syntax error is found at its line.
    assert_eq!(found.len(), 1, "{:?}", texts(&found));
    assert_eq!(found[0].line, Some(2), "{:?}", texts(&found));
    assert!(
        found[0].message.contains("SyntaxError"),
        "{:?}",
        texts(&found)
    );

    let fine = Project::new();
    hostile(&fine, ".venv/bin/python", "ran-venv");
    let site = ".venv/lib/python3.99/site-packages";
    fine.write(&format!("{site}/installed_atto/__init__.py"), "")
        // An editable install names its directory in a .pth file.
        .write(&format!("{site}/editable.pth"), "../../../../lib_atto\n")
        .write("lib_atto/editable_atto/__init__.py", "")
        // A module built for the environment's own Python version.
        .write(
            &format!("{site}/fast_atto.cpython-399-x86_64-linux-gnu.so"),
            "",
        )
        .write(
            "app.py",
            "import installed_atto\nimport editable_atto\nimport fast_atto\n",
        );
    let found = fine.check(&["app.py"]).await;
    assert_eq!(texts(&found), Vec::<String>::new());
    assert!(
        !fine.root().join("ran-venv").exists(),
        "ran .venv/bin/python"
    );
}

#[cfg(unix)]
#[tokio::test]
async fn a_projects_own_tsc_is_never_run_by_the_check() {
    let project = Project::new();
    hostile(&project, "node_modules/.bin/tsc", "ran-tsc");
    hostile(&project, "web/node_modules/.bin/tsc", "ran-web-tsc");
    project
        .write("web/tsconfig.json", "{}\n")
        .write("web/a.ts", "export const x: number = 1;\n")
        .write("b.ts", "export const y: number = 2;\n");
    let found = project.check(&["web/a.ts", "b.ts"]).await;
    assert!(
        !project.root().join("ran-tsc").exists(),
        "ran node_modules/.bin/tsc"
    );
    assert!(
        !project.root().join("ran-web-tsc").exists(),
        "ran web/node_modules/.bin/tsc"
    );
    // With no tsc on the machine the files are reported unchecked, never passed in silence.
    for f in &found {
        assert_eq!(f.severity, Severity::Warning, "{:?}", texts(&found));
    }
}
