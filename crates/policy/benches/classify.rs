//! Classifier benchmark (plain `Instant` loop, no harness): the per-command
//! latency distribution over the test table, and `explain --jsonl` throughput.
//! Run with `cargo bench -p atto-policy`.

use std::hint::black_box;
use std::time::Instant;

const CASES: &str = include_str!("../tests/bash_cases.tsv");
/// Timed calls per command; the per-command figure is their median.
const ROUNDS: usize = 200;
/// Lines in the throughput run.
const JSONL_LINES: usize = 100_000;

fn commands() -> Vec<String> {
    CASES
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| l.split_once('\t'))
        .map(|(_, cmd)| cmd.replace('␤', "\n"))
        .collect()
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx.min(sorted.len() - 1)]
}

fn main() {
    let commands = commands();
    // Warm up: the first call on a thread creates its parser.
    for c in &commands {
        black_box(atto_policy::classify(c));
    }

    let mut per_command = Vec::with_capacity(commands.len());
    let mut samples = Vec::with_capacity(ROUNDS);
    for c in &commands {
        samples.clear();
        for _ in 0..ROUNDS {
            let t = Instant::now();
            black_box(atto_policy::classify(black_box(c)));
            samples.push(t.elapsed().as_secs_f64() * 1e6);
        }
        samples.sort_by(f64::total_cmp);
        per_command.push((percentile(&samples, 0.5), c));
    }
    per_command.sort_by(|a, b| a.0.total_cmp(&b.0));
    let micros: Vec<f64> = per_command.iter().map(|(m, _)| *m).collect();
    println!(
        "classify: {} commands x {ROUNDS} rounds; per-command median µs: median {:.1}, p90 {:.1}, p99 {:.1}, max {:.1}",
        commands.len(),
        percentile(&micros, 0.5),
        percentile(&micros, 0.9),
        percentile(&micros, 0.99),
        micros[micros.len() - 1],
    );
    for (m, c) in per_command.iter().rev().take(3) {
        let shown: String = c.chars().take(60).collect();
        println!("  slowest: {m:.1} µs  {shown:?}");
    }

    let mut input = String::new();
    let mut n = 0usize;
    while n < JSONL_LINES {
        for c in &commands {
            if n == JSONL_LINES {
                break;
            }
            let line = serde_json::json!({"id": n, "cmd": c});
            input.push_str(&line.to_string());
            input.push('\n');
            n += 1;
        }
    }
    let mut out = Vec::with_capacity(input.len() * 2);
    let t = Instant::now();
    let answered = atto_policy::explain_jsonl(input.as_bytes(), &mut out).unwrap_or(0);
    let secs = t.elapsed().as_secs_f64();
    println!(
        "explain_jsonl: {answered} lines in {:.3} s = {:.0} commands/s",
        secs,
        answered as f64 / secs
    );
}
