//! The closure report a parent receives from a child, in the seed's format: Summary,
//! Files Modified, Key Decisions, Remaining Work, Confidence. The child writes it; atto
//! fills "Files Modified" from the checkpoints (what the child claimed but did not
//! change is named as such) and marks a report of a child it stopped.

use std::fmt::Write as _;

/// What the child is told about its report, at the end of its prompt.
pub(crate) const INSTRUCTIONS: &str = "When you are done, end with a closure report in exactly \
     this format:\n\n## Summary\nWhat was accomplished (and what you found)\n\n## Files \
     Modified\n- path/to/file\n\n## Key Decisions\n- Chose X over Y because ...\n\n## \
     Remaining Work\n- What is still to do (or \"none\")\n\n## Confidence: 0.0-1.0";

/// What atto knows about how a child ended.
pub(crate) struct Ending<'a> {
    /// The child's last answer text.
    pub text: &'a str,
    /// Files it changed, from the checkpoints.
    pub files: &'a [String],
    /// Why atto stopped it, when it did not finish by itself.
    pub forced: Option<&'a str>,
    /// Header facts: who, how much.
    pub header: String,
}

/// The report as the parent receives it.
pub(crate) fn render(ending: &Ending<'_>) -> String {
    let sections = sections(ending.text);
    let get = |name: &str| {
        sections
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, body)| body.trim())
            .filter(|b| !b.is_empty())
    };
    let mut out = ending.header.clone();
    out.push('\n');
    if let Some(why) = ending.forced {
        let _ = writeln!(
            out,
            "STOPPED BY ATTO before the subagent finished: {why}. What follows is what it had \
             produced by then."
        );
    }
    let summary = get("Summary").unwrap_or_else(|| {
        let text = ending.text.trim();
        if text.is_empty() {
            "(the subagent wrote no answer)"
        } else {
            text
        }
    });
    let _ = write!(out, "\n## Summary\n{summary}\n\n## Files Modified\n");
    if ending.files.is_empty() {
        out.push_str("- none (from the checkpoints)\n");
    } else {
        for file in ending.files {
            let _ = writeln!(out, "- {file}");
        }
    }
    let claimed = unchanged_claims(ending.text, ending.files);
    if !claimed.is_empty() {
        let _ = writeln!(
            out,
            "(the subagent also named {}, which the checkpoints show unchanged)",
            claimed.join(", ")
        );
    }
    let decisions = get("Key Decisions").unwrap_or("- (not reported)");
    let _ = write!(
        out,
        "\n## Key Decisions\n{decisions}\n\n## Remaining Work\n"
    );
    match (get("Remaining Work"), ending.forced) {
        (Some(work), None) => out.push_str(work),
        (Some(work), Some(_)) => {
            let _ = write!(out, "{work}\n- (stopped early: more may remain)");
        }
        (None, Some(_)) => out.push_str("- unknown: it was stopped before it reported"),
        (None, None) => out.push_str("- (not reported)"),
    }
    let confidence = confidence(ending.text);
    let _ = write!(
        out,
        "\n\n## Confidence: {}",
        confidence.map_or_else(|| "not reported".to_owned(), |c| format!("{c:.2}"))
    );
    out
}

/// The files the child's "Files Modified" names that the checkpoints show unchanged
/// (`changed`): a claim atto cannot back.
pub(crate) fn unchanged_claims(text: &str, changed: &[String]) -> Vec<String> {
    sections(text)
        .into_iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("Files Modified"))
        .map(|(_, body)| {
            body.lines()
                .filter_map(|l| l.trim().strip_prefix("- "))
                .map(|l| l.trim().trim_matches('`'))
                .filter(|l| !l.is_empty() && !l.starts_with("none"))
                .filter(|l| !changed.iter().any(|f| f == l))
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// The `## Heading` sections of `text`, in order (a `## Confidence: x` line is one too).
fn sections(text: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for line in text.lines() {
        if let Some(heading) = line.trim_start().strip_prefix("## ") {
            let name = heading.split(':').next().unwrap_or(heading).trim();
            out.push((name.to_owned(), String::new()));
        } else if let Some((_, body)) = out.last_mut() {
            body.push_str(line);
            body.push('\n');
        }
    }
    out
}

/// The confidence the child gave, within 0–1.
fn confidence(text: &str) -> Option<f64> {
    text.lines().rev().find_map(|line| {
        let rest = line.trim().trim_start_matches('#').trim();
        let value = rest
            .strip_prefix("Confidence:")
            .or_else(|| rest.strip_prefix("**Confidence:**"))?;
        let n: f64 = value.trim().trim_matches('*').trim().parse().ok()?;
        (0.0..=1.0).contains(&n).then_some(n)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const CHILD: &str = "I looked around.\n\n## Summary\nFound two handlers.\n\n## Files \
                         Modified\n- src/a.rs\n- src/b.rs\n\n## Key Decisions\n- kept the API\n\n\
                         ## Remaining Work\n- none\n\n## Confidence: 0.85";

    #[test]
    fn files_modified_come_from_the_checkpoints_and_unbacked_claims_are_named() {
        let files = ["src/a.rs".to_owned()];
        let report = render(&Ending {
            text: CHILD,
            files: &files,
            forced: None,
            header: "Subagent x".into(),
        });
        assert!(
            report.contains("## Summary\nFound two handlers."),
            "{report}"
        );
        assert!(
            report.contains("## Files Modified\n- src/a.rs\n"),
            "{report}"
        );
        assert!(
            report.contains("also named src/b.rs, which the checkpoints show unchanged"),
            "{report}"
        );
        assert!(
            report.contains("## Key Decisions\n- kept the API"),
            "{report}"
        );
        assert!(report.contains("## Confidence: 0.85"), "{report}");
        assert!(!report.contains("STOPPED"), "{report}");
    }

    #[test]
    fn a_forced_stop_is_marked_and_a_missing_report_is_filled_honestly() {
        let report = render(&Ending {
            text: "half way through the scan",
            files: &[],
            forced: Some("the time limit (300 s)"),
            header: "Subagent x".into(),
        });
        assert!(report.contains("STOPPED BY ATTO"), "{report}");
        assert!(
            report.contains("## Summary\nhalf way through the scan"),
            "{report}"
        );
        assert!(report.contains("- none (from the checkpoints)"), "{report}");
        assert!(
            report.contains("unknown: it was stopped before it reported"),
            "{report}"
        );
        assert!(report.contains("## Confidence: not reported"), "{report}");
    }

    #[test]
    fn a_confidence_outside_zero_to_one_is_not_believed() {
        assert_eq!(confidence("## Confidence: 7"), None);
        assert_eq!(confidence("**Confidence:** 0.5"), Some(0.5));
    }
}
