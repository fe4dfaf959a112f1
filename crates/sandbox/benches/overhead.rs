//! What the sandbox adds to starting a command: `bash -c true` through tokio::process,
//! unsandboxed vs with `Sandbox::apply` (network off, so Landlock and seccomp both apply),
//! interleaved so both see the same machine load. Target: ≤ 2 ms added at the median.
//!
//! Run: `cargo bench -p atto-sandbox` (plain `Instant` loop, no harness).

// A benchmark may unwrap: a panic is a failed run.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use atto_sandbox::{Sandbox, SandboxConfig, SandboxStatus};

const RUNS: usize = 300;
const WARMUP: usize = 20;

async fn once(sandbox: Option<&Sandbox>) -> Duration {
    let start = Instant::now();
    let mut cmd = tokio::process::Command::new("bash");
    cmd.arg("-c").arg("true").current_dir(std::env::temp_dir());
    if let Some(sb) = sandbox {
        assert!(matches!(sb.apply(&mut cmd), SandboxStatus::Applied { .. }));
    }
    let status = cmd.status().await.unwrap();
    assert!(status.success());
    start.elapsed()
}

fn report(name: &str, mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "{name:<12} n={} min={:.3}ms median={:.3}ms p90={:.3}ms max={:.3}ms",
        samples.len(),
        ms(samples[0]),
        ms(at(0.5)),
        ms(at(0.9)),
        ms(samples[samples.len() - 1])
    );
    at(0.5)
}

fn main() {
    let ws = tempfile::tempdir().unwrap();
    let config = SandboxConfig {
        writable: vec![ws.path().to_path_buf(), std::env::temp_dir()],
        allow_network: false,
    };
    println!("kernel: {:?}", Sandbox::probe());
    let prep_start = Instant::now();
    let sandbox = match Sandbox::prepare(&config) {
        Ok(sb) => sb,
        Err(e) => {
            println!("sandbox unavailable, nothing to compare: {e}");
            return;
        }
    };
    println!(
        "prepare (once per session): {:.3}ms",
        prep_start.elapsed().as_secs_f64() * 1e3
    );
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        for _ in 0..WARMUP {
            once(None).await;
            once(Some(&sandbox)).await;
        }
        let mut plain = Vec::with_capacity(RUNS);
        let mut boxed = Vec::with_capacity(RUNS);
        for _ in 0..RUNS {
            plain.push(once(None).await);
            boxed.push(once(Some(&sandbox)).await);
        }
        let a = report("unsandboxed", plain);
        let b = report("sandboxed", boxed);
        println!(
            "added at the median: {:.3}ms (target ≤ 2ms)",
            (b.as_secs_f64() - a.as_secs_f64()) * 1e3
        );
    });
}
