//! The session's side of model choice: the model of each turn (pinned, routed, or the
//! session's), `/model`, and the list `/model` shows.

use std::sync::Arc;

use atto_protocol::{ComplexityTier, Event};

use super::Session;
use crate::subagents::budget::Budgeted;

impl Session {
    /// Chooses the model of a turn of `tier` and makes it the session's client; the
    /// reason, when the choice was not the session's own model.
    pub(super) fn route_turn(&mut self, tier: ComplexityTier) -> Option<String> {
        self.turn_effort = None;
        let choice = match self.models.choose(tier) {
            Ok(choice) => choice,
            Err(err) => {
                self.emit(Event::Warning {
                    message: format!("{err}; this turn uses {}", self.options.client.info().model),
                });
                return None;
            }
        };
        if choice.model != self.options.client.info().model {
            self.options.client = Arc::new(Budgeted::new(
                choice.client,
                Arc::clone(&self.tree.budget),
                self.position.node.clone(),
            ));
        }
        if choice
            .effort
            .is_some_and(|_| atto_llm::takes_effort(&choice.model))
        {
            self.turn_effort = choice.effort;
        }
        choice.reason
    }

    /// `/model NAME`, `/model PROVIDER/NAME`, `/model auto`.
    pub(super) async fn set_model(&mut self, name: &str) {
        let before = self.options.client.info().clone();
        if let Err(message) = self.models.set(name) {
            self.emit(Event::Error {
                message: format!("{message}; the model stays {}", before.model),
            });
            return;
        }
        let auto = self.models.auto();
        let model = if auto {
            "auto".to_owned()
        } else {
            self.models.pinned().unwrap_or(&before.model).to_owned()
        };
        // The first request to another model cannot reuse the prompt cache.
        let note = (model != before.model).then(|| {
            "the next request is sent to another model, so its prompt cache starts cold (one \
             cache miss)"
                .to_owned()
        });
        self.save_model().await;
        self.emit(Event::ModelChanged { model, auto, note });
    }

    /// `/model` alone.
    pub(super) fn list_models(&self) {
        self.emit(Event::ModelList {
            current: self.options.client.info().model.clone(),
            auto: self.models.auto(),
            models: self.models.names(),
            routes: self.models.routes(),
        });
    }

    /// Records the pinned model, so a resume keeps it.
    async fn save_model(&mut self) {
        let Some(store) = self.recorder.store.clone() else {
            return;
        };
        let pinned = if self.models.auto() {
            Some("auto".to_owned())
        } else {
            self.models.pinned().map(str::to_owned)
        };
        if let Err(err) = store
            .set_session_model(&self.options.session_id, pinned.as_deref())
            .await
        {
            self.recorder.failed(&err.to_string());
        }
    }
}
