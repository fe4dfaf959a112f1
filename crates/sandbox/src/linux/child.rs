//! The part that runs in the child between fork and exec.
//!
//! Only raw syscalls on memory prepared before fork: no allocation, no locks, no
//! formatting (the child of a multi-threaded process may find any lock held). Owns the
//! order: `no_new_privs`, then Landlock, then seccomp. Does not build anything.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

use super::seccomp::Filter;

/// Restricts the calling (child) process. An error makes `spawn` fail, so the command
/// never runs unrestricted.
pub(super) fn restrict(ruleset: &OwnedFd, filter: Option<&Filter>) -> io::Result<()> {
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
