//! Reading permission modes, including codewhale's approval-mode names.

use atto_protocol::PermissionMode;

/// A permission mode plus codewhale's `never`, which turns every ask into a denial.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PermissionSetting {
    /// The mode.
    pub mode: PermissionMode,
    /// Whether calls that would ask are denied instead (`approval_mode = never`).
    pub deny_asks: bool,
}

impl Default for PermissionSetting {
    fn default() -> Self {
        Self {
            mode: PermissionMode::Interactive,
            deny_asks: false,
        }
    }
}

/// The config spelling of a permission mode (what [`parse_permission`] reads back).
pub fn permission_name(mode: PermissionMode) -> &'static str {
    match mode {
        PermissionMode::Strict => "strict",
        PermissionMode::Interactive => "interactive",
        PermissionMode::AutoSafe => "auto-safe",
        PermissionMode::Yolo => "yolo",
    }
}

/// Parses `strict`, `interactive`, `auto-safe`, `yolo`, and codewhale's approval modes
/// `suggest` (interactive), `auto` (auto-safe) and `never` (interactive, asks denied).
pub fn parse_permission(text: &str) -> Result<PermissionSetting, String> {
    let mode = |mode| PermissionSetting {
        mode,
        deny_asks: false,
    };
    match text.trim().to_ascii_lowercase().as_str() {
        "strict" => Ok(mode(PermissionMode::Strict)),
        "interactive" | "suggest" => Ok(mode(PermissionMode::Interactive)),
        "auto-safe" | "auto_safe" | "autosafe" | "auto" => Ok(mode(PermissionMode::AutoSafe)),
        "yolo" => Ok(mode(PermissionMode::Yolo)),
        "never" => Ok(PermissionSetting {
            mode: PermissionMode::Interactive,
            deny_asks: true,
        }),
        other => Err(format!(
            "unknown permission mode '{other}' (expected strict, interactive, auto-safe or \
             yolo; or an approval mode: suggest, auto, never)"
        )),
    }
}

/// The stricter of two modes (for project config, which may only tighten).
pub fn stricter(a: PermissionMode, b: PermissionMode) -> PermissionMode {
    let rank = |m| match m {
        PermissionMode::Strict => 0,
        PermissionMode::Interactive => 1,
        PermissionMode::AutoSafe => 2,
        PermissionMode::Yolo => 3,
    };
    if rank(a) <= rank(b) { a } else { b }
}
