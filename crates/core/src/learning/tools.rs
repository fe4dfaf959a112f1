//! The model's learning tools: `propose_learning` (a lesson for later sessions, which the
//! user reviews unless its confidence reaches the auto-validation threshold) and
//! `learning_helpful` (a recalled note helped: +0.05 confidence). Both are SAFE and change
//! nothing in the workspace, so every agent mode offers them; they write only atto's own
//! database.

use std::sync::Arc;

use atto_protocol::{DangerLevel, LearningKind, LearningScope, LearningSource, LearningStatus};
use atto_store::NewLearning;
use atto_tools::{BoxFuture, Tool, ToolContext, ToolError, ToolOutput};
use serde::Deserialize;
use serde_json::json;

use super::Learnings;

/// Longest details the model may give, in characters (the store keeps more for imports).
const MAX_DETAILS: usize = 1000;
/// Most keywords, actions or categories the model may give.
const MAX_WORDS: usize = 10;

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
            None | Some("project") => LearningScope::Project,
            Some("user") => LearningScope::User,
            Some(other) => return Err(bad(format!("scope {other:?} is not project or user"))),
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
         confirmed. One specific, checkable sentence; the user reviews it (confidence >= 0.9 \
         is kept at once: only when certain)."
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
                "confidence": {"type": "number", "description": "0-1"}
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
                match learning.status {
                    LearningStatus::Validated => format!(
                        "learning #{} kept (validated: its confidence reached the threshold).",
                        learning.id
                    ),
                    _ => format!(
                        "learning #{} proposed; the user will validate or reject it.",
                        learning.id
                    ),
                }
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
