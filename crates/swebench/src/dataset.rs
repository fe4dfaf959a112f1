//! The instances of a run: the single one the flags describe, or the rows of a dataset
//! JSONL as SWE-bench publishes them, each with the checkout it runs in. Reading only:
//! nothing here touches a repository.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::UsageError;

/// Which instances a run covers, as `atto swebench run`'s flags give them: one instance
/// (`issue_file`, with `instance_id`, `repo`, `base_commit`), or a dataset's rows
/// (`dataset`, checkouts under `repos`, only `instance_id` when given).
#[derive(Debug, Clone, Default)]
pub struct Instances {
    /// The single instance's id; with a dataset, the one row to run.
    pub instance_id: Option<String>,
    /// The single instance's issue text.
    pub issue_file: Option<PathBuf>,
    /// The single instance's checkout (default: the current directory).
    pub repo: Option<PathBuf>,
    /// The single instance's base commit (default: the checkout's HEAD).
    pub base_commit: Option<String>,
    /// A JSONL of instances as SWE-bench publishes them.
    pub dataset: Option<PathBuf>,
    /// Where the dataset's checkouts are (default: the current directory).
    pub repos: Option<PathBuf>,
}

/// One instance to run.
pub struct Task {
    pub id: String,
    /// `owner/name` from the dataset, or the --repo path.
    pub repo_label: String,
    /// The checkout, or why there is none.
    pub repo: Result<PathBuf, String>,
    pub base: Option<String>,
    pub issue: String,
}

/// The instances the arguments name, and a label (`(line N)`) for each dataset line that
/// cannot be one (reported at once; the others still run).
pub fn tasks(args: &Instances) -> Result<(Vec<Task>, Vec<String>), UsageError> {
    if let Some(path) = &args.issue_file {
        let issue = std::fs::read_to_string(path)
            .map_err(|e| UsageError(format!("cannot read issue file {}: {e}", path.display())))?;
        let repo = args.repo.clone().unwrap_or_else(|| PathBuf::from("."));
        let task = Task {
            id: args.instance_id.clone().unwrap_or_default(),
            repo_label: repo.display().to_string(),
            repo: Ok(std::path::absolute(&repo).unwrap_or(repo)),
            base: args.base_commit.clone(),
            issue,
        };
        return Ok((vec![task], Vec::new()));
    }
    let Some(path) = &args.dataset else {
        return Err(UsageError(
            "nothing to run: give --instance-id ID --issue-file FILE [--repo DIR], or \
             --dataset FILE [--repos DIR]"
                .into(),
        ));
    };
    let text = std::fs::read_to_string(path)
        .map_err(|e| UsageError(format!("cannot read dataset {}: {e}", path.display())))?;
    let repos = args.repos.clone().unwrap_or_else(|| PathBuf::from("."));
    let mut tasks = Vec::new();
    let mut bad = Vec::new();
    let mut seen = HashSet::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let where_ = format!("{} line {}", path.display(), n + 1);
        match task_of(line, &repos) {
            Ok(task) if args.instance_id.as_ref().is_some_and(|id| *id != task.id) => {}
            Ok(task) if !seen.insert(task.id.clone()) => {
                eprintln!("atto: {where_}: {} appears again; skipped", task.id);
            }
            Ok(task) => tasks.push(task),
            Err(e) => {
                eprintln!("atto: {where_}: {e}; skipped, the other instances still run");
                bad.push(format!("(line {})", n + 1));
            }
        }
    }
    if let Some(id) = &args.instance_id
        && tasks.is_empty()
    {
        return Err(UsageError(format!(
            "instance {id} is not in {}; check the id (ids are case-sensitive)",
            path.display()
        )));
    }
    Ok((tasks, bad))
}

/// A dataset row as a task; its repository is looked up now, a missing one reported
/// when the instance runs.
fn task_of(line: &str, repos: &Path) -> Result<Task, String> {
    let row: Value = serde_json::from_str(line).map_err(|e| format!("not a JSON object ({e})"))?;
    let field = |name: &str| {
        row.get(name)
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| format!("no \"{name}\" string in the row"))
    };
    let id = field("instance_id")?;
    let repo_label = field("repo")?;
    let base = field("base_commit")?;
    let issue = field("problem_statement")?;
    let repo = checkout_dir(repos, &repo_label);
    Ok(Task {
        id,
        repo_label,
        repo,
        base: Some(base),
        issue,
    })
}

/// `owner/name` → `DIR/owner__name` if it exists, else `DIR/name`.
fn checkout_dir(repos: &Path, repo: &str) -> Result<PathBuf, String> {
    let parts: Vec<&str> = repo.split('/').collect();
    let safe = |p: &str| {
        !p.is_empty()
            && p != "."
            && p != ".."
            && p.chars()
                .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
    };
    let [owner, name] = parts[..] else {
        return Err(format!("repo {repo:?} is not of the form owner/name"));
    };
    if !safe(owner) || !safe(name) {
        return Err(format!("repo {repo:?} is not of the form owner/name"));
    }
    let candidates = [repos.join(format!("{owner}__{name}")), repos.join(name)];
    candidates
        .iter()
        .find(|dir| dir.is_dir())
        .map(|dir| std::path::absolute(dir).unwrap_or_else(|_| dir.clone()))
        .ok_or_else(|| {
            format!(
                "no checkout of {repo}: looked for {} and {}; clone it there and rerun",
                candidates[0].display(),
                candidates[1].display()
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dataset_repos_resolve_owner_name_first_and_refuse_paths() {
        let dir = std::env::temp_dir().join(format!("atto-sb-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(dir.join("psf__requests")).unwrap();
        std::fs::create_dir_all(dir.join("flask")).unwrap();
        let found = |repo| checkout_dir(&dir, repo).map(|p| p.ends_with("psf__requests"));
        assert_eq!(found("psf/requests"), Ok(true));
        assert!(
            checkout_dir(&dir, "pallets/flask")
                .unwrap()
                .ends_with("flask")
        );
        for bad in ["../x", "a/..", "a/b/c", "requests", "a/b c"] {
            assert!(checkout_dir(&dir, bad).is_err(), "{bad}");
        }
        let missing = checkout_dir(&dir, "django/django").unwrap_err();
        assert!(missing.contains("django__django"), "{missing}");
        std::fs::remove_dir_all(dir).unwrap();
    }
}
