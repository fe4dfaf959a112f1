//! What a swarm's events read as on a terminal: one line per event (none for those a person
//! need not see), the plan shown before its y/N, a stuck task with its compile errors.

use atto_present::swarm as present;
use atto_protocol::quality::CompileError;
use atto_protocol::swarm::{SwarmEvent, SwarmTask};
use atto_protocol::{ApprovalDecision, ApprovalRequest};

/// Compilation errors listed under a stuck task.
const COMPILE_ERRORS_SHOWN: usize = 10;

/// One progress line per event worth a line.
pub(super) fn text_line(event: &SwarmEvent) -> Option<String> {
    Some(match event {
        SwarmEvent::Started {
            swarm_id, resumed, ..
        } => format!(
            "swarm {swarm_id}{}",
            if *resumed { " (resumed)" } else { "" }
        ),
        SwarmEvent::Decomposed { tasks, .. } => plan_text(tasks),
        SwarmEvent::Enriched {
            enriched,
            still_thin,
            ..
        } if !enriched.is_empty() || !still_thin.is_empty() => enriched_line(enriched, still_thin),
        SwarmEvent::TaskStarted {
            task_id,
            attempt,
            model,
            ..
        } => format!("▶ {task_id} attempt {attempt} ({model})"),
        SwarmEvent::TaskRetrying {
            task_id,
            attempt,
            delay_ms,
            reason,
        } => retry_line(task_id, *attempt, *delay_ms, reason),
        SwarmEvent::TaskPassed {
            task_id,
            attempts,
            score,
            ..
        } => present::passed_line(task_id, *attempts, *score),
        SwarmEvent::TaskFailed {
            task_id, reason, ..
        } => present::failed_line(task_id, reason),
        SwarmEvent::TaskSkipped { task_id, reason } => present::skipped_line(task_id, reason),
        SwarmEvent::InterventionNeeded {
            task_id,
            attempts,
            last_error,
            compilation_errors,
            ..
        } => stuck_text(task_id, *attempts, last_error, compilation_errors),
        SwarmEvent::ModelHealth {
            model,
            tripped,
            health,
        } => health_line(model, *tripped, *health),
        SwarmEvent::Permission {
            task_id,
            request,
            tier,
            decision: Some(ApprovalDecision::No { reason }),
        } => denied_line(task_id, request, tier, reason.as_deref()),
        SwarmEvent::ModelWaiting {
            model,
            wait_seconds,
            reason,
        } => format!(
            "model {model} unavailable after {reason}; retrying in {}",
            minutes_seconds(*wait_seconds)
        ),
        SwarmEvent::Notice { text } => format!("atto: {text}"),
        SwarmEvent::TrustNeeded { question } => {
            let lines: Vec<String> = question.iter().map(|l| format!("atto: {l}")).collect();
            lines.join("\n")
        }
        SwarmEvent::Finished { .. } => finished_line(event)?,
        // No line: an enrichment that changed nothing, a permission allowed or asked (an
        // asked one is a question), a worker's activity, a check before its verdict
        // line, and the budget (the final line sums it).
        // The plan is the question's (`question`), not a line.
        SwarmEvent::Plan { .. }
        | SwarmEvent::Enriched { .. }
        | SwarmEvent::Permission { .. }
        | SwarmEvent::TaskActivity { .. }
        | SwarmEvent::TaskChecked { .. }
        | SwarmEvent::Budget { .. } => return None,
    })
}

/// The tasks of a decomposed swarm, one line each with its kind and what it waits for.
fn plan_text(tasks: &[SwarmTask]) -> String {
    let mut s = format!("plan: {} tasks", tasks.len());
    for t in tasks {
        let deps = if t.dependencies.is_empty() {
            String::new()
        } else {
            format!(" (after {})", t.dependencies.join(", "))
        };
        s.push_str(&format!(
            "\n  {} [{}] {}{deps}",
            t.id,
            t.kind.as_str(),
            t.description.lines().next().unwrap_or("")
        ));
    }
    s
}

/// What enrichment changed, and what it left thin.
fn enriched_line(enriched: &[String], still_thin: &[String]) -> String {
    format!(
        "enriched: {}{}",
        if enriched.is_empty() {
            "none".into()
        } else {
            enriched.join(", ")
        },
        if still_thin.is_empty() {
            String::new()
        } else {
            format!("; still thin: {}", still_thin.join(", "))
        }
    )
}

/// A stuck task: its last error, then where the compiler stopped, so the person can look
/// before answering (not again the one the last error already names).
fn stuck_text(task_id: &str, attempts: u32, last_error: &str, errors: &[CompileError]) -> String {
    let mut s = format!("? {task_id} is stuck after {attempts} attempts: {last_error}");
    let listed: Vec<String> = errors
        .iter()
        .map(CompileError::line_text)
        .filter(|line| line != last_error)
        .collect();
    for line in listed.iter().take(COMPILE_ERRORS_SHOWN) {
        s.push_str(&format!("\n  {line}"));
    }
    if listed.len() > COMPILE_ERRORS_SHOWN {
        s.push_str(&format!(
            "\n  … and {} more",
            listed.len() - COMPILE_ERRORS_SHOWN
        ));
    }
    s
}

/// A failed attempt, and when the task goes again.
fn retry_line(task_id: &str, attempt: u32, delay_ms: u64, reason: &str) -> String {
    format!(
        "↻ {task_id} again in {:.1}s (attempt {attempt}): {}",
        delay_ms as f64 / 1000.0,
        reason.lines().next().unwrap_or("")
    )
}

/// A model's circuit breaker tripped or closed.
fn health_line(model: &str, tripped: bool, health: u8) -> String {
    format!(
        "model {model}: {} (health {health}%)",
        if tripped {
            "circuit breaker tripped, no dispatches"
        } else {
            "recovered"
        }
    )
}

/// A worker's request refused, by the mailbox (`auto_denied`) or by the person's answer.
fn denied_line(
    task_id: &str,
    request: &ApprovalRequest,
    tier: &str,
    reason: Option<&str>,
) -> String {
    format!(
        "⊘ {task_id}: {} {} denied ({}){}",
        request.tool,
        request.subject.lines().next().unwrap_or(""),
        if tier == "auto_denied" {
            "by the swarm's mailbox"
        } else {
            "by the answer"
        },
        reason
            .map(|r| format!(": {}", r.lines().next().unwrap_or("")))
            .unwrap_or_default()
    )
}

/// The swarm's end: counts, tokens, cost, the report, and why it stopped early.
fn finished_line(event: &SwarmEvent) -> Option<String> {
    let SwarmEvent::Finished {
        swarm_id,
        status,
        passed,
        failed,
        skipped,
        tokens,
        cost_usd,
        report,
        error,
    } = event
    else {
        return None;
    };
    Some(format!(
        "swarm {swarm_id} {status}: {passed} passed, {failed} failed, {skipped} skipped · \
         {tokens} tokens{} · report {report}{}",
        cost_usd.map(|c| format!(" · ${c:.4}")).unwrap_or_default(),
        error
            .as_ref()
            .map(|e| format!("\n  stopped: {e}"))
            .unwrap_or_default()
    ))
}

/// `4m59s`, `45s`: a wait as a person reads it.
pub(super) fn minutes_seconds(seconds: u64) -> String {
    match (seconds / 60, seconds % 60) {
        (0, s) => format!("{s}s"),
        (m, s) => format!("{m}m{s:02}s"),
    }
}
