//! What the git transport of one remote attempt costs on a 5,000-file repository: the
//! base published (every attempt here starts from a new tree, since the one before it
//! merged: the first is timed apart as cold), the
//! node's side (unbundle, checkout, commit, bundle back) around a worker that changes
//! three files, in a pool of clones on the node (the first attempt makes the clone and is
//! timed apart as cold; later ones check their base out over it), and the coordinator's fetch, checkout, change listing and three-way merge.
//! The local worktree an isolated attempt gets is timed apart: a remote attempt makes it while
//! its worker runs.
//!
//! `cargo bench -p atto-swarm --bench transport` (bench/scaleout.py runs it and checks the
//! targets); prints one JSON object.

use std::path::Path;
use std::time::Instant;

use atto_swarm::isolation;
use atto_swarm::remote::checkout::{Clones, Node, Served, serve};
use atto_swarm::remote::transport::{self, ResultEvent};

const FILES: usize = 5_000;
const RUNS: usize = 5;

fn sh(dir: &Path, script: &str) -> Result<(), String> {
    let ok = std::process::Command::new("sh")
        .args(["-c", script])
        .current_dir(dir)
        .status()
        .map_err(|e| e.to_string())?;
    if ok.success() {
        Ok(())
    } else {
        Err(format!("failed: {script}"))
    }
}

fn ms(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1000.0
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

/// 5,000 source-like files of about 1 KB in 50 directories, committed and packed in `ws`.
fn generate(ws: &Path) -> Result<(), String> {
    for i in 0..FILES {
        let dir = ws.join(format!("pkg{:02}", i % 50));
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        let body = format!(
            "# module {i}\n{}",
            "def f(x):\n    return x + 1\n\n".repeat(36)
        );
        std::fs::write(dir.join(format!("m{i:04}.py")), body).map_err(|e| e.to_string())?;
    }
    sh(
        ws,
        // Packed, as a repository with history is; the attempts' own objects stay loose.
        "git init -q && git config user.email b@b && git config user.name b && git add -A && \
         git commit -qm init && git repack -adq",
    )
}

/// The worker of attempt `run`: a shell that changes a file, adds one and deletes one, then
/// reports its result.
fn worker(run: usize) -> Vec<String> {
    let script = format!(
        "read -r op; echo changed{run} >> pkg0{run}/m000{run}.py; echo new > added{run}.txt; \
         rm -f pkg1{run}/m001{run}.py; echo '{{\"type\":\"result\",\"status\":\"completed\"}}'"
    );
    vec!["sh".to_owned(), "-c".to_owned(), script]
}

async fn bench() -> Result<serde_json::Value, String> {
    let ws = tempfile::tempdir().map_err(|e| e.to_string())?;
    let scratch = tempfile::tempdir().map_err(|e| e.to_string())?;
    let node = tempfile::tempdir().map_err(|e| e.to_string())?;
    generate(ws.path())?;
    let mut worktree_ms = Vec::new();
    let mut publish_cold_ms = 0.0;
    let mut publish_ms = Vec::new();
    let mut node_cold_ms = 0.0;
    let mut node_ms = Vec::new();
    let clones = Node {
        clones: Clones::Pooled(node.path().to_owned()),
        name: None,
    };
    let mut receive_ms = Vec::new();
    let mut merge_ms = Vec::new();
    let mut bundle_bytes = 0;
    for run in 0..RUNS {
        let t = Instant::now();
        let snap = isolation::snapshot(ws.path(), scratch.path()).await?;
        let tree =
            isolation::create(ws.path(), &snap, &scratch.path().join(format!("wt{run}"))).await?;
        worktree_ms.push(ms(t));

        let t = Instant::now();
        let base = transport::publish(ws.path(), &snap, scratch.path()).await?;
        let name = transport::branch("bench", &format!("t{run}"), 1);
        let mut stdin = transport::preamble(&base, &name)?;
        if run == 0 {
            publish_cold_ms = ms(t);
        } else {
            publish_ms.push(ms(t));
        }
        bundle_bytes = stdin.len();
        stdin.extend(b"{\"type\":\"user_input\",\"text\":\"go\"}\n");
        let command = worker(run);
        let t = Instant::now();
        let mut out = Vec::new();
        let served = serve(std::io::Cursor::new(stdin), &mut out, &command, &clones).await?;
        if run == 0 {
            node_cold_ms = ms(t);
        } else {
            node_ms.push(ms(t));
        }
        if served != Served::Returned(0) {
            return Err(format!("the node side ended {served:?}"));
        }
        let text = String::from_utf8_lossy(&out);
        let last = text.lines().last().ok_or("no output")?;
        let returned: ResultEvent = serde_json::from_str(last).map_err(|e| e.to_string())?;

        let t = Instant::now();
        transport::receive(ws.path(), &base, &name, &returned, &tree, scratch.path()).await?;
        receive_ms.push(ms(t));
        let t = Instant::now();
        let changes = isolation::changes(&tree, scratch.path()).await?;
        isolation::merge_back(ws.path(), &tree, &changes, scratch.path())
            .await
            .map_err(|c| format!("conflicts: {c:?}"))?;
        merge_ms.push(ms(t));
        isolation::remove(ws.path(), &tree).await;
    }
    let publish = median(publish_ms);
    let node = median(node_ms);
    let receive = median(receive_ms);
    let merge = median(merge_ms);
    Ok(serde_json::json!({
        "files": FILES,
        "runs": RUNS,
        "base_bundle_bytes": bundle_bytes,
        "worktree_ms": median(worktree_ms),
        "publish_cold_ms": publish_cold_ms,
        "publish_warm_ms": publish,
        "node_side_cold_ms": node_cold_ms,
        "node_side_ms": node,
        "fetch_checkout_ms": receive,
        "changes_merge_ms": merge,
        "transport_ms": publish + node + receive + merge,
    }))
}

fn main() {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("transport bench: no runtime: {e}");
            std::process::exit(1);
        }
    };
    match runtime.block_on(bench()) {
        Ok(report) => println!("{report}"),
        Err(e) => {
            eprintln!("transport bench failed: {e}");
            std::process::exit(1);
        }
    }
}
