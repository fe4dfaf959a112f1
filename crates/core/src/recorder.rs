//! Committing a session's messages to the store in order, each before anything that
//! reports it as done — so a killed process loses at most the reply being streamed.
//! A store that fails is reported once and [`Recorder::failure`] says why: the turn
//! stops there (retryable) rather than run on with a history nobody can resume.

use atto_protocol::{Event, Message};
use atto_store::Store;
use tokio::sync::mpsc;

pub(crate) struct Recorder {
    pub store: Option<Store>,
    /// The thread messages are appended to (a session's first thread has its id).
    pub thread: String,
    /// `seq` of the next message.
    next_seq: i64,
    warned: bool,
    /// Why a message could not be committed, once one could not.
    failure: Option<String>,
    events: mpsc::UnboundedSender<Event>,
}

impl Recorder {
    pub(crate) fn new(
        store: Option<Store>,
        thread: String,
        messages_so_far: usize,
        events: mpsc::UnboundedSender<Event>,
    ) -> Self {
        Self {
            store,
            thread,
            next_seq: i64::try_from(messages_so_far).unwrap_or(i64::MAX - 1) + 1,
            warned: false,
            failure: None,
            events,
        }
    }

    /// Why the history could not be saved, if it could not.
    pub(crate) fn failure(&self) -> Option<&str> {
        self.failure.as_deref()
    }

    /// Appends to `thread` from now on, after `messages_so_far` messages of its history.
    pub(crate) fn set_thread(&mut self, thread: String, messages_so_far: usize) {
        self.thread = thread;
        self.next_seq = i64::try_from(messages_so_far).unwrap_or(i64::MAX - 1) + 1;
    }

    /// Appends `message` as the thread's next message; returns once it is committed.
    pub(crate) async fn persist(&mut self, message: &Message) {
        self.persist_at(message, None).await;
    }

    /// [`Recorder::persist`] for a message first recorded at `recorded_at` (Unix ms).
    pub(crate) async fn persist_at(&mut self, message: &Message, recorded_at: Option<i64>) {
        let seq = self.next_seq;
        self.next_seq += 1;
        let Some(store) = self.store.clone() else {
            return;
        };
        let title = match message {
            Message::User { text, .. } => Some(title_of(text)),
            _ => None,
        };
        let saved = match serde_json::to_string(message) {
            Ok(body) => store
                .append_message_at(&self.thread, seq, body, title, recorded_at)
                .await
                .map_err(|e| e.to_string()),
            Err(e) => Err(e.to_string()),
        };
        if let Err(err) = saved {
            self.failed(&err);
        }
    }

    /// Reports (once) that history is not being saved, and stops trying.
    pub(crate) fn failed(&mut self, err: &str) {
        self.store = None;
        self.failure.get_or_insert_with(|| err.to_owned());
        if !self.warned {
            self.warned = true;
            let _ = self.events.send(Event::Warning {
                message: format!(
                    "this session's history is not being saved ({err}); it cannot be resumed \
                     later"
                ),
            });
        }
    }
}

/// The first line of a prompt, shortened, as the session's title.
fn title_of(text: &str) -> String {
    let line = text
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    if line.chars().count() > 80 {
        let cut: String = line.chars().take(79).collect();
        format!("{cut}…")
    } else {
        line.to_owned()
    }
}
