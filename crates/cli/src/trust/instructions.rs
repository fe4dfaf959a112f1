//! Instruction files a session's command wrote: AGENTS.md, CLAUDE.md and .atto/rules.md
//! stay readable (the user writes them), but one that changed while a session ran — a
//! sandboxed script can write them without a question — is not read as instructions by a
//! later session until the user accepts it (`atto trust FILE`); the session names it.
//!
//! Each process that runs a session opens a window: the digest of every place an
//! instruction file may be (absent ones too) when it started. The window is closed when
//! the process ends (`close_own`), or by the next session once that process is gone (a
//! crash); closing records every file that changed meanwhile as unseen, with its new
//! digest. A file whose content is still an unseen digest is left out; a file changed
//! again since (by the user, in their editor) is read. While another session still runs,
//! a file changed since its window opened is left out too. Record: `instructions-seen.json`
//! in the data dir.
//!
//! A change the user made by hand during a session is counted as the session's: atto
//! cannot tell them apart, and a wrong guess on that side costs one `atto trust`.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::digest;

/// The record in the data dir.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Record {
    /// Path → digest of content a session left that the user has not accepted.
    #[serde(default)]
    unseen: BTreeMap<String, String>,
    /// Open windows: process id → path → digest when it opened (`""`: absent).
    #[serde(default)]
    windows: BTreeMap<u32, BTreeMap<String, String>>,
}

fn record_file() -> Option<PathBuf> {
    atto_store::default_path()
        .ok()
        .and_then(|p| p.parent().map(|d| d.join("instructions-seen.json")))
}

fn read(file: &Path) -> Record {
    std::fs::read_to_string(file)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default()
}

fn write(file: &Path, record: &Record) {
    let Ok(text) = serde_json::to_string_pretty(record) else {
        return;
    };
    if let Some(dir) = file.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    // Whole or not at all: a torn record would forget what is unseen.
    let tmp = file.with_extension(format!("json.{}.tmp", std::process::id()));
    if std::fs::write(&tmp, text).is_ok() {
        let _ = std::fs::rename(&tmp, file);
    }
}

/// Holds the record's lock while `change` reads and rewrites it, so sessions starting
/// together (a swarm's workers) do not lose each other's windows. The wait is bounded: a
/// lock held past it (a stuck process) is gone around rather than waited on.
fn with_record<T>(file: &Path, change: impl FnOnce(&mut Record) -> T) -> T {
    if let Some(dir) = file.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(file.with_extension("lock"));
    let mut held = false;
    if let Ok(lock) = &lock {
        for _ in 0..100 {
            if lock.try_lock().is_ok() {
                held = true;
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
    let mut record = read(file);
    let out = change(&mut record);
    write(file, &record);
    if let (Ok(lock), true) = (&lock, held) {
        let _ = lock.unlock();
    }
    out
}

/// The key of an instruction path, which may not exist yet: the canonical form of the
/// path, else of its directory joined with its name.
fn key(path: &Path) -> String {
    if let Ok(canonical) = std::fs::canonicalize(path) {
        return canonical.display().to_string();
    }
    match (path.parent().map(std::fs::canonicalize), path.file_name()) {
        (Some(Ok(dir)), Some(name)) => dir.join(name).display().to_string(),
        _ => path.display().to_string(),
    }
}

/// The digest of the file now (`""`: absent or unreadable).
fn digest_now(key: &str) -> String {
    std::fs::read(key).map(|b| digest(&b)).unwrap_or_default()
}

/// Whether process `pid` still runs. Without `/proc` nobody can tell, and a window kept
/// open only keeps its files in question.
fn alive(pid: u32) -> bool {
    let proc = Path::new("/proc");
    !proc.is_dir() || proc.join(pid.to_string()).exists()
}

/// Moves what changed in `window` into `unseen`.
fn resolve(window: &BTreeMap<String, String>, unseen: &mut BTreeMap<String, String>) {
    for (path, then) in window {
        let now = digest_now(path);
        if !now.is_empty() && now != *then {
            unseen.insert(path.clone(), now);
        }
    }
}

/// Which instruction files a starting session may read.
pub struct Admission {
    unseen: BTreeMap<String, String>,
    /// Digests at the opening of windows still open (path → each digest it had then).
    open: BTreeMap<String, Vec<String>>,
    left_out: RefCell<Vec<PathBuf>>,
}

impl Admission {
    /// Whether `bytes`, the content of `path`, may be read as instructions.
    pub fn admits(&self, path: &Path, bytes: &[u8]) -> bool {
        let key = key(path);
        let now = digest(bytes);
        let unseen = self.unseen.get(&key) == Some(&now);
        let changed_in_open_window = self
            .open
            .get(&key)
            .is_some_and(|then| then.iter().any(|d| *d != now));
        if unseen || changed_in_open_window {
            self.left_out.borrow_mut().push(path.to_path_buf());
            return false;
        }
        true
    }

    /// The start notice naming what was left out, relative to `workspace`.
    pub fn notice(&self, workspace: &Path) -> Option<String> {
        let left_out = self.left_out.borrow();
        if left_out.is_empty() {
            return None;
        }
        let names: Vec<String> = left_out
            .iter()
            .map(|p| p.strip_prefix(workspace).unwrap_or(p).display().to_string())
            .collect();
        Some(format!(
            "not read as instructions: {} — a command of an earlier or running session wrote \
             {} and you have not accepted it since. Read {}, then `atto trust {}` to use it \
             again.",
            names.join(", "),
            if names.len() == 1 { "it" } else { "them" },
            if names.len() == 1 { "it" } else { "them" },
            names.join(" ")
        ))
    }
}

/// Closes the windows of ended processes, opens (or widens) this process's over `paths`,
/// and says which instruction files this session may read.
pub fn open_window(paths: &[PathBuf]) -> Admission {
    OPENED.store(true, std::sync::atomic::Ordering::Relaxed);
    match record_file() {
        Some(file) => open_window_in(&file, std::process::id(), paths),
        None => Admission {
            unseen: BTreeMap::new(),
            open: BTreeMap::new(),
            left_out: RefCell::new(Vec::new()),
        },
    }
}

fn open_window_in(file: &Path, me: u32, paths: &[PathBuf]) -> Admission {
    with_record(file, |record| open_window_of(record, me, paths))
}

fn open_window_of(record: &mut Record, me: u32, paths: &[PathBuf]) -> Admission {
    let ended: Vec<u32> = record
        .windows
        .keys()
        .copied()
        .filter(|pid| *pid != me && !alive(*pid))
        .collect();
    for pid in ended {
        if let Some(window) = record.windows.remove(&pid) {
            resolve(&window, &mut record.unseen);
        }
    }
    let mut open: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for window in record.windows.values() {
        for (path, then) in window {
            open.entry(path.clone()).or_default().push(then.clone());
        }
    }
    let own = record.windows.entry(me).or_default();
    for path in paths {
        let key = key(path);
        let now = digest_now(&key);
        // A second session of this process keeps the first one's digests.
        own.entry(key).or_insert(now);
    }
    Admission {
        unseen: record.unseen.clone(),
        open,
        left_out: RefCell::new(Vec::new()),
    }
}

/// Whether this process opened a window (most commands run no session).
static OPENED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Closes this process's window as it ends: what its sessions changed becomes unseen.
pub fn close_own() {
    if !OPENED.load(std::sync::atomic::Ordering::Relaxed) {
        return;
    }
    if let Some(file) = record_file() {
        close_in(&file, std::process::id());
    }
}

fn close_in(file: &Path, me: u32) {
    with_record(file, |record| {
        if let Some(window) = record.windows.remove(&me) {
            resolve(&window, &mut record.unseen);
        }
    });
}

/// The user accepted `path` as it is now: read again as instructions.
pub fn accept(path: &Path) {
    if let Some(file) = record_file() {
        accept_in(&file, path);
    }
}

fn accept_in(file: &Path, path: &Path) {
    let key = key(path);
    let now = digest_now(&key);
    with_record(file, |record| {
        record.unseen.remove(&key);
        for window in record.windows.values_mut() {
            if let Some(then) = window.get_mut(&key) {
                then.clone_from(&now);
            }
        }
    });
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// A process id no process has (above the kernel's pid_max).
    const GONE: u32 = 1 << 23;

    struct Case {
        _dir: tempfile::TempDir,
        record: PathBuf,
        agents: PathBuf,
        rules: PathBuf,
    }

    fn case() -> Case {
        let dir = tempfile::tempdir().unwrap();
        let record = dir.path().join("data/instructions-seen.json");
        let agents = dir.path().join("AGENTS.md");
        let rules = dir.path().join(".atto/rules.md");
        std::fs::write(&agents, "mine").unwrap();
        Case {
            _dir: dir,
            record,
            agents,
            rules,
        }
    }

    fn admitted(c: &Case, me: u32) -> Vec<String> {
        let admission = open_window_in(&c.record, me, &[c.agents.clone(), c.rules.clone()]);
        [&c.agents, &c.rules]
            .into_iter()
            .filter_map(|p| {
                let bytes = std::fs::read(p).ok()?;
                admission
                    .admits(p, &bytes)
                    .then(|| String::from_utf8_lossy(&bytes).into_owned())
            })
            .collect()
    }

    #[test]
    fn what_an_ended_session_wrote_waits_until_accepted_or_changed_by_hand() {
        let c = case();
        // A session (since ended, even by a crash) opened its window, and its command
        // then created rules.md and changed AGENTS.md.
        assert_eq!(admitted(&c, GONE), vec!["mine"]);
        std::fs::create_dir_all(c.rules.parent().unwrap()).unwrap();
        std::fs::write(&c.rules, "planted").unwrap();
        std::fs::write(&c.agents, "mine, changed").unwrap();
        let me = std::process::id();
        assert!(admitted(&c, me).is_empty());
        close_in(&c.record, me);
        // Accepted: read again; changed again by hand: read.
        accept_in(&c.record, &c.agents);
        assert_eq!(admitted(&c, me), vec!["mine, changed"]);
        close_in(&c.record, me);
        std::fs::write(&c.rules, "rewritten by me").unwrap();
        assert_eq!(admitted(&c, me), vec!["mine, changed", "rewritten by me"]);
    }

    #[test]
    fn a_file_changed_while_a_session_still_runs_is_left_out() {
        let c = case();
        let me = std::process::id();
        assert_eq!(admitted(&c, me), vec!["mine"]);
        std::fs::write(&c.agents, "changed while running").unwrap();
        assert!(admitted(&c, me).is_empty());
        // Its end records it as unseen.
        close_in(&c.record, me);
        assert!(admitted(&c, me).is_empty());
    }

    #[test]
    fn files_no_session_touched_are_read() {
        let c = case();
        assert_eq!(admitted(&c, GONE), vec!["mine"]);
        close_in(&c.record, GONE);
        assert_eq!(admitted(&c, std::process::id()), vec!["mine"]);
    }
}
