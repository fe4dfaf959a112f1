//! `/config`: the session's settings, shown and changed with the same checks as the
//! flags. A change that loosens safety (a laxer permission or approval mode, leaving a
//! read-only or plan mode for build, trust on) is refused until confirmed, with what it
//! would change; tightening never asks.

use atto_policy::gate::{PermissionSetting, parse_agent_mode, parse_permission, permission_name};
use atto_protocol::{AgentMode, Event, PermissionMode};

use super::Session;

/// The keys `/config` knows, in the order it shows them.
const KEYS: &str = "permission, approval, mode, model, effort, trust, max_rounds, max_tokens, \
                    max_duration_secs, max_output_tokens";

impl Session {
    /// `/config` (show), `/config KEY VALUE [confirm]`.
    pub(super) async fn configure(&mut self, key: Option<&str>, value: &str, confirm: bool) {
        let Some(key) = key else {
            self.show_config();
            return;
        };
        let value = value.trim();
        let done = match key {
            "permission" | "approval" => self.configure_permission(key, value, confirm).await,
            "mode" => self.configure_mode(value, confirm).await,
            "model" => {
                self.set_model(value).await;
                Ok(())
            }
            "effort" => {
                atto_protocol::parse_effort(if value == "none" { "default" } else { value })
                    .map(|effort| self.set_effort(effort))
            }
            "trust" => self.configure_trust(value, confirm),
            "max_rounds" | "max_tokens" | "max_duration_secs" | "max_output_tokens" => {
                self.configure_limit(key, value)
            }
            other => Err(format!("unknown setting '{other}'; /config sets {KEYS}")),
        };
        if let Err(message) = done {
            self.emit(Event::Error {
                message: format!("{message}; nothing was changed"),
            });
        }
    }

    fn show_config(&self) {
        let limits = &self.options.limits;
        let setting = self.gate.permission;
        let lines = [
            format!(
                "permission  {}{}",
                permission_name(setting.mode),
                if setting.deny_asks {
                    " (approval never: asks are denied)"
                } else {
                    ""
                }
            ),
            format!("mode        {}", self.mode.as_str()),
            format!(
                "model       {}{}",
                self.options.client.info().model,
                if self.models.auto() { " (auto)" } else { "" }
            ),
            format!(
                "effort      {}",
                self.effort.map_or("default", atto_llm::effort_name)
            ),
            format!("trust       {}", if self.trust { "on" } else { "off" }),
            format!("max_rounds  {}", limits.max_rounds),
            format!(
                "max_tokens  {}",
                limits
                    .max_tokens
                    .map_or("none".to_owned(), |n| n.to_string())
            ),
            format!(
                "max_duration_secs {}",
                limits
                    .max_duration
                    .map_or("none".to_owned(), |d| d.as_secs().to_string())
            ),
            format!("max_output_tokens {}", limits.max_output_tokens),
            format!("change one with /config KEY VALUE ({KEYS})"),
        ];
        self.emit(Event::Notice {
            message: lines.join("\n"),
        });
    }

    async fn configure_permission(
        &mut self,
        key: &str,
        value: &str,
        confirm: bool,
    ) -> Result<(), String> {
        let setting = parse_permission(value)?;
        let now = self.gate.permission;
        if loosens(now, setting) && !confirm {
            return Err(format!(
                "{key} {value} loosens safety ({} → {}: {}). To confirm: /config {key} {value} \
                 confirm",
                describe(now),
                describe(setting),
                consequence(setting)
            ));
        }
        self.trust = match setting.mode {
            PermissionMode::Yolo => true,
            _ if now.mode == PermissionMode::Yolo => self.options.trust,
            _ => self.trust,
        };
        self.gate.permission = setting;
        self.gate.audit.mode = setting.mode;
        self.save_modes().await;
        self.emit(Event::ModeChanged {
            mode: self.mode,
            permission: setting.mode,
        });
        Ok(())
    }

    async fn configure_mode(&mut self, value: &str, confirm: bool) -> Result<(), String> {
        let (mode, yolo) = parse_agent_mode(value)?;
        let leaves_guard = mode == AgentMode::Build && self.mode != AgentMode::Build;
        let to_yolo = yolo && self.gate.permission.mode != PermissionMode::Yolo;
        if (leaves_guard || to_yolo) && !confirm {
            return Err(format!(
                "mode {value} loosens safety ({} → {value}: {}). To confirm: /config mode {value} \
                 confirm",
                self.mode.as_str(),
                if to_yolo {
                    "every call runs without asking and commands run unsandboxed"
                } else {
                    "writes and commands run instead of being queued or refused"
                }
            ));
        }
        self.set_mode(mode, yolo.then_some(PermissionMode::Yolo))
            .await;
        Ok(())
    }

    fn configure_trust(&mut self, value: &str, confirm: bool) -> Result<(), String> {
        let on = match value {
            "on" | "true" => true,
            "off" | "false" => false,
            other => return Err(format!("trust takes on or off, not '{other}'")),
        };
        if on && !self.trust && !confirm {
            return Err(
                "trust on loosens safety (file tools may then read and write outside the \
                 workspace). To confirm: /config trust on confirm"
                    .to_owned(),
            );
        }
        self.trust = on;
        self.emit(Event::TrustChanged { on });
        Ok(())
    }

    fn configure_limit(&mut self, key: &str, value: &str) -> Result<(), String> {
        let none = matches!(value, "none" | "off");
        let number = || {
            value.parse::<u64>().ok().filter(|n| *n > 0).ok_or_else(|| {
                format!(
                    "{key} takes a positive number{}, not '{value}'",
                    if key == "max_rounds" || key == "max_output_tokens" {
                        ""
                    } else {
                        " or none"
                    }
                )
            })
        };
        let limits = &mut self.options.limits;
        match key {
            "max_rounds" => {
                limits.max_rounds = u32::try_from(number()?).unwrap_or(u32::MAX);
            }
            "max_output_tokens" => {
                limits.max_output_tokens = u32::try_from(number()?).unwrap_or(u32::MAX);
            }
            "max_tokens" => limits.max_tokens = if none { None } else { Some(number()?) },
            _ => {
                limits.max_duration = if none {
                    None
                } else {
                    Some(std::time::Duration::from_secs(number()?))
                };
            }
        }
        self.emit(Event::Notice {
            message: format!("{key} is now {value} for the following turns"),
        });
        Ok(())
    }
}

/// Whether `to` lets more happen without a person than `from`.
fn loosens(from: PermissionSetting, to: PermissionSetting) -> bool {
    let rank = |m| match m {
        PermissionMode::Strict => 0,
        PermissionMode::Interactive => 1,
        PermissionMode::AutoSafe => 2,
        PermissionMode::Yolo => 3,
    };
    rank(to.mode) > rank(from.mode) || (from.deny_asks && !to.deny_asks && rank(to.mode) >= 1)
}

fn describe(s: PermissionSetting) -> String {
    if s.deny_asks {
        format!("{} (approval never)", permission_name(s.mode))
    } else {
        permission_name(s.mode).to_owned()
    }
}

fn consequence(s: PermissionSetting) -> &'static str {
    match s.mode {
        PermissionMode::Yolo => "every call runs without asking and commands run unsandboxed",
        PermissionMode::AutoSafe => "writes and commands run without asking, in the sandbox",
        PermissionMode::Interactive | PermissionMode::Strict => {
            "calls that were refused will be asked about"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(mode: PermissionMode, deny_asks: bool) -> PermissionSetting {
        PermissionSetting { mode, deny_asks }
    }

    #[test]
    fn only_a_laxer_setting_loosens() {
        use PermissionMode::*;
        assert!(loosens(s(Interactive, false), s(Yolo, false)));
        assert!(loosens(s(Strict, false), s(AutoSafe, false)));
        assert!(loosens(s(Interactive, true), s(Interactive, false)));
        assert!(!loosens(s(Yolo, false), s(Strict, false)));
        assert!(!loosens(s(Interactive, false), s(Interactive, true)));
        assert!(!loosens(s(AutoSafe, false), s(Interactive, false)));
    }
}
