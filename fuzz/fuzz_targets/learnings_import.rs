//! An Attocode learnings database brought in with `atto learnings import`: any columns
//! (by the names and other spellings the reader knows) holding any SQLite values. What
//! the reader takes, the store then imports whole: each learning stored or a duplicate.
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use arbitrary::Arbitrary;
use atto_store::{LearningLimits, Store, read_attocode_learnings};
use libfuzzer_sys::fuzz_target;
use rusqlite::types::Value;

const NAMES: &[&str] = &[
    "type",
    "kind",
    "status",
    "description",
    "details",
    "categories",
    "actions",
    "keywords",
    "confidence",
    "apply_count",
    "uses",
    "help_count",
    "helpful",
    "user_notes",
    "created_at",
    "id",
    "Description",
    "scope",
];

#[derive(Debug, Arbitrary)]
enum Cell {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
}

#[derive(Debug, Arbitrary)]
struct Input {
    columns: Vec<u8>,
    rows: Vec<Vec<Cell>>,
}

/// A scratch directory in memory when there is one (one database per input).
fn scratch() -> PathBuf {
    let shm = PathBuf::from("/dev/shm");
    let base = if shm.is_dir() {
        shm
    } else {
        std::env::temp_dir()
    };
    base.join(format!("atto-fuzz-learnings-{}", std::process::id()))
}

fn store() -> Option<&'static Store> {
    static STORE: OnceLock<Option<Store>> = OnceLock::new();
    STORE
        .get_or_init(|| {
            let dir = scratch();
            std::fs::create_dir_all(&dir).ok()?;
            Store::open(&dir.join("store.db")).ok()
        })
        .as_ref()
}

fn build(input: &Input, path: &std::path::Path) -> rusqlite::Result<()> {
    let mut names: Vec<&str> = Vec::new();
    for c in input.columns.iter().take(12) {
        let name = NAMES[usize::from(*c) % NAMES.len()];
        if !names.iter().any(|n| n.eq_ignore_ascii_case(name)) {
            names.push(name);
        }
    }
    if names.is_empty() {
        names.push("description");
    }
    let conn = rusqlite::Connection::open(path)?;
    let quoted: Vec<String> = names.iter().map(|n| format!("\"{n}\"")).collect();
    conn.execute(
        &format!("CREATE TABLE learnings ({})", quoted.join(", ")),
        [],
    )?;
    let marks = vec!["?"; names.len()].join(", ");
    let mut insert = conn.prepare(&format!("INSERT INTO learnings VALUES ({marks})"))?;
    for row in input.rows.iter().take(20) {
        let values: Vec<Value> = (0..names.len())
            .map(|i| match row.get(i) {
                None | Some(Cell::Null) => Value::Null,
                Some(Cell::Int(n)) => Value::Integer(*n),
                Some(Cell::Real(r)) => Value::Real(*r),
                Some(Cell::Text(t)) => Value::Text(t.clone()),
                Some(Cell::Blob(b)) => Value::Blob(b.clone()),
            })
            .collect();
        insert.execute(rusqlite::params_from_iter(values))?;
    }
    Ok(())
}

fuzz_target!(|input: Input| {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let Some(store) = store() else {
        return;
    };
    let path = scratch().join(format!(
        "attocode-{}.db",
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let built = build(&input, &path);
    let read = built
        .is_ok()
        .then(|| read_attocode_learnings(&path, "/workspace"));
    let _ = std::fs::remove_file(&path);
    let Some(Ok(items)) = read else {
        return;
    };
    let count = items.len();
    match store.import_learnings_blocking(items, LearningLimits::default()) {
        Ok(report) => assert_eq!(report.imported + report.duplicates, count, "{report:?}"),
        Err(e) => panic!("rows the reader took were not imported: {e}"),
    }
});
