//! The model's learning tools: `propose_learning` (a lesson for later sessions, which the
//! user always reviews, whatever confidence the model gives it) and
//! `learning_helpful` (a recalled note helped: +0.05 confidence). Both are SAFE and change
//! nothing in the workspace, so every agent mode offers them; they write only atto's own
//! database.

use std::sync::Arc;

use atto_protocol::{DangerLevel, LearningKind, LearningScope, LearningSource};
use atto_store::NewLearning;
use atto_tools::{BoxFuture, Tool, ToolContext, ToolError, ToolOutput};
use serde::Deserialize;
use serde_json::json;

use super::Learnings;

/// Longest details the model may give, in characters (the store keeps more for imports).
const MAX_DETAILS: usize = 1000;
/// Most keywords, actions or categories the model may give.
const MAX_WORDS: usize = 10;

/// The scopes the model may give, as the schema offers them: the schema and the parser
/// read this one table, so nothing outside the schema is accepted.
const SCOPES: [(&str, LearningScope); 2] = [
    ("project", LearningScope::Project),
    ("user", LearningScope::User),
];

/// `propose_learning`.
pub(crate) struct ProposeLearningTool {
    pub learnings: Arc<Learnings>,
}

/// `learning_helpful`.
pub(crate) struct LearningHelpfulTool {
    pub learnings: Arc<Learnings>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Proposal {
    kind: String,
    description: String,
    #[serde(default)]
    details: String,
    #[serde(default)]
    keywords: Vec<String>,
    #[serde(default)]
    actions: Vec<String>,
    #[serde(default)]
    categories: Vec<String>,
    confidence: Option<f64>,
    #[serde(default)]
    scope: Option<String>,
}

fn bad(message: String) -> ToolError {
    ToolError::InvalidArguments(message)
}

impl ProposeLearningTool {
    fn proposal(&self, args: serde_json::Value) -> Result<NewLearning, ToolError> {
        let p: Proposal = serde_json::from_value(args).map_err(|e| bad(e.to_string()))?;
        let kind = LearningKind::parse(&p.kind).ok_or_else(|| {
            bad(format!(
                "kind {:?} is not one of pattern, workaround, antipattern, best_practice, \
                 gotcha",
                p.kind
            ))
        })?;
        let description = p.description.trim().to_owned();
        if description.is_empty() || description.chars().count() > atto_store::MAX_DESCRIPTION {
            return Err(bad(format!(
                "description must be one sentence of 1 to {} characters",
                atto_store::MAX_DESCRIPTION
            )));
        }
        if p.details.chars().count() > MAX_DETAILS {
            return Err(bad(format!(
                "details are {} characters; keep them under {MAX_DETAILS}",
                p.details.chars().count()
            )));
        }
        for list in [&p.keywords, &p.actions, &p.categories] {
            if list.len() > MAX_WORDS || list.iter().any(|w| w.chars().count() > 60) {
                return Err(bad(format!(
                    "keywords, actions and categories take at most {MAX_WORDS} short words each"
                )));
            }
        }
        let confidence = p.confidence.unwrap_or(0.5);
        if !(0.0..=1.0).contains(&confidence) {
            return Err(bad(format!(
                "confidence {confidence} is not between 0 and 1"
            )));
        }
        let scope = match p.scope.as_deref() {
            None => LearningScope::Project,
            Some(given) => SCOPES
                .iter()
                .find(|(name, _)| *name == given)
                .map(|(_, scope)| *scope)
                .ok_or_else(|| bad(format!("scope {given:?} is not project or user")))?,
        };
        let mut new = self.learnings.draft(kind, description);
        new.details = p.details.trim().to_owned();
        new.keywords = p.keywords;
        new.actions = p.actions;
        new.categories = p.categories;
        new.confidence = confidence;
        new.scope = scope;
        new.source = LearningSource::Model;
        Ok(new)
    }
}

impl Tool for ProposeLearningTool {
    fn name(&self) -> &'static str {
        "propose_learning"
    }

    fn description(&self) -> &'static str {
        "Propose a lesson for later sessions here: a workaround, gotcha or practice you \
         confirmed. One specific, checkable sentence; the user reviews it before it is \
         recalled."
    }

    fn parameters(&self) -> serde_json::Value {
        json!({
            "type": "object",
            "properties": {
                "kind": {"type": "string", "enum": ["pattern", "workaround", "antipattern", "best_practice", "gotcha"]},
                "description": {"type": "string"},
                "details": {"type": "string"},
                "keywords": {"type": "array", "items": {"type": "string"}},
                "actions": {"type": "array", "items": {"type": "string"}, "description": "tools or commands it concerns"},
                "categories": {"type": "array", "items": {"type": "string"}},
                "confidence": {"type": "number", "description": "0-1"},
                "scope": {
                    "type": "string",
                    "enum": SCOPES.map(|(name, _)| name),
                    "description": "project (default): this workspace only; user: every project"
                }
            },
            "required": ["kind", "description"]
        })
    }

    fn danger(&self) -> DangerLevel {
        DangerLevel::Safe
    }

    fn mutates(&self, _args: &serde_json::Value) -> bool {
        false
    }

    fn run<'a>(
        &'a self,
        args: serde_json::Value,
        _ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let new = self.proposal(args)?;
            let proposal = self
                .learnings
                .propose(new)
                .await
                .map_err(ToolError::Declined)?;
            let learning = proposal.learning;
            let text = if proposal.duplicate {
                format!(
                    "this lesson is stored already as learning #{} ({}); nothing was added.",
                    learning.id,
                    learning.status.as_str()
                )
            } else {
                format!(
                    "learning #{} proposed; the user will validate or reject it.",
                    learning.id
                )
            };
            Ok(ToolOutput::text(text))
        })
    }
}

impl Tool for LearningHelpfulTool {
    fn name(&self) -> &'static str {
        "learning_helpful"
    }

    fn description(&self) -> &'static str {
        "Mark a recalled learning (a note in <recalled_learnings>) as helpful to this task."
    }

    fn parameters(&self) -> serde_json::Value {
        json!({
            "type": "object",
            "properties": {"id": {"type": "integer"}},
            "required": ["id"]
        })
    }

    fn danger(&self) -> DangerLevel {
        DangerLevel::Safe
    }

    fn mutates(&self, _args: &serde_json::Value) -> bool {
        false
    }

    fn run<'a>(
        &'a self,
        args: serde_json::Value,
        _ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let id = args
                .get("id")
                .and_then(serde_json::Value::as_i64)
                .ok_or_else(|| bad("`id` must be a learning's number".to_owned()))?;
            let learning = self
                .learnings
                .helpful_by_model(id)
                .await
                .map_err(ToolError::Declined)?;
            Ok(ToolOutput::text(format!(
                "learning #{id} marked helpful (confidence now {:.2}).",
                learning.confidence
            )))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool() -> ProposeLearningTool {
        let (events, _) = tokio::sync::mpsc::unbounded_channel();
        ProposeLearningTool {
            learnings: Learnings::new(
                None,
                "/w".to_owned(),
                "s".to_owned(),
                super::super::LearningSettings::default(),
                events,
            ),
        }
    }

    /// What the schema offers is exactly what is accepted: every field it lists, every
    /// scope in its enum, and nothing else.
    #[test]
    fn the_schema_and_the_parser_accept_the_same_fields_and_scopes() {
        let tool = tool();
        let schema = tool.parameters();
        let properties = schema["properties"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        let scopes: Vec<&str> = properties
            .get("scope")
            .and_then(|s| s["enum"].as_array())
            .map(|e| e.iter().filter_map(serde_json::Value::as_str).collect())
            .unwrap_or_default();
        assert_eq!(scopes, ["project", "user"]);
        let mut full = json!({"kind": "gotcha", "description": "a lesson", "details": "d",
            "keywords": ["k"], "actions": ["bash"], "categories": ["c"], "confidence": 0.5});
        for scope in scopes {
            full["scope"] = json!(scope);
            let keys: Vec<&String> = full
                .as_object()
                .map(|o| o.keys().collect())
                .unwrap_or_default();
            assert!(
                keys.iter().all(|k| properties.contains_key(k.as_str())),
                "{keys:?}"
            );
            assert!(tool.proposal(full.clone()).is_ok(), "{scope}");
        }
        for outside in ["global", "Project", "", "team"] {
            full["scope"] = json!(outside);
            assert!(
                tool.proposal(full.clone()).is_err(),
                "{outside:?} was accepted"
            );
        }
        full["scope"] = json!("project");
        full["validated"] = json!(true);
        assert!(
            tool.proposal(full).is_err(),
            "a field outside the schema was accepted"
        );
    }
}
