//! The schema, as numbered migrations applied in order, all missing ones in one transaction,
//! the version reached kept in `PRAGMA user_version`. A later table arrives as the next number
//! appended to [`MIGRATIONS`]; a migration that has shipped is never edited. This module does
//! not decide what to do with a database newer than [`LATEST`] (see `open`).

use rusqlite::{Connection, TransactionBehavior};

/// Every migration, in order: (version it brings the database to, SQL batch).
/// Versions start at 1 and increase by one.
pub(crate) const MIGRATIONS: &[(u32, &str)] = &[
    (1, V1_GRANTS_AND_AUDIT),
    (2, V2_SESSIONS),
    (3, V3_PENDING_PLANS),
    (4, V4_TASKS_AND_GOALS),
    (5, V5_TASK_PLANS),
    (6, V6_SESSION_MODES),
    (7, V7_SUBAGENT_SESSIONS),
    (8, V8_PINNED_MODEL),
    (9, V9_SWARMS),
    (10, V10_LEARNINGS),
    (11, V11_THREAD_VERSIONS),
];

/// The newest schema version this build knows.
pub const LATEST: u32 = latest(MIGRATIONS);

const fn latest(migrations: &[(u32, &str)]) -> u32 {
    match migrations.last() {
        Some((version, _)) => *version,
        None => 0,
    }
}

/// Grants remembered from "always allow" answers and config, and the log of every policy
/// decision. Session-scope grants live in the caller's memory and are never stored.
const V1_GRANTS_AND_AUDIT: &str = "
CREATE TABLE remembered_permissions (
    id           INTEGER PRIMARY KEY,
    rule         TEXT    NOT NULL,   -- e.g. 'bash(npm run test:*)', 'edit_file(src/**)'
    decision     TEXT    NOT NULL CHECK (decision IN ('allow', 'ask', 'deny')),
    scope        TEXT    NOT NULL CHECK (scope IN ('project', 'user')),
    project      TEXT,               -- canonical workspace path; NULL for user scope
    created_at   INTEGER NOT NULL,   -- unix ms
    last_used_at INTEGER,            -- unix ms
    uses         INTEGER NOT NULL DEFAULT 0,
    CHECK ((scope = 'project') = (project IS NOT NULL))
) STRICT;
CREATE INDEX remembered_permissions_scope_project
    ON remembered_permissions (scope, project);

CREATE TABLE audit_log (
    id         INTEGER PRIMARY KEY,
    at         INTEGER NOT NULL,     -- unix ms
    session_id TEXT,
    workspace  TEXT,
    tool       TEXT    NOT NULL,
    target     TEXT,                 -- the command or the path
    decision   TEXT    NOT NULL,     -- allow | ask | deny | queue
    outcome    TEXT,                 -- approved | refused | auto | ...
    decided_by TEXT    NOT NULL,     -- the rule text or the reason
    mode       TEXT
) STRICT;
CREATE INDEX audit_log_at ON audit_log (at);
";

/// Sessions and their conversations. A session's first thread has the session's id; the
/// threads table already carries the fork columns the thread tree needs (parent, fork
/// point), so branching adds rows, not a new schema. Messages are append-only and
/// ordered per thread by `seq`.
const V2_SESSIONS: &str = "
CREATE TABLE sessions (
    id             TEXT    PRIMARY KEY,
    workspace      TEXT    NOT NULL,   -- canonical workspace path
    created_at     INTEGER NOT NULL,   -- unix ms
    updated_at     INTEGER NOT NULL,   -- unix ms, last message
    title          TEXT,               -- the first prompt, shortened
    provider       TEXT,
    model          TEXT,
    parent_session TEXT,               -- set by a fork
    fork_point     INTEGER,            -- messages copied from the parent
    label          TEXT,
    current_thread TEXT                -- the thread a resume continues; NULL = the first
) STRICT;
CREATE INDEX sessions_workspace ON sessions (workspace, updated_at);

CREATE TABLE threads (
    id            TEXT    PRIMARY KEY,
    session_id    TEXT    NOT NULL REFERENCES sessions (id),
    parent_thread TEXT    REFERENCES threads (id),
    fork_seq      INTEGER,             -- last parent message shared with this thread
    label         TEXT,
    created_at    INTEGER NOT NULL
) STRICT;

CREATE TABLE messages (
    thread_id  TEXT    NOT NULL REFERENCES threads (id),
    seq        INTEGER NOT NULL,       -- 1, 2, 3 ... per thread
    body       TEXT    NOT NULL,       -- the message as JSON
    created_at INTEGER NOT NULL,
    PRIMARY KEY (thread_id, seq)
) STRICT;
";

/// Plan mode's pending plans: per session, the changes the model proposed instead of making
/// them, each with what became of it once the user decided. A change's `ord` is its 1-based
/// position in the plan (`/approve 2,4` names it). Rows go with their session or plan
/// (`ON DELETE CASCADE`; the connection enables foreign keys).
const V3_PENDING_PLANS: &str = "
CREATE TABLE pending_plans (
    id                  TEXT    PRIMARY KEY,
    session_id          TEXT    NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    task                TEXT    NOT NULL,   -- the prompt that started it
    exploration_summary TEXT    NOT NULL DEFAULT '',
    status              TEXT    NOT NULL
        CHECK (status IN ('pending', 'approved', 'rejected', 'partially_approved')),
    created_at          INTEGER NOT NULL,   -- unix ms
    updated_at          INTEGER NOT NULL    -- unix ms, last change to it
) STRICT;
CREATE INDEX pending_plans_session ON pending_plans (session_id, created_at);

CREATE TABLE proposed_changes (
    id           TEXT    PRIMARY KEY,
    plan_id      TEXT    NOT NULL REFERENCES pending_plans (id) ON DELETE CASCADE,
    ord          INTEGER NOT NULL,          -- 1, 2, 3 ... per plan
    tool         TEXT    NOT NULL,
    args         TEXT    NOT NULL,          -- the model's arguments as JSON
    reason       TEXT    NOT NULL DEFAULT '',
    proposed_at  INTEGER NOT NULL,          -- unix ms
    tool_call_id TEXT    NOT NULL,
    path         TEXT,                      -- the file it writes, for file tools
    base_hash    TEXT,                      -- the file as the change expects it; NULL for commands
    status       TEXT    NOT NULL
        CHECK (status IN ('pending', 'applied', 'failed', 'conflict', 'rejected')),
    result       TEXT,                      -- what happened when it was decided
    reported     INTEGER NOT NULL DEFAULT 0, -- 1 once the model was told the decision
    UNIQUE (plan_id, ord)
) STRICT;
";

/// Task decomposition and session objectives: per session, the tasks with their 1-based
/// numbers and the dependencies between them, and the goals with their token and time
/// accounting. A dependency row names two tasks of the same session (the store checks it on
/// write). Rows go with their session or task (`ON DELETE CASCADE`).
const V4_TASKS_AND_GOALS: &str = "
CREATE TABLE tasks (
    id         TEXT    PRIMARY KEY,
    session_id TEXT    NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    number     INTEGER NOT NULL CHECK (number >= 1),   -- 1, 2, 3 ... per session
    title      TEXT    NOT NULL,
    detail     TEXT    NOT NULL DEFAULT '',
    state      TEXT    NOT NULL CHECK (state IN
        ('pending', 'blocked', 'in_progress', 'completed', 'failed', 'skipped')),
    result     TEXT,                                    -- what came of it, once finished
    created_at INTEGER NOT NULL,                        -- unix ms
    updated_at INTEGER NOT NULL,                        -- unix ms, last change to it
    UNIQUE (session_id, number)
) STRICT;

CREATE TABLE task_deps (
    task_id    TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    depends_on TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    PRIMARY KEY (task_id, depends_on)
) STRICT;
CREATE INDEX task_deps_depends_on ON task_deps (depends_on);

CREATE TABLE goals (
    id           TEXT    PRIMARY KEY,
    session_id   TEXT    NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    objective    TEXT    NOT NULL,
    status       TEXT    NOT NULL CHECK (status IN
        ('active', 'paused', 'blocked', 'usage_limited', 'budget_limited', 'complete')),
    token_budget INTEGER CHECK (token_budget >= 0),     -- NULL: no limit
    tokens_used  INTEGER NOT NULL CHECK (tokens_used >= 0),
    time_used_ms INTEGER NOT NULL CHECK (time_used_ms >= 0),
    created_at   INTEGER NOT NULL,                      -- unix ms
    updated_at   INTEGER NOT NULL                       -- unix ms, last change to it
) STRICT;
CREATE INDEX goals_session ON goals (session_id, created_at);
";

/// The structured planner's task plans: per session, the newest plan as JSON (its steps,
/// dependencies and step outcomes change together, so they are kept as one document), with
/// its status outside the JSON for queries. Rows go with their session.
const V5_TASK_PLANS: &str = "
CREATE TABLE task_plans (
    id         TEXT    PRIMARY KEY,
    session_id TEXT    NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    status     TEXT    NOT NULL CHECK (status IN ('awaiting_confirmation', 'running',
        'completed', 'failed', 'cancelled', 'rejected')),
    plan       TEXT    NOT NULL,                        -- the TaskPlan as JSON
    created_at INTEGER NOT NULL,                        -- unix ms
    updated_at INTEGER NOT NULL                         -- unix ms, last change to it
) STRICT;
CREATE INDEX task_plans_session ON task_plans (session_id, updated_at);
";

/// The agent mode and permission mode a session last ran in, so a resume restores them
/// (NULL: not recorded, as for every session older than this step). The values are the front
/// ends' words (`plan`, `ask`, ...); the store does not check them.
const V6_SESSION_MODES: &str = "
ALTER TABLE sessions ADD COLUMN agent_mode TEXT;
ALTER TABLE sessions ADD COLUMN permission_mode TEXT;
";

/// The model a session's `/model` pinned (or `auto`), kept across a resume.
const V8_PINNED_MODEL: &str = "
ALTER TABLE sessions ADD COLUMN pinned_model TEXT;
";

/// A subagent is a session of its own, linked to the session that spawned it; "the latest
/// session" is never one of them.
const V7_SUBAGENT_SESSIONS: &str = "
ALTER TABLE sessions ADD COLUMN spawned_by TEXT;   -- the parent of a subagent
CREATE INDEX sessions_spawned_by ON sessions (spawned_by);
";

/// Swarm runs: per workspace, each run's whole state as JSON (its tasks, attempts and
/// totals change together, so they are kept as one document, saved after every change so a
/// run can be resumed), with its goal and status outside the JSON for listings. The store
/// does not read the JSON; the swarm's statuses are its own words, unchecked here.
const V9_SWARMS: &str = "
CREATE TABLE swarms (
    id         TEXT    PRIMARY KEY,
    workspace  TEXT    NOT NULL,   -- canonical workspace path
    goal       TEXT    NOT NULL,   -- what the user asked
    status     TEXT    NOT NULL,   -- planned | running | finished | interrupted | failed
    state      TEXT    NOT NULL,   -- the swarm's state as JSON
    created_at INTEGER NOT NULL,   -- unix ms
    updated_at INTEGER NOT NULL    -- unix ms, last save
) STRICT;
CREATE INDEX swarms_workspace ON swarms (workspace, updated_at);
";

/// Learnings: lessons kept across sessions, each with its lifecycle status, its scope (one
/// project, or every project of the user), who proposed it and how it has been used.
/// Keywords, actions and categories are JSON arrays of strings. `learnings_fts` indexes
/// the words recall searches (description, details, keywords, actions); triggers keep it
/// in step with the table, so status and count changes never touch the index.
/// A compacted conversation is a new version of its thread: it shares none of the old
/// thread's messages (no parent, so its history is its own) and names the thread it
/// replaces, whose messages stay as they were.
const V11_THREAD_VERSIONS: &str = "
ALTER TABLE threads ADD COLUMN replaces TEXT REFERENCES threads (id);
";

const V10_LEARNINGS: &str = "
CREATE TABLE learnings (
    id           INTEGER PRIMARY KEY,
    kind         TEXT    NOT NULL CHECK (kind IN
        ('pattern', 'workaround', 'antipattern', 'best_practice', 'gotcha')),
    status       TEXT    NOT NULL CHECK (status IN
        ('proposed', 'validated', 'rejected', 'archived')),
    scope        TEXT    NOT NULL CHECK (scope IN ('project', 'user')),
    project      TEXT,               -- canonical workspace path; NULL for user scope
    description  TEXT    NOT NULL,
    details      TEXT    NOT NULL DEFAULT '',
    keywords     TEXT    NOT NULL DEFAULT '[]',
    actions      TEXT    NOT NULL DEFAULT '[]',
    categories   TEXT    NOT NULL DEFAULT '[]',
    confidence   REAL    NOT NULL CHECK (confidence >= 0 AND confidence <= 1),
    source       TEXT    NOT NULL CHECK (source IN
        ('model', 'tool_failure', 'swarm', 'user', 'import')),
    source_ref   TEXT,               -- the tool, swarm task or file that proposed it
    session_id   TEXT,               -- the session it was proposed in
    created_at   INTEGER NOT NULL,   -- unix ms
    updated_at   INTEGER NOT NULL,   -- unix ms, last change to it
    last_used_at INTEGER,            -- unix ms, last recalled
    used         INTEGER NOT NULL DEFAULT 0 CHECK (used >= 0),
    helpful      INTEGER NOT NULL DEFAULT 0 CHECK (helpful >= 0),
    CHECK ((scope = 'project') = (project IS NOT NULL))
) STRICT;
CREATE INDEX learnings_status ON learnings (status, project);

CREATE VIRTUAL TABLE learnings_fts USING fts5(
    description, details, keywords, actions,
    content = 'learnings', content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER learnings_fts_insert AFTER INSERT ON learnings BEGIN
    INSERT INTO learnings_fts (rowid, description, details, keywords, actions)
        VALUES (new.id, new.description, new.details, new.keywords, new.actions);
END;
CREATE TRIGGER learnings_fts_delete AFTER DELETE ON learnings BEGIN
    INSERT INTO learnings_fts (learnings_fts, rowid, description, details, keywords, actions)
        VALUES ('delete', old.id, old.description, old.details, old.keywords, old.actions);
END;
CREATE TRIGGER learnings_fts_update
    AFTER UPDATE OF description, details, keywords, actions ON learnings BEGIN
    INSERT INTO learnings_fts (learnings_fts, rowid, description, details, keywords, actions)
        VALUES ('delete', old.id, old.description, old.details, old.keywords, old.actions);
    INSERT INTO learnings_fts (rowid, description, details, keywords, actions)
        VALUES (new.id, new.description, new.details, new.keywords, new.actions);
END;
";

/// The schema version recorded in the file (0 for a new or foreign database). Reading it is
/// the first read of the file, so a file that is not a database fails here.
pub(crate) fn schema_version(conn: &Connection) -> rusqlite::Result<i64> {
    conn.pragma_query_value(None, "user_version", |row| row.get(0))
}

/// Brings the database up to [`LATEST`] and returns the version it has afterwards (above
/// `LATEST` if a newer atto got there first; nothing is applied then). All missing steps run
/// in one IMMEDIATE transaction that re-reads the version once it holds the write lock: when
/// several processes open an old database at once, one migrates while the others wait on the
/// lock, then see the new version and apply nothing, and no process ever sees half a schema.
pub(crate) fn migrate(conn: &mut Connection) -> rusqlite::Result<i64> {
    let found = schema_version(conn)?;
    if found >= i64::from(LATEST) {
        return Ok(found);
    }
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let current = schema_version(&tx)?;
    if current >= i64::from(LATEST) {
        return Ok(current);
    }
    for &(version, sql) in MIGRATIONS {
        if i64::from(version) > current {
            tx.execute_batch(sql)?;
        }
    }
    tx.pragma_update(None, "user_version", LATEST)?;
    tx.commit()?;
    Ok(i64::from(LATEST))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_start_at_one_and_increase_by_one() {
        for (i, (version, _)) in MIGRATIONS.iter().enumerate() {
            assert_eq!(
                *version as usize,
                i + 1,
                "migration #{i} has version {version}"
            );
        }
        assert_eq!(LATEST as usize, MIGRATIONS.len());
    }

    #[test]
    fn each_step_applies_once_and_records_its_version() {
        let mut conn = Connection::open_in_memory().unwrap();
        migrate(&mut conn).unwrap();
        assert_eq!(schema_version(&conn).unwrap(), i64::from(LATEST));
        // A second run must not re-run CREATE TABLE (which would fail).
        migrate(&mut conn).unwrap();
        let mut stmt = conn
            .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")
            .unwrap();
        let tables: Vec<String> = stmt
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(
            tables,
            [
                "audit_log",
                "goals",
                "learnings",
                "learnings_fts",
                "learnings_fts_config",
                "learnings_fts_data",
                "learnings_fts_docsize",
                "learnings_fts_idx",
                "messages",
                "pending_plans",
                "proposed_changes",
                "remembered_permissions",
                "sessions",
                "swarms",
                "task_deps",
                "task_plans",
                "tasks",
                "threads"
            ]
        );
    }

    #[test]
    fn plan_and_change_statuses_are_checked_and_rows_go_with_their_session() {
        let mut conn = Connection::open_in_memory().unwrap();
        conn.pragma_update(None, "foreign_keys", "ON").unwrap();
        migrate(&mut conn).unwrap();
        conn.execute_batch(
            "INSERT INTO sessions (id, workspace, created_at, updated_at) VALUES ('s', '/w', 0, 0);
             INSERT INTO pending_plans (id, session_id, task, status, created_at, updated_at)
                 VALUES ('p', 's', 't', 'pending', 0, 0);",
        )
        .unwrap();
        let plan = |status: &str, session: &str| {
            conn.execute(
                "INSERT INTO pending_plans (id, session_id, task, status, created_at, updated_at) \
                 VALUES (?1 || ?2, ?2, 't', ?1, 0, 0)",
                rusqlite::params![status, session],
            )
        };
        assert!(plan("partially_approved", "s").is_ok());
        assert!(plan("done", "s").is_err(), "unknown plan status");
        assert!(plan("pending", "nobody").is_err(), "unknown session");
        let change = |ord: i64, status: &str| {
            conn.execute(
                "INSERT INTO proposed_changes \
                 (id, plan_id, ord, tool, args, proposed_at, tool_call_id, status) \
                 VALUES (?1 || ?2, 'p', ?1, 'bash', '{}', 0, 'c', ?2)",
                rusqlite::params![ord, status],
            )
        };
        assert!(change(1, "conflict").is_ok());
        assert!(
            change(1, "pending").is_err(),
            "a position is used once per plan"
        );
        assert!(change(2, "queued").is_err(), "unknown change status");
        conn.execute("DELETE FROM sessions WHERE id = 's'", [])
            .unwrap();
        let left: i64 = conn
            .query_row(
                "SELECT (SELECT count(*) FROM pending_plans) + \
                 (SELECT count(*) FROM proposed_changes)",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(left, 0);
    }

    #[test]
    fn task_and_goal_values_are_checked_and_rows_go_with_their_session() {
        let mut conn = Connection::open_in_memory().unwrap();
        conn.pragma_update(None, "foreign_keys", "ON").unwrap();
        migrate(&mut conn).unwrap();
        conn.execute_batch(
            "INSERT INTO sessions (id, workspace, created_at, updated_at) VALUES ('s', '/w', 0, 0);",
        )
        .unwrap();
        let task = |id: &str, number: i64, state: &str| {
            conn.execute(
                "INSERT INTO tasks (id, session_id, number, title, state, created_at, updated_at) \
                 VALUES (?1, 's', ?2, 't', ?3, 0, 0)",
                rusqlite::params![id, number, state],
            )
        };
        assert!(task("a", 1, "in_progress").is_ok());
        assert!(task("b", 2, "blocked").is_ok());
        assert!(
            task("c", 1, "pending").is_err(),
            "a number is used once per session"
        );
        assert!(task("d", 0, "pending").is_err(), "numbers start at 1");
        assert!(task("e", 3, "done").is_err(), "unknown task state");
        let dep = |task: &str, on: &str| {
            conn.execute(
                "INSERT INTO task_deps (task_id, depends_on) VALUES (?1, ?2)",
                rusqlite::params![task, on],
            )
        };
        assert!(dep("b", "a").is_ok());
        assert!(dep("b", "a").is_err(), "a dependency is recorded once");
        assert!(dep("b", "nobody").is_err(), "unknown task");
        let goal = |id: &str, status: &str, budget: Option<i64>, used: i64| {
            conn.execute(
                "INSERT INTO goals (id, session_id, objective, status, token_budget, \
                 tokens_used, time_used_ms, created_at, updated_at) \
                 VALUES (?1, 's', 'o', ?2, ?3, ?4, 0, 0, 0)",
                rusqlite::params![id, status, budget, used],
            )
        };
        assert!(goal("g1", "budget_limited", Some(10), 10).is_ok());
        assert!(goal("g2", "usage_limited", None, 0).is_ok());
        assert!(goal("g3", "done", None, 0).is_err(), "unknown goal status");
        assert!(
            goal("g4", "active", Some(-1), 0).is_err(),
            "negative budget"
        );
        assert!(goal("g5", "active", None, -1).is_err(), "negative usage");

        // Deleting a task takes the dependencies on it along.
        conn.execute("DELETE FROM tasks WHERE id = 'a'", [])
            .unwrap();
        let deps: i64 = conn
            .query_row("SELECT count(*) FROM task_deps", [], |r| r.get(0))
            .unwrap();
        assert_eq!(deps, 0);
        conn.execute("DELETE FROM sessions WHERE id = 's'", [])
            .unwrap();
        let left: i64 = conn
            .query_row(
                "SELECT (SELECT count(*) FROM tasks) + (SELECT count(*) FROM goals)",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(left, 0);
    }

    /// A file exactly as the previous release left it (every step but the last applied),
    /// holding a session, is upgraded in place: its rows stay and the new columns start
    /// empty, then work.
    #[test]
    fn a_database_one_version_old_is_upgraded_keeping_its_sessions() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("atto.db");
        let conn = Connection::open(&path).unwrap();
        for &(version, sql) in &MIGRATIONS[..MIGRATIONS.len() - 1] {
            conn.execute_batch(sql).unwrap();
            conn.pragma_update(None, "user_version", version).unwrap();
        }
        conn.execute_batch(
            "INSERT INTO sessions (id, workspace, created_at, updated_at, title, label) \
                 VALUES ('s-old', '/w', 5, 6, 'fix the build', 'first try');
             INSERT INTO threads (id, session_id, created_at) VALUES ('s-old', 's-old', 5);
             INSERT INTO messages (thread_id, seq, body, created_at)
                 VALUES ('s-old', 1, '{\"type\":\"user\",\"text\":\"hi\"}', 6);",
        )
        .unwrap();
        drop(conn);

        let store = crate::Store::open(&path).unwrap();
        let which = crate::SessionRef::Id("s-old".to_owned());
        let old = store.find_session_blocking("/w", &which).unwrap();
        assert_eq!(old.title.as_deref(), Some("fix the build"));
        assert_eq!(old.label.as_deref(), Some("first try"));
        assert_eq!((old.messages, old.answered), (1, false));
        assert_eq!((old.agent_mode, old.permission_mode), (None, None));
        store
            .set_session_modes_blocking("s-old", Some("plan"), Some("ask"))
            .unwrap();
        let now = store.find_session_blocking("/w", &which).unwrap();
        assert_eq!(now.agent_mode.as_deref(), Some("plan"));
        assert_eq!(now.permission_mode.as_deref(), Some("ask"));
        drop(store);
        let conn = Connection::open(&path).unwrap();
        assert_eq!(schema_version(&conn).unwrap(), i64::from(LATEST));
    }

    #[test]
    fn grant_scope_and_project_must_agree() {
        let mut conn = Connection::open_in_memory().unwrap();
        migrate(&mut conn).unwrap();
        let insert = |scope: &str, project: Option<&str>| {
            conn.execute(
                "INSERT INTO remembered_permissions (rule, decision, scope, project, created_at) \
                 VALUES ('x', 'allow', ?1, ?2, 0)",
                rusqlite::params![scope, project],
            )
        };
        assert!(insert("user", None).is_ok());
        assert!(insert("project", Some("/w")).is_ok());
        assert!(insert("user", Some("/w")).is_err());
        assert!(insert("project", None).is_err());
        assert!(insert("session", None).is_err());
    }
}
