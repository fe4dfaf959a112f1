//! Self-correction within a turn, and the seed's self-improvement protocol folded into it:
//! one place decides what the model reads after a failed call. A failure is diagnosed
//! (`improve`): when it has a better route the model is told to take it
//! (`SELF_CORRECT_ATTEMPT`, with the diagnosis), a bounded number of times per user request;
//! otherwise the diagnosis and a concrete fix are appended to the error. A tool that failed
//! three times since it last worked gets "Consider a different approach". A call identical
//! to one that already failed this turn is answered without running it. A diagnosed failure
//! followed by a related call of the same tool that works is a workaround worth proposing
//! as a learning.
//!
//! Owns: the tracker of correction attempts keyed by a hash of the user's request, the
//! turn's open failures, the wording the model gets, and the `correction_*` events. Does
//! not own: which failures have a better route (atto-tools' `ToolError::self_correct`), the
//! categories (`improve`), storing a workaround (`learning`), nor running calls (the
//! orchestrator asks this module before and after each call).

use std::collections::HashMap;

use atto_protocol::{Event, ToolCallStatus};
use atto_tools::Fallback;
use serde_json::Value;

use crate::improve::{self, Diagnosis, FailureCategory, Finished, Tally};
use crate::time::now_ms;
use crate::truncate;

/// Correction attempts allowed per user request; the next failure tells the model to stop.
pub(crate) const MAX_ATTEMPTS: u32 = 3;

/// Characters of an error kept in events and in the repeat refusal.
const ERROR_LINE: usize = 200;

/// The self-correction state of one turn: created at turn start with the user's prompt.
#[derive(Debug)]
pub(crate) struct Corrections {
    /// Key of the request the turn works on.
    current: u64,
    /// Attempts per request, by [`request_key`].
    requests: HashMap<u64, Request>,
    /// When the tracker started (Unix ms), for the timings in the correction chain.
    started: i64,
    /// Attempts whose success is not seen yet.
    pending: Vec<Pending>,
    /// Calls that failed since the workspace last changed.
    failed: Vec<Failed>,
    /// The session's self-improvement tallies, lent to the turn (see [`Self::into_tally`]).
    tally: Tally,
    /// Diagnosed failures no related call has fixed yet this turn.
    open: Vec<OpenFailure>,
    /// Workarounds already found this turn, by tool and category: one of each is enough.
    found: Vec<(String, FailureCategory)>,
}

/// A diagnosed failure waiting for a call that works.
#[derive(Debug)]
struct OpenFailure {
    tool: String,
    category: FailureCategory,
    /// The last failing call's arguments.
    args: Option<Value>,
    /// Its error, first line.
    error: String,
    /// Failures of this kind so far.
    failures: u32,
}

/// A failure that a later, related call of the same tool got past: a lesson for this
/// project, proposed as a learning.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Workaround {
    pub tool: String,
    pub category: FailureCategory,
    /// What the failing call did, in a line (the command, or the path).
    pub failed: String,
    /// What the call that worked did.
    pub worked: String,
    /// The failing call's error, first line.
    pub error: String,
    /// How often it failed before it worked.
    pub failures: u32,
}

/// The correction attempts made for one user request.
#[derive(Debug, Default)]
struct Request {
    original_request: String,
    attempts: Vec<Attempt>,
    max_attempts: u32,
    /// The limit was reported (once).
    exhausted: bool,
}

/// One failed call and the route the model was told to take instead.
#[derive(Debug)]
struct Attempt {
    tool: String,
    error: String,
    /// Unix ms.
    timestamp: i64,
    fallback_strategy: String,
}

/// An attempt waiting for a call that shows the new route worked.
#[derive(Debug)]
struct Pending {
    tool: String,
    fallback_tools: Vec<String>,
    /// Whether the failed call was a change: then only a change counts as its success
    /// (reading the file again is a step, not the correction).
    mutates: bool,
}

/// A call that failed, by its parsed arguments.
#[derive(Debug)]
struct Failed {
    tool: String,
    args: Value,
    error: String,
}

/// What the tracker needs to know about a finished (or refused) call.
#[derive(Debug)]
pub(crate) struct CallEnding {
    /// The arguments as the model sent them, parsed; `None` when they are not JSON.
    pub args: Option<Value>,
    /// How it ended.
    pub status: ToolCallStatus,
    /// Whether it ran as a change to the workspace.
    pub mutates: bool,
    /// The better route its error offers, if any.
    pub fallback: Option<Fallback>,
    /// How a command exited, for commands.
    pub exit_code: Option<i32>,
    /// Whether the tool ran: calls answered without running are not diagnosed or counted.
    pub ran: bool,
}

impl CallEnding {
    /// A call answered without running it: refused, queued, or a pending view.
    pub(crate) fn answered(raw_arguments: &str, status: ToolCallStatus) -> Self {
        Self {
            args: arguments(raw_arguments),
            status,
            mutates: false,
            fallback: None,
            exit_code: None,
            ran: false,
        }
    }
}

/// What becomes of a finished call's result.
#[derive(Debug, Default)]
pub(crate) struct Verdict {
    /// The content the model gets instead of the result's own; `None` keeps it.
    pub content: Option<String>,
    /// Events to emit after the call's `tool_call_finished`.
    pub events: Vec<Event>,
    /// A workaround this call completed, to propose as a learning.
    pub workaround: Option<Workaround>,
}

impl Corrections {
    /// The tracker of a turn that works on `request`, with the session's tallies (given
    /// back by [`Self::into_tally`] when the turn ends).
    pub(crate) fn new(request: &str, tally: Tally) -> Self {
        let current = request_key(request);
        let mut requests = HashMap::new();
        requests.insert(
            current,
            Request {
                original_request: request.trim().to_owned(),
                attempts: Vec::new(),
                max_attempts: MAX_ATTEMPTS,
                exhausted: false,
            },
        );
        Self {
            current,
            requests,
            started: now_ms(),
            pending: Vec::new(),
            failed: Vec::new(),
            tally,
            open: Vec::new(),
            found: Vec::new(),
        }
    }

    /// The session's tallies, as this turn leaves them.
    pub(crate) fn into_tally(self) -> Tally {
        self.tally
    }

    /// Before a call runs: the answer for a call identical (same tool, same parsed
    /// arguments) to one that already failed this turn, which is then not run again.
    pub(crate) fn repeated(&self, tool: &str, args: &Value) -> Option<String> {
        let earlier = self
            .failed
            .iter()
            .find(|f| f.tool == tool && f.args == *args)?;
        Some(format!(
            "this exact {tool} call (same arguments) already failed earlier in this turn with: \
             {}. It was not run again, since it would fail the same way. Try something \
             different: change the arguments, or take another route.",
            earlier.error
        ))
    }

    /// After a call finished with `content`: records a failure for repeat detection,
    /// diagnoses it, turns a failure with a better route into a correction attempt (or,
    /// past the limit, into an order to stop), warns about a tool that keeps failing, and
    /// reports a success that follows an attempt or completes a workaround.
    pub(crate) fn finished(&mut self, tool: &str, content: &str, facts: &CallEnding) -> Verdict {
        let call = Finished {
            tool,
            args: facts.args.as_ref(),
            content,
            status: facts.status,
            exit_code: facts.exit_code,
        };
        if facts.ran && call.worked() {
            self.tally.worked(tool, facts.args.as_ref());
            let mut verdict = self.succeeded(tool, facts.mutates);
            verdict.workaround = self.fixed(tool, facts.args.as_ref());
            return verdict;
        }
        if matches!(facts.status, ToolCallStatus::Error | ToolCallStatus::Denied)
            && let Some(args) = &facts.args
            && self.repeated(tool, args).is_none()
        {
            self.failed.push(Failed {
                tool: tool.to_owned(),
                args: args.clone(),
                error: first_line(content),
            });
        }
        if !facts.ran {
            return Verdict::default();
        }
        let diagnosis = call.failure();
        let failed_outright = matches!(
            facts.status,
            ToolCallStatus::Error | ToolCallStatus::InvalidArguments
        );
        if diagnosis.is_none() && !failed_outright {
            // A command that exited non-zero for no diagnosable reason (a failing test run):
            // its output says what happened.
            return Verdict::default();
        }
        let failures = self.tally.failed(tool);
        if let Some(d) = &diagnosis {
            self.open_failure(tool, d.category, facts.args.as_ref(), content);
        }
        let mut verdict = match &facts.fallback {
            Some(fallback) => self.attempt(fallback, content, facts.mutates, diagnosis.as_ref()),
            None => Verdict {
                content: diagnosis.as_ref().map(|d| self.diagnosed(tool, content, d)),
                ..Verdict::default()
            },
        };
        let exhausted = verdict
            .content
            .as_deref()
            .is_some_and(|c| c.contains(EXHAUSTED));
        if failures >= improve::REPEAT_WARNING_AT && !exhausted {
            let mut text = verdict.content.take().unwrap_or_else(|| content.to_owned());
            text.push_str(&format!(
                "\n\nThis tool has failed {failures} times. Consider a different approach."
            ));
            verdict.content = Some(text);
        }
        verdict
    }

    /// The error with its diagnosis and a fix appended.
    fn diagnosed(&self, tool: &str, content: &str, d: &Diagnosis) -> String {
        let mut text = format!(
            "{content}\n\n[atto] {}\nSuggestion: {}",
            d.line(),
            d.suggestion
        );
        if d.category == FailureCategory::InvalidArguments
            && let Some(signature) = self.tally.working_signature(tool)
        {
            text.push_str(&format!(
                " A {tool} call that worked in this session had these arguments: {signature}."
            ));
        }
        text
    }

    /// Notes a diagnosed failure that a later call could get past.
    fn open_failure(
        &mut self,
        tool: &str,
        category: FailureCategory,
        args: Option<&Value>,
        content: &str,
    ) {
        if !category.teaches() {
            return;
        }
        let error = first_line(content);
        match self
            .open
            .iter_mut()
            .find(|o| o.tool == tool && o.category == category)
        {
            Some(open) => {
                open.failures += 1;
                open.args = args.cloned();
                open.error = error;
            }
            None => self.open.push(OpenFailure {
                tool: tool.to_owned(),
                category,
                args: args.cloned(),
                error,
                failures: 1,
            }),
        }
    }

    /// A call of `tool` with `args` worked: the open failure of the same tool it is related
    /// to (other arguments, a word in common) is fixed, and makes a workaround unless one
    /// of its kind was found this turn.
    fn fixed(&mut self, tool: &str, args: Option<&Value>) -> Option<Workaround> {
        let worked = summary(tool, args?);
        let index = self.open.iter().position(|o| {
            o.tool == tool
                && o.args.as_ref() != args
                && o.args
                    .as_ref()
                    .is_some_and(|failed| related(&summary(tool, failed), &worked))
        })?;
        let open = self.open.remove(index);
        let key = (open.tool.clone(), open.category);
        if self.found.contains(&key) {
            return None;
        }
        self.found.push(key);
        Some(Workaround {
            failed: open
                .args
                .as_ref()
                .map(|a| summary(tool, a))
                .unwrap_or_default(),
            worked,
            tool: open.tool,
            category: open.category,
            error: open.error,
            failures: open.failures,
        })
    }

    fn succeeded(&mut self, tool: &str, mutates: bool) -> Verdict {
        // The workspace changed: an earlier failure may not repeat.
        if mutates {
            self.failed.clear();
        }
        let fixed: Vec<Pending> = self
            .pending
            .extract_if(.., |p| {
                p.tool == tool
                    || (p.mutates == mutates && p.fallback_tools.iter().any(|t| t == tool))
            })
            .collect();
        let request = self.request();
        let events = fixed
            .into_iter()
            .map(|p| Event::CorrectionSuccess {
                attempts: count(request.attempts.iter().filter(|a| a.tool == p.tool).count()),
                tool: p.tool,
            })
            .collect();
        Verdict {
            content: None,
            events,
            workaround: None,
        }
    }

    fn attempt(
        &mut self,
        fallback: &Fallback,
        content: &str,
        mutates: bool,
        diagnosis: Option<&Diagnosis>,
    ) -> Verdict {
        let started = self.started;
        let request = self.request();
        let tool = fallback.original_tool.clone();
        let made = count(request.attempts.len());
        if made >= request.max_attempts {
            let mut events = Vec::new();
            if !request.exhausted {
                request.exhausted = true;
                events.push(Event::CorrectionFailed {
                    tool,
                    attempts: made,
                });
            }
            return Verdict {
                content: Some(exhausted(request, content, started)),
                events,
                workaround: None,
            };
        }
        request.attempts.push(Attempt {
            tool: tool.clone(),
            error: content.to_owned(),
            timestamp: now_ms(),
            fallback_strategy: fallback.suggested_approach.clone(),
        });
        let attempt = made + 1;
        let max = request.max_attempts;
        self.pending.retain(|p| p.tool != tool);
        self.pending.push(Pending {
            tool: tool.clone(),
            fallback_tools: fallback.fallback_tools.clone(),
            mutates,
        });
        let diagnosis = diagnosis.map_or_else(String::new, |d| format!("\n{}", d.line()));
        let content = format!(
            "SELF_CORRECT_ATTEMPT: The {tool} call failed with error: {content}{diagnosis}\n\nThe \
             previous approach failed. Here's a more direct strategy:\n{}\n\nPlease generate \
             new tool calls using the suggested approach. (Self-correction attempt {attempt} of \
             {max} for this request.)",
            fallback.suggested_approach
        );
        Verdict {
            content: Some(content),
            events: vec![Event::CorrectionAttempt {
                error: first_line(&fallback.original_error),
                strategy: fallback.suggested_approach.clone(),
                tool,
                attempt,
                max,
            }],
            workaround: None,
        }
    }

    /// The entry of the request this turn works on.
    fn request(&mut self) -> &mut Request {
        self.requests
            .entry(self.current)
            .or_insert_with(|| Request {
                max_attempts: MAX_ATTEMPTS,
                ..Request::default()
            })
    }
}

/// What the model gets once the request's attempts are used up: the error, the chain of
/// attempts, and the order to stop and report.
fn exhausted(request: &Request, content: &str, started: i64) -> String {
    let chain: Vec<String> = request
        .attempts
        .iter()
        .enumerate()
        .map(|(n, a)| {
            format!(
                "{}. (+{} s) {}: {} -> suggested: {}",
                n + 1,
                (a.timestamp - started).max(0) / 1000,
                a.tool,
                first_line(&a.error),
                a.fallback_strategy
            )
        })
        .collect();
    format!(
        "{content}\n\n{EXHAUSTED} for this request (\"{}\"): {} attempts were \
         already made:\n{}\nDo not try another approach. Stop and report to the user what you \
         tried and what failed, so they can decide what to do next.",
        truncate::summary(first_line(&request.original_request).as_str(), 80),
        request.attempts.len(),
        chain.join("\n")
    )
}

/// How the order to stop begins (see [`exhausted`]).
const EXHAUSTED: &str = "Self-correction is exhausted";

/// Characters of a call kept in a workaround's summary.
const SUMMARY_CHARS: usize = 120;

/// A call in a line, for a workaround: a command's text, a file tool's path, else its
/// arguments as compact JSON.
fn summary(tool: &str, args: &Value) -> String {
    let text = match (args.get("command"), args.get("path")) {
        (Some(Value::String(command)), _) => command.clone(),
        (_, Some(Value::String(path))) if tool != "bash" => path.clone(),
        _ => args.to_string(),
    };
    truncate::summary(first_line(&text).as_str(), SUMMARY_CHARS)
}

/// Whether two calls are about the same thing: a word of three or more letters in common
/// (`python main.py` and `python3 main.py` share `main`).
fn related(failed: &str, worked: &str) -> bool {
    let words = |s: &str| -> std::collections::HashSet<String> {
        s.split(|c: char| !c.is_alphanumeric())
            .filter(|w| w.chars().count() >= 3)
            .map(str::to_lowercase)
            .collect()
    };
    !words(failed).is_disjoint(&words(worked))
}

/// The key of a user request: FNV-1a of its trimmed text, stable across runs.
pub(crate) fn request_key(request: &str) -> u64 {
    request
        .trim()
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
            (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
        })
}

/// A call's arguments parsed as the orchestrator parses them (empty text is `{}`).
pub(crate) fn arguments(raw: &str) -> Option<Value> {
    let raw = if raw.trim().is_empty() { "{}" } else { raw };
    serde_json::from_str(raw).ok()
}

/// The first non-empty line of an error, bounded.
fn first_line(text: &str) -> String {
    let line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    truncate::summary(line.trim(), ERROR_LINE)
}

fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    // Tests assert by unwrapping; a panic is the failure report.
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use serde_json::json;

    use super::*;

    fn edit_fallback(path: &str) -> Fallback {
        Fallback {
            original_tool: "edit_file".into(),
            original_error: format!("edit_file: {path} was not changed: old_string was not found"),
            suggested_approach: format!("Read {path} again with read_file."),
            fallback_tools: vec!["read_file".into(), "edit_file".into(), "write_file".into()],
        }
    }

    fn failed(args: Value, fallback: Option<Fallback>) -> CallEnding {
        CallEnding {
            args: Some(args),
            status: ToolCallStatus::Error,
            mutates: true,
            fallback,
            exit_code: None,
            ran: true,
        }
    }

    fn ok(mutates: bool) -> CallEnding {
        CallEnding {
            args: Some(json!({})),
            status: ToolCallStatus::Ok,
            mutates,
            fallback: None,
            exit_code: None,
            ran: true,
        }
    }

    /// A bash call of `command` that exited with `code`.
    fn command(command: &str, code: i32) -> CallEnding {
        CallEnding {
            args: Some(json!({ "command": command })),
            status: ToolCallStatus::Ok,
            mutates: true,
            fallback: None,
            exit_code: Some(code),
            ran: true,
        }
    }

    #[test]
    fn three_attempts_then_the_model_is_told_to_stop() {
        let mut c = Corrections::new("fix the greeting", Tally::default());
        for n in 1..=3_u32 {
            let facts = failed(
                json!({"path": "a.txt", "n": n}),
                Some(edit_fallback("a.txt")),
            );
            let v = c.finished("edit_file", "edit_file: a.txt was not changed", &facts);
            let content = v.content.unwrap();
            assert!(content.starts_with("SELF_CORRECT_ATTEMPT: "), "{content}");
            assert!(content.contains("Here's a more direct strategy:\nRead a.txt again"));
            assert!(content.contains(&format!("attempt {n} of 3")), "{content}");
            assert!(matches!(
                &v.events[..],
                [Event::CorrectionAttempt { attempt, max: 3, tool, .. }]
                    if *attempt == n && tool == "edit_file"
            ));
        }
        let facts = failed(json!({"n": 4}), Some(edit_fallback("a.txt")));
        let v = c.finished("edit_file", "edit_file: a.txt was not changed", &facts);
        let content = v.content.unwrap();
        assert!(!content.contains("SELF_CORRECT_ATTEMPT"), "{content}");
        assert!(
            content.contains("Self-correction is exhausted"),
            "{content}"
        );
        assert!(content.contains("\"fix the greeting\""), "{content}");
        assert!(content.contains("3. (+0 s) edit_file:"), "{content}");
        assert!(content.contains("Stop and report to the user"), "{content}");
        assert!(matches!(
            &v.events[..],
            [Event::CorrectionFailed { attempts: 3, .. }]
        ));
        // Reported once; later failures are still told to stop.
        let facts = failed(json!({"n": 5}), Some(edit_fallback("a.txt")));
        let v = c.finished("edit_file", "again", &facts);
        assert!(v.events.is_empty());
        assert!(v.content.unwrap().contains("exhausted"));
    }

    #[test]
    fn failures_without_a_better_route_are_left_alone() {
        let mut c = Corrections::new("run the tests", Tally::default());
        let v = c.finished(
            "bash",
            "exit code 1",
            &failed(json!({"command": "x"}), None),
        );
        assert!(v.content.is_none() && v.events.is_empty());
    }

    #[test]
    fn requests_are_keyed_by_their_text() {
        assert_eq!(request_key("fix it"), request_key("  fix it\n"));
        assert_ne!(request_key("fix it"), request_key("fix them"));
        let c = Corrections::new("fix it", Tally::default());
        assert_eq!(c.current, request_key("fix it"));
        assert_eq!(c.requests.len(), 1);
        // A new request starts with no attempts used.
        let mut used = Corrections::new("fix it", Tally::default());
        for n in 0..3 {
            used.finished(
                "edit_file",
                "e",
                &failed(json!({ "n": n }), Some(edit_fallback("a"))),
            );
        }
        let mut fresh = Corrections::new("fix them", Tally::default());
        let v = fresh.finished(
            "edit_file",
            "e",
            &failed(json!({}), Some(edit_fallback("a"))),
        );
        assert!(v.content.unwrap().contains("attempt 1 of 3"));
    }

    #[test]
    fn repeats_are_found_by_parsed_arguments() {
        let mut c = Corrections::new("task", Tally::default());
        let first = arguments(r#"{"path": "a.txt", "old_string": "x", "new_string": "y"}"#);
        c.finished(
            "edit_file",
            "edit_file: a.txt was not changed: old_string was not found\ncandidates...",
            &CallEnding {
                args: first,
                status: ToolCallStatus::Error,
                mutates: true,
                fallback: None,
                exit_code: None,
                ran: true,
            },
        );
        // Same object, other key order and spacing.
        let again = arguments(r#"{"new_string":"y","old_string":"x","path":"a.txt"}"#).unwrap();
        let refusal = c.repeated("edit_file", &again).unwrap();
        assert!(
            refusal.contains("with: edit_file: a.txt was not changed: old_string was not found."),
            "{refusal}"
        );
        assert!(!refusal.contains("candidates"));
        assert!(c.repeated("write_file", &again).is_none());
        let other = json!({"path": "a.txt", "old_string": "x", "new_string": "z"});
        assert!(c.repeated("edit_file", &other).is_none());
    }

    #[test]
    fn which_outcomes_count_as_failed_for_repeats() {
        let cases = [
            (ToolCallStatus::Error, true),
            (ToolCallStatus::Denied, true),
            (ToolCallStatus::Ok, false),
            (ToolCallStatus::Queued, false),
            (ToolCallStatus::Cancelled, false),
            (ToolCallStatus::InvalidArguments, false),
        ];
        for (status, remembered) in cases {
            let mut c = Corrections::new("task", Tally::default());
            let args = json!({"command": "rm -rf /"});
            c.finished(
                "bash",
                "no",
                &CallEnding::answered(&args.to_string(), status),
            );
            assert_eq!(
                c.repeated("bash", &args).is_some(),
                remembered,
                "{status:?}"
            );
        }
        // Empty argument text reads as `{}`, as the orchestrator reads it.
        let mut c = Corrections::new("task", Tally::default());
        c.finished(
            "list_files",
            "no",
            &CallEnding::answered(" ", ToolCallStatus::Denied),
        );
        assert!(c.repeated("list_files", &json!({})).is_some());
    }

    #[test]
    fn a_successful_change_forgets_earlier_failures() {
        let mut c = Corrections::new("task", Tally::default());
        let args = json!({"command": "cargo test"});
        c.finished("bash", "tests failed", &failed(args.clone(), None));
        c.finished("read_file", "text", &ok(false));
        assert!(c.repeated("bash", &args).is_some());
        c.finished("edit_file", "edited", &ok(true));
        assert!(c.repeated("bash", &args).is_none());
    }

    #[test]
    fn success_after_an_attempt_is_reported_once() {
        let mut c = Corrections::new("task", Tally::default());
        c.finished(
            "edit_file",
            "e",
            &failed(json!({}), Some(edit_fallback("a.txt"))),
        );
        // Reading the file again is a step of the new route, not its success.
        assert!(
            c.finished("read_file", "text", &ok(false))
                .events
                .is_empty()
        );
        let v = c.finished("write_file", "wrote a.txt", &ok(true));
        assert!(matches!(
            &v.events[..],
            [Event::CorrectionSuccess { tool, attempts: 1 }] if tool == "edit_file"
        ));
        assert!(
            c.finished("edit_file", "edited", &ok(true))
                .events
                .is_empty()
        );
    }

    #[test]
    fn a_diagnosed_failure_gets_its_fix_and_a_test_failure_is_left_alone() {
        let mut c = Corrections::new("run it", Tally::default());
        let v = c.finished(
            "bash",
            "bash: line 1: python: command not found",
            &command("python main.py", 127),
        );
        let content = v.content.unwrap();
        assert!(
            content.starts_with(
                "bash: line 1: python: command not found\n\n[atto] Diagnosis (COMMAND_NOT_FOUND)"
            ),
            "{content}"
        );
        assert!(
            content.contains("Suggestion: `python` is not available here (try python3)"),
            "{content}"
        );
        // A failing test run is the command's own verdict.
        let v = c.finished("bash", "1 failed, 2 passed", &command("pytest", 1));
        assert!(v.content.is_none());
        // With a better route, the diagnosis joins the self-correction prompt.
        let mut c = Corrections::new("fix", Tally::default());
        let v = c.finished(
            "edit_file",
            "edit_file: a.txt was not changed: old_string was not found in a.txt",
            &failed(json!({"path": "a.txt"}), Some(edit_fallback("a.txt"))),
        );
        let content = v.content.unwrap();
        assert!(content.starts_with("SELF_CORRECT_ATTEMPT: "), "{content}");
        assert!(
            content.contains(
                "\nDiagnosis (EDIT_NO_MATCH): the text to replace is not in the file as given.\n"
            ),
            "{content}"
        );
    }

    /// The seed's repeat detection, counted across the session's turns and started again
    /// when the tool works; the order to stop wins over the warning.
    #[test]
    fn a_tool_that_failed_three_times_is_told_to_change_approach() {
        let warning = "This tool has failed 3 times. Consider a different approach.";
        let mut c = Corrections::new("first", Tally::default());
        for n in 0..2 {
            let v = c.finished(
                "grep",
                "internal error in the tool: x",
                &failed(json!({"n": n}), None),
            );
            assert!(
                v.content
                    .is_none_or(|t| !t.contains("Consider a different"))
            );
        }
        // The next turn goes on counting.
        let mut c = Corrections::new("second", c.into_tally());
        let v = c.finished(
            "grep",
            "internal error in the tool: x",
            &failed(json!({"n": 3}), None),
        );
        let content = v.content.unwrap();
        assert!(
            content.starts_with("internal error in the tool: x\n\nThis tool has failed 3 times"),
            "{content}"
        );
        assert!(content.ends_with(warning), "{content}");
        let v = c.finished("grep", "internal error", &failed(json!({"n": 4}), None));
        assert!(v.content.unwrap().contains("has failed 4 times"));
        // Working once starts the count again.
        c.finished("grep", "3 matches", &ok(false));
        let v = c.finished("grep", "internal error", &failed(json!({"n": 5}), None));
        assert!(v.content.is_none());
        // Other tools keep their own count.
        let v = c.finished("glob", "internal error", &failed(json!({}), None));
        assert!(v.content.is_none());
    }

    #[test]
    fn a_related_call_that_works_after_a_failure_is_a_workaround_once_per_turn() {
        let mut c = Corrections::new("run main", Tally::default());
        c.finished(
            "bash",
            "bash: python: command not found",
            &command("python main.py", 127),
        );
        c.finished(
            "bash",
            "bash: python: command not found",
            &command("python -u main.py", 127),
        );
        // An unrelated command that works fixes nothing.
        let v = c.finished("bash", "a.txt", &command("ls", 0));
        assert!(v.workaround.is_none());
        let v = c.finished("bash", "5", &command("python3 main.py", 0));
        assert_eq!(
            v.workaround,
            Some(Workaround {
                tool: "bash".into(),
                category: FailureCategory::CommandNotFound,
                failed: "python -u main.py".into(),
                worked: "python3 main.py".into(),
                error: "bash: python: command not found".into(),
                failures: 2,
            })
        );
        // The same lesson again this turn is not proposed twice.
        c.finished(
            "bash",
            "bash: python: command not found",
            &command("python other.py", 127),
        );
        let v = c.finished("bash", "ok", &command("python3 other.py", 0));
        assert!(v.workaround.is_none());
        // Slips the model makes anywhere teach nothing about the project.
        let mut c = Corrections::new("edit", Tally::default());
        c.finished(
            "edit_file",
            "edit_file: a.txt was not changed: old_string was not found",
            &failed(json!({"path": "a.txt", "old_string": "x"}), None),
        );
        let v = c.finished(
            "edit_file",
            "edited a.txt",
            &CallEnding {
                args: Some(json!({"path": "a.txt", "old_string": "y"})),
                ..ok(true)
            },
        );
        assert!(v.workaround.is_none());
        // Calls answered without running are neither counted nor diagnosed.
        let mut c = Corrections::new("x", Tally::default());
        for _ in 0..4 {
            let v = c.finished(
                "read_file",
                "not found: a",
                &CallEnding::answered("{\"path\": \"a\"}", ToolCallStatus::Error),
            );
            assert!(v.content.is_none());
        }
    }
}
