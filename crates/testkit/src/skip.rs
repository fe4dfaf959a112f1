//! Saying that a test could not run on this machine, where the test runner's summary shows
//! it: a test that returns early would otherwise pass in silence.

use std::io::Write as _;

/// Reports that the calling test did not run its checks, and why: on stderr and, when
/// `ATTO_SKIP_LOG` names a file (`scripts/test.sh` sets it and prints the file after the
/// suite), as one line appended to it.
pub fn skipped(test: &str, reason: &str) {
    let line = format!("SKIPPED {test}: {reason}");
    eprintln!("{line}");
    if let Some(path) = std::env::var_os("ATTO_SKIP_LOG")
        && let Ok(mut file) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
    {
        let _ = writeln!(file, "{line}");
    }
}
