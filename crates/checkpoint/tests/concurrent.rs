//! Many writers on one side repository: threads with their own handles, and separate
//! processes (this test binary started again as a worker), all snapshotting one workspace.
// Tests fail loudly on setup errors; workspace lints deny these outside #[test] functions.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use atto_checkpoint::{Checkpoints, Limits, SnapshotLabel};

const WRITERS: usize = 8;
const TRIALS: u32 = 3;
/// Set in a worker process: `<workspace>\n<data dir>\n<writer number>`.
const WORKER_ENV: &str = "ATTO_CHECKPOINT_TEST_WORKER";

fn label(turn: u32) -> SnapshotLabel {
    SnapshotLabel {
        turn,
        tool: Some("bash".into()),
        note: format!("trial {turn}"),
    }
}

/// What one writer does: before each of its "mutating calls" (rewriting its own file) it
/// takes a snapshot as session `s<k>`. Returns `(id, trial)` per snapshot.
fn write_and_snapshot(ws: &Path, data: &Path, k: usize) -> Vec<(u32, u32)> {
    let cp = Checkpoints::open(data, ws, Limits::default())
        .unwrap()
        .for_session(&format!("s{k}"));
    (0..TRIALS)
        .map(|trial| {
            let snapshot = cp.snapshot_quick(&label(trial)).unwrap();
            fs::write(ws.join(format!("w{k}.txt")), format!("{k} after {trial}\n")).unwrap();
            (snapshot.id, trial)
        })
        .collect()
}

/// What writer `k`'s file held when its snapshot of `trial` was taken.
fn expected(k: usize, trial: u32) -> Option<String> {
    trial.checked_sub(1).map(|t| format!("{k} after {t}\n"))
}

/// Every snapshot is listed once, under its session, and restores that writer's file.
fn check(ws: &Path, data: &Path, taken: &[Vec<(u32, u32)>]) {
    let cp = Checkpoints::open(data, ws, Limits::default()).unwrap();
    let ids: BTreeSet<u32> = taken.iter().flatten().map(|(id, _)| *id).collect();
    assert_eq!(
        ids.len(),
        WRITERS * TRIALS as usize,
        "ids collided: {taken:?}"
    );
    let listed = cp.list(usize::MAX).unwrap();
    assert_eq!(listed.len(), ids.len(), "{listed:?}");
    for (k, snapshots) in taken.iter().enumerate() {
        let mine = cp.list_for_session(&format!("s{k}"), usize::MAX).unwrap();
        let mut mine: Vec<u32> = mine.iter().map(|s| s.id).collect();
        mine.reverse();
        let want: Vec<u32> = snapshots.iter().map(|(id, _)| *id).collect();
        assert_eq!(mine, want, "writer {k}'s session");
    }
    for (k, snapshots) in taken.iter().enumerate() {
        for &(id, trial) in snapshots {
            cp.restore(id).unwrap();
            let now = fs::read_to_string(ws.join(format!("w{k}.txt"))).ok();
            assert_eq!(now, expected(k, trial), "checkpoint {id}");
        }
    }
}

fn dirs() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let root = tempfile::tempdir().unwrap();
    let ws = root.path().join("ws");
    let data = root.path().join("data");
    fs::create_dir_all(&ws).unwrap();
    fs::write(ws.join("shared.txt"), "shared\n").unwrap();
    (root, ws, data)
}

#[test]
fn threads_with_their_own_handles_never_share_an_id() {
    let (_root, ws, data) = dirs();
    let workers: Vec<_> = (0..WRITERS)
        .map(|k| {
            let (ws, data) = (ws.clone(), data.clone());
            std::thread::spawn(move || write_and_snapshot(&ws, &data, k))
        })
        .collect();
    let taken: Vec<_> = workers.into_iter().map(|w| w.join().unwrap()).collect();
    check(&ws, &data, &taken);
}

#[test]
fn processes_never_share_an_id_and_leave_no_index_behind() {
    for _ in 0..TRIALS {
        let (_root, ws, data) = dirs();
        let exe = std::env::current_exe().unwrap();
        // All started before any is waited for: they run at once.
        let children: Vec<_> = (0..WRITERS)
            .map(|k| {
                Command::new(&exe)
                    .args([
                        "--exact",
                        "worker_process",
                        "--nocapture",
                        "--test-threads=1",
                    ])
                    .env(
                        WORKER_ENV,
                        format!("{}\n{}\n{k}", ws.display(), data.display()),
                    )
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        let outputs: Vec<_> = children
            .into_iter()
            .map(|c| c.wait_with_output().unwrap())
            .collect();
        let taken: Vec<Vec<(u32, u32)>> = outputs
            .iter()
            .map(|out| {
                let stdout = String::from_utf8_lossy(&out.stdout);
                assert!(
                    out.status.success(),
                    "{stdout}{}",
                    String::from_utf8_lossy(&out.stderr)
                );
                stdout
                    .lines()
                    // The harness prints "test worker_process ... " on the first line.
                    .filter_map(|l| l.split("taken ").nth(1))
                    .map(|l| {
                        let (id, trial) = l.split_once(' ').unwrap();
                        (id.parse().unwrap(), trial.parse().unwrap())
                    })
                    .collect()
            })
            .collect();
        check(&ws, &data, &taken);
        let side = Checkpoints::open(&data, &ws, Limits::default()).unwrap();
        let indexes = fs::read_dir(side.side_repo().join("atto-indexes"))
            .unwrap()
            .count();
        assert_eq!(
            indexes, 0,
            "every handle removed its private index when it went"
        );
    }
}

/// The body of one worker process started by the test above; on its own (no worker
/// environment) it only checks that the variable is absent.
#[test]
fn worker_process() {
    let Ok(spec) = std::env::var(WORKER_ENV) else {
        return;
    };
    let mut parts = spec.lines();
    let (ws, data) = (parts.next().unwrap(), parts.next().unwrap());
    let k = parts.next().unwrap().parse().unwrap();
    for (id, trial) in write_and_snapshot(Path::new(ws), Path::new(data), k) {
        println!("taken {id} {trial}");
    }
}

/// A process that crashed while creating a checkpoint's ref leaves its lock file behind:
/// later snapshots wait briefly, then pass over that id instead of failing for good.
#[test]
fn a_lock_file_left_by_a_crashed_process_does_not_block_snapshots() {
    let (_root, ws, data) = dirs();
    let cp = Checkpoints::open(&data, &ws, Limits::default()).unwrap();
    let first = cp.snapshot_quick(&label(1)).unwrap();
    let refs = cp.side_repo().join("refs/atto/checkpoints");
    fs::write(refs.join(format!("{:010}.lock", first.id + 1)), "").unwrap();
    fs::write(ws.join("shared.txt"), "changed\n").unwrap();
    let second = cp.snapshot_quick(&label(1)).unwrap();
    assert_eq!(second.id, first.id + 2);
    cp.restore(first.id).unwrap();
    assert_eq!(
        fs::read_to_string(ws.join("shared.txt")).unwrap(),
        "shared\n"
    );
}

/// Collections running while eight writers snapshot lose none of their snapshots: objects a
/// snapshot wrote are never dropped before its ref holds them.
#[test]
fn collecting_under_concurrent_writers_loses_no_snapshot() {
    let (_root, ws, data) = dirs();
    let done = std::sync::atomic::AtomicBool::new(false);
    let taken: Vec<_> = std::thread::scope(|s| {
        let collector = s.spawn(|| {
            let cp = Checkpoints::open(&data, &ws, Limits::default()).unwrap();
            let mut runs = 0;
            while !done.load(std::sync::atomic::Ordering::Relaxed) || runs == 0 {
                cp.collect().unwrap();
                runs += 1;
            }
            runs
        });
        let workers: Vec<_> = (0..WRITERS)
            .map(|k| {
                let (ws, data) = (&ws, &data);
                s.spawn(move || write_and_snapshot(ws, data, k))
            })
            .collect();
        let taken: Vec<_> = workers.into_iter().map(|w| w.join()).collect();
        // Before anything can fail: the collector stops only when told.
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        assert!(collector.join().unwrap() > 0);
        taken.into_iter().map(|t| t.unwrap()).collect()
    });
    check(&ws, &data, &taken);
}
