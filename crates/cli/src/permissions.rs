//! Putting the permission setting and the grants of a session together from flags, the
//! user config, the project config (which may only tighten) and the database.

use std::path::Path;

use atto_policy::gate::{Action, Grant, PermissionSetting, Rule, parse_permission, stricter};
use atto_store::Store;

use crate::setup::error::SetupError;
use atto_config::{Config, ProjectConfig};
use atto_mcp::PermissionLists;

/// What the command line says about permissions.
#[derive(Debug, Default, Clone)]
pub struct PermissionFlags {
    pub permission: Option<String>,
    pub yolo: bool,
    pub trust: bool,
}

/// The permission setting: `--yolo`, else `--permission`, else the config's
/// `permission_mode`, else its `approval_mode`, else interactive; then tightened by the
/// project config.
pub fn setting(
    flags: &PermissionFlags,
    config: &Config,
    project: &ProjectConfig,
) -> Result<PermissionSetting, SetupError> {
    let chosen = if flags.yolo {
        Some("yolo".to_owned())
    } else {
        flags
            .permission
            .clone()
            .or_else(|| config.permission_mode.clone())
            .or_else(|| config.approval_mode.clone())
    };
    let mut setting = match chosen {
        Some(text) => parse_permission(&text).map_err(SetupError::fix)?,
        None => PermissionSetting::default(),
    };
    for text in [&project.permission_mode, &project.approval_mode]
        .into_iter()
        .flatten()
    {
        let tighter = parse_permission(text)
            .map_err(|e| SetupError::fix(format!("in .atto/config.toml: {e}")))?;
        let mode = stricter(setting.mode, tighter.mode);
        if mode != tighter.mode {
            // Said once, at start: a project cannot widen what atto does.
            eprintln!(
                "atto: warning: .atto/config.toml asks for {text:?}, which is looser than this \
                 session's {}; a project config may only tighten permissions, so it was \
                 ignored",
                atto_policy::gate::permission_name(setting.mode)
            );
        }
        setting.mode = mode;
        setting.deny_asks |= tighter.deny_asks;
    }
    Ok(setting)
}

/// Config rules (user: allow/ask/deny; project: ask/deny) and the stored grants for
/// this workspace. A malformed config rule is an error; a malformed stored grant is
/// skipped with a warning (it was valid when saved, so the format must have changed).
pub fn grants(
    config: &Config,
    project: &ProjectConfig,
    store: Option<&Store>,
    workspace: &Path,
) -> Result<(Vec<Grant>, Vec<String>), SetupError> {
    let mut grants = Vec::new();
    let mut warnings = Vec::new();
    add_rules(&mut grants, &config.permissions, "user config")?;
    add_rules(&mut grants, &project.permissions, "project config")?;
    if let Some(store) = store {
        match store.grants_for_blocking(&workspace.display().to_string()) {
            Ok(rows) => {
                for row in rows {
                    match Rule::parse(&row.rule) {
                        Ok(rule) => grants.push(Grant {
                            id: Some(row.id),
                            rule,
                            action: action(&row.decision),
                            origin: format!("{} grant #{}", row.scope, row.id),
                        }),
                        Err(err) => {
                            warnings.push(format!("skipping stored grant #{}: {err}", row.id))
                        }
                    }
                }
            }
            Err(err) => warnings.push(format!("could not read saved grants: {err}")),
        }
    }
    Ok((grants, warnings))
}

fn add_rules(
    grants: &mut Vec<Grant>,
    rules: &PermissionLists,
    origin: &str,
) -> Result<(), SetupError> {
    for (action, list) in [
        ("allow", &rules.allow),
        ("ask", &rules.ask),
        ("deny", &rules.deny),
    ] {
        for text in list {
            grants.push(config_grant(action, text, origin.to_owned())?);
        }
    }
    Ok(())
}

/// A rule of an allow / ask / deny list in a config (`[permissions]`, an MCP server's
/// `tools.permissions`) as a grant; a malformed rule is an error naming `origin`.
pub fn config_grant(action_name: &str, text: &str, origin: String) -> Result<Grant, SetupError> {
    let rule = Rule::parse(text).map_err(|e| SetupError::fix(format!("{origin}: {e}")))?;
    Ok(Grant {
        id: None,
        rule,
        action: action(action_name),
        origin,
    })
}

/// `allow`, `ask`, else deny: what is not known to allow or ask refuses.
fn action(name: &str) -> Action {
    match name {
        "allow" => Action::Allow,
        "ask" => Action::Ask,
        _ => Action::Deny,
    }
}

/// Why the database could not be opened.
pub enum OpenFailure {
    /// Busy or failing right now (another process holds it past the busy timeout, an I/O
    /// error): a run must not go on without its records, so it stops (exit 75).
    Busy(String),
    /// Missing, unusable or damaged: said, and the session runs without saved sessions,
    /// grants and the audit log.
    Unusable(String),
}

impl std::fmt::Display for OpenFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OpenFailure::Busy(m) | OpenFailure::Unusable(m) => f.write_str(m),
        }
    }
}

/// Opens the database, or says why not: sessions, grants and the audit log are then off
/// for this run, loudly; nothing is deleted. A damaged database can be moved aside: in a
/// terminal atto offers it, elsewhere the message says how.
pub fn open_store() -> Result<Store, OpenFailure> {
    let unusable = |e: &dyn std::fmt::Display| OpenFailure::Unusable(e.to_string());
    let path = atto_store::default_path().map_err(|e| unusable(&e))?;
    match Store::open(&path) {
        Ok(store) => Ok(store),
        Err(err @ atto_store::StoreError::Corrupt { .. }) => {
            if offer_move_aside(&err) {
                let moved = atto_store::move_aside(&path).map_err(|e| unusable(&e))?;
                eprintln!("atto: moved the damaged database to {}", moved.display());
                Store::open(&path).map_err(|e| unusable(&e))
            } else {
                Err(OpenFailure::Unusable(format!(
                    "{err} (`atto store move-aside` keeps it under a new name and starts fresh)"
                )))
            }
        }
        // Held by other processes past every wait, the disk full, or failing I/O: for
        // now, not for good.
        Err(err)
            if err.is_unavailable()
                || err.kind() == atto_store::StoreErrorKind::Full
                || matches!(err, atto_store::StoreError::Io { .. }) =>
        {
            Err(OpenFailure::Busy(err.to_string()))
        }
        Err(err) => Err(unusable(&err)),
    }
}

/// Asks on the terminal whether to move a damaged database aside; never asks without one.
fn offer_move_aside(err: &atto_store::StoreError) -> bool {
    use std::io::{BufRead as _, IsTerminal as _, Write as _};
    if !std::io::stdin().is_terminal() || !std::io::stderr().is_terminal() {
        return false;
    }
    eprint!("atto: {err}\nMove it aside (kept, renamed) and start a fresh database? [y/N] ");
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    let _ = std::io::stdin().lock().read_line(&mut answer);
    matches!(answer.trim(), "y" | "Y" | "yes")
}

/// The one protected-path list (atto-policy's) with atto's config and data directories
/// as this binary computes them: the gate, the classifier and the sandbox's read-only
/// mounts all use it.
pub fn protected_paths() -> atto_policy::protected::ProtectedPaths {
    atto_policy::protected::ProtectedPaths::new(
        protected_dirs()
            .into_iter()
            .map(std::path::PathBuf::from)
            .collect(),
    )
}

/// atto's config and data directories, whose writes always ask, even with trust on.
pub fn protected_dirs() -> Vec<String> {
    let mut dirs = Vec::new();
    if let Some(config) = atto_config::default_path()
        && let Some(dir) = config.parent()
    {
        dirs.push(dir.display().to_string());
    }
    if let Ok(db) = atto_store::default_path()
        && let Some(dir) = db.parent()
    {
        dirs.push(dir.display().to_string());
    }
    dirs
}
