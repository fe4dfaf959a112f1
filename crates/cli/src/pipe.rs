//! A closed standard output ends atto quietly: `atto completion bash | head -1` or
//! `atto mcp tools | head -1` must not panic with "failed printing to stdout".
//!
//! Rust ignores SIGPIPE so that a write to a closed pipe returns `EPIPE` instead of
//! killing the process, and `println!` turns that error into a panic. atto keeps SIGPIPE
//! ignored (it writes to pipes of MCP servers, workers and commands, whose end must never
//! kill it) and instead asks the kernel, when a panic happens, whether standard output's
//! reader is gone. Only then does it exit at once and silently, as a program killed by
//! the broken pipe would from the reader's point of view; every other panic is reported
//! as before.

use std::io::IsTerminal;

/// Installs the hook; call once, first thing in `main`.
pub fn exit_quietly_when_stdout_closes() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if stdout_reader_gone() {
            atto_mcp::kill_all_servers();
            std::process::exit(0);
        }
        previous(info);
    }));
}

/// Whether standard output is a pipe or socket whose other end was closed: the kernel
/// reports `POLLERR` (pipes) or `POLLHUP` (sockets) for such a descriptor.
fn stdout_reader_gone() -> bool {
    use rustix::event::{PollFd, PollFlags, poll};
    let stdout = std::io::stdout();
    if stdout.is_terminal() {
        return false;
    }
    let mut fds = [PollFd::new(&stdout, PollFlags::OUT)];
    let zero = rustix::event::Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    match poll(&mut fds, Some(&zero)) {
        Ok(_) => fds[0].revents().intersects(PollFlags::ERR | PollFlags::HUP),
        Err(_) => false,
    }
}
