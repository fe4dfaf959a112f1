//! Compilation-check benchmark (plain `Instant` loop, no harness): JSON checked in process
//! per file (target ≤ 1 ms/file) and 20 Python files checked in one interpreter (target
//! ≤ 150 ms in all), through `compile::check` with the local runner, as the pipeline calls
//! it. Run with `cargo bench -p atto-quality --bench compile`.

use std::path::Path;
use std::time::{Duration, Instant};

use atto_quality::compile::check;
use atto_quality::{CommandRequest, CommandRunner as _, LocalRunner, Purpose};

/// JSON files per timed call.
const JSON_FILES: usize = 200;
/// Python files per timed call.
const PYTHON_FILES: usize = 20;
/// Timed calls; the figures are medians.
const ROUNDS: usize = 15;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let dir = tempfile::tempdir()?;
    let root = dir.path();
    let runner = LocalRunner::new(root.to_path_buf());

    let json = write_json(root, JSON_FILES)?;
    let python = write_python(root, PYTHON_FILES)?;
    let big = "big.json".to_owned();
    std::fs::write(
        root.join(&big),
        format!("[{}0]", "{\"id\": 12345, \"ok\": true},".repeat(400_000)),
    )?;

    let json_ms = median(ROUNDS, || {
        let found = runtime.block_on(check(root, &json, &runner));
        assert!(found.is_empty(), "{found:?}");
    });
    let big_ms = median(ROUNDS, || {
        let found = runtime.block_on(check(root, std::slice::from_ref(&big), &runner));
        assert!(found.is_empty(), "{found:?}");
    });
    let python_ms = median(ROUNDS, || {
        let found = runtime.block_on(check(root, &python, &runner));
        assert!(found.is_empty(), "{found:?}");
    });

    // The part of the Python figure that is only starting the interpreter (through a
    // version manager's shim, on some machines), for reading the number.
    let startup_ms = median(ROUNDS, || {
        let out = runtime.block_on(runner.run(CommandRequest {
            command: "python3 -c pass",
            purpose: Purpose::Check,
            timeout: Duration::from_secs(30),
        }));
        assert!(out.succeeded(), "{out:?}");
    });

    let per_file = json_ms / JSON_FILES as f64;
    let size_mb = std::fs::metadata(root.join(&big))?.len() as f64 / 1e6;
    println!(
        "json: {per_file:.3} ms/file ({JSON_FILES} files of ~2 KB per call, median of \
         {ROUNDS}); target ≤ 1 ms/file {}",
        verdict(per_file <= 1.0)
    );
    println!("json: one {size_mb:.1} MB file in {big_ms:.1} ms");
    println!(
        "python: {python_ms:.1} ms for {PYTHON_FILES} files in one process (syntax and \
         imports, median of {ROUNDS}); target ≤ 150 ms {}",
        verdict(python_ms <= 150.0)
    );
    println!(
        "python: of which {startup_ms:.1} ms is starting `python3 -c pass` alone; the check \
         itself {:.1} ms",
        python_ms - startup_ms
    );
    Ok(())
}

/// Median wall time of `rounds` calls, in milliseconds, after one warm-up call.
fn median(rounds: usize, mut run: impl FnMut()) -> f64 {
    run();
    let mut samples: Vec<f64> = (0..rounds)
        .map(|_| {
            let started = Instant::now();
            run();
            started.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

fn verdict(met: bool) -> &'static str {
    if met { "(met)" } else { "(MISSED)" }
}

/// `count` package.json-like files of about 2 KB.
fn write_json(root: &Path, count: usize) -> std::io::Result<Vec<String>> {
    let deps: String = (0..40)
        .map(|i| format!("    \"dependency-number-{i}\": \"^{i}.2.3\""))
        .collect::<Vec<_>>()
        .join(",\n");
    (0..count)
        .map(|i| {
            let name = format!("json/pkg{i}/package.json");
            let text = format!(
                "{{\n  \"name\": \"pkg{i}\",\n  \"version\": \"1.0.{i}\",\n  \"private\": true,\n  \
                 \"dependencies\": {{\n{deps}\n  }}\n}}\n"
            );
            std::fs::create_dir_all(root.join(format!("json/pkg{i}")))?;
            std::fs::write(root.join(&name), text)?;
            Ok(name)
        })
        .collect()
}

/// A package of `count` modules of about 60 lines, importing the standard library and each
/// other.
fn write_python(root: &Path, count: usize) -> std::io::Result<Vec<String>> {
    std::fs::create_dir_all(root.join("app"))?;
    std::fs::write(root.join("app/__init__.py"), "")?;
    (0..count)
        .map(|i| {
            let name = format!("app/module{i}.py");
            let mut text = String::from(
                "import json\nimport os.path\nfrom collections import defaultdict\n\
                 from dataclasses import dataclass\n",
            );
            if i > 0 {
                text.push_str(&format!(
                    "from app.module{} import Record{}\nfrom . import module0\n",
                    i - 1,
                    i - 1
                ));
            }
            text.push_str(&format!(
                "\n\n@dataclass\nclass Record{i}:\n    name: str\n    size: int = 0\n\n"
            ));
            for f in 0..10 {
                text.push_str(&format!(
                    "def function_{f}(items: list[str]) -> dict[str, int]:\n    \
                     counts = defaultdict(int)\n    for item in items:\n        \
                     counts[os.path.basename(item)] += {f}\n    return json.loads(json.dumps(counts))\n\n"
                ));
            }
            std::fs::write(root.join(&name), text)?;
            Ok(name)
        })
        .collect()
}
