//! Checkpoint benchmark, two workspaces. Run with `cargo bench -p atto-checkpoint`.
//!
//! Small (10 files), the engine's hot path in a short headless task: open on a fresh data
//! dir, `snapshot_quick` in turn 1, again unchanged, then after one file changed. Reports the
//! median wall time of that sequence, the git processes each step starts, and the CPU those
//! processes used (Linux only: from `/proc/self/stat`, in clock ticks of usually 10 ms, so
//! summed over all runs).
//!
//! Large (5,000 small text files in nested directories): after the first snapshot, one file
//! changes and a snapshot is taken again; reports the median (target ≤ 100 ms), then an
//! unchanged `snapshot_quick`, `list` and `restore`.

use std::error::Error;
use std::path::Path;
use std::time::{Duration, Instant};

use atto_checkpoint::{Checkpoints, Limits, SnapshotLabel};

const FILES: usize = 5_000;
const RUNS: usize = 15;
const SMALL_FILES: usize = 10;
const SMALL_RUNS: usize = 30;

fn main() -> Result<(), Box<dyn Error>> {
    small()?;
    large()
}

fn label(turn: u32) -> SnapshotLabel {
    SnapshotLabel {
        turn,
        tool: Some("write_file".into()),
        note: String::new(),
    }
}

fn small() -> Result<(), Box<dyn Error>> {
    let mut times = Vec::with_capacity(SMALL_RUNS);
    let mut steps = [0u64; 4];
    let mut cpu_ticks = 0;
    for run in 0..SMALL_RUNS {
        let root = tempfile::tempdir()?;
        let workspace = root.path().join("ws");
        for i in 0..SMALL_FILES {
            let dir = workspace.join(format!("src/m{}", i % 3));
            std::fs::create_dir_all(&dir)?;
            std::fs::write(dir.join(format!("f{i}.rs")), format!("fn f{i}() {{}}\n"))?;
        }
        let children_before = children_cpu_ticks();
        let start = Instant::now();
        let checkpoints =
            Checkpoints::open(&root.path().join("data"), &workspace, Limits::default())?;
        let opened = checkpoints.git_calls();
        let first = checkpoints.snapshot_quick(&label(1))?;
        let after_first = checkpoints.git_calls();
        let same = checkpoints.snapshot_quick(&label(1))?;
        let after_same = checkpoints.git_calls();
        std::fs::write(
            workspace.join("src/m1/f4.rs"),
            format!("fn changed{run}() {{}}\n"),
        )?;
        let changed = checkpoints.snapshot_quick(&label(1))?;
        times.push(start.elapsed());
        cpu_ticks += children_cpu_ticks()
            .zip(children_before)
            .map_or(0, |(a, b)| a - b);
        assert_eq!((first.id, same.id, changed.id), (1, 1, 2));
        let calls = [
            opened,
            after_first - opened,
            after_same - after_first,
            checkpoints.git_calls() - after_same,
        ];
        for (total, n) in steps.iter_mut().zip(calls) {
            *total += n;
        }
    }
    times.sort();
    let per_run = |n: u64| n as f64 / SMALL_RUNS as f64;
    println!(
        "small workspace ({SMALL_FILES} files), open + quick + unchanged quick + one change + quick, \
         {SMALL_RUNS} runs: median {:.1} ms, min {:.1} ms, max {:.1} ms",
        ms(times[SMALL_RUNS / 2]),
        ms(times[0]),
        ms(times[SMALL_RUNS - 1])
    );
    println!(
        "  git processes per run: open {}, first quick {}, unchanged quick {}, quick after one change {}",
        per_run(steps[0]),
        per_run(steps[1]),
        per_run(steps[2]),
        per_run(steps[3])
    );
    if children_cpu_ticks().is_some() {
        println!(
            "  git CPU (user + system, /proc ticks at 100 Hz): {:.1} ms per run, {:.2} ms per git process",
            cpu_ticks as f64 * 10.0 / SMALL_RUNS as f64,
            cpu_ticks as f64 * 10.0 / steps.iter().sum::<u64>().max(1) as f64
        );
    }
    Ok(())
}

fn large() -> Result<(), Box<dyn Error>> {
    let root = tempfile::tempdir()?;
    let workspace = root.path().join("ws");
    for i in 0..FILES {
        let dir = workspace.join(format!("d{}/e{}", i % 20, (i / 20) % 10));
        std::fs::create_dir_all(&dir)?;
        std::fs::write(
            dir.join(format!("f{i}.txt")),
            format!("line {i}\n").repeat(20),
        )?;
    }
    // Files written this recently are "racy" and would be read by the fingerprint (too many
    // to bother with, so there would be none): let them settle, as a real checkout has.
    std::thread::sleep(Duration::from_millis(2_100));
    let checkpoints = Checkpoints::open(&root.path().join("data"), &workspace, Limits::default())?;
    let start = Instant::now();
    checkpoints.snapshot(&label(0))?;
    println!(
        "first snapshot of {FILES} files: {:.1} ms",
        ms(start.elapsed())
    );

    let mut times = Vec::with_capacity(RUNS);
    for run in 0..RUNS {
        std::fs::write(workspace.join("d3/e4/f83.txt"), format!("changed {run}\n"))?;
        let start = Instant::now();
        let snap = checkpoints.snapshot(&label(1))?;
        times.push(start.elapsed());
        assert_eq!(snap.files_changed, vec!["d3/e4/f83.txt".to_owned()]);
    }
    report(
        "snapshot after one change",
        &mut times,
        " (target <= 100 ms)",
    );
    times.clear();
    for run in 0..RUNS {
        std::fs::write(workspace.join("d3/e4/f83.txt"), format!("quick {run}\n"))?;
        let start = Instant::now();
        checkpoints.snapshot_quick(&label(1))?;
        times.push(start.elapsed());
    }
    report("snapshot_quick after one change", &mut times, "");
    times.clear();
    let before = checkpoints.git_calls();
    for _ in 0..RUNS {
        let start = Instant::now();
        checkpoints.snapshot_quick(&label(1))?;
        times.push(start.elapsed());
    }
    let calls = checkpoints.git_calls() - before;
    report(
        "snapshot_quick unchanged",
        &mut times,
        &format!(", {calls} git processes in all"),
    );

    let start = Instant::now();
    let listed = checkpoints.list(20)?;
    println!(
        "list(20) of {} snapshots: {:.1} ms",
        listed.len(),
        ms(start.elapsed())
    );
    let start = Instant::now();
    let report = checkpoints.restore(1)?;
    println!(
        "restore to the first snapshot ({} files restored): {:.1} ms",
        report.restored.len(),
        ms(start.elapsed())
    );
    Ok(())
}

fn report(what: &str, times: &mut [Duration], extra: &str) {
    times.sort();
    let n = times.len();
    println!(
        "{what}, {FILES} files, {n} runs: median {:.1} ms, min {:.1} ms, max {:.1} ms{extra}",
        ms(times[n / 2]),
        ms(times[0]),
        ms(times[n - 1])
    );
}

/// User plus system CPU of waited-for children, in clock ticks (Linux only).
fn children_cpu_ticks() -> Option<u64> {
    let stat = std::fs::read_to_string(Path::new("/proc/self/stat")).ok()?;
    // Fields after the command name, which is in parentheses and may hold spaces:
    // state is field 3, cutime and cstime are fields 16 and 17.
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let cutime: u64 = fields.get(13)?.parse().ok()?;
    let cstime: u64 = fields.get(14)?.parse().ok()?;
    Some(cutime + cstime)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
