//! Which provider, endpoint, wire format, model and key a session uses.
//!
//! Owns the built-in presets and [`resolve`], which merges flags, config tables and
//! the environment into one [`ResolvedProvider`]. It does not read config files or the
//! process environment itself (the caller passes them in) and sends nothing.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::Wire;
use crate::secret::Secret;

/// A `[providers.NAME]` table from config; also overrides fields of a same-named preset.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ProviderSettings {
    /// Endpoint root, e.g. `https://api.example.com/v1`.
    #[serde(default)]
    pub base_url: Option<String>,
    /// Environment variable holding the API key.
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// Wire format.
    #[serde(default)]
    pub wire: Option<Wire>,
    /// Default model.
    #[serde(default)]
    pub model: Option<String>,
    /// Other models of this provider a session may switch to (`/model NAME`): a list of
    /// names, or `[providers.NAME.models.MODEL]` tables with settings of each.
    #[serde(default)]
    pub models: ProviderModels,
}

/// A provider's models: `models = ["a", "b"]` or `[providers.X.models.a]` tables.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ProviderModels(pub BTreeMap<String, ModelConfig>);

/// `[providers.X.models.Y]`: what atto should know about one model.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelConfig {
    /// Its context window in tokens, for a model atto's table does not know (or knows
    /// wrongly, e.g. a local server started with a smaller context).
    #[serde(default)]
    pub context_window: Option<u64>,
}

impl ProviderModels {
    /// The model names, in name order.
    pub fn names(&self) -> Vec<String> {
        self.0.keys().cloned().collect()
    }
}

impl<'de> Deserialize<'de> for ProviderModels {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Models;
        impl<'de> serde::de::Visitor<'de> for Models {
            type Value = ProviderModels;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a list of model names or a table of [models.NAME] tables")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<ProviderModels, A::Error> {
                let mut out = BTreeMap::new();
                while let Some(name) = seq.next_element::<String>()? {
                    out.insert(name, ModelConfig::default());
                }
                Ok(ProviderModels(out))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<ProviderModels, A::Error> {
                let mut out = BTreeMap::new();
                while let Some((name, config)) = map.next_entry::<String, ModelConfig>()? {
                    out.insert(name, config);
                }
                Ok(ProviderModels(out))
            }
        }
        d.deserialize_any(Models)
    }
}

/// A built-in provider.
#[derive(Debug, Clone, Copy)]
pub struct Preset {
    /// Name used with `--provider`.
    pub name: &'static str,
    /// Endpoint root.
    pub base_url: &'static str,
    /// Variable holding the API key (optional for local servers).
    pub api_key_env: Option<&'static str>,
    /// Wire format.
    pub wire: Wire,
    /// Model used when none is given.
    pub default_model: Option<&'static str>,
    /// Runs on this machine; needs no key.
    pub local: bool,
}

/// Built-in providers.
pub const PRESETS: &[Preset] = &[
    Preset {
        name: "openai",
        base_url: "https://api.openai.com/v1",
        api_key_env: Some("OPENAI_API_KEY"),
        // Chat Completions is what every OpenAI-compatible server speaks; use
        // `wire = "responses"` in a [providers.openai] table to switch.
        wire: Wire::Chat,
        default_model: Some("gpt-4.1"),
        local: false,
    },
    Preset {
        name: "anthropic",
        base_url: "https://api.anthropic.com",
        api_key_env: Some("ANTHROPIC_API_KEY"),
        wire: Wire::Anthropic,
        default_model: Some("claude-sonnet-4-5"),
        local: false,
    },
    Preset {
        name: "deepseek",
        base_url: "https://api.deepseek.com",
        api_key_env: Some("DEEPSEEK_API_KEY"),
        wire: Wire::Chat,
        default_model: Some("deepseek-chat"),
        local: false,
    },
    Preset {
        name: "openrouter",
        base_url: "https://openrouter.ai/api/v1",
        api_key_env: Some("OPENROUTER_API_KEY"),
        wire: Wire::Chat,
        default_model: Some("anthropic/claude-sonnet-4.5"),
        local: false,
    },
    Preset {
        name: "ollama",
        base_url: "http://localhost:11434/v1",
        api_key_env: None,
        wire: Wire::Chat,
        default_model: None,
        local: true,
    },
    Preset {
        name: "lmstudio",
        base_url: "http://localhost:1234/v1",
        api_key_env: None,
        wire: Wire::Chat,
        default_model: None,
        local: true,
    },
    Preset {
        name: "vllm",
        base_url: "http://localhost:8000/v1",
        api_key_env: Some("VLLM_API_KEY"),
        wire: Wire::Chat,
        default_model: None,
        local: true,
    },
];

/// Presets tried, in order, when no provider is named: the first whose key is set wins.
const AUTO_ORDER: &[&str] = &["anthropic", "openai", "deepseek", "openrouter"];

/// What the user asked for (flags over config top-level keys).
#[derive(Debug, Clone, Default)]
pub struct ProviderChoice {
    /// Provider name (preset or `[providers.NAME]`).
    pub provider: Option<String>,
    /// Model id.
    pub model: Option<String>,
    /// Endpoint root, overriding the provider's.
    pub base_url: Option<String>,
    /// Wire format, overriding the provider's.
    pub wire: Option<Wire>,
}

/// Everything needed to talk to one model.
#[derive(Debug, Clone)]
pub struct ResolvedProvider {
    /// Provider name (`custom` for a bare `--base-url`).
    pub name: String,
    /// Endpoint root, without trailing slash.
    pub base_url: String,
    /// Wire format.
    pub wire: Wire,
    /// Model id.
    pub model: String,
    /// The API key, if the provider uses one.
    pub api_key: Option<Secret>,
    /// Where the key came from, for error hints.
    pub api_key_env: Option<String>,
}

/// Why no provider could be resolved. The CLI exits 2 on these.
#[derive(Debug, thiserror::Error)]
pub enum ProviderError {
    /// The named provider is neither a preset nor a config table.
    #[error("unknown provider '{name}' (known: {}, plus [providers.*] in config); pass one of these to --provider", known.join(", "))]
    UnknownProvider {
        /// The name given.
        name: String,
        /// Presets and configured tables.
        known: Vec<String>,
    },
    /// No provider named and no key variable set.
    #[error(
        "no model provider is configured, so nothing was sent. To set one up:\n  \
         - export OPENAI_API_KEY, ANTHROPIC_API_KEY, DEEPSEEK_API_KEY or OPENROUTER_API_KEY, or\n  \
         - run a local server and pass `--provider ollama --model NAME` (or lmstudio, vllm), or\n  \
         - add a [providers.NAME] table (base_url, wire, model, api_key_env) to ~/.config/atto/config.toml.\n\
         Run `atto demo` to see atto work offline."
    )]
    NotConfigured,
    /// The provider needs a key and its variable is unset.
    #[error(
        "provider '{provider}' needs an API key, but {env_var} is not set; export {env_var} and try again"
    )]
    MissingKey {
        /// Provider name.
        provider: String,
        /// The variable to set.
        env_var: String,
    },
    /// No model given and the provider has no default.
    #[error(
        "provider '{provider}' has no default model; pass --model NAME (or set model in its config table)"
    )]
    MissingModel {
        /// Provider name.
        provider: String,
    },
    /// A custom provider without an endpoint.
    #[error(
        "provider '{provider}' has no base_url; set base_url in its [providers.{provider}] table or pass --base-url"
    )]
    MissingBaseUrl {
        /// Provider name.
        provider: String,
    },
    /// The endpoint is not an http(s) URL.
    #[error(
        "provider '{provider}' has an invalid base_url '{url}': {reason}; use a URL such as https://api.example.com/v1"
    )]
    InvalidBaseUrl {
        /// Provider name.
        provider: String,
        /// The URL given.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
}

/// The preset with this name.
pub fn preset(name: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.name == name)
}

/// Merges flags, config tables and the environment into one provider.
pub fn resolve(
    choice: &ProviderChoice,
    custom: &BTreeMap<String, ProviderSettings>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<ResolvedProvider, ProviderError> {
    let key_of = |var: &str| env(var).filter(|v| !v.trim().is_empty());
    let (name, base): (String, Partial) = match &choice.provider {
        Some(name) => match (preset(name), custom.get(name)) {
            (Some(p), table) => (name.clone(), Partial::from_preset(p).with(table)),
            (None, Some(table)) => (name.clone(), Partial::default().with(Some(table))),
            (None, None) => {
                let mut known: Vec<String> = PRESETS.iter().map(|p| p.name.to_owned()).collect();
                known.extend(custom.keys().filter(|k| preset(k).is_none()).cloned());
                return Err(ProviderError::UnknownProvider {
                    name: name.clone(),
                    known,
                });
            }
        },
        None if choice.base_url.is_some() => (
            "custom".to_owned(),
            Partial::default().with(custom.get("custom")),
        ),
        None => {
            let found = AUTO_ORDER
                .iter()
                .filter_map(|n| preset(n))
                .find(|p| p.api_key_env.is_some_and(|var| key_of(var).is_some()));
            match found {
                Some(p) => (
                    p.name.to_owned(),
                    Partial::from_preset(p).with(custom.get(p.name)),
                ),
                None => return Err(ProviderError::NotConfigured),
            }
        }
    };

    let base_url =
        choice
            .base_url
            .clone()
            .or(base.base_url)
            .ok_or_else(|| ProviderError::MissingBaseUrl {
                provider: name.clone(),
            })?;
    let base_url = check_base_url(&name, &base_url)?;
    let model = choice
        .model
        .clone()
        .or(base.model)
        .filter(|m| !m.trim().is_empty())
        .ok_or_else(|| ProviderError::MissingModel {
            provider: name.clone(),
        })?;
    let api_key = match &base.api_key_env {
        Some(var) => match key_of(var) {
            Some(key) => Some(Secret::new(key.trim())),
            None if base.local => None,
            None => {
                return Err(ProviderError::MissingKey {
                    provider: name,
                    env_var: var.clone(),
                });
            }
        },
        None => None,
    };
    Ok(ResolvedProvider {
        name,
        base_url,
        // A custom endpoint without a declared wire is most likely OpenAI-compatible.
        wire: choice.wire.or(base.wire).unwrap_or(Wire::Chat),
        model,
        api_key,
        api_key_env: base.api_key_env,
    })
}

/// Provider fields gathered so far.
#[derive(Default)]
struct Partial {
    base_url: Option<String>,
    api_key_env: Option<String>,
    wire: Option<Wire>,
    model: Option<String>,
    local: bool,
}

impl Partial {
    fn from_preset(p: &Preset) -> Partial {
        Partial {
            base_url: Some(p.base_url.to_owned()),
            api_key_env: p.api_key_env.map(str::to_owned),
            wire: Some(p.wire),
            model: p.default_model.map(str::to_owned),
            local: p.local,
        }
    }

    fn with(self, table: Option<&ProviderSettings>) -> Partial {
        let Some(t) = table else { return self };
        Partial {
            base_url: t.base_url.clone().or(self.base_url),
            api_key_env: t.api_key_env.clone().or(self.api_key_env),
            wire: t.wire.or(self.wire),
            model: t.model.clone().or(self.model),
            local: self.local,
        }
    }
}

fn check_base_url(provider: &str, url: &str) -> Result<String, ProviderError> {
    let trimmed = url.trim().trim_end_matches('/');
    let invalid = |reason: &str| ProviderError::InvalidBaseUrl {
        provider: provider.to_owned(),
        url: url.to_owned(),
        reason: reason.to_owned(),
    };
    let parsed = reqwest::Url::parse(trimmed).map_err(|e| invalid(&e.to_string()))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(invalid("the scheme must be http or https"));
    }
    if parsed.host_str().is_none_or(str::is_empty) {
        return Err(invalid("it has no host"));
    }
    if parsed.query().is_some() || parsed.fragment().is_some() {
        return Err(invalid("it must not have a query or fragment"));
    }
    Ok(trimmed.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_with(vars: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    fn named(name: &str) -> ProviderChoice {
        ProviderChoice {
            provider: Some(name.into()),
            ..ProviderChoice::default()
        }
    }

    #[test]
    fn auto_detect_follows_the_documented_order() {
        let env = env_with(&[("OPENAI_API_KEY", "sk-o"), ("DEEPSEEK_API_KEY", "sk-d")]);
        let p = resolve(&ProviderChoice::default(), &BTreeMap::new(), &env).unwrap();
        assert_eq!((p.name.as_str(), p.model.as_str()), ("openai", "gpt-4.1"));
        assert_eq!(p.api_key.unwrap().expose(), "sk-o");
        let env = env_with(&[("OPENAI_API_KEY", "sk-o"), ("ANTHROPIC_API_KEY", "sk-a")]);
        let p = resolve(&ProviderChoice::default(), &BTreeMap::new(), &env).unwrap();
        assert_eq!(p.name, "anthropic");
        assert_eq!(p.wire, Wire::Anthropic);
        assert_eq!(p.api_key_env.as_deref(), Some("ANTHROPIC_API_KEY"));
    }

    #[test]
    fn nothing_set_explains_how_to_configure() {
        let env = env_with(&[("OPENAI_API_KEY", "  ")]);
        let err = resolve(&ProviderChoice::default(), &BTreeMap::new(), &env).unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, ProviderError::NotConfigured));
        for needle in [
            "OPENAI_API_KEY",
            "--provider ollama",
            "[providers.",
            "atto demo",
        ] {
            assert!(text.contains(needle), "{needle} missing from {text}");
        }
    }

    #[test]
    fn named_preset_needs_its_key_unless_local() {
        let env = env_with(&[]);
        let err = resolve(&named("deepseek"), &BTreeMap::new(), &env).unwrap_err();
        assert!(
            matches!(&err, ProviderError::MissingKey { env_var, .. } if env_var == "DEEPSEEK_API_KEY"),
            "{err:?}"
        );
        let err = resolve(&named("ollama"), &BTreeMap::new(), &env).unwrap_err();
        assert!(matches!(err, ProviderError::MissingModel { .. }), "{err:?}");
        assert!(err.to_string().contains("--model"));
        let choice = ProviderChoice {
            model: Some("qwen3".into()),
            ..named("vllm")
        };
        let p = resolve(&choice, &BTreeMap::new(), &env).unwrap();
        assert_eq!(p.base_url, "http://localhost:8000/v1");
        assert!(p.api_key.is_none());
        let env = env_with(&[("VLLM_API_KEY", "tok")]);
        let p = resolve(&choice, &BTreeMap::new(), &env).unwrap();
        assert_eq!(p.api_key.unwrap().expose(), "tok");
    }

    #[test]
    fn config_table_overrides_preset_and_flags_override_both() {
        let mut custom = BTreeMap::new();
        custom.insert(
            "openai".to_owned(),
            ProviderSettings {
                base_url: Some("https://proxy.example.com/v1/".into()),
                wire: Some(Wire::Responses),
                ..ProviderSettings::default()
            },
        );
        let env = env_with(&[("OPENAI_API_KEY", "k")]);
        let p = resolve(&named("openai"), &custom, &env).unwrap();
        assert_eq!(p.base_url, "https://proxy.example.com/v1");
        assert_eq!(p.wire, Wire::Responses);
        assert_eq!(p.model, "gpt-4.1");
        let choice = ProviderChoice {
            model: Some("gpt-5".into()),
            wire: Some(Wire::Chat),
            ..named("openai")
        };
        let p = resolve(&choice, &custom, &env).unwrap();
        assert_eq!((p.model.as_str(), p.wire), ("gpt-5", Wire::Chat));
    }

    #[test]
    fn custom_tables_and_bare_base_url() {
        let mut custom = BTreeMap::new();
        custom.insert(
            "corp".to_owned(),
            ProviderSettings {
                base_url: Some("https://llm.corp.example/v1".into()),
                api_key_env: Some("CORP_KEY".into()),
                wire: Some(Wire::Anthropic),
                model: Some("big".into()),
                models: ProviderModels::default(),
            },
        );
        let err = resolve(&named("corp"), &custom, &env_with(&[])).unwrap_err();
        assert!(matches!(err, ProviderError::MissingKey { .. }), "{err:?}");
        let p = resolve(&named("corp"), &custom, &env_with(&[("CORP_KEY", "x")])).unwrap();
        assert_eq!((p.wire, p.model.as_str()), (Wire::Anthropic, "big"));

        let choice = ProviderChoice {
            base_url: Some("http://127.0.0.1:9/".into()),
            model: Some("m".into()),
            ..ProviderChoice::default()
        };
        let p = resolve(&choice, &custom, &env_with(&[])).unwrap();
        assert_eq!(
            (p.name.as_str(), p.base_url.as_str(), p.wire),
            ("custom", "http://127.0.0.1:9", Wire::Chat)
        );
        assert!(p.api_key.is_none());
        let choice = ProviderChoice {
            model: None,
            ..choice
        };
        assert!(matches!(
            resolve(&choice, &custom, &env_with(&[])),
            Err(ProviderError::MissingModel { .. })
        ));
    }

    #[test]
    fn unknown_provider_lists_known_ones() {
        let mut custom = BTreeMap::new();
        custom.insert("corp".to_owned(), ProviderSettings::default());
        let err = resolve(&named("nope"), &custom, &env_with(&[])).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("'nope'") && text.contains("openai, anthropic"),
            "{text}"
        );
        assert!(
            text.contains("corp") && text.contains("[providers.*]"),
            "{text}"
        );
    }

    #[test]
    fn base_urls_are_validated() {
        for bad in ["ftp://x", "localhost:11434", "http://", "https://x/v1?a=b"] {
            let choice = ProviderChoice {
                base_url: Some(bad.into()),
                model: Some("m".into()),
                ..ProviderChoice::default()
            };
            let err = resolve(&choice, &BTreeMap::new(), &env_with(&[])).unwrap_err();
            assert!(
                matches!(err, ProviderError::InvalidBaseUrl { .. }),
                "{bad}: {err:?}"
            );
        }
    }

    #[test]
    fn keys_never_show_in_debug() {
        let env = env_with(&[("OPENAI_API_KEY", "sk-very-secret")]);
        let p = resolve(&named("openai"), &BTreeMap::new(), &env).unwrap();
        assert!(!format!("{p:?}").contains("sk-very-secret"));
    }
}
