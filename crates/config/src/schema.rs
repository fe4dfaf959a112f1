//! The schema: every key the config file, a profile, a project or a flag may set, with its
//! type, default, one-line doc and where it may be set, in one table ([`KEYS`]).
//!
//! Loading reads the file into the typed [`crate::Config`]; the profile override, `atto
//! config show` and the README's reference are produced from this table, and a test holds
//! the table and the typed config to the same keys. It does not say what a value means to
//! a session: the crates that use a setting own that.

/// Where a key may be set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SetIn {
    /// The user's config file (`~/.config/atto/config.toml` or `--config FILE`).
    pub user: bool,
    /// The project's `.atto/config.toml`, which may only tighten permissions.
    pub project: bool,
    /// A `[profiles.NAME]` table, chosen with `--profile NAME`.
    pub profile: bool,
    /// The command-line flag that sets it, if one does.
    pub flag: Option<&'static str>,
}

/// One setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Key {
    /// Its dotted path in the file; an upper-case segment (`NAME`, `TIER`, `MODEL`) stands
    /// for any name the user picks.
    pub name: &'static str,
    /// The TOML type of its value.
    pub kind: &'static str,
    /// What holds when nothing sets it.
    pub default: &'static str,
    /// What it does, in one line.
    pub doc: &'static str,
    /// Where it may be set.
    pub set_in: SetIn,
}

impl Key {
    /// A key of the user's config file only.
    const fn user(name: &'static str, kind: &'static str, default: &'static str) -> Key {
        Key {
            name,
            kind,
            default,
            doc: "",
            set_in: SetIn {
                user: true,
                project: false,
                profile: false,
                flag: None,
            },
        }
    }

    const fn doc(mut self, doc: &'static str) -> Key {
        self.doc = doc;
        self
    }

    /// A project's `.atto/config.toml` may set it too (to tighten, never to widen).
    const fn project(mut self) -> Key {
        self.set_in.project = true;
        self
    }

    /// A `[profiles.NAME]` table may set it too.
    const fn profile(mut self) -> Key {
        self.set_in.profile = true;
        self
    }

    /// `flag` sets it too.
    const fn flag(mut self, flag: &'static str) -> Key {
        self.set_in.flag = Some(flag);
        self
    }

    /// Not a key of the user's file (a profile or a flag only).
    const fn not_in_file(mut self) -> Key {
        self.set_in.user = false;
        self
    }

    /// Whether a segment of the name stands for a name the user picks.
    pub fn is_pattern(&self) -> bool {
        self.name.split('.').any(is_placeholder)
    }
}

/// `NAME`, `TIER`, `MODEL`: a segment standing for any name.
pub(crate) fn is_placeholder(segment: &str) -> bool {
    segment.chars().all(|c| c.is_ascii_uppercase())
}

const STRING: &str = "string";
const INTEGER: &str = "integer";
const NUMBER: &str = "number";
const BOOL: &str = "bool";
const STRINGS: &str = "list of strings";
const TABLE: &str = "table";

/// Every setting, in the order `atto config show` and the reference list them.
pub static KEYS: &[Key] = &[
    Key::user("provider", STRING, "(from the environment's keys)")
        .doc("a preset (openai, anthropic, deepseek, openrouter, ollama, lmstudio, vllm) or a [providers.NAME] table")
        .profile()
        .flag("--provider"),
    Key::user("model", STRING, "(the provider's default)")
        .doc("the model id sent to the provider; `auto` routes each turn by complexity")
        .profile()
        .flag("--model"),
    Key::user("base_url", STRING, "(the provider's)")
        .doc("the endpoint of an OpenAI- or Anthropic-compatible server")
        .profile()
        .flag("--base-url"),
    Key::user("wire", STRING, "(the provider's)")
        .doc("the wire protocol: chat, responses or anthropic")
        .profile()
        .flag("--wire"),
    Key::user("permission_mode", STRING, "interactive")
        .doc("strict, interactive, auto-safe or yolo")
        .project()
        .profile()
        .flag("--permission, --yolo"),
    Key::user("approval_mode", STRING, "(none)")
        .doc("codewhale's suggest, auto or never, mapped onto permission modes")
        .project()
        .profile(),
    Key::user("mode", STRING, "build")
        .doc("the agent mode: build, plan, review or debug")
        .not_in_file()
        .profile()
        .flag("--mode"),
    Key::user("profile", STRING, "(none)")
        .doc("the [profiles.NAME] table whose settings apply over the file's")
        .not_in_file()
        .flag("--profile"),
    Key::user("profiles.NAME", TABLE, "(none)")
        .doc("a named set of the keys marked `profile` (flags still win over it)"),
    Key::user("providers.NAME.base_url", STRING, "(the preset's)")
        .doc("the endpoint of a custom provider, or a preset's override"),
    Key::user("providers.NAME.api_key_env", STRING, "(the preset's)")
        .doc("the environment variable holding the API key; keys never go in the config"),
    Key::user("providers.NAME.wire", STRING, "(the preset's)")
        .doc("chat, responses or anthropic"),
    Key::user("providers.NAME.model", STRING, "(the preset's)")
        .doc("the provider's default model"),
    Key::user("providers.NAME.models", "list of strings or tables", "[]")
        .doc("other models a session may switch to with /model NAME"),
    Key::user("providers.NAME.models.MODEL.context_window", INTEGER, "(atto's table)")
        .doc("the model's context window in tokens, for one atto does not know"),
    Key::user("routing.TIER", "string or {model, effort}", "(the provider's defaults)")
        .doc("--model auto: the model (and effort) for simple, medium, complex, deep_research"),
    Key::user("limits.max_rounds", INTEGER, "50")
        .doc("model calls per turn")
        .profile()
        .flag("--max-rounds (exec)"),
    Key::user("limits.max_tokens", INTEGER, "none")
        .doc("tokens per turn")
        .profile(),
    Key::user("limits.max_duration_secs", INTEGER, "none")
        .doc("wall time per turn, in seconds")
        .profile()
        .flag("--timeout (exec)"),
    Key::user("limits.max_output_tokens", INTEGER, "8192")
        .doc("output tokens per model call")
        .profile(),
    Key::user("retry.max_attempts", INTEGER, "5")
        .doc("attempts per model call on transport errors, 408/409/429/5xx, overloaded"),
    Key::user("retry.base_delay_ms", INTEGER, "1000")
        .doc("delay = min(base * 2^attempt, max) + jitter; Retry-After wins"),
    Key::user("retry.max_delay_ms", INTEGER, "60000").doc("the longest delay between attempts"),
    Key::user("approval_timeout_secs", INTEGER, "600")
        .doc("an unanswered approval is refused after this (0: never)"),
    Key::user("permissions.allow", STRINGS, "[]")
        .doc("rules (`tool` or `tool(pattern)`) that run without a question"),
    Key::user("permissions.ask", STRINGS, "[]")
        .doc("rules that always ask")
        .project(),
    Key::user("permissions.deny", STRINGS, "[]")
        .doc("rules that are always refused")
        .project(),
    Key::user("unsandboxed_commands", STRINGS, "[]")
        .doc("exact commands that may re-run without the sandbox unasked")
        .flag("--allow-unsandboxed (exec)"),
    Key::user("allow_network", BOOL, "false").doc("sandboxed commands may use the network"),
    Key::user("allow_unix_sockets", BOOL, "false")
        .doc("sandboxed commands may open unix sockets while the network is off"),
    Key::user("pass_env", STRINGS, "[]")
        .doc("environment variables commands see besides the harmless set (exact names)"),
    Key::user("apply_patch", BOOL, "(GPT-5 and Codex models)")
        .doc("offer the apply_patch tool"),
    Key::user("sandbox.hide", STRINGS, "[]")
        .doc("more paths sandboxed commands cannot read (`~/` is home), besides the credential stores"),
    Key::user("sandbox.unhide", STRINGS, "[]")
        .doc("default hidden paths commands may read after all"),
    Key::user("acp_allow_workspaces", STRINGS, "[]")
        .doc("directories `atto acp` may take as a workspace although they hold the home directory"),
    Key::user("subagents.fraction", NUMBER, "0.15")
        .doc("a child's share of its parent's remaining tokens"),
    Key::user("subagents.min_tokens", INTEGER, "50000").doc("the least tokens a child gets"),
    Key::user("subagents.max_tokens", INTEGER, "200000").doc("the most tokens a child gets"),
    Key::user("subagents.max_iterations", INTEGER, "30").doc("model calls a child may make"),
    Key::user("subagents.timeout_secs", INTEGER, "300").doc("a child's wall time in seconds"),
    Key::user("subagents.max_depth", INTEGER, "3").doc("how deep subagents nest"),
    Key::user("subagents.max_running", INTEGER, "8")
        .doc("subagents running at once, 1-20")
        .flag("--max-subagents"),
    Key::user("subagents.max_budget_tokens", INTEGER, "none")
        .doc("tokens the whole session may use, subagents included")
        .flag("--max-budget-tokens"),
    Key::user("subagents.max_budget_usd", NUMBER, "none")
        .doc("US dollars the whole session may spend, subagents included")
        .flag("--max-budget-usd"),
    Key::user("planner.auto_rollback_on_failure", BOOL, "true")
        .doc("a failed /auto step is rolled back to its checkpoint and the plan stops"),
    Key::user("planner.detect", BOOL, "false")
        .doc("plan plain prompts whose complexity reaches planner.threshold"),
    Key::user("planner.threshold", NUMBER, "1.5")
        .doc("the complexity score from which a prompt is planned (0.5 MEDIUM, 1.5 COMPLEX, 2.5 DEEP_RESEARCH)"),
    Key::user("planner.parallel", BOOL, "false")
        .doc("run ready steps with disjoint files together"),
    Key::user("learning.enabled", BOOL, "true")
        .doc("recall learnings into prompts, propose new ones, offer the tools"),
    Key::user("learning.auto_validate_threshold", NUMBER, "0.9")
        .doc("proposals at or above this confidence are kept without asking (above 1: never)"),
    Key::user("learning.max_learnings", INTEGER, "500")
        .doc("learnings kept before the least useful are evicted"),
    Key::user("learning.max_recalled", INTEGER, "5").doc("learnings recalled into one request"),
    Key::user("learning.max_recalled_bytes", INTEGER, "1536")
        .doc("bytes the recalled notes may take in one request"),
    Key::user("context.compact_at_percent", INTEGER, "80")
        .doc("compact when the next request would fill more of the context window (10-100)"),
    Key::user("context.keep_recent_percent", INTEGER, "25")
        .doc("the newest share of the window a compaction keeps verbatim (5-60)"),
    Key::user("context.start_map_max_files", INTEGER, "30")
        .doc("a repository with at most this many source files gets its map with the first prompt (0: never)"),
    Key::user("checkpoints.keep_days", INTEGER, "7")
        .doc("days a file checkpoint is kept (the newest always stays)"),
    Key::user("checkpoints.max_bytes", INTEGER, "314572800")
        .doc("bytes the checkpoints' side repository may take (the newest always stays)"),
    Key::user("mcp_servers.NAME.command", STRING, "(none)")
        .doc("the program of a stdio MCP server"),
    Key::user("mcp_servers.NAME.args", STRINGS, "[]").doc("its arguments"),
    Key::user("mcp_servers.NAME.env", TABLE, "{}").doc("extra environment variables"),
    Key::user("mcp_servers.NAME.cwd", STRING, "(the workspace)").doc("its working directory"),
    Key::user("mcp_servers.NAME.url", STRING, "(none)")
        .doc("the endpoint of a streamable-HTTP MCP server"),
    Key::user("mcp_servers.NAME.headers", TABLE, "{}")
        .doc("HTTP headers, `${VAR}` read from the environment"),
    Key::user("mcp_servers.NAME.type", STRING, "(from command or url)")
        .doc("stdio, http or streamable-http"),
    Key::user("mcp_servers.NAME.enabled", BOOL, "true")
        .doc("false keeps the server configured but not started"),
    Key::user("mcp_servers.NAME.disabled", BOOL, "false")
        .doc("the opposite of enabled, as .mcp.json files say it"),
    Key::user("mcp_servers.NAME.startup_timeout", NUMBER, "30")
        .doc("seconds the server may take to start and list its tools"),
    Key::user("mcp_servers.NAME.tool_timeout", NUMBER, "120")
        .doc("seconds one tool call may run"),
    Key::user("mcp_servers.NAME.tools.allow", STRINGS, "[]")
        .doc("only these tools are offered (empty: all)"),
    Key::user("mcp_servers.NAME.tools.deny", STRINGS, "[]").doc("these tools are never offered"),
    Key::user("mcp_servers.NAME.tools.writes", STRINGS, "[]")
        .doc("tools that change things, whatever their readOnlyHint says"),
    Key::user("mcp_servers.NAME.tools.trust_annotations", BOOL, "true")
        .doc("whether readOnlyHint is believed at all"),
    Key::user("mcp_servers.NAME.tools.permissions.allow", STRINGS, "[]")
        .doc("tools that run without asking"),
    Key::user("mcp_servers.NAME.tools.permissions.ask", STRINGS, "[]")
        .doc("tools that always ask"),
    Key::user("mcp_servers.NAME.tools.permissions.deny", STRINGS, "[]")
        .doc("tools that never run"),
];

/// The key named `name` exactly as the table spells it.
pub fn key(name: &str) -> Option<&'static Key> {
    KEYS.iter().find(|k| k.name == name)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::{Config, ProjectConfig};

    /// The fields serde expects in the table at `header`, read from its unknown-field
    /// error (which lists them all).
    fn fields_of<T: serde::de::DeserializeOwned + std::fmt::Debug>(header: &str) -> Vec<String> {
        let text = format!("{header}\nzz_not_a_key = 1\n");
        let err = toml::from_str::<T>(&text).unwrap_err().to_string();
        let expected = err
            .split_once("expected")
            .unwrap_or_else(|| panic!("{header}: {err}"))
            .1;
        let expected = expected.lines().next().unwrap_or_default();
        expected
            .split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_owned)
            .collect()
    }

    /// The schema's names under `prefix`, one segment deep.
    fn schema_fields(prefix: &str) -> Vec<String> {
        let mut names: Vec<String> = KEYS
            .iter()
            .filter(|k| k.set_in.user)
            .filter_map(|k| k.name.strip_prefix(prefix))
            .map(|rest| rest.split('.').next().unwrap_or(rest).to_owned())
            .collect();
        names.dedup();
        names
    }

    #[test]
    fn the_table_and_the_typed_config_hold_the_same_keys() {
        let sections = [
            ("", ""),
            ("[limits]", "limits."),
            ("[retry]", "retry."),
            ("[subagents]", "subagents."),
            ("[sandbox]", "sandbox."),
            ("[planner]", "planner."),
            ("[learning]", "learning."),
            ("[context]", "context."),
            ("[checkpoints]", "checkpoints."),
            ("[permissions]", "permissions."),
            ("[providers.x.models.y]", "providers.NAME.models.MODEL."),
            ("[mcp_servers.x]", "mcp_servers.NAME."),
            ("[mcp_servers.x.tools]", "mcp_servers.NAME.tools."),
            (
                "[mcp_servers.x.tools.permissions]",
                "mcp_servers.NAME.tools.permissions.",
            ),
        ];
        // `[providers.NAME]` is atto-llm's table, which passes unknown keys by; its keys
        // are read back from a parsed file in `provider_keys_are_read` instead.
        for (header, prefix) in sections {
            let mut typed = fields_of::<Config>(header);
            typed.sort();
            let mut schema = schema_fields(prefix);
            schema.sort();
            schema.dedup();
            assert_eq!(
                typed, schema,
                "the keys of {header:?} and the schema differ"
            );
        }
    }

    #[test]
    fn provider_keys_are_read() {
        let text = "[providers.x]\nbase_url = \"u\"\napi_key_env = \"K\"\nwire = \"chat\"\n\
                    model = \"m\"\n[providers.x.models.y]\ncontext_window = 9\n";
        let config = Config::parse(text, Path::new("c.toml")).unwrap();
        let x = &config.providers["x"];
        assert!(x.base_url.is_some() && x.api_key_env.is_some() && x.wire.is_some());
        assert!(x.model.is_some() && x.models.0["y"].context_window == Some(9));
        let schema: Vec<&str> = KEYS
            .iter()
            .filter_map(|k| k.name.strip_prefix("providers.NAME."))
            .collect();
        for key in ["base_url", "api_key_env", "wire", "model", "models"] {
            assert!(text.contains(key) && schema.contains(&key), "{key}");
        }
        assert!(schema.contains(&"models.MODEL.context_window"));
    }

    #[test]
    fn profiles_and_projects_set_what_the_table_says() {
        let mut profile = fields_of::<Config>("[profiles.x]");
        profile.sort();
        let mut schema: Vec<String> = KEYS
            .iter()
            .filter(|k| k.set_in.profile)
            .map(|k| k.name.split('.').next().unwrap_or(k.name).to_owned())
            .collect();
        schema.sort();
        schema.dedup();
        assert_eq!(profile, schema);
        // A project may set the permission modes and rules; `allow` it refuses when loading.
        let mut project = fields_of::<ProjectConfig>("");
        project.sort();
        let mut schema: Vec<String> = KEYS
            .iter()
            .filter(|k| k.set_in.project)
            .map(|k| k.name.split('.').next().unwrap_or(k.name).to_owned())
            .collect();
        schema.sort();
        schema.dedup();
        assert_eq!(project, schema);
        assert!(Config::parse("[permissions]\nallow = []", Path::new("c.toml")).is_ok());
    }

    #[test]
    fn every_key_is_documented_once() {
        for (i, key) in KEYS.iter().enumerate() {
            assert!(!key.doc.is_empty(), "{} has no doc", key.name);
            assert!(!key.default.is_empty(), "{} has no default", key.name);
            assert!(
                KEYS[..i].iter().all(|k| k.name != key.name),
                "{} twice",
                key.name
            );
            assert_eq!(super::key(key.name), Some(key));
        }
    }
}
