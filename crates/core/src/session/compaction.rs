//! The session's side of compaction: measuring the next request against the model's
//! window, asking the model for a summary of the older messages, pinning the live state
//! verbatim, storing the compacted conversation as a new thread version (the originals
//! stay in the store; `/rollback` goes back to them) and announcing it. A summary that
//! fails, comes back empty or too long is never used: old tool outputs are elided instead,
//! oldest first, and nothing stored is touched. Also the repository map a small
//! repository's first prompt carries.

use std::borrow::Cow;
use std::sync::Arc;

use atto_llm::{ModelError, ModelRequest};
use atto_protocol::{CompactTrigger, Compaction, ContextUse, Event, Message};
use atto_tools::CancellationToken;

use super::Session;
use crate::context::{self, compact, pins};

/// What the summariser is told.
const SUMMARISER: &str = "You write the summary that replaces the older part of a coding \
session's conversation, so the work can continue without it. Plain text under these \
headings: Task and progress; Decisions and why; Files touched (paths, what changed); \
Commands run and their outcomes (errors included); Open problems and next steps. Keep \
identifiers, paths, numbers and error messages exact. Leave out what is pinned separately \
(user constraints, goals, tasks, plans, pending changes). Reply with the summary only.";

/// The summary may take at most this share (percent) of the window.
const SUMMARY_PERCENT: u64 = 15;

/// The last messages the fallback never elides.
const PROTECTED: usize = 2;

impl Session {
    /// The context window of the model the next request goes to.
    pub(super) fn window(&self) -> Option<u64> {
        self.options
            .context
            .window(&self.options.client.info().model)
    }

    /// Bytes of the next request: system prompt, tool schemas and history.
    fn request_bytes(&self) -> u64 {
        u64::try_from(self.system.len()).unwrap_or(u64::MAX)
            + context::tools_bytes(&self.tool_specs)
            + context::history_bytes(&self.history)
    }

    /// How full the window is, for `/context` and status lines.
    pub(super) fn context_use(&self) -> ContextUse {
        let window = self.window();
        let system = context::tokens(u64::try_from(self.system.len()).unwrap_or(u64::MAX));
        let tools = context::tokens(context::tools_bytes(&self.tool_specs));
        let history = context::tokens(context::history_bytes(&self.history));
        ContextUse {
            model: self.options.client.info().model.clone(),
            window,
            used_tokens: system + tools + history,
            system_tokens: system,
            tools_tokens: tools,
            history_tokens: history,
            messages: u64::try_from(self.history.len()).unwrap_or(u64::MAX),
            compact_at: window.map(|w| self.options.context.compact_at(w)),
            last_input_tokens: self.last_input_tokens,
        }
    }

    /// The `codebase_overview` map offered with the first prompt of a new top-level session
    /// in a small repository (after the cached prefix, like every volatile fact), raised
    /// toward the files and names the prompt mentions.
    pub(super) async fn start_map(&self, prompt: &str) -> Option<String> {
        let settings = &self.options.context;
        if self.position.depth > 0 || !self.history.is_empty() || settings.start_map_max_files == 0
        {
            return None;
        }
        let root = self.options.workspace.clone();
        let max_files = settings.start_map_max_files;
        let focus = prompt.to_owned();
        // Bounded: the walk gives up after a few thousand entries.
        let map = tokio::task::spawn_blocking(move || {
            atto_tools::start_map(&root, max_files, context::START_MAP_BYTES, &focus)
        })
        .await
        .ok()??;
        Some(format!(
            "<repository_map>\n{}\n</repository_map>",
            map.trim_end()
        ))
    }

    /// Compacts first when the next request would pass the threshold of the window. A
    /// compaction that could not get under it is not repeated before a tenth of the window
    /// more has been added (else every step would pay for a summary that cannot help).
    pub(super) async fn compact_if_due(&mut self, cancel: &CancellationToken) {
        let window = self.window();
        let bytes = self.request_bytes();
        let grown =
            window.is_none_or(|w| bytes > self.compacted_to + w * atto_llm::BYTES_PER_TOKEN / 10);
        if grown && context::compaction_due(&self.options.context, window, bytes) {
            self.compact(CompactTrigger::Threshold, None, cancel).await;
        }
    }

    /// Compacts the conversation; says what happened (`context_compacted`) or why
    /// nothing was changed (a warning). Returns whether it compacted.
    pub(super) async fn compact(
        &mut self,
        trigger: CompactTrigger,
        focus: Option<String>,
        cancel: &CancellationToken,
    ) -> bool {
        let before_bytes = context::history_bytes(&self.history);
        let (room, window_bytes) = self.room(trigger, before_bytes);
        let keep = window_bytes * u64::from(self.options.context.keep_recent_percent) / 100;
        let start = compact::tail_start(&self.history, keep.min(room / 2));
        let pinned = self.pinned(&self.history[..start]).await;
        let summary = if start > 0 {
            self.summarise(start, focus.as_deref(), window_bytes, cancel)
                .await
        } else {
            Err("nothing is old enough to summarise".to_owned())
        };
        if cancel.is_cancelled() {
            return false;
        }
        let (mut history, origins, fallback_reason) =
            self.compacted_history(summary, &pinned.render(), start);
        if context::history_bytes(&history) > room {
            compact::elide_oldest(&mut history[1..], room, PROTECTED);
        }
        let from_thread = self.recorder.thread.clone();
        let thread = match self.store_version(&history, &origins).await {
            Ok(thread) => thread,
            Err(why) => {
                let message =
                    format!("the conversation could not be compacted ({why}); nothing was changed");
                // Asked for, it is the command's answer; automatic, the turn goes on.
                self.emit(match trigger {
                    CompactTrigger::User => Event::Error { message },
                    CompactTrigger::Threshold | CompactTrigger::Overflow => {
                        Event::Warning { message }
                    }
                });
                return false;
            }
        };
        let compaction = Compaction {
            trigger,
            thread: self.thread_display(&thread),
            from_thread: self.thread_display(&from_thread),
            before_tokens: context::tokens(before_bytes),
            after_tokens: context::tokens(context::history_bytes(&history)),
            messages_before: u64::try_from(self.history.len()).unwrap_or(u64::MAX),
            messages_after: u64::try_from(history.len()).unwrap_or(u64::MAX),
            summarized: fallback_reason.is_none(),
            fallback_reason,
        };
        self.history = history;
        self.compacted_to = self.request_bytes();
        self.emit(Event::ContextCompacted(compaction));
        true
    }

    /// The room the history may fill (below the threshold of a known window; with no
    /// known window, an overflow or /compact, half of what it fills now), and the window's
    /// bytes.
    fn room(&self, trigger: CompactTrigger, before_bytes: u64) -> (u64, u64) {
        let fixed = u64::try_from(self.system.len()).unwrap_or(u64::MAX)
            + context::tools_bytes(&self.tool_specs);
        let (room, window_bytes) = match self.window() {
            Some(w) => {
                let at = self.options.context.compact_at(w) * atto_llm::BYTES_PER_TOKEN;
                (at.saturating_sub(fixed), w * atto_llm::BYTES_PER_TOKEN)
            }
            None => (before_bytes / 2, (before_bytes + fixed) * 5 / 4),
        };
        let room = match trigger {
            // The provider said it does not fit: aim well under what was sent.
            CompactTrigger::Overflow => room.min(before_bytes * 3 / 5),
            // Asked for: make real room, whatever the threshold.
            CompactTrigger::User => room.min(before_bytes / 2),
            CompactTrigger::Threshold => room,
        };
        (room, window_bytes)
    }

    /// The compacted history: a compaction message (the pins, and the summary of the
    /// messages before `start` when there is one) then the messages kept; with where each
    /// came from in the old history, and why there is no summary.
    fn compacted_history(
        &self,
        summary: Result<String, String>,
        pinned: &str,
        start: usize,
    ) -> (Vec<Message>, Vec<Option<usize>>, Option<String>) {
        // Where each message of the new history came from in the old one (the first, the
        // compaction message, is new): its copy keeps the time it was first recorded.
        let mut origins: Vec<Option<usize>> = vec![None];
        let (history, fallback_reason) = match summary {
            Ok(summary) => {
                let first = Message::User {
                    text: String::new(),
                    context: Some(compact::compacted_context(pinned, Some(&summary), start)),
                };
                let mut h = Vec::with_capacity(self.history.len() - start + 1);
                h.push(first);
                h.extend_from_slice(&self.history[start..]);
                origins.extend((start..self.history.len()).map(Some));
                (h, None)
            }
            Err(why) => {
                let first = Message::User {
                    text: String::new(),
                    context: Some(compact::compacted_context(pinned, None, self.history.len())),
                };
                // The old compaction message is replaced by the new one (its pins are in it).
                let rest = self
                    .history
                    .iter()
                    .enumerate()
                    .filter(|(_, m)| !is_compaction(m));
                let mut h = vec![first];
                for (index, message) in rest {
                    h.push(message.clone());
                    origins.push(Some(index));
                }
                (h, Some(why))
            }
        };
        (history, origins, fallback_reason)
    }

    /// The thread's name as `/threads` shows it.
    fn thread_display(&self, id: &str) -> String {
        if id == self.options.session_id {
            "main".to_owned()
        } else {
            id.to_owned()
        }
    }

    /// Stores `history` as a new version of the current thread and continues in it. The
    /// current thread's messages stay as they are. A message copied from the old history
    /// (`origins[i]` is its index there) keeps the time it was first recorded, so `/rewind`
    /// still finds the files as they were before a prompt the compaction kept. Without a
    /// store, nothing is stored.
    async fn store_version(
        &mut self,
        history: &[Message],
        origins: &[Option<usize>],
    ) -> Result<String, String> {
        if self.recorder.store.is_none() {
            return Ok(self.recorder.thread.clone());
        }
        let current = self.recorder.thread.clone();
        // Times that do not line up with the history (a store that failed to save some
        // messages) are not used: those copies are stamped now, as before.
        let times = self
            .threads()
            .times(&current)
            .await
            .ok()
            .filter(|t| t.len() == self.history.len());
        let label = format!("compaction of {}", self.thread_display(&current));
        let id = self.threads().new_version(&current, label).await?;
        self.recorder.set_thread(id.clone(), 0);
        for (index, message) in history.iter().enumerate() {
            let at = origins
                .get(index)
                .copied()
                .flatten()
                .and_then(|i| times.as_ref().and_then(|t| t.get(i).copied()));
            self.recorder.persist_at(message, at).await;
        }
        match self.recorder.failure() {
            Some(why) => Err(why.to_owned()),
            None => Ok(id),
        }
    }

    /// The state a compaction pins, live from the session, with the constraints of the
    /// messages being compacted.
    async fn pinned(&self, old: &[Message]) -> pins::Pinned {
        let work = self.work.lock().await;
        let goals = work.goals.list().iter().map(pins::goal_line).collect();
        let tasks = (!work.tasks.list().is_empty())
            .then(|| atto_planner::work::task_lines(work.tasks.list()));
        drop(work);
        let pending_changes = self
            .plan
            .plan()
            .map(|p| {
                p.proposed_changes
                    .iter()
                    .filter(|c| c.status.is_open())
                    .map(|c| {
                        format!(
                            "{}. {} {}: {}",
                            c.order,
                            c.tool,
                            crate::plan_queue::target_of(c),
                            c.reason
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        let latest_request = old.iter().rev().find_map(|m| match m {
            Message::User { text, .. } if !text.is_empty() && !text.starts_with('(') => {
                Some(crate::truncate::head_and_tail(text, 4_000))
            }
            _ => None,
        });
        // A subagent's messages come from the session that started it (its task, a custom
        // agent's instructions), never from the user: none is a user constraint.
        let constraints = if self.position.depth == 0 {
            pins::constraints(&self.history)
        } else {
            Vec::new()
        };
        pins::Pinned {
            constraints,
            goals,
            tasks,
            step_plan: self.planner.waiting.as_ref().map(pins::step_plan_text),
            pending_changes,
            latest_request,
        }
    }

    /// Asks the model for a summary of the first `upto` messages; an error, an empty
    /// summary or one too long is an `Err` with the reason.
    async fn summarise(
        &mut self,
        upto: usize,
        focus: Option<&str>,
        window_bytes: u64,
        cancel: &CancellationToken,
    ) -> Result<String, String> {
        let max_transcript = usize::try_from(window_bytes / 2).unwrap_or(usize::MAX);
        let mut prompt = compact::transcript(&self.history[..upto], max_transcript);
        prompt.push_str("\nSummarise the conversation above.");
        if let Some(focus) = focus.filter(|f| !f.trim().is_empty()) {
            prompt.push_str(&format!(" Keep in particular: {focus}"));
        }
        let max_summary = window_bytes * SUMMARY_PERCENT / 100;
        let max_output_tokens = u32::try_from(context::tokens(max_summary))
            .unwrap_or(u32::MAX)
            .min(self.options.limits.max_output_tokens);
        let messages = [Message::user(prompt)];
        let request = ModelRequest {
            system: Cow::Borrowed(SUMMARISER),
            messages: Cow::Borrowed(&messages),
            tools: Cow::Borrowed(&[]),
            max_output_tokens,
            effort: None,
            temperature: None,
        };
        let client = Arc::clone(&self.options.client);
        let mut ignore = |_| {};
        let reply = tokio::select! {
            reply = client.stream(&request, &mut ignore) => reply,
            () = cancel.cancelled() => Err(ModelError::Cancelled),
        };
        let response = reply.map_err(|e| format!("the summary request failed: {e}"))?;
        if response.usage_reported {
            let cost = atto_llm::cost_usd(&response.model, &response.usage);
            self.emit(Event::Usage {
                model: response.model.clone(),
                usage: response.usage,
                cost_usd: cost,
            });
            self.models.charge(&response.model, &response.usage, cost);
            self.charge_call(&response.usage).await;
        }
        let text = response.text();
        if text.trim().is_empty() {
            return Err("the summary came back empty".to_owned());
        }
        if u64::try_from(text.len()).unwrap_or(u64::MAX) > max_summary {
            return Err(format!(
                "the summary was too long ({} bytes, at most {max_summary})",
                text.len()
            ));
        }
        Ok(text)
    }
}

/// Whether `message` is an earlier compaction's first message.
fn is_compaction(message: &Message) -> bool {
    matches!(message, Message::User { text, context: Some(c) } if text.is_empty() && compact::is_compacted_context(c))
}
