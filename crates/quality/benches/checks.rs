//! Pre-flight and concrete checks over a 50-file change: Python, TypeScript, JavaScript
//! and JSON files of a few hundred lines each, with their text before the work, and a
//! test task whose 30 tool calls V11 scans to the last. Target: at most 20 ms a run.
//!
//! `cargo bench -p atto-quality --bench checks`

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::{Duration, Instant};

use atto_quality::{QualityConfig, QualityTask, TaskKind, ToolAction, WorkerResult};

const FILES: usize = 50;
const RUNS: usize = 30;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let mut modified = Vec::new();
    let mut before = BTreeMap::new();
    let mut bytes = 0;
    for i in 0..FILES {
        let (rel, old, new) = match i % 4 {
            0 => (
                format!("src/pkg{i}/service.py"),
                python(i, false),
                python(i, true),
            ),
            1 => (
                format!("web/src/module{i}.ts"),
                typescript(i, false),
                typescript(i, true),
            ),
            2 => (
                format!("web/lib/util{i}.js"),
                javascript(i, false),
                javascript(i, true),
            ),
            _ => (
                format!("config/settings{i}.json"),
                json(i, false),
                json(i, true),
            ),
        };
        let path = dir.path().join(&rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&path, &new)?;
        bytes += old.len() + new.len();
        before.insert(rel.clone(), old);
        modified.push(rel);
    }
    let task = QualityTask {
        id: "bench".to_owned(),
        kind: TaskKind::Test,
        description: "Add `validate_payload()` to src/pkg0/service.py, refactor the request \
                      handlers and write tests for them; keep `handle_request_0` working"
            .to_owned(),
        target_files: vec!["src/pkg0/service.py".to_owned()],
        acceptance: vec!["service.py contains validate_payload()".to_owned()],
    };
    let result = worker_result(&modified);
    let config = QualityConfig::default();

    let run = || {
        let started = Instant::now();
        let rejection =
            atto_quality::preflight::check(&task, &result, &modified, dir.path(), &config);
        let preflight = started.elapsed();
        let findings = atto_quality::concrete::check(&task, &modified, dir.path(), &before);
        (started.elapsed(), preflight, rejection, findings)
    };
    let (_, _, rejection, findings) = run();
    if rejection.is_some() || !findings.is_empty() {
        return Err(format!(
            "the bench's change should pass: {rejection:?} {:?}",
            findings.iter().map(|f| &f.message).collect::<Vec<_>>()
        )
        .into());
    }
    let (mut times, mut preflight): (Vec<Duration>, Vec<Duration>) = (0..RUNS)
        .map(|_| {
            let (total, preflight, _, _) = run();
            (total, preflight)
        })
        .unzip();
    times.sort();
    preflight.sort();
    let mut parse = Vec::new();
    for _ in 0..RUNS {
        let started = Instant::now();
        for (rel, old) in &before {
            if let Some(lang) = atto_quality::concrete::symbol_lang(rel) {
                let _ = atto_quality::concrete::symbols_of(old, lang);
            }
        }
        parse.push(started.elapsed());
    }
    parse.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1_000.0;
    let median = times[RUNS / 2];
    println!(
        "pre-flight + concrete checks, {FILES} files ({} KB before and after), {} tool calls: \
         median {:.2} ms, min {:.2} ms, max {:.2} ms over {RUNS} runs (target <= 20 ms)",
        bytes / 1024,
        result.actions.len(),
        ms(median),
        ms(times[0]),
        ms(times[RUNS - 1]),
    );
    println!(
        "  of which pre-flight: median {:.2} ms; for scale, one full tree-sitter parse of every \
         source file's old text: median {:.2} ms",
        ms(preflight[RUNS / 2]),
        ms(parse[RUNS / 2]),
    );
    Ok(())
}

/// Thirty tool calls: reads, edits and commands with a few KB of output each, the test
/// run last.
fn worker_result(modified: &[String]) -> WorkerResult {
    let mut actions = Vec::new();
    for (i, rel) in modified.iter().take(29).enumerate() {
        let action = if i % 3 == 0 {
            ToolAction {
                tool: "bash".to_owned(),
                arguments: serde_json::json!({ "command": format!("grep -n handler {rel}") }),
                output: format!("{rel}:12: def handler_{i}(request):\n").repeat(60),
                exit_code: Some(0),
                is_test_run: false,
                not_run: None,
            }
        } else {
            ToolAction {
                tool: "edit_file".to_owned(),
                arguments: serde_json::json!({ "path": rel, "old": "x = 1", "new": "x = 2" }),
                output: "edited".to_owned(),
                exit_code: None,
                is_test_run: false,
                not_run: None,
            }
        };
        actions.push(action);
    }
    let mut log = String::new();
    for i in 0..120 {
        let _ = writeln!(log, "tests/test_service.py::test_case_{i} PASSED");
    }
    log.push_str("================ 120 passed in 3.21s ================\n");
    actions.push(ToolAction {
        tool: "bash".to_owned(),
        arguments: serde_json::json!({ "command": "python -m pytest -q" }),
        output: log,
        exit_code: Some(0),
        is_test_run: false,
        not_run: None,
    });
    WorkerResult {
        text: "Refactored the handlers and added tests; all 120 pass.".to_owned(),
        closure_report: Some(
            "Implemented validate_payload and refactored the handlers. Ran the test suite: \
             120 passed."
                .to_owned(),
        ),
        actions,
        model: Some("bench".to_owned()),
    }
}

/// A Python module of about 300 lines; `after` adds a function and changes a body.
fn python(n: usize, after: bool) -> String {
    let mut s = String::from(
        "\"\"\"Request handling for the service.\"\"\"\n\nimport json\nimport logging\n\
         from dataclasses import dataclass, field\n\nlogger = logging.getLogger(__name__)\n\
         MAX_ITEMS = 100\n\n\n",
    );
    for c in 0..4 {
        let _ = write!(
            s,
            "@dataclass\nclass Record{c}:\n    \"\"\"A stored record.\"\"\"\n\n    id: int\n    \
             name: str = \"\"\n    tags: list[str] = field(default_factory=list)\n\n    \
             def to_dict(self) -> dict:\n        return {{\"id\": self.id, \"name\": self.name, \
             \"tags\": list(self.tags)}}\n\n    def matches(self, query: str) -> bool:\n        \
             # Brackets in comments: ([{{\n        return query in self.name or any(query in t \
             for t in self.tags)\n\n    @classmethod\n    def parse(cls, text: str) -> \
             \"Record{c}\":\n        data = json.loads(text)\n        return cls(id=data[\"id\"], \
             name=data.get(\"name\", \"\"), tags=data.get(\"tags\", []))\n\n\n"
        );
    }
    for f in 0..18 {
        let body = if after && f == 9 {
            "    items = [x for x in payload.get(\"items\", []) if x]\n    \
             return {\"count\": len(items), \"items\": items[:MAX_ITEMS]}\n"
        } else {
            "    items = payload.get(\"items\", [])\n    \
             return {\"count\": len(items), \"items\": items}\n"
        };
        let _ = write!(
            s,
            "def handle_request_{f}(payload: dict) -> dict:\n    \"\"\"Handles request {f} of \
             module {n}: '{{' and \"}}\" stay strings.\"\"\"\n    if not isinstance(payload, \
             dict):\n        raise ValueError(f\"bad payload: {{payload!r}}\")\n    \
             logger.debug(\"request %s\", payload)\n{body}\n\n"
        );
    }
    if after {
        s.push_str(
            "def validate_payload(payload: dict) -> None:\n    if \"items\" not in payload:\n        \
             raise ValueError(\"items missing\")\n",
        );
    }
    s
}

/// A TypeScript module of about 300 lines.
fn typescript(n: usize, after: bool) -> String {
    let mut s = format!(
        "import {{ readFile }} from 'node:fs/promises';\n\nexport const MODULE = 'module{n}';\n\
         export type Id = string | number;\n\nexport interface Options {{\n  retries: number;\n  \
         timeoutMs?: number;\n}}\n\n"
    );
    for c in 0..4 {
        let _ = write!(
            s,
            "export class Store{c}<T extends {{ id: Id }}> {{\n  private items = new Map<Id, \
             T>();\n\n  constructor(private readonly options: Options) {{}}\n\n  get(id: Id): T | \
             undefined {{\n    return this.items.get(id);\n  }}\n\n  put(item: T): void {{\n    \
             if (this.items.size > 1000) {{\n      throw new Error(`store full: ${{this.items.size}} \
             items`);\n    }}\n    this.items.set(item.id, item);\n  }}\n\n  async load(path: \
             string): Promise<number> {{\n    const text = await readFile(path, 'utf8');\n    \
             const rows = JSON.parse(text) as T[];\n    rows.forEach((r) => this.put(r));\n    \
             return rows.length;\n  }}\n}}\n\n"
        );
    }
    for f in 0..16 {
        let check = if after && f == 7 {
            "  if (!/^[a-z]+$/i.test(name)) { return { ok: false, reason: 'name' }; }\n"
        } else {
            ""
        };
        let _ = write!(
            s,
            "export function handler{f}(name: string, opts: Partial<Options> = {{}}): {{ ok: \
             boolean; reason?: string }} {{\n  // Brackets in comments: ([{{\n{check}  const \
             label = `handler{f}: ${{name}} (${{opts.retries ?? 0}})`;\n  return {{ ok: \
             label.length > 0 }};\n}}\n\n"
        );
    }
    s
}

/// A JavaScript module of about 250 lines.
fn javascript(n: usize, after: bool) -> String {
    let mut s = format!(
        "'use strict';\n\nconst path = require('node:path');\nconst DEFAULTS = {{ depth: 3, \
         name: 'util{n}' }};\n\n"
    );
    for c in 0..3 {
        let _ = write!(
            s,
            "class Walker{c} {{\n  constructor(root) {{\n    this.root = root;\n    this.seen = \
             new Set();\n  }}\n\n  visit(node, depth = 0) {{\n    if (depth > DEFAULTS.depth || \
             this.seen.has(node)) {{\n      return [];\n    }}\n    this.seen.add(node);\n    \
             return [node, ...(node.children || []).flatMap((c) => this.visit(c, depth + 1))];\n  \
             }}\n\n  static split(p) {{\n    return p.split(/[\\\\/]+/).filter(Boolean);\n  \
             }}\n}}\n\n"
        );
    }
    for f in 0..18 {
        let extra = if after && f == 4 {
            "  if (!input) { return null; }\n"
        } else {
            ""
        };
        let _ = write!(
            s,
            "function format{f}(input, options = {{}}) {{\n{extra}  const merged = {{ \
             ...DEFAULTS, ...options }};\n  const parts = [merged.name, String(input), \
             path.basename('a/b{{c}}')];\n  return parts.join(':') + \"{{}}\";\n}}\n\n"
        );
    }
    s.push_str("module.exports = { Walker0, Walker1, Walker2, format0, format1 };\n");
    s
}

/// A JSON settings file of about 2 KB.
fn json(n: usize, after: bool) -> String {
    let mut entries = Vec::new();
    for k in 0..40 {
        let value = if after && k == 20 { 99 } else { k };
        entries.push(format!(
            "    \"key_{n}_{k}\": {{ \"enabled\": {}, \"limit\": {value}, \"tags\": [\"a\", \
             \"b{{\"] }}",
            k % 2 == 0
        ));
    }
    format!(
        "{{\n  \"settings\": {{\n{}\n  }}\n}}\n",
        entries.join(",\n")
    )
}
