//! How dangerous an MCP tool is. Annotations are the server's claims: a tool is
//! read-only only when it says `readOnlyHint: true` *and* the user has not said otherwise
//! (`tools.writes`, `trust_annotations = false`). A tool that says nothing is unknown,
//! and unknown is treated as a write: it asks in interactive mode, is queued in plan mode
//! and refused in review mode.

use atto_protocol::DangerLevel;
use rmcp::model::ToolAnnotations;

use crate::config::ToolsConfig;

/// atto's judgement of one tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Judgement {
    /// The gate's danger level.
    pub danger: DangerLevel,
    /// Whether calls run without changing anything.
    pub read_only: bool,
}

/// Judges `tool` (as the server spells it) from its annotations and the user's config.
pub fn judge(tool: &str, annotations: Option<&ToolAnnotations>, user: &ToolsConfig) -> Judgement {
    let believed = user.trust_annotations.unwrap_or(true) && !user.writes.iter().any(|w| w == tool);
    let hint = |h: Option<bool>| if believed { h } else { None };
    let read_only = hint(annotations.and_then(|a| a.read_only_hint)) == Some(true);
    if read_only {
        return Judgement {
            danger: DangerLevel::Safe,
            read_only: true,
        };
    }
    let destructive = annotations.and_then(|a| a.destructive_hint);
    let idempotent = annotations.and_then(|a| a.idempotent_hint);
    // A write the server calls non-destructive (additive) is medium; a destructive one,
    // or one that says nothing, is high. Idempotence alone does not lower it.
    let danger = match (hint(destructive), hint(idempotent)) {
        (Some(false), _) => DangerLevel::Medium,
        _ => DangerLevel::High,
    };
    Judgement {
        danger,
        read_only: false,
    }
}

/// The annotations as `readOnlyHint=true` words, for `/mcp`.
pub fn words(annotations: Option<&ToolAnnotations>) -> Vec<String> {
    let Some(a) = annotations else {
        return Vec::new();
    };
    [
        ("readOnlyHint", a.read_only_hint),
        ("destructiveHint", a.destructive_hint),
        ("idempotentHint", a.idempotent_hint),
        ("openWorldHint", a.open_world_hint),
    ]
    .into_iter()
    .filter_map(|(k, v)| v.map(|v| format!("{k}={v}")))
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ann(read_only: Option<bool>, destructive: Option<bool>) -> ToolAnnotations {
        let mut a = ToolAnnotations::default();
        a.read_only_hint = read_only;
        a.destructive_hint = destructive;
        a
    }

    #[test]
    fn the_server_claims_and_the_user_decides() {
        let none = ToolsConfig::default();
        let cases = [
            (Some(ann(Some(true), None)), &none, DangerLevel::Safe, true),
            (
                Some(ann(Some(false), Some(false))),
                &none,
                DangerLevel::Medium,
                false,
            ),
            (
                Some(ann(Some(false), Some(true))),
                &none,
                DangerLevel::High,
                false,
            ),
            (Some(ann(None, None)), &none, DangerLevel::High, false),
            (None, &none, DangerLevel::High, false),
        ];
        for (a, user, danger, read_only) in cases {
            let j = judge("t", a.as_ref(), user);
            assert_eq!((j.danger, j.read_only), (danger, read_only), "{a:?}");
        }
        let says_writes = ToolsConfig {
            writes: vec!["t".into()],
            ..ToolsConfig::default()
        };
        assert!(!judge("t", Some(&ann(Some(true), None)), &says_writes).read_only);
        assert!(judge("u", Some(&ann(Some(true), None)), &says_writes).read_only);
        let distrust = ToolsConfig {
            trust_annotations: Some(false),
            ..ToolsConfig::default()
        };
        let j = judge("t", Some(&ann(Some(true), Some(false))), &distrust);
        assert_eq!((j.danger, j.read_only), (DangerLevel::High, false));
    }
}
