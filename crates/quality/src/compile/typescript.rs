//! TypeScript and JSX: `tsc --noEmit` over the changed files only, one run per project.
//!
//! tsc ignores (newer versions refuse) a `tsconfig.json` when files are named on its
//! command line, so each run gets a small configuration of its own, written for the run
//! and removed after it: it extends the project's `tsconfig.json` (the nearest one up from
//! the files; for a solution-style one, as Vite writes, the referenced config that
//! includes them) and lists the changed files, so the project's settings decide what is an
//! error. Without a project config the files are checked alone with
//! `--isolatedModules`, lenient defaults, and no JavaScript. JSX (`.jsx`, and `.js` that
//! only parses as JSX) is checked for syntax only, without resolving its imports.
//! Errors in files that did not change are not the worker's and are left out.
//!
//! tsc is the machine's, found on `PATH` outside the workspace: the project's
//! `node_modules/.bin/tsc` is a program the repository carries, and a check does not start
//! it unasked.

use std::collections::{BTreeMap, HashMap};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Value, json};

use super::program::Program;
use super::{
    MAX_FINDINGS, TSC_TIMEOUT, Target, bounded, did_not_run, error, group_warning, json,
    shell_quote, tail,
};
use crate::{CommandRequest, CommandRunner, CompileError, Purpose};

/// What to tell a user whose machine has no tsc.
const INSTALL: &str = "install it with `npm install -g typescript`";

/// How one tsc run is configured.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Setting {
    /// Extends the project's config at this path.
    Project(PathBuf),
    /// No project config: the files alone.
    Standalone,
    /// JSX syntax only.
    Jsx,
}

/// Checks the TypeScript files (one run per project config) and the JSX files (one run).
pub(super) async fn check(
    workspace: &Path,
    typescript: &[Target],
    jsx: &[Target],
    runner: &dyn CommandRunner,
) -> Vec<CompileError> {
    let Ok(root) = workspace.canonicalize() else {
        return Vec::new();
    };
    let mut runs: BTreeMap<Setting, Vec<Target>> = BTreeMap::new();
    for target in typescript {
        let setting = match project_config(&root, &target.path) {
            Some(config) => Setting::Project(config),
            None => Setting::Standalone,
        };
        runs.entry(setting).or_default().push(target.clone());
    }
    if !jsx.is_empty() {
        runs.insert(Setting::Jsx, jsx.to_vec());
    }
    let mut findings = Vec::new();
    for (setting, targets) in runs {
        let what = match setting {
            Setting::Jsx => "JSX",
            Setting::Project(_) | Setting::Standalone => "TypeScript",
        };
        let dir = match &setting {
            Setting::Project(config) => config.parent().unwrap_or(&root).to_path_buf(),
            Setting::Standalone | Setting::Jsx => root.clone(),
        };
        let Some(tsc) = Program::find("tsc", &root) else {
            let why = format!(
                "tsc is not installed outside the workspace (the project's own \
                 node_modules/.bin/tsc is not run unasked); {INSTALL}"
            );
            findings.extend(group_warning(&targets, what, &why));
            continue;
        };
        let config = match TempConfig::write(&dir, &config(&setting, &targets)) {
            Ok(config) => config,
            Err(err) => {
                let why = format!("its tsc configuration could not be written ({err})");
                findings.extend(group_warning(&targets, what, &why));
                continue;
            }
        };
        let command = format!(
            "{} -p {} --pretty false",
            tsc.command(),
            shell_quote(&config.0.to_string_lossy())
        );
        let out = runner
            .run(CommandRequest {
                command: &command,
                purpose: Purpose::Check,
                timeout: TSC_TIMEOUT,
            })
            .await;
        drop(config);
        if let Some(why) = did_not_run(&out, "tsc", INSTALL) {
            findings.extend(group_warning(&targets, what, &why));
            continue;
        }
        let read = read_output(&out.output, workspace, &targets);
        if !read.problems.is_empty() {
            let why = format!(
                "tsc could not use the configuration: {}",
                read.problems.join("; ")
            );
            findings.extend(group_warning(&targets, what, &why));
        } else if out.exit_code != Some(0) && read.diagnostics == 0 {
            let why = format!("tsc failed without a diagnostic: {}", tail(&out.output));
            findings.extend(group_warning(&targets, what, &why));
        }
        findings.extend(read.errors);
    }
    findings
}

/// The configuration of one run.
fn config(setting: &Setting, targets: &[Target]) -> Value {
    let files: Vec<String> = targets
        .iter()
        .map(|t| t.path.to_string_lossy().into_owned())
        .collect();
    match setting {
        // The project decides; only what would write files is turned off.
        Setting::Project(base) => json!({
            "extends": base.to_string_lossy(),
            "compilerOptions": {
                "noEmit": true,
                "composite": false,
                "incremental": false,
                "emitDeclarationOnly": false,
                "tsBuildInfoFile": null,
                "skipLibCheck": true,
            },
            "files": files,
            "include": [],
        }),
        // No project to ask: strictness off (its default changed across versions), modern
        // modules resolved as bundlers and Node do (tsc 5 and 7 agree on these), and the
        // module interop most code assumes.
        Setting::Standalone => json!({
            "compilerOptions": {
                "noEmit": true,
                "isolatedModules": true,
                "skipLibCheck": true,
                "allowJs": false,
                "strict": false,
                "target": "es2022",
                "module": "esnext",
                "moduleResolution": "bundler",
                "jsx": "preserve",
                "esModuleInterop": true,
                "resolveJsonModule": true,
            },
            "files": files,
            "include": [],
        }),
        // Without checkJs, tsc reports only syntax in JavaScript files.
        Setting::Jsx => json!({
            "compilerOptions": {
                "noEmit": true,
                "allowJs": true,
                "checkJs": false,
                "jsx": "preserve",
                "noResolve": true,
                "skipLibCheck": true,
            },
            "files": files,
            "include": [],
        }),
    }
}

/// The nearest `tsconfig.json` up from `file`, inside the workspace.
fn project_config(root: &Path, file: &Path) -> Option<PathBuf> {
    let mut dir = file.parent()?;
    while dir.starts_with(root) {
        let candidate = dir.join("tsconfig.json");
        if candidate.is_file() {
            return Some(solution_member(&candidate, file).unwrap_or(candidate));
        }
        dir = dir.parent()?;
    }
    None
}

/// A solution-style config (`"files": []` and `references`) holds no settings of its own:
/// the referenced config whose `files` or `include` cover `file` does.
fn solution_member(config: &Path, file: &Path) -> Option<PathBuf> {
    let value = read_config(config)?;
    let solution = value.get("files")?.as_array()?.is_empty();
    let references = value.get("references")?.as_array()?;
    if !solution {
        return None;
    }
    let dir = config.parent()?;
    references.iter().find_map(|reference| {
        let path = dir.join(reference.get("path")?.as_str()?);
        let member = if path.is_dir() {
            path.join("tsconfig.json")
        } else {
            path
        };
        covers(&member, file).then_some(member)
    })
}

/// Whether the config at `config` names `file` in `files` or under an `include` pattern's
/// fixed leading directories (exclusions are not read: a near enough answer to pick
/// settings by).
fn covers(config: &Path, file: &Path) -> bool {
    let (Some(value), Some(dir)) = (read_config(config), config.parent()) else {
        return false;
    };
    let listed = |key: &str| -> Vec<String> {
        value
            .get(key)
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    let inside = |prefix: &str| {
        dir.join(prefix)
            .canonicalize()
            .is_ok_and(|p| file.starts_with(p))
    };
    if listed("files").iter().any(|f| inside(f)) {
        return true;
    }
    let include = match value.get("include") {
        Some(_) => listed("include"),
        None => vec!["**/*".to_owned()],
    };
    include.iter().any(|pattern| {
        let fixed = match pattern.find(['*', '?']) {
            Some(at) => pattern[..at].rsplit_once('/').map_or("", |(d, _)| d),
            None => pattern.as_str(),
        };
        inside(if fixed.is_empty() { "." } else { fixed })
    })
}

/// A tsconfig file, comments allowed.
fn read_config(path: &Path) -> Option<Value> {
    let bytes = std::fs::read(path).ok()?;
    serde_json::from_slice(&json::strip_comments(&bytes)).ok()
}

/// A configuration file that lives for one run.
struct TempConfig(PathBuf);

impl TempConfig {
    /// Writes `config` next to the config it extends (so tsc finds the project's
    /// `node_modules/@types` as it would), or in the temporary directory when that is not
    /// writable.
    fn write(dir: &Path, config: &Value) -> std::io::Result<TempConfig> {
        static RUNS: AtomicU64 = AtomicU64::new(0);
        let name = format!(
            ".atto-tsc-check-{}-{}.json",
            std::process::id(),
            RUNS.fetch_add(1, Ordering::Relaxed)
        );
        let text = serde_json::to_vec_pretty(config)?;
        let mut last = None;
        for dir in [dir.to_path_buf(), std::env::temp_dir()] {
            let path = dir.join(&name);
            let written = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
                .and_then(|mut file| file.write_all(&text));
            match written {
                Ok(()) => return Ok(TempConfig(path)),
                Err(err) => {
                    let _ = std::fs::remove_file(&path);
                    last = Some(err);
                }
            }
        }
        Err(last.unwrap_or_else(|| std::io::Error::other("no directory to write to")))
    }
}

impl Drop for TempConfig {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// What one tsc run printed.
#[derive(Debug, Default)]
struct Output {
    /// Errors in the changed files.
    errors: Vec<CompileError>,
    /// Errors about the configuration, which mean the files were not really checked.
    problems: Vec<String>,
    /// Diagnostics of any file.
    diagnostics: usize,
}

/// Reads `file(line,col): error TSxxxx: message` lines (and their indented continuations).
fn read_output(output: &str, workspace: &Path, targets: &[Target]) -> Output {
    let by_path: HashMap<&Path, &Target> = targets.iter().map(|t| (t.path.as_path(), t)).collect();
    let mut resolved: HashMap<&str, Option<PathBuf>> = HashMap::new();
    let mut read = Output::default();
    let mut continues = false;
    for line in output.lines() {
        if let Some((file, line_number, message)) = diagnostic(line) {
            read.diagnostics += 1;
            let real = resolved
                .entry(file)
                .or_insert_with(|| workspace.join(file).canonicalize().ok());
            let target = real.as_deref().and_then(|p| by_path.get(p));
            continues = false;
            if let Some(target) = target {
                if read.errors.len() < MAX_FINDINGS {
                    read.errors
                        .push(error(&target.name, Some(line_number), message.to_owned()));
                    continues = true;
                }
            } else if file.ends_with(".json") {
                read.problems.push(bounded(format!("{file}: {message}")));
            }
        } else if let Some(message) = line.strip_prefix("error ") {
            read.diagnostics += 1;
            read.problems.push(bounded(message.to_owned()));
            continues = false;
        } else if continues && line.starts_with(' ') {
            if let Some(last) = read.errors.last_mut() {
                last.message = bounded(format!("{} {}", last.message, line.trim()));
            }
        } else {
            continues = false;
        }
    }
    read
}

/// `file(line,col): error TS2322: message` → the file, the line, `TS2322: message`.
fn diagnostic(line: &str) -> Option<(&str, u32, &str)> {
    let at = line.find("): error TS")?;
    let head = &line[..at];
    let open = head.rfind('(')?;
    let number = head[open + 1..].split(',').next()?.parse().ok()?;
    Some((&head[..open], number, &line[at + "): error ".len()..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diagnostics_are_read_with_file_line_and_code() {
        let table = [
            (
                "src/a.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'.",
                Some((
                    "src/a.ts",
                    3,
                    "TS2322: Type 'string' is not assignable to type 'number'.",
                )),
            ),
            (
                "dir (1)/b.tsx(12,1): error TS1005: ';' expected.",
                Some(("dir (1)/b.tsx", 12, "TS1005: ';' expected.")),
            ),
            ("error TS5023: Unknown compiler option 'x'.", None),
            ("  Property 'b' is missing.", None),
            ("Found 2 errors.", None),
        ];
        for (line, expected) in table {
            assert_eq!(diagnostic(line), expected, "{line}");
        }
    }

    #[test]
    fn only_changed_files_count_and_config_errors_are_problems() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join("a.ts"), "").unwrap();
        std::fs::write(root.join("b.ts"), "").unwrap();
        let targets = [Target {
            name: "a.ts".to_owned(),
            path: root.join("a.ts"),
        }];
        let output = "a.ts(2,5): error TS2322: Type 'X' is not assignable to type 'Y'.\n  \
                      Property 'b' is missing.\nb.ts(1,1): error TS1005: ';' expected.\n\
                      error TS5023: Unknown compiler option 'x'.\n";
        let read = read_output(output, &root, &targets);
        assert_eq!(read.errors.len(), 1);
        assert_eq!(
            read.errors[0].line_text(),
            "a.ts:2 — TS2322: Type 'X' is not assignable to type 'Y'. Property 'b' is missing."
        );
        assert_eq!(read.problems, ["TS5023: Unknown compiler option 'x'."]);
        assert_eq!(read.diagnostics, 3);
    }

    #[test]
    fn a_solution_config_hands_over_to_the_member_that_includes_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("src/ui")).unwrap();
        std::fs::write(root.join("src/ui/App.tsx"), "").unwrap();
        std::fs::write(root.join("vite.config.ts"), "").unwrap();
        std::fs::write(
            root.join("tsconfig.json"),
            "{\n  // solution\n  \"files\": [],\n  \"references\": [{ \"path\": \"./tsconfig.node.json\" }, { \"path\": \"./tsconfig.app.json\" },],\n}\n",
        )
        .unwrap();
        std::fs::write(
            root.join("tsconfig.app.json"),
            r#"{"compilerOptions": {"jsx": "react-jsx"}, "include": ["src/**/*.tsx"]}"#,
        )
        .unwrap();
        std::fs::write(
            root.join("tsconfig.node.json"),
            r#"{"include": ["vite.config.ts"]}"#,
        )
        .unwrap();
        assert_eq!(
            project_config(&root, &root.join("src/ui/App.tsx")),
            Some(root.join("./tsconfig.app.json"))
        );
        assert_eq!(
            project_config(&root, &root.join("vite.config.ts")),
            Some(root.join("./tsconfig.node.json"))
        );
        std::fs::write(root.join("tsconfig.json"), r#"{"include": ["src"]}"#).unwrap();
        assert_eq!(
            project_config(&root, &root.join("src/ui/App.tsx")),
            Some(root.join("tsconfig.json"))
        );
    }

    #[test]
    fn the_run_config_is_removed_after_the_run() {
        let dir = tempfile::tempdir().unwrap();
        let config = TempConfig::write(dir.path(), &json!({"files": []})).unwrap();
        let path = config.0.clone();
        assert!(path.is_file());
        drop(config);
        assert!(!path.exists());
    }
}
