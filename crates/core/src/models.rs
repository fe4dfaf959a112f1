//! Which model a turn's requests go to: the session's own, one pinned with `/model`, or
//! — with `--model auto` — the route of the turn's complexity tier (a small model for
//! SIMPLE, the strong one for COMPLEX and DEEP_RESEARCH). And what each model was used
//! for, for `/cost`.
//!
//! Owns: choosing, validating a name against what the session knows, and the clients of
//! other models (connected once, kept). Does not own: connecting (the front end's
//! `Connector` does, over the configured providers) or budgets (every client is wrapped
//! by the session in its tree's budget).

use std::collections::HashMap;
use std::sync::Arc;

use atto_llm::ModelClient;
use atto_protocol::{ComplexityTier, ModelRoute, ModelSpend, ReasoningEffort, Usage};

use crate::subagents::Connector;

/// How a session chooses its models.
#[derive(Debug, Clone, Default)]
pub struct ModelSettings {
    /// Route each turn by its complexity (`--model auto`).
    pub auto: bool,
    /// The routes `auto` uses.
    pub routes: Vec<ModelRoute>,
    /// Model names known to be valid besides the session's and the routes' (config
    /// lists, the provider's catalog).
    pub known: Vec<String>,
    /// A model pinned by `/model` in an earlier run of this session.
    pub pinned: Option<String>,
}

/// The model of one turn.
pub(crate) struct Choice {
    pub client: Arc<dyn ModelClient>,
    pub model: String,
    /// The route's effort, when routing.
    pub effort: Option<ReasoningEffort>,
    /// Why this model, for the `turn_started` event.
    pub reason: Option<String>,
}

pub(crate) struct Models {
    settings: ModelSettings,
    base: Arc<dyn ModelClient>,
    connect: Option<Connector>,
    clients: HashMap<String, Arc<dyn ModelClient>>,
    spend: Vec<ModelSpend>,
}

impl Models {
    pub(crate) fn new(
        settings: ModelSettings,
        base: Arc<dyn ModelClient>,
        connect: Option<Connector>,
    ) -> Self {
        Models {
            settings,
            base,
            connect,
            clients: HashMap::new(),
            spend: Vec::new(),
        }
    }

    fn base_model(&self) -> &str {
        &self.base.info().model
    }

    /// Whether turns are routed by complexity.
    pub(crate) fn auto(&self) -> bool {
        self.settings.auto && self.settings.pinned.is_none()
    }

    /// The model pinned by `/model`, if any.
    pub(crate) fn pinned(&self) -> Option<&str> {
        self.settings.pinned.as_deref()
    }

    /// The client for `name`, connected once.
    fn client(&mut self, name: &str) -> Result<Arc<dyn ModelClient>, String> {
        if name == self.base_model() {
            return Ok(Arc::clone(&self.base));
        }
        if let Some(client) = self.clients.get(name) {
            return Ok(Arc::clone(client));
        }
        let Some(connect) = &self.connect else {
            return Err(format!(
                "this session cannot connect other models, so '{name}' cannot be used"
            ));
        };
        let client = connect(name)?;
        self.clients.insert(name.to_owned(), Arc::clone(&client));
        Ok(client)
    }

    /// The model for a turn of `tier`.
    pub(crate) fn choose(&mut self, tier: ComplexityTier) -> Result<Choice, String> {
        if let Some(name) = self.settings.pinned.clone() {
            let client = self.client(&name)?;
            return Ok(Choice {
                client,
                model: name,
                effort: None,
                reason: Some("pinned with /model".to_owned()),
            });
        }
        if self.settings.auto {
            let route = self
                .settings
                .routes
                .iter()
                .find(|r| r.tier == tier)
                .or_else(|| {
                    // No route for this tier: the nearest stronger one, else the strongest.
                    let mut routes: Vec<&ModelRoute> = self.settings.routes.iter().collect();
                    routes.sort_by_key(|r| r.tier);
                    routes
                        .iter()
                        .copied()
                        .find(|r| r.tier > tier)
                        .or_else(|| routes.last().copied())
                })
                .cloned();
            if let Some(route) = route {
                let client = self.client(&route.model)?;
                return Ok(Choice {
                    client,
                    reason: Some(format!("auto: {} → {}", tier_name(tier), route.model)),
                    model: route.model,
                    effort: route.effort,
                });
            }
        }
        Ok(Choice {
            client: Arc::clone(&self.base),
            model: self.base_model().to_owned(),
            effort: None,
            reason: None,
        })
    }

    /// `/model NAME`: checks the name, connects it and pins it; `auto` routes again.
    /// An error leaves everything as it was.
    pub(crate) fn set(&mut self, name: &str) -> Result<(), String> {
        let name = name.trim();
        if name.eq_ignore_ascii_case("auto") {
            if self.settings.routes.is_empty() {
                return Err(
                    "no routes are configured for auto: add [routing] to the config (simple, \
                     medium, complex, deep_research = \"MODEL\")"
                        .to_owned(),
                );
            }
            self.settings.auto = true;
            self.settings.pinned = None;
            return Ok(());
        }
        let known = self.names();
        // `PROVIDER/NAME` is checked by connecting it (the provider must be configured);
        // a plain name must be one the session knows.
        let provider_form = name.contains('/') && !known.iter().any(|k| k == name);
        if !provider_form && !known.iter().any(|k| k == name) {
            return Err(format!(
                "unknown model '{name}'; this session knows {}. Add it to the provider's \
                 `models` list in the config, or name it as PROVIDER/NAME",
                known.join(", ")
            ));
        }
        self.client(name)?;
        self.settings.pinned = Some(name.to_owned());
        Ok(())
    }

    /// Every model name the session knows, the session's own first.
    pub(crate) fn names(&self) -> Vec<String> {
        let mut names = vec![self.base_model().to_owned()];
        let more = self
            .settings
            .routes
            .iter()
            .map(|r| r.model.clone())
            .chain(self.settings.known.iter().cloned())
            .chain(self.settings.pinned.iter().cloned());
        for name in more {
            if !names.contains(&name) {
                names.push(name);
            }
        }
        names
    }

    /// The routes `auto` uses.
    pub(crate) fn routes(&self) -> Vec<ModelRoute> {
        self.settings.routes.clone()
    }

    /// Counts one model call.
    pub(crate) fn charge(&mut self, model: &str, usage: &Usage, cost: Option<f64>) {
        let row = match self.spend.iter().position(|s| s.model == model) {
            Some(i) => &mut self.spend[i],
            None => {
                self.spend.push(ModelSpend {
                    model: model.to_owned(),
                    calls: 0,
                    usage: Usage::default(),
                    cost_usd: Some(0.0),
                });
                let last = self.spend.len() - 1;
                &mut self.spend[last]
            }
        };
        row.calls += 1;
        atto_llm::add_usage(&mut row.usage, usage);
        row.cost_usd = match (row.cost_usd, cost) {
            (Some(a), Some(b)) => Some(a + b),
            _ => None,
        };
    }

    /// Spend per model, first used first.
    pub(crate) fn spend(&self) -> Vec<ModelSpend> {
        self.spend.clone()
    }
}

/// The tier as the seeds write it.
pub(crate) fn tier_name(tier: ComplexityTier) -> &'static str {
    match tier {
        ComplexityTier::Simple => "SIMPLE",
        ComplexityTier::Medium => "MEDIUM",
        ComplexityTier::Complex => "COMPLEX",
        ComplexityTier::DeepResearch => "DEEP_RESEARCH",
    }
}
