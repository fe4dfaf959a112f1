//! How learnings read as text in the front ends: a line per learning for `/learnings`, the
//! whole of one for `/learnings show N`, and one-liners for a proposal, a change and the
//! learnings a turn recalled. The line session prints them; the terminal UI shows the same
//! words. Decides nothing and styles nothing.

use atto_protocol::{Learning, LearningRef, LearningStatus};

/// What `/learnings` shows when there are none.
pub const NO_LEARNINGS: &str = "no learnings here yet (the model proposes them, atto proposes \
     workarounds it sees, and /learn \"text\" adds your own)";

/// How to review a waiting proposal.
pub const REVIEW_HINT: &str = "/learnings validate N keeps it, /learnings reject N drops it, \
     /learnings show N shows it (outside a session: atto learnings validate N, ...)";

/// `#12 [validated] WORKAROUND 0.80  description  (used 3, helpful 1)`.
pub fn line(l: &Learning) -> String {
    format!(
        "#{} [{}] {} {:.2}  {}  (used {}, helpful {}{})",
        l.id,
        l.status.as_str(),
        l.kind.label(),
        l.confidence,
        one_line(&l.description),
        l.used,
        l.helpful,
        match l.scope {
            atto_protocol::LearningScope::User => ", every project",
            atto_protocol::LearningScope::Project => "",
        }
    )
}

/// Every field of one learning, a line each.
pub fn detail_lines(l: &Learning) -> Vec<String> {
    let mut out = vec![
        format!(
            "learning #{} — {} ({})",
            l.id,
            l.kind.label(),
            l.status.as_str()
        ),
        format!("  {}", one_line(&l.description)),
    ];
    if !l.details.is_empty() {
        for detail in l.details.lines() {
            out.push(format!("  {detail}"));
        }
    }
    let list = |name: &str, words: &[String]| {
        (!words.is_empty()).then(|| format!("  {name}: {}", words.join(", ")))
    };
    out.extend(list("keywords", &l.keywords));
    out.extend(list("actions", &l.actions));
    out.extend(list("categories", &l.categories));
    out.push(format!(
        "  confidence {:.2} · scope {} · used {} · helpful {}",
        l.confidence,
        l.scope.as_str(),
        l.used,
        l.helpful
    ));
    let mut source = format!("  proposed by {}", l.source.as_str().replace('_', " "));
    if let Some(what) = &l.source_ref {
        source.push_str(&format!(" ({what})"));
    }
    if let Some(session) = &l.session_id {
        source.push_str(&format!(" in session {}", &session[..session.len().min(8)]));
    }
    out.push(source);
    out
}

/// The lines answering `/learnings` or `/learnings show N`.
pub fn list_lines(learnings: &[Learning], detailed: bool) -> Vec<String> {
    if learnings.is_empty() {
        return vec![NO_LEARNINGS.to_owned()];
    }
    if detailed {
        return learnings.iter().flat_map(detail_lines).collect();
    }
    let mut out: Vec<String> = learnings.iter().map(line).collect();
    if learnings
        .iter()
        .any(|l| l.status == LearningStatus::Proposed)
    {
        out.push(REVIEW_HINT.to_owned());
    }
    out
}

/// A proposal, as announced: waiting for the user, or kept at once.
pub fn proposed_line(l: &Learning) -> String {
    match l.status {
        LearningStatus::Proposed => format!(
            "learning #{} proposed ({}, confidence {:.2}): {}",
            l.id,
            l.kind.label(),
            l.confidence,
            one_line(&l.description)
        ),
        _ => format!(
            "learning #{} kept ({}, {}): {}",
            l.id,
            l.kind.label(),
            l.status.as_str(),
            one_line(&l.description)
        ),
    }
}

/// A change to a learning.
pub fn updated_line(l: &Learning) -> String {
    format!(
        "learning #{} is {} (confidence {:.2}): {}",
        l.id,
        l.status.as_str(),
        l.confidence,
        one_line(&l.description)
    )
}

/// The learnings a turn recalled.
pub fn used_line(learnings: &[LearningRef]) -> String {
    let names: Vec<String> = learnings
        .iter()
        .map(|l| format!("#{} {}", l.id, one_line(&l.description)))
        .collect();
    format!(
        "recalled {} learning(s): {}",
        learnings.len(),
        names.join("; ")
    )
}

/// The answers the Y/N/S review takes, in words.
pub const REVIEW_KEYS: &str = "y validate · n reject · s skip for now";

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
