//! Recall costs (issue target: a prompt's recall at 500 learnings ≤ 2 ms p99): the store
//! filled to its cap of 500 learnings of realistic size, then recall for prompts that match
//! (FTS5), that match nothing (FTS5, then the LIKE fallback), and long prompts; and recall
//! on a store with no validated learning (the cheap check every turn pays). Each figure is
//! one request through the store's writer thread, as a session makes it. Plain `main`, no
//! harness: `cargo bench -p atto-store --bench learnings`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark: a panic is the report

use std::time::{Duration, Instant};

use atto_protocol::{LearningKind, LearningScope, LearningSource};
use atto_store::{LearningLimits, LearningQuery, NewLearning, Store};

const WORDS: &[&str] = &[
    "python",
    "pytest",
    "cargo",
    "build",
    "test",
    "fixture",
    "database",
    "migration",
    "schema",
    "auth",
    "token",
    "header",
    "middleware",
    "router",
    "handler",
    "config",
    "yaml",
    "json",
    "docker",
    "compose",
    "network",
    "timeout",
    "retry",
    "cache",
    "redis",
    "queue",
    "worker",
    "import",
    "module",
    "package",
    "version",
    "lockfile",
    "node",
    "npm",
    "typescript",
    "lint",
    "format",
    "parser",
    "lexer",
    "grammar",
    "encoding",
    "utf8",
    "path",
    "symlink",
    "permission",
    "sandbox",
    "shell",
    "quoting",
    "escape",
    "regex",
    "logging",
    "metrics",
    "deploy",
    "release",
];

fn word(seed: usize) -> &'static str {
    WORDS[seed.wrapping_mul(2_654_435_761) % WORDS.len()]
}

fn learning(n: usize) -> NewLearning {
    let sentence = |base: usize, len: usize| {
        (0..len)
            .map(|i| word(base + i * 7))
            .collect::<Vec<_>>()
            .join(" ")
    };
    NewLearning {
        kind: LearningKind::ALL[n % 5],
        description: format!("lesson {n}: {}", sentence(n, 12)),
        details: sentence(n * 3 + 1, 40),
        keywords: (0..4).map(|i| word(n + i * 11).to_owned()).collect(),
        actions: vec!["bash".to_owned(), word(n * 5).to_owned()],
        categories: vec![word(n * 13).to_uppercase()],
        // Four in five validated at once; the rest wait for review.
        confidence: if n.is_multiple_of(5) {
            0.6
        } else {
            0.9 + (n % 10) as f64 / 100.0
        },
        scope: if n.is_multiple_of(10) {
            LearningScope::User
        } else {
            LearningScope::Project
        },
        project: "/w/bench".to_owned(),
        source: LearningSource::Model,
        source_ref: None,
        session_id: None,
    }
}

fn query(text: &str) -> LearningQuery {
    LearningQuery {
        text: text.to_owned(),
        project: "/w/bench".to_owned(),
        categories: Vec::new(),
        actions: Vec::new(),
        limit: 5,
    }
}

fn report(name: &str, mut times: Vec<Duration>) {
    times.sort();
    let at = |q: f64| times[((times.len() as f64 - 1.0) * q).round() as usize];
    println!(
        "{name:<44} n={:<5} p50 {:>7.3} ms  p99 {:>7.3} ms  max {:>7.3} ms",
        times.len(),
        at(0.5).as_secs_f64() * 1e3,
        at(0.99).as_secs_f64() * 1e3,
        at(1.0).as_secs_f64() * 1e3
    );
}

fn run(store: &Store, name: &str, prompts: &[&str], rounds: usize) -> usize {
    let mut times = Vec::with_capacity(prompts.len() * rounds);
    let mut found = 0;
    for _ in 0..rounds {
        for prompt in prompts {
            let start = Instant::now();
            found += store
                .recall_learnings_blocking(query(prompt))
                .unwrap()
                .len();
            times.push(start.elapsed());
        }
    }
    report(name, times);
    found
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("atto.db")).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();

    // Empty store: the existence check alone.
    run(
        &store,
        "recall, no validated learning",
        &["fix the auth middleware"],
        2000,
    );

    runtime.block_on(async {
        for n in 0..500 {
            store
                .propose_learning(learning(n), LearningLimits::default())
                .await
                .unwrap();
        }
    });
    let matching = [
        "fix the auth middleware so the token header is read",
        "pytest fails on the fixture for the database migration",
        "the docker compose network times out",
        "cargo build breaks after the lockfile version bump",
        "why does the parser reject utf8 encoding",
    ];
    let missing = [
        "write a haiku about autumn leaves",
        "kubernetes helm chart values",
        "zzz qqq xxyyzz",
        "explain monads",
        "add a README badge",
    ];
    let long = [
        "In src/api/handlers.rs the request handler reads the token from the wrong header and \
         the middleware then rejects every call with 401; change the router so the auth \
         middleware runs first, add a regression test with pytest fixtures for the database, \
         update the docker compose file so redis is on the same network, and make sure cargo \
         build and npm lint still pass after the lockfile and version changes",
    ];
    let hits = run(&store, "recall at 500, matching prompts", &matching, 400);
    let none = run(
        &store,
        "recall at 500, prompts matching nothing",
        &missing,
        400,
    );
    run(&store, "recall at 500, one long prompt", &long, 2000);
    println!("(found {hits} learnings for matching prompts, {none} for the others)");
}
