//! What Tab does to the mode, and the confirmation before YOLO. Tab on an idle composer
//! cycles Plan → Build → YOLO → Plan, but the step into YOLO (every command runs without
//! asking and without the OS sandbox) only opens a question; `y` enters it. Leaving YOLO
//! never asks. This module decides which `Op::SetMode` to send; `run` sends it and the
//! session's `mode_changed` moves the badge.

use atto_protocol::{AgentMode, Op, PermissionMode};

use super::App;

impl App {
    /// Tab on an idle composer: the op that moves to the next mode, or `None` when the next
    /// mode is YOLO and the confirmation opened instead (`yolo_confirm_open`).
    pub fn cycle_mode(&mut self) -> Option<Op> {
        let yolo = self.info.permission == PermissionMode::Yolo;
        match (self.info.mode, yolo) {
            (AgentMode::Build, false) => {
                self.yolo_confirm = true;
                None
            }
            (AgentMode::Plan, _) => Some(set_mode(AgentMode::Build, None)),
            // YOLO, review and debug go to Plan: leaving YOLO never asks.
            _ => Some(set_mode(AgentMode::Plan, None)),
        }
    }

    /// Whether the "enter YOLO?" question is showing.
    pub fn yolo_confirm_open(&self) -> bool {
        self.yolo_confirm
    }

    /// `y` in the question: the op that enters YOLO; `None` when no question was open.
    pub fn confirm_yolo(&mut self) -> Option<Op> {
        self.take_yolo_confirm()
            .then(|| set_mode(AgentMode::Build, Some(PermissionMode::Yolo)))
    }

    /// Tab in the question: YOLO is skipped and the cycle goes on to Plan.
    pub fn skip_yolo(&mut self) -> Option<Op> {
        self.take_yolo_confirm()
            .then(|| set_mode(AgentMode::Plan, None))
    }

    /// Esc or `n` in the question: closes it; the mode stays as it is.
    pub fn decline_yolo(&mut self) {
        self.yolo_confirm = false;
    }

    fn take_yolo_confirm(&mut self) -> bool {
        std::mem::take(&mut self.yolo_confirm)
    }
}

fn set_mode(mode: AgentMode, permission: Option<PermissionMode>) -> Op {
    Op::SetMode { mode, permission }
}
