//! Switching modes from the keyboard: Tab cycles Plan → Build → YOLO → Plan, but YOLO
//! (no approvals, no sandbox) is entered only on a second Tab that confirms it; any
//! other key in between cancels. Leaving YOLO never asks.

use atto_protocol::{AgentMode, Op, PermissionMode};

use super::App;

impl App {
    /// What Tab on an empty composer does: the op that switches modes, or `None` when
    /// this Tab only asked to confirm entering YOLO (a notice says how).
    pub fn cycle_mode(&mut self) -> Option<Op> {
        let yolo = self.info.permission == PermissionMode::Yolo;
        match (self.info.mode, yolo) {
            (AgentMode::Build, false) if !self.yolo_armed => {
                self.yolo_armed = true;
                self.push_notice(
                    "Tab again for YOLO: commands run without asking and without the sandbox. \
                     Any other key stays in BUILD.",
                );
                None
            }
            (AgentMode::Build, false) => {
                self.yolo_armed = false;
                Some(Op::SetMode {
                    mode: AgentMode::Build,
                    permission: Some(PermissionMode::Yolo),
                })
            }
            (AgentMode::Plan, _) => Some(Op::SetMode {
                mode: AgentMode::Build,
                permission: None,
            }),
            _ => Some(Op::SetMode {
                mode: AgentMode::Plan,
                permission: None,
            }),
        }
    }

    /// Another key than Tab: a pending YOLO confirmation lapses.
    pub fn disarm_yolo(&mut self) {
        self.yolo_armed = false;
    }
}

#[cfg(test)]
mod tests {
    use atto_protocol::{AgentMode, Event, Op, PermissionMode};

    use crate::app::{App, AppInfo};

    fn app(mode: AgentMode, permission: PermissionMode) -> App {
        App::new(AppInfo {
            provider: "p".into(),
            model: "m".into(),
            mode,
            permission,
            sandbox: true,
            workspace: "/w".into(),
        })
    }

    fn yolo(op: &Option<Op>) -> bool {
        matches!(
            op,
            Some(Op::SetMode {
                permission: Some(PermissionMode::Yolo),
                ..
            })
        )
    }

    #[test]
    fn one_tab_never_turns_on_yolo() {
        let mut a = app(AgentMode::Build, PermissionMode::Interactive);
        let first = a.cycle_mode();
        assert!(first.is_none(), "a single Tab switched modes: {first:?}");
        // A second Tab confirms.
        assert!(yolo(&a.cycle_mode()));
        // Any other key in between cancels the confirmation.
        let mut b = app(AgentMode::Build, PermissionMode::Interactive);
        assert!(b.cycle_mode().is_none());
        b.disarm_yolo();
        assert!(
            b.cycle_mode().is_none(),
            "the confirmation outlived another key"
        );
    }

    #[test]
    fn leaving_yolo_and_the_other_steps_do_not_ask() {
        let mut a = app(AgentMode::Build, PermissionMode::Yolo);
        assert!(matches!(
            a.cycle_mode(),
            Some(Op::SetMode {
                mode: AgentMode::Plan,
                permission: None
            })
        ));
        let mut p = app(AgentMode::Plan, PermissionMode::Interactive);
        assert!(matches!(
            p.cycle_mode(),
            Some(Op::SetMode {
                mode: AgentMode::Build,
                permission: None
            })
        ));
        // The mode the session reports is what the next Tab starts from.
        p.on_event(&Event::ModeChanged {
            mode: AgentMode::Build,
            permission: PermissionMode::Interactive,
        });
        assert!(p.cycle_mode().is_none());
    }
}
