//! How complex a user request looks: the score, its tier and why. The scoring lives in
//! atto-core's `complexity` module; this is only its vocabulary.

use serde::{Deserialize, Serialize};

/// The seeds' four complexity tiers, ordered from least to most planning needed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ComplexityTier {
    /// Score below 0.5: single-step, straightforward.
    Simple,
    /// Score from 0.5 up to (not including) 1.5: multi-step, moderate complexity.
    Medium,
    /// Score from 1.5 up to and including 2.5: significant planning needed.
    Complex,
    /// Score above 2.5: extensive exploration and multi-file changes.
    DeepResearch,
}

impl ComplexityTier {
    /// `simple`, `medium`, `complex` or `deep_research`.
    pub fn as_str(self) -> &'static str {
        match self {
            ComplexityTier::Simple => "simple",
            ComplexityTier::Medium => "medium",
            ComplexityTier::Complex => "complex",
            ComplexityTier::DeepResearch => "deep_research",
        }
    }
}

/// The classification of one request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Complexity {
    /// Weighted sum of the signals found, never negative (two decimals).
    pub score: f64,
    /// The tier the score falls in.
    pub tier: ComplexityTier,
    /// One human line per contributing signal, e.g. `mentions 3 file paths (+0.75)`.
    pub reasons: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiers_serialize_as_their_snake_case_names() -> Result<(), serde_json::Error> {
        for tier in [
            ComplexityTier::Simple,
            ComplexityTier::Medium,
            ComplexityTier::Complex,
            ComplexityTier::DeepResearch,
        ] {
            let json = serde_json::to_string(&tier)?;
            assert_eq!(json, format!("\"{}\"", tier.as_str()));
            assert_eq!(serde_json::from_str::<ComplexityTier>(&json)?, tier);
        }
        assert_eq!(ComplexityTier::DeepResearch.as_str(), "deep_research");
        Ok(())
    }

    #[test]
    fn tiers_are_ordered_by_planning_needed() {
        assert!(ComplexityTier::Simple < ComplexityTier::Medium);
        assert!(ComplexityTier::Medium < ComplexityTier::Complex);
        assert!(ComplexityTier::Complex < ComplexityTier::DeepResearch);
    }

    #[test]
    fn complexity_round_trips() -> Result<(), serde_json::Error> {
        let c = Complexity {
            score: 1.75,
            tier: ComplexityTier::Complex,
            reasons: vec!["mentions 3 file paths (+0.75)".to_owned()],
        };
        let json = serde_json::to_value(&c)?;
        assert_eq!(json["tier"], "complex");
        assert_eq!(json["score"], 1.75);
        assert_eq!(serde_json::from_value::<Complexity>(json)?, c);
        Ok(())
    }
}
