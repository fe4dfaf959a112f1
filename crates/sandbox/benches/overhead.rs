//! What the sandbox adds to starting a command: `bash -c true` through tokio::process,
//! unsandboxed vs with `Sandbox::apply` (network off, so Landlock and seccomp both apply),
//! without and with read-only directories (`.git`, `.atto`: a mount namespace per
//! command), interleaved so all see the same machine load. Target: ≤ 2 ms added at the
//! median.
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

fn prepare(config: &SandboxConfig, name: &str) -> Option<Sandbox> {
    let start = Instant::now();
    match Sandbox::prepare(config) {
        Ok(sb) => {
            println!(
                "prepare {name} (once per session): {:.3}ms; {}",
                start.elapsed().as_secs_f64() * 1e3,
                sb.summary()
            );
            Some(sb)
        }
        Err(e) => {
            println!("sandbox unavailable, nothing to compare: {e}");
            None
        }
    }
}

fn main() {
    let ws = tempfile::tempdir().unwrap();
    for dir in [".git", ".atto"] {
        std::fs::create_dir(ws.path().join(dir)).unwrap();
    }
    let config = SandboxConfig {
        writable: vec![ws.path().to_path_buf(), std::env::temp_dir()],
        ..SandboxConfig::default()
    };
    let with_read_only = SandboxConfig {
        read_only: vec![ws.path().join(".git"), ws.path().join(".atto")],
        ..config.clone()
    };
    println!("kernel: {:?}", Sandbox::probe());
    let Some(sandbox) = prepare(&config, "plain") else {
        return;
    };
    let Some(protected) = prepare(&with_read_only, "read-only") else {
        return;
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        for _ in 0..WARMUP {
            once(None).await;
            once(Some(&sandbox)).await;
            once(Some(&protected)).await;
        }
        let mut plain = Vec::with_capacity(RUNS);
        let mut boxed = Vec::with_capacity(RUNS);
        let mut mounted = Vec::with_capacity(RUNS);
        for _ in 0..RUNS {
            plain.push(once(None).await);
            boxed.push(once(Some(&sandbox)).await);
            mounted.push(once(Some(&protected)).await);
        }
        let a = report("unsandboxed", plain);
        let b = report("sandboxed", boxed);
        let c = report("+read-only", mounted);
        let ms = |d: f64| d * 1e3;
        println!(
            "added at the median: {:.3}ms sandboxed, {:.3}ms with read-only dirs (target ≤ 2ms)",
            ms(b.as_secs_f64() - a.as_secs_f64()),
            ms(c.as_secs_f64() - a.as_secs_f64())
        );
    });
}
