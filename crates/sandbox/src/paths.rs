//! Answering, from atto's own knowledge, whether a path is one the sandbox lets a command
//! write, and whether atto itself could write it.
//!
//! Owns path resolution for those answers (relative to a cwd, `..` removed, symlinks of
//! the existing part followed, so paths compare with the canonical writable and read-only
//! directories) and the device list the Landlock ruleset grants. Deliberately does not
//! read a command's output: a command controls what it prints, so evidence that the
//! sandbox denied something must come from what atto knows (the paths a command was
//! parsed to write, and these answers).

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

/// Character devices ordinary shells and tools write to or need ioctls on; writable for
/// sandboxed commands where they exist.
pub(crate) const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
];

/// Whether `path` (relative to `cwd`) lies beneath one of `writable` or is one of the
/// devices, and beneath none of `read_only`. All directories are canonical.
pub(crate) fn permitted(
    path: &Path,
    cwd: &Path,
    writable: &[PathBuf],
    read_only: &[PathBuf],
) -> bool {
    let path = resolve(&cwd.join(path));
    let granted =
        writable.iter().any(|w| path.starts_with(w)) || DEVICES.iter().any(|d| path.starts_with(d));
    granted && !read_only.iter().any(|r| path.starts_with(r))
}

/// Whether atto, unsandboxed, could write `path` (relative to `cwd`): the file itself
/// when it exists, or the directory that would hold it. A path whose directory does not
/// exist cannot be written at all (that fails with "No such file").
pub fn could_write(path: &Path, cwd: &Path) -> bool {
    let path = resolve(&cwd.join(path));
    if path.exists() && access_w(&path) {
        return true;
    }
    path.parent()
        .is_some_and(|dir| dir.is_dir() && access_w(dir))
}

/// How many symlinks one resolution follows before giving up, as the kernel's limit.
const MAX_LINKS: usize = 40;

/// `path` made absolute the way the kernel walks it: components left to right, each
/// existing symlink followed (also a dangling one, whose target a write would create),
/// `..` applied to what the walk reached so far. Once a component does not exist, the
/// rest is taken as written. The result compares with canonical directories.
pub(crate) fn resolve(path: &Path) -> PathBuf {
    let mut links = 0;
    walk(PathBuf::from("/"), path, &mut links)
}

fn walk(mut at: PathBuf, path: &Path, links: &mut usize) -> PathBuf {
    let mut missing = false;
    for part in path.components() {
        match part {
            Component::RootDir => at = PathBuf::from("/"),
            Component::Prefix(_) | Component::CurDir => {}
            Component::ParentDir => {
                at.pop();
            }
            Component::Normal(name) => {
                at.push(name);
                if missing {
                    continue;
                }
                match std::fs::read_link(&at) {
                    Ok(target) if *links < MAX_LINKS => {
                        *links += 1;
                        at.pop();
                        at = walk(at, &target, links);
                    }
                    // A loop: leave it as written; writing through it fails anyway.
                    Ok(_) => missing = true,
                    Err(_) => missing = !at.exists(),
                }
            }
        }
    }
    at
}

#[expect(unsafe_code, reason = "access(2) has no safe wrapper in std")]
fn access_w(path: &Path) -> bool {
    let Ok(c) = CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: `c` is a valid NUL-terminated string that outlives the call; access only
    // reads it.
    unsafe { libc::access(c.as_ptr(), libc::W_OK) == 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolve_walks_like_the_kernel() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let ws = root.join("ws");
        let out = root.join("out");
        std::fs::create_dir_all(ws.join("sub")).unwrap();
        std::fs::create_dir_all(&out).unwrap();
        std::os::unix::fs::symlink(&out, ws.join("to-out")).unwrap();
        std::os::unix::fs::symlink("../out/new", ws.join("dangling")).unwrap();
        std::os::unix::fs::symlink("loop", ws.join("loop")).unwrap();

        let table: &[(&str, PathBuf)] = &[
            ("f", ws.join("f")),
            ("./sub/../f", ws.join("f")),
            ("../out/f", out.join("f")),
            // `..` after a symlink leaves the symlink's target, not the link's directory.
            ("to-out/../ws/g", ws.join("g")),
            ("to-out/x", out.join("x")),
            // A dangling symlink: a write would create its target.
            ("dangling", out.join("new")),
            ("missing/../f", ws.join("f")),
            ("loop", ws.join("loop")),
        ];
        for (path, want) in table {
            assert_eq!(&resolve(&ws.join(path)), want, "{path}");
        }
    }

    #[test]
    fn permitted_is_writable_minus_read_only() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let ws = root.join("ws");
        std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
        std::os::unix::fs::symlink(ws.join(".git"), ws.join("g")).unwrap();
        let writable = vec![ws.clone()];
        let read_only = vec![ws.join(".git")];

        let table: &[(&str, bool)] = &[
            ("a.txt", true),
            ("new/dir/file", true),
            (".git", false),
            (".git/hooks/pre-commit", false),
            ("g/config", false),
            ("sub/../.git/config", false),
            (".gitignore", true),
            ("../elsewhere", false),
            ("/etc/passwd", false),
            ("/dev/null", true),
            ("/dev/pts/0", true),
        ];
        for (path, want) in table {
            assert_eq!(
                permitted(Path::new(path), &ws, &writable, &read_only),
                *want,
                "{path}"
            );
        }
        assert!(permitted(Path::new(".git/config"), &ws, &writable, &[]));
        assert!(could_write(Path::new("a.txt"), &ws));
        assert!(!could_write(Path::new("no/such/dir/f"), &ws));
    }
}
