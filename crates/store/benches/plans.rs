//! Plan mode costs: queueing a proposed change (each one committed before the model is told
//! it is queued) and loading an open plan of 200 changes (target well under 10 ms). Plain
//! `main`, no harness: `cargo bench -p atto-store --bench plans`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark: a panic is the report

use std::time::Instant;

use atto_protocol::{ChangeStatus, PendingPlan, PlanStatus, ProposedChange};
use atto_store::{NewSession, Store};

fn plan(id: &str) -> PendingPlan {
    PendingPlan {
        id: id.to_owned(),
        task: "refactor the parser".to_owned(),
        created_at: 1,
        updated_at: 1,
        proposed_changes: Vec::new(),
        exploration_summary: "read_file src/parser.rs; grep parse_".to_owned(),
        status: PlanStatus::Pending,
        session_id: "s1".to_owned(),
    }
}

/// A change of typical size: an `edit_file` with ~1 KB of old and new text.
fn change(plan: &str, order: u32) -> ProposedChange {
    ProposedChange {
        id: format!("{plan}-c{order}"),
        tool: "edit_file".to_owned(),
        args: serde_json::json!({
            "path": format!("src/file_{order}.rs"),
            "old_string": "fn old() {}\n".repeat(40),
            "new_string": "fn new() {}\n".repeat(40),
        }),
        reason: "rename old to new".to_owned(),
        order,
        proposed_at: i64::from(order),
        tool_call_id: format!("call_{order}"),
        path: Some(format!("src/file_{order}.rs")),
        base_hash: Some("sha256:0123456789abcdef".to_owned()),
        status: ChangeStatus::Pending,
        result: None,
    }
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("atto.db")).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
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
        store.create_plan(&plan("big")).await.unwrap();
        let mut times = Vec::with_capacity(500);
        for order in 1..=500 {
            let c = change("big", order);
            let started = Instant::now();
            store.add_change("big", &c).await.unwrap();
            times.push(started.elapsed().as_secs_f64() * 1e3);
        }
        times.sort_by(f64::total_cmp);
        let at = |q: f64| times[((times.len() as f64 - 1.0) * q) as usize];
        println!(
            "add_change ×500: p50 {:.3} ms  p99 {:.3} ms  max {:.3} ms",
            at(0.5),
            at(0.99),
            at(1.0)
        );
        // Close the 500-change plan so the open one is the 200-change plan below.
        store
            .update_plan("big", PlanStatus::Rejected, &[], 2)
            .await
            .unwrap();

        let mut open = plan("open");
        open.proposed_changes = (1..=200).map(|n| change("open", n)).collect();
        store.create_plan(&open).await.unwrap();
        let mut loads = Vec::with_capacity(50);
        for _ in 0..50 {
            let started = Instant::now();
            let loaded = store.open_plan("s1").await.unwrap().unwrap();
            loads.push(started.elapsed().as_secs_f64() * 1e3);
            assert_eq!(loaded.proposed_changes.len(), 200);
        }
        loads.sort_by(f64::total_cmp);
        println!(
            "open_plan (200 changes, ~1 KB args each) ×50: median {:.3} ms  max {:.3} ms  \
             (target well under 10 ms)",
            loads[loads.len() / 2],
            loads[loads.len() - 1]
        );
    });
}
