//! `atto checkpoints list|gc|prune`: the workspace's file checkpoints from outside a session,
//! with the size of their side repository. `gc` applies the retention policy of the config's
//! `[checkpoints]` now (sessions do it in the background); `prune` applies a stricter one
//! given on the command line. What a collection does belongs to `atto-checkpoint`.

use std::path::Path;

use atto_checkpoint::{Checkpoints, Collected, Limits};

use crate::{ExitCode, Failure};
use atto_config::Config;

/// `atto checkpoints`: this workspace's file checkpoints.
#[derive(Debug, clap::Subcommand)]
pub enum CheckpointsCommand {
    /// The newest checkpoints of every session, newest first, and the side repository's size.
    List {
        /// How many to show.
        #[arg(long, default_value_t = 20)]
        limit: usize,
    },
    /// Apply the retention policy now (`[checkpoints] keep_days`, `max_bytes`), copy in what
    /// checkpoints borrow from your repository, and drop what no checkpoint uses.
    Gc,
    /// As `gc`, keeping only checkpoints younger than `--keep-days` (the newest always stays).
    Prune {
        /// Days a checkpoint is kept.
        #[arg(long)]
        keep_days: u32,
        /// Bytes the side repository may take (default: `[checkpoints] max_bytes`).
        #[arg(long)]
        max_bytes: Option<u64>,
    },
}

pub fn run(
    command: CheckpointsCommand,
    config: &Config,
    workspace: &Path,
) -> Result<ExitCode, Failure> {
    let limits = crate::config::checkpoint_limits(config);
    let limits = match &command {
        CheckpointsCommand::Prune {
            keep_days,
            max_bytes,
        } => Limits {
            keep_days: *keep_days,
            max_bytes: max_bytes.unwrap_or(limits.max_bytes),
            ..limits
        },
        CheckpointsCommand::List { .. } | CheckpointsCommand::Gc => limits,
    };
    let checkpoints = open(workspace, limits)?;
    match command {
        CheckpointsCommand::List { limit } => {
            let listed = checkpoints.list(limit).map_err(failed)?;
            for s in &listed {
                let when = age(s.created_at_ms);
                let tool = s.tool.as_deref().unwrap_or("turn end");
                let session = s.session.as_deref().unwrap_or("-");
                println!(
                    "{:>5}  {when:>8}  turn {:<4} {tool:<12} session {session}  {} file(s)",
                    s.id,
                    s.turn,
                    s.files_changed.len()
                );
            }
            let bytes = checkpoints.side_bytes().map_err(failed)?;
            println!(
                "{} checkpoint(s) shown; side repository {} ({})",
                listed.len(),
                size(bytes),
                checkpoints.side_repo().display()
            );
        }
        CheckpointsCommand::Gc | CheckpointsCommand::Prune { .. } => {
            let started = std::time::Instant::now();
            match checkpoints.collect().map_err(failed)? {
                Some(collected) => report(&collected, started.elapsed()),
                None => {
                    println!("another atto process is collecting these checkpoints; nothing done");
                }
            }
        }
    }
    Ok(ExitCode::Ok)
}

/// The workspace's checkpoints, in the data dir beside the session database (as sessions
/// open them).
fn open(workspace: &Path, limits: Limits) -> Result<Checkpoints, Failure> {
    let db = atto_store::default_path().map_err(|e| Failure::usage(e.to_string()))?;
    let dir = db.parent().unwrap_or(Path::new("."));
    Checkpoints::open(dir, workspace, limits).map_err(failed)
}

fn failed(e: atto_checkpoint::CheckpointError) -> Failure {
    Failure {
        code: ExitCode::Failed,
        message: e.to_string(),
    }
}

fn report(c: &Collected, took: std::time::Duration) {
    println!(
        "dropped {} checkpoint(s), kept {}; side repository {} -> {} in {:.1} s",
        c.dropped.len(),
        c.kept,
        size(c.bytes_before),
        size(c.bytes_after),
        took.as_secs_f64()
    );
}

/// How long ago `created_at_ms` (Unix milliseconds) was, roughly.
fn age(created_at_ms: i64) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
    let secs = (now - created_at_ms).max(0) / 1000;
    match secs {
        s if s < 60 => format!("{s} s ago"),
        s if s < 3600 => format!("{} min ago", s / 60),
        s if s < 86_400 => format!("{} h ago", s / 3600),
        s => format!("{} d ago", s / 86_400),
    }
}

fn size(bytes: u64) -> String {
    const MIB: u64 = 1024 * 1024;
    if bytes >= MIB {
        format!("{:.1} MiB", bytes as f64 / MIB as f64)
    } else {
        format!("{} KiB", bytes.div_ceil(1024))
    }
}
