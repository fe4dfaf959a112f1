//! Placeholders for protected directories that do not exist: made empty just before one
//! command starts, so its mount namespace can cover them read-only, and removed again
//! once the command has ended, so no workspace is changed by a command that did not
//! write there.
//!
//! Runs in the child between fork and exec, before the namespaces: raw syscalls on
//! memory prepared before fork only. Each placeholder is held with a shared `flock` for
//! as long as a command that sees it runs (any command, of any atto process), by a
//! keeper process forked here outside the command's namespaces and process group: a
//! cancel or timeout kills the group with SIGKILL, and the keeper outlives it. When the
//! command's first process is gone, the keeper removes each placeholder if it can take
//! the lock exclusively (no other command holds it) and the directory is empty (`rmdir`
//! fails otherwise), so a placeholder never vanishes beneath a command still relying on
//! it, and anything written there by someone else is kept.
//!
//! On a read-only file system no placeholder is made, and none is needed: the command
//! cannot remount it.
//!
//! Does not decide which directories get placeholders (preparing does) nor mount them
//! (`child::enter_mount_namespace` does, failing rather than skipping one that is gone).

use std::ffi::{CStr, CString};
use std::io;
use std::sync::atomic::{AtomicI32, Ordering};

use crate::MAX_PLACEHOLDERS as MAX;

/// How often one placeholder is made again when it is removed between being made and
/// being locked (another command's keeper ending at that moment).
const ATTEMPTS: usize = 8;

/// Which placeholders exist for this command: all but those on a read-only file system,
/// where the command cannot create them either (Landlock forbids it to remount).
#[derive(Clone, Copy)]
pub(super) struct Held([bool; MAX]);

impl Held {
    /// Whether placeholder `i` exists and must be covered.
    pub(super) fn holds(&self, i: usize) -> bool {
        self.0.get(i).copied().unwrap_or(false)
    }
}

/// Makes each of `dirs` that is missing, locks each shared and hands the locks to a
/// keeper process that removes the placeholders once this process has ended. On error
/// nothing is held, and the placeholders made are removed again when no one else holds
/// them.
pub(super) fn hold(dirs: &[CString]) -> io::Result<Held> {
    let mut fds: [libc::c_int; MAX] = [-1; MAX];
    let mut names: [Option<&CString>; MAX] = [None; MAX];
    let mut held = Held([false; MAX]);
    let mut n = 0;
    for (i, dir) in dirs.iter().take(MAX).enumerate() {
        match lock(dir) {
            Ok(Some(fd)) => {
                fds[n] = fd;
                names[n] = Some(dir);
                n += 1;
                held.0[i] = true;
            }
            Ok(None) => {}
            Err(e) => {
                release(&names[..n], &fds[..n]);
                return Err(e);
            }
        }
    }
    if n == 0 {
        return Ok(held);
    }
    if let Err(e) = spawn_keeper(&names[..n], &fds[..n]) {
        release(&names[..n], &fds[..n]);
        return Err(e);
    }
    // The keeper's copies keep the locks: they belong to the open file, not the process.
    for fd in &fds[..n] {
        close(*fd);
    }
    Ok(held)
}

/// Makes `dir` if it is missing and returns a descriptor of it, locked shared, once the
/// locked directory is still the one at `dir`; `None` when the file system is read-only.
fn lock(dir: &CStr) -> io::Result<Option<libc::c_int>> {
    for _ in 0..ATTEMPTS {
        match mkdir(dir) {
            Err(e) if e.raw_os_error() == Some(libc::EROFS) => return Ok(None),
            Err(e) if e.raw_os_error() != Some(libc::EEXIST) => return Err(e),
            Ok(()) | Err(_) => {}
        }
        // Never through a symlink: a link here would lead the mount elsewhere.
        let fd = match open_dir(dir) {
            Ok(fd) => fd,
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => continue,
            Err(e) => return Err(e),
        };
        if let Err(e) = flock(fd, libc::LOCK_SH) {
            close(fd);
            return Err(e);
        }
        // A keeper may have removed it between `mkdir` and the lock.
        if same_dir(fd, dir) {
            return Ok(Some(fd));
        }
        close(fd);
    }
    Err(io::Error::from_raw_os_error(libc::EAGAIN))
}

/// The keeper of this process, once forked; 0 before. Set and read in the child only
/// (its own copy of the static), so the supervisor can end the keeper's wait.
static KEEPER: AtomicI32 = AtomicI32::new(0);

/// Forks the keeper: a new session (out of the command's process group, so the signal
/// that kills the group spares it), every descriptor closed but `fds`, waiting until this
/// process says the command ended ([`finish`]) or dies, then removing what no one else
/// holds.
#[expect(unsafe_code, reason = "fork and _exit are raw process calls")]
fn spawn_keeper(dirs: &[Option<&CString>], fds: &[libc::c_int]) -> io::Result<()> {
    // SAFETY: a plain integer call, and signal-mask changes on live locals.
    let (parent, mut set, mut old) = unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&raw mut set);
        libc::sigaddset(&raw mut set, libc::SIGUSR1);
        (libc::getpid(), set, std::mem::zeroed::<libc::sigset_t>())
    };
    // Blocked before the fork, so a `finish` that comes at once cannot kill the keeper
    // before it waits; this process (the command, later) gets its mask back after.
    // SAFETY: both sets are live locals.
    unsafe { libc::sigprocmask(libc::SIG_BLOCK, &raw const set, &raw mut old) };
    // SAFETY: called between fork and exec in a single-threaded child; the keeper branch
    // only makes raw syscalls on memory prepared before fork and `_exit`s.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        keep(parent, &mut set, dirs, fds);
        // SAFETY: ends the keeper without unwinding or running destructors.
        unsafe { libc::_exit(0) }
    }
    let forked = if pid < 0 {
        Err(io::Error::last_os_error())
    } else {
        KEEPER.store(pid, Ordering::Relaxed);
        Ok(())
    };
    // SAFETY: restores the mask saved above.
    unsafe { libc::sigprocmask(libc::SIG_SETMASK, &raw const old, std::ptr::null_mut()) };
    forked
}

/// Called by the supervisor once the command has ended: the keeper releases now, and
/// this waits until it has, so the command's caller finds the workspace as it was.
#[expect(unsafe_code, reason = "kill and waitpid are raw process calls")]
pub(super) fn finish() {
    let keeper = KEEPER.swap(0, Ordering::Relaxed);
    if keeper <= 0 {
        return;
    }
    // SAFETY: signals this process's own child, which has not been reaped, so its pid
    // is still its own; `status` is a live local.
    unsafe {
        libc::kill(keeper, libc::SIGUSR1);
        let mut status: libc::c_int = 0;
        while libc::waitpid(keeper, &raw mut status, 0) < 0
            && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted
        {}
    }
}

/// Called in a child forked after the keeper: the keeper is its parent's, not its own.
pub(super) fn forget() {
    KEEPER.store(0, Ordering::Relaxed);
}

/// The keeper's life: detach, wait for `parent` to say the command ended or to die,
/// release.
#[expect(
    unsafe_code,
    reason = "setsid, sigprocmask, prctl, sigtimedwait and getppid are raw calls"
)]
fn keep(
    parent: libc::pid_t,
    set: &mut libc::sigset_t,
    dirs: &[Option<&CString>],
    fds: &[libc::c_int],
) {
    close_all_but(fds);
    // SAFETY: integer arguments and live locals only; none of these touch other memory.
    // SIGUSR1 (in `set`) is blocked since before the fork.
    unsafe {
        libc::setsid();
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGUSR1, 0, 0, 0);
        // The parent may have ended before the death signal was asked for: then the
        // keeper was already given to another parent. The timeout bounds a missed
        // signal. A signal from anyone but the parent does not end the wait.
        let wait = libc::timespec {
            tv_sec: 1,
            tv_nsec: 0,
        };
        while libc::getppid() == parent {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            let sig = libc::sigtimedwait(&raw const *set, &raw mut info, &raw const wait);
            if sig == libc::SIGUSR1 && info.si_pid() == parent {
                break;
            }
        }
    }
    release(dirs, fds);
}

/// For each placeholder: when no other command holds it, removes it if it is still the
/// locked directory and empty; then drops this hold.
fn release(dirs: &[Option<&CString>], fds: &[libc::c_int]) {
    for (dir, fd) in dirs.iter().zip(fds) {
        let Some(dir) = dir else {
            continue;
        };
        if flock(*fd, libc::LOCK_EX | libc::LOCK_NB).is_ok() && same_dir(*fd, dir) {
            // Fails with ENOTEMPTY when something was written there: that is kept.
            let _ = rmdir(dir);
        }
        close(*fd);
    }
}

/// Closes every descriptor of this process but `keep` (at most [`MAX`]).
#[expect(unsafe_code, reason = "close_range is a raw syscall")]
fn close_all_but(keep: &[libc::c_int]) {
    let mut sorted: [libc::c_int; MAX] = [-1; MAX];
    let n = keep.len().min(MAX);
    sorted[..n].copy_from_slice(&keep[..n]);
    sorted[..n].sort_unstable();
    let mut from: u32 = 0;
    for fd in &sorted[..n] {
        let Ok(fd) = u32::try_from(*fd) else {
            continue;
        };
        if fd > from {
            // SAFETY: closes this process's own descriptors in a range; no memory.
            unsafe { libc::syscall(libc::SYS_close_range, from, fd - 1, 0u32) };
        }
        from = fd.saturating_add(1);
    }
    // SAFETY: as above.
    unsafe { libc::syscall(libc::SYS_close_range, from, u32::MAX, 0u32) };
}

/// Whether `fd` is the directory now at `dir` (not a link, not one removed or replaced).
#[expect(unsafe_code, reason = "fstat and lstat are raw calls writing a local")]
fn same_dir(fd: libc::c_int, dir: &CStr) -> bool {
    // SAFETY: both calls write one `stat` into a live local; `dir` is NUL-terminated.
    unsafe {
        let mut held: libc::stat = std::mem::zeroed();
        let mut now: libc::stat = std::mem::zeroed();
        libc::fstat(fd, &raw mut held) == 0
            && libc::lstat(dir.as_ptr(), &raw mut now) == 0
            && held.st_nlink > 0
            && held.st_dev == now.st_dev
            && held.st_ino == now.st_ino
    }
}

fn check(rc: libc::c_int) -> io::Result<()> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

#[expect(unsafe_code, reason = "mkdir is a raw call taking a path")]
fn mkdir(dir: &CStr) -> io::Result<()> {
    // SAFETY: `dir` is NUL-terminated and outlives the call; the kernel only reads it.
    check(unsafe { libc::mkdir(dir.as_ptr(), 0o755) })
}

#[expect(unsafe_code, reason = "rmdir is a raw call taking a path")]
fn rmdir(dir: &CStr) -> io::Result<()> {
    // SAFETY: as for `mkdir`.
    check(unsafe { libc::rmdir(dir.as_ptr()) })
}

#[expect(unsafe_code, reason = "open is a raw call taking a path")]
fn open_dir(dir: &CStr) -> io::Result<libc::c_int> {
    // SAFETY: as for `mkdir`.
    let fd = unsafe {
        libc::open(
            dir.as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        )
    };
    check(fd).map(|()| fd)
}

#[expect(unsafe_code, reason = "flock is a raw call")]
fn flock(fd: libc::c_int, how: libc::c_int) -> io::Result<()> {
    loop {
        // SAFETY: integer arguments only.
        match check(unsafe { libc::flock(fd, how) }) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            other => return other,
        }
    }
}

#[expect(unsafe_code, reason = "close is a raw call")]
fn close(fd: libc::c_int) {
    // SAFETY: closes a descriptor this module opened, once.
    unsafe { libc::close(fd) };
}
