//! Unix sockets and signals against the real kernel. With the network off, a sandboxed
//! command cannot connect to a pathname socket made outside it (`socket(AF_UNIX)` fails)
//! unless unix sockets are allowed, nor to an abstract one (Landlock scope), while
//! `socketpair` keeps working; it may signal its own children but no process outside, nor
//! read another process's `/proc/<pid>/environ`.
//! Everything denied here works unsandboxed, so these tests can fail.

// Tests may unwrap: a panic is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixListener};

use atto_sandbox::Sandbox;
use common::{Dirs, has_python, run, sandbox};

/// Landlock scoping (signals, abstract sockets) needs ABI 6.
fn has_scoping() -> bool {
    let abi = Sandbox::probe().landlock_abi;
    if abi < 6 {
        eprintln!("SKIPPED: Landlock ABI {abi} has no scoping");
    }
    abi >= 6
}

fn connect(target: &str) -> String {
    format!(
        "python3 -c \"import socket; s = socket.socket(socket.AF_UNIX); s.connect({target}); print('connected')\""
    )
}

const SOCKETPAIR: &str = "python3 -c \"import socket, multiprocessing as m; a, b = socket.socketpair(); a.send(b'x'); r, w = m.Pipe(); w.send(b.recv(1)); print('pair', r.recv())\"";

/// Binds and connects to an abstract socket within the command itself.
const OWN_ABSTRACT: &str = "python3 -c \"import socket; l = socket.socket(socket.AF_UNIX); l.bind('\\0atto-own-' + str(__import__('os').getpid())); l.listen(); c = socket.socket(socket.AF_UNIX); c.connect(l.getsockname()); print('own-connected')\"";

#[tokio::test(flavor = "multi_thread")]
async fn unix_sockets_outside_are_unreachable() {
    let d = Dirs::new();
    let Some(off) = sandbox(&d.config(false)) else {
        return;
    };
    let mut unix_config = d.config(false);
    unix_config.allow_unix_sockets = true;
    let unix_on = Sandbox::prepare(&unix_config).unwrap();
    let net_on = Sandbox::prepare(&d.config(true)).unwrap();
    let ws = d.ws();
    if !has_python(&ws).await {
        return;
    }
    let path = d.outside().join("agent.sock");
    let _pathname = UnixListener::bind(&path).unwrap();
    let name = format!("atto-sandbox-test-{}", std::process::id());
    let addr = SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
    let _abstract = UnixListener::bind_addr(&addr).unwrap();
    let to_path = connect(&format!("'{}'", path.display()));
    let to_abstract = connect(&format!("'\\\\0{name}'"));

    // Unsandboxed and with the network allowed, everything connects.
    for sb in [None, Some(&net_on)] {
        for script in [&to_path, &to_abstract] {
            let ran = run(sb, &ws, script).await;
            assert!(ran.output.contains("connected"), "{script}: {}", ran.output);
        }
    }

    // Network off: no unix socket can even be created; pairs still work.
    for script in [&to_path, &to_abstract, &OWN_ABSTRACT.to_string()] {
        let ran = run(Some(&off), &ws, script).await;
        assert_ne!(ran.code, Some(0), "{script}: {}", ran.output);
        assert!(
            ran.output.contains("PermissionError"),
            "{script}: {}",
            ran.output
        );
    }
    for sb in [None, Some(&off), Some(&unix_on)] {
        let ran = run(sb, &ws, SOCKETPAIR).await;
        assert!(ran.output.contains("pair b'x'"), "{}", ran.output);
    }
    assert!(off.summary().ends_with("unix sockets off, network off"));

    // Unix sockets allowed: pathname sockets connect, abstract ones outside stay scoped
    // away while the command's own abstract sockets work.
    let ran = run(Some(&unix_on), &ws, &to_path).await;
    assert!(ran.output.contains("connected"), "{}", ran.output);
    if has_scoping() {
        let ran = run(Some(&unix_on), &ws, &to_abstract).await;
        assert_ne!(ran.code, Some(0), "{}", ran.output);
        assert!(!ran.output.contains("connected"), "{}", ran.output);
        let ran = run(Some(&unix_on), &ws, OWN_ABSTRACT).await;
        assert!(ran.output.contains("own-connected"), "{}", ran.output);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn signals_and_proc_reach_only_the_commands_own_processes() {
    let d = Dirs::new();
    let Some(sb) = sandbox(&d.config(false)) else {
        return;
    };
    if !has_scoping() {
        return;
    }
    let ws = d.ws();
    let mut outside = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    let pid = outside.id();
    let kill_outside = format!("kill -TERM {pid} && echo sent");
    // The test process is atto's stand-in, named by its pid outside: `$PPID` is 0 inside
    // the command's PID namespace.
    let me = std::process::id();
    let kill_parent = format!("kill -0 {me} && echo sent");
    let kill_own = "sleep 30 & kill $! && wait $!; echo own-killed $?";
    // Another process's environment (tokens, keys) is behind the same ptrace check.
    let environ = format!(
        "tr '\\0' '\\n' < /proc/{me}/environ | grep -c = ; cat /proc/self/environ > /dev/null && echo own-environ"
    );

    let ran = run(Some(&sb), &ws, kill_own).await;
    assert!(ran.output.contains("own-killed 143"), "{}", ran.output);
    // Outside its PID namespace no process exists for the command (and Landlock's
    // scoping would refuse the signal if one did).
    for script in [&kill_outside, &kill_parent] {
        let ran = run(Some(&sb), &ws, script).await;
        assert_ne!(ran.code, Some(0), "{script}: {}", ran.output);
        assert!(
            ran.output.contains("No such process")
                || ran.output.contains("Operation not permitted"),
            "{script}: {}",
            ran.output
        );
    }
    assert!(
        outside.try_wait().unwrap().is_none(),
        "the sleep was killed"
    );
    // Another process's environment is out of reach, with or without read-only
    // directories, as root too.
    std::fs::create_dir(ws.join(".git")).unwrap();
    let mut config = d.config(false);
    config.read_only = vec![ws.join(".git")];
    let namespaced = Sandbox::prepare(&config).unwrap();
    for sb in [&namespaced, &sb] {
        let ran = run(Some(sb), &ws, &environ).await;
        assert!(
            ran.output.contains("No such file") || ran.output.contains("Permission denied"),
            "{}",
            ran.output
        );
        assert!(ran.output.contains("own-environ"), "{}", ran.output);
    }
    let ran = run(None, &ws, &environ).await;
    assert!(!ran.output.contains("No such file"), "{}", ran.output);
    assert!(!ran.output.contains("Permission denied"), "{}", ran.output);

    // Unsandboxed, both signals arrive.
    let ran = run(None, &ws, &kill_parent).await;
    assert!(ran.output.contains("sent"), "{}", ran.output);
    let ran = run(None, &ws, &kill_outside).await;
    assert!(ran.output.contains("sent"), "{}", ran.output);
    let status = outside.wait().unwrap();
    assert!(!status.success());
}
