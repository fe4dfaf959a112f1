//! Backtracking: listing the conversation's prompts and going back to just before one of
//! them (`/rewind`, Esc Esc in the terminal UI). The conversation goes back as a new
//! version of the thread (the old one stays, for `/rollback`); the files go back through
//! the checked restore, whose safety snapshot keeps what was on disk. Front ends only
//! choose; this is the one implementation.

use atto_protocol::{Event, Message, PromptInfo, RewindScope};

use super::Session;
use super::turn::written_by_atto;

/// One prompt of the current conversation and where it sits.
struct Prompt {
    info: PromptInfo,
    /// Its position in the history: the messages kept when the conversation goes back.
    index: usize,
}

impl Session {
    /// `/rewind` with no number: the prompts, oldest first.
    pub(super) async fn list_prompts(&mut self) {
        match self.prompts().await {
            Ok(prompts) => self.emit(Event::PromptList {
                prompts: prompts.into_iter().map(|p| p.info).collect(),
            }),
            Err(message) => self.emit(Event::Error { message }),
        }
    }

    /// `/rewind N`: back to just before prompt `number`, the conversation, the files or
    /// both. The files go first: when restoring them fails, the conversation stays too.
    pub(super) async fn rewind(&mut self, number: u32, scope: RewindScope) {
        if let Err(message) = self.try_rewind(number, scope).await {
            self.emit(Event::Error { message });
        }
    }

    async fn try_rewind(&mut self, number: u32, scope: RewindScope) -> Result<(), String> {
        let prompts = self.prompts().await?;
        let Some(prompt) = prompts.into_iter().find(|p| p.info.number == number) else {
            return Err(format!(
                "there is no prompt {number} in this conversation; /rewind lists them. \
                 Nothing was changed."
            ));
        };
        let files = matches!(scope, RewindScope::Code | RewindScope::Both);
        let conversation = matches!(scope, RewindScope::Conversation | RewindScope::Both);
        let leaving = self.thread_name();
        let mut safety = None;
        if files {
            match prompt.info.checkpoint {
                Some(id) => {
                    let restored = self.keeper.restore(id).await.map_err(|e| {
                        format!("{e}. Nothing was rewound: neither the files nor the conversation")
                    })?;
                    safety = Some(restored.safety_snapshot);
                    self.restored(id, Ok(restored));
                }
                None => self.emit(Event::Notice {
                    message: format!(
                        "atto changed no files since prompt {number}: there are none to put back"
                    ),
                }),
            }
        }
        if conversation {
            let label = format!("rewind of {leaving} to before prompt {number}");
            let switched = self
                .threads()
                .rewind(&self.recorder.thread, prompt.index, label)
                .await;
            if !self.enter_thread(switched) {
                return Ok(());
            }
            match safety {
                // The old thread's files are the ones the restore saved first.
                Some(id) => {
                    self.keeper.left_at(&leaving, id);
                    self.keeper.after_rewind(self.turns, number).await;
                }
                None => self.keeper.leaving_thread(self.turns, &leaving).await,
            }
        }
        self.emit(Event::Rewound {
            prompt: number,
            scope,
            text: prompt.info.text,
        });
        Ok(())
    }

    /// The user's prompts in the current history, each with the checkpoint that holds the
    /// files as they were just before it.
    async fn prompts(&self) -> Result<Vec<Prompt>, String> {
        let threads = self.threads();
        let times = threads.times(&self.recorder.thread).await?;
        // The record and the history disagree only when recording failed; the prompts
        // are still listed, without files to go back to.
        let aligned = times.len() == self.history.len();
        let mut prompts = Vec::new();
        let mut at = Vec::new();
        for (index, text) in typed_prompts(&self.history) {
            let number = u32::try_from(prompts.len() + 1).unwrap_or(u32::MAX);
            prompts.push(Prompt {
                info: PromptInfo {
                    number,
                    text: text.to_owned(),
                    checkpoint: None,
                },
                index,
            });
            at.push(if aligned { times[index] } else { i64::MAX });
        }
        let checkpoints = self.keeper.first_since(at).await?;
        for (prompt, checkpoint) in prompts.iter_mut().zip(checkpoints) {
            prompt.info.checkpoint = checkpoint;
        }
        Ok(prompts)
    }
}

/// The prompts in `history` with their positions. A compaction's summary has no text;
/// wrap-ups and goal continuations are atto's own: none is a prompt to go back to.
fn typed_prompts(history: &[Message]) -> impl Iterator<Item = (usize, &str)> {
    history
        .iter()
        .enumerate()
        .filter_map(|(index, message)| match message {
            Message::User { text, .. } if !text.is_empty() && !written_by_atto(text) => {
                Some((index, text.as_str()))
            }
            _ => None,
        })
}

#[cfg(test)]
mod tests {
    use atto_protocol::{AssistantPart, Message};

    use super::typed_prompts;

    #[test]
    fn only_what_the_user_typed_is_a_prompt() {
        let atto = |text: &str| Message::User {
            text: text.into(),
            context: Some("[atto] note".into()),
        };
        let answer = Message::Assistant {
            parts: vec![AssistantPart::Text { text: "ok".into() }],
        };
        let history = [
            atto(""),
            Message::user("add a cache"),
            answer.clone(),
            atto("(continue toward the goal)"),
            answer.clone(),
            atto("(wrap up now)"),
            Message::user("test it"),
            answer,
        ];
        let prompts: Vec<(usize, &str)> = typed_prompts(&history).collect();
        assert_eq!(prompts, [(1, "add a cache"), (6, "test it")]);
    }
}
