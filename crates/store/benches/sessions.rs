//! Session history costs (issue 4 targets): appending a message (p99 ≤ 1 ms) and loading
//! a thread of 10,000 messages for a resume (≤ 50 ms). Plain `main`, no harness:
//! `cargo bench -p atto-store --bench sessions`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark: a panic is the report

use std::time::Instant;

use atto_store::{NewSession, SessionRef, Store};

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("atto.db")).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    // A message of typical size: a tool result of ~600 bytes of JSON.
    let body = serde_json::json!({
        "type": "tool_result", "call_id": "call_1", "name": "read_file",
        "content": "x".repeat(500), "is_error": false
    })
    .to_string();
    runtime.block_on(async {
        store
            .create_session(NewSession {
                id: "s1".into(),
                workspace: "/w".into(),
                provider: None,
                model: None,
                spawned_by: None,
            })
            .await
            .unwrap();
        let mut times = Vec::with_capacity(10_000);
        for seq in 1..=10_000i64 {
            let started = Instant::now();
            store
                .append_message("s1", seq, body.clone(), None)
                .await
                .unwrap();
            times.push(started.elapsed().as_secs_f64() * 1e3);
        }
        times.sort_by(f64::total_cmp);
        let at = |q: f64| times[((times.len() as f64 - 1.0) * q) as usize];
        println!(
            "append_message ×10000: p50 {:.3} ms  p99 {:.3} ms  max {:.3} ms  (target p99 ≤ 1 ms)",
            at(0.5),
            at(0.99),
            at(1.0)
        );
    });
    let mut loads = Vec::new();
    for _ in 0..10 {
        let started = Instant::now();
        let row = store
            .find_session_blocking("/w", &SessionRef::Latest)
            .unwrap();
        let bodies = store.messages_blocking(&row.id).unwrap();
        let parsed: Vec<serde_json::Value> = bodies
            .iter()
            .map(|b| serde_json::from_str(b).unwrap())
            .collect();
        assert_eq!(parsed.len(), 10_000);
        loads.push(started.elapsed().as_secs_f64() * 1e3);
    }
    loads.sort_by(f64::total_cmp);
    println!(
        "resume (find + load + parse 10000 messages) ×10: median {:.1} ms  max {:.1} ms  (target ≤ 50 ms)",
        loads[loads.len() / 2],
        loads[loads.len() - 1]
    );
}
