//! Learnings (`learnings`): storing a proposal (validated at once when the user wrote it or
//! a project lesson's confidence reaches the threshold; a duplicate returns the learning
//! already stored),
//! moving a learning along its lifecycle, editing it, marking it helpful, listing a
//! workspace's learnings, and eviction past the cap. Recall (full-text search) lives in
//! `learnings_recall`, importing in `learnings_import`. What is worth learning, and how a
//! learning reads in a request, is atto-core's business.
//!
//! Lifecycle: PROPOSED → VALIDATED or REJECTED → ARCHIVED. Eviction, once the table holds
//! more than the cap: REJECTED and ARCHIVED first (oldest first), then VALIDATED (lowest
//! confidence first, then oldest), then PROPOSED (oldest first); the learning just stored
//! is never the one evicted for it.

use std::path::Path;

use atto_protocol::{
    Learning, LearningField, LearningKind, LearningScope, LearningSource, LearningStatus,
};
use rusqlite::{Connection, OptionalExtension, Row, Transaction, TransactionBehavior, params};

use crate::{Store, StoreError};

/// Longest description stored, in characters.
pub const MAX_DESCRIPTION: usize = 300;
/// Longest details stored, in characters.
pub const MAX_DETAILS: usize = 4000;
/// Most keywords, actions or categories stored per learning.
pub const MAX_WORDS: usize = 20;
/// Longest keyword, action or category, in characters.
pub const MAX_WORD: usize = 80;

/// A learning to store.
#[derive(Debug, Clone, PartialEq)]
pub struct NewLearning {
    /// What kind of lesson.
    pub kind: LearningKind,
    /// The lesson in one sentence (at most [`MAX_DESCRIPTION`] characters).
    pub description: String,
    /// More on it (at most [`MAX_DETAILS`] characters).
    pub details: String,
    /// Words it is found by.
    pub keywords: Vec<String>,
    /// Tools or commands it concerns.
    pub actions: Vec<String>,
    /// Areas it belongs to.
    pub categories: Vec<String>,
    /// How sure the proposer is, 0 to 1.
    pub confidence: f64,
    /// Whom it applies to.
    pub scope: LearningScope,
    /// The canonical workspace path it was learned in (kept for project scope).
    pub project: String,
    /// Who proposes it.
    pub source: LearningSource,
    /// What proposes it, in words (the failing tool, the swarm task, the file).
    pub source_ref: Option<String>,
    /// The session it is proposed in.
    pub session_id: Option<String>,
}

/// The store's bounds on learnings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LearningLimits {
    /// Proposals at or above this confidence are validated without asking.
    pub auto_validate_threshold: f64,
    /// Learnings kept in all; past it, the eviction order applies.
    pub max_learnings: usize,
}

impl Default for LearningLimits {
    fn default() -> Self {
        Self {
            auto_validate_threshold: 0.9,
            max_learnings: 500,
        }
    }
}

/// What became of a proposal.
#[derive(Debug, Clone, PartialEq)]
pub struct Proposal {
    /// The learning as stored (the earlier one, for a duplicate).
    pub learning: Learning,
    /// The same description was stored already for this scope: nothing new was stored.
    pub duplicate: bool,
    /// Learnings evicted to make room.
    pub evicted: usize,
}

/// Which learnings a listing shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LearningFilter {
    /// Those this workspace sees (its own and the user's); `None`: every workspace's.
    pub project: Option<String>,
    /// Only these statuses; empty: every status.
    pub statuses: Vec<LearningStatus>,
}

impl NewLearning {
    /// Checks the rules the table cannot state: sizes, a finite confidence in 0..=1.
    pub(crate) fn check(&self) -> Result<(), StoreError> {
        let invalid = |what: String, hint| Err(StoreError::Invalid { what, hint });
        let description = self.description.trim();
        if description.is_empty() {
            return invalid(
                "a learning needs a description and this one is empty".to_owned(),
                "Say the lesson in one sentence.",
            );
        }
        if description.chars().count() > MAX_DESCRIPTION {
            return invalid(
                format!(
                    "a learning's description is {} characters, more than {MAX_DESCRIPTION}",
                    description.chars().count()
                ),
                "Say the lesson in one sentence; put the rest in the details.",
            );
        }
        if self.details.chars().count() > MAX_DETAILS {
            return invalid(
                format!("a learning's details are longer than {MAX_DETAILS} characters"),
                "Keep the details to what the lesson needs.",
            );
        }
        for list in [&self.keywords, &self.actions, &self.categories] {
            if list.len() > MAX_WORDS || list.iter().any(|w| w.chars().count() > MAX_WORD) {
                return invalid(
                    format!(
                        "a learning's keywords, actions or categories are more than \
                         {MAX_WORDS} or longer than {MAX_WORD} characters each"
                    ),
                    "Give a few short words.",
                );
            }
        }
        if !(self.confidence.is_finite() && (0.0..=1.0).contains(&self.confidence)) {
            return invalid(
                format!(
                    "a learning's confidence {} is not between 0 and 1",
                    self.confidence
                ),
                "Give a confidence from 0 to 1.",
            );
        }
        if self.scope == LearningScope::Project && self.project.is_empty() {
            return invalid(
                "a project learning was given no project".to_owned(),
                "Pass the canonical workspace path as the project.",
            );
        }
        Ok(())
    }

    /// The project column: the workspace for project scope, `NULL` for user scope.
    pub(crate) fn project_column(&self) -> Option<&str> {
        match self.scope {
            LearningScope::Project => Some(self.project.as_str()),
            LearningScope::User => None,
        }
    }
}

impl Store {
    /// Stores a proposal: validated at once when the user wrote it, or when atto saw it work
    /// (a tool failure, a swarm retry), it is for this project only and its confidence
    /// reaches `limits.auto_validate_threshold`; else proposed (the model's own proposals
    /// always). Returned as it was already stored when the same description (in any case)
    /// is stored for its scope. Learnings past `limits.max_learnings` are then evicted,
    /// never the new one.
    ///
    /// A swarm task that passed only after retries proposes what fixed it like this:
    ///
    /// ```no_run
    /// # async fn demo(store: atto_store::Store) -> Result<(), atto_store::StoreError> {
    /// use atto_protocol::{LearningKind, LearningScope, LearningSource};
    /// let proposal = store
    ///     .propose_learning(
    ///         atto_store::NewLearning {
    ///             kind: LearningKind::Workaround,
    ///             description: "Run migrations before the API tests".to_owned(),
    ///             // The RetryContext block of the failed attempt, and what passed.
    ///             details: "## Previous Attempt (attempt 2/3, score: 2/5) ...".to_owned(),
    ///             keywords: vec!["migrations".to_owned(), "api".to_owned()],
    ///             actions: vec!["bash".to_owned()],
    ///             categories: vec!["testing".to_owned()],
    ///             confidence: 0.6,
    ///             scope: LearningScope::Project,
    ///             project: "/path/to/workspace".to_owned(),
    ///             source: LearningSource::Swarm,
    ///             source_ref: Some("swarm 1a2b3c4d task 3".to_owned()),
    ///             session_id: None,
    ///         },
    ///         atto_store::LearningLimits::default(),
    ///     )
    ///     .await?;
    /// # let _ = proposal; Ok(()) }
    /// ```
    pub async fn propose_learning(
        &self,
        new: NewLearning,
        limits: LearningLimits,
    ) -> Result<Proposal, StoreError> {
        new.check()?;
        let path = self.path().to_path_buf();
        self.call(move |conn| propose(conn, &path, &new, limits))
            .await?
    }

    /// The learning numbered `id` if this workspace sees it (its own, or the user's).
    pub async fn learning(&self, id: i64, project: &str) -> Result<Learning, StoreError> {
        let (path, project) = (self.path().to_path_buf(), project.to_owned());
        self.call(move |conn| visible(conn, &path, id, &project))
            .await?
    }

    /// [`Store::learning`], for code without an async runtime.
    pub fn learning_blocking(&self, id: i64, project: &str) -> Result<Learning, StoreError> {
        let (path, project) = (self.path().to_path_buf(), project.to_owned());
        self.call_blocking(move |conn| visible(conn, &path, id, &project))?
    }

    /// Learnings as `filter` picks them, most confident first.
    pub async fn list_learnings(
        &self,
        filter: LearningFilter,
    ) -> Result<Vec<Learning>, StoreError> {
        let path = self.path().to_path_buf();
        self.call(move |conn| list(conn, &path, &filter)).await?
    }

    /// [`Store::list_learnings`], for code without an async runtime.
    pub fn list_learnings_blocking(
        &self,
        filter: LearningFilter,
    ) -> Result<Vec<Learning>, StoreError> {
        let path = self.path().to_path_buf();
        self.call_blocking(move |conn| list(conn, &path, &filter))?
    }

    /// Moves learning `id` (seen by `project`) to `status` along its lifecycle: a proposal
    /// is validated or rejected; a validated or rejected one is archived. Anything else
    /// fails with [`StoreError::Invalid`] saying what is possible, and changes nothing.
    pub async fn set_learning_status(
        &self,
        id: i64,
        project: &str,
        status: LearningStatus,
    ) -> Result<Learning, StoreError> {
        let (path, project) = (self.path().to_path_buf(), project.to_owned());
        self.call(move |conn| set_status(conn, &path, id, &project, status))
            .await?
    }

    /// [`Store::set_learning_status`], for code without an async runtime.
    pub fn set_learning_status_blocking(
        &self,
        id: i64,
        project: &str,
        status: LearningStatus,
    ) -> Result<Learning, StoreError> {
        let (path, project) = (self.path().to_path_buf(), project.to_owned());
        self.call_blocking(move |conn| set_status(conn, &path, id, &project, status))?
    }

    /// Marks learning `id` helpful: one more helpful mark, +0.05 confidence (at most 1).
    pub async fn learning_helpful(&self, id: i64, project: &str) -> Result<Learning, StoreError> {
        let (path, project) = (self.path().to_path_buf(), project.to_owned());
        self.call(move |conn| helpful(conn, &path, id, &project))
            .await?
    }

    /// Changes one field of learning `id`; the new words are checked as a proposal's are.
    pub async fn edit_learning(
        &self,
        id: i64,
        project: &str,
        field: LearningField,
        value: &str,
    ) -> Result<Learning, StoreError> {
        let (path, project, value) = (
            self.path().to_path_buf(),
            project.to_owned(),
            value.to_owned(),
        );
        self.call(move |conn| edit(conn, &path, id, &project, field, &value))
            .await?
    }
}

/// The columns [`row`] reads, in order.
pub(crate) const COLUMNS: &str = "l.id, l.kind, l.status, l.scope, l.description, l.details, \
     l.keywords, l.actions, l.categories, l.confidence, l.source, l.source_ref, l.session_id, \
     l.created_at, l.used, l.helpful";

/// A learning read back, or what makes its row unreadable.
pub(crate) fn row(r: &Row<'_>, path: &Path) -> rusqlite::Result<Result<Learning, StoreError>> {
    let id: i64 = r.get(0)?;
    let text = |i: usize| -> rusqlite::Result<String> { r.get(i) };
    let unreadable = |detail: String| {
        Ok(Err(StoreError::Unreadable {
            path: path.to_path_buf(),
            what: format!("learning #{id}"),
            detail,
        }))
    };
    let words = |i: usize| -> rusqlite::Result<Result<Vec<String>, String>> {
        let json = text(i)?;
        Ok(serde_json::from_str(&json).map_err(|e| format!("a word list is not JSON ({e})")))
    };
    let Some(kind) = LearningKind::parse(&text(1)?) else {
        return unreadable(format!("unknown kind {:?}", text(1)?));
    };
    let Some(status) = LearningStatus::parse(&text(2)?) else {
        return unreadable(format!("unknown status {:?}", text(2)?));
    };
    let scope = match text(3)?.as_str() {
        "project" => LearningScope::Project,
        "user" => LearningScope::User,
        other => return unreadable(format!("unknown scope {other:?}")),
    };
    let Some(source) = LearningSource::parse(&text(10)?) else {
        return unreadable(format!("unknown source {:?}", text(10)?));
    };
    let (keywords, actions, categories) = match (words(6)?, words(7)?, words(8)?) {
        (Ok(k), Ok(a), Ok(c)) => (k, a, c),
        (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => return unreadable(e),
    };
    let count =
        |i: usize| -> rusqlite::Result<u64> { Ok(u64::try_from(r.get::<_, i64>(i)?).unwrap_or(0)) };
    Ok(Ok(Learning {
        id,
        kind,
        status,
        scope,
        description: text(4)?,
        details: text(5)?,
        keywords,
        actions,
        categories,
        confidence: r.get(9)?,
        source,
        source_ref: r.get(11)?,
        session_id: r.get(12)?,
        created_at: r.get(13)?,
        used: count(14)?,
        helpful: count(15)?,
    }))
}

/// The learning numbered `id` (or what makes its row unreadable) with its project column,
/// whoever sees it; `None` when there is none.
type Found = (Result<Learning, StoreError>, Option<String>);

fn by_id(conn: &Connection, path: &Path, id: i64) -> rusqlite::Result<Option<Found>> {
    conn.prepare_cached(&format!(
        "SELECT {COLUMNS}, l.project FROM learnings l WHERE l.id = ?1"
    ))?
    .query_row(params![id], |r| Ok((row(r, path)?, r.get(16)?)))
    .optional()
}

/// The learning numbered `id` when `project` sees it.
fn visible(
    conn: &Connection,
    path: &Path,
    id: i64,
    project: &str,
) -> rusqlite::Result<Result<Learning, StoreError>> {
    match by_id(conn, path, id)? {
        Some((learning, None)) => Ok(learning),
        Some((learning, Some(p))) if p == project => Ok(learning),
        _ => Ok(Err(StoreError::NotFound(format!(
            "no learning #{id} in this workspace; nothing was changed. /learnings (or `atto \
             learnings list`) shows their numbers."
        )))),
    }
}

fn words_json(words: &[String]) -> String {
    serde_json::to_string(words).unwrap_or_else(|_| "[]".to_owned())
}

/// Inserts `new` as `status` and returns its id.
pub(crate) fn insert(
    tx: &Transaction<'_>,
    new: &NewLearning,
    status: LearningStatus,
    created_at: i64,
    counts: (u64, u64),
) -> rusqlite::Result<i64> {
    let now = crate::now_ms();
    tx.prepare_cached(
        "INSERT INTO learnings (kind, status, scope, project, description, details, keywords,
             actions, categories, confidence, source, source_ref, session_id, created_at,
             updated_at, used, helpful)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)",
    )?
    .execute(params![
        new.kind.as_str(),
        status.as_str(),
        new.scope.as_str(),
        new.project_column(),
        new.description.trim(),
        new.details.trim(),
        words_json(&new.keywords),
        words_json(&new.actions),
        words_json(&new.categories),
        new.confidence,
        new.source.as_str(),
        new.source_ref,
        new.session_id,
        created_at,
        now,
        i64::try_from(counts.0).unwrap_or(i64::MAX),
        i64::try_from(counts.1).unwrap_or(i64::MAX),
    ])?;
    Ok(tx.last_insert_rowid())
}

/// The id of a learning of `new`'s scope with the same description, in any case.
pub(crate) fn duplicate_of(
    tx: &Transaction<'_>,
    new: &NewLearning,
) -> rusqlite::Result<Option<i64>> {
    tx.prepare_cached(
        "SELECT id FROM learnings
         WHERE scope = ?1 AND project IS ?2 AND lower(description) = lower(?3)
         ORDER BY id LIMIT 1",
    )?
    .query_row(
        params![
            new.scope.as_str(),
            new.project_column(),
            new.description.trim()
        ],
        |r| r.get(0),
    )
    .optional()
}

fn propose(
    conn: &mut Connection,
    path: &Path,
    new: &NewLearning,
    limits: LearningLimits,
) -> rusqlite::Result<Result<Proposal, StoreError>> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    if let Some(id) = duplicate_of(&tx, new)? {
        let found = by_id(&tx, path, id)?;
        tx.commit()?;
        return Ok(match found {
            Some((learning, _)) => learning.map(|learning| Proposal {
                learning,
                duplicate: true,
                evicted: 0,
            }),
            None => Err(unreadable(path, id)),
        });
    }
    // A lesson for every project reaches every later session of the user: only a person
    // validates it, however sure its proposer was.
    let auto =
        new.scope == LearningScope::Project && new.confidence >= limits.auto_validate_threshold;
    let status = match new.source {
        LearningSource::User => LearningStatus::Validated,
        // What atto saw work (a failed call, then one that worked; a swarm task that passed
        // after retries): its confidence was measured, so it may pass on it.
        LearningSource::ToolFailure | LearningSource::Swarm if auto => LearningStatus::Validated,
        // The model's confidence is the model's own word, and a file's is whoever wrote
        // it: a person decides.
        LearningSource::Model
        | LearningSource::Import
        | LearningSource::ToolFailure
        | LearningSource::Swarm => LearningStatus::Proposed,
    };
    let id = insert(&tx, new, status, crate::now_ms(), (0, 0))?;
    let evicted = evict(&tx, limits.max_learnings, &[id])?;
    let found = by_id(&tx, path, id)?;
    tx.commit()?;
    Ok(match found {
        Some((learning, _)) => learning.map(|learning| Proposal {
            learning,
            duplicate: false,
            evicted,
        }),
        None => Err(unreadable(path, id)),
    })
}

fn unreadable(path: &Path, id: i64) -> StoreError {
    StoreError::Unreadable {
        path: path.to_path_buf(),
        what: format!("learning #{id}"),
        detail: "its row could not be read back".to_owned(),
    }
}

/// Deletes learnings until at most `max` remain, in the eviction order (see the module
/// docs), sparing `keep`. Returns how many went.
pub(crate) fn evict(tx: &Transaction<'_>, max: usize, keep: &[i64]) -> rusqlite::Result<usize> {
    let count: i64 = tx.query_row("SELECT count(*) FROM learnings", [], |r| r.get(0))?;
    let max = i64::try_from(max).unwrap_or(i64::MAX);
    let mut excess = count - max;
    if excess <= 0 {
        return Ok(0);
    }
    let keep = words_json(&keep.iter().map(i64::to_string).collect::<Vec<_>>());
    let tiers = [
        "status IN ('rejected', 'archived') ORDER BY created_at, id",
        "status = 'validated' ORDER BY confidence, created_at, id",
        "status = 'proposed' ORDER BY created_at, id",
    ];
    let mut evicted = 0;
    for tier in tiers {
        if excess <= 0 {
            break;
        }
        let gone = tx
            .prepare_cached(&format!(
                "DELETE FROM learnings WHERE id IN (
                     SELECT id FROM learnings
                     WHERE id NOT IN (SELECT CAST(value AS INTEGER) FROM json_each(?1))
                       AND {tier} LIMIT ?2)"
            ))?
            .execute(params![keep, excess])?;
        excess -= i64::try_from(gone).unwrap_or(i64::MAX);
        evicted += gone;
    }
    Ok(evicted)
}

fn list(
    conn: &Connection,
    path: &Path,
    filter: &LearningFilter,
) -> rusqlite::Result<Result<Vec<Learning>, StoreError>> {
    let statuses: Vec<&str> = filter.statuses.iter().map(|s| s.as_str()).collect();
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM learnings l
         WHERE (?1 IS NULL OR l.project IS NULL OR l.project = ?1)
           AND (?2 = '[]' OR l.status IN (SELECT value FROM json_each(?2)))
         ORDER BY l.confidence DESC, l.id"
    ))?;
    let rows = stmt.query_map(
        params![
            filter.project,
            serde_json::to_string(&statuses).unwrap_or_default()
        ],
        |r| row(r, path),
    )?;
    let mut out = Vec::new();
    for learning in rows {
        match learning? {
            Ok(learning) => out.push(learning),
            Err(err) => return Ok(Err(err)),
        }
    }
    Ok(Ok(out))
}

/// Whether the lifecycle lets a learning go from `from` to `to`; `Err` says why not.
fn transition(id: i64, from: LearningStatus, to: LearningStatus) -> Result<(), StoreError> {
    use LearningStatus::{Archived, Proposed, Rejected, Validated};
    let hint = match (from, to) {
        (Proposed, Validated | Rejected) | (Validated | Rejected, Archived) => return Ok(()),
        (Archived, _) => "Archived learnings stay archived; write it again with /learn.",
        (Validated, Validated) | (Rejected, Rejected) => "It is already.",
        (Rejected, _) => "A rejected learning stays rejected; write it again with /learn.",
        (Validated, _) => "Archive it instead (/learnings archive N) to stop its use.",
        (Proposed, Archived | Proposed) => "Validate or reject it first.",
    };
    Err(StoreError::Invalid {
        what: format!(
            "learning #{id} is {} and cannot be made {}",
            from.as_str(),
            to.as_str()
        ),
        hint,
    })
}

fn set_status(
    conn: &mut Connection,
    path: &Path,
    id: i64,
    project: &str,
    status: LearningStatus,
) -> rusqlite::Result<Result<Learning, StoreError>> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let learning = match visible(&tx, path, id, project)? {
        Ok(learning) => learning,
        Err(err) => return Ok(Err(err)),
    };
    if let Err(err) = transition(id, learning.status, status) {
        return Ok(Err(err));
    }
    tx.execute(
        "UPDATE learnings SET status = ?2, updated_at = ?3 WHERE id = ?1",
        params![id, status.as_str(), crate::now_ms()],
    )?;
    let now = visible(&tx, path, id, project)?;
    tx.commit()?;
    Ok(now)
}

fn helpful(
    conn: &mut Connection,
    path: &Path,
    id: i64,
    project: &str,
) -> rusqlite::Result<Result<Learning, StoreError>> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    if let Err(err) = visible(&tx, path, id, project)? {
        return Ok(Err(err));
    }
    tx.execute(
        "UPDATE learnings SET helpful = helpful + 1,
             confidence = min(1.0, round(confidence + 0.05, 6)), updated_at = ?2
         WHERE id = ?1",
        params![id, crate::now_ms()],
    )?;
    let now = visible(&tx, path, id, project)?;
    tx.commit()?;
    Ok(now)
}

fn edit(
    conn: &mut Connection,
    path: &Path,
    id: i64,
    project: &str,
    field: LearningField,
    value: &str,
) -> rusqlite::Result<Result<Learning, StoreError>> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let learning = match visible(&tx, path, id, project)? {
        Ok(learning) => learning,
        Err(err) => return Ok(Err(err)),
    };
    let mut new = NewLearning {
        kind: learning.kind,
        description: learning.description,
        details: learning.details,
        keywords: learning.keywords,
        actions: learning.actions,
        categories: learning.categories,
        confidence: learning.confidence,
        scope: learning.scope,
        project: project.to_owned(),
        source: learning.source,
        source_ref: None,
        session_id: None,
    };
    match field {
        LearningField::Description => new.description = value.trim().to_owned(),
        LearningField::Details => new.details = value.trim().to_owned(),
        LearningField::Keywords => {
            new.keywords = value
                .split(',')
                .map(|w| w.trim().to_owned())
                .filter(|w| !w.is_empty())
                .collect();
        }
        LearningField::Kind => match LearningKind::parse(value) {
            Some(kind) => new.kind = kind,
            None => {
                return Ok(Err(StoreError::Invalid {
                    what: format!("{value:?} is not a kind of learning"),
                    hint: "Use pattern, workaround, antipattern, best_practice or gotcha.",
                }));
            }
        },
    }
    if let Err(err) = new.check() {
        return Ok(Err(err));
    }
    tx.execute(
        "UPDATE learnings SET kind = ?2, description = ?3, details = ?4, keywords = ?5,
             updated_at = ?6
         WHERE id = ?1",
        params![
            id,
            new.kind.as_str(),
            new.description,
            new.details,
            words_json(&new.keywords),
            crate::now_ms()
        ],
    )?;
    let now = visible(&tx, path, id, project)?;
    tx.commit()?;
    Ok(now)
}

#[cfg(test)]
#[path = "learnings_tests.rs"]
mod tests;
