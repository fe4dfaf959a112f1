//! Learnings in a session: recalling the validated ones that fit a prompt into the
//! request's volatile tail (never the cached system prompt), proposing new ones (from the
//! model's `propose_learning` tool, from a workaround the self-improvement protocol found,
//! from the user's `/learn`), and the `/learnings` commands that let the user decide what
//! the agent remembers.
//!
//! Owns: the session's side of learnings (settings, which learnings this session recalled,
//! what a workaround becomes) and the events about them. Does not own: storing, searching
//! or evicting (atto-store), how recalled learnings read (`recall`), the tools (`tools`).
//!
//! Nothing here may hold up a turn: every store request is bounded by [`STORE_WAIT`]; one
//! that takes longer is given up (recall then adds nothing) and the turn goes on.

mod recall;
mod tools;

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use atto_protocol::{
    Event, Learning, LearningCommand, LearningKind, LearningRef, LearningScope, LearningSource,
    LearningStatus,
};
use atto_store::{LearningFilter, LearningLimits, LearningQuery, NewLearning, Proposal, Store};
use tokio::sync::mpsc;

use crate::correction::Workaround;

pub(crate) use recall::Recall;
pub(crate) use tools::{LearningHelpfulTool, ProposeLearningTool};

/// The longest a store request may hold up a turn.
const STORE_WAIT: Duration = Duration::from_millis(250);

/// Confidence of a workaround seen once; each further failure before it worked adds
/// [`WORKAROUND_STEP`], up to [`WORKAROUND_MAX`] (below the default auto-validation: the
/// user decides).
const WORKAROUND_CONFIDENCE: f64 = 0.5;
const WORKAROUND_STEP: f64 = 0.1;
const WORKAROUND_MAX: f64 = 0.8;

/// Confidence of the user's own `/learn`.
const USER_CONFIDENCE: f64 = 0.9;

/// How a session uses learnings (`[learning]` in the config).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LearningSettings {
    /// Recall, propose and offer the learning tools at all.
    pub enabled: bool,
    /// Proposals at or above this confidence are validated without asking.
    pub auto_validate_threshold: f64,
    /// Learnings kept in all, every project together; past it the oldest rejected and
    /// archived go first, then the least confident validated ones.
    pub max_learnings: usize,
    /// Learnings recalled into one request, at most.
    pub max_recalled: usize,
    /// Bytes the recalled notes may take in one request, at most.
    pub max_recalled_bytes: usize,
}

impl Default for LearningSettings {
    fn default() -> Self {
        let limits = LearningLimits::default();
        Self {
            enabled: true,
            auto_validate_threshold: limits.auto_validate_threshold,
            max_learnings: limits.max_learnings,
            max_recalled: 5,
            max_recalled_bytes: 1536,
        }
    }
}

impl LearningSettings {
    fn limits(&self) -> LearningLimits {
        LearningLimits {
            auto_validate_threshold: self.auto_validate_threshold,
            max_learnings: self.max_learnings,
        }
    }
}

/// What this session recalled, for `learning_helpful`: the model may mark only those, and
/// each once.
#[derive(Debug, Default)]
struct Recalled {
    ids: HashSet<i64>,
    marked: HashSet<i64>,
}

/// A session's learnings, shared by the session and its learning tools.
pub(crate) struct Learnings {
    store: Option<Store>,
    /// The canonical workspace: its learnings and the user's are the session's.
    project: String,
    session_id: String,
    settings: LearningSettings,
    events: mpsc::UnboundedSender<Event>,
    recalled: Mutex<Recalled>,
}

impl Learnings {
    pub(crate) fn new(
        store: Option<Store>,
        project: String,
        session_id: String,
        settings: LearningSettings,
        events: mpsc::UnboundedSender<Event>,
    ) -> Arc<Self> {
        Arc::new(Self {
            store,
            project,
            session_id,
            settings,
            events,
            recalled: Mutex::new(Recalled::default()),
        })
    }

    /// Whether learnings are on for this session (enabled, and a database to keep them).
    pub(crate) fn active(&self) -> bool {
        self.settings.enabled && self.store.is_some()
    }

    fn emit(&self, event: Event) {
        let _ = self.events.send(event);
    }

    /// The store, when learnings are on; otherwise what to tell whoever asked.
    fn store(&self) -> Result<&Store, String> {
        match &self.store {
            Some(store) if self.settings.enabled => Ok(store),
            Some(_) => Err(
                "learnings are off ([learning] enabled = false in the config); \
                 nothing was recalled or stored."
                    .to_owned(),
            ),
            None => Err(
                "learnings need the session database, which is not available in \
                 this run; nothing was stored."
                    .to_owned(),
            ),
        }
    }

    /// The validated learnings that fit `prompt`, as notes for the request's volatile tail
    /// (at most `max_recalled`, within `max_recalled_bytes`); `None` when none fit or the
    /// store did not answer in time. Their use is counted in the background.
    pub(crate) async fn recall(&self, prompt: &str) -> Option<Recall> {
        let store = self.store().ok()?;
        let query = LearningQuery {
            text: prompt.to_owned(),
            project: self.project.clone(),
            categories: Vec::new(),
            actions: Vec::new(),
            limit: self.settings.max_recalled,
        };
        let found = tokio::time::timeout(STORE_WAIT, store.recall_learnings(query))
            .await
            .ok()?
            .ok()?;
        let recall = recall::notes(&found, self.settings.max_recalled_bytes)?;
        if let Ok(mut recalled) = self.recalled.lock() {
            recalled.ids.extend(recall.learnings.iter().map(|l| l.id));
        }
        let ids = recall.learnings.iter().map(|l| l.id).collect();
        let store = store.clone();
        tokio::spawn(async move {
            // A count that could not be saved loses one use of a learning; nothing else.
            let _ = store.note_learnings_used(ids).await;
        });
        Some(recall)
    }

    /// Stores a proposal and tells the front ends (unless it was stored already); `Err` is
    /// what the proposer is told when it could not be stored.
    pub(crate) async fn propose(&self, new: NewLearning) -> Result<Proposal, String> {
        let store = self.store()?;
        let proposal = tokio::time::timeout(
            STORE_WAIT * 4,
            store.propose_learning(new, self.settings.limits()),
        )
        .await
        .map_err(|_| {
            "the database did not answer within a second; the learning may still be stored \
             once it does (/learnings shows it then)."
                .to_owned()
        })?
        .map_err(|e| e.to_string())?;
        if !proposal.duplicate {
            self.emit(Event::LearningProposed {
                learning: proposal.learning.clone(),
            });
        }
        Ok(proposal)
    }

    /// Proposes what a workaround taught; a failure to store it is a warning, never a stop.
    pub(crate) async fn workaround(&self, w: &Workaround) {
        if !self.active() {
            return;
        }
        let new = self.workaround_learning(w);
        if let Err(message) = self.propose(new).await {
            self.emit(Event::Warning {
                message: format!("a workaround was not kept as a learning: {message}"),
            });
        }
    }

    /// The learning a workaround makes: what worked where what failed, in this project.
    fn workaround_learning(&self, w: &Workaround) -> NewLearning {
        let label = w.category.label();
        let description = format!(
            "{}: `{}` worked where `{}` failed ({label})",
            w.tool, w.worked, w.failed
        );
        let times = if w.failures == 1 {
            "once".to_owned()
        } else {
            format!("{} times", w.failures)
        };
        let details = format!("The failing call ({times}) said: {}", w.error);
        let mut keywords: Vec<String> = Vec::new();
        for word in atto_store::search_terms(&format!("{} {}", w.worked, w.failed)) {
            if keywords.len() < 10 && !keywords.contains(&word) {
                keywords.push(word);
            }
        }
        keywords.push(label.to_ascii_lowercase());
        let mut actions = vec![w.tool.clone()];
        if w.tool == atto_tools::names::BASH
            && let Some(program) = crate::correction::diagnosis::program(&w.worked)
        {
            actions.push(program.to_owned());
        }
        let steps = f64::from(w.failures.saturating_sub(1));
        NewLearning {
            kind: LearningKind::Workaround,
            description: crate::truncate::summary(&description, atto_store::MAX_DESCRIPTION),
            details,
            keywords,
            actions,
            categories: vec![label.to_owned()],
            confidence: (WORKAROUND_CONFIDENCE + WORKAROUND_STEP * steps).min(WORKAROUND_MAX),
            scope: LearningScope::Project,
            project: self.project.clone(),
            source: LearningSource::ToolFailure,
            source_ref: Some(format!("{} failed ({label}), then worked", w.tool)),
            session_id: Some(self.session_id.clone()),
        }
    }

    /// The user's lesson in this session's project (the source others change): a draft
    /// filled in with the project and the session.
    pub(crate) fn draft(&self, kind: LearningKind, description: String) -> NewLearning {
        NewLearning {
            kind,
            description,
            details: String::new(),
            keywords: Vec::new(),
            actions: Vec::new(),
            categories: Vec::new(),
            confidence: USER_CONFIDENCE,
            scope: LearningScope::Project,
            project: self.project.clone(),
            source: LearningSource::User,
            source_ref: None,
            session_id: Some(self.session_id.clone()),
        }
    }

    /// The model marks a learning recalled in this session helpful (once per learning).
    pub(crate) async fn helpful_by_model(&self, id: i64) -> Result<Learning, String> {
        let store = self.store()?;
        {
            let mut recalled = self
                .recalled
                .lock()
                .map_err(|_| "the session's learning state is unusable".to_owned())?;
            if !recalled.ids.contains(&id) {
                return Err(format!(
                    "learning #{id} was not recalled in this session; only the notes in \
                     <recalled_learnings> can be marked helpful. Nothing was changed."
                ));
            }
            if !recalled.marked.insert(id) {
                return Err(format!(
                    "learning #{id} was already marked helpful in this session; it counts \
                     once. Nothing was changed."
                ));
            }
        }
        let learning = store
            .learning_helpful(id, &self.project)
            .await
            .map_err(|e| e.to_string())?;
        self.emit(Event::LearningUpdated {
            learning: learning.clone(),
        });
        Ok(learning)
    }

    /// `/learn` and `/learnings`: answered with `learning_list`, `learning_updated`,
    /// `learning_proposed`, or an error saying what to do.
    pub(crate) async fn command(&self, command: LearningCommand) {
        if let Err(message) = self.run_command(command).await {
            self.emit(Event::Error { message });
        }
    }

    async fn run_command(&self, command: LearningCommand) -> Result<(), String> {
        let store = self.store()?;
        let project = self.project.as_str();
        let err = |e: atto_store::StoreError| e.to_string();
        let updated = match command {
            LearningCommand::List { status } => {
                let statuses = match status {
                    Some(status) => vec![status],
                    None => vec![LearningStatus::Proposed, LearningStatus::Validated],
                };
                let learnings = store
                    .list_learnings(LearningFilter {
                        project: Some(project.to_owned()),
                        statuses,
                    })
                    .await
                    .map_err(err)?;
                self.emit(Event::LearningList {
                    learnings,
                    detailed: false,
                });
                return Ok(());
            }
            LearningCommand::Show { id } => {
                let learning = store.learning(id, project).await.map_err(err)?;
                self.emit(Event::LearningList {
                    learnings: vec![learning],
                    detailed: true,
                });
                return Ok(());
            }
            LearningCommand::Add { kind, description } => {
                let new = self.draft(kind, description);
                let proposal = store
                    .propose_learning(new, self.settings.limits())
                    .await
                    .map_err(err)?;
                if proposal.duplicate {
                    return Err(format!(
                        "that lesson is learning #{} already ({}); nothing was added.",
                        proposal.learning.id,
                        proposal.learning.status.as_str()
                    ));
                }
                self.emit(Event::LearningProposed {
                    learning: proposal.learning,
                });
                return Ok(());
            }
            LearningCommand::Validate { id } => store
                .set_learning_status(id, project, LearningStatus::Validated)
                .await
                .map_err(err)?,
            LearningCommand::Reject { id } => store
                .set_learning_status(id, project, LearningStatus::Rejected)
                .await
                .map_err(err)?,
            LearningCommand::Archive { id } => store
                .set_learning_status(id, project, LearningStatus::Archived)
                .await
                .map_err(err)?,
            LearningCommand::Helpful { id } => {
                store.learning_helpful(id, project).await.map_err(err)?
            }
            LearningCommand::Edit { id, field, value } => store
                .edit_learning(id, project, field, &value)
                .await
                .map_err(err)?,
        };
        self.emit(Event::LearningUpdated { learning: updated });
        Ok(())
    }
}

/// How events name a learning.
pub(crate) fn reference(learning: &Learning) -> LearningRef {
    LearningRef {
        id: learning.id,
        kind: learning.kind,
        description: learning.description.clone(),
    }
}
