//! The sandbox against the real kernel: writes outside the writable paths fail, writes
//! inside and reads anywhere work, the network is off unless allowed, and only the child
//! is restricted. When the kernel has no Landlock, the tests assert that preparing the
//! sandbox fails with a reason instead of pretending.

// Tests may unwrap: a panic is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::net::TcpListener;
use std::path::{Path, PathBuf};

use atto_sandbox::{Sandbox, SandboxConfig, SandboxError, SandboxStatus};
use common::{Dirs, run, sandbox};

#[tokio::test(flavor = "multi_thread")]
async fn writes_are_limited_to_the_writable_paths() {
    let d = Dirs::new();
    let Some(sb) = sandbox(&d.config(false)) else {
        return;
    };
    let ws = d.ws();
    let (tmp, outside) = (d.tmp(), d.outside());

    // Inside: create, write, mkdir, rename, remove, symlink; temp dir; devices; reads anywhere.
    let script = format!(
        "set -e; touch ./inside; echo hi > ./f; mkdir ./d; mv ./f ./d/g; rm ./d/g; ln -s /etc ./link; \
         echo t > '{tmp}/t'; echo x > /dev/null; echo e > /dev/stderr; cat /etc/hostname > ./host; \
         head -c 4 /bin/sh > /dev/null; echo done",
        tmp = tmp.display()
    );
    let ran = run(Some(&sb), &ws, &script).await;
    assert_eq!(ran.code, Some(0), "{}", ran.output);
    assert!(ran.output.contains("done"));
    assert!(matches!(ran.status, SandboxStatus::Applied { .. }));
    assert!(ws.join("inside").exists());
    assert_eq!(std::fs::read_to_string(tmp.join("t")).unwrap(), "t\n");
    assert_eq!(
        std::fs::read_to_string(ws.join("host")).unwrap(),
        std::fs::read_to_string("/etc/hostname").unwrap()
    );

    // Outside: a second temp dir, and paths under `/`.
    std::fs::write(outside.join("existing"), "keep").unwrap();
    let pid = std::process::id();
    let root_paths = [
        format!("/atto-sandbox-test-{pid}"),
        format!("/opt/atto-sandbox-test-{pid}"),
    ];
    let mut attempts = vec![
        format!("touch '{}/new'", outside.display()),
        format!("echo x > '{}/existing'", outside.display()),
        format!(": > '{}/existing'", outside.display()),
        format!("rm '{}/existing'", outside.display()),
        format!("mkdir '{}/dir'", outside.display()),
        format!("ln -s /etc '{}/link'", outside.display()),
        format!("mv ./inside '{}/moved'", outside.display()),
    ];
    for p in &root_paths {
        attempts.push(format!("touch {p}"));
    }
    for attempt in &attempts {
        let ran = run(Some(&sb), &ws, attempt).await;
        assert_ne!(ran.code, Some(0), "{attempt} succeeded: {}", ran.output);
        assert!(
            ran.output.contains("Permission denied"),
            "{attempt}: {}",
            ran.output
        );
    }
    assert_eq!(
        std::fs::read_to_string(outside.join("existing")).unwrap(),
        "keep"
    );
    assert!(!outside.join("new").exists() && !outside.join("dir").exists());
    assert!(ws.join("inside").exists());
    for p in &root_paths {
        assert!(!Path::new(p).exists(), "{p} was created");
    }

    // The parent was never restricted: it writes where the child could not.
    std::fs::write(outside.join("new"), "parent").unwrap();
    let root_file = PathBuf::from(&root_paths[0]);
    std::fs::write(&root_file, "parent").unwrap();
    std::fs::remove_file(&root_file).unwrap();
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    assert!(status.contains("Seccomp:\t0"), "{status}");
    assert!(status.contains("NoNewPrivs:\t0"), "{status}");

    // atto knows from its configuration which of those writes the sandbox stops.
    assert!(!sb.permits_write(Path::new(&root_paths[1]), &ws));
    assert!(atto_sandbox::could_write(Path::new(&root_paths[1]), &ws));
    assert!(!sb.permits_write(&outside.join("new"), &ws));
    assert!(sb.permits_write(Path::new("inside"), &ws));
}

#[tokio::test(flavor = "multi_thread")]
async fn network_is_off_unless_allowed() {
    let d = Dirs::new();
    let Some(off) = sandbox(&d.config(false)) else {
        return;
    };
    let on = Sandbox::prepare(&d.config(true)).unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let ws = d.ws();

    let tcp = format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected");
    let udp = "exec 3>/dev/udp/127.0.0.1/9 && echo udp-open";
    let py = format!(
        "python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=5); print('py-connected')\""
    );
    let has_python = run(None, &ws, "python3 -c 'print(1)'").await.code == Some(0);

    // Unsandboxed and with the network allowed, all of it works.
    for sb in [None, Some(&on)] {
        let ran = run(sb, &ws, &tcp).await;
        assert!(ran.output.contains("connected"), "{}", ran.output);
        let ran = run(sb, &ws, udp).await;
        assert!(ran.output.contains("udp-open"), "{}", ran.output);
        if has_python {
            let ran = run(sb, &ws, &py).await;
            assert!(ran.output.contains("py-connected"), "{}", ran.output);
        }
    }

    // Network off: TCP (Landlock and seccomp), UDP (seccomp) and python all fail.
    let ran = run(Some(&off), &ws, &tcp).await;
    assert_ne!(ran.code, Some(0));
    assert!(!ran.output.contains("connected"), "{}", ran.output);
    assert!(ran.output.contains("Permission denied"), "{}", ran.output);
    let ran = run(Some(&off), &ws, udp).await;
    assert!(!ran.output.contains("udp-open"), "{}", ran.output);
    if has_python {
        let ran = run(Some(&off), &ws, &py).await;
        assert_ne!(ran.code, Some(0));
        assert!(ran.output.contains("PermissionError"), "{}", ran.output);
    } else {
        eprintln!("python3 not found: python checks skipped, bash /dev/tcp and /dev/udp used");
    }

    // The child really carries the seccomp filter and no_new_privs; the parent does not.
    let ran = run(
        Some(&off),
        &ws,
        "grep -E '^(Seccomp|NoNewPrivs):' /proc/self/status",
    )
    .await;
    assert!(ran.output.contains("Seccomp:\t2"), "{}", ran.output);
    assert!(ran.output.contains("NoNewPrivs:\t1"), "{}", ran.output);
    let ran = run(Some(&on), &ws, "grep -E '^Seccomp:' /proc/self/status").await;
    assert!(
        ran.output.contains("Seccomp:\t2"),
        "the device filter holds with the network allowed: {}",
        ran.output
    );
    drop(listener);
}

#[test]
fn status_and_errors_say_what_happened() {
    let applied = SandboxStatus::Applied { gaps: Vec::new() };
    assert_eq!(
        serde_json::to_string(&applied).unwrap(),
        r#"{"state":"applied"}"#
    );
    let not = SandboxStatus::NotApplied {
        reason: "sandbox off".into(),
    };
    let json = serde_json::to_string(&not).unwrap();
    assert_eq!(json, r#"{"state":"not_applied","reason":"sandbox off"}"#);
    assert_eq!(serde_json::from_str::<SandboxStatus>(&json).unwrap(), not);

    let support = Sandbox::probe();
    if support.landlock_abi == 0 {
        eprintln!("SKIPPED: no Landlock on this kernel; prepare errors not checked");
        return;
    }
    let missing = SandboxConfig {
        writable: vec![PathBuf::from("/nonexistent/atto-sandbox")],
        ..SandboxConfig::default()
    };
    let err = Sandbox::prepare(&missing).unwrap_err();
    assert!(matches!(err, SandboxError::WritablePath { .. }), "{err}");
    assert!(
        matches!(err.status(), SandboxStatus::NotApplied { reason } if reason.contains("/nonexistent/atto-sandbox"))
    );
}

#[test]
fn probe_reports_this_kernel() {
    let support = Sandbox::probe();
    eprintln!(
        "sandbox support: {support:?}; notice: {:?}",
        support.notice()
    );
    if support.landlock_abi >= 4 && support.seccomp {
        assert_eq!(support.notice(), None);
    } else {
        assert!(support.notice().is_some());
    }
}

/// Set in the re-executed test process that stacks Landlock layers on itself.
const NESTED_ENV: &str = "ATTO_SANDBOX_TEST_NESTED";

/// When the kernel refuses the restriction in the child (here: Landlock's limit of 16
/// stacked layers is already reached), the command must not start at all.
#[test]
fn refused_restriction_stops_the_command() {
    if Sandbox::probe().landlock_abi == 0 {
        eprintln!("SKIPPED: no Landlock on this kernel");
        return;
    }
    // Restricting this process would affect the other tests: do it in a copy.
    if let Some(text) = common::in_a_copy("refused_restriction_stops_the_command", NESTED_ENV) {
        assert!(text.contains("spawn refused:"), "{text}");
        return;
    }
    use landlock::{AccessFs, PathBeneath, PathFd, Ruleset, RulesetAttr, RulesetCreatedAttr};
    let d = Dirs::new();
    let sb = Sandbox::prepare(&d.config(false)).unwrap();
    for _ in 0..16 {
        // Each layer only handles making block devices, allowed everywhere: harmless.
        Ruleset::default()
            .handle_access(AccessFs::MakeBlock)
            .unwrap()
            .create()
            .unwrap()
            .add_rule(PathBeneath::new(
                PathFd::new("/").unwrap(),
                AccessFs::MakeBlock,
            ))
            .unwrap()
            .restrict_self()
            .unwrap();
    }
    let marker = d.ws().join("ran");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let result = rt.block_on(async {
        let mut cmd = tokio::process::Command::new("bash");
        cmd.arg("-c").arg(format!("touch '{}'", marker.display()));
        sb.apply(&mut cmd);
        cmd.status().await
    });
    let err = result.expect_err("the command started although the sandbox was refused");
    println!("spawn refused: {err}");
    assert!(!marker.exists());
}
