// Tests may unwrap: a failed unwrap is a failed test, with its location.
#![allow(clippy::unwrap_used, clippy::expect_used)]

//! Learnings through the public handle: proposing (auto-validation, duplicates), the
//! lifecycle, helpfulness, recall (FTS5, the LIKE fallback, filters, what is never
//! recalled, query syntax in user text), eviction in the seed's order, and importing
//! Attocode's database.

use atto_protocol::{LearningKind, LearningScope, LearningSource, LearningStatus};
use atto_store::{LearningFilter, LearningLimits, LearningQuery, NewLearning, Store, StoreError};

const HERE: &str = "/w/here";
const THERE: &str = "/w/there";

fn open() -> (tempfile::TempDir, Store) {
    let tmp = tempfile::tempdir().unwrap();
    let store = Store::open(&tmp.path().join("atto.db")).unwrap();
    (tmp, store)
}

fn new(description: &str, confidence: f64) -> NewLearning {
    NewLearning {
        kind: LearningKind::Workaround,
        description: description.to_owned(),
        details: String::new(),
        keywords: Vec::new(),
        actions: Vec::new(),
        categories: Vec::new(),
        confidence,
        scope: LearningScope::Project,
        project: HERE.to_owned(),
        // atto's own observation: the source whose confidence may validate it.
        source: LearningSource::ToolFailure,
        source_ref: None,
        session_id: Some("s-1".to_owned()),
    }
}

async fn add(store: &Store, n: NewLearning) -> i64 {
    store
        .propose_learning(n, LearningLimits::default())
        .await
        .unwrap()
        .learning
        .id
}

fn query(text: &str) -> LearningQuery {
    LearningQuery {
        text: text.to_owned(),
        project: HERE.to_owned(),
        categories: Vec::new(),
        actions: Vec::new(),
        limit: 5,
    }
}

async fn recalled(store: &Store, q: LearningQuery) -> Vec<i64> {
    store
        .recall_learnings(q)
        .await
        .unwrap()
        .into_iter()
        .map(|l| l.id)
        .collect()
}

#[tokio::test]
async fn proposals_at_the_threshold_are_validated_and_the_user_s_own_always_are() {
    let (_tmp, store) = open();
    let limits = LearningLimits::default();
    let high = store
        .propose_learning(new("high", 0.9), limits)
        .await
        .unwrap();
    assert_eq!(high.learning.status, LearningStatus::Validated);
    let low = store
        .propose_learning(new("low", 0.89), limits)
        .await
        .unwrap();
    assert_eq!(low.learning.status, LearningStatus::Proposed);
    let mut mine = new("mine", 0.3);
    mine.source = LearningSource::User;
    let mine = store.propose_learning(mine, limits).await.unwrap();
    assert_eq!(mine.learning.status, LearningStatus::Validated);
    // A lesson for every project always waits for a person.
    let mut everywhere = new("everywhere", 0.99);
    everywhere.scope = LearningScope::User;
    let everywhere = store.propose_learning(everywhere, limits).await.unwrap();
    assert_eq!(everywhere.learning.status, LearningStatus::Proposed);
    // A stricter threshold asks about the same proposal.
    let strict = LearningLimits {
        auto_validate_threshold: 0.95,
        ..limits
    };
    let asked = store
        .propose_learning(new("high too", 0.9), strict)
        .await
        .unwrap();
    assert_eq!(asked.learning.status, LearningStatus::Proposed);
    assert_eq!(asked.learning.source, LearningSource::ToolFailure);
    assert_eq!(asked.learning.session_id.as_deref(), Some("s-1"));
    assert_eq!((asked.learning.used, asked.learning.helpful), (0, 0));
}

/// A model's proposal is what the model says about itself: it waits for a person at any
/// confidence, and so does an imported one; only what atto saw work may pass on its
/// confidence.
#[tokio::test]
async fn a_model_s_proposal_waits_for_a_person_however_sure_it_is() {
    let (_tmp, store) = open();
    let limits = LearningLimits::default();
    for (source, description) in [
        (LearningSource::Model, "the model is sure"),
        (LearningSource::Import, "an import is sure"),
    ] {
        let mut sure = new(description, 1.0);
        sure.source = source;
        let sure = store.propose_learning(sure, limits).await.unwrap();
        assert_eq!(sure.learning.status, LearningStatus::Proposed, "{source:?}");
    }
    assert!(recalled(&store, query("sure")).await.is_empty());
    let mut seen = new("swarm saw it work", 0.95);
    seen.source = LearningSource::Swarm;
    let seen = store.propose_learning(seen, limits).await.unwrap();
    assert_eq!(seen.learning.status, LearningStatus::Validated);
}

#[tokio::test]
async fn the_same_lesson_twice_is_stored_once_even_after_it_was_rejected() {
    let (_tmp, store) = open();
    let limits = LearningLimits::default();
    let first = store
        .propose_learning(new("Use python3, not python", 0.5), limits)
        .await
        .unwrap();
    assert!(!first.duplicate);
    store
        .set_learning_status(first.learning.id, HERE, LearningStatus::Rejected)
        .await
        .unwrap();
    let again = store
        .propose_learning(new("  use PYTHON3, not python ", 0.6), limits)
        .await
        .unwrap();
    assert!(again.duplicate);
    assert_eq!(again.learning.id, first.learning.id);
    assert_eq!(again.learning.status, LearningStatus::Rejected);
    // Another project learns it afresh.
    let mut there = new("Use python3, not python", 0.5);
    there.project = THERE.to_owned();
    let there = store.propose_learning(there, limits).await.unwrap();
    assert!(!there.duplicate);
}

#[tokio::test]
async fn bad_proposals_are_refused_and_store_nothing() {
    let (_tmp, store) = open();
    let limits = LearningLimits::default();
    let long = "x".repeat(atto_store::MAX_DESCRIPTION + 1);
    for bad in [
        new("   ", 0.5),
        new(&long, 0.5),
        new("nan", f64::NAN),
        new("over", 1.5),
        NewLearning {
            keywords: vec!["k".to_owned(); 21],
            ..new("many", 0.5)
        },
        NewLearning {
            project: String::new(),
            ..new("nowhere", 0.5)
        },
    ] {
        let err = store.propose_learning(bad, limits).await.unwrap_err();
        assert!(matches!(err, StoreError::Invalid { .. }), "{err}");
        assert!(err.to_string().contains("nothing was stored"), "{err}");
    }
    let all = store
        .list_learnings(LearningFilter {
            project: None,
            statuses: Vec::new(),
        })
        .await
        .unwrap();
    assert!(all.is_empty());
}

#[tokio::test]
async fn the_lifecycle_and_who_sees_what() {
    let (_tmp, store) = open();
    let a = add(&store, new("a", 0.5)).await;
    let b = add(&store, new("b", 0.5)).await;
    let mut user = new("for every project", 0.5);
    user.scope = LearningScope::User;
    let u = add(&store, user).await;
    let mut other = new("theirs", 0.5);
    other.project = THERE.to_owned();
    let t = add(&store, other).await;

    let v = store
        .set_learning_status(a, HERE, LearningStatus::Validated)
        .await
        .unwrap();
    assert_eq!(v.status, LearningStatus::Validated);
    store
        .set_learning_status(b, HERE, LearningStatus::Rejected)
        .await
        .unwrap();
    store
        .set_learning_status(b, HERE, LearningStatus::Archived)
        .await
        .unwrap();
    let err = store
        .set_learning_status(b, HERE, LearningStatus::Validated)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("stay archived"), "{err}");
    // The user's learnings are seen everywhere; another project's are not.
    assert!(
        store
            .set_learning_status(u, THERE, LearningStatus::Validated)
            .await
            .is_ok()
    );
    let err = store
        .set_learning_status(t, HERE, LearningStatus::Validated)
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::NotFound(_)), "{err}");
    let here: Vec<i64> = store
        .list_learnings_blocking(LearningFilter {
            project: Some(HERE.to_owned()),
            statuses: Vec::new(),
        })
        .unwrap()
        .iter()
        .map(|l| l.id)
        .collect();
    assert_eq!(here, [a, b, u]);
    let validated = store
        .list_learnings_blocking(LearningFilter {
            project: Some(HERE.to_owned()),
            statuses: vec![LearningStatus::Validated],
        })
        .unwrap();
    assert_eq!(validated.len(), 2);
}

#[tokio::test]
async fn helpful_adds_five_hundredths_up_to_one() {
    let (_tmp, store) = open();
    let id = add(&store, new("helps", 0.93)).await;
    let once = store.learning_helpful(id, HERE).await.unwrap();
    assert!((once.confidence - 0.98).abs() < 1e-9, "{}", once.confidence);
    assert_eq!(once.helpful, 1);
    let twice = store.learning_helpful(id, HERE).await.unwrap();
    assert!(
        (twice.confidence - 1.0).abs() < 1e-12,
        "{}",
        twice.confidence
    );
    let thrice = store.learning_helpful(id, HERE).await.unwrap();
    assert!(thrice.confidence <= 1.0);
    assert_eq!(thrice.helpful, 3);
}

#[tokio::test]
async fn edits_change_the_words_and_what_recall_finds() {
    let (_tmp, store) = open();
    let id = add(&store, new("old words", 0.95)).await;
    assert_eq!(recalled(&store, query("old words")).await, [id]);
    let edited = store
        .edit_learning(
            id,
            HERE,
            atto_protocol::LearningField::Description,
            "fresh lesson",
        )
        .await
        .unwrap();
    assert_eq!(edited.description, "fresh lesson");
    assert!(recalled(&store, query("old")).await.is_empty());
    assert_eq!(recalled(&store, query("lesson")).await, [id]);
    let edited = store
        .edit_learning(id, HERE, atto_protocol::LearningField::Kind, "GOTCHA")
        .await
        .unwrap();
    assert_eq!(edited.kind, LearningKind::Gotcha);
    let err = store
        .edit_learning(id, HERE, atto_protocol::LearningField::Kind, "tip")
        .await
        .unwrap_err();
    assert!(err.to_string().contains("not a kind"), "{err}");
}

#[tokio::test]
async fn recall_finds_validated_learnings_by_their_words_most_confident_first() {
    let (_tmp, store) = open();
    let mut py = new("Run scripts with python3; python is not installed", 0.92);
    py.keywords = vec!["interpreter".to_owned()];
    py.actions = vec!["bash".to_owned()];
    py.categories = vec!["COMMAND_NOT_FOUND".to_owned()];
    let py = add(&store, py).await;
    let mut tests = new("The test suite needs the fixtures directory", 0.97);
    tests.details = "Run pytest from the repository root so python finds fixtures.".to_owned();
    tests.actions = vec!["bash".to_owned()];
    let tests = add(&store, tests).await;
    let auth = add(
        &store,
        new("authentication middleware reads the token header", 0.95),
    )
    .await;
    // Never recalled: waiting, rejected, archived, or another project's.
    let waiting = add(&store, new("python waits for review", 0.5)).await;
    let rejected = add(&store, new("python was rejected", 0.5)).await;
    store
        .set_learning_status(rejected, HERE, LearningStatus::Rejected)
        .await
        .unwrap();
    let archived = add(&store, new("python was archived", 0.95)).await;
    store
        .set_learning_status(archived, HERE, LearningStatus::Archived)
        .await
        .unwrap();
    let mut theirs = new("python in another project", 0.99);
    theirs.project = THERE.to_owned();
    add(&store, theirs).await;
    let _ = waiting;

    // Both mention python; the more confident comes first.
    assert_eq!(
        recalled(&store, query("why does python fail?")).await,
        [tests, py]
    );
    // Keywords and stemming: "interpreters" finds the keyword "interpreter".
    assert_eq!(recalled(&store, query("which interpreters")).await, [py]);
    // No FTS match: the LIKE fallback finds a word inside another ("auth").
    assert_eq!(recalled(&store, query("auth")).await, [auth]);
    // Filters.
    let mut q = query("python");
    q.categories = vec!["command_not_found".to_owned()];
    assert_eq!(recalled(&store, q).await, [py]);
    let mut q = query("python");
    q.actions = vec!["edit_file".to_owned()];
    assert!(recalled(&store, q).await.is_empty());
    let mut q = query("");
    q.actions = vec!["bash".to_owned()];
    assert_eq!(recalled(&store, q).await, [tests, py]);
    // The limit, and nothing for words that match nothing.
    let mut q = query("python");
    q.limit = 1;
    assert_eq!(recalled(&store, q).await, [tests]);
    assert!(recalled(&store, query("kubernetes")).await.is_empty());
    assert!(recalled(&store, query("")).await.is_empty());

    store.note_learnings_used(vec![py, tests]).await.unwrap();
    let py_now = store.learning(py, HERE).await.unwrap();
    assert_eq!(py_now.used, 1);
}

#[tokio::test]
async fn fts5_syntax_in_user_text_never_fails() {
    let (_tmp, store) = open();
    let id = add(
        &store,
        new("quoting in bash needs care near parentheses", 0.95),
    )
    .await;
    let nasty = [
        "\"unbalanced quote",
        "a \"quoted phrase\" here",
        "NEAR(bash quoting, 2)",
        "bash NEAR quoting",
        "prefix*",
        "*",
        "((unbalanced",
        "))",
        "AND OR NOT",
        "col:bash",
        "description:quoting",
        "-bash +quoting ^care",
        "{bash}",
        "'single'",
        "bash; DROP TABLE learnings; --",
        "%_%",
        "\\",
        "\0",
        "",
        "   ",
        "🦀 ünïcödé",
    ];
    for text in nasty {
        let found = store.recall_learnings(query(text)).await;
        assert!(found.is_ok(), "{text:?}: {found:?}");
    }
    assert_eq!(recalled(&store, query("NEAR(bash, 2)")).await, [id]);
    assert_eq!(recalled(&store, query("\"quoting")).await, [id]);
    assert_eq!(recalled(&store, query("paren*")).await, [id]);
    // The table is still there.
    assert_eq!(store.learning(id, HERE).await.unwrap().id, id);
}

#[tokio::test]
async fn recall_on_an_empty_store_returns_nothing() {
    let (_tmp, store) = open();
    assert!(recalled(&store, query("anything at all")).await.is_empty());
    // Only proposals: still nothing.
    add(&store, new("anything proposed", 0.5)).await;
    assert!(recalled(&store, query("anything")).await.is_empty());
}

/// The seed's order, one eviction per proposal past the cap of 500: rejected and archived
/// first (oldest first), then validated (lowest confidence, then oldest).
#[tokio::test]
async fn the_501st_learning_evicts_in_the_seeds_order() {
    let (_tmp, store) = open();
    let limits = LearningLimits::default();
    let mut ids = Vec::new();
    for n in 1..=500 {
        let confidence = match n {
            40 | 50 => 0.91,
            60 => 0.92,
            // Proposals: 10 and 20 are rejected below; 7, 107, ... stay proposed.
            10 | 20 => 0.5,
            n if n % 100 == 7 => 0.5,
            _ => 0.95,
        };
        let p = store
            .propose_learning(new(&format!("lesson {n}"), confidence), limits)
            .await
            .unwrap();
        assert_eq!(p.evicted, 0);
        ids.push(p.learning.id);
    }
    let id = |n: usize| ids[n - 1];
    for (n, status) in [
        (10, LearningStatus::Rejected),
        (15, LearningStatus::Archived),
        (20, LearningStatus::Rejected),
    ] {
        store
            .set_learning_status(id(n), HERE, status)
            .await
            .unwrap_or_else(|e| panic!("{n}: {e}"));
    }
    let alive = |store: Store| async move {
        store
            .list_learnings(LearningFilter {
                project: None,
                statuses: Vec::new(),
            })
            .await
            .unwrap()
            .into_iter()
            .map(|l| l.id)
            .collect::<std::collections::HashSet<i64>>()
    };
    // Rejected and archived together by age (10, 15, 20), then validated by confidence
    // (40 and 50 at 0.91, the older first; 60 at 0.92), then the oldest 0.95s (1, 2).
    let expected = [10, 15, 20, 40, 50, 60, 1, 2];
    for (k, n) in expected.iter().enumerate() {
        let p = store
            .propose_learning(new(&format!("newcomer {k}"), 0.95), limits)
            .await
            .unwrap();
        assert_eq!(p.evicted, 1, "newcomer {k}");
        let now = alive(store.clone()).await;
        assert_eq!(now.len(), 500);
        assert!(
            !now.contains(&id(*n)),
            "newcomer {k} should evict lesson {n}"
        );
        assert!(now.contains(&p.learning.id));
        for m in &expected[k + 1..] {
            assert!(now.contains(&id(*m)), "lesson {m} went too early");
        }
    }
    // Proposals outlived every validated learning evicted so far.
    let now = alive(store.clone()).await;
    for n in [7, 107, 207, 307, 407] {
        assert!(now.contains(&id(n)), "proposal {n}");
    }
}

/// When nothing but proposals is left to evict, the oldest proposal goes; the learning
/// just proposed never does.
#[tokio::test]
async fn past_every_validated_learning_the_oldest_proposal_goes() {
    let (_tmp, store) = open();
    let limits = LearningLimits {
        max_learnings: 3,
        ..LearningLimits::default()
    };
    let a = store
        .propose_learning(new("a", 0.5), limits)
        .await
        .unwrap()
        .learning
        .id;
    let b = store
        .propose_learning(new("b", 0.95), limits)
        .await
        .unwrap()
        .learning
        .id;
    let c = store
        .propose_learning(new("c", 0.5), limits)
        .await
        .unwrap()
        .learning
        .id;
    // d evicts the validated b before either proposal.
    let d = store.propose_learning(new("d", 0.5), limits).await.unwrap();
    assert_eq!(d.evicted, 1);
    let left = |store: Store| async move {
        let mut ids: Vec<i64> = store
            .list_learnings(LearningFilter {
                project: None,
                statuses: Vec::new(),
            })
            .await
            .unwrap()
            .into_iter()
            .map(|l| l.id)
            .collect();
        ids.sort_unstable();
        ids
    };
    assert_eq!(left(store.clone()).await, [a, c, d.learning.id]);
    let e = store.propose_learning(new("e", 0.5), limits).await.unwrap();
    assert_eq!(left(store.clone()).await, [c, d.learning.id, e.learning.id]);
    let _ = b;
}

/// A database in the shape Attocode wrote (`.attocode/learnings.db`): every row comes in
/// with its status, counts and time; unknown values take defaults; a second import adds
/// nothing; the file is not changed.
#[test]
fn attocode_learnings_are_imported() {
    let tmp = tempfile::tempdir().unwrap();
    let workspace = tmp.path().join("project");
    std::fs::create_dir_all(workspace.join(".attocode")).unwrap();
    let db = workspace.join(".attocode/learnings.db");
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch(
        "CREATE TABLE learnings (
            id TEXT PRIMARY KEY, created_at REAL NOT NULL, updated_at REAL NOT NULL,
            type TEXT NOT NULL, status TEXT NOT NULL DEFAULT 'proposed',
            description TEXT NOT NULL, details TEXT DEFAULT '',
            categories TEXT DEFAULT '[]', actions TEXT DEFAULT '[]', keywords TEXT DEFAULT '[]',
            apply_count INTEGER DEFAULT 0, help_count INTEGER DEFAULT 0,
            confidence REAL DEFAULT 0.5, source_failure_ids TEXT DEFAULT '[]', user_notes TEXT);
         INSERT INTO learnings VALUES ('learn-1a2b3c4d', 1700000000.5, 1700000001, 'workaround',
            'validated', 'Use python3 for scripts', 'python is missing on CI',
            '[\"environment\"]', '[\"bash\"]', '[\"python\", \"interpreter\"]', 4, 2, 0.85,
            '[]', 'confirmed by Ana');
         INSERT INTO learnings VALUES ('learn-2', 1700000100, 1700000100, 'gotcha', 'proposed',
            'Migrations must run before tests', '', '[]', '[]', '[]', 0, 0, 0.4, '[]', NULL);
         INSERT INTO learnings VALUES ('learn-3', 1700000200, 1700000200, 'hunch', 'someday',
            'Unknown words take defaults', '', 'not json', '[]', 'a, b', 0, 0, 7.0, '[]', NULL);
         INSERT INTO learnings VALUES ('learn-4', 1700000300, 1700000300, 'pattern', 'validated',
            '', '', '[]', '[]', '[]', 0, 0, 0.9, '[]', NULL);",
    )
    .unwrap();
    drop(conn);
    let before = std::fs::read(&db).unwrap();
    assert_eq!(
        atto_store::attocode_learning_dbs(&workspace),
        std::slice::from_ref(&db)
    );

    let project = workspace.display().to_string();
    let items = atto_store::read_attocode_learnings(&db, &project).unwrap();
    assert_eq!(items.len(), 3, "the row without a description is left out");
    let first = &items[0];
    assert_eq!(first.new.kind, LearningKind::Workaround);
    assert_eq!(first.status, LearningStatus::Validated);
    assert_eq!(first.new.keywords, ["python", "interpreter"]);
    assert_eq!(first.new.actions, ["bash"]);
    assert_eq!(first.new.categories, ["environment"]);
    assert_eq!((first.used, first.helpful), (4, 2));
    assert_eq!(first.created_at, Some(1_700_000_000_500));
    assert!(first.new.details.contains("User notes: confirmed by Ana"));
    assert!(
        first
            .new
            .source_ref
            .as_deref()
            .unwrap()
            .ends_with("learn-1a2b3c4d")
    );
    let third = &items[2];
    assert_eq!(third.new.kind, LearningKind::Pattern);
    assert_eq!(third.status, LearningStatus::Proposed);
    assert_eq!(third.new.categories, ["not json"]);
    assert_eq!(third.new.keywords, ["a", "b"]);

    let store = Store::open(&tmp.path().join("atto.db")).unwrap();
    let report = store
        .import_learnings_blocking(items.clone(), LearningLimits::default())
        .unwrap();
    assert_eq!((report.imported, report.duplicates), (3, 0));
    let again = store
        .import_learnings_blocking(items, LearningLimits::default())
        .unwrap();
    assert_eq!((again.imported, again.duplicates), (0, 3));
    let stored = store
        .list_learnings_blocking(LearningFilter {
            project: Some(project.clone()),
            statuses: Vec::new(),
        })
        .unwrap();
    assert_eq!(stored.len(), 3);
    assert!(stored.iter().all(|l| l.source == LearningSource::Import));
    let clamped = stored
        .iter()
        .find(|l| l.description.starts_with("Unknown"))
        .unwrap();
    assert!((clamped.confidence - 1.0).abs() < 1e-12);
    // Recalled like any validated learning.
    let found = store
        .recall_learnings_blocking(LearningQuery {
            text: "run the python scripts".to_owned(),
            project,
            categories: Vec::new(),
            actions: Vec::new(),
            limit: 5,
        })
        .unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].description, "Use python3 for scripts");
    assert_eq!(
        std::fs::read(&db).unwrap(),
        before,
        "the Attocode file was changed"
    );
}

/// Another spelling of the same table (`kind`, `uses`, times in milliseconds) imports too;
/// a file without the table is refused with a message.
#[test]
fn other_spellings_import_and_other_files_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("other.sqlite");
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch(
        "CREATE TABLE learnings (kind TEXT, description TEXT, uses INTEGER, helpful INTEGER,
                                 created_at INTEGER, keywords TEXT);
         INSERT INTO learnings VALUES ('best-practice', 'Pin the toolchain', 3, 1,
                                       1700000000123, 'rust,toolchain');",
    )
    .unwrap();
    drop(conn);
    let items = atto_store::read_attocode_learnings(&db, "/w").unwrap();
    assert_eq!(items.len(), 1);
    assert_eq!(items[0].new.kind, LearningKind::BestPractice);
    assert_eq!((items[0].used, items[0].helpful), (3, 1));
    assert_eq!(items[0].created_at, Some(1_700_000_000_123));
    assert_eq!(items[0].new.keywords, ["rust", "toolchain"]);
    assert!((items[0].new.confidence - 0.5).abs() < 1e-12);

    let plain = tmp.path().join("plain.db");
    rusqlite::Connection::open(&plain)
        .unwrap()
        .execute_batch("CREATE TABLE notes (x TEXT);")
        .unwrap();
    let err = atto_store::read_attocode_learnings(&plain, "/w").unwrap_err();
    assert!(err.to_string().contains("no learnings table"), "{err}");
}
