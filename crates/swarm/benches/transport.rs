//! What the git transport of one remote attempt costs on a 5,000-file repository: the
//! base published (every attempt here starts from a new tree, since the one before it
//! merged), the node's side (unbundle, checkout, commit, bundle back) around a worker that
//! changes three files, in a pool of clones on the node, and the coordinator's fetch,
//! checkout, change listing and three-way merge. The first attempt is timed apart as cold:
//! its node makes a new clone and is sent the whole base; later ones take that clone back,
//! say what it holds (`git_have`), are sent only what changed since, and check their base
//! out over it.
//!
//! The worker takes as long as a task of `ATTO_BENCH_REPLIES` model replies (3 unless set)
//! of 200 ms each, which is not counted. Meanwhile the coordinator makes the attempt's
//! local worktree (the one the attempt before left, parked), as a remote attempt does;
//! only what of that outlasts the worker counts (`worktree_wait_ms`).
//!
//! `cargo bench -p atto-swarm --bench transport` (bench/scaleout.py runs it and checks the
//! targets); prints one JSON object.

use std::path::Path;
use std::time::Instant;

use atto_swarm::isolation;
use atto_swarm::remote::checkout::{Clones, Node, Served, serve};
use atto_swarm::remote::transport::{self, HaveEvent, ResultEvent};
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _};

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

/// The worker of attempt `run`: a shell that waits as long as the task's replies take,
/// changes a file, adds one and deletes one, then reports its result.
fn worker(run: usize, task_ms: u64) -> Vec<String> {
    let script = format!(
        "read -r op; sleep {}.{:03}; echo changed{run} >> pkg0{run}/m000{run}.py; \
         echo new > added{run}.txt; rm -f pkg1{run}/m001{run}.py; \
         echo '{{\"type\":\"result\",\"status\":\"completed\"}}'",
        task_ms / 1000,
        task_ms % 1000
    );
    vec!["sh".to_owned(), "-c".to_owned(), script]
}

/// The task's replies: `ATTO_BENCH_REPLIES`, 3 unless set.
fn replies() -> Result<u64, String> {
    std::env::var("ATTO_BENCH_REPLIES").map_or(Ok(3), |v| {
        v.parse()
            .map_err(|e| format!("ATTO_BENCH_REPLIES={v}: {e}"))
    })
}

/// Timings of every attempt, in ms.
#[derive(Default)]
struct Times {
    snapshot: Vec<f64>,
    worktree: Vec<f64>,
    worktree_wait: Vec<f64>,
    publish: Vec<f64>,
    node: Vec<f64>,
    receive: Vec<f64>,
    merge: Vec<f64>,
}

async fn bench() -> Result<serde_json::Value, String> {
    let task_ms = replies()? * 200;
    let ws = tempfile::tempdir().map_err(|e| e.to_string())?;
    let scratch = tempfile::tempdir().map_err(|e| e.to_string())?;
    let node = tempfile::tempdir().map_err(|e| e.to_string())?;
    generate(ws.path())?;
    let clones = Node {
        clones: Clones::Pooled(node.path().to_owned()),
        name: None,
    };
    // Finished attempts' worktrees parked and taken again, as the coordinator does.
    let pool = isolation::Pool::new(scratch.path().join("parked"), 1);
    let mut times = Times::default();
    let mut bundle_bytes = Vec::new();
    for run in 0..RUNS {
        let t = Instant::now();
        let snap = isolation::snapshot(ws.path(), scratch.path()).await?;
        times.snapshot.push(ms(t));

        // The worker runs on the node while the coordinator takes the attempt's worktree
        // from its pool. The node says what its clone holds; the base is published for
        // that.
        let name = transport::branch("bench", &format!("t{run}"), 1);
        let command = worker(run, task_ms);
        let (to_node, node_in) = tokio::io::duplex(1 << 16);
        let (node_out, from_node) = tokio::io::duplex(1 << 16);
        let started = Instant::now();
        let making = async {
            let dir = scratch.path().join(format!("wt{run}"));
            let tree = pool
                .take(ws.path(), &snap, &dir, isolation::Ready::Result)
                .await;
            (tree, ms(started))
        };
        let serving = async {
            let served = serve(node_in, node_out, &command, &clones).await;
            (served, ms(started))
        };
        let coordinating =
            publish_for_node(from_node, to_node, ws.path(), &snap, scratch.path(), &name);
        let ((tree, made), (served, served_ms), coordinated) =
            tokio::join!(making, serving, coordinating);
        let (base, published, bytes, out) = coordinated?;
        times.publish.push(published);
        bundle_bytes.push(bytes);
        times.worktree.push(made);
        times.worktree_wait.push(ms(started) - served_ms);
        times.node.push(served_ms - task_ms as f64 - published);
        let tree = tree?;
        if served? != Served::Returned(0) {
            return Err("the node side did not return its branch".into());
        }
        let last = out.lines().last().ok_or("no output")?;
        let returned: ResultEvent = serde_json::from_str(last).map_err(|e| e.to_string())?;

        let t = Instant::now();
        transport::receive(ws.path(), &base, &name, &returned, &tree).await?;
        times.receive.push(ms(t));
        let t = Instant::now();
        // As the coordinator lists a remote result's changes: its commit against the base.
        let changes = isolation::changes_returned(&tree, &returned.commit).await?;
        isolation::merge_back(ws.path(), &tree, &changes, scratch.path())
            .await
            .map_err(|c| format!("conflicts: {c:?}"))?;
        times.merge.push(ms(t));
        pool.give_back(ws.path(), &tree).await;
    }
    pool.drain(ws.path()).await;
    report(&times, task_ms, bundle_bytes)
}

/// The coordinator's end of the launcher's pipes: the node's `git_have` read, the base
/// published for it and sent with the task, the node's stdout read to its end. Returns the
/// base commit, the ms publishing took, the bytes sent ahead of the task, the output.
async fn publish_for_node(
    from_node: tokio::io::DuplexStream,
    mut to_node: tokio::io::DuplexStream,
    ws: &Path,
    snap: &str,
    scratch: &Path,
    name: &str,
) -> Result<(String, f64, usize, String), String> {
    let mut reader = tokio::io::BufReader::new(from_node);
    let mut have = String::new();
    reader
        .read_line(&mut have)
        .await
        .map_err(|e| e.to_string())?;
    let haves = serde_json::from_str::<HaveEvent>(&have)
        .map_err(|e| format!("{have:?}: {e}"))?
        .commits;
    let t = Instant::now();
    let base = transport::base_commit(ws, snap).await?;
    let bundle = transport::bundle_for(ws, &base, &haves, scratch).await?;
    let mut stdin = transport::preamble_of(&base, bundle.as_deref(), name)?;
    let published = ms(t);
    let bytes = stdin.len();
    stdin.extend(b"{\"type\":\"user_input\",\"text\":\"go\"}\n");
    to_node.write_all(&stdin).await.map_err(|e| e.to_string())?;
    drop(to_node);
    let mut out = String::new();
    reader
        .read_to_string(&mut out)
        .await
        .map_err(|e| e.to_string())?;
    Ok((base, published, bytes, out))
}

/// The JSON report: the first attempt apart (cold), medians of the others.
fn report(
    times: &Times,
    task_ms: u64,
    bundle_bytes: Vec<usize>,
) -> Result<serde_json::Value, String> {
    let warm = |v: &[f64]| median(v[1..].to_vec());
    let (publish, node, wait) = (
        warm(&times.publish),
        warm(&times.node),
        warm(&times.worktree_wait),
    );
    let (receive, merge) = (warm(&times.receive), warm(&times.merge));
    Ok(serde_json::json!({
        "files": FILES,
        "runs": RUNS,
        "task_ms": task_ms,
        "base_bytes_cold": bundle_bytes[0],
        "base_bytes": bundle_bytes[1..],
        "snapshot_ms": median(times.snapshot.clone()),
        "worktree_ms": median(times.worktree.clone()),
        "publish_cold_ms": times.publish[0],
        "publish_warm_ms": publish,
        "node_side_cold_ms": times.node[0],
        "node_side_ms": node,
        "worktree_wait_ms": wait,
        "fetch_checkout_ms": receive,
        "changes_merge_ms": merge,
        "transport_ms": publish + node + wait + receive + merge,
        "coordinator_transport_ms": publish + receive + merge,
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
