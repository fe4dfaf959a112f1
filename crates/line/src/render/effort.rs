//! The answer to `/effort` as text: the level requests now carry, or why they stay as
//! they were.

use atto_protocol::ReasoningEffort;

/// The line for an `effort_changed` event.
pub(super) fn line(effort: Option<ReasoningEffort>, supported: bool, model: &str) -> String {
    if !supported {
        return format!(
            "reasoning effort: {model} takes no effort setting, so its requests stay unchanged"
        );
    }
    match effort {
        Some(effort) => format!(
            "reasoning effort: {} for {model}'s next requests",
            effort.as_str()
        ),
        None => format!("reasoning effort: {model}'s default (none sent)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_says_what_requests_carry() {
        assert_eq!(
            line(Some(ReasoningEffort::High), true, "o3"),
            "reasoning effort: high for o3's next requests"
        );
        assert_eq!(
            line(None, true, "o3"),
            "reasoning effort: o3's default (none sent)"
        );
        assert!(line(None, false, "gpt-4o").contains("gpt-4o takes no effort setting"));
    }
}
