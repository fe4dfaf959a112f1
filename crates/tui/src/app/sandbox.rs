//! Whether commands run inside the OS sandbox, as far as the session has shown it. A
//! kernel probe at start-up can prove the sandbox absent but not applied, so until the
//! session says (a report at start, or a command that ran sandboxed) the status line shows
//! "sandbox ?". In YOLO the session runs commands without it, whatever else is known.
//! Drawing the state is `status`'s job.

use atto_protocol::PermissionMode;

use super::App;

/// What is known about the OS sandbox for this session's commands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SandboxState {
    /// The session has not said yet.
    Unknown,
    /// The session prepared it: commands run sandboxed.
    On,
    /// Commands run without it, and why when known.
    Off { reason: Option<String> },
}

impl SandboxState {
    /// The state a session's own report gives: whether it prepared the sandbox and, when it
    /// did not, why.
    pub fn reported(applied: bool, reason: Option<&str>) -> SandboxState {
        if applied {
            SandboxState::On
        } else {
            SandboxState::Off {
                reason: reason.map(|r| crate::view::text::sanitize(r).into_owned()),
            }
        }
    }

    /// Before any event: start-up's probe can only rule the sandbox out.
    pub(super) fn from_probe(available: bool, permission: PermissionMode) -> SandboxState {
        match (available, permission) {
            (true, _) | (false, PermissionMode::Yolo) => SandboxState::Unknown,
            (false, _) => SandboxState::Off {
                reason: Some("this system offers no OS sandbox".to_owned()),
            },
        }
    }
}

impl App {
    /// The session's report of its sandbox (what it prepared at start), which outranks
    /// everything seen so far.
    pub fn set_sandbox(&mut self, state: SandboxState) {
        self.sandbox = state;
    }

    /// The sandbox as it applies to the next command: off in YOLO, else what the session
    /// showed.
    pub fn sandbox(&self) -> SandboxState {
        if self.info.permission == PermissionMode::Yolo {
            return SandboxState::Off { reason: None };
        }
        self.sandbox.clone()
    }

    /// A finished `bash` call says whether it ran sandboxed. A sandboxed run proves the
    /// session prepared it; an unsandboxed one only decides while nothing is known, since
    /// YOLO and an approved unsandboxed re-run skip a prepared sandbox too.
    pub(super) fn saw_command(&mut self, sandboxed: Option<bool>) {
        match sandboxed {
            Some(true) => self.sandbox = SandboxState::On,
            Some(false)
                if self.sandbox == SandboxState::Unknown
                    && self.info.permission != PermissionMode::Yolo =>
            {
                self.sandbox = SandboxState::Off { reason: None };
            }
            Some(false) | None => {}
        }
    }
}
