//! The part that runs in the child between fork and exec.
//!
//! Only raw syscalls on memory prepared before fork: no allocation, no locks, no
//! formatting (the child of a multi-threaded process may find any lock held). Owns the
//! order: the mount namespace with the read-only directories, then `no_new_privs`, then
//! Landlock (which from then on forbids mounting), then seccomp. Does not build anything.

use std::ffi::CStr;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

use super::mounts::Plan;
use super::seccomp::Filter;

/// Restricts the calling (child) process. An error makes `spawn` fail, so the command
/// never runs unrestricted.
pub(super) fn restrict(
    mounts: Option<&Plan>,
    ruleset: &OwnedFd,
    filter: Option<&Filter>,
) -> io::Result<()> {
    if let Some(plan) = mounts {
        enter_mount_namespace(plan)?;
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

/// Moves the calling process into a private mount namespace (and user namespace, as the
/// plan says) in which the plan's directories are read-only. A directory that vanished
/// since the plan was made is skipped: there is nothing left in it to protect.
pub(super) fn enter_mount_namespace(plan: &Plan) -> io::Result<()> {
    unshare(plan.unshare)?;
    if plan.unshare & libc::CLONE_NEWUSER != 0 {
        map_ids(plan)?;
    }
    // Nothing mounted here may propagate back to atto's namespace.
    mount(None, c"/", libc::MS_REC | libc::MS_PRIVATE)?;
    for dir in &plan.dirs {
        match mount(Some(dir), dir, libc::MS_BIND | libc::MS_REC) {
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => continue,
            other => other?,
        }
        make_read_only(dir)?;
    }
    if plan.lock {
        unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS)?;
        map_ids(plan)?;
    }
    Ok(())
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

/// Makes the mount at `dir` and every mount beneath it read-only. `mount_setattr`
/// (Linux 5.12, older than Landlock) changes only the read-only flag, so the nosuid,
/// nodev, noexec and atime flags a user namespace may not clear are kept as they are,
/// which a `MS_REMOUNT | MS_BIND | MS_RDONLY` remount would have to repeat.
#[expect(unsafe_code, reason = "mount_setattr is a raw syscall taking pointers")]
fn make_read_only(dir: &CStr) -> io::Result<()> {
    let attr = MountAttr {
        attr_set: MOUNT_ATTR_RDONLY,
        attr_clr: 0,
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
            libc::AT_RECURSIVE,
            &raw const attr,
            std::mem::size_of::<MountAttr>(),
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
