//! The two files a benchmark run writes: the predictions JSONL (one
//! `{"instance_id","model_name_or_path","model_patch"}` row per instance, the format the
//! SWE-bench evaluation reads) and its sidecar `<name>.meta.jsonl` (how each run went).
//!
//! Rows are keyed by `instance_id`: writing one replaces the earlier row of that instance.
//! Every write rewrites the whole file through a temporary file and a rename, so a reader
//! (or a crash) never sees half a file. Lines that are not rows of ours are kept as they
//! are. Writes from the workers of one run are serialised here; two harness processes
//! sharing one predictions file are not coordinated.

use std::collections::HashSet;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde_json::Value;

pub struct Records {
    pub predictions: PathBuf,
    pub meta: PathBuf,
    lock: Mutex<()>,
}

impl Records {
    /// `predictions.jsonl` gets the sidecar `predictions.meta.jsonl`; any other name gets
    /// `.meta.jsonl` appended.
    pub fn new(predictions: PathBuf) -> Records {
        let name = predictions
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let stem = name.strip_suffix(".jsonl").unwrap_or(&name);
        let meta = predictions.with_file_name(format!("{stem}.meta.jsonl"));
        Records {
            predictions,
            meta,
            lock: Mutex::new(()),
        }
    }

    /// The instances that already have a predictions row.
    pub fn predicted(&self) -> Result<HashSet<String>, String> {
        let text = read(&self.predictions)?;
        Ok(text.lines().filter_map(instance_of).collect())
    }

    /// Writes (or replaces) the predictions row of `instance_id`.
    pub fn predict(&self, instance_id: &str, model: &str, patch: &str) -> Result<(), String> {
        let row = serde_json::json!({
            "instance_id": instance_id,
            "model_name_or_path": model,
            "model_patch": patch,
        });
        self.upsert(&self.predictions, instance_id, &row)
    }

    /// Writes (or replaces) the sidecar entry of the instance `entry` names.
    pub fn describe(&self, entry: &Value) -> Result<(), String> {
        let id = entry["instance_id"].as_str().unwrap_or_default();
        self.upsert(&self.meta, id, entry)
    }

    fn upsert(&self, path: &Path, instance_id: &str, row: &Value) -> Result<(), String> {
        // A worker that panicked mid-write left the file whole (rename), so the lock's
        // data, which is nothing, is still good.
        let _guard = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        let old = read(path)?;
        let mut out = String::with_capacity(old.len() + 256);
        let mut placed = false;
        for line in old.lines() {
            if instance_of(line).as_deref() == Some(instance_id) {
                if !placed {
                    out.push_str(&row.to_string());
                    out.push('\n');
                    placed = true;
                }
                continue;
            }
            if !line.trim().is_empty() {
                out.push_str(line);
                out.push('\n');
            }
        }
        if !placed {
            out.push_str(&row.to_string());
            out.push('\n');
        }
        write_atomic(path, out.as_bytes())
            .map_err(|e| format!("cannot write {}: {e}", path.display()))
    }
}

/// The `instance_id` of a JSONL line, if it is a row with one.
fn instance_of(line: &str) -> Option<String> {
    match serde_json::from_str::<Value>(line)
        .ok()?
        .get_mut("instance_id")?
        .take()
    {
        Value::String(id) => Some(id),
        _ => None,
    }
}

fn read(path: &Path) -> Result<String, String> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
    }
}

fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.tmp-{}", std::process::id()));
    let mut file = std::fs::File::create(&tmp)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    drop(file);
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_replaces_the_earlier_row_of_its_instance_and_keeps_the_rest() {
        let dir = std::env::temp_dir().join(format!("atto-records-{}", uuid::Uuid::new_v4()));
        let records = Records::new(dir.join("preds.jsonl"));
        assert_eq!(records.meta, dir.join("preds.meta.jsonl"));
        records.predict("a", "m", "p1").unwrap();
        records.predict("b", "m", "p2").unwrap();
        std::fs::write(
            &records.predictions,
            format!(
                "{}not json\n",
                std::fs::read_to_string(&records.predictions).unwrap()
            ),
        )
        .unwrap();
        records.predict("a", "m", "p3").unwrap();
        let text = std::fs::read_to_string(&records.predictions).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert!(lines[0].contains("p3") && lines[1].contains("p2"), "{text}");
        assert_eq!(lines[2], "not json");
        let ids = records.predicted().unwrap();
        assert_eq!(ids, HashSet::from(["a".to_owned(), "b".to_owned()]));
        std::fs::remove_dir_all(dir).unwrap();
    }
}
