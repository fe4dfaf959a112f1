//! What classifying a request's complexity costs before every turn: a 2 KB request (a long
//! prompt with paths, steps and a question) and a 64 KB one, which shows whether the cost
//! grows with the text's length and no faster. Target: ≤ 0.1 ms for 2 KB on a release build.
//! Plain `main`, no harness: `cargo bench -p atto-planner --bench complexity`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark: a panic is the report

use std::hint::black_box;
use std::time::{Duration, Instant};

use atto_planner::complexity::classify;

const PARAGRAPH: &str = "Please refactor the session actor in crates/core/src/session.rs so \
    that turn handling lives in its own module, then migrate every caller across the \
    workspace, update the snapshot tests in tests/e2e/, and finally benchmark the turn loop \
    against the old one. Is the event order guaranteed after that? ";

fn request(bytes: usize) -> String {
    let mut text = String::new();
    while text.len() < bytes {
        text.push_str(PARAGRAPH);
    }
    text.truncate(bytes);
    text
}

/// The fastest of seven batches' mean time per call, so a busy machine does not decide it.
fn per_call(request: &str, runs: u32) -> Duration {
    (0..7)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..runs {
                black_box(classify(black_box(request)));
            }
            start.elapsed() / runs
        })
        .min()
        .unwrap_or_default()
}

fn main() {
    let small = per_call(&request(2 * 1024), 2_000);
    let large = per_call(&request(64 * 1024), 100);
    println!("classify, 2 KB:  {small:?} per call");
    println!("classify, 64 KB: {large:?} per call");
    // 32 times the text: linear work costs ~32 times as much; quadratic would be ~1,000.
    let growth = large.as_secs_f64() / small.as_secs_f64().max(f64::MIN_POSITIVE);
    println!("64 KB / 2 KB: {growth:.1}× (linear ≈ 32×)");
}
