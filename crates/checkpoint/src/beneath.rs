//! Reaching workspace paths through one handle on the workspace, so that what a snapshot
//! reads and what a restore writes is the path the kernel resolved beneath it, never a file
//! elsewhere that a symbolic link, swapped in at any moment, points to.
//!
//! A path is opened one component at a time from the workspace's handle (`openat` with
//! `O_NOFOLLOW`): a directory on the way that is a symbolic link fails the open instead of
//! being followed, and a path with `..` or a root is refused, so nothing leaves the workspace
//! — what `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)` enforces, on every kernel. A file
//! is opened with `O_NOFOLLOW` too and judged by `fstat` of the opened descriptor: what is read
//! is what was checked. This module decides nothing about what a snapshot holds; it only
//! refuses to reach outside.

use std::ffi::OsStr;
use std::fs::File;
use std::io;
use std::path::{Component, Path};

#[cfg(unix)]
use rustix::fs::{AtFlags, Mode, OFlags};
#[cfg(unix)]
use std::os::fd::OwnedFd;

/// What stands at a path, as `lstat` (or `fstat` of an opened descriptor) says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Type {
    /// A regular file, executable by its owner or not.
    File {
        executable: bool,
    },
    Link,
    Dir,
    /// A device, socket or pipe: nothing a snapshot holds.
    Other,
}

/// Whether opening the directory above a path creates the directories missing on the way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Missing {
    Create,
    Fail,
}

/// A handle on the workspace root.
#[derive(Debug)]
pub(crate) struct Beneath {
    #[cfg(unix)]
    root: OwnedFd,
    #[cfg(not(unix))]
    root: std::path::PathBuf,
}

/// A directory opened beneath the workspace, and the last component of the path asked for.
pub(crate) struct Parent<'a> {
    #[cfg(unix)]
    dir: OwnedFd,
    #[cfg(not(unix))]
    dir: std::path::PathBuf,
    pub(crate) name: &'a OsStr,
}

/// The normal components of a workspace-relative path; anything else is refused.
fn parts(rel: &Path) -> io::Result<Vec<&OsStr>> {
    rel.components()
        .map(|c| match c {
            Component::Normal(name) => Ok(name),
            _ => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} is not a plain path inside the workspace", rel.display()),
            )),
        })
        .collect()
}

#[cfg(unix)]
fn type_of(stat: &rustix::fs::Stat) -> Type {
    match rustix::fs::FileType::from_raw_mode(stat.st_mode) {
        rustix::fs::FileType::RegularFile => Type::File {
            executable: stat.st_mode & 0o100 != 0,
        },
        rustix::fs::FileType::Symlink => Type::Link,
        rustix::fs::FileType::Directory => Type::Dir,
        _ => Type::Other,
    }
}

#[cfg(unix)]
impl Beneath {
    /// Opens the workspace (a canonical path: nothing above it is judged here).
    pub(crate) fn open(workspace: &Path) -> io::Result<Self> {
        let root = rustix::fs::open(
            workspace,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        Ok(Self { root })
    }

    /// The directory holding `rel`, reached without following any symbolic link.
    pub(crate) fn parent<'a>(&self, rel: &'a Path, missing: Missing) -> io::Result<Parent<'a>> {
        let parts = parts(rel)?;
        let Some((name, dirs)) = parts.split_last() else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "the workspace root itself is not a file",
            ));
        };
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let mut dir = rustix::fs::openat(&self.root, ".", flags, Mode::empty())?;
        let mut walked = std::path::PathBuf::new();
        for part in dirs {
            walked.push(part);
            let opened = match rustix::fs::openat(&dir, *part, flags, Mode::empty()) {
                Err(rustix::io::Errno::NOENT) if missing == Missing::Create => {
                    match rustix::fs::mkdirat(&dir, *part, Mode::from_raw_mode(0o777)) {
                        Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                        Err(e) => return Err(e.into()),
                    }
                    rustix::fs::openat(&dir, *part, flags, Mode::empty())
                }
                other => other,
            };
            dir = opened.map_err(|e| match e {
                rustix::io::Errno::LOOP | rustix::io::Errno::NOTDIR => io::Error::new(
                    io::ErrorKind::NotADirectory,
                    format!(
                        "{} is not a directory (a symbolic link or a file); nothing is \
                         reached through it",
                        walked.display()
                    ),
                ),
                e => e.into(),
            })?;
        }
        Ok(Parent { dir, name })
    }

    /// What stands at `rel`, not following a symbolic link there.
    pub(crate) fn lstat(&self, rel: &Path) -> io::Result<Type> {
        let parent = self.parent(rel, Missing::Fail)?;
        parent.stat()
    }

    /// The regular file at `rel`, opened without following a symbolic link anywhere on the
    /// way, with its type and mode as `fstat` of the opened descriptor says. Anything else
    /// standing there (a link, a directory, a pipe) fails with `InvalidData`.
    pub(crate) fn open_file(&self, rel: &Path) -> io::Result<(File, Type)> {
        let parent = self.parent(rel, Missing::Fail)?;
        // NONBLOCK: a pipe swapped in must not stall the open; it is refused below.
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
        let fd = rustix::fs::openat(&parent.dir, parent.name, flags, Mode::empty()).map_err(
            |e| match e {
                rustix::io::Errno::LOOP => not_a_file(rel),
                e => e.into(),
            },
        )?;
        let kind = type_of(&rustix::fs::fstat(&fd)?);
        if !matches!(kind, Type::File { .. }) {
            return Err(not_a_file(rel));
        }
        Ok((File::from(fd), kind))
    }

    /// The target of the symbolic link at `rel`, as bytes.
    pub(crate) fn read_link(&self, rel: &Path) -> io::Result<Vec<u8>> {
        let parent = self.parent(rel, Missing::Fail)?;
        let target = rustix::fs::readlinkat(&parent.dir, parent.name, Vec::new())?;
        Ok(target.into_bytes())
    }
}

fn not_a_file(rel: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("{} is no longer a regular file", rel.display()),
    )
}

#[cfg(unix)]
impl Parent<'_> {
    /// What stands at the name, not following a symbolic link.
    pub(crate) fn stat(&self) -> io::Result<Type> {
        let stat = rustix::fs::statat(&self.dir, self.name, AtFlags::SYMLINK_NOFOLLOW)?;
        Ok(type_of(&stat))
    }

    /// Creates `name` in this directory as a new file (never an existing one, never through
    /// a link), with `mode` before the umask.
    pub(crate) fn create_new(&self, name: &OsStr, mode: u32) -> io::Result<File> {
        let flags =
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = rustix::fs::openat(&self.dir, name, flags, Mode::from_raw_mode(mode))?;
        Ok(File::from(fd))
    }

    /// Creates a symbolic link `name` in this directory pointing at `target`.
    pub(crate) fn symlink(&self, target: &[u8], name: &OsStr) -> io::Result<()> {
        use std::os::unix::ffi::OsStrExt as _;
        rustix::fs::symlinkat(OsStr::from_bytes(target), &self.dir, name)?;
        Ok(())
    }

    /// Renames `from` in this directory over the name.
    pub(crate) fn rename_over(&self, from: &OsStr) -> io::Result<()> {
        rustix::fs::renameat(&self.dir, from, &self.dir, self.name)?;
        Ok(())
    }

    /// Removes the file or link `name` in this directory.
    pub(crate) fn remove_file(&self, name: &OsStr) -> io::Result<()> {
        rustix::fs::unlinkat(&self.dir, name, AtFlags::empty())?;
        Ok(())
    }

    /// Removes the directory at the name, if it is empty.
    pub(crate) fn remove_dir(&self) -> io::Result<()> {
        rustix::fs::unlinkat(&self.dir, self.name, AtFlags::REMOVEDIR)?;
        Ok(())
    }

    /// Creates a directory at the name (mode 777 before the umask, as git does).
    pub(crate) fn create_dir(&self) -> io::Result<()> {
        rustix::fs::mkdirat(&self.dir, self.name, Mode::from_raw_mode(0o777))?;
        Ok(())
    }

    /// Sets the owner's, group's and others' executable bits of the regular file at the name
    /// wherever they can read it, or clears them all.
    pub(crate) fn set_executable(&self, executable: bool) -> io::Result<()> {
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
        let fd = rustix::fs::openat(&self.dir, self.name, flags, Mode::empty())?;
        let stat = rustix::fs::fstat(&fd)?;
        if !matches!(type_of(&stat), Type::File { .. }) {
            return Err(not_a_file(Path::new(self.name)));
        }
        let mode = stat.st_mode & 0o7777;
        // Executable wherever readable, as git's 755 under the user's umask.
        let mode = if executable {
            mode | ((mode & 0o444) >> 2)
        } else {
            mode & !0o111
        };
        rustix::fs::fchmod(&fd, Mode::from_raw_mode(mode))?;
        Ok(())
    }
}

/// Without `openat`: the same calls on joined paths, refusing symbolic links found on the way
/// (a swap between the check and the use is not caught here).
#[cfg(not(unix))]
impl Beneath {
    pub(crate) fn open(workspace: &Path) -> io::Result<Self> {
        Ok(Self {
            root: workspace.to_path_buf(),
        })
    }

    pub(crate) fn parent<'a>(&self, rel: &'a Path, missing: Missing) -> io::Result<Parent<'a>> {
        let parts = parts(rel)?;
        let Some((name, dirs)) = parts.split_last() else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "the workspace root",
            ));
        };
        let mut dir = self.root.clone();
        for part in dirs {
            dir.push(part);
            match dir.symlink_metadata() {
                Ok(m) if m.is_dir() => {}
                Ok(_) => {
                    return Err(io::Error::new(
                        io::ErrorKind::NotADirectory,
                        format!("{} is not a directory", dir.display()),
                    ));
                }
                Err(_) if missing == Missing::Create => std::fs::create_dir(&dir)?,
                Err(e) => return Err(e),
            }
        }
        Ok(Parent { dir, name })
    }

    pub(crate) fn lstat(&self, rel: &Path) -> io::Result<Type> {
        self.parent(rel, Missing::Fail)?.stat()
    }

    pub(crate) fn open_file(&self, rel: &Path) -> io::Result<(File, Type)> {
        let parent = self.parent(rel, Missing::Fail)?;
        if !matches!(parent.stat()?, Type::File { .. }) {
            return Err(not_a_file(rel));
        }
        Ok((
            File::open(parent.dir.join(parent.name))?,
            Type::File { executable: false },
        ))
    }

    pub(crate) fn read_link(&self, rel: &Path) -> io::Result<Vec<u8>> {
        let parent = self.parent(rel, Missing::Fail)?;
        let target = std::fs::read_link(parent.dir.join(parent.name))?;
        Ok(target.to_string_lossy().replace('\\', "/").into_bytes())
    }
}

#[cfg(not(unix))]
impl Parent<'_> {
    pub(crate) fn stat(&self) -> io::Result<Type> {
        let m = self.dir.join(self.name).symlink_metadata()?;
        Ok(if m.file_type().is_symlink() {
            Type::Link
        } else if m.is_dir() {
            Type::Dir
        } else if m.is_file() {
            Type::File { executable: false }
        } else {
            Type::Other
        })
    }

    pub(crate) fn create_new(&self, name: &OsStr, _mode: u32) -> io::Result<File> {
        File::options()
            .write(true)
            .create_new(true)
            .open(self.dir.join(name))
    }

    /// Without symbolic links: a file holding the target, as git's `core.symlinks=false`.
    pub(crate) fn symlink(&self, target: &[u8], name: &OsStr) -> io::Result<()> {
        use std::io::Write as _;
        self.create_new(name, 0o666)?.write_all(target)
    }

    pub(crate) fn rename_over(&self, from: &OsStr) -> io::Result<()> {
        std::fs::rename(self.dir.join(from), self.dir.join(self.name))
    }

    pub(crate) fn remove_file(&self, name: &OsStr) -> io::Result<()> {
        std::fs::remove_file(self.dir.join(name))
    }

    pub(crate) fn remove_dir(&self) -> io::Result<()> {
        std::fs::remove_dir(self.dir.join(self.name))
    }

    pub(crate) fn create_dir(&self) -> io::Result<()> {
        std::fs::create_dir(self.dir.join(self.name))
    }

    pub(crate) fn set_executable(&self, _executable: bool) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn nothing_is_reached_through_a_symbolic_link_or_above_the_workspace() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(ws.join("src")).unwrap();
        std::fs::write(ws.join("src/a.txt"), "inside").unwrap();
        std::fs::write(dir.path().join("secret"), "outside").unwrap();
        std::os::unix::fs::symlink(dir.path(), ws.join("up")).unwrap();
        std::os::unix::fs::symlink(dir.path().join("secret"), ws.join("leaf")).unwrap();
        let b = Beneath::open(&ws).unwrap();

        let (mut file, kind) = b.open_file(Path::new("src/a.txt")).unwrap();
        let mut text = String::new();
        io::Read::read_to_string(&mut file, &mut text).unwrap();
        assert_eq!(
            (text.as_str(), kind),
            ("inside", Type::File { executable: false })
        );

        for rel in ["up/secret", "leaf", "../secret", "/etc/passwd"] {
            assert!(b.open_file(Path::new(rel)).is_err(), "{rel} was opened");
        }
        assert_eq!(b.lstat(Path::new("leaf")).unwrap(), Type::Link);
        assert!(b.parent(Path::new("up/new/x"), Missing::Create).is_err());
        assert!(!dir.path().join("new").exists());
    }
}
