//! Backtracking: listing the conversation's prompts and going back to just before one of
//! them (`/rewind`, Esc Esc in the terminal UI). The conversation goes back as a new
//! version of the thread (the old one stays, for `/rollback`); the files go back through
//! the checked restore, whose safety snapshot keeps what was on disk. Front ends only
//! choose; this is the one implementation.

use atto_protocol::{Event, Message, PromptInfo, RewindScope};

use super::Session;

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
        for (index, message) in self.history.iter().enumerate() {
            if let Message::User { text, .. } = message {
                let number = u32::try_from(prompts.len() + 1).unwrap_or(u32::MAX);
                prompts.push(Prompt {
                    info: PromptInfo {
                        number,
                        text: text.clone(),
                        checkpoint: None,
                    },
                    index,
                });
                at.push(if aligned { times[index] } else { i64::MAX });
            }
        }
        let checkpoints = self.keeper.first_since(at).await?;
        for (prompt, checkpoint) in prompts.iter_mut().zip(checkpoints) {
            prompt.info.checkpoint = checkpoint;
        }
        Ok(prompts)
    }
}
