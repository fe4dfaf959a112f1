//! The MCP side of project trust: the workspace files a project server's command runs
//! (`python ./tools/server.py`, `node srv.js`, `./run.sh`) are trusted with `.mcp.json`
//! and pinned to that content, as a swarm launch template's files are (found by the same
//! `swarm_trust::template_files`): servers run outside any sandbox, and the workspace is
//! where sandboxed commands write. A server whose file is not trusted as it is does not
//! start, and says which file and the command that trusts it; each start checks the pin
//! again (`atto_mcp::PinnedFile`). Does not decide about `.mcp.json` itself (`mcp` does,
//! from the store).

use std::path::{Path, PathBuf};

use atto_mcp::{PinnedFile, ServerConfig, Transport};

use super::{Store, command_for, is_trusted};
use crate::Failure;

/// The workspace files `server`'s command names, with their content read once.
pub fn server_files(server: &ServerConfig, workspace: &Path) -> Vec<PinnedFile> {
    let Transport::Stdio {
        command, args, cwd, ..
    } = &server.transport
    else {
        return Vec::new();
    };
    let words: Vec<String> = std::iter::once(command.clone())
        .chain(args.iter().cloned())
        .collect();
    let base = cwd
        .as_ref()
        .map_or(workspace.to_path_buf(), |c| workspace.join(c));
    crate::swarm_trust::template_files(&words, &base)
}

/// The servers of a trusted `.mcp.json`, each with its workspace files pinned when all are
/// trusted as they are; those with a file that is not, with why they do not start.
pub fn pin(
    servers: Vec<ServerConfig>,
    workspace: &Path,
) -> (Vec<ServerConfig>, Vec<(ServerConfig, String)>) {
    let mut pinned = Vec::new();
    let mut refused = Vec::new();
    for mut server in servers {
        let files = server_files(&server, workspace);
        let untrusted: Vec<&PinnedFile> = files
            .iter()
            .filter(|f| !is_trusted(&f.path, &f.content))
            .collect();
        if untrusted.is_empty() {
            server.pinned = files;
            pinned.push(server);
            continue;
        }
        let names: Vec<String> = untrusted
            .iter()
            .map(|f| f.path.display().to_string())
            .collect();
        let commands: Vec<String> = untrusted.iter().map(|f| command_for(&f.path)).collect();
        let why = format!(
            "it runs {} from the workspace, which is not trusted as it is (changed since the \
             trust, or never trusted); it was not started. Read it, then `{}`",
            names.join(", "),
            commands.join("` and `")
        );
        refused.push((server, why));
    }
    (pinned, refused)
}

/// `atto mcp trust`: trusts `.mcp.json` as `text` and the workspace files its servers run
/// as they are now; the files trusted with it.
pub fn trust(
    path: &Path,
    text: &str,
    servers: &[ServerConfig],
    workspace: &Path,
) -> Result<Vec<PathBuf>, Failure> {
    let mut store =
        Store::open().ok_or_else(|| Failure::usage("no data directory (set ATTO_HOME)"))?;
    store.trust(path, text.as_bytes())?;
    let mut files = Vec::new();
    for server in servers {
        for file in server_files(server, workspace) {
            store.trust(&file.path, &file.content)?;
            if !files.contains(&file.path) {
                files.push(file.path);
            }
        }
    }
    Ok(files)
}

/// The workspace files the servers of the workspace's `.mcp.json` run, for `atto trust`.
pub fn project_files(workspace: &Path) -> Vec<PathBuf> {
    let path = workspace.join(".mcp.json");
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Vec::new();
    };
    let Ok(servers) = atto_mcp::parse_mcp_json(&text, &path, ".mcp.json (project)") else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = Vec::new();
    for server in &servers {
        for file in server_files(server, workspace) {
            if !out.contains(&file.path) {
                out.push(file.path);
            }
        }
    }
    out
}
