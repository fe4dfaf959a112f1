//! Project trust: the one boundary for what a repository carries. A project file that can
//! start a process or widen what atto does (`.mcp.json` and the workspace files its
//! servers run (`mcp_files`), a swarm file with a launch
//! template or models and the files that template runs, `.atto/agents/*.md`) is inert
//! until the user trusts exactly that content. (The project's `.atto/config.toml` has no
//! key that widens: it may only tighten, and needs no trust.) Trust is remembered in the data dir as
//! `project-trust.json`, canonical path → SHA-256 of the content, so any change to the
//! file needs trust again. `atto trust [FILE…]`, `atto trust --list` and
//! `atto untrust FILE` manage it (`atto mcp trust|untrust` are the same for `.mcp.json`).
//!
//! The store only answers "did the user trust this content"; deciding what a file may do
//! without trust is left to each loader. Instruction files are the exception to "inert
//! until trusted" (see `instructions`): readable, unless a session's command wrote them.

pub mod instructions;
pub mod mcp_files;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use sha2::{Digest as _, Sha256};

use crate::{ExitCode, Failure};

/// `atto trust`: trust project files by their content.
#[derive(Debug, clap::Args)]
pub struct TrustArgs {
    /// Files to trust as they are now (default: this workspace's files that need trust).
    pub files: Vec<PathBuf>,
    /// List the trusted files and whether they still match what was trusted.
    #[arg(long, conflicts_with = "files")]
    pub list: bool,
}

/// `atto untrust FILE…`: revoke the trust in files.
#[derive(Debug, clap::Args)]
pub struct UntrustArgs {
    /// The files.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
}

/// The files of a workspace that can start a process or widen atto, each kept inert
/// until trusted: `.mcp.json`, the swarm files and the workspace files the launch
/// template runs, and the project's agents.
pub fn project_files(workspace: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for rel in [".mcp.json", ".atto/swarm.yaml", ".attocode/swarm.yaml"] {
        let path = workspace.join(rel);
        if path.is_file() {
            out.push(path);
        }
    }
    out.extend(mcp_files::project_files(workspace));
    if let Ok(loaded) = atto_swarm::SwarmConfig::load(workspace) {
        let runs =
            crate::swarm_trust::template_files(&loaded.config.worker_command.words, workspace);
        out.extend(runs.into_iter().map(|f| f.path));
    }
    if let Ok(entries) = std::fs::read_dir(workspace.join(".atto/agents")) {
        let mut agents: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "md") && p.is_file())
            .collect();
        agents.sort();
        out.extend(agents);
    }
    out
}

/// SHA-256 of `bytes`, as lowercase hex.
pub fn digest(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Whether the user trusted exactly this content of `path`.
pub fn is_trusted(path: &Path, content: &[u8]) -> bool {
    Store::open().is_some_and(|s| s.is_trusted(path, content))
}

/// The trust store: one JSON map in the data dir.
pub struct Store {
    file: PathBuf,
    /// `mcp-trust.json`, the map `.mcp.json` trust was kept in before; read, and folded
    /// into `file` on the first save.
    legacy: PathBuf,
    map: BTreeMap<String, String>,
}

impl Store {
    /// The store of the data dir (`ATTO_HOME`); `None` when there is no data dir.
    pub fn open() -> Option<Store> {
        let dir = atto_store::default_path()
            .ok()
            .and_then(|p| p.parent().map(Path::to_path_buf))?;
        Some(Store::at(&dir))
    }

    /// The store kept in `dir`.
    pub fn at(dir: &Path) -> Store {
        let file = dir.join("project-trust.json");
        let legacy = dir.join("mcp-trust.json");
        let read = |f: &Path| -> BTreeMap<String, String> {
            std::fs::read_to_string(f)
                .ok()
                .and_then(|t| serde_json::from_str(&t).ok())
                .unwrap_or_default()
        };
        let mut map = read(&legacy);
        map.extend(read(&file));
        Store { file, legacy, map }
    }

    /// Whether this content of `path` is the content that was trusted.
    pub fn is_trusted(&self, path: &Path, content: &[u8]) -> bool {
        self.map
            .get(&key(path))
            .is_some_and(|d| *d == digest(content))
    }

    /// Trusts this content of `path` (and only it).
    pub fn trust(&mut self, path: &Path, content: &[u8]) -> Result<(), Failure> {
        self.map.insert(key(path), digest(content));
        self.save()
    }

    /// Revokes the trust in `path`; `false` when it was not trusted.
    pub fn untrust(&mut self, path: &Path) -> Result<bool, Failure> {
        if self.map.remove(&key(path)).is_none() {
            return Ok(false);
        }
        self.save()?;
        Ok(true)
    }

    /// Every trusted path with the digest it was trusted at.
    pub fn entries(&self) -> &BTreeMap<String, String> {
        &self.map
    }

    fn save(&self) -> Result<(), Failure> {
        if let Some(dir) = self.file.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let text =
            serde_json::to_string_pretty(&self.map).map_err(|e| Failure::usage(e.to_string()))?;
        // Written whole to a temporary file and renamed, so a crash never leaves half a map
        // (which would read as "nothing trusted", the safe side, but lose every trust).
        let tmp = self.file.with_extension("json.tmp");
        std::fs::write(&tmp, text)
            .and_then(|()| std::fs::rename(&tmp, &self.file))
            .map_err(|e| {
                Failure::usage(format!(
                    "could not write {}: {e}; nothing was trusted or revoked",
                    self.file.display()
                ))
            })?;
        // The old map is folded in now; keeping it would bring revoked entries back.
        let _ = std::fs::remove_file(&self.legacy);
        Ok(())
    }
}

/// The key of `path`: its canonical form, so `./x` and a symlinked checkout name one file.
fn key(path: &Path) -> String {
    std::fs::canonicalize(path)
        .unwrap_or_else(|_| path.to_path_buf())
        .display()
        .to_string()
}

/// Runs `atto trust`.
pub fn trust(args: &TrustArgs, workspace: &Path) -> Result<ExitCode, Failure> {
    let mut store =
        Store::open().ok_or_else(|| Failure::usage("no data directory (set ATTO_HOME)"))?;
    if args.list {
        for (path, sha) in store.entries() {
            let state = match std::fs::read(path) {
                Ok(now) if digest(&now) == *sha => "trusted",
                Ok(_) => "changed since trusted (inert until trusted again)",
                Err(_) => "missing",
            };
            println!("{path}  {state}");
        }
        return Ok(ExitCode::Ok);
    }
    let files = if args.files.is_empty() {
        project_files(workspace)
    } else {
        args.files
            .iter()
            .map(|f| {
                if f.is_absolute() {
                    f.clone()
                } else {
                    workspace.join(f)
                }
            })
            .collect()
    };
    if files.is_empty() {
        println!(
            "nothing in {} needs trust (no .mcp.json, swarm file or .atto/agents)",
            workspace.display()
        );
        return Ok(ExitCode::Ok);
    }
    for file in files {
        let content = std::fs::read(&file).map_err(|e| {
            Failure::usage(format!(
                "cannot read {}: {e}; nothing was trusted",
                file.display()
            ))
        })?;
        store.trust(&file, &content)?;
        // Trusting an instruction file is accepting what a session's command wrote there.
        instructions::accept(&file);
        println!("trusted {} (until it changes)", file.display());
    }
    Ok(ExitCode::Ok)
}

/// Runs `atto untrust`.
pub fn untrust(args: &UntrustArgs, workspace: &Path) -> Result<ExitCode, Failure> {
    let mut store =
        Store::open().ok_or_else(|| Failure::usage("no data directory (set ATTO_HOME)"))?;
    for file in &args.files {
        let path = if file.is_absolute() {
            file.clone()
        } else {
            workspace.join(file)
        };
        if store.untrust(&path)? {
            println!("no longer trusted: {}", path.display());
        } else {
            println!("{} was not trusted", path.display());
        }
    }
    Ok(ExitCode::Ok)
}

/// The command that trusts `path`, for notices and refusals.
pub fn command_for(path: &Path) -> String {
    let shown = path.display().to_string();
    if shown
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-".contains(c))
    {
        format!("atto trust {shown}")
    } else {
        format!("atto trust '{}'", shown.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn trust_holds_for_the_content_trusted_and_no_other() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("swarm.yaml");
        std::fs::write(&file, "a").unwrap();
        let mut store = Store::at(dir.path());
        assert!(!store.is_trusted(&file, b"a"));
        store.trust(&file, b"a").unwrap();
        let store = Store::at(dir.path());
        assert!(store.is_trusted(&file, b"a"));
        assert!(!store.is_trusted(&file, b"b"));
        // Another spelling of the same file is the same file.
        let dotted = dir.path().join(".").join("swarm.yaml");
        assert!(store.is_trusted(&dotted, b"a"));
    }

    #[test]
    fn the_old_mcp_map_is_read_and_folded_in() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(".mcp.json");
        std::fs::write(&file, "{}").unwrap();
        let old = BTreeMap::from([(key(&file), digest(b"{}"))]);
        std::fs::write(
            dir.path().join("mcp-trust.json"),
            serde_json::to_string(&old).unwrap(),
        )
        .unwrap();
        let mut store = Store::at(dir.path());
        assert!(store.is_trusted(&file, b"{}"));
        assert!(store.untrust(&file).unwrap());
        // Revoked stays revoked: the old map does not bring it back.
        assert!(!Store::at(dir.path()).is_trusted(&file, b"{}"));
        assert!(!dir.path().join("mcp-trust.json").exists());
    }

    #[test]
    fn a_bare_atto_trust_covers_the_script_the_launch_template_runs() {
        let dir = tempfile::tempdir().unwrap();
        let ws = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(ws.join(".atto/agents")).unwrap();
        std::fs::write(
            ws.join(".atto/swarm.yaml"),
            "worker_command: [sh, launch.sh, \"{args}\"]\n",
        )
        .unwrap();
        std::fs::write(ws.join("launch.sh"), "exec \"$@\"\n").unwrap();
        std::fs::write(ws.join(".atto/agents/a.md"), "---\n---\n").unwrap();
        std::fs::write(ws.join("AGENTS.md"), "rules").unwrap();
        assert_eq!(
            project_files(&ws),
            vec![
                ws.join(".atto/swarm.yaml"),
                ws.join("launch.sh"),
                ws.join(".atto/agents/a.md")
            ]
        );
    }

    #[test]
    fn the_trust_command_quotes_what_a_shell_would_split() {
        assert_eq!(
            command_for(Path::new("/w/.atto/swarm.yaml")),
            "atto trust /w/.atto/swarm.yaml"
        );
        assert_eq!(
            command_for(Path::new("/my repo/it's")),
            r"atto trust '/my repo/it'\''s'"
        );
    }
}
