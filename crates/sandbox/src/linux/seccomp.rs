//! The seccomp network filter: `socket()` fails with `EACCES` for every family but
//! `AF_UNIX`, and for `AF_UNIX` too unless unix sockets are allowed; so does
//! `io_uring_setup` (io_uring can create sockets without the `socket` syscall).
//! `socketpair()` is never filtered: a connected pair reaches nothing outside the command,
//! and pipes between processes (python's multiprocessing, shells) rely on it. Everything
//! else is allowed.
//!
//! Compiled with seccompiler before fork; installed in the child by `child.rs`. A
//! foreign-architecture syscall (e.g. 32-bit `int 0x80`) kills the process, as
//! seccompiler's architecture check does. Not used when the network is allowed.

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

/// The filter for a command without network; `allow_unix` keeps `socket(AF_UNIX, ..)`.
pub(super) fn network_filter(allow_unix: bool) -> Result<Filter, SandboxError> {
    let err = |e: seccompiler::BackendError| SandboxError::Seccomp(e.to_string());
    let arch = TargetArch::try_from(std::env::consts::ARCH)
        .map_err(|e| SandboxError::Seccomp(e.to_string()))?;
    let af_unix = u64::try_from(libc::AF_UNIX).map_err(|e| SandboxError::Seccomp(e.to_string()))?;
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
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    rules.insert(libc::SYS_socket, socket_rules.clone());
    rules.insert(libc::SYS_io_uring_setup, Vec::new());
    if arch == TargetArch::x86_64 {
        rules.insert(libc::SYS_socket | X32_SYSCALL_BIT, socket_rules);
        rules.insert(libc::SYS_io_uring_setup | X32_SYSCALL_BIT, Vec::new());
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
