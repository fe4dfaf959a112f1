//! The LLM judge: scores a result 1–5 with the seed's rubric (the stricter one for test
//! tasks), seeing what the worker did ("Tool Actions") and, for test tasks, what the
//! verification gate found. Temperature 0.1, at most 800 output tokens. When the judge
//! cannot answer, the score is neutral (3) and marked `gate_error` — but 2 for test
//! tasks, which then fail safe.

use std::borrow::Cow;
use std::fmt::Write as _;

use atto_llm::{ModelClient, ModelRequest};
use atto_protocol::Message;

use crate::verify::Verification;
use crate::{QualityTask, WorkerResult};

/// Most output tokens the judge may use.
const MAX_OUTPUT_TOKENS: u32 = 800;

/// Bytes of one tool action's output the judge sees (the start and the end), of the
/// `action::ACTION_OUTPUT` kept.
const SHOWN_OUTPUT: usize = 600;

/// Bytes of the worker's answer the judge sees (the start and the end).
const ANSWER: usize = 12_000;

/// How long the judge may take.
const TIMEOUT: std::time::Duration = std::time::Duration::from_secs(120);

const GENERAL_RUBRIC: &str = "Score the work from 1 to 5:\n\
1 Nothing useful was done, or the work is broken.\n\
2 Some work, but the task is not done or the result is wrong.\n\
3 The task is done in substance, with gaps or rough edges.\n\
4 The task is done well; minor issues at most.\n\
5 The task is done completely and carefully, acceptance criteria all met.\n\
Judge by what the Tool Actions show was done, not by what the worker claims.";

const TEST_RUBRIC: &str = "Score the test work from 1 to 5:\n\
1 No test execution evidence (no pytest/npm test/go test/cargo test output).\n\
2 Tests written but NOT executed, or all tests fail with no fix attempt.\n\
3 Tests run but significant failures or poor coverage.\n\
4 Tests run and mostly pass, good coverage of core cases.\n\
5 All tests pass, edge cases covered, clear test output.\n\
A test task without actual test execution output must score 1-2 regardless of narrative quality.";

/// The judge's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judgement {
    /// 1–5.
    pub score: u8,
    /// Why, for the worker's next attempt.
    pub feedback: String,
    /// The judge could not answer (error, no score): the score is the fail-safe one.
    pub gate_error: Option<String>,
}

/// Asks `client` to score `result`.
pub async fn judge(
    client: &dyn ModelClient,
    task: &QualityTask,
    result: &WorkerResult,
    verification: Option<&Verification>,
) -> Judgement {
    let system = format!(
        "You are the quality gate of a coding agent: you judge whether a worker did its task. \
         {}\n\nAnswer with exactly two lines:\nSCORE: <1-5>\nFEEDBACK: <one paragraph: what is \
         missing or wrong, concrete enough to fix>",
        if task.kind.is_test() {
            TEST_RUBRIC
        } else {
            GENERAL_RUBRIC
        }
    );
    let messages = [Message::User {
        text: prompt(task, result, verification),
        context: None,
    }];
    let request = ModelRequest {
        system: Cow::Owned(system),
        messages: Cow::Borrowed(&messages),
        tools: Cow::Owned(Vec::new()),
        max_output_tokens: MAX_OUTPUT_TOKENS,
        effort: None,
        temperature: Some(0.1),
    };
    let mut ignore = |_| {};
    let reply = tokio::time::timeout(TIMEOUT, client.stream(&request, &mut ignore)).await;
    let text = match reply {
        Ok(Ok(response)) => response.text(),
        Ok(Err(err)) => return failed(task, &err.to_string()),
        Err(_) => return failed(task, "the judge did not answer within 120 s"),
    };
    match parse(&text) {
        Some((score, feedback)) => Judgement {
            score,
            feedback,
            gate_error: None,
        },
        None => failed(
            task,
            &format!(
                "the judge's answer had no SCORE line: {}",
                text.chars().take(200).collect::<String>()
            ),
        ),
    }
}

/// The fail-safe judgement: neutral 3, but 2 for test tasks.
fn failed(task: &QualityTask, why: &str) -> Judgement {
    Judgement {
        score: if task.kind.is_test() { 2 } else { 3 },
        feedback: format!("the quality judge could not score this ({why})"),
        gate_error: Some(why.to_owned()),
    }
}

/// `SCORE: n` and `FEEDBACK: …` from the judge's text.
fn parse(text: &str) -> Option<(u8, String)> {
    let mut score = None;
    let mut feedback = String::new();
    let mut in_feedback = false;
    for line in text.lines() {
        let bare = line.trim().trim_start_matches(['*', '#', ' ']);
        let upper = bare.to_ascii_uppercase();
        if upper.starts_with("SCORE") && score.is_none() {
            score = bare
                .chars()
                .skip(5)
                .find(char::is_ascii_digit)
                .and_then(|c| c.to_digit(10))
                .and_then(|d| u8::try_from(d).ok())
                .filter(|d| (1..=5).contains(d));
            in_feedback = false;
        } else if upper.starts_with("FEEDBACK") {
            feedback = bare
                .split_once(':')
                .map_or("", |(_, rest)| rest)
                .trim_matches(['*', ' '])
                .to_owned();
            in_feedback = true;
        } else if in_feedback && !line.trim().is_empty() {
            feedback.push(' ');
            feedback.push_str(line.trim());
        }
    }
    score.map(|s| (s, feedback.trim().to_owned()))
}

/// What the judge reads: the task, what the worker said, what it did, what was verified.
fn prompt(
    task: &QualityTask,
    result: &WorkerResult,
    verification: Option<&Verification>,
) -> String {
    let mut out = format!(
        "## Task ({}, {})\n{}\n",
        task.id,
        task.kind.as_str(),
        task.description.trim()
    );
    if !task.target_files.is_empty() {
        let _ = writeln!(out, "Target files: {}", task.target_files.join(", "));
    }
    if !task.acceptance.is_empty() {
        out.push_str("\n## Acceptance criteria\n");
        for c in &task.acceptance {
            let _ = writeln!(out, "- {c}");
        }
    }
    out.push_str("\n## Worker's answer\n");
    out.push_str(&ends(&result.text, ANSWER));
    if let Some(report) = &result.closure_report {
        out.push_str("\n\n## Closure report\n");
        out.push_str(&ends(report, ANSWER));
    }
    out.push_str("\n\n## Tool Actions\n");
    if result.actions.is_empty() {
        out.push_str("(none: the worker called no tools)\n");
    }
    for (i, a) in result.actions.iter().enumerate() {
        let args = a.arguments.to_string();
        // A call that never ran shows no output: whatever text it carries is not evidence.
        if let Some(why) = &a.not_run {
            let _ = writeln!(
                out,
                "{}. {} {} NOT RUN ({why}): no output, no evidence of anything",
                i + 1,
                a.tool,
                ends(&args, 300),
            );
            continue;
        }
        let _ = writeln!(
            out,
            "{}. {} {}{}{}\n   output: {}",
            i + 1,
            a.tool,
            ends(&args, 300),
            a.exit_code
                .map_or_else(String::new, |c| format!(" (exit {c})")),
            if a.is_test_run { " [test run]" } else { "" },
            ends(&a.output, SHOWN_OUTPUT).replace('\n', "\n   "),
        );
    }
    if let Some(v) = verification {
        out.push_str("\n## Verification (run by atto, not the worker)\n");
        out.push_str(&v.summary());
    }
    out
}

/// The start and the end of `text` within about `max` bytes.
fn ends(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let half = max / 2;
    let mut head_end = half;
    while !text.is_char_boundary(head_end) {
        head_end -= 1;
    }
    let mut tail_start = text.len() - half;
    while !text.is_char_boundary(tail_start) {
        tail_start += 1;
    }
    format!("{}\n[… cut …]\n{}", &text[..head_end], &text[tail_start..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_score_and_feedback_are_read_however_they_are_dressed() {
        assert_eq!(
            parse("SCORE: 4\nFEEDBACK: fine"),
            Some((4, "fine".to_owned()))
        );
        assert_eq!(
            parse("**Score:** 2/5\n**Feedback:** the loop is wrong\nand untested"),
            Some((2, "the loop is wrong and untested".to_owned()))
        );
        assert_eq!(parse("SCORE: 9\nFEEDBACK: x"), None);
        assert_eq!(parse("looks good"), None);
    }

    #[test]
    fn the_judge_is_told_a_denied_command_did_not_run() {
        let task = QualityTask {
            id: "task-1".into(),
            kind: crate::TaskKind::Test,
            description: "Write tests".into(),
            ..QualityTask::default()
        };
        let result = WorkerResult {
            text: "All 5 tests passed.".into(),
            actions: vec![crate::ToolAction {
                tool: "bash".into(),
                arguments: serde_json::json!({"command": "pytest -q"}),
                output: "5 passed".into(),
                is_test_run: true,
                not_run: Some("denied".into()),
                ..crate::ToolAction::default()
            }],
            ..WorkerResult::default()
        };
        let text = prompt(&task, &result, None);
        assert!(text.contains("NOT RUN (denied)"), "{text}");
        assert!(!text.contains("[test run]"), "{text}");
        assert!(!text.contains("5 passed"), "{text}");
    }

    #[test]
    fn a_long_answer_is_cut_in_the_middle_on_a_char_boundary() {
        let text = "é".repeat(10_000);
        let cut = ends(&text, 1000);
        assert!(cut.len() < 1100);
        assert!(cut.contains("[… cut …]"));
    }
}
