//! Paths as the kernel resolves them beneath one open handle of the workspace root, and
//! file operations through the handle that was resolved.
//!
//! A [`Workspace`] holds the root directory open. [`Workspace::resolve`] opens the
//! parent directory of a path with `openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)`,
//! so symlinks and `..` are followed by the kernel and can never lead above the root;
//! where `openat2` is missing (or refuses an absolute symlink that stays inside), a walk
//! component by component with `openat(O_NOFOLLOW)` does the same. The [`Target`] it
//! returns names the file by that open parent handle plus one plain name, and says
//! where it is (`rel`, read back from the handle), so a check judges what the kernel
//! opened. Reading, the atomic write (temp file + `renameat` in the same handle) and
//! removal all go through that handle: no second lookup by name.
//!
//! In trust mode the root is `/` and `..` stops there, as for the kernel. What is
//! allowed or asked is not decided here; policy judges `rel`.

use std::collections::VecDeque;
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Write as _};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, ResolveFlags, Stat};
use rustix::io::Errno;

use crate::{ToolContext, ToolError, paths};

/// Symlink hops followed before giving up (as the kernel's ELOOP limit).
const MAX_LINK_HOPS: u32 = 40;

/// Where paths may lead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scope {
    /// Only beneath the root: `..` at the root and links out of it are refused.
    Beneath,
    /// Anywhere (trust mode): the root is `/`, and absolute links start from it.
    Anywhere,
}

/// An open handle of the directory every path is resolved beneath.
#[derive(Debug)]
pub struct Workspace {
    root: OwnedFd,
    /// Where `root` is, as the kernel reported it when it was opened.
    root_path: PathBuf,
    /// The workspace, for the relative form of paths (differs from `root_path` in trust
    /// mode, where the root is `/`).
    workspace: PathBuf,
    scope: Scope,
}

/// One path, resolved: an open handle of its parent directory (the deepest one that
/// exists), the directories still to make below it, and the file's name in the last.
#[derive(Debug)]
pub struct Target {
    dir: OwnedFd,
    /// Where `dir` was when it was resolved; checked again before a rename lands.
    dir_path: PathBuf,
    /// Directories that do not exist yet, outermost first.
    missing: Vec<OsString>,
    /// The final name; `None` when the path is `dir` itself.
    name: Option<OsString>,
    abs: PathBuf,
    rel: String,
}

/// What a [`Target`] names on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symlink swapped in since, a device, socket or pipe.
    Other,
}

/// One piece of a path: a name, or `..`.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Up,
    Name(OsString),
}

impl Workspace {
    /// Opens `workspace` as the root everything must stay beneath.
    pub fn open(workspace: &Path) -> Result<Self, ToolError> {
        Self::open_as(workspace, workspace, Scope::Beneath)
    }

    /// Resolves from `/`, naming paths relative to `workspace` when they are inside it
    /// and absolute when not: for saying where a path leads without refusing it.
    pub fn anywhere(workspace: &Path) -> Result<Self, ToolError> {
        Self::open_as(Path::new("/"), workspace, Scope::Anywhere)
    }

    /// The root a tool call may use: the workspace, or `/` when the user turned trust on
    /// (then paths may lead anywhere, but are still resolved once, by the kernel).
    pub fn for_ctx(ctx: &ToolContext) -> Result<Self, ToolError> {
        if ctx.trust {
            Self::anywhere(&ctx.workspace)
        } else {
            Self::open(&ctx.workspace)
        }
    }

    fn open_as(root: &Path, workspace: &Path, scope: Scope) -> Result<Self, ToolError> {
        let io = |source| ToolError::Io {
            action: "open the workspace",
            path: workspace.display().to_string(),
            source,
        };
        let fd = rustix::fs::open(root, dir_flags(), Mode::empty()).map_err(|e| io(e.into()))?;
        let root_path = fd_path(&fd).map_err(io)?;
        let workspace = match scope {
            Scope::Beneath => root_path.clone(),
            Scope::Anywhere => workspace
                .canonicalize()
                .unwrap_or_else(|_| workspace.to_path_buf()),
        };
        Ok(Self {
            root: fd,
            root_path,
            workspace,
            scope,
        })
    }

    /// The workspace, as the kernel names it.
    pub fn path(&self) -> &Path {
        &self.workspace
    }

    /// Resolves `path` (relative to the workspace, or absolute) as the kernel does, and
    /// holds its parent directory open. A path that leads outside is `OutsideWorkspace`
    /// (unless in trust mode); `..` after a directory that does not exist yet stays
    /// within the part still to be made.
    pub fn resolve(&self, path: &str) -> Result<Target, ToolError> {
        let trimmed = path.trim();
        if trimmed.is_empty() {
            return Err(ToolError::InvalidArguments("path is empty".into()));
        }
        if trimmed.contains('\0') {
            return Err(ToolError::InvalidArguments(
                "path contains a NUL byte".into(),
            ));
        }
        let outside = || ToolError::OutsideWorkspace {
            path: trimmed.to_owned(),
        };
        let io = |source: io::Error| ToolError::Io {
            action: "resolve",
            path: trimmed.to_owned(),
            source,
        };
        let given = Path::new(trimmed);
        let full = if given.is_absolute() {
            given.to_path_buf()
        } else {
            self.workspace.join(given)
        };
        let mut parts = self.beneath_root(&full).ok_or_else(outside)?;
        let mut hops = 0;
        loop {
            let name = match parts.last() {
                Some(Part::Name(name)) => Some(name.clone()),
                _ => None,
            };
            let dir_parts = &parts[..parts.len() - usize::from(name.is_some())];
            let opened = match self.open_dir(dir_parts) {
                Ok(opened) => opened,
                Err(Step::Outside) => return Err(outside()),
                Err(Step::Io(e)) => return Err(io(e)),
                Err(Step::Link(again)) => {
                    hops += 1;
                    if hops > MAX_LINK_HOPS {
                        return Err(io(Errno::LOOP.into()));
                    }
                    parts = again.into_iter().chain(name.map(Part::Name)).collect();
                    continue;
                }
            };
            let (dir, missing) = opened;
            let dir_path = fd_path(&dir).map_err(io)?;
            if let (Some(name), true) = (&name, missing.is_empty())
                && let Some(link) = read_link(&dir, name).map_err(io)?
            {
                // The final name is a symlink: judge and write where it leads.
                hops += 1;
                if hops > MAX_LINK_HOPS {
                    return Err(io(Errno::LOOP.into()));
                }
                let next = if link.is_absolute() {
                    link
                } else {
                    dir_path.join(link)
                };
                parts = self.beneath_root(&next).ok_or_else(outside)?;
                continue;
            }
            let mut abs = dir_path.clone();
            abs.extend(&missing);
            if let Some(name) = &name {
                abs.push(name);
            }
            let rel = paths::relative(&self.workspace, &abs);
            return Ok(Target {
                dir,
                dir_path,
                missing,
                name,
                abs,
                rel,
            });
        }
    }

    /// Opens the file at `path` (absolute, or relative to the workspace) for reading,
    /// resolved beneath the root in one `openat2` where the kernel has it: for walks that
    /// read many files and need no handle of the parent.
    pub fn open_file(&self, path: &Path) -> Result<File, ToolError> {
        let full = if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.workspace.join(path)
        };
        let outside = || ToolError::OutsideWorkspace {
            path: path.display().to_string(),
        };
        let parts = self.beneath_root(&full).ok_or_else(outside)?;
        let flags = OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NOCTTY;
        match rustix::fs::openat2(
            &self.root,
            join(&parts),
            flags,
            Mode::empty(),
            self.resolve_flags(),
        ) {
            Ok(fd) => Ok(File::from(fd)),
            Err(e) if walk_instead(e) => {
                let text = full.to_string_lossy();
                self.resolve(&text)?
                    .open_read()
                    .map_err(|source| ToolError::Io {
                        action: "read",
                        path: paths::relative(&self.workspace, &full),
                        source,
                    })
            }
            Err(e) => Err(ToolError::Io {
                action: "read",
                path: paths::relative(&self.workspace, &full),
                source: e.into(),
            }),
        }
    }

    /// Whether `path` (absolute, or relative to the workspace) names something beneath
    /// the root now, the last name not followed: for walks that read directories by name,
    /// so that a name read through a directory swapped for a link to elsewhere is shown
    /// only when it is in the workspace too.
    pub fn has(&self, path: &Path) -> bool {
        let full = if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.workspace.join(path)
        };
        let Some(parts) = self.beneath_root(&full) else {
            return false;
        };
        let flags = OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        match rustix::fs::openat2(
            &self.root,
            join(&parts),
            flags,
            Mode::empty(),
            self.resolve_flags(),
        ) {
            Ok(_) => true,
            // Where the kernel cannot say in one step, the walk decides (a last name that
            // is a link counts where it leads there).
            Err(e) if walk_instead(e) => self
                .resolve(&full.to_string_lossy())
                .is_ok_and(|t| t.stat().is_ok_and(|st| st.is_some())),
            Err(_) => false,
        }
    }

    fn resolve_flags(&self) -> ResolveFlags {
        match self.scope {
            Scope::Beneath => ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS,
            Scope::Anywhere => ResolveFlags::IN_ROOT | ResolveFlags::NO_MAGICLINKS,
        }
    }

    /// `full` (absolute) as parts below the root, or `None` when it is not below it.
    /// Only a leading prefix is compared as text: everything after it is resolved by
    /// the kernel.
    fn beneath_root(&self, full: &Path) -> Option<Vec<Part>> {
        let rest = full.strip_prefix(&self.root_path).ok()?;
        let mut parts = Vec::new();
        parts.extend(relative_parts(rest));
        Some(parts)
    }

    /// Opens the deepest existing directory of `parts` and returns the names below it
    /// that do not exist yet. `..` among those is applied to them by text: they are
    /// directories atto will make, with no symlinks in them.
    fn open_dir(&self, parts: &[Part]) -> Result<(OwnedFd, Vec<OsString>), Step> {
        for split in (0..=parts.len()).rev() {
            match self.open_beneath(&parts[..split]) {
                Ok(fd) => {
                    if split < parts.len()
                        && let Part::Name(first) = &parts[split]
                        && let Some(link) = read_link(&fd, first).map_err(Step::Io)?
                    {
                        // A dangling symlink on the way: continue from where it points.
                        let here = fd_path(&fd).map_err(Step::Io)?;
                        let next = if link.is_absolute() {
                            link
                        } else {
                            here.join(link)
                        };
                        let mut again = self.beneath_root(&next).ok_or(Step::Outside)?;
                        again.extend_from_slice(&parts[split + 1..]);
                        return Err(Step::Link(again));
                    }
                    let missing = lexical_tail(&parts[split..]).ok_or(Step::Outside)?;
                    return Ok((fd, missing));
                }
                Err(e) if e == Errno::NOENT => {}
                Err(e) if e == Errno::XDEV => return Err(Step::Outside),
                Err(e) => return Err(Step::Io(e.into())),
            }
        }
        Err(Step::Io(Errno::NOENT.into()))
    }

    /// Opens the directory `parts` beneath the root: `openat2` when the kernel has it,
    /// else (or for an absolute symlink `openat2` will not follow) a walk by hand.
    fn open_beneath(&self, parts: &[Part]) -> Result<OwnedFd, Errno> {
        let text = join(parts);
        let resolve = self.resolve_flags();
        match rustix::fs::openat2(&self.root, &text, dir_flags(), Mode::empty(), resolve) {
            Err(e) if walk_instead(e) => self.walk(parts),
            other => other,
        }
    }

    /// Opens the directory `parts` one component at a time with `O_NOFOLLOW`, following
    /// symlinks by hand so that none leads above the root. Absolute symlinks are taken
    /// only when they point below the root.
    fn walk(&self, parts: &[Part]) -> Result<OwnedFd, Errno> {
        let mut stack: Vec<OwnedFd> = vec![rustix::fs::openat(
            &self.root,
            ".",
            dir_flags(),
            Mode::empty(),
        )?];
        let mut queue: VecDeque<Part> = parts.iter().cloned().collect();
        let mut hops = 0;
        while let Some(part) = queue.pop_front() {
            let top = stack.last().ok_or(Errno::XDEV)?;
            let name = match part {
                Part::Up if stack.len() > 1 => {
                    stack.pop();
                    continue;
                }
                Part::Up if self.scope == Scope::Anywhere => continue,
                Part::Up => return Err(Errno::XDEV),
                Part::Name(name) => name,
            };
            match rustix::fs::openat(top, &name, dir_flags() | OFlags::NOFOLLOW, Mode::empty()) {
                Ok(fd) => stack.push(fd),
                Err(e) if e == Errno::NOTDIR || e == Errno::LOOP => {
                    let link = match rustix::fs::readlinkat(top, &name, Vec::new()) {
                        Ok(link) => PathBuf::from(OsStr::from_bytes(link.as_bytes())),
                        Err(_) => return Err(e),
                    };
                    hops += 1;
                    if hops > MAX_LINK_HOPS {
                        return Err(Errno::LOOP);
                    }
                    // The stack holds the real directories walked through, so a
                    // relative link continues from the top and its `..` pops.
                    let mut expanded = if link.is_absolute() {
                        stack.truncate(1);
                        self.beneath_root(&link).ok_or(Errno::XDEV)?
                    } else {
                        relative_parts(&link)
                    };
                    expanded.extend(queue.drain(..));
                    queue = expanded.into();
                }
                Err(e) => return Err(e),
            }
        }
        stack.pop().ok_or(Errno::XDEV)
    }
}

/// What stopped opening a directory.
enum Step {
    Outside,
    Io(io::Error),
    /// A dangling symlink was met: resolve these parts from the root instead.
    Link(Vec<Part>),
}

impl Target {
    /// Where the kernel put this path: workspace-relative with `/` ("." for the root),
    /// absolute when it is outside (trust mode).
    pub fn rel(&self) -> &str {
        &self.rel
    }

    /// The absolute path the kernel resolved.
    pub fn abs(&self) -> &Path {
        &self.abs
    }

    /// What is at the path (not following a symlink there), or `None` when nothing is.
    pub fn stat(&self) -> io::Result<Option<Stat>> {
        let Some(name) = &self.name else {
            return self.in_parent(|dir| rustix::fs::fstat(dir).map_err(Into::into));
        };
        let found =
            self.in_parent(
                |dir| match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
                    Ok(st) => Ok(Some(st)),
                    Err(e) if e == Errno::NOENT => Ok(None),
                    Err(e) => Err(e.into()),
                },
            )?;
        Ok(found.flatten())
    }

    /// What kind of thing is at the path, or `None` when nothing is.
    pub fn kind(&self) -> io::Result<Option<Kind>> {
        Ok(self
            .stat()?
            .map(|st| match FileType::from_raw_mode(st.st_mode) {
                FileType::RegularFile => Kind::File,
                FileType::Directory => Kind::Dir,
                _ => Kind::Other,
            }))
    }

    /// Opens the file for reading through the resolved parent handle.
    pub fn open_read(&self) -> io::Result<File> {
        let name = self.name.as_ref().ok_or(Errno::ISDIR)?;
        let fd = self.in_parent(|dir| {
            rustix::fs::openat(
                dir,
                name,
                OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .map_err(Into::into)
        })?;
        fd.map(File::from).ok_or_else(|| Errno::NOENT.into())
    }

    /// Writes `bytes` atomically: the missing directories are made, a temp file is
    /// written in the parent handle and renamed over the name in that same handle. An
    /// existing file keeps its permissions; a new one gets `new_mode` (or 0o600).
    /// Returns whether the file was created.
    pub fn write_atomic(&self, bytes: &[u8], new_mode: Option<u32>) -> io::Result<bool> {
        let name = self.name.as_ref().ok_or(Errno::ISDIR)?;
        let dir = self.make_dirs()?;
        let existing = match rustix::fs::statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) if FileType::from_raw_mode(st.st_mode) == FileType::Directory => {
                return Err(Errno::ISDIR.into());
            }
            // Resolving followed any link here; one now means it was swapped in since.
            Ok(st) if FileType::from_raw_mode(st.st_mode) == FileType::Symlink => {
                return Err(Errno::LOOP.into());
            }
            Ok(st) => Some(st.st_mode & 0o7777),
            Err(e) if e == Errno::NOENT => None,
            Err(e) => return Err(e.into()),
        };
        let tmp = temp_name();
        let fd = rustix::fs::openat(
            &dir,
            &tmp,
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o600),
        )?;
        let result = (|| {
            let mut file = File::from(fd);
            file.write_all(bytes)?;
            file.sync_all()?;
            let mode = existing.or(new_mode).unwrap_or(0o600);
            rustix::fs::fchmod(&file, Mode::from_raw_mode(mode))?;
            self.still_in_place(&dir)?;
            rustix::fs::renameat(&dir, &tmp, &dir, name)?;
            Ok(())
        })();
        if result.is_err() {
            let _ = rustix::fs::unlinkat(&dir, &tmp, AtFlags::empty());
        }
        result.map(|()| existing.is_none())
    }

    /// Removes the file (never a directory) through the resolved parent handle.
    pub fn remove(&self) -> io::Result<()> {
        let name = self.name.as_ref().ok_or(Errno::ISDIR)?;
        self.in_parent(|dir| rustix::fs::unlinkat(dir, name, AtFlags::empty()).map_err(Into::into))?
            .ok_or_else(|| Errno::NOENT.into())
    }

    /// Removes the directories [`Target::write_atomic`] made for this path, deepest first,
    /// where they are still empty.
    pub fn remove_made_dirs(&self) {
        for depth in (1..=self.missing.len()).rev() {
            let rel: PathBuf = self.missing[..depth].iter().collect();
            let _ = rustix::fs::unlinkat(&self.dir, &rel, AtFlags::REMOVEDIR);
        }
    }

    /// Runs `f` on the handle of the directory the file lives in; `None` when that
    /// directory (one this path was to make) does not exist. Directories made since
    /// the path was resolved are opened one at a time with `O_NOFOLLOW`.
    fn in_parent<T>(&self, f: impl FnOnce(&OwnedFd) -> io::Result<T>) -> io::Result<Option<T>> {
        if self.missing.is_empty() {
            return f(&self.dir).map(Some);
        }
        let mut dir: Option<OwnedFd> = None;
        for name in &self.missing {
            let from = dir.as_ref().unwrap_or(&self.dir);
            match rustix::fs::openat(from, name, dir_flags() | OFlags::NOFOLLOW, Mode::empty()) {
                Ok(fd) => dir = Some(fd),
                Err(e) if e == Errno::NOENT => return Ok(None),
                Err(e) => return Err(e.into()),
            }
        }
        dir.as_ref().map(f).transpose()
    }

    /// Makes the missing directories one at a time, each opened with `O_NOFOLLOW` right
    /// after it was made, and returns the handle of the last.
    fn make_dirs(&self) -> io::Result<OwnedFd> {
        let mut dir = rustix::fs::openat(&self.dir, ".", dir_flags(), Mode::empty())?;
        for name in &self.missing {
            match rustix::fs::mkdirat(&dir, name, Mode::from_raw_mode(0o777)) {
                Ok(()) => {}
                Err(e) if e == Errno::EXIST => {}
                Err(e) => return Err(e.into()),
            }
            dir = rustix::fs::openat(&dir, name, dir_flags() | OFlags::NOFOLLOW, Mode::empty())?;
        }
        Ok(dir)
    }

    /// Refuses to land a write when the directory it goes into was moved elsewhere since
    /// it was resolved (its handle follows it, the judgement would not).
    fn still_in_place(&self, dir: &OwnedFd) -> io::Result<()> {
        let mut expected = self.dir_path.clone();
        expected.extend(&self.missing);
        if fd_path(dir)? == expected {
            Ok(())
        } else {
            Err(io::Error::other(
                "the directory was moved while the file was being written",
            ))
        }
    }
}

/// Whether `openat2` failing with `e` calls for the walk by hand: the kernel lacks it
/// (`ENOSYS`, or `EPERM` from container seccomp profiles that predate it), refused an
/// absolute symlink that may still point inside (`EXDEV`), or saw a rename race
/// (`EAGAIN`). The walk gives the final answer in each case.
fn walk_instead(e: Errno) -> bool {
    e == Errno::NOSYS || e == Errno::PERM || e == Errno::XDEV || e == Errno::AGAIN
}

/// `O_PATH | O_DIRECTORY | O_CLOEXEC`: a handle to resolve beneath, not to read.
fn dir_flags() -> OFlags {
    OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC
}

/// Where the kernel says `fd` is.
fn fd_path(fd: &impl AsFd) -> io::Result<PathBuf> {
    std::fs::read_link(format!("/proc/self/fd/{}", fd.as_fd().as_raw_fd()))
}

/// The target of the symlink `name` in `dir`, or `None` when it is not a symlink (or
/// does not exist).
fn read_link(dir: &OwnedFd, name: &OsStr) -> io::Result<Option<PathBuf>> {
    match rustix::fs::readlinkat(dir, name, Vec::new()) {
        Ok(link) => Ok(Some(PathBuf::from(OsStr::from_bytes(link.as_bytes())))),
        Err(e) if e == Errno::INVAL || e == Errno::NOENT || e == Errno::NOTDIR => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// Names below an existing directory with `..` applied by text; `None` when `..` would
/// climb into the existing directory's parent.
fn lexical_tail(parts: &[Part]) -> Option<Vec<OsString>> {
    let mut out: Vec<OsString> = Vec::new();
    for p in parts {
        match p {
            Part::Name(n) => out.push(n.clone()),
            Part::Up => {
                out.pop()?;
            }
        }
    }
    Some(out)
}

/// The names and `..` of a relative path (`.` dropped).
fn relative_parts(path: &Path) -> Vec<Part> {
    path.components()
        .filter_map(|c| match c {
            Component::Normal(name) => Some(Part::Name(name.to_owned())),
            Component::ParentDir => Some(Part::Up),
            Component::CurDir | Component::RootDir | Component::Prefix(_) => None,
        })
        .collect()
}

fn join(parts: &[Part]) -> PathBuf {
    if parts.is_empty() {
        return PathBuf::from(".");
    }
    parts
        .iter()
        .map(|p| match p {
            Part::Up => OsStr::new(".."),
            Part::Name(n) => n.as_os_str(),
        })
        .collect()
}

/// A name no one else picks: the process id and a counter, created with `O_EXCL`.
fn temp_name() -> OsString {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    OsString::from(format!(".atto-write-{}-{n}-{nanos:x}", std::process::id()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// The walk by hand (for kernels without `openat2`) opens the same directories.
    #[test]
    fn the_walk_agrees_with_openat2() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join(".git/objects")).unwrap();
        symlink(".git/objects", root.join("gobj")).unwrap();
        symlink(root.join(".git"), root.join("abs_git")).unwrap();
        symlink("/", root.join("slash")).unwrap();
        let ws = Workspace::open(&root).unwrap();
        let name = |s: &str| Part::Name(s.into());
        let cases: Vec<(Vec<Part>, Option<&str>)> = vec![
            (vec![name("gobj"), Part::Up], Some(".git")),
            (vec![name("gobj")], Some(".git/objects")),
            (vec![name("abs_git"), name("objects")], Some(".git/objects")),
            (vec![], Some("")),
            (vec![Part::Up], None),
            (vec![name("gobj"), Part::Up, Part::Up, Part::Up], None),
            (vec![name("slash")], None),
        ];
        for (parts, want) in cases {
            let got = ws
                .walk(&parts)
                .ok()
                .map(|fd| fd_path(&fd).unwrap())
                .map(|p| p.strip_prefix(&root).unwrap().to_path_buf());
            assert_eq!(got, want.map(PathBuf::from), "{parts:?}");
        }
    }
}
