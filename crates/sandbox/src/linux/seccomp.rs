//! The seccomp filter: `mknod` of a character or block device fails with `EACCES` (a
//! command running as root could otherwise make `/dev/kmsg` or a disk in the workspace);
//! with the network off, `socket()` fails too for every family but `AF_UNIX`, and for
//! `AF_UNIX` too unless unix sockets are allowed; so does `io_uring_setup` (io_uring can
//! create sockets without the `socket` syscall).
//! `socketpair()` is never filtered: a connected pair reaches nothing outside the command,
//! and pipes between processes (python's multiprocessing, shells) rely on it. Everything
//! else is allowed.
//!
//! Compiled with seccompiler before fork; installed in the child by `child.rs`. A
//! foreign-architecture syscall (e.g. 32-bit `int 0x80`) kills the process, as
//! seccompiler's architecture check does.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

use crate::SandboxError;

/// A compiled BPF program, ready for `SECCOMP_SET_MODE_FILTER`.
#[derive(Debug)]
pub(super) struct Filter {
    program: Vec<libc::sock_filter>,
    len: u16,
}

impl Filter {
    /// Instruction count, as `sock_fprog` wants it.
    pub(super) fn len(&self) -> u16 {
        self.len
    }

    /// First instruction.
    pub(super) fn as_ptr(&self) -> *const libc::sock_filter {
        self.program.as_ptr()
    }
}

/// Whether the kernel has seccomp filters with errno returns.
#[expect(unsafe_code, reason = "seccomp is a raw syscall")]
pub(super) fn available() -> bool {
    let action: u32 = libc::SECCOMP_RET_ERRNO;
    // SAFETY: SECCOMP_GET_ACTION_AVAIL reads one u32 through the pointer, which points
    // at a live local; it changes nothing.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_GET_ACTION_AVAIL,
            0u32,
            &raw const action,
        )
    };
    rc == 0
}

/// x32 syscalls on x86_64 carry this bit and the x86_64 audit arch, so they need rules
/// of their own.
const X32_SYSCALL_BIT: i64 = 0x4000_0000;

/// The filter for a command: `mknod` of character and block devices always fails; with
/// `network` set (the network is off), so does `socket()`, but for `AF_UNIX` when
/// `network` is `Some(true)` (unix sockets allowed).
pub(super) fn filter(network: Option<bool>) -> Result<Filter, SandboxError> {
    let err = |e: seccompiler::BackendError| SandboxError::Seccomp(e.to_string());
    let arch = TargetArch::try_from(std::env::consts::ARCH)
        .map_err(|e| SandboxError::Seccomp(e.to_string()))?;
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    // Devices: a node for /dev/kmsg or a disk made in a writable directory would reach
    // the kernel or the raw disk. Fifos and sockets stay allowed.
    let device = |mode_arg: u8| -> Result<Vec<SeccompRule>, SandboxError> {
        [libc::S_IFCHR, libc::S_IFBLK]
            .into_iter()
            .map(|kind| {
                SeccompRule::new(vec![
                    SeccompCondition::new(
                        mode_arg,
                        SeccompCmpArgLen::Dword,
                        SeccompCmpOp::MaskedEq(u64::from(libc::S_IFMT)),
                        u64::from(kind),
                    )
                    .map_err(err)?,
                ])
                .map_err(err)
            })
            .collect()
    };
    let mut add = |nr: i64, r: Vec<SeccompRule>| {
        rules.insert(nr, r.clone());
        if arch == TargetArch::x86_64 {
            rules.insert(nr | X32_SYSCALL_BIT, r);
        }
    };
    add(libc::SYS_mknodat, device(2)?);
    #[cfg(target_arch = "x86_64")]
    add(libc::SYS_mknod, device(1)?);
    if let Some(allow_unix) = network {
        let af_unix =
            u64::try_from(libc::AF_UNIX).map_err(|e| SandboxError::Seccomp(e.to_string()))?;
        // No rule at all matches every call: then every `socket()` fails.
        let socket_rules = if allow_unix {
            vec![
                SeccompRule::new(vec![
                    SeccompCondition::new(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Ne, af_unix)
                        .map_err(err)?,
                ])
                .map_err(err)?,
            ]
        } else {
            Vec::new()
        };
        add(libc::SYS_socket, socket_rules);
        add(libc::SYS_io_uring_setup, Vec::new());
    }
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EACCES.unsigned_abs()),
        arch,
    )
    .map_err(err)?;
    // Same layout, distinct types: copy field by field rather than cast pointers.
    let program: Vec<libc::sock_filter> = BpfProgram::try_from(filter)
        .map_err(err)?
        .into_iter()
        .map(|i| libc::sock_filter {
            code: i.code,
            jt: i.jt,
            jf: i.jf,
            k: i.k,
        })
        .collect();
    let len = u16::try_from(program.len())
        .map_err(|_| SandboxError::Seccomp(format!("{} instructions", program.len())))?;
    Ok(Filter { program, len })
}
