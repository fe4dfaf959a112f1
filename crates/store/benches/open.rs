//! What opening the store costs: a new database (created and migrated) and an existing one
//! (checked, nothing to migrate), with and without the quick integrity check, and how that
//! check grows with the database. Prints wall time and the opening thread's CPU time.
//! `cargo bench -p atto-store --bench open`

use std::path::Path;
use std::time::{Duration, Instant};

use atto_store::{AuditEntry, IntegrityCheck, OpenOptions, Store, StoreError};

/// CPU time the calling thread has used so far; `None` if the clock is unavailable.
fn thread_cpu() -> Option<Duration> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the duration of the call.
    #[expect(
        unsafe_code,
        reason = "reading the thread CPU clock has no safe std API"
    )]
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &raw mut ts) };
    let secs = u64::try_from(ts.tv_sec).ok()?;
    let nanos = u32::try_from(ts.tv_nsec).ok()?;
    (rc == 0).then(|| Duration::new(secs, nanos))
}

struct Sample {
    wall: Duration,
    cpu: Option<Duration>,
}

fn measure(f: impl FnOnce() -> Result<Store, StoreError>) -> Result<(Sample, Store), StoreError> {
    let cpu0 = thread_cpu();
    let t0 = Instant::now();
    let store = f()?;
    let wall = t0.elapsed();
    let cpu = cpu0.zip(thread_cpu()).map(|(a, b)| b.saturating_sub(a));
    Ok((Sample { wall, cpu }, store))
}

fn report(label: &str, mut samples: Vec<Sample>) {
    let pct = |v: &mut Vec<Duration>, p: usize| {
        v.sort_unstable();
        v[(v.len() - 1) * p / 100]
    };
    let mut wall: Vec<_> = samples.iter().map(|s| s.wall).collect();
    let cpu: Option<Vec<_>> = samples.drain(..).map(|s| s.cpu).collect();
    let (w50, w90) = (pct(&mut wall, 50), pct(&mut wall, 90));
    let cpu = cpu
        .map(|mut c| {
            format!(
                "cpu p50 {:>8.1?} p90 {:>8.1?}",
                pct(&mut c, 50),
                pct(&mut c, 90)
            )
        })
        .unwrap_or_else(|| "cpu unknown".to_owned());
    println!("{label:<44} wall p50 {w50:>8.1?} p90 {w90:>8.1?}   {cpu}");
}

fn options(check: IntegrityCheck) -> OpenOptions {
    OpenOptions {
        integrity_check: check,
        ..OpenOptions::default()
    }
}

fn fill(path: &Path, rows: i64) -> Result<(), StoreError> {
    let store = Store::open(path)?;
    for at in 0..rows {
        store.audit_blocking(AuditEntry {
            at,
            session_id: Some("0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b".to_owned()),
            workspace: Some("/home/me/src/project".to_owned()),
            tool: "bash".to_owned(),
            target: Some(format!("cargo test --package atto-store -- case_{at}")),
            decision: "allow".to_owned(),
            outcome: Some("auto".to_owned()),
            decided_by: "bash(cargo test*)".to_owned(),
            mode: Some("interactive".to_owned()),
        })?;
    }
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let tmp = tempfile::tempdir()?;
    let runs = 200;

    for check in [IntegrityCheck::Quick, IntegrityCheck::Skip] {
        let mut new = Vec::new();
        for i in 0..runs {
            let path = tmp.path().join(format!("new-{check:?}-{i}.db"));
            new.push(measure(|| Store::open_with(&path, options(check)))?.0);
        }
        report(&format!("open new db (create + migrate), {check:?}"), new);
    }

    let existing = tmp.path().join("existing.db");
    fill(&existing, 100)?;
    for check in [IntegrityCheck::Quick, IntegrityCheck::Skip] {
        let mut samples = Vec::new();
        for _ in 0..runs {
            let (sample, store) = measure(|| Store::open_with(&existing, options(check)))?;
            samples.push(sample);
            drop(store);
        }
        report(&format!("open existing db (100 rows), {check:?}"), samples);
    }

    let mut drops = Vec::new();
    for _ in 0..runs {
        let store = Store::open(&existing)?;
        let t0 = Instant::now();
        drop(store);
        drops.push(Sample {
            wall: t0.elapsed(),
            cpu: None,
        });
    }
    report("drop last handle (join writer, close)", drops);

    for rows in [10_000, 100_000] {
        let path = tmp.path().join(format!("big-{rows}.db"));
        fill(&path, rows)?;
        let size = std::fs::metadata(&path)?.len();
        for check in [IntegrityCheck::Quick, IntegrityCheck::Skip] {
            let mut samples = Vec::new();
            for _ in 0..20 {
                let (sample, store) = measure(|| Store::open_with(&path, options(check)))?;
                samples.push(sample);
                drop(store);
            }
            let label = format!(
                "open existing, {rows} rows ({} KiB), {check:?}",
                size / 1024
            );
            report(&label, samples);
        }
    }
    Ok(())
}
