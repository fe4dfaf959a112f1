//! Bringing learnings in: storing a batch (an export shared by a team, or Attocode's
//! learnings) in one transaction, skipping the ones already stored, and reading Attocode's
//! learnings database.
//!
//! Attocode kept its learnings in SQLite under the project (`.attocode/`), in a table
//! `learnings` with `type`, `status`, `description`, `details`, JSON lists `categories`,
//! `actions` and `keywords`, `confidence`, `apply_count`, `help_count`, `user_notes` and
//! `created_at` in seconds. Columns are matched by name, with the usual other spellings
//! (`kind`, `uses`, `helpful`, times in milliseconds, comma-separated lists), so an older
//! or newer Attocode file imports too; a value atto does not know becomes the default
//! (`pattern`, `proposed`, confidence 0.5) rather than stopping the import. The file is
//! opened read-only and never changed.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use atto_protocol::{LearningKind, LearningScope, LearningSource, LearningStatus};
use rusqlite::types::Value;
use rusqlite::{Connection, OpenFlags, TransactionBehavior};

use crate::learnings::{
    LearningLimits, MAX_DESCRIPTION, MAX_DETAILS, MAX_WORD, MAX_WORDS, NewLearning, duplicate_of,
    evict, insert,
};
use crate::{Store, StoreError};

/// One learning to import, with the status and counts it had where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportedLearning {
    /// The learning (its `source` is set to `import` when stored).
    pub new: NewLearning,
    /// Its status where it came from.
    pub status: LearningStatus,
    /// When it was first proposed (Unix ms), if known.
    pub created_at: Option<i64>,
    /// Times it was recalled.
    pub used: u64,
    /// Times it was marked helpful.
    pub helpful: u64,
}

/// What an import did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ImportReport {
    /// Learnings stored.
    pub imported: usize,
    /// Learnings skipped: the same description was stored already for their scope.
    pub duplicates: usize,
    /// Learnings evicted to stay within the cap.
    pub evicted: usize,
}

impl Store {
    /// Stores `items` in one transaction: each cut to the store's sizes, its status and
    /// counts kept, its source set to `import`; one whose description is stored already
    /// for its scope is skipped. The cap applies afterwards, sparing what was imported.
    pub fn import_learnings_blocking(
        &self,
        items: Vec<ImportedLearning>,
        limits: LearningLimits,
    ) -> Result<ImportReport, StoreError> {
        let mut items: Vec<ImportedLearning> = items.into_iter().map(bounded).collect();
        for item in &mut items {
            item.new.source = LearningSource::Import;
            item.new.check()?;
        }
        self.call_blocking(move |conn| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let mut report = ImportReport::default();
            let mut kept = Vec::new();
            for item in &items {
                if duplicate_of(&tx, &item.new)?.is_some() {
                    report.duplicates += 1;
                    continue;
                }
                let created = item.created_at.unwrap_or_else(crate::now_ms);
                kept.push(insert(
                    &tx,
                    &item.new,
                    item.status,
                    created,
                    (item.used, item.helpful),
                )?);
                report.imported += 1;
            }
            report.evicted = evict(&tx, limits.max_learnings, &kept)?;
            tx.commit()?;
            Ok(report)
        })
    }
}

/// Cuts an imported learning to what the store keeps (a long description moves into the
/// details), and clamps its confidence.
fn bounded(mut item: ImportedLearning) -> ImportedLearning {
    let n = &mut item.new;
    n.description = n.description.trim().to_owned();
    if n.description.chars().count() > MAX_DESCRIPTION {
        let head: String = n.description.chars().take(MAX_DESCRIPTION - 1).collect();
        n.details = format!("{}\n{}", n.description, n.details);
        n.description = format!("{head}…");
    }
    if n.details.chars().count() > MAX_DETAILS {
        n.details = n.details.chars().take(MAX_DETAILS - 1).collect::<String>() + "…";
    }
    for list in [&mut n.keywords, &mut n.actions, &mut n.categories] {
        list.retain(|w| !w.trim().is_empty());
        list.truncate(MAX_WORDS);
        for w in list.iter_mut() {
            *w = w.trim().chars().take(MAX_WORD).collect();
        }
    }
    n.confidence = if n.confidence.is_finite() {
        n.confidence.clamp(0.0, 1.0)
    } else {
        0.5
    };
    item
}

/// The SQLite files directly in `workspace/.attocode/` that hold a `learnings` table,
/// `learnings.db` first.
pub fn attocode_learning_dbs(workspace: &Path) -> Vec<PathBuf> {
    let dir = workspace.join(".attocode");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_file() && is_sqlite(p) && has_learnings_table(p))
        .collect();
    found.sort_by_key(|p| (p.file_name() != Some("learnings.db".as_ref()), p.clone()));
    found
}

/// Whether the file starts with SQLite's header.
pub fn is_sqlite(path: &Path) -> bool {
    use std::io::Read as _;
    let mut head = [0u8; 16];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok_and(|()| &head == b"SQLite format 3\0")
}

fn open_read_only(path: &Path) -> Result<Connection, StoreError> {
    Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| StoreError::from_sqlite(path, e))
}

fn has_learnings_table(path: &Path) -> bool {
    open_read_only(path).is_ok_and(|conn| {
        conn.query_row(
            "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'learnings'",
            [],
            |_| Ok(()),
        )
        .is_ok()
    })
}

/// Reads every learning of an Attocode learnings database (see the module docs), as
/// learnings of `project` (its workspace). Rows without a description are left out.
pub fn read_attocode_learnings(
    path: &Path,
    project: &str,
) -> Result<Vec<ImportedLearning>, StoreError> {
    let conn = open_read_only(path)?;
    let sqlite = |e| StoreError::from_sqlite(path, e);
    let names: Vec<String> = {
        let mut stmt = conn
            .prepare("SELECT name FROM pragma_table_info('learnings')")
            .map_err(sqlite)?;
        let rows = stmt.query_map([], |r| r.get(0)).map_err(sqlite)?;
        rows.collect::<Result<_, _>>().map_err(sqlite)?
    };
    if names.is_empty() {
        return Err(StoreError::NotFound(format!(
            "{} has no learnings table, so it is not an Attocode learnings database; nothing \
             was imported.",
            path.display()
        )));
    }
    let mut stmt = conn.prepare("SELECT * FROM learnings").map_err(sqlite)?;
    let rows = stmt
        .query_map([], |r| {
            let mut values = HashMap::new();
            for (i, name) in names.iter().enumerate() {
                values.insert(name.to_ascii_lowercase(), r.get::<_, Value>(i)?);
            }
            Ok(values)
        })
        .map_err(sqlite)?;
    let file = path.display().to_string();
    let mut out = Vec::new();
    for values in rows {
        let values = values.map_err(sqlite)?;
        if let Some(item) = attocode_row(&Columns(values), project, &file) {
            out.push(item);
        }
    }
    Ok(out)
}

/// One row of a foreign table, by lower-cased column name.
struct Columns(HashMap<String, Value>);

impl Columns {
    /// The first of `names` present and not NULL.
    fn get(&self, names: &[&str]) -> Option<&Value> {
        names
            .iter()
            .find_map(|n| self.0.get(*n).filter(|v| !matches!(v, Value::Null)))
    }

    fn text(&self, names: &[&str]) -> Option<String> {
        match self.get(names)? {
            Value::Text(t) => Some(t.clone()),
            Value::Integer(i) => Some(i.to_string()),
            Value::Real(r) => Some(r.to_string()),
            Value::Blob(b) => Some(String::from_utf8_lossy(b).into_owned()),
            Value::Null => None,
        }
    }

    fn number(&self, names: &[&str]) -> Option<f64> {
        match self.get(names)? {
            Value::Integer(i) => Some(*i as f64),
            Value::Real(r) => Some(*r),
            Value::Text(t) => t.trim().parse().ok(),
            Value::Null | Value::Blob(_) => None,
        }
    }

    /// A JSON list of strings, or comma-separated words.
    fn words(&self, names: &[&str]) -> Vec<String> {
        let Some(text) = self.text(names) else {
            return Vec::new();
        };
        match serde_json::from_str::<Vec<serde_json::Value>>(&text) {
            Ok(items) => items
                .into_iter()
                .filter_map(|v| match v {
                    serde_json::Value::String(s) => Some(s),
                    serde_json::Value::Null => None,
                    other => Some(other.to_string()),
                })
                .collect(),
            Err(_) => text
                .split(',')
                .map(|w| w.trim().to_owned())
                .filter(|w| !w.is_empty())
                .collect(),
        }
    }
}

/// A learning from one Attocode row; `None` when it has no description.
fn attocode_row(c: &Columns, project: &str, file: &str) -> Option<ImportedLearning> {
    let description = c
        .text(&["description", "text", "learning", "content", "title"])
        .filter(|d| !d.trim().is_empty())?;
    let mut details = c.text(&["details", "detail", "body"]).unwrap_or_default();
    if let Some(notes) = c
        .text(&["user_notes", "notes"])
        .filter(|n| !n.trim().is_empty())
    {
        details = format!("{details}\nUser notes: {notes}").trim().to_owned();
    }
    let kind = c
        .text(&["type", "kind", "learning_type", "category_type"])
        .and_then(|k| LearningKind::parse(&k))
        .unwrap_or(LearningKind::Pattern);
    let status = c
        .text(&["status", "state"])
        .and_then(|s| LearningStatus::parse(&s))
        .unwrap_or(LearningStatus::Proposed);
    let count = |names: &[&str]| {
        c.number(names)
            .filter(|n| n.is_finite() && *n > 0.0)
            .map_or(0, |n| n as u64)
    };
    let created_at = c
        .number(&["created_at", "created", "timestamp"])
        .filter(|t| t.is_finite() && *t > 0.0)
        // Seconds (Attocode's `time.time()`) or milliseconds.
        .map(|t| if t < 1e11 { t * 1000.0 } else { t } as i64);
    let id = c.text(&["id"]).unwrap_or_default();
    Some(ImportedLearning {
        new: NewLearning {
            kind,
            description,
            details,
            keywords: c.words(&["keywords", "tags"]),
            actions: c.words(&["actions", "tools"]),
            categories: c.words(&["categories", "category"]),
            confidence: c.number(&["confidence", "score"]).unwrap_or(0.5),
            scope: LearningScope::Project,
            project: project.to_owned(),
            source: LearningSource::Import,
            source_ref: Some(format!("attocode {file} {id}").trim().to_owned()),
            session_id: None,
        },
        status,
        created_at,
        used: count(&["apply_count", "used", "uses", "use_count", "used_count"]),
        helpful: count(&["help_count", "helpful", "helpful_count"]),
    })
}
