//! Conversation threads inside a session: branching (`/fork`), the tree (`/threads`),
//! moving between branches (`/switch`), back to a fork point (`/rollback`) and to just
//! before a prompt (`/rewind`, a new version of the thread). Threads
//! live in the store and share the messages before their fork point instead of copying
//! them; a session's first thread has the session's id and is shown as `main`.

use atto_protocol::{Message, ThreadInfo};
use atto_store::{Store, ThreadRow};

/// Thread operations for one session.
pub(crate) struct Threads<'a> {
    pub store: Option<&'a Store>,
    pub session: &'a str,
}

/// The state to continue in after a switch.
pub(crate) struct Switched {
    pub info: ThreadInfo,
    pub history: Vec<Message>,
}

impl Threads<'_> {
    fn store(&self) -> Result<&Store, String> {
        self.store.ok_or_else(|| {
            "threads need the session database, which is not available in this session".to_owned()
        })
    }

    /// Starts a new, empty version of `current` for a compacted conversation and makes it
    /// current; `current`'s messages stay in the store as they were.
    pub async fn new_version(&self, current: &str, label: String) -> Result<String, String> {
        let store = self.store()?;
        let id = format!(
            "compact-{}",
            &uuid::Uuid::new_v4().simple().to_string()[..8]
        );
        store
            .create_thread_version(self.session, &id, current, Some(label))
            .await
            .map_err(|e| e.to_string())?;
        Ok(id)
    }

    /// Continues in a new version of `current` that keeps its first `keep` messages: the
    /// conversation as it was just before a prompt. `current` stays whole; `/rollback`
    /// from the new version goes back to it.
    pub async fn rewind(
        &self,
        current: &str,
        keep: usize,
        label: String,
    ) -> Result<Switched, String> {
        let store = self.store()?;
        let id = format!("rewind-{}", &uuid::Uuid::new_v4().simple().to_string()[..8]);
        let seq = i64::try_from(keep).unwrap_or(i64::MAX);
        store
            .create_rewound_thread(self.session, &id, current, seq, Some(label))
            .await
            .map_err(|e| e.to_string())?;
        self.enter(&id, &id).await
    }

    /// When each message of `thread`'s history was recorded (Unix milliseconds).
    pub async fn times(&self, thread: &str) -> Result<Vec<i64>, String> {
        self.store()?
            .thread_history_times(thread)
            .await
            .map_err(|e| e.to_string())
    }

    /// Branches `current` after its first `fork_seq` messages into a new thread.
    pub async fn fork(
        &self,
        current: &str,
        fork_seq: usize,
        label: Option<String>,
    ) -> Result<ThreadInfo, String> {
        let store = self.store()?;
        let id = format!("fork-{}", &uuid::Uuid::new_v4().simple().to_string()[..8]);
        let seq = i64::try_from(fork_seq).unwrap_or(i64::MAX);
        store
            .create_thread(self.session, &id, current, seq, label.clone())
            .await
            .map_err(|e| e.to_string())?;
        Ok(ThreadInfo {
            id,
            parent: Some(self.display(current)),
            label,
            messages: u64::try_from(fork_seq).unwrap_or(u64::MAX),
            current: true,
        })
    }

    /// Every thread of the session, with the current one marked.
    pub async fn list(&self, current: &str) -> Result<Vec<ThreadInfo>, String> {
        let rows = self.rows().await?;
        Ok(rows.iter().map(|r| self.info(r, current)).collect())
    }

    /// Continues in the thread named by `id` (`main`, an id, or a unique prefix).
    pub async fn switch(&self, id: &str) -> Result<Switched, String> {
        let rows = self.rows().await?;
        let wanted = if id == "main" { self.session } else { id };
        // The label /threads shows names a thread as well as its id does.
        let label = id.trim_matches('"');
        let by_label: Vec<&ThreadRow> = rows
            .iter()
            .filter(|r| r.label.as_deref() == Some(label))
            .collect();
        let matches: Vec<&ThreadRow> = if by_label.is_empty() {
            rows.iter().filter(|r| r.id.starts_with(wanted)).collect()
        } else {
            by_label
        };
        let row = match matches.as_slice() {
            [one] => *one,
            [] => return Err(format!("no thread '{id}'; /threads lists them")),
            _ => {
                return Err(format!(
                    "'{id}' matches more than one thread; give more of its id (/threads lists \
                     them)"
                ));
            }
        };
        self.enter(&row.id, &row.id).await
    }

    /// Goes back to the fork point of `current` in a new sibling thread; from a compacted
    /// or rewound version, back to the thread it replaced.
    pub async fn rollback(&self, current: &str) -> Result<Switched, String> {
        let rows = self.rows().await?;
        let Some(row) = rows.iter().find(|r| r.id == current) else {
            return Err("the current thread is not in the database".to_owned());
        };
        // A compacted version goes back to the messages it was compacted from, whole.
        if let Some(original) = &row.replaces {
            return self.enter(original, original).await;
        }
        let (Some(parent), Some(fork_seq)) = (&row.parent, row.fork_seq) else {
            return Err("main has no fork point to roll back to; /fork first".to_owned());
        };
        let label = Some(format!("rollback of {}", self.display(current)));
        let id = format!("fork-{}", &uuid::Uuid::new_v4().simple().to_string()[..8]);
        let store = self.store()?;
        store
            .create_thread(self.session, &id, parent, fork_seq, label)
            .await
            .map_err(|e| e.to_string())?;
        self.enter(&id, &id).await
    }

    async fn enter(&self, id: &str, current: &str) -> Result<Switched, String> {
        let store = self.store()?;
        let bodies = store.thread_history(id).await.map_err(|e| e.to_string())?;
        let mut history = Vec::with_capacity(bodies.len());
        for (n, body) in bodies.iter().enumerate() {
            history.push(serde_json::from_str(body).map_err(|e| {
                format!(
                    "message {} of thread {id} cannot be read ({e}); not switched",
                    n + 1
                )
            })?);
        }
        store
            .set_current_thread(self.session, id)
            .await
            .map_err(|e| e.to_string())?;
        let rows = self.rows().await?;
        let info = rows
            .iter()
            .find(|r| r.id == id)
            .map(|r| self.info(r, current))
            .ok_or_else(|| format!("thread {id} vanished while switching"))?;
        Ok(Switched { info, history })
    }

    async fn rows(&self) -> Result<Vec<ThreadRow>, String> {
        self.store()?
            .threads(self.session)
            .await
            .map_err(|e| e.to_string())
    }

    fn info(&self, row: &ThreadRow, current: &str) -> ThreadInfo {
        ThreadInfo {
            id: self.display(&row.id),
            parent: row
                .parent
                .as_deref()
                .or(row.replaces.as_deref())
                .map(|p| self.display(p)),
            label: row.label.clone(),
            messages: u64::try_from(row.messages).unwrap_or(0),
            current: row.id == current,
        }
    }

    /// `main` for the session's first thread, the id otherwise.
    fn display(&self, id: &str) -> String {
        if id == self.session {
            "main".to_owned()
        } else {
            id.to_owned()
        }
    }
}
