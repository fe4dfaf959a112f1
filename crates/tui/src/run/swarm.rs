//! The swarm from the interface's side: `/swarm "task"` launches one through the binary's
//! launcher (one at a time), bare `/swarm` and F3 show or hide its overlay, its events are
//! folded into the app, and the person's answers go back as `SwarmInput`s: the plan's yes
//! or no, a worker's approval, a stuck task's guidance, "fixed" or skip, and the
//! interrupt. The swarm runs in the coordinator; nothing here waits on it.

use atto_protocol::ApprovalDecision;
use atto_protocol::swarm::{InterventionAnswer, SwarmEvent, SwarmInput};
use tokio::sync::mpsc::UnboundedReceiver;

use super::Ui;
use crate::app::Panel;

/// The next event of the swarm, or never when none runs.
pub(super) async fn next(events: &mut Option<UnboundedReceiver<SwarmEvent>>) -> Option<SwarmEvent> {
    match events {
        Some(events) => events.recv().await,
        None => std::future::pending().await,
    }
}

impl Ui {
    /// `/swarm "task"` starts a swarm; bare `/swarm` shows or hides the overlay.
    pub(super) fn swarm_command(&mut self, line: &str) {
        let goal = goal(line);
        if goal.is_empty() {
            if self.app.swarm().is_none() {
                self.app.push_notice(
                    "no swarm in this session: /swarm \"task\" splits a task among worker \
                     processes (F3 then shows or hides it)",
                );
            } else {
                self.toggle_swarm();
            }
            return;
        }
        if let Some(s) = self.app.swarm().filter(|s| s.running()) {
            let id = s.short_id().to_owned();
            self.app.push_notice(&format!(
                "swarm {id} is still running; one swarm at a time. F3 shows it; Ctrl-C stops it \
                 (resumable with atto swarm --resume {id})"
            ));
            return;
        }
        let Some(launch) = self.launcher.clone() else {
            self.app.push_error(
                "this front end cannot start a swarm; run atto swarm \"task\" in a shell",
            );
            return;
        };
        match launch(goal.clone()) {
            Ok((events, input)) => {
                self.app.start_swarm(&goal);
                self.swarm_input = Some(input);
                self.swarm_started = Some(events);
            }
            Err(why) => self
                .app
                .push_error(&format!("the swarm did not start: {why}")),
        }
    }

    /// Shows or hides the swarm overlay.
    pub(super) fn toggle_swarm(&mut self) {
        if self.app.swarm().is_none() {
            self.app
                .push_notice("no swarm in this session: /swarm \"task\" starts one");
        } else if self.app.panel == Some(Panel::Swarm) && !self.app.show_keys {
            self.app.panel = None;
        } else {
            self.app.show_keys = false;
            self.app.panel = Some(Panel::Swarm);
        }
    }

    /// A swarm event; true when the screen must be redrawn.
    pub(super) fn on_swarm(&mut self, event: &SwarmEvent) -> bool {
        self.app.on_swarm_event(event)
    }

    /// The swarm's events ended.
    pub(super) fn swarm_closed(&mut self) {
        self.app.swarm_closed();
        self.swarm_input = None;
    }

    /// Sends `input` to the running swarm.
    fn send_swarm(&mut self, input: SwarmInput) {
        let sent = self
            .swarm_input
            .as_ref()
            .is_some_and(|tx| tx.send(input).is_ok());
        if !sent {
            self.app
                .push_error("the swarm has ended; the answer was not sent");
        }
    }

    /// The plan's yes or no.
    pub(super) fn confirm_swarm(&mut self, yes: bool) {
        if !self.app.swarm_plan_waiting() {
            return;
        }
        self.send_swarm(SwarmInput::Confirm { yes });
        self.app.swarm_plan_answered(yes);
    }

    /// The answer to the swarm-trust question: the swarm's thread trusts the file and
    /// starts on yes, and starts nothing on no.
    pub(super) fn answer_swarm_trust(&mut self, yes: bool) {
        if self.app.take_swarm_trust_question() {
            self.send_swarm(SwarmInput::Trust { yes });
        }
    }

    /// Ctrl-C while a swarm runs: its workers stop, its state stays resumable.
    pub(super) fn interrupt_swarm(&mut self) {
        self.send_swarm(SwarmInput::Interrupt);
        self.app.swarm_stopping();
    }

    /// Answers the worker's approval showing in the dialog.
    pub(super) fn answer_worker(
        &mut self,
        task_id: String,
        id: String,
        decision: ApprovalDecision,
    ) {
        self.send_swarm(SwarmInput::Approval {
            task_id,
            id,
            decision,
        });
        self.app.promote_swarm_question();
    }

    /// Answers the stuck task whose dialog shows.
    pub(super) fn intervene(&mut self, answer: InterventionAnswer) {
        let Some(task_id) = self.app.take_intervention() else {
            return;
        };
        let said = match &answer {
            InterventionAnswer::Guidance { text } => format!("retry with guidance: {text}"),
            InterventionAnswer::Fixed => "fixed by hand, check again".to_owned(),
            InterventionAnswer::Skip => "skip".to_owned(),
        };
        self.app.push_notice(&format!("swarm: {task_id}: {said}"));
        self.send_swarm(SwarmInput::Intervention { task_id, answer });
    }
}

/// The task of `/swarm "task"`: the rest of the line, one pair of surrounding quotes
/// removed.
fn goal(line: &str) -> String {
    let rest = line.trim().strip_prefix("/swarm").unwrap_or("").trim();
    let unquoted = rest
        .strip_prefix('"')
        .and_then(|r| r.strip_suffix('"'))
        .unwrap_or(rest);
    unquoted.trim().to_owned()
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_goal_is_the_rest_of_the_line_unquoted() {
        for (line, want) in [
            ("/swarm \"add a hello module\"", "add a hello module"),
            ("/swarm add a hello module", "add a hello module"),
            ("  /swarm   ", ""),
            ("/swarm", ""),
            ("/swarm \"say \"hi\"\"", "say \"hi\""),
        ] {
            assert_eq!(super::goal(line), want, "{line}");
        }
    }
}
