//! The `@path` completion on a monorepo's 200,000 paths: the time of each keystroke while a
//! path and a file name are typed (the first keystroke scans every path; later ones narrow the
//! previous hits), p50/p99 over repetitions, and the bytes the paths take.
//! Plain `Instant` timing. Run: `cargo bench -p atto-tui --bench files`.

use std::time::{Duration, Instant};

use atto_tui::composer::files::FileIndex;

const FILES: usize = 200_000;
const RUNS: usize = 15;

fn paths() -> Vec<String> {
    (0..FILES)
        .map(|i| format!("src/p{}/m{}/f{i}.py", i / 10_000, (i / 100) % 100))
        .collect()
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

fn main() {
    let paths = paths();
    let bytes: usize = paths.iter().map(String::len).sum();
    println!("{FILES} paths, {:.1} MB of path text", bytes as f64 / 1e6);
    for typed in ["src/p13/m45/f134512.py", "f19999", "m45/f1"] {
        let mut first = Vec::new();
        let mut later = Vec::new();
        for _ in 0..RUNS {
            let mut index = FileIndex::from_paths(paths.clone());
            for n in 0..=typed.len() {
                let t = Instant::now();
                let found = index.matches(&typed[..n]);
                let took = t.elapsed();
                assert!(!found.is_empty(), "{:?} found nothing", &typed[..n]);
                if n <= 1 {
                    first.push(took)
                } else {
                    later.push(took)
                }
            }
        }
        first.sort();
        later.sort();
        println!(
            "typing {typed:>24}: first keystrokes p50 {:>6.2} ms p99 {:>6.2} ms; later p50 {:>6.3} ms p99 {:>6.3} ms",
            percentile(&first, 0.5).as_secs_f64() * 1e3,
            percentile(&first, 0.99).as_secs_f64() * 1e3,
            percentile(&later, 0.5).as_secs_f64() * 1e3,
            percentile(&later, 0.99).as_secs_f64() * 1e3,
        );
    }
}
