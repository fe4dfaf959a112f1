//! The part that runs in the child between fork and exec.
//!
//! Only raw syscalls on memory prepared before fork: no allocation, no locks, no
//! formatting (the child of a multi-threaded process may find any lock held). Owns the
//! order: the PID and mount namespaces (read-only directories, hidden paths, private
//! `/tmp`, own `/proc`) and the locking user namespace, then `no_new_privs`, then Landlock
//! (which from then on forbids mounting), then seccomp. Does not build anything.

use std::ffi::CStr;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

use super::mounts::Plan;
use super::placeholders;
use super::seccomp::Filter;

/// Whether the plan's placeholders exist for this process.
#[derive(Clone, Copy)]
pub(super) enum Placeholders {
    /// Made and held (those `Held` says): each must be covered, or the command does not
    /// start.
    Held(placeholders::Held),
    /// Not made (the probe): none is mounted.
    Absent,
}

/// Restricts the calling (child) process. An error makes `spawn` fail, so the command
/// never runs unrestricted.
pub(super) fn restrict(
    mounts: Option<&Plan>,
    ruleset: &OwnedFd,
    filter: Option<&Filter>,
) -> io::Result<()> {
    if let Some(plan) = mounts {
        let held = placeholders::hold(&plan.created)?;
        enter_mount_namespace(plan, Placeholders::Held(held))?;
    }
    set_no_new_privs()?;
    landlock_restrict_self(ruleset.as_raw_fd())?;
    if let Some(filter) = filter {
        install_seccomp(filter)?;
    }
    Ok(())
}

#[expect(unsafe_code, reason = "prctl has no safe wrapper in std")]
fn set_no_new_privs() -> io::Result<()> {
    // SAFETY: PR_SET_NO_NEW_PRIVS takes integer arguments only and touches no memory.
    let rc = unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[expect(unsafe_code, reason = "landlock_restrict_self is a raw syscall")]
fn landlock_restrict_self(ruleset_fd: libc::c_int) -> io::Result<()> {
    // SAFETY: the syscall takes a file descriptor and a flags word; it reads no memory of
    // ours. The fd is a Landlock ruleset kept open by the `Prepared` the hook holds.
    let rc = unsafe { libc::syscall(libc::SYS_landlock_restrict_self, ruleset_fd, 0u32) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[expect(unsafe_code, reason = "seccomp is a raw syscall taking a pointer")]
fn install_seccomp(filter: &Filter) -> io::Result<()> {
    let prog = libc::sock_fprog {
        len: filter.len(),
        filter: filter.as_ptr().cast_mut(),
    };
    // SAFETY: `prog` points at `len` instructions owned by `filter`, which outlives the
    // call; the kernel copies the program and never writes through the pointer.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER,
            0u32,
            &raw const prog,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Moves the calling process into its namespaces as the plan says: a PID namespace of
/// its own (the process forks; the child, pid 1 there, goes on, and the parent only waits
/// for it and exits as it did), a private mount namespace with a fresh `/proc`, the hidden
/// paths covered, the read-only directories read-only, the private temp dir at `/tmp`,
/// and, as root, a further user namespace that locks the mounts. A directory that
/// vanished since the plan was made is skipped: there is nothing left in it to protect.
/// A held placeholder is never skipped: without its mount the command could create it.
pub(super) fn enter_mount_namespace(plan: &Plan, placeholders: Placeholders) -> io::Result<()> {
    unshare(plan.unshare)?;
    if plan.unshare & libc::CLONE_NEWUSER != 0 {
        map_ids(plan)?;
    }
    if plan.unshare & libc::CLONE_NEWPID != 0 {
        become_pid_one()?;
    }
    // Nothing mounted here may propagate back to atto's namespace.
    mount(None, c"/", libc::MS_REC | libc::MS_PRIVATE)?;
    if plan.all_read_only {
        set_read_only(c"/", true)?;
    }
    for dir in &plan.hide_dirs {
        cover(&plan.empty, dir)?;
    }
    for file in &plan.hide_files {
        cover(c"/dev/null", file)?;
    }
    for dir in &plan.dirs {
        match mount(Some(dir), dir, libc::MS_BIND | libc::MS_REC) {
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => continue,
            other => other?,
        }
        set_read_only(dir, true)?;
    }
    if let Placeholders::Held(held) = placeholders {
        for (i, dir) in plan.created.iter().enumerate() {
            if held.holds(i) {
                mount(Some(dir), dir, libc::MS_BIND)?;
                set_read_only(dir, true)?;
            }
        }
    }
    if let Some(tmp) = &plan.tmp {
        mount(Some(tmp), c"/tmp", libc::MS_BIND)?;
        if plan.all_read_only {
            // The bind copied the read-only flag of the mount it came from.
            set_read_only_flag(c"/tmp", false, 0)?;
        }
    }
    // This namespace's processes only; mounted by a process inside it.
    mount_fs(
        c"proc",
        c"/proc",
        c"proc",
        libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
    )?;
    if plan.lock {
        unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS)?;
        map_ids(plan)?;
    }
    Ok(())
}

/// Covers `target` with a read-only bind of `source`; a target gone since the plan was
/// made is skipped.
fn cover(source: &CStr, target: &CStr) -> io::Result<()> {
    match mount(Some(source), target, libc::MS_BIND) {
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => Ok(()),
        Err(e) => Err(e),
        Ok(()) => set_read_only(target, false),
    }
}

/// Forks twice once the PID namespace exists (the calling process stays outside it; its
/// next child is pid 1 inside). Pid 1 only waits for its own child, the command, which
/// returns from here and goes on to exec: as pid 2 it is an ordinary process, so
/// `kill $$` works as it does outside. Both supervisors (the one outside and pid 1) close
/// every descriptor (so `spawn` sees the exec and the output pipe only waits for the
/// command), wait for their child and exit the way it did, signal included; each child
/// is killed if its supervisor dies.
fn become_pid_one() -> io::Result<()> {
    fork_supervised()?;
    fork_supervised()
}

/// Forks; returns in the child (killed when its parent dies), and never returns in the
/// parent, which supervises the child.
#[expect(unsafe_code, reason = "fork and prctl are raw process calls")]
fn fork_supervised() -> io::Result<()> {
    // SAFETY: called between fork and exec in a single-threaded child; the parent branch
    // only makes raw syscalls and `_exit`s, the child branch returns to the same
    // restricted hook it came from.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    if pid > 0 {
        supervise(pid);
    }
    placeholders::forget();
    // SAFETY: integer arguments only.
    let rc = unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) };
    check(libc::c_long::from(rc))
}

/// Waits for `pid` and ends this process the way it ended.
#[expect(
    unsafe_code,
    reason = "close_range, waitpid, kill and _exit are raw process calls"
)]
fn supervise(pid: libc::pid_t) -> ! {
    // SAFETY: closes this process's own descriptors; it uses none of them from here on.
    unsafe { libc::syscall(libc::SYS_close_range, 0u32, u32::MAX, 0u32) };
    let mut status: libc::c_int = 0;
    loop {
        // SAFETY: `status` is a live local the call writes one int to.
        let rc = unsafe { libc::waitpid(pid, &raw mut status, 0) };
        if rc == pid || io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
            break;
        }
    }
    // The command has ended: its placeholders go before its caller hears of it.
    placeholders::finish();
    if libc::WIFSIGNALED(status) {
        let sig = libc::WTERMSIG(status);
        // SAFETY: resets one signal's disposition, unblocks all signals and sends one to
        // this process: integer arguments and a live local set. As pid 1 the signal is
        // ignored (no handler), and the `_exit` below ends it instead.
        unsafe {
            libc::signal(sig, libc::SIG_DFL);
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&raw mut set);
            libc::sigprocmask(libc::SIG_SETMASK, &raw const set, std::ptr::null_mut());
            libc::kill(libc::getpid(), sig);
        }
    }
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        128 + libc::WTERMSIG(status)
    };
    // SAFETY: ends this process at once, without unwinding or running destructors.
    unsafe { libc::_exit(code) }
}

/// Maps the effective uid and gid to themselves in a new user namespace; `setgroups`
/// must be denied first for an unprivileged process to write its gid map.
fn map_ids(plan: &Plan) -> io::Result<()> {
    write_file(c"/proc/self/setgroups", b"deny")?;
    write_file(c"/proc/self/uid_map", &plan.uid_map)?;
    write_file(c"/proc/self/gid_map", &plan.gid_map)
}

fn check(rc: libc::c_long) -> io::Result<()> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

#[expect(unsafe_code, reason = "unshare is a raw syscall")]
fn unshare(flags: libc::c_int) -> io::Result<()> {
    // SAFETY: unshare takes a flags word and touches no memory of ours.
    check(unsafe { libc::syscall(libc::SYS_unshare, flags) })
}

#[expect(unsafe_code, reason = "mount is a raw syscall taking pointers")]
fn mount(source: Option<&CStr>, target: &CStr, flags: libc::c_ulong) -> io::Result<()> {
    let source = source.map_or(std::ptr::null(), CStr::as_ptr);
    // SAFETY: the strings are NUL-terminated and outlive the call; fstype and data are
    // null, which bind and propagation changes allow. The kernel only reads them.
    check(unsafe {
        libc::syscall(
            libc::SYS_mount,
            source,
            target.as_ptr(),
            std::ptr::null::<libc::c_char>(),
            flags,
            std::ptr::null::<libc::c_void>(),
        )
    })
}

/// `struct mount_attr` from `<linux/mount.h>` (not in the libc crate).
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

const MOUNT_ATTR_RDONLY: u64 = 0x1;

/// Makes the mount at `dir` read-only, and (with `recursive`) every mount beneath it.
fn set_read_only(dir: &CStr, recursive: bool) -> io::Result<()> {
    let flags = if recursive { libc::AT_RECURSIVE } else { 0 };
    set_read_only_flag(dir, true, flags)
}

/// Sets or clears the read-only flag of the mount at `dir`. `mount_setattr` (Linux 5.12,
/// older than Landlock) changes only that flag, so the nosuid, nodev, noexec and atime
/// flags a user namespace may not clear are kept as they are, which a
/// `MS_REMOUNT | MS_BIND | MS_RDONLY` remount would have to repeat.
#[expect(unsafe_code, reason = "mount_setattr is a raw syscall taking pointers")]
fn set_read_only_flag(dir: &CStr, read_only: bool, flags: libc::c_int) -> io::Result<()> {
    let (attr_set, attr_clr) = if read_only {
        (MOUNT_ATTR_RDONLY, 0)
    } else {
        (0, MOUNT_ATTR_RDONLY)
    };
    let attr = MountAttr {
        attr_set,
        attr_clr,
        propagation: 0,
        userns_fd: 0,
    };
    // SAFETY: `dir` is NUL-terminated and `attr` is a live local of the size passed; the
    // kernel only reads both.
    check(unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            dir.as_ptr(),
            flags,
            &raw const attr,
            std::mem::size_of::<MountAttr>(),
        )
    })
}

#[expect(unsafe_code, reason = "mount is a raw syscall taking pointers")]
fn mount_fs(source: &CStr, target: &CStr, fstype: &CStr, flags: libc::c_ulong) -> io::Result<()> {
    // SAFETY: the strings are NUL-terminated and outlive the call; data is null, which
    // proc accepts. The kernel only reads them.
    check(unsafe {
        libc::syscall(
            libc::SYS_mount,
            source.as_ptr(),
            target.as_ptr(),
            fstype.as_ptr(),
            flags,
            std::ptr::null::<libc::c_void>(),
        )
    })
}

#[expect(unsafe_code, reason = "open, write and close are raw syscalls")]
fn write_file(path: &CStr, bytes: &[u8]) -> io::Result<()> {
    // SAFETY: `path` is NUL-terminated and outlives the call.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `bytes` is valid for its length; the kernel only reads it. `fd` is ours.
    let written = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
    let result = if written < 0 {
        Err(io::Error::last_os_error())
    } else if written.unsigned_abs() != bytes.len() {
        Err(io::Error::from_raw_os_error(libc::EIO))
    } else {
        Ok(())
    };
    // SAFETY: closes the fd opened above, once.
    unsafe { libc::close(fd) };
    result
}
