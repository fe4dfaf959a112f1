//! What every sandboxed command is kept from beyond writes, against the real kernel: it
//! cannot make devices (even as root), cannot see atto or any other process outside its
//! own, cannot read the hidden credential stores, gets a private `/tmp`, cannot create a
//! protected directory that did not exist yet, and, in the no-write sandbox, cannot
//! write anything but its private `/tmp` and the devices. Each check also runs
//! unsandboxed, where the same action works, so these tests can fail.

// Tests may unwrap: a panic is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;

use atto_sandbox::{MountNamespace, SandboxStatus};
use common::{Dirs, run, sandbox};

const HOW: [MountNamespace; 2] = [MountNamespace::Auto, MountNamespace::UserNamespace];

#[tokio::test(flavor = "multi_thread")]
async fn devices_cannot_be_made() {
    for how in HOW {
        let d = Dirs::new();
        let mut config = d.config(false);
        config.mount_namespace = how;
        let Some(sb) = sandbox(&config) else {
            return;
        };
        let ws = d.ws();
        // /dev/kmsg (1, 11) and /dev/null (1, 3), and a block device.
        for (name, attempt) in [
            ("kmsg", "mknod kmsg c 1 11 && echo hello > kmsg"),
            ("null", "mknod null c 1 3"),
            ("blk", "mknod blk b 7 0"),
        ] {
            let ran = run(Some(&sb), &ws, attempt).await;
            assert_ne!(ran.code, Some(0), "{how:?} {attempt}: {}", ran.output);
            assert!(!ws.join(name).exists(), "{how:?} {attempt}");
        }
        // A fifo is no device: it still works.
        let ran = run(Some(&sb), &ws, "mknod fifo p && echo made").await;
        assert_eq!(ran.code, Some(0), "{how:?}: {}", ran.output);
        if common::uid() == 0 {
            let ran = run(None, &ws, "mknod null2 c 1 3").await;
            assert_eq!(ran.code, Some(0), "unsandboxed: {}", ran.output);
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn processes_outside_are_invisible() {
    for how in HOW {
        let d = Dirs::new();
        let mut config = d.config(false);
        config.mount_namespace = how;
        let Some(sb) = sandbox(&config) else {
            return;
        };
        let ws = d.ws();
        let me = std::process::id();
        let script = format!(
            "cat /proc/$PPID/environ && echo READ-PARENT; test -e /proc/{me}/status && echo SEES-ATTO; \
             echo count=$(ls /proc | grep -c '^[0-9]')"
        );
        let ran = run(Some(&sb), &ws, &script).await;
        assert!(
            !ran.output.contains("READ-PARENT"),
            "{how:?}: {}",
            ran.output
        );
        assert!(!ran.output.contains("SEES-ATTO"), "{how:?}: {}", ran.output);
        let count: u32 = ran
            .output
            .lines()
            .find_map(|l| l.strip_prefix("count="))
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or_else(|| panic!("{how:?}: {}", ran.output));
        assert!(
            count <= 6,
            "{how:?}: {count} processes visible: {}",
            ran.output
        );
        let ran = run(None, &ws, &script).await;
        assert!(
            ran.output.contains("SEES-ATTO"),
            "unsandboxed: {}",
            ran.output
        );
        // The shell is not its namespace's pid 1, which ignores signals it has no handler
        // for: a script that ends itself with `kill $$` still ends.
        let ran = run(Some(&sb), &ws, "kill -TERM $$; echo survived").await;
        assert!(!ran.output.contains("survived"), "{how:?}: {}", ran.output);
        assert_eq!(ran.code, Some(128 + 15), "{how:?}: {}", ran.output);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn hidden_secrets_cannot_be_read() {
    for how in HOW {
        let d = Dirs::new();
        let home = d.outside();
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        std::fs::write(home.join(".ssh/id_rsa"), "SECRET-KEY").unwrap();
        std::fs::write(home.join(".netrc"), "SECRET-NETRC").unwrap();
        std::fs::write(home.join("visible"), "VISIBLE").unwrap();
        let mut config = d.config(false);
        config.mount_namespace = how;
        // The workspace itself cannot be hidden from the command working in it.
        std::fs::write(d.ws().join("own"), "OWN").unwrap();
        // A fifo named in `hide` holds nothing to hide: it must not cost the namespaces.
        let fifo = std::process::Command::new("mkfifo")
            .arg(home.join("agent.fifo"))
            .status()
            .unwrap();
        assert!(fifo.success());
        config.hide = vec![
            home.join(".ssh"),
            home.join(".netrc"),
            home.join("missing"),
            home.join("agent.fifo"),
            d.ws(),
        ];
        let Some(sb) = sandbox(&config) else {
            return;
        };
        let script = format!(
            "cat own; cd '{}'; cat .ssh/id_rsa; cat .netrc; ls -A .ssh; cat visible",
            home.display()
        );
        let ran = run(Some(&sb), &d.ws(), &script).await;
        assert!(!ran.output.contains("SECRET"), "{how:?}: {}", ran.output);
        assert!(ran.output.contains("VISIBLE"), "{how:?}: {}", ran.output);
        assert!(ran.output.contains("OWN"), "{how:?}: {}", ran.output);
        assert_eq!(
            ran.status,
            SandboxStatus::Applied { gaps: Vec::new() },
            "{how:?}"
        );
        let ran = run(None, &d.ws(), &script).await;
        assert!(
            ran.output.contains("SECRET-KEY"),
            "unsandboxed: {}",
            ran.output
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn tmp_is_private() {
    for how in HOW {
        let d = Dirs::outside_tmp();
        let mut config = d.config(false);
        config.writable = vec![d.ws()];
        config.private_tmp = true;
        config.mount_namespace = how;
        let Some(sb) = sandbox(&config) else {
            return;
        };
        let name = format!("atto-private-{}-{how:?}", std::process::id());
        let script = format!(
            "set -e; echo x > /tmp/{name}; cat /tmp/{name}; f=$(mktemp); echo y > \"$f\"; \
             echo tmpdir=$TMPDIR; ls -A /tmp | wc -l"
        );
        let ran = run(Some(&sb), &d.ws(), &script).await;
        assert_eq!(ran.code, Some(0), "{how:?}: {}", ran.output);
        assert!(
            ran.output.contains("tmpdir=/tmp\n"),
            "{how:?}: {}",
            ran.output
        );
        assert!(
            !Path::new("/tmp").join(&name).exists(),
            "{how:?}: written to the shared /tmp"
        );
        assert_eq!(ran.status, SandboxStatus::Applied { gaps: Vec::new() });
        // atto knows the command may write its /tmp, in both sandboxes, and says so.
        assert!(sb.permits_write(Path::new("/tmp/x"), &d.ws()), "{how:?}");
        let no_write = sb.no_write().unwrap();
        assert!(
            no_write.permits_write(Path::new("/tmp/x"), &d.ws()),
            "{how:?}"
        );
        assert!(sb.summary().contains("/tmp (private)"), "{}", sb.summary());
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_missing_protected_dir_cannot_be_created() {
    for how in HOW {
        let d = Dirs::new();
        let ws = d.ws();
        let mut config = d.config(false);
        config.mount_namespace = how;
        config.create_read_only = vec![ws.join(".atto"), ws.join(".attocode")];
        let Some(sb) = sandbox(&config) else {
            return;
        };
        for attempt in [
            "mkdir -p .atto/x",
            "echo x > .atto/config.toml",
            "mkdir -p .attocode && echo x > .attocode/f",
            "rmdir .atto && mkdir .atto && echo x > .atto/f",
            "mv .atto .atto-old && mkdir .atto && echo x > .atto/f",
        ] {
            let ran = run(Some(&sb), &ws, attempt).await;
            assert_ne!(ran.code, Some(0), "{how:?} {attempt}: {}", ran.output);
        }
        assert!(!ws.join(".atto/x").exists());
        assert!(!ws.join(".atto/config.toml").exists());
        assert!(!ws.join(".atto/f").exists());
        assert!(!ws.join(".attocode/f").exists());
        assert!(!sb.permits_write(Path::new(".atto/config.toml"), &ws));
    }
}

/// The directories of a missing protected directory exist only while a command runs:
/// preparing leaves the workspace as it was, a script (not a shell redirect the gate could
/// see) cannot create files in them, and after each command, even one killed with its
/// process group, nothing is left behind. A command still running keeps its protection
/// when a shorter one beside it ends.
#[tokio::test(flavor = "multi_thread")]
async fn a_missing_protected_dir_exists_only_while_a_command_runs() {
    for how in HOW {
        let d = Dirs::new();
        let ws = d.ws();
        let mut config = d.config(false);
        config.mount_namespace = how;
        config.create_read_only = vec![ws.join(".atto"), ws.join(".attocode")];
        let Some(sb) = sandbox(&config) else {
            return;
        };
        let listing = |ws: &Path| {
            let mut names: Vec<String> = std::fs::read_dir(ws)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            names.sort();
            names
        };
        assert!(
            listing(&ws).is_empty(),
            "{how:?}: prepare changed the workspace"
        );
        let python = common::has_python(&ws).await;
        let script = if python {
            "python3 -c \"import os\nfor d, f in (('.atto', 'rules.md'), ('.attocode', 'x')):\n    os.makedirs(d, exist_ok=True)\n    open(os.path.join(d, f), 'w').write('obey')\""
        } else {
            "sh -c 'mkdir -p .atto && cat /dev/null > .atto/rules.md; mkdir -p .attocode && cat /dev/null > .attocode/x'"
        };
        let ran = run(Some(&sb), &ws, script).await;
        assert_ne!(ran.code, Some(0), "{how:?}: {}", ran.output);
        assert!(listing(&ws).is_empty(), "{how:?}: {:?}", listing(&ws));

        let ran = run(Some(&sb), &ws, "echo hi > out.txt").await;
        assert_eq!(ran.code, Some(0), "{how:?}: {}", ran.output);
        assert_eq!(listing(&ws), ["out.txt"], "{how:?}");

        // A long command beside a short one: the short one ending leaves the long one's
        // protection in place.
        let long = run(
            Some(&sb),
            &ws,
            "sleep 1; mkdir -p .atto/x || exit 0; echo escaped > .atto/x/f",
        );
        let short = async {
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
            run(Some(&sb), &ws, "true").await
        };
        let (long, short) = tokio::join!(long, short);
        assert_eq!(short.code, Some(0), "{how:?}: {}", short.output);
        assert_eq!(long.code, Some(0), "{how:?}: {}", long.output);
        assert_eq!(listing(&ws), ["out.txt"], "{how:?}");

        // Killed with its process group, as a cancelled or timed-out command is.
        let mut cmd = tokio::process::Command::new("sleep");
        cmd.arg("30").current_dir(&ws).process_group(0);
        sb.apply(&mut cmd);
        let child = cmd.spawn().unwrap();
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        assert!(
            ws.join(".atto").is_dir(),
            "{how:?}: no placeholder while running"
        );
        let pgid = i32::try_from(child.id().unwrap()).unwrap();
        std::process::Command::new("kill")
            .args(["-KILL", "--", &format!("-{pgid}")])
            .status()
            .unwrap();
        let mut left = listing(&ws);
        for _ in 0..50 {
            if left == ["out.txt"] {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            left = listing(&ws);
        }
        assert_eq!(left, ["out.txt"], "{how:?}: left behind after a kill");
        assert!(!sb.permits_write(Path::new(".atto/rules.md"), &ws));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_no_write_sandbox_writes_nothing() {
    for how in HOW {
        let d = Dirs::outside_tmp();
        let ws = d.ws();
        std::fs::write(ws.join("existing"), "keep").unwrap();
        let mut config = d.config(false);
        config.writable = vec![ws.clone()];
        config.private_tmp = true;
        config.mount_namespace = how;
        let Some(sb) = sandbox(&config) else {
            return;
        };
        let no_write = &**sb.no_write().unwrap();
        for attempt in [
            "echo x > new",
            "echo x >> existing",
            "rm existing",
            "mkdir d",
            "touch existing",
        ] {
            let ran = run(Some(no_write), &ws, attempt).await;
            assert_ne!(ran.code, Some(0), "{how:?} {attempt}: {}", ran.output);
            assert!(
                ran.output.contains("Read-only file system"),
                "{how:?} {attempt}: {}",
                ran.output
            );
        }
        assert!(!ws.join("new").exists());
        assert_eq!(
            std::fs::read_to_string(ws.join("existing")).unwrap(),
            "keep"
        );
        // Its private /tmp and the devices stay writable; reads work.
        let ran = run(
            Some(no_write),
            &ws,
            "set -e; echo t > /tmp/t; cat /tmp/t; echo x > /dev/null; cat existing",
        )
        .await;
        assert_eq!(ran.code, Some(0), "{how:?}: {}", ran.output);
        assert!(ran.output.contains("keep"), "{how:?}: {}", ran.output);
        assert!(!no_write.permits_write(Path::new("new"), &ws));
        // The workspace sandbox of the same session still writes the workspace.
        let ran = run(Some(&sb), &ws, "echo x > new").await;
        assert_eq!(ran.code, Some(0), "{how:?}: {}", ran.output);
        assert!(sb.permits_write(Path::new("new"), &ws));
        std::fs::remove_file(ws.join("new")).unwrap();
    }
}

/// Where the workspace's file system is read-only, no placeholder can be made, and none is
/// needed (a command cannot remount it): commands still start, and read. Runs in a copy of
/// this test inside a mount namespace of its own (root only), where the workspace is
/// mounted read-only.
#[test]
fn on_a_read_only_file_system_commands_run_without_placeholders() {
    const ENV: &str = "ATTO_SANDBOX_TEST_READ_ONLY_WS";
    let name = "on_a_read_only_file_system_commands_run_without_placeholders";
    let Some(ws) = std::env::var_os(ENV) else {
        if common::uid() != 0 || atto_sandbox::Sandbox::probe().landlock_abi == 0 {
            eprintln!("SKIPPED: needs root (to mount) and Landlock");
            return;
        }
        let d = Dirs::new();
        let ws = d.ws();
        std::fs::write(ws.join("f"), "read me").unwrap();
        let script = format!(
            "mount --bind '{ws}' '{ws}' && mount -o remount,bind,ro '{ws}' && exec \"$0\" --exact {name} --nocapture",
            ws = ws.display()
        );
        let out = std::process::Command::new("unshare")
            .args(["-m", "--propagation", "private", "sh", "-c", &script])
            .arg(std::env::current_exe().unwrap())
            .env(ENV, &ws)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{text}");
        assert!(text.contains("checked read-only"), "{text}");
        return;
    };
    let ws = std::path::PathBuf::from(ws);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut config = atto_sandbox::SandboxConfig {
            writable: vec![ws.clone()],
            ..atto_sandbox::SandboxConfig::default()
        };
        config.create_read_only = vec![ws.join(".atto")];
        let sb = sandbox(&config).unwrap();
        let ran = run(Some(&sb), &ws, "cat f; mkdir .atto").await;
        assert_ne!(ran.code, Some(0), "{}", ran.output);
        assert!(ran.output.starts_with("read me"), "{}", ran.output);
        assert!(
            ran.output.contains("Read-only file system"),
            "{}",
            ran.output
        );
        assert!(!ws.join(".atto").exists());
    });
    println!("checked read-only");
}
