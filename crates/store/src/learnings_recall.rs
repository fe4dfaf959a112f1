//! Recalling learnings for a prompt (the seed's retrieval pipeline): FTS5 over description,
//! details, keywords and actions; a LIKE search when FTS finds nothing; category and action
//! filters; one row per learning; most confident first. Only VALIDATED learnings this
//! workspace sees are recalled. A workspace with none costs one indexed existence check.
//!
//! User text never reaches FTS5's query syntax: it is cut into words of letters and digits,
//! each quoted as a phrase, so quotes, `NEAR`, `*`, `-`, `:` or unbalanced parentheses in a
//! prompt are just words (or nothing) and a query can never fail to parse. How recalled
//! learnings read in a request is atto-core's business.

use std::collections::HashSet;
use std::path::Path;

use atto_protocol::Learning;
use rusqlite::{Connection, params, params_from_iter};

use crate::learnings::{COLUMNS, row};
use crate::{Store, StoreError};

/// Words of a prompt searched, at most: the longest ones, which tell the most. More words
/// match more learnings, and ranking every match is what recall spends its time on.
const MAX_TERMS: usize = 8;
/// Words tried by the LIKE search, at most: the longest ones, of at least
/// [`MIN_LIKE_TERM`] characters (shorter ones are inside too many words to tell anything).
const MAX_LIKE_TERMS: usize = 4;
const MIN_LIKE_TERM: usize = 4;
/// Candidates taken from a search before they are sorted by confidence, per learning asked.
const POOL_PER_RESULT: usize = 4;

/// Words too common to tell learnings apart.
const STOPWORDS: &[&str] = &[
    "a", "about", "after", "all", "also", "an", "and", "any", "are", "as", "at", "be", "been",
    "but", "by", "can", "could", "did", "do", "does", "for", "from", "get", "had", "has", "have",
    "how", "i", "if", "in", "into", "is", "it", "its", "let", "me", "my", "no", "not", "of", "on",
    "or", "our", "please", "should", "so", "some", "than", "that", "the", "their", "them", "then",
    "there", "these", "this", "those", "to", "up", "us", "was", "we", "were", "what", "when",
    "where", "which", "while", "who", "why", "will", "with", "would", "you", "your",
];

/// What to recall learnings for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LearningQuery {
    /// The prompt (any text; never parsed as FTS5 syntax).
    pub text: String,
    /// The canonical workspace: its learnings and the user's are searched.
    pub project: String,
    /// Only learnings in one of these categories; empty: any.
    pub categories: Vec<String>,
    /// Only learnings concerning one of these actions; empty: any.
    pub actions: Vec<String>,
    /// Learnings returned, at most.
    pub limit: usize,
}

impl Store {
    /// The validated learnings most relevant to `query`, most confident first (see the
    /// module docs).
    pub async fn recall_learnings(
        &self,
        query: LearningQuery,
    ) -> Result<Vec<Learning>, StoreError> {
        let path = self.path().to_path_buf();
        self.call(move |conn| recall(conn, &path, &query)).await?
    }

    /// [`Store::recall_learnings`], for code without an async runtime (benchmarks, tools).
    pub fn recall_learnings_blocking(
        &self,
        query: LearningQuery,
    ) -> Result<Vec<Learning>, StoreError> {
        let path = self.path().to_path_buf();
        self.call_blocking(move |conn| recall(conn, &path, &query))?
    }

    /// Counts one more use (recall into a request) of each of `ids`.
    pub async fn note_learnings_used(&self, ids: Vec<i64>) -> Result<(), StoreError> {
        let ids = serde_json::to_string(&ids).unwrap_or_else(|_| "[]".to_owned());
        self.call(move |conn| {
            conn.prepare_cached(
                "UPDATE learnings SET used = used + 1, last_used_at = ?2
                 WHERE id IN (SELECT CAST(value AS INTEGER) FROM json_each(?1))",
            )?
            .execute(params![ids, crate::now_ms()])
            .map(|_| ())
        })
        .await
    }
}

/// The words of `text` worth searching: runs of letters and digits, lower-cased, without
/// stopwords and one-letter words, each once; the [`MAX_TERMS`] longest of them, in the
/// order they came.
pub fn search_terms(text: &str) -> Vec<String> {
    let mut seen = HashSet::new();
    let mut words: Vec<(usize, String)> = text
        .split(|c: char| !c.is_alphanumeric())
        .map(str::to_lowercase)
        .filter(|w| w.chars().count() > 1 && !STOPWORDS.contains(&w.as_str()))
        .filter(|w| seen.insert(w.clone()))
        .enumerate()
        .collect();
    if words.len() > MAX_TERMS {
        // Longest first (earlier first among equals), then back in text order.
        words.sort_by_key(|(i, w)| (std::cmp::Reverse(w.chars().count()), *i));
        words.truncate(MAX_TERMS);
        words.sort_by_key(|(i, _)| *i);
    }
    words.into_iter().map(|(_, w)| w).collect()
}

/// An FTS5 query matching any of `terms`, each quoted as a phrase. `terms` hold letters
/// and digits only (see [`search_terms`]), so nothing in them is FTS5 syntax.
fn fts_query(terms: &[String]) -> String {
    terms
        .iter()
        .map(|t| format!("\"{t}\""))
        .collect::<Vec<_>>()
        .join(" OR ")
}

/// Conditions every recalled learning meets: validated, seen by the workspace (`?1`),
/// in a category of `?2` and concerning an action of `?3` (JSON arrays; `[]`: any).
const SCOPE_AND_FILTERS: &str = "l.status = 'validated' AND (l.project IS NULL OR l.project = ?1)
     AND (?2 = '[]' OR EXISTS (SELECT 1 FROM json_each(l.categories) c, json_each(?2) w
                                WHERE lower(c.value) = lower(w.value)))
     AND (?3 = '[]' OR EXISTS (SELECT 1 FROM json_each(l.actions) a, json_each(?3) w
                                WHERE lower(a.value) = lower(w.value)))";

fn recall(
    conn: &Connection,
    path: &Path,
    q: &LearningQuery,
) -> rusqlite::Result<Result<Vec<Learning>, StoreError>> {
    if q.limit == 0 || !any_validated(conn, &q.project)? {
        return Ok(Ok(Vec::new()));
    }
    let categories = serde_json::to_string(&q.categories).unwrap_or_else(|_| "[]".to_owned());
    let actions = serde_json::to_string(&q.actions).unwrap_or_else(|_| "[]".to_owned());
    let pool = i64::try_from(q.limit.saturating_mul(POOL_PER_RESULT)).unwrap_or(i64::MAX);
    let terms = search_terms(&q.text);
    // Candidates as (id, confidence) only: ranking sorts every match, and whole rows would
    // make it copy every match's text.
    let mut found: Vec<(i64, f64)> = if !terms.is_empty() {
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT l.id, l.confidence FROM learnings_fts
                 JOIN learnings l ON l.id = learnings_fts.rowid
             WHERE learnings_fts MATCH ?4 AND {SCOPE_AND_FILTERS}
             ORDER BY learnings_fts.rank LIMIT ?5"
        ))?;
        let rows = stmt.query_map(
            params![q.project, categories, actions, fts_query(&terms), pool],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        let found = rows.collect::<rusqlite::Result<Vec<_>>>()?;
        if found.is_empty() {
            like_search(conn, q, &terms, (&categories, &actions), pool)?
        } else {
            found
        }
    } else if q.categories.is_empty() && q.actions.is_empty() {
        return Ok(Ok(Vec::new()));
    } else {
        // No words to search: the filters alone pick.
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT l.id, l.confidence FROM learnings l WHERE {SCOPE_AND_FILTERS}
             ORDER BY l.confidence DESC, l.id LIMIT ?4"
        ))?;
        let rows = stmt.query_map(params![q.project, categories, actions, pool], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })?;
        rows.collect::<rusqlite::Result<Vec<_>>>()?
    };
    let mut seen = HashSet::new();
    found.retain(|(id, _)| seen.insert(*id));
    // Stable: among equally confident learnings, the better match stays first.
    found.sort_by(|a, b| b.1.total_cmp(&a.1));
    found.truncate(q.limit);
    load(conn, path, &found)
}

/// The whole learnings of `picked`, in its order.
fn load(
    conn: &Connection,
    path: &Path,
    picked: &[(i64, f64)],
) -> rusqlite::Result<Result<Vec<Learning>, StoreError>> {
    let ids: Vec<i64> = picked.iter().map(|(id, _)| *id).collect();
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM learnings l
         WHERE l.id IN (SELECT CAST(value AS INTEGER) FROM json_each(?1))"
    ))?;
    let json = serde_json::to_string(&ids).unwrap_or_else(|_| "[]".to_owned());
    let mut rows = Vec::with_capacity(ids.len());
    for learning in stmt.query_map(params![json], |r| row(r, path))? {
        match learning? {
            Ok(learning) => rows.push(learning),
            Err(err) => return Ok(Err(err)),
        }
    }
    rows.sort_by_key(|l| ids.iter().position(|id| *id == l.id));
    Ok(Ok(rows))
}

/// Whether the workspace sees any validated learning: the cheap check that keeps recall
/// free for a store with none.
fn any_validated(conn: &Connection, project: &str) -> rusqlite::Result<bool> {
    conn.prepare_cached(
        "SELECT EXISTS (SELECT 1 FROM learnings WHERE status = 'validated' AND project IS NULL)
             OR EXISTS (SELECT 1 FROM learnings WHERE status = 'validated' AND project = ?1)",
    )?
    .query_row(params![project], |r| r.get(0))
}

/// The fallback when FTS finds nothing: learnings whose words contain one of the longest
/// terms anywhere (`auth` finds `authentication`), most confident first.
fn like_search(
    conn: &Connection,
    q: &LearningQuery,
    terms: &[String],
    (categories, actions): (&str, &str),
    pool: i64,
) -> rusqlite::Result<Vec<(i64, f64)>> {
    let mut longest: Vec<&String> = terms
        .iter()
        .filter(|t| t.chars().count() >= MIN_LIKE_TERM)
        .collect();
    longest.sort_by_key(|t| std::cmp::Reverse(t.chars().count()));
    longest.truncate(MAX_LIKE_TERMS);
    if longest.is_empty() {
        return Ok(Vec::new());
    }
    // Terms are letters and digits only, so none holds a LIKE wildcard to escape.
    let any = (0..longest.len())
        .map(|i| {
            let p = i + 5;
            format!(
                "l.description LIKE ?{p} OR l.details LIKE ?{p} OR l.keywords LIKE ?{p} \
                 OR l.actions LIKE ?{p}"
            )
        })
        .collect::<Vec<_>>()
        .join(" OR ");
    let sql = format!(
        "SELECT l.id, l.confidence FROM learnings l WHERE {SCOPE_AND_FILTERS} AND ({any})
         ORDER BY l.confidence DESC, l.id LIMIT ?4"
    );
    let mut values: Vec<rusqlite::types::Value> = vec![
        q.project.clone().into(),
        categories.to_owned().into(),
        actions.to_owned().into(),
        pool.into(),
    ];
    values.extend(longest.iter().map(|t| format!("%{t}%").into()));
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(params_from_iter(values), |r| Ok((r.get(0)?, r.get(1)?)))?;
    rows.collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_are_plain_words_whatever_the_text() {
        assert_eq!(
            search_terms("Fix the \"auth\" NEAR(middleware, 3) * -x: (unbalanced"),
            ["fix", "auth", "near", "middleware", "unbalanced"]
        );
        assert_eq!(search_terms("the a of"), Vec::<String>::new());
        assert_eq!(search_terms("données ÉTÉ"), ["données", "été"]);
        let many = (0..40)
            .map(|i| format!("w{i}"))
            .collect::<Vec<_>>()
            .join(" ");
        assert_eq!(search_terms(&many).len(), MAX_TERMS);
        assert_eq!(
            fts_query(&["near".to_owned(), "or".to_owned()]),
            "\"near\" OR \"or\""
        );
    }
}
