//! The `RetryContext`: what the next attempt is told about the last one, with the seed's
//! fields, rendered exactly like the seed's "Previous Attempt" block.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::CompileError;

/// Structured facts from a failed attempt, for the next one.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RetryContext {
    /// The judge's (or the failing check's) feedback.
    pub previous_feedback: String,
    /// The score the attempt got (1–5; 0 for "made no tool calls").
    pub previous_score: u8,
    /// The attempt this context is for (2 for the first retry).
    pub attempt: u32,
    /// Attempts allowed in all.
    pub max_attempts: u32,
    /// The model of the failed attempt.
    pub previous_model: Option<String>,
    /// Files the failed attempt modified.
    pub previous_files: Vec<String>,
    /// Where the surrounding work stands (swarm, plan).
    pub swarm_progress: Option<String>,
    /// Compilation errors with their places.
    pub compilation_errors: Vec<CompileError>,
    /// Names of the tests that failed.
    pub test_failures: Vec<String>,
    /// What to fix, by check (`[tests] …`).
    pub verification_suggestions: Vec<String>,
}

impl RetryContext {
    /// The block put in the next attempt's prompt.
    pub fn render(&self) -> String {
        let mut out = format!(
            "## Previous Attempt (attempt {}/{}, score: {}/5)\n",
            self.attempt, self.max_attempts, self.previous_score
        );
        if let Some(model) = &self.previous_model {
            let _ = writeln!(out, "Model: {model}");
        }
        if !self.previous_files.is_empty() {
            let _ = writeln!(out, "Files modified: {}", self.previous_files.join(", "));
        }
        if let Some(progress) = &self.swarm_progress {
            let _ = writeln!(out, "Progress: {progress}");
        }
        let errors: Vec<&CompileError> = self.compilation_errors.iter().collect();
        section(
            &mut out,
            "Compilation Errors",
            errors.iter().map(|e| e.line_text()),
        );
        section(
            &mut out,
            "Test Failures",
            self.test_failures.iter().cloned(),
        );
        section(
            &mut out,
            "Fix Suggestions",
            self.verification_suggestions.iter().cloned(),
        );
        if !self.previous_feedback.trim().is_empty() {
            let _ = write!(
                out,
                "\n### Quality Gate Feedback\n\"{}\"\n",
                self.previous_feedback.trim()
            );
        }
        out
    }
}

fn section(out: &mut String, title: &str, lines: impl Iterator<Item = String>) {
    let mut lines = lines.peekable();
    if lines.peek().is_none() {
        return;
    }
    let _ = write!(out, "\n### {title}\n");
    for line in lines {
        let _ = writeln!(out, "- {line}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quality::Severity;

    #[test]
    fn renders_like_the_seeds_previous_attempt_block() {
        let ctx = RetryContext {
            previous_feedback: "Validation logic is incomplete.".into(),
            previous_score: 2,
            attempt: 2,
            max_attempts: 3,
            compilation_errors: vec![CompileError {
                file: "src/models/user.py".into(),
                line: Some(42),
                message: "SyntaxError: unexpected indent".into(),
                severity: Severity::Error,
            }],
            test_failures: vec!["test_user_validation::test_empty_email".into()],
            verification_suggestions: vec!["[tests] Ensure validate_email handles \"\"".into()],
            ..RetryContext::default()
        };
        assert_eq!(
            ctx.render(),
            "## Previous Attempt (attempt 2/3, score: 2/5)\n\n### Compilation Errors\n- \
             src/models/user.py:42 — SyntaxError: unexpected indent\n\n### Test Failures\n- \
             test_user_validation::test_empty_email\n\n### Fix Suggestions\n- [tests] Ensure \
             validate_email handles \"\"\n\n### Quality Gate Feedback\n\"Validation logic is \
             incomplete.\"\n"
        );
    }
}
