//! Resuming a saved session: its messages, and the agent mode, permission mode and model
//! it continues with (and what the user is told about them).

use std::path::Path;

use atto_store::SessionRef;

use super::error::{Retry, SetupError};
use crate::permissions;

/// How a session begins: its id, the thread and history it continues (when resumed), the
/// modes it runs in and what the user is told about them.
pub(super) struct Begun {
    pub session_id: String,
    pub resume: Option<(String, Vec<atto_protocol::Message>)>,
    pub mode: atto_protocol::AgentMode,
    pub permission: atto_policy::gate::PermissionSetting,
    pub notices: Vec<String>,
}

/// A new session, or the saved one `launch` resumes with the modes and model it last ran
/// with (`model` is the one this run started on).
pub(super) fn begin(
    launch: &super::Launch<'_>,
    store: Option<&atto_store::Store>,
    permission: atto_policy::gate::PermissionSetting,
    model: &str,
    models: &mut atto_core::models::ModelSettings,
) -> Result<Begun, SetupError> {
    let Some(which) = &launch.resume else {
        return Ok(Begun {
            session_id: uuid::Uuid::now_v7().to_string(),
            resume: None,
            mode: launch.mode.unwrap_or(atto_protocol::AgentMode::Build),
            permission,
            notices: Vec::new(),
        });
    };
    let Some(store) = store else {
        return Err(SetupError::fix(
            "cannot resume: the session database is not available (see the warning \
             above)"
                .to_owned(),
        ));
    };
    let saved = saved_history(store, &launch.workspace, which)?;
    let restored = restore_modes(&saved.row, launch.mode, &launch.permissions, permission);
    let mut notices = restored.notices;
    restore_model(&saved.row, model, models, &mut notices);
    Ok(Begun {
        session_id: saved.row.id,
        resume: Some((saved.row.current_thread, saved.history)),
        mode: restored.mode,
        permission: restored.permission,
        notices,
    })
}

/// A saved session of this workspace: its row and its current thread's messages.
struct Saved {
    row: atto_store::SessionRow,
    history: Vec<atto_protocol::Message>,
}

/// The modes a resumed session starts in, and what to say about them.
struct RestoredModes {
    mode: atto_protocol::AgentMode,
    permission: atto_policy::gate::PermissionSetting,
    notices: Vec<String>,
}

/// A resumed session keeps the model its `/model` pinned (or its routing), unless this
/// run was started on another model than the session's.
fn restore_model(
    row: &atto_store::SessionRow,
    now: &str,
    models: &mut atto_core::models::ModelSettings,
    notices: &mut Vec<String>,
) {
    let Some(pinned) = row.pinned_model.as_deref() else {
        return;
    };
    if row.model.as_deref().is_some_and(|m| m != now) && !models.auto {
        notices.push(format!(
            "this session had {pinned} pinned with /model; the model given now ({now}) wins"
        ));
        return;
    }
    if pinned == "auto" {
        if !models.routes.is_empty() {
            models.auto = true;
            notices.push("resumed with each turn routed by complexity (/model auto)".to_owned());
        }
    } else {
        models.pinned = Some(pinned.to_owned());
        notices.push(format!(
            "resumed with {pinned} pinned, as the session last ran (/model NAME changes it)"
        ));
    }
}

/// A resume continues in the agent mode the session last ran in, and in its permission
/// mode when that was stricter than this invocation's; a flag given now wins, and either
/// way the user is told.
fn restore_modes(
    row: &atto_store::SessionRow,
    flag: Option<atto_protocol::AgentMode>,
    flags: &permissions::PermissionFlags,
    now: atto_policy::gate::PermissionSetting,
) -> RestoredModes {
    use atto_protocol::AgentMode;
    let mut notices = Vec::new();
    let saved = row
        .agent_mode
        .as_deref()
        .and_then(|m| atto_policy::gate::parse_agent_mode(m).ok())
        .map(|(mode, _)| mode);
    let mode = match (flag, saved) {
        (Some(flag), Some(saved)) if flag != saved => {
            notices.push(format!(
                "this session last ran in {} mode; --mode {} given now wins",
                saved.as_str(),
                flag.as_str()
            ));
            flag
        }
        (Some(flag), _) => flag,
        (None, Some(saved)) => {
            if saved != AgentMode::Build {
                notices.push(format!(
                    "resumed in {} mode, as the session last ran (/mode build to leave it)",
                    saved.as_str()
                ));
            }
            saved
        }
        (None, None) => AgentMode::Build,
    };
    let mut permission = now;
    if let Some(saved) = row
        .permission_mode
        .as_deref()
        .and_then(|p| atto_policy::gate::parse_permission(p).ok())
        && atto_policy::gate::stricter(saved.mode, now.mode) == saved.mode
        && saved.mode != now.mode
    {
        let saved_name = atto_policy::gate::permission_name(saved.mode);
        let now_name = atto_policy::gate::permission_name(now.mode);
        if flags.permission.is_some() || flags.yolo {
            notices.push(format!(
                "this session last ran with permission {saved_name}; the {now_name} given now wins"
            ));
        } else {
            notices.push(format!(
                "resumed with permission {saved_name}, as the session last ran (stricter than \
                 {now_name}; --permission changes it)"
            ));
            permission.mode = saved.mode;
        }
    }
    RestoredModes {
        mode,
        permission,
        notices,
    }
}

/// The messages of a saved session's current thread (`atto acp`'s `session/load` replays
/// them), by id or unique prefix; the session must belong to `workspace`.
pub fn saved_messages(
    workspace: &Path,
    id: &str,
) -> Result<Vec<atto_protocol::Message>, SetupError> {
    let store = permissions::open_store().map_err(|e| match e {
        permissions::OpenFailure::Busy(m) => SetupError(m, Retry::Later),
        permissions::OpenFailure::Unusable(m) => SetupError::fix(format!(
            "cannot load session {id}: the session database is not available ({m})"
        )),
    })?;
    saved_history(&store, workspace, &SessionRef::Id(id.to_owned())).map(|saved| saved.history)
}

/// A saved session of this workspace, with its current thread's messages.
fn saved_history(
    store: &atto_store::Store,
    workspace: &Path,
    which: &SessionRef,
) -> Result<Saved, SetupError> {
    let here = workspace.display().to_string();
    let row = store
        .find_session_blocking(&here, which)
        .map_err(|e| SetupError::fix(e.to_string()))?;
    if row.workspace != here {
        return Err(SetupError::fix(format!(
            "session {} belongs to {}; run atto there to resume it",
            row.id, row.workspace
        )));
    }
    let bodies = store
        .thread_history_blocking(&row.current_thread)
        .map_err(|e| SetupError::fix(e.to_string()))?;
    let mut history = Vec::with_capacity(bodies.len());
    for (n, body) in bodies.iter().enumerate() {
        let message = serde_json::from_str(body).map_err(|e| {
            SetupError::fix(format!(
                "message {} of session {} cannot be read ({e}); the session was not resumed",
                n + 1,
                row.id
            ))
        })?;
        history.push(message);
    }
    Ok(Saved { row, history })
}
