//! The watch daemon: a file watcher that outlives the atto process that started it, so that
//! the *next* process's first snapshot of a large workspace asks it what changed instead of
//! walking every file (a process's own watcher only knows what happened while it ran).
//!
//! One daemon per side repository, started in the background by a process whose snapshot had
//! to walk a large workspace (see `link`), found by its socket in the side repository
//! (`atto-watch.sock`, so only the user who owns the data dir reaches it) and kept unique by a
//! lock file. It arms the same watches a snapshot walk would (see `walk`, `watch`), then
//! answers one request per connection:
//!
//! - `clock` → `ok <instance> <seq> 0`: a point in the stream of changes;
//! - `since <instance> <seq>` → `ok <instance> <now> <n>` and `n` NUL-terminated paths that
//!   changed after that point, or `unknown <instance> <now> <reason>`.
//!
//! Every request first reads every event the kernel has queued, and the kernel queues an
//! event inside the system call that changes the file, so a change that returned before the
//! request is always counted (the same argument as `watch`). The daemon never answers for a
//! time it could not see: when its watcher loses track (an overflow, a directory created or
//! moved, a `.gitignore` edited) it stops, and the next snapshot walks and starts a new one.
//! It also stops after `idle` without requests, and when the workspace or its socket goes.
//! It does not decide what a snapshot holds, and it never writes to the workspace.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime};

use crate::error::CheckpointError;
use crate::fingerprint::Builder;
use crate::walk;
use crate::watch::{Since, Watcher};

/// The daemon's socket, in the side repository.
pub(crate) const SOCKET: &str = "atto-watch.sock";
/// Where the socket is bound before it is renamed to [`SOCKET`] (no longer a name).
const BINDING: &str = "atto-watch.bind";
/// Held by the running daemon: a second one exits at once.
const LOCK: &str = "atto-watch.lock";
/// Above this many changed paths kept for clients, a walk is the cheaper answer.
const MAX_KEPT: usize = 10_000;
/// The longest request line read from the socket (requests are `clock` and `since I S`);
/// a longer one is answered as malformed once this much is read.
const MAX_REQUEST: u64 = 256;
/// How often queued events are read (so the kernel's queue does not overflow while nobody
/// asks) and the stop conditions checked.
const TICK: Duration = Duration::from_millis(250);

/// How the daemon runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WatchOptions {
    /// Stop after this long without a request.
    pub idle: Duration,
    /// The walk that arms the watches stops above this many bytes of files, as a snapshot's
    /// would (there is nothing to watch for then).
    pub max_workspace_bytes: u64,
}

impl Default for WatchOptions {
    fn default() -> Self {
        Self {
            idle: Duration::from_secs(600),
            max_workspace_bytes: crate::Limits::default().max_workspace_bytes,
        }
    }
}

/// Why a daemon stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WatchStop {
    /// Another daemon already watches this side repository.
    AlreadyRunning,
    /// No request came for the idle time.
    Idle,
    /// The watcher lost track of changes, for this reason.
    Lost(String),
    /// The workspace or the daemon's socket went away.
    Gone,
}

/// What the request handler and the ticker share.
struct Changes {
    watcher: Watcher,
    instance: u64,
    seq: u64,
    /// Paths changed, each with the `seq` of the read that saw it last.
    kept: Vec<(u64, PathBuf)>,
    lost: Option<String>,
    last_request: Instant,
}

impl Changes {
    /// Reads what the kernel queued; a new batch gets the next `seq`.
    fn read(&mut self) {
        if self.lost.is_some() {
            return;
        }
        match self.watcher.take() {
            Since::Paths(paths) if paths.is_empty() => {}
            Since::Paths(paths) => {
                self.seq += 1;
                let seq = self.seq;
                self.kept.extend(paths.into_iter().map(|p| (seq, p)));
                if self.kept.len() > MAX_KEPT {
                    self.lost = Some("too many paths changed to keep".into());
                }
            }
            Since::Unknown(why) => self.lost = Some(why.into()),
        }
    }

    /// The answer to one request line.
    fn answer(&mut self, request: &str) -> Vec<u8> {
        self.read();
        self.last_request = Instant::now();
        let (instance, now) = (self.instance, self.seq);
        if let Some(why) = &self.lost {
            return format!("unknown {instance} {now} {why}\n").into_bytes();
        }
        let mut words = request.split_whitespace();
        match (words.next(), words.next(), words.next()) {
            (Some("clock"), None, None) => format!("ok {instance} {now} 0\n").into_bytes(),
            (Some("since"), Some(i), Some(s)) => {
                let (Ok(i), Ok(s)) = (i.parse::<u64>(), s.parse::<u64>()) else {
                    return format!("unknown {instance} {now} malformed request\n").into_bytes();
                };
                if i != instance {
                    return format!("unknown {instance} {now} the watch daemon restarted\n")
                        .into_bytes();
                }
                if s > now {
                    return format!("unknown {instance} {now} a point it never gave\n")
                        .into_bytes();
                }
                let paths: BTreeSet<&PathBuf> = self
                    .kept
                    .iter()
                    .filter(|(seq, _)| *seq > s)
                    .map(|(_, p)| p)
                    .collect();
                let mut out = format!("ok {instance} {now} {}\n", paths.len()).into_bytes();
                for p in paths {
                    out.extend_from_slice(p.as_os_str().as_bytes());
                    out.push(0);
                }
                out
            }
            _ => format!("unknown {instance} {now} malformed request\n").into_bytes(),
        }
    }
}

/// Runs the watch daemon of the side repository `side` for `workspace` until one of the
/// [`WatchStop`] reasons; the socket is removed on the way out. Returns an error only when
/// it could not start (the workspace cannot be walked, the socket cannot be made).
pub fn run_watch_daemon(
    side: &Path,
    workspace: &Path,
    options: WatchOptions,
) -> Result<WatchStop, CheckpointError> {
    let lock_path = side.join(LOCK);
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(|e| CheckpointError::io(&lock_path, e))?;
    if lock.try_lock().is_err() {
        return Ok(WatchStop::AlreadyRunning);
    }
    let Some(mut watcher) = Watcher::new() else {
        return Ok(WatchStop::Lost("no file watcher on this system".into()));
    };
    watcher.start_walk();
    let workspace = workspace
        .canonicalize()
        .map_err(|e| CheckpointError::io(workspace, e))?;
    walk::survey(
        &workspace,
        options.max_workspace_bytes,
        Builder::new(SystemTime::now(), None),
        walk::Observers {
            watcher: Some(&mut watcher),
            compare: None,
        },
    )?;
    let socket = side.join(SOCKET);
    let listener = listen(side, &socket)?;
    let changes = Arc::new(Mutex::new(Changes {
        watcher,
        instance: fastrand::u64(1..),
        seq: 0,
        kept: Vec::new(),
        lost: None,
        last_request: Instant::now(),
    }));
    let stopping = Arc::new(AtomicBool::new(false));
    let accept = {
        let (changes, stopping) = (Arc::clone(&changes), Arc::clone(&stopping));
        std::thread::Builder::new()
            .name("atto-watch-accept".into())
            .spawn(move || {
                for stream in listener.incoming().flatten() {
                    serve(stream, &changes, &stopping);
                    if stopping.load(Ordering::Acquire) {
                        break;
                    }
                }
            })
            .map_err(|e| CheckpointError::io(&socket, e))?
    };
    let stop = tick(&changes, &socket, &workspace, options.idle);
    // A stopping daemon answers nothing but "unknown". One connection of its own wakes the
    // accept thread, which then lets go of the listener and the watcher (its inotify
    // instance counts against a per-user limit) before the lock says another may start.
    stopping.store(true, Ordering::Release);
    let woken = UnixStream::connect(&socket).is_ok();
    let _ = std::fs::remove_file(&socket);
    if woken {
        let _ = accept.join();
    }
    drop(changes);
    drop(lock);
    Ok(stop)
}

/// The daemon's socket at `socket`, listening. Bound and listening under another name,
/// then renamed into place: a client that finds the socket can connect (between `bind` and
/// `listen` it would be refused), and never before its permissions are set. The lock says
/// no daemon runs: a socket left behind under either name is a dead one's.
fn listen(side: &Path, socket: &Path) -> Result<UnixListener, CheckpointError> {
    let binding = side.join(BINDING);
    let _ = std::fs::remove_file(&binding);
    let listener = UnixListener::bind(&binding).map_err(|e| CheckpointError::io(&binding, e))?;
    // Only its owner may ask (connecting takes write permission on the socket).
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&binding, std::fs::Permissions::from_mode(0o600))
            .map_err(|e| CheckpointError::io(&binding, e))?;
    }
    std::fs::rename(&binding, socket).map_err(|e| CheckpointError::io(socket, e))?;
    Ok(listener)
}

/// Answers one connection: one request line, one answer.
fn serve(stream: UnixStream, changes: &Mutex<Changes>, stopping: &AtomicBool) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(1)));
    let _ = stream.set_write_timeout(Some(Duration::from_secs(1)));
    let mut line = String::new();
    let mut reader = BufReader::new((&stream).take(MAX_REQUEST));
    if reader.read_line(&mut line).is_err() {
        return;
    }
    let answer = if stopping.load(Ordering::Acquire) {
        b"unknown 0 0 the watch daemon is stopping\n".to_vec()
    } else {
        changes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .answer(&line)
    };
    let _ = (&stream).write_all(&answer);
}

/// Reads queued events every tick (so the kernel's queue does not overflow while nobody
/// asks) until it is time to stop.
fn tick(changes: &Mutex<Changes>, socket: &Path, workspace: &Path, idle: Duration) -> WatchStop {
    loop {
        std::thread::sleep(TICK);
        let mut c = changes.lock().unwrap_or_else(PoisonError::into_inner);
        c.read();
        if let Some(why) = c.lost.clone() {
            return WatchStop::Lost(why);
        }
        if c.last_request.elapsed() >= idle {
            return WatchStop::Idle;
        }
        drop(c);
        if !socket.exists() || !workspace.is_dir() {
            return WatchStop::Gone;
        }
    }
}
