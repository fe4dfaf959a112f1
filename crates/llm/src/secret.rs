//! API keys, kept out of every error, `Debug` output and log.
//!
//! Owns the [`Secret`] wrapper and scrubbing a key out of text a provider sent back.
//! It does not decide where keys come from; `provider` reads them from the environment.

use std::fmt;

/// Replaces a scrubbed key in text.
const REDACTED: &str = "[redacted]";

/// A secret value (an API key). `Debug` and `Display` never show it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret value.
    pub fn new(value: impl Into<String>) -> Secret {
        Secret(value.into())
    }

    /// The secret itself, for the one place that must send it (an HTTP header).
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// `text` with every occurrence of this secret replaced by `[redacted]`.
    pub fn scrub(&self, text: &str) -> String {
        // A very short "key" would blank out ordinary words; such a value is no real
        // credential, so it is left alone.
        if self.0.len() < 4 || !text.contains(self.0.as_str()) {
            return text.to_owned();
        }
        text.replace(self.0.as_str(), REDACTED)
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret([redacted])")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_and_display_hide_the_value() {
        let s = Secret::new("sk-live-123456");
        assert_eq!(format!("{s:?}"), "Secret([redacted])");
        assert_eq!(format!("{s}"), "[redacted]");
        assert_eq!(s.expose(), "sk-live-123456");
    }

    #[test]
    fn scrub_removes_every_occurrence() {
        let s = Secret::new("sk-live-123456");
        assert_eq!(
            s.scrub("bad key sk-live-123456 (sk-live-123456)"),
            "bad key [redacted] ([redacted])"
        );
        assert_eq!(Secret::new("ab").scrub("abc"), "abc");
    }
}
