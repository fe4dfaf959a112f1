//! The watch daemon reads at most one short request line from its socket: a peer sending a
//! line with no end is answered (as malformed) once the limit is read, not buffered whole.
// Tests fail loudly on setup errors; workspace lints deny these outside #[test] functions.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![cfg(target_os = "linux")]

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use atto_checkpoint::{WatchOptions, run_watch_daemon};

#[test]
fn a_request_line_with_no_end_is_answered_at_the_limit() {
    let root = tempfile::tempdir().unwrap();
    let (side, ws) = (root.path().join("side"), root.path().join("ws"));
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::create_dir_all(&side).unwrap();
    let daemon = {
        let (side, ws) = (side.clone(), ws.clone());
        let options = WatchOptions {
            idle: Duration::from_secs(3),
            ..WatchOptions::default()
        };
        std::thread::spawn(move || run_watch_daemon(&side, &ws, options).unwrap())
    };
    let socket = side.join("atto-watch.sock");
    let start = Instant::now();
    while !socket.exists() {
        assert!(start.elapsed() < Duration::from_secs(20), "never listened");
        std::thread::sleep(Duration::from_millis(5));
    }
    let mut stream = UnixStream::connect(&socket).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let (done, wait) = std::sync::mpsc::channel::<()>();
    let mut writer = stream.try_clone().unwrap();
    let sender = std::thread::spawn(move || {
        // 64 MiB without a line end; the connection stays open until the answer is read,
        // so only a limit can end the request.
        let chunk = vec![b'x'; 1 << 20];
        let mut sent = 0;
        while sent < 64 && writer.write_all(&chunk).is_ok() {
            sent += 1;
        }
        let _ = wait.recv();
        sent
    });
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    done.send(()).unwrap();
    let sent = sender.join().unwrap();
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("unknown "), "answer: {answer:?}");
    assert!(answer.contains("malformed request"), "answer: {answer:?}");
    assert!(sent < 64, "the daemon read all {sent} MiB");
    daemon.join().unwrap();
}
