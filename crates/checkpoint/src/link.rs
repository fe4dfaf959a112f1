//! A snapshot process's side of the watch daemon (see `daemon`): asking it, starting it, and
//! the record that lets the next process start from where this one left off.
//!
//! The record (`atto-watch-base` in the side repository) pairs a point in the daemon's stream
//! of changes with a tree that holds every change made before that point: the point is taken
//! *before* the snapshot looks at the workspace, so whatever changed after it is reported
//! again and looked at again, never missed. Any process may overwrite it; each record is
//! sound on its own. Nothing here trusts a daemon that cannot answer: any failure to connect,
//! read or parse is "unknown", and the snapshot walks.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::daemon::SOCKET;

/// The record of the last snapshot a daemon's point stands for.
const RECORD: &str = "atto-watch-base";
/// Longest socket path the kernel takes (`sun_path`, with its terminating NUL).
const MAX_SOCKET_PATH: usize = 107;

/// How to start a watch daemon: a program and its leading arguments; `--side DIR
/// --workspace DIR` are appended. The embedding binary provides it (only it knows how to run
/// [`crate::run_watch_daemon`] in a process of its own).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatchDaemon {
    /// The program (usually the running binary).
    pub program: PathBuf,
    /// Its arguments before `--side` and `--workspace`.
    pub args: Vec<OsString>,
}

/// A point in a daemon's stream of changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Clock {
    pub(crate) instance: u64,
    pub(crate) seq: u64,
}

/// What a daemon said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Answer {
    /// These paths (workspace-relative) changed between the point asked about and `now`.
    Paths { now: Clock, paths: Vec<PathBuf> },
    /// It cannot tell, for this reason.
    Unknown(String),
    /// No daemon runs.
    Absent,
    /// A daemon took the request but did not answer in time (stuck, or stopped by a
    /// signal): this process does not ask it again.
    Silent,
}

/// The daemon's socket for `side`, when the kernel can take its path.
fn socket(side: &Path) -> Option<PathBuf> {
    let path = side.join(SOCKET);
    (path.as_os_str().len() <= MAX_SOCKET_PATH).then_some(path)
}

/// Sends one request and reads the answer, waiting at most `timeout` for it.
fn ask(side: &Path, request: &str, timeout: Duration) -> Answer {
    let Some(path) = socket(side) else {
        return Answer::Absent;
    };
    let Ok(mut stream) = UnixStream::connect(&path) else {
        return Answer::Absent;
    };
    let _ = stream.set_read_timeout(Some(timeout));
    let _ = stream.set_write_timeout(Some(timeout));
    let mut reply = Vec::new();
    if let Err(e) = stream
        .write_all(request.as_bytes())
        .and_then(|()| stream.read_to_end(&mut reply))
    {
        let late = matches!(
            e.kind(),
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
        );
        return if late { Answer::Silent } else { Answer::Absent };
    }
    parse(&reply).unwrap_or(Answer::Unknown(
        "the watch daemon's answer was malformed".into(),
    ))
}

pub(crate) fn parse(reply: &[u8]) -> Option<Answer> {
    let end = reply.iter().position(|b| *b == b'\n')?;
    let head = std::str::from_utf8(&reply[..end]).ok()?;
    let mut words = head.splitn(4, ' ');
    let (kind, instance, seq, rest) = (words.next()?, words.next()?, words.next()?, words.next());
    let now = Clock {
        instance: instance.parse().ok()?,
        seq: seq.parse().ok()?,
    };
    match kind {
        "unknown" => Some(Answer::Unknown(
            rest.unwrap_or("no reason given").to_owned(),
        )),
        "ok" => {
            let n: usize = rest?.parse().ok()?;
            let body = &reply[end + 1..];
            let paths: Vec<PathBuf> = body
                .split(|b| *b == 0)
                .filter(|p| !p.is_empty())
                .map(|p| PathBuf::from(std::ffi::OsStr::from_bytes(p)))
                .collect();
            (paths.len() == n && body.last().is_none_or(|b| *b == 0))
                .then_some(Answer::Paths { now, paths })
        }
        _ => None,
    }
}

/// A point in the running daemon's stream ([`Answer::Paths`] with no paths).
pub(crate) fn clock(side: &Path, timeout: Duration) -> Answer {
    ask(side, "clock\n", timeout)
}

/// What changed since `since`.
pub(crate) fn since(side: &Path, since: Clock, timeout: Duration) -> Answer {
    ask(
        side,
        &format!("since {} {}\n", since.instance, since.seq),
        timeout,
    )
}

/// Starts a daemon for `side` in the background, detached from this process's terminal
/// signals; false when it could not be started. It exits by itself (see `daemon`).
pub(crate) fn start(how: &WatchDaemon, side: &Path, workspace: &Path) -> bool {
    use std::os::unix::process::CommandExt as _;
    let spawned = std::process::Command::new(&how.program)
        .args(&how.args)
        .arg("--side")
        .arg(side)
        .arg("--workspace")
        .arg(workspace)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .process_group(0)
        .spawn();
    match spawned {
        Ok(mut child) => {
            // Reaped if it exits while this process runs; otherwise init reaps it.
            let _ = std::thread::Builder::new()
                .name("atto-watch-reaper".into())
                .spawn(move || child.wait());
            true
        }
        Err(_) => false,
    }
}

/// The last record: a daemon point, the tree every change before it is in, the empty
/// directories that went with that tree, and the bound on its bytes the size cap is checked
/// with (see `update::RecordedTree`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Record {
    pub(crate) clock: Clock,
    pub(crate) tree: String,
    pub(crate) empty_dirs: Vec<Vec<u8>>,
    pub(crate) bytes: u64,
}

fn is_oid(s: &str) -> bool {
    s.len() == 40 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

impl Record {
    pub(crate) fn load(side: &Path) -> Option<Record> {
        let bytes = std::fs::read(side.join(RECORD)).ok()?;
        let end = bytes.iter().position(|b| *b == b'\n')?;
        let head = std::str::from_utf8(&bytes[..end]).ok()?;
        let mut words = head.split(' ');
        let (v, instance, seq, tree) = (words.next()?, words.next()?, words.next()?, words.next()?);
        let size: u64 = words.next()?.parse().ok()?;
        let sound = v == "v3" && words.next().is_none() && is_oid(tree);
        if !sound {
            return None;
        }
        let empty_dirs = bytes[end + 1..]
            .split(|b| *b == 0)
            .filter(|d| !d.is_empty())
            .map(<[u8]>::to_vec)
            .collect();
        Some(Record {
            clock: Clock {
                instance: instance.parse().ok()?,
                seq: seq.parse().ok()?,
            },
            tree: tree.to_owned(),
            empty_dirs,
            bytes: size,
        })
    }

    /// Replaces the record (write and rename, so a reader sees the old one or this one).
    pub(crate) fn save(&self, side: &Path) {
        let mut out = format!(
            "v3 {} {} {} {}\n",
            self.clock.instance, self.clock.seq, self.tree, self.bytes
        )
        .into_bytes();
        for dir in &self.empty_dirs {
            out.extend_from_slice(dir);
            out.push(0);
        }
        let tmp = side.join(format!("{RECORD}.{}.tmp", std::process::id()));
        // A record that cannot be written only costs the next process a walk.
        if std::fs::write(&tmp, out).is_ok() && std::fs::rename(&tmp, side.join(RECORD)).is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_parse_and_malformed_ones_do_not() {
        assert_eq!(
            parse(b"ok 7 3 2\nsrc/a.rs\0b c\0"),
            Some(Answer::Paths {
                now: Clock {
                    instance: 7,
                    seq: 3
                },
                paths: vec!["src/a.rs".into(), "b c".into()],
            })
        );
        assert_eq!(
            parse(b"unknown 7 3 a directory was created"),
            None,
            "no newline: cut short"
        );
        assert_eq!(
            parse(b"unknown 7 3 a directory was created\n"),
            Some(Answer::Unknown("a directory was created".into()))
        );
        assert_eq!(
            parse(b"ok 7 3 2\nsrc/a.rs\0"),
            None,
            "fewer paths than said"
        );
        assert_eq!(parse(b"ok 7 3 1\nsrc/a.rs"), None, "cut mid-path");
        assert_eq!(parse(b"ok x 3 0\n"), None);
    }

    #[test]
    fn records_round_trip_and_garbage_is_no_record() {
        let dir = tempfile::tempdir().unwrap();
        let record = Record {
            clock: Clock {
                instance: 9,
                seq: 41,
            },
            tree: "a".repeat(40),
            empty_dirs: vec![b"empty/inner".to_vec(), b"with\nnewline".to_vec()],
            bytes: 123_456,
        };
        record.save(dir.path());
        assert_eq!(Record::load(dir.path()), Some(record.clone()));
        // A record of the earlier format (with an index checksum) is no record.
        std::fs::write(
            dir.path().join(RECORD),
            format!("v2 9 41 {} -\n", "a".repeat(40)),
        )
        .unwrap();
        assert_eq!(Record::load(dir.path()), None);
        std::fs::write(dir.path().join(RECORD), "v3 9 41 nothex 0\n").unwrap();
        assert_eq!(Record::load(dir.path()), None);
        std::fs::write(dir.path().join(RECORD), "").unwrap();
        assert_eq!(Record::load(dir.path()), None);
    }
}
