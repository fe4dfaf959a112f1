//! What the sandbox adds to starting a command: `bash -c true` through tokio::process,
//! unsandboxed vs with `Sandbox::apply` (network off, so Landlock and seccomp both apply;
//! every command gets its own PID, mount and, as root, user namespace), without and with
//! read-only directories (`.git`, `.atto`) and a private `/tmp`, with a placeholder for a
//! missing `.attocode` (made, held by a keeper process and removed per command), and the
//! no-write sandbox, interleaved so all see the same machine load. Targets: ≤ 2 ms added at the
//! median by the sandbox, ≤ 1 ms more for the no-write one.
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
    // Beneath the build's temp dir, not `/tmp`, so the private `/tmp` is mounted.
    let ws = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    for dir in [".git", ".atto"] {
        std::fs::create_dir(ws.path().join(dir)).unwrap();
    }
    let config = SandboxConfig {
        writable: vec![ws.path().to_path_buf(), std::env::temp_dir()],
        ..SandboxConfig::default()
    };
    let with_read_only = SandboxConfig {
        writable: vec![ws.path().to_path_buf()],
        read_only: vec![ws.path().join(".git"), ws.path().join(".atto")],
        private_tmp: true,
        ..config.clone()
    };
    let with_placeholder = SandboxConfig {
        create_read_only: vec![ws.path().join(".attocode")],
        ..with_read_only.clone()
    };
    println!("kernel: {:?}", Sandbox::probe());
    let Some(sandbox) = prepare(&config, "plain") else {
        return;
    };
    let Some(protected) = prepare(&with_read_only, "read-only") else {
        return;
    };
    let Some(placeholder) = prepare(&with_placeholder, "placeholder") else {
        return;
    };
    let Some(no_write) = protected.no_write().cloned() else {
        return;
    };
    println!("no-write: {}", no_write.summary());
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
            once(Some(&placeholder)).await;
            once(Some(&no_write)).await;
        }
        let mut plain = Vec::with_capacity(RUNS);
        let mut boxed = Vec::with_capacity(RUNS);
        let mut mounted = Vec::with_capacity(RUNS);
        let mut held = Vec::with_capacity(RUNS);
        let mut read_only = Vec::with_capacity(RUNS);
        for _ in 0..RUNS {
            plain.push(once(None).await);
            boxed.push(once(Some(&sandbox)).await);
            mounted.push(once(Some(&protected)).await);
            held.push(once(Some(&placeholder)).await);
            read_only.push(once(Some(&no_write)).await);
        }
        assert!(!ws.path().join(".attocode").exists(), "a placeholder was left");
        let a = report("unsandboxed", plain);
        let b = report("sandboxed", boxed);
        let c = report("+read-only", mounted);
        let p = report("+placeholder", held);
        let n = report("no-write", read_only);
        let ms = |d: f64| d * 1e3;
        println!(
            "added at the median: {:.3}ms sandboxed, {:.3}ms with read-only dirs and private /tmp (target ≤ 2ms), \
             {:.3}ms more with a placeholder; \
             no-write {:.3}ms over unsandboxed, {:.3}ms over the workspace sandbox (target ≤ 1ms)",
            ms(b.as_secs_f64() - a.as_secs_f64()),
            ms(c.as_secs_f64() - a.as_secs_f64()),
            ms(p.as_secs_f64() - c.as_secs_f64()),
            ms(n.as_secs_f64() - a.as_secs_f64()),
            ms(n.as_secs_f64() - c.as_secs_f64())
        );
    });
}
