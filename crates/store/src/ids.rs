//! Short forms of stored ids, the way git abbreviates commits: the shortest prefix, 8
//! characters at least, that no other id of the same kind shares; and resolving a prefix
//! back to the one id it names, or saying which ids it could mean. Session and plan ids are
//! UUIDv7, whose first 8 characters are the same for everything made within about a minute,
//! so a fixed 8-character form is not enough. Both directions read only the id's neighbours
//! in the primary-key index, never every id. A short form is unique when it is computed; a
//! later id may come to share it, as with git.

use rusqlite::{Connection, OptionalExtension, params};

use crate::{Store, StoreError};

/// The fewest characters a short id has (fewer only if the id itself is shorter).
pub const SHORT_ID_MIN: usize = 8;

/// How many candidates an ambiguous prefix lists.
const CANDIDATES: usize = 5;

/// Which ids a short form must be unique among.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IdKind {
    /// Sessions (`atto -r ID`, `atto sessions`).
    Session,
    /// Plan mode's pending plans.
    Plan,
    /// The planner's task plans.
    TaskPlan,
    /// Swarm runs (`atto swarm status ID`, `--resume ID`).
    Swarm,
}

impl IdKind {
    fn table(self) -> &'static str {
        match self {
            IdKind::Session => "sessions",
            IdKind::Plan => "pending_plans",
            IdKind::TaskPlan => "task_plans",
            IdKind::Swarm => "swarms",
        }
    }

    /// The word for one of them in messages.
    fn noun(self) -> &'static str {
        match self {
            IdKind::Session => "session",
            IdKind::Plan => "plan",
            IdKind::TaskPlan => "task plan",
            IdKind::Swarm => "swarm",
        }
    }

    /// Where the user finds the ids, for a message about one not found.
    fn listing(self) -> &'static str {
        match self {
            IdKind::Session | IdKind::Plan | IdKind::TaskPlan => {
                "`atto sessions` lists sessions with their ids"
            }
            IdKind::Swarm => "a swarm's id is shown when it starts and in its report",
        }
    }
}

/// The shortest prefix of `id`, [`SHORT_ID_MIN`] characters at least, that none of `others`
/// starts with (an equal id among `others` is ignored). A prefix never ends on a `-`: one more
/// character is shown instead, so it reads as part of the id.
pub fn short_form<'a, 'b>(id: &'a str, others: impl IntoIterator<Item = &'b str>) -> &'a str {
    let shared = others
        .into_iter()
        .filter(|other| *other != id)
        .map(|other| common_prefix_chars(id, other))
        .max()
        .unwrap_or(0);
    let mut chars = shared.saturating_add(1).max(SHORT_ID_MIN);
    let total = id.chars().count();
    while chars < total && id.chars().nth(chars - 1) == Some('-') {
        chars += 1;
    }
    match id.char_indices().nth(chars) {
        Some((end, _)) => &id[..end],
        None => id,
    }
}

fn common_prefix_chars(a: &str, b: &str) -> usize {
    a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count()
}

impl Store {
    /// The short form of `id` among the stored ids of `kind` (see [`short_form`]). The id
    /// need not be stored itself.
    pub async fn short_id(&self, kind: IdKind, id: &str) -> Result<String, StoreError> {
        let id = id.to_owned();
        self.call(move |conn| short_id(conn, kind, &id)).await
    }

    /// [`Store::short_id`] for code without an async runtime.
    pub fn short_id_blocking(&self, kind: IdKind, id: &str) -> Result<String, StoreError> {
        let id = id.to_owned();
        self.call_blocking(move |conn| short_id(conn, kind, &id))
    }

    /// The short forms of several ids of `kind`, in the same order, in one request.
    pub fn short_ids_blocking(
        &self,
        kind: IdKind,
        ids: &[String],
    ) -> Result<Vec<String>, StoreError> {
        let ids = ids.to_vec();
        self.call_blocking(move |conn| ids.iter().map(|id| short_id(conn, kind, id)).collect())
    }

    /// The one stored id of `kind` that starts with `prefix` (a full id names itself).
    /// Fails with [`StoreError::NotFound`] when none does, or when several do; the message
    /// then lists them by their short forms.
    pub fn resolve_id_blocking(&self, kind: IdKind, prefix: &str) -> Result<String, StoreError> {
        let prefix = prefix.to_owned();
        self.call_blocking(move |conn| resolve(conn, kind, &prefix, |_| None))?
    }
}

/// The short form of `id` among the ids of `kind`: only its two neighbours in id order can
/// share the longest prefix with it.
pub(crate) fn short_id(conn: &Connection, kind: IdKind, id: &str) -> rusqlite::Result<String> {
    let table = kind.table();
    let before: Option<String> = conn
        .prepare_cached(&format!(
            "SELECT id FROM {table} WHERE id < ?1 ORDER BY id DESC LIMIT 1"
        ))?
        .query_row(params![id], |r| r.get(0))
        .optional()?;
    let after: Option<String> = conn
        .prepare_cached(&format!(
            "SELECT id FROM {table} WHERE id > ?1 ORDER BY id LIMIT 1"
        ))?
        .query_row(params![id], |r| r.get(0))
        .optional()?;
    Ok(short_form(id, before.iter().chain(after.iter()).map(String::as_str)).to_owned())
}

/// Up to `limit` stored ids of `kind` that start with `prefix`, in id order: they follow
/// each other in the index from the first id not below the prefix.
fn starting_with(
    conn: &Connection,
    kind: IdKind,
    prefix: &str,
    limit: usize,
) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT id FROM {} WHERE id >= ?1 ORDER BY id LIMIT ?2",
        kind.table()
    ))?;
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let ids = stmt
        .query_map(params![prefix, limit], |r| r.get::<_, String>(0))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(ids
        .into_iter()
        .take_while(|id| id.starts_with(prefix))
        .collect())
}

/// The one id of `kind` that `prefix` names, or why not. Ids are matched as typed, then in
/// lower case (ids atto makes are lower case). `describe` adds a few words to a candidate
/// in the ambiguity message (a session's title, say).
pub(crate) fn resolve(
    conn: &Connection,
    kind: IdKind,
    prefix: &str,
    describe: impl Fn(&str) -> Option<String>,
) -> rusqlite::Result<Result<String, StoreError>> {
    let noun = kind.noun();
    let typed = prefix.trim();
    if typed.is_empty() {
        return Ok(Err(StoreError::NotFound(format!(
            "no {noun} id given; {}",
            kind.listing()
        ))));
    }
    let mut found = starting_with(conn, kind, typed, CANDIDATES + 1)?;
    if found.is_empty() && typed.to_lowercase() != typed {
        found = starting_with(conn, kind, &typed.to_lowercase(), CANDIDATES + 1)?;
    }
    if let Some(exact) = found.iter().find(|id| id.as_str() == typed) {
        return Ok(Ok(exact.clone()));
    }
    match found.as_slice() {
        [] => Ok(Err(StoreError::NotFound(format!(
            "no {noun} matches '{typed}'; {}",
            kind.listing()
        )))),
        [only] => Ok(Ok(only.clone())),
        many => {
            let mut listed = Vec::new();
            for id in many.iter().take(CANDIDATES) {
                let short = short_id(conn, kind, id)?;
                listed.push(match describe(id) {
                    Some(words) => format!("{short} ({words})"),
                    None => short,
                });
            }
            let more = if many.len() > CANDIDATES {
                ", and more"
            } else {
                ""
            };
            Ok(Err(StoreError::NotFound(format!(
                "'{typed}' matches more than one {noun}: {}{more}; nothing was opened. Give \
                 more of the id, e.g. one of those shown.",
                listed.join(", ")
            ))))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_forms_are_eight_characters_or_just_enough_more() {
        let a = "01a20d37-5e1f-7aaa-8000-000000000001";
        let b = "01a20d37-5e2a-7bbb-8000-000000000002";
        let c = "9f000000-0000-7000-8000-000000000003";
        let cases: &[(&str, &[&str], &str)] = &[
            (a, &[], "01a20d37"),
            (a, &[c], "01a20d37"),
            (a, &[a], "01a20d37"),
            (a, &[b, c], "01a20d37-5e1"),
            (b, &[a], "01a20d37-5e2"),
            // Eight characters would end the form on '-': one more is shown.
            ("0123456-89", &[], "0123456-8"),
            ("01a20d37-x", &["01a20d37-y"], "01a20d37-x"),
            ("01a20d37", &["01a20d37-y"], "01a20d37"),
            ("abc", &["abd"], "abc"),
            ("ééééééééé1", &["ééééééééé2"], "ééééééééé1"),
        ];
        for (id, others, want) in cases {
            assert_eq!(short_form(id, others.iter().copied()), *want, "{id}");
        }
    }
}
