//! A watch daemon's socket appears once it listens, and a daemon that stops lets go of its
//! watcher: its inotify instance counts against a per-user limit (128 by default), and a
//! process that runs daemons one after another, as a test process does, must not run out.
//! Alone in its binary, so that no other test's watcher is counted.
// Tests fail loudly on setup errors; workspace lints deny these outside #[test] functions.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![cfg(target_os = "linux")]

use std::time::{Duration, Instant};

use atto_checkpoint::{WatchOptions, WatchStop, run_watch_daemon};

/// inotify instances this process holds.
fn inotify_instances() -> usize {
    std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .flatten()
        .filter(|fd| {
            std::fs::read_link(fd.path()).is_ok_and(|l| l.as_os_str() == "anon_inode:inotify")
        })
        .count()
}

#[test]
fn a_stopped_daemon_holds_no_watcher_and_no_socket() {
    let root = tempfile::tempdir().unwrap();
    let (side, ws) = (root.path().join("side"), root.path().join("ws"));
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::create_dir_all(&side).unwrap();
    std::fs::write(ws.join("src/a.txt"), "a\n").unwrap();
    let before = inotify_instances();
    for _ in 0..3 {
        let daemon = {
            let (side, ws) = (side.clone(), ws.clone());
            let options = WatchOptions {
                idle: Duration::from_millis(300),
                ..WatchOptions::default()
            };
            std::thread::spawn(move || run_watch_daemon(&side, &ws, options).unwrap())
        };
        let start = Instant::now();
        while !side.join("atto-watch.sock").exists() {
            assert!(!daemon.is_finished(), "{:?}", daemon.join());
            assert!(start.elapsed() < Duration::from_secs(20), "never listened");
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(
            inotify_instances(),
            before + 1,
            "the running daemon watches"
        );
        assert_eq!(daemon.join().unwrap(), WatchStop::Idle);
        assert_eq!(
            inotify_instances(),
            before,
            "the stopped daemon let go of its watcher"
        );
        assert!(!side.join("atto-watch.sock").exists());
    }
}
