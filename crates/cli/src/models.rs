//! The model side of starting a session: `--model auto` and its routes (`[routing]`, or
//! a default for each built-in provider), the models a session may switch to, and
//! connecting another model or another provider's (`/model PROVIDER/NAME`).

use std::sync::Arc;

use atto_core::models::ModelSettings;
use atto_core::subagents::Connector;
use atto_llm::{ClientOptions, ProviderChoice, ResolvedProvider};
use atto_protocol::{ComplexityTier, ModelRoute, ReasoningEffort};

use crate::setup::error::SetupError;
use atto_config::{Config, RouteConfig};

/// Routes of a built-in provider when the config has no `[routing]`: a small fast model
/// for SIMPLE, the strong one (thinking harder) for COMPLEX and DEEP_RESEARCH.
fn default_routes(provider: &str) -> Vec<ModelRoute> {
    let (small, strong) = match provider {
        "openai" => ("gpt-4.1-mini", "gpt-4.1"),
        "anthropic" => ("claude-haiku-4-5", "claude-sonnet-4-5"),
        "deepseek" => ("deepseek-chat", "deepseek-reasoner"),
        _ => return Vec::new(),
    };
    let route = |tier, model: &str, effort| ModelRoute {
        tier,
        model: model.to_owned(),
        effort,
    };
    vec![
        route(ComplexityTier::Simple, small, None),
        route(ComplexityTier::Medium, strong, None),
        route(
            ComplexityTier::Complex,
            strong,
            Some(ReasoningEffort::Medium),
        ),
        route(
            ComplexityTier::DeepResearch,
            strong,
            Some(ReasoningEffort::High),
        ),
    ]
}

/// The routes of `[routing]`, or the provider's defaults.
pub fn routes(config: &Config, provider: &str) -> Result<Vec<ModelRoute>, SetupError> {
    if config.routing.is_empty() {
        return Ok(default_routes(provider));
    }
    let mut routes = Vec::new();
    for (tier, entry) in &config.routing {
        let tier = match tier.as_str() {
            "simple" => ComplexityTier::Simple,
            "medium" => ComplexityTier::Medium,
            "complex" => ComplexityTier::Complex,
            "deep_research" => ComplexityTier::DeepResearch,
            other => {
                return Err(SetupError::fix(format!(
                    "[routing] has an unknown tier '{other}'; use simple, medium, complex or \
                     deep_research"
                )));
            }
        };
        let (model, effort) = match entry {
            RouteConfig::Model(model) => (model.clone(), None),
            RouteConfig::Full { model, effort } => (model.clone(), effort.clone()),
        };
        let effort = match effort.as_deref() {
            None => None,
            Some("low") => Some(ReasoningEffort::Low),
            Some("medium") => Some(ReasoningEffort::Medium),
            Some("high") => Some(ReasoningEffort::High),
            Some(other) => {
                return Err(SetupError::fix(format!(
                    "[routing] {tier:?} has an unknown effort '{other}'; use low, medium or high"
                )));
            }
        };
        routes.push(ModelRoute {
            tier,
            model,
            effort,
        });
    }
    Ok(routes)
}

/// `--model auto`: the provider with the model the session starts on (the MEDIUM route,
/// else the first), and the settings that route each turn.
pub fn resolve_auto(
    provider: &ResolvedProvider,
    config: &Config,
) -> Result<(ResolvedProvider, ModelSettings), SetupError> {
    let routes = routes(config, &provider.name)?;
    let mut settings = settings(provider, config, routes.clone());
    if provider.model != "auto" {
        return Ok((provider.clone(), settings));
    }
    let start = routes
        .iter()
        .find(|r| r.tier == ComplexityTier::Medium)
        .or_else(|| routes.first())
        .ok_or_else(|| {
            SetupError::fix(format!(
                "--model auto needs routes, and provider {} has no default ones: add \
                 [routing] to the config (simple = \"MODEL\", complex = \"MODEL\", …)",
                provider.name
            ))
        })?;
    let mut resolved = provider.clone();
    resolved.model.clone_from(&start.model);
    settings.auto = true;
    Ok((resolved, settings))
}

fn settings(
    provider: &ResolvedProvider,
    config: &Config,
    routes: Vec<ModelRoute>,
) -> ModelSettings {
    let known = config
        .providers
        .get(&provider.name)
        .map(|p| p.models.names())
        .unwrap_or_default();
    ModelSettings {
        auto: false,
        routes,
        known,
        pinned: None,
    }
}

/// Connects `name` (a model of `provider`) or `PROVIDER/NAME` (another configured or
/// built-in provider's model).
pub fn connector(
    provider: &ResolvedProvider,
    config: &Config,
    options: ClientOptions,
) -> Connector {
    let provider = provider.clone();
    let providers = config.providers.clone();
    Arc::new(move |name: &str| {
        let other = match name.split_once('/') {
            Some((p, model)) if providers.contains_key(p) || atto_llm::preset(p).is_some() => {
                let choice = ProviderChoice {
                    provider: Some(p.to_owned()),
                    model: Some(model.to_owned()),
                    base_url: None,
                    wire: None,
                };
                atto_llm::resolve(&choice, &providers, &|var| std::env::var(var).ok())
                    .map_err(|e| e.to_string())?
            }
            _ => {
                let mut same = provider.clone();
                name.clone_into(&mut same.model);
                same
            }
        };
        atto_llm::connect(&other, options.clone()).map_err(|e| e.to_string())
    })
}
