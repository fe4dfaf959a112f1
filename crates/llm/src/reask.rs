//! Asking a model for a structured answer until it parses: a dedicated request (the
//! caller's system prompt and first text, no tools, not part of any conversation), the
//! reply handed to the caller's parse function, and a bounded number of re-asks that quote
//! the parse error back. Never waits unbounded: each request has a time limit, and the
//! caller's cancellation stops the exchange at once.
//!
//! Knows nothing of what is parsed: the planner's plans and the swarm's tasks each bring
//! their own parse function and turn an [`AskError`] into their own words.

use std::borrow::Cow;
use std::future::Future;
use std::time::Duration;

use atto_protocol::{AssistantPart, Message, ReasoningEffort, Usage};

use crate::{ModelClient, ModelError, ModelRequest};

/// Re-asks after the first answer: three requests at most.
pub const MAX_REASKS: u32 = 2;

/// The longest one request of an exchange may take.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(300);

/// What one exchange asks.
pub struct Exchange<'a> {
    /// The system prompt of every request.
    pub system: &'a str,
    /// The first request's user text.
    pub first: String,
    /// What the answer is, as a re-ask names it ("plan", "tasks").
    pub answer: &'a str,
    /// The output limit of each request.
    pub max_output_tokens: u32,
    /// Reasoning effort, for models that take one.
    pub effort: Option<ReasoningEffort>,
    /// Re-asks after the first answer.
    pub max_reasks: u32,
}

/// Why an exchange gave no parsed answer.
#[derive(Debug)]
pub enum AskError {
    /// A request failed (the client's own retries already spent).
    Request(ModelError),
    /// A request took longer than [`REQUEST_TIMEOUT`].
    TimedOut(Duration),
    /// The caller cancelled, or the client reported a cancelled request.
    Cancelled,
    /// No answer parsed: the last parse error.
    Invalid(String),
}

/// How an exchange ended.
#[derive(Debug)]
pub struct Asked<T> {
    /// The parsed answer, or why there is none.
    pub value: Result<T, AskError>,
    /// Requests made.
    pub attempts: u32,
    /// Tokens the requests used.
    pub usage: Usage,
}

/// The text of a re-ask after an answer that did not parse.
fn reask(error: &str, answer: &str) -> String {
    format!(
        "That answer was not accepted: {error}. Answer again with only the corrected {answer} \
         as one JSON object."
    )
}

/// Asks `client` per `exchange` until `parse` accepts an answer, re-asking at most
/// `exchange.max_reasks` times with the error `parse` gave. `cancelled` completing stops
/// the exchange (the request under way is dropped).
pub async fn ask_until_parsed<T>(
    client: &dyn ModelClient,
    exchange: Exchange<'_>,
    cancelled: impl Future<Output = ()>,
    mut parse: impl FnMut(&str) -> Result<T, String>,
) -> Asked<T> {
    let Exchange {
        system,
        first,
        answer,
        max_output_tokens,
        effort,
        max_reasks,
    } = exchange;
    let mut messages = vec![Message::User {
        text: first,
        context: None,
    }];
    let mut usage = Usage::default();
    let mut attempts = 0;
    let mut last_error = String::new();
    tokio::pin!(cancelled);
    while attempts <= max_reasks {
        attempts += 1;
        let request = ModelRequest {
            system: Cow::Borrowed(system),
            messages: Cow::Borrowed(&messages),
            tools: Cow::Owned(Vec::new()),
            max_output_tokens,
            effort,
            temperature: None,
        };
        let mut ignore = |_| {};
        let streamed = tokio::time::timeout(REQUEST_TIMEOUT, client.stream(&request, &mut ignore));
        let reply = tokio::select! {
            reply = streamed => reply,
            () = &mut cancelled => Ok(Err(ModelError::Cancelled)),
        };
        let failed = |why: AskError| Asked {
            value: Err(why),
            attempts,
            usage,
        };
        let response = match reply {
            Ok(Ok(response)) => response,
            Ok(Err(ModelError::Cancelled)) => return failed(AskError::Cancelled),
            Ok(Err(err)) => return failed(AskError::Request(err)),
            Err(_) => return failed(AskError::TimedOut(REQUEST_TIMEOUT)),
        };
        crate::add_usage(&mut usage, &response.usage);
        let text = response.text();
        match parse(&text) {
            Ok(value) => {
                return Asked {
                    value: Ok(value),
                    attempts,
                    usage,
                };
            }
            Err(error) => {
                messages.push(Message::Assistant {
                    parts: vec![AssistantPart::Text { text }],
                });
                messages.push(Message::User {
                    text: reask(&error, answer),
                    context: None,
                });
                last_error = error;
            }
        }
    }
    Asked {
        value: Err(AskError::Invalid(last_error)),
        attempts,
        usage,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::sync::Mutex;

    use atto_protocol::StopReason;

    use super::*;
    use crate::{BoxFuture, ModelInfo, ModelResponse, StreamUpdate, Wire};

    /// A client that answers scripted texts, then never, and keeps the last user text it
    /// was sent.
    struct Scripted {
        info: ModelInfo,
        answers: Mutex<Vec<&'static str>>,
        last_user_text: Mutex<String>,
    }

    impl ModelClient for Scripted {
        fn info(&self) -> &ModelInfo {
            &self.info
        }
        fn stream<'a>(
            &'a self,
            req: &'a ModelRequest<'a>,
            _on_update: &'a mut (dyn FnMut(StreamUpdate) + Send),
        ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
            if let Some(Message::User { text, .. }) = req.messages.last() {
                *self.last_user_text.lock().unwrap() = text.clone();
            }
            let mut answers = self.answers.lock().unwrap();
            // With no answer left the model never replies.
            if answers.is_empty() {
                return Box::pin(std::future::pending());
            }
            let text = answers.remove(0).to_owned();
            Box::pin(async move {
                Ok(ModelResponse {
                    parts: vec![AssistantPart::Text { text }],
                    stop: StopReason::EndTurn,
                    usage: Usage::default(),
                    usage_reported: false,
                    model: "m".into(),
                })
            })
        }
    }

    fn client(answers: Vec<&'static str>) -> Scripted {
        Scripted {
            info: ModelInfo {
                provider: "p".into(),
                model: "m".into(),
                wire: Wire::Chat,
                base_url: "http://x".into(),
            },
            answers: Mutex::new(answers),
            last_user_text: Mutex::new(String::new()),
        }
    }

    fn exchange() -> Exchange<'static> {
        Exchange {
            system: "answer a number",
            first: "a number, please".into(),
            answer: "number",
            max_output_tokens: 10,
            effort: None,
            max_reasks: MAX_REASKS,
        }
    }

    fn number(text: &str) -> Result<u32, String> {
        text.parse()
            .map_err(|_| format!("{text:?} is not a number"))
    }

    #[tokio::test]
    async fn a_reply_that_does_not_parse_is_asked_again_with_its_error() {
        let client = client(vec!["x", "7"]);
        let asked = ask_until_parsed(&client, exchange(), std::future::pending(), number).await;
        assert_eq!(asked.value.unwrap(), 7);
        assert_eq!(asked.attempts, 2);
        assert_eq!(
            *client.last_user_text.lock().unwrap(),
            "That answer was not accepted: \"x\" is not a number. Answer again with only the \
             corrected number as one JSON object."
        );
    }

    #[tokio::test]
    async fn after_the_last_reask_the_last_error_is_returned() {
        let client = client(vec!["a", "b", "c", "4"]);
        let asked = ask_until_parsed(&client, exchange(), std::future::pending(), number).await;
        assert_eq!(asked.attempts, MAX_REASKS + 1);
        match asked.value {
            Err(AskError::Invalid(error)) => assert_eq!(error, "\"c\" is not a number"),
            other => panic!("expected the last parse error, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn cancelling_drops_the_request_under_way() {
        let client = client(Vec::new());
        let asked = ask_until_parsed(&client, exchange(), std::future::ready(()), number).await;
        assert!(matches!(asked.value, Err(AskError::Cancelled)));
        assert_eq!(asked.attempts, 1);
    }
}
