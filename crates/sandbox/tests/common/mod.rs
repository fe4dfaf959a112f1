//! Helpers shared by the sandbox tests: temp dirs, preparing a sandbox (or asserting the
//! kernel honestly has none), and running a script sandboxed or not.

#![allow(
    dead_code,
    reason = "each test binary of this crate uses a different part of this module"
)]

use std::path::{Path, PathBuf};

use atto_sandbox::{Sandbox, SandboxConfig, SandboxError, SandboxStatus};

pub struct Dirs {
    pub ws: tempfile::TempDir,
    pub tmp: tempfile::TempDir,
    pub outside: tempfile::TempDir,
}

impl Dirs {
    pub fn new() -> Self {
        Self {
            ws: tempfile::tempdir().unwrap(),
            tmp: tempfile::tempdir().unwrap(),
            outside: tempfile::tempdir().unwrap(),
        }
    }
    /// Dirs beneath the build's temp dir rather than `/tmp`, for tests that look at what a
    /// command sees at `/tmp` (a private `/tmp` is only mounted when no writable path lies
    /// beneath it).
    pub fn outside_tmp() -> Self {
        let base = env!("CARGO_TARGET_TMPDIR");
        Self {
            ws: tempfile::tempdir_in(base).unwrap(),
            tmp: tempfile::tempdir_in(base).unwrap(),
            outside: tempfile::tempdir_in(base).unwrap(),
        }
    }
    pub fn ws(&self) -> PathBuf {
        self.ws.path().canonicalize().unwrap()
    }
    pub fn tmp(&self) -> PathBuf {
        self.tmp.path().canonicalize().unwrap()
    }
    pub fn outside(&self) -> PathBuf {
        self.outside.path().canonicalize().unwrap()
    }
    pub fn config(&self, allow_network: bool) -> SandboxConfig {
        SandboxConfig {
            writable: vec![self.ws(), self.tmp()],
            allow_network,
            ..SandboxConfig::default()
        }
    }
}

/// The sandbox for `config`, or `None` after asserting the kernel honestly has none.
pub fn sandbox(config: &SandboxConfig) -> Option<Sandbox> {
    let support = Sandbox::probe();
    match Sandbox::prepare(config) {
        Ok(sb) => {
            assert!(
                support.landlock_abi >= 1,
                "prepared without Landlock: {support:?}"
            );
            Some(sb)
        }
        Err(SandboxError::Unsupported { reason }) => {
            assert_eq!(support.landlock_abi, 0);
            assert!(reason.contains("Landlock not supported"), "{reason}");
            eprintln!("SKIPPED: no Landlock on this kernel: {reason}");
            None
        }
        Err(e) => panic!("prepare failed: {e}"),
    }
}

pub struct Ran {
    pub code: Option<i32>,
    pub output: String,
    pub status: SandboxStatus,
}

pub async fn run(sb: Option<&Sandbox>, cwd: &Path, script: &str) -> Ran {
    let mut cmd = tokio::process::Command::new("bash");
    cmd.arg("-c").arg(script).current_dir(cwd);
    let status = match sb {
        Some(sb) => sb.apply(&mut cmd),
        None => SandboxStatus::NotApplied {
            reason: "sandbox off".into(),
        },
    };
    let out = cmd.output().await.unwrap();
    let mut output = String::from_utf8_lossy(&out.stdout).into_owned();
    output.push_str(&String::from_utf8_lossy(&out.stderr));
    Ran {
        code: out.status.code(),
        output,
        status,
    }
}

/// Whether `python3` runs here; tests that need it say when they skip.
pub async fn has_python(cwd: &Path) -> bool {
    let ok = run(None, cwd, "python3 -c 'print(1)'").await.code == Some(0);
    if !ok {
        eprintln!("SKIPPED: python3 not found; python checks not run");
    }
    ok
}

/// This process's effective uid (the owner of its `/proc` directory).
pub fn uid() -> u32 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").unwrap().uid()
}

/// Runs test `name` again in a copy of this test process with `env` set, for tests that
/// restrict the process they run in (which would affect the other tests). In the copy:
/// `None`, go on with the test. Here: `Some` with what the copy printed, once it passed.
pub fn in_a_copy(name: &str, env: &str) -> Option<String> {
    if std::env::var_os(env).is_some() {
        return None;
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", name, "--nocapture"])
        .env(env, "1")
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    Some(text)
}
