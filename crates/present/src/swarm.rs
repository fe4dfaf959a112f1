//! How a swarm reads: its task tree's indentation, shared by `atto swarm status`, the
//! report and the terminal UI's swarm overlay, and the lines a task's end is told in by
//! the line session and the terminal UI alike.

use std::collections::HashMap;

use atto_protocol::swarm::SwarmTask;

/// Each task's depth in the dependency graph (0: no dependencies), in task order. A
/// dependency on an unknown task is ignored; a cycle (which decomposition refuses) cannot
/// make this loop: depths are relaxed at most once per task. For `atto swarm status` and the
/// terminal UI's swarm overlay, which indent the same way.
pub fn depths(tasks: &[SwarmTask]) -> Vec<usize> {
    let index: HashMap<&str, usize> = tasks
        .iter()
        .enumerate()
        .map(|(i, t)| (t.id.as_str(), i))
        .collect();
    let mut depth = vec![0usize; tasks.len()];
    for _ in 0..tasks.len() {
        let mut changed = false;
        for (i, t) in tasks.iter().enumerate() {
            let want = t
                .dependencies
                .iter()
                .filter_map(|d| index.get(d.as_str()))
                .map(|&j| depth[j] + 1)
                .max()
                .unwrap_or(0)
                .min(tasks.len());
            if want != depth[i] {
                depth[i] = want;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    depth
}

/// `✓ task-1 passed (2 attempts, score 4/5)`.
pub fn passed_line(task_id: &str, attempts: u32, score: Option<u8>) -> String {
    format!(
        "✓ {task_id} passed ({attempts} attempt{}{})",
        if attempts == 1 { "" } else { "s" },
        score.map(|s| format!(", score {s}/5")).unwrap_or_default()
    )
}

/// `✗ task-1 failed: why`.
pub fn failed_line(task_id: &str, reason: &str) -> String {
    format!("✗ {task_id} failed: {reason}")
}

/// `⊘ task-1 skipped: why`.
pub fn skipped_line(task_id: &str, reason: &str) -> String {
    format!("⊘ {task_id} skipped: {reason}")
}
