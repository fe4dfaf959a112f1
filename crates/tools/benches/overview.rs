//! `codebase_overview` on a generated 5,000-file repository (Rust, Python, TypeScript and
//! Go files of about forty lines, each using names defined in others). Targets: cold (a new
//! process, no cache) at most 1.5 s; warm (the index in memory) at most 50 ms. Also shown:
//! a new process with the index on disk.
//!
//! Also shown: warm with a focus that changes every call, so the ranking (surface, graph,
//! PageRank) is redone each time rather than taken from the last map.
//!
//! `cargo bench -p atto-tools --bench overview`
//!
//! `... --bench overview -- --map ROOT [BYTES [FOCUS]]` prints the map of ROOT instead
//! (with no cache on disk): what `bench/repomap.py` measures on real repositories.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use atto_tools::{CancellationToken, overview};

const FILES: usize = 5_000;
const BUDGET: usize = 8_000;

fn source(i: usize) -> (String, String) {
    let other = (i * 7 + 3) % FILES;
    let third = (i * 13 + 5) % FILES;
    match i % 4 {
        0 => (
            format!("crates/c{}/src/m{i}.rs", i % 50),
            format!(
                "use crate::m{other}::Item{other};\n\npub struct Item{i} {{\n    pub id: u64,\n    pub name: String,\n}}\n\nimpl Item{i} {{\n    pub fn new(id: u64) -> Self {{\n        Self {{ id, name: String::new() }}\n    }}\n\n    pub fn link(&self) -> Item{other} {{\n        Item{other}::new(self.id)\n    }}\n}}\n\npub fn helper{i}(x: u64) -> u64 {{\n    helper{third}(x) + 1\n}}\n\npub const LIMIT_{i}: u64 = {i};\n\n#[cfg(test)]\nmod tests {{\n    use super::*;\n\n    #[test]\n    fn works() {{\n        assert_eq!(Item{i}::new(1).id, 1);\n    }}\n}}\n"
            ),
        ),
        1 => (
            format!("py/pkg{}/mod{i}.py", i % 50),
            format!(
                "from pkg.mod{other} import Item{other}\n\n\nclass Item{i}:\n    \"\"\"Item number {i}.\"\"\"\n\n    def __init__(self, ident):\n        self.ident = ident\n\n    def link(self):\n        return Item{other}(self.ident)\n\n\ndef helper{i}(x):\n    return helper{third}(x) + 1\n\n\nLIMIT_{i} = {i}\n"
            ),
        ),
        2 => (
            format!("web/src/part{}/mod{i}.ts", i % 50),
            format!(
                "import {{ Item{other} }} from './mod{other}';\n\nexport interface Shape{i} {{\n  id: number;\n  name: string;\n}}\n\nexport class Item{i} {{\n  constructor(public id: number) {{}}\n  link(): Item{other} {{\n    return new Item{other}(this.id);\n  }}\n}}\n\nexport function helper{i}(x: number): number {{\n  return helper{third}(x) + 1;\n}}\n\nexport const LIMIT_{i} = {i};\n"
            ),
        ),
        _ => (
            format!("go/pkg{}/file{i}.go", i % 50),
            format!(
                "package pkg\n\ntype Item{i} struct {{\n\tID   uint64\n\tName string\n}}\n\nfunc NewItem{i}(id uint64) *Item{i} {{\n\treturn &Item{i}{{ID: id}}\n}}\n\nfunc (it *Item{i}) Link() *Item{other} {{\n\treturn NewItem{other}(it.ID)\n}}\n\nfunc Helper{i}(x uint64) uint64 {{\n\treturn Helper{third}(x) + 1\n}}\n\nconst Limit{i} = {i}\n"
            ),
        ),
    }
}

/// One overview of `root` with `cache`, timed in this process; prints the map's size.
fn once(root: &Path, cache: &Path) -> Result<f64, Box<dyn std::error::Error>> {
    let start = Instant::now();
    let map = overview(root, "", BUDGET, "", Some(cache), &CancellationToken::new())?;
    let secs = start.elapsed().as_secs_f64();
    if map.len() > BUDGET {
        return Err(format!(
            "the map has {} bytes, over its budget of {BUDGET}",
            map.len()
        )
        .into());
    }
    Ok(secs)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if let [_, flag, root, rest @ ..] = args.as_slice()
        && flag == "--map"
    {
        let bytes = rest.first().map_or(Ok(BUDGET), |b| b.parse())?;
        let focus = rest.get(1).map_or("", String::as_str);
        let root = Path::new(root).canonicalize()?;
        print!(
            "{}",
            overview(&root, "", bytes, focus, None, &CancellationToken::new())?
        );
        return Ok(());
    }
    // A child run: one cold-process overview, its time on stdout.
    if let [_, flag, root, cache] = args.as_slice()
        && flag == "--once"
    {
        println!("{}", once(Path::new(root), Path::new(cache))?);
        return Ok(());
    }
    let dir = tempfile::tempdir()?;
    let root = dir.path().join("repo");
    let mut bytes = 0;
    for i in 0..FILES {
        let (rel, text) = source(i);
        let path = root.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        bytes += text.len();
        std::fs::write(path, text)?;
    }
    let root = root.canonicalize()?;
    let cache = dir.path().join("cache");
    let child = |label: &str| -> Result<f64, Box<dyn std::error::Error>> {
        let out = Command::new(std::env::current_exe()?)
            .args([
                "--once",
                &root.display().to_string(),
                &cache.display().to_string(),
            ])
            .output()?;
        if !out.status.success() {
            return Err(format!("{label}: {}", String::from_utf8_lossy(&out.stderr)).into());
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim().parse()?)
    };
    println!(
        "codebase_overview: {FILES} files, {} KB of source, map budget {BUDGET} B",
        bytes / 1024
    );
    let cold = child("cold")?;
    println!(
        "  cold (new process, no cache):      {:>8.1} ms  (target <= 1500 ms)",
        cold * 1e3
    );
    let disk = child("disk")?;
    println!(
        "  new process, index on disk:        {:>8.1} ms",
        disk * 1e3
    );
    once(&root, &cache)?;
    let mut warm = Vec::new();
    for _ in 0..10 {
        warm.push(once(&root, &cache)?);
    }
    warm.sort_by(f64::total_cmp);
    println!(
        "  warm (index in memory), median/10: {:>8.1} ms  (target <= 50 ms)",
        warm[warm.len() / 2] * 1e3
    );
    let mut focused = Vec::new();
    for i in 0..10 {
        let start = Instant::now();
        let focus = format!("Item{} helper{}", i * 97, i * 31);
        let map = overview(
            &root,
            "",
            BUDGET,
            &focus,
            Some(&cache),
            &CancellationToken::new(),
        )?;
        focused.push(start.elapsed().as_secs_f64());
        if map.len() > BUDGET {
            return Err(format!("the focused map has {} bytes", map.len()).into());
        }
    }
    focused.sort_by(f64::total_cmp);
    println!(
        "  warm, a new focus each call, median/10: {:>8.1} ms  (target <= 50 ms)",
        focused[focused.len() / 2] * 1e3
    );
    Ok(())
}
