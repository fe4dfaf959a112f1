//! Model choice in a session: routes by complexity, and spend per model.

use serde::{Deserialize, Serialize};

use crate::{ComplexityTier, ReasoningEffort, Usage};

/// Where `--model auto` sends a turn of one complexity tier.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelRoute {
    /// The tier.
    pub tier: ComplexityTier,
    /// The model its turns go to.
    pub model: String,
    /// The reasoning effort they carry; `None`: the provider's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effort: Option<ReasoningEffort>,
}

/// What one model was used for in a session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelSpend {
    /// The model.
    pub model: String,
    /// Model calls made to it.
    pub calls: u32,
    /// Tokens by kind.
    pub usage: Usage,
    /// US dollars; `None` when its price is unknown.
    #[serde(default)]
    pub cost_usd: Option<f64>,
}
