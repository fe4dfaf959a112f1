//! Carrying out a key's action on the interface state: composer edits, the Esc stack,
//! mode cycling (which op to send is `App::cycle_mode`'s), scrolling, panels (the agents
//! list's selection among them), answering the approval dialog with `Op::Approval` (a
//! swarm worker's with `SwarmInput::Approval`, through `swarm`) and the learning dialog with
//! `Op::Learning`.

use atto_protocol::swarm::InterventionAnswer;
use atto_protocol::{ApprovalDecision, GrantScope, LearningCommand, Op, ReasoningEffort};

use super::Ui;
use crate::app::{DialogInput, Panel};
use crate::keys::Action;

/// Longest reason or edited command the dialog takes from one paste.
const MAX_DIALOG_PASTE: usize = 8_192;

/// Said when a swarm worker's approval is answered with anything but y or n.
const WORKER_ANSWERS: &str =
    "a swarm worker's request takes y (once) or n (no, with an optional reason)";

impl Ui {
    /// Applies `action`; true when the screen must be redrawn.
    pub(super) fn apply(&mut self, action: Action) -> bool {
        if self.typing_takes(&action) {
            return true;
        }
        match action {
            Action::None => false,
            Action::Insert(_)
            | Action::Newline
            | Action::Backspace
            | Action::Delete
            | Action::DeleteWord
            | Action::Left
            | Action::Right
            | Action::WordLeft
            | Action::WordRight
            | Action::Home
            | Action::End
            | Action::Up
            | Action::Down
            | Action::MenuUp
            | Action::MenuDown
            | Action::Accept
            | Action::AcceptAndSubmit
            | Action::Submit
            | Action::Queue
            | Action::CloseMenu
            | Action::DiscardQueued
            | Action::ClearInput => self.compose(action),
            Action::Approve
            | Action::Deny
            | Action::AlwaysSession
            | Action::AlwaysProject
            | Action::DecisionMove(_)
            | Action::DecisionPick(_)
            | Action::DecisionSubmit
            | Action::DecisionDismiss
            | Action::LearningValidate
            | Action::LearningReject
            | Action::LearningSkip
            | Action::StartReason
            | Action::StartEdit
            | Action::DialogSubmit
            | Action::DialogBack => self.answer_dialog(action),
            Action::ToggleSwarm
            | Action::SwarmConfirm(_)
            | Action::SwarmTrust(_)
            | Action::InterruptSwarm
            | Action::StartGuidance
            | Action::InterventionFixed
            | Action::InterventionSkip => {
                self.swarm_action(action);
                true
            }
            Action::CycleMode
            | Action::EnterYolo
            | Action::SkipYolo
            | Action::DeclineYolo
            | Action::CycleEffort
            | Action::CloseOverlay
            | Action::Interrupt
            | Action::ArmEsc
            | Action::Rewind
            | Action::RewindMove(_)
            | Action::RewindEnter
            | Action::RewindBack
            | Action::ArmQuit
            | Action::Quit
            | Action::ToggleKeys
            | Action::Scroll(_)
            | Action::Page(_)
            | Action::Bottom
            | Action::ToggleFold
            | Action::TogglePlan
            | Action::SelectAgent(_)
            | Action::OpenAgent => self.session_action(action),
        }
    }

    /// Whether text being typed into the approval dialog (a reason, an edited command) or
    /// a stuck task's guidance took `action`.
    fn typing_takes(&mut self, action: &Action) -> bool {
        if self
            .app
            .approval
            .as_ref()
            .is_some_and(|d| d.input.is_some())
            && self.dialog_edit(action)
        {
            return true;
        }
        self.app.guidance_mut().is_some() && self.guidance_edit(action)
    }

    /// Edits the composer: typing, moving, completing, submitting and queueing drafts.
    fn compose(&mut self, action: Action) -> bool {
        let c = &mut self.composer;
        match action {
            Action::Insert(ch) => c.insert_char(ch),
            Action::Newline => c.newline(),
            Action::Backspace => c.backspace(),
            Action::Delete => c.delete(),
            Action::DeleteWord => c.delete_word_back(),
            Action::Left => c.left(),
            Action::Right => c.right(),
            Action::WordLeft => c.word_left(),
            Action::WordRight => c.word_right(),
            Action::Home => c.home(),
            Action::End => c.end(),
            Action::Up => c.up(),
            Action::Down => c.down(),
            Action::MenuUp => c.menu_up(),
            Action::MenuDown => c.menu_down(),
            Action::Accept => {
                c.accept();
            }
            Action::AcceptAndSubmit if c.selected_is_typed() => self.submit(),
            Action::AcceptAndSubmit => match c.accept() {
                Some(done) if done.command && !done.takes_args => self.submit(),
                Some(_) => {}
                None => self.submit(),
            },
            Action::Submit => self.submit(),
            Action::Queue => {
                if let Some(text) = c.submit() {
                    c.queue(text);
                }
            }
            Action::CloseMenu => c.hide_menu(),
            Action::DiscardQueued => {
                if let Some(draft) = c.discard_last_queued() {
                    let shown = super::first_line(&draft);
                    self.app
                        .push_notice(&format!("discarded queued draft: {shown}"));
                }
            }
            Action::ClearInput => c.clear(),
            _ => {}
        }
        true
    }

    /// Answers the open dialog: an approval, a plan decision or a proposed learning.
    fn answer_dialog(&mut self, action: Action) -> bool {
        match action {
            Action::Approve => self.answer(ApprovalDecision::Yes),
            Action::Deny => self.answer(ApprovalDecision::No { reason: None }),
            Action::AlwaysSession => self.answer(ApprovalDecision::Always {
                scope: GrantScope::Session,
                rule: None,
            }),
            Action::AlwaysProject => self.answer(ApprovalDecision::Always {
                scope: GrantScope::Project,
                rule: None,
            }),
            Action::DecisionMove(delta) => self.app.decision_select(delta),
            Action::DecisionPick(n) => {
                if !self.app.decision_pick(n) {
                    return false;
                }
                self.decide();
            }
            Action::DecisionSubmit => self.decide(),
            Action::DecisionDismiss => self.app.dismiss_decision(),
            Action::LearningValidate | Action::LearningReject | Action::LearningSkip => {
                self.review_learning(&action);
            }
            Action::StartReason => {
                if let Some(dialog) = self.app.approval.as_mut() {
                    dialog.input = Some(DialogInput::Reason(String::new()));
                }
            }
            Action::StartEdit => {
                if let Some(dialog) = self.app.approval.as_mut() {
                    if dialog.swarm_task.is_some() {
                        self.app.push_notice(WORKER_ANSWERS);
                    } else if dialog.request.kind == atto_protocol::ToolKind::Execute {
                        dialog.input = Some(DialogInput::Edit(dialog.request.subject.clone()));
                    } else {
                        self.app
                            .push_notice("only commands can be edited; answer y, n, a or A");
                    }
                }
            }
            Action::DialogSubmit | Action::DialogBack => {}
            _ => {}
        }
        true
    }

    /// Changes the session (mode, effort, interrupt, rewind, quit) or what the screen shows.
    fn session_action(&mut self, action: Action) -> bool {
        match action {
            Action::CycleMode => {
                if let Some(op) = self.app.cycle_mode() {
                    self.send(op);
                }
            }
            Action::EnterYolo => {
                if let Some(op) = self.app.confirm_yolo() {
                    self.send(op);
                }
            }
            Action::SkipYolo => {
                if let Some(op) = self.app.skip_yolo() {
                    self.send(op);
                }
            }
            Action::DeclineYolo => self.app.decline_yolo(),
            Action::CycleEffort => {
                // default → low → medium → high → default; the session answers with
                // `effort_changed`, which also says when the model takes none.
                let next = match self.app.effort() {
                    None => Some(ReasoningEffort::Low),
                    Some("low") => Some(ReasoningEffort::Medium),
                    Some("medium") => Some(ReasoningEffort::High),
                    Some(_) => None,
                };
                self.send(Op::SetEffort { effort: next });
            }
            Action::CloseOverlay => self.app.close_overlay(),
            Action::Interrupt => {
                self.send(Op::Interrupt);
                self.app.push_notice("cancelling the turn…");
            }
            Action::ArmEsc => {
                self.esc_armed = true;
                return false;
            }
            // The session lists the prompts; its answer opens the picker.
            Action::Rewind => self.send(Op::ListPrompts),
            Action::RewindMove(delta) => self.app.rewind_move(delta),
            Action::RewindEnter => {
                if let Some(op) = self.app.rewind_enter() {
                    self.send(op);
                }
            }
            Action::RewindBack => self.app.rewind_back(),
            Action::ArmQuit => {
                self.ctrl_c_armed = true;
                self.app.push_notice("press Ctrl-C again to leave atto");
            }
            Action::Quit => self.quit = true,
            Action::ToggleKeys => self.app.show_keys = !self.app.show_keys,
            Action::Scroll(lines) => self.app.scroll(lines),
            Action::Page(pages) => {
                let page = i32::from(self.app.page().max(2)) - 1;
                self.app.scroll(pages * page);
            }
            Action::Bottom => self.app.scroll_to_bottom(),
            Action::ToggleFold => self.app.toggle_fold(),
            Action::TogglePlan => {
                if self.app.panel == Some(Panel::Plan) {
                    self.app.panel = None;
                } else {
                    self.app.panel = Some(Panel::Plan);
                    self.send(Op::ShowPlan);
                }
            }
            Action::SelectAgent(delta) => self.app.select_agent(delta),
            // The guard opens the agent; with nothing to open there is nothing to redraw.
            Action::OpenAgent if !self.app.open_agent() => return false,
            _ => {}
        }
        true
    }

    /// The swarm's keys: its overlay, the plan's and trust's answers, the stop, and a
    /// stuck task's guidance, fix or skip.
    fn swarm_action(&mut self, action: Action) {
        match action {
            Action::ToggleSwarm => self.toggle_swarm(),
            Action::SwarmConfirm(yes) => self.confirm_swarm(yes),
            Action::SwarmTrust(yes) => self.answer_swarm_trust(yes),
            Action::InterruptSwarm => self.interrupt_swarm(),
            Action::StartGuidance => self.app.set_guidance(Some(String::new())),
            Action::InterventionFixed => self.intervene(InterventionAnswer::Fixed),
            Action::InterventionSkip => self.intervene(InterventionAnswer::Skip),

            _ => {}
        }
    }

    /// Keys while guidance for a stuck swarm task is typed. True when the key was used.
    fn guidance_edit(&mut self, action: &Action) -> bool {
        let Some(text) = self.app.guidance_mut() else {
            return false;
        };
        match action {
            Action::Insert(ch) => text.push(*ch),
            Action::Backspace => {
                text.pop();
            }
            Action::DeleteWord => {
                let keep = text.trim_end().rfind(' ').map_or(0, |i| i + 1);
                text.truncate(keep);
            }
            Action::DialogBack => self.app.set_guidance(None),
            Action::DialogSubmit => {
                let text = text.trim().to_owned();
                if text.is_empty() {
                    // Nothing to retry with: back to the letters.
                    self.app.set_guidance(None);
                } else {
                    self.intervene(InterventionAnswer::Guidance { text });
                }
            }
            _ => return false,
        }
        true
    }

    /// Keys while the dialog takes typed text. True when the key was used.
    fn dialog_edit(&mut self, action: &Action) -> bool {
        let Some(dialog) = self.app.approval.as_mut() else {
            return false;
        };
        let Some(input) = dialog.input.as_mut() else {
            return false;
        };
        let text = match input {
            DialogInput::Reason(text) | DialogInput::Edit(text) => text,
        };
        match action {
            Action::Insert(ch) => text.push(*ch),
            Action::Backspace => {
                text.pop();
            }
            Action::DeleteWord => {
                let keep = text.trim_end().rfind(' ').map_or(0, |i| i + 1);
                text.truncate(keep);
            }
            Action::DialogBack => dialog.input = None,
            Action::DialogSubmit => {
                let decision = match input {
                    DialogInput::Reason(reason) => ApprovalDecision::No {
                        reason: Some(reason.trim().to_owned()).filter(|r| !r.is_empty()),
                    },
                    DialogInput::Edit(command) if command.trim().is_empty() => {
                        dialog.input = None;
                        return true;
                    }
                    DialogInput::Edit(command) => ApprovalDecision::Edit {
                        command: command.trim().to_owned(),
                    },
                };
                self.answer(decision);
            }
            _ => return false,
        }
        true
    }

    /// Pasted text: into the dialog's field when it takes text, else the composer.
    pub(super) fn paste(&mut self, text: &str) {
        let field = match self.app.approval.as_mut().and_then(|d| d.input.as_mut()) {
            Some(DialogInput::Reason(field) | DialogInput::Edit(field)) => Some(field),
            None => self.app.guidance_mut(),
        };
        if let Some(field) = field {
            let room = MAX_DIALOG_PASTE.saturating_sub(field.len());
            field.extend(
                text.chars()
                    .map(|c| if c.is_control() { ' ' } else { c })
                    .take(room),
            );
            return;
        }
        self.composer.paste(text);
    }

    /// Answers the learning dialog: validate or reject by op; a skip leaves the learning
    /// proposed (`/learnings pending` finds it again).
    fn review_learning(&mut self, action: &Action) {
        let Some(learning) = self.app.take_learning_review() else {
            return;
        };
        let id = learning.id;
        let command = match action {
            Action::LearningValidate => LearningCommand::Validate { id },
            Action::LearningReject => LearningCommand::Reject { id },
            _ => {
                self.app.push_notice(&format!(
                    "learning #{id} stays proposed; /learnings validate {id} keeps it later"
                ));
                return;
            }
        };
        self.send(Op::Learning { command });
    }

    /// Sends the highlighted option of the showing decision point and closes the dialog.
    fn decide(&mut self) {
        if let Some((number, choice)) = self.app.take_decision_choice() {
            self.send(Op::PlanDecision { number, choice });
        }
    }

    /// Sends the answer to the showing approval request and closes the dialog. A swarm
    /// worker's takes yes or no only: "always" would save a rule nobody reviews per worker.
    fn answer(&mut self, decision: ApprovalDecision) {
        let worker = self.app.approval.as_ref().map(|d| d.swarm_task.is_some());
        if worker == Some(true) && matches!(decision, ApprovalDecision::Always { .. }) {
            self.app.push_notice(WORKER_ANSWERS);
            return;
        }
        let Some(dialog) = self.app.approval.take() else {
            return;
        };
        match dialog.swarm_task {
            Some(task_id) => self.answer_worker(task_id, dialog.request.id, decision),
            None => {
                self.send(Op::Approval {
                    id: dialog.request.id,
                    decision,
                });
                self.app.promote_swarm_question();
            }
        }
    }
}
