//! The read-only directories against the real kernel, through both ways into the mount
//! namespace (plain, as root here; and the user-namespace path ordinary users take):
//! writes into `.git` and `.atto` fail while the rest of the workspace stays writable and
//! `.git` readable, the command cannot undo the mounts, atto's own namespace is untouched,
//! and the same writes succeed unsandboxed (so these tests can fail).

// Tests may unwrap: a panic is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;

use atto_sandbox::{MountNamespace, Sandbox, SandboxStatus};
use common::{Dirs, run, sandbox};

/// A workspace with a git directory (hooks, config) and an `.atto` directory.
fn workspace(d: &Dirs) {
    let ws = d.ws();
    std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
    std::fs::write(ws.join(".git/config"), "[core]\n").unwrap();
    std::fs::create_dir_all(ws.join(".atto")).unwrap();
}

fn protected(d: &Dirs, how: MountNamespace) -> Option<Sandbox> {
    workspace(d);
    let ws = d.ws();
    // A symlink to `.git` and a directory that does not exist: canonicalized and skipped.
    std::os::unix::fs::symlink(ws.join(".git"), ws.join("git-link")).unwrap();
    let mut config = d.config(false);
    config.read_only = vec![
        ws.join(".git"),
        ws.join("git-link"),
        ws.join(".atto"),
        ws.join("missing"),
    ];
    config.mount_namespace = how;
    let sb = sandbox(&config)?;
    assert!(sb.protects_read_only(), "{}", sb.summary());
    assert_eq!(sb.read_only(), &[ws.join(".git"), ws.join(".atto")]);
    Some(sb)
}

const EROFS: &str = "Read-only file system";

/// Each write, and the error it must fail with in the sandbox.
const DENIED: &[(&str, &str)] = &[
    ("echo x > .git/hooks/pre-commit", EROFS),
    ("echo '[core] fsmonitor = evil' >> .git/config", EROFS),
    ("echo x > .atto/x", EROFS),
    ("rm .git/config", EROFS),
    ("mkdir .git/hooks/d", EROFS),
    ("mv .git/config .git/config.old", EROFS),
    ("ln -s /bin/sh .git/hooks/post-checkout", EROFS),
    // Moving the protected directory away to put another in its place: it is a mount
    // point in the command's namespace.
    ("mv .git .git-old", "Device or resource busy"),
];

async fn read_only_dirs_hold(how: MountNamespace) {
    let d = Dirs::new();
    let Some(sb) = protected(&d, how) else {
        return;
    };
    let ws = d.ws();
    let summary = sb.summary();
    assert!(
        summary.contains(&format!("read-only: {}", ws.join(".git").display())),
        "{summary}"
    );

    for (attempt, error) in DENIED {
        let ran = run(Some(&sb), &ws, attempt).await;
        assert_ne!(ran.code, Some(0), "{attempt} succeeded: {}", ran.output);
        assert!(ran.output.contains(error), "{attempt}: {}", ran.output);
        assert_eq!(ran.status, SandboxStatus::Applied { gaps: Vec::new() });
    }
    assert!(!ws.join(".git/hooks/pre-commit").exists());
    assert!(!ws.join(".atto/x").exists());
    assert_eq!(
        std::fs::read_to_string(ws.join(".git/config")).unwrap(),
        "[core]\n"
    );

    // The rest of the workspace stays writable and `.git` readable; the command runs as
    // the same user it would unsandboxed.
    let ran = run(
        Some(&sb),
        &ws,
        "set -e; echo ok > file; cat .git/config; ls .git/hooks; echo uid=$(id -u).",
    )
    .await;
    assert_eq!(ran.code, Some(0), "{}", ran.output);
    assert!(ran.output.contains("[core]"), "{}", ran.output);
    let uid = format!("uid={}.", common::uid());
    assert!(ran.output.contains(&uid), "{}", ran.output);
    assert_eq!(std::fs::read_to_string(ws.join("file")).unwrap(), "ok\n");

    // atto knows the same from its configuration.
    assert!(!sb.permits_write(Path::new(".git/hooks/pre-commit"), &ws));
    assert!(!sb.permits_write(Path::new("git-link/config"), &ws));
    assert!(!sb.permits_write(&ws.join("sub/../.atto/x"), &ws));
    assert!(sb.permits_write(Path::new("file"), &ws));
    assert!(sb.permits_write(Path::new("missing/x"), &ws));

    // The mounts stay in the command's namespace: atto's has none of them.
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    assert!(
        !mountinfo.contains(&ws.display().to_string()),
        "{mountinfo}"
    );

    // Unsandboxed, every one of those writes works.
    for (attempt, _) in DENIED {
        std::fs::write(ws.join(".git/config"), "[core]\n").unwrap();
        let ran = run(None, &ws, attempt).await;
        assert_eq!(ran.code, Some(0), "{attempt} unsandboxed: {}", ran.output);
    }

    // A protected directory removed since prepare is skipped, not a reason to fail.
    std::fs::rename(ws.join(".git-old"), ws.join(".git")).unwrap();
    std::fs::remove_dir_all(ws.join(".atto")).unwrap();
    let ran = run(Some(&sb), &ws, "echo x > .git/y; echo still-runs").await;
    assert!(ran.output.contains("still-runs"), "{}", ran.output);
    assert!(ran.output.contains(EROFS), "{}", ran.output);
}

#[tokio::test(flavor = "multi_thread")]
async fn read_only_dirs_hold_on_the_default_path() {
    read_only_dirs_hold(MountNamespace::Auto).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn read_only_dirs_hold_in_a_user_namespace() {
    read_only_dirs_hold(MountNamespace::UserNamespace).await;
}

/// Even a command running as root cannot make the mounts writable again, unmount them,
/// or clone the workspace mount without them.
async fn mounts_cannot_be_undone(how: MountNamespace) {
    let d = Dirs::new();
    let Some(sb) = protected(&d, how) else {
        return;
    };
    let ws = d.ws();
    let attempts = [
        "umount .git && echo x > .git/hooks/pre-commit",
        "umount -l .git && echo x > .git/hooks/pre-commit",
        "mount -o remount,rw,bind .git && echo x > .git/hooks/pre-commit",
        "mount --bind . .git && echo x > .git/hooks/pre-commit",
        "unshare -m sh -c 'umount .git && echo x > .git/hooks/pre-commit'",
        "unshare -Urm sh -c 'umount .git && echo x > .git/hooks/pre-commit'",
        "nsenter -t 1 -m sh -c 'echo x > .git/hooks/pre-commit'",
        "nsenter -t $PPID -m sh -c 'echo x > .git/hooks/pre-commit'",
        "echo x > /proc/$PPID/root/.git/hooks/pre-commit",
    ];
    let ws_s = ws.display().to_string();
    for attempt in attempts {
        let attempt = attempt.replace("/proc/$PPID/root/", &format!("/proc/$PPID/root{ws_s}/"));
        let ran = run(Some(&sb), &ws, &attempt).await;
        assert_ne!(ran.code, Some(0), "{attempt} succeeded: {}", ran.output);
        assert!(
            !ws.join(".git/hooks/pre-commit").exists(),
            "{attempt}: {}",
            ran.output
        );
    }
    let python = common::has_python(&ws).await;
    if python && cfg!(target_arch = "x86_64") {
        // open_tree(OPEN_TREE_CLONE) without AT_RECURSIVE copies the workspace mount
        // without the read-only mounts on it; writing through the copy must still fail.
        let script = r#"python3 - <<'PY'
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.syscall(428, -100, b".", 1)  # open_tree(AT_FDCWD, ".", OPEN_TREE_CLONE)
if fd < 0:
    print("open_tree failed", ctypes.get_errno()); sys.exit(1)
w = os.open(".git/hooks/pre-commit", os.O_WRONLY | os.O_CREAT, 0o755, dir_fd=fd)
print("wrote through a clone"); sys.exit(0)
PY"#;
        let ran = run(Some(&sb), &ws, script).await;
        assert_ne!(ran.code, Some(0), "{}", ran.output);
        assert!(!ws.join(".git/hooks/pre-commit").exists(), "{}", ran.output);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn mounts_cannot_be_undone_on_the_default_path() {
    mounts_cannot_be_undone(MountNamespace::Auto).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn mounts_cannot_be_undone_in_a_user_namespace() {
    mounts_cannot_be_undone(MountNamespace::UserNamespace).await;
}

/// Set in the re-executed test process that forbids itself to mount.
const NESTED_ENV: &str = "ATTO_SANDBOX_TEST_NO_MOUNTS";

/// Where mounting is not allowed, preparing says so (a gap, `protects_read_only` false,
/// the directories really writable), and a sandbox prepared before that can no longer
/// start commands at all rather than run them unprotected.
#[test]
fn without_mount_namespaces_the_gap_is_reported_and_nothing_runs_unprotected() {
    if Sandbox::probe().landlock_abi == 0 {
        eprintln!("SKIPPED: no Landlock on this kernel");
        return;
    }
    // Restricting this process would affect the other tests: do it in a copy.
    if let Some(text) = common::in_a_copy(
        "without_mount_namespaces_the_gap_is_reported_and_nothing_runs_unprotected",
        NESTED_ENV,
    ) {
        assert!(text.contains("checked without mounts"), "{text}");
        return;
    }
    use landlock::{AccessFs, PathBeneath, PathFd, Ruleset, RulesetAttr, RulesetCreatedAttr};
    let d = Dirs::new();
    let before = protected(&d, MountNamespace::UserNamespace).unwrap();
    // A Landlock domain forbids mounting to this process and its children. The layer
    // only handles making block devices, allowed everywhere: otherwise harmless.
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
    let ws = d.ws();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let marker = ws.join("ran");
        let mut cmd = tokio::process::Command::new("bash");
        cmd.arg("-c").arg(format!("touch '{}'", marker.display()));
        before.apply(&mut cmd);
        let err = cmd
            .status()
            .await
            .expect_err("started without its read-only mounts");
        assert!(!marker.exists(), "{err}");

        let mut config = d.config(false);
        config.read_only = vec![ws.join(".git"), ws.join(".atto")];
        let after = Sandbox::prepare(&config).unwrap();
        assert!(!after.protects_read_only());
        assert!(after.read_only().is_empty());
        let ran = run(Some(&after), &ws, "echo x > .git/hooks/pre-commit").await;
        assert_eq!(ran.code, Some(0), "{}", ran.output);
        let SandboxStatus::Applied { gaps } = ran.status else {
            panic!("{:?}", ran.status);
        };
        assert!(
            gaps.iter().any(|g| g.starts_with(
                "`.git` and `.atto` stay writable: this system does not allow mount namespaces"
            )),
            "{gaps:?}"
        );
        assert!(after.permits_write(Path::new(".git/hooks/pre-commit"), &ws));

        // A protected directory that does not exist cannot be kept from being created
        // without a mount to cover it: a gap that names it, and no placeholder made.
        config.create_read_only = vec![ws.join(".attocode")];
        let missing = Sandbox::prepare(&config).unwrap();
        let ran = run(Some(&missing), &ws, "true").await;
        assert_eq!(ran.code, Some(0), "{}", ran.output);
        assert!(!ws.join(".attocode").exists());
        let SandboxStatus::Applied { gaps } = ran.status else {
            panic!("{:?}", ran.status);
        };
        assert!(gaps.iter().any(|g| g.contains("`.attocode`")), "{gaps:?}");
        let gap = missing
            .protections()
            .iter()
            .find(|p| p.name == atto_protocol::ProtectionName::MissingDirs)
            .and_then(|p| p.gap.clone())
            .unwrap_or_default();
        assert!(gap.contains(".attocode"), "{gap}");
    });
    println!("checked without mounts");
}
