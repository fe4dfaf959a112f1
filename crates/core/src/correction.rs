//! Self-correction within a turn, and the seed's self-improvement protocol folded into it:
//! one place decides what the model reads after a failed call. A failure is diagnosed
//! (`diagnosis`): when it has a better route the model is told to take it
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
//! categories (`diagnosis`), storing a workaround (`learning`), nor running calls (the
//! orchestrator asks this module before and after each call).

use std::collections::HashMap;

use atto_protocol::{Event, ToolCallStatus};
use atto_tools::Fallback;
use serde_json::Value;

use crate::truncate;
use atto_protocol::time::now_ms;
use diagnosis::{Diagnosis, FailureCategory, Finished, Tally};

pub(crate) mod diagnosis;

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
            && !diagnosis::mcp_server_restarts(tool, content)
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
        if failures >= diagnosis::REPEAT_WARNING_AT && !exhausted {
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
        (_, Some(Value::String(path))) if tool != atto_tools::names::BASH => path.clone(),
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
mod tests;
