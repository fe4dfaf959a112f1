//! Grant rules: `tool` or `tool(pattern)`, e.g. `bash(npm run test:*)`,
//! `edit_file(src/**)`, `mcp_github_*`.
//!
//! The tool part is a wildcard over tool names. The pattern is matched against each
//! executed command segment for `bash` (fnmatch, `*` spans anything) — as written and
//! in its normalised form (program path dropped, words unquoted and single-spaced; for
//! ask and deny rules also with wrappers such as `sudo`/`env` dropped) — and against each
//! target path, workspace-relative, for file tools (`**` spans directories). An allow
//! rule must cover every segment and every path of a call — so a prefix grant never
//! approves a chained command it does not fully cover — while an ask or deny rule
//! applies when any part matches.

use globset::{Glob, GlobBuilder, GlobMatcher};

use super::matrix::Action;
use crate::bash::Verdict;

/// A parsed rule.
#[derive(Debug, Clone)]
pub struct Rule {
    text: String,
    tool: GlobMatcher,
    pattern: Option<Pattern>,
}

#[derive(Debug, Clone)]
struct Pattern {
    /// For commands: `*` crosses `/` and spaces.
    command: GlobMatcher,
    /// For paths: `*` stays within a directory, `**` crosses them.
    path: GlobMatcher,
}

/// A rule that cannot be used; the message quotes it and says what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid permission rule '{rule}': {problem}")]
pub struct RuleError {
    /// The rule as written.
    pub rule: String,
    /// What is wrong with it.
    pub problem: String,
}

impl Rule {
    /// Parses `tool` or `tool(pattern)`.
    pub fn parse(text: &str) -> Result<Rule, RuleError> {
        let err = |problem: &str| RuleError {
            rule: text.to_owned(),
            problem: problem.to_owned(),
        };
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return Err(err("it is empty"));
        }
        let (tool, pattern) = match trimmed.find('(') {
            None => {
                if trimmed.contains(')') {
                    return Err(err("')' without '('"));
                }
                (trimmed, None)
            }
            Some(open) => {
                let Some(inner) = trimmed[open + 1..].strip_suffix(')') else {
                    return Err(err("'(' must be closed by a ')' at the end"));
                };
                if inner.trim().is_empty() {
                    return Err(err(
                        "the pattern in parentheses is empty (omit the parentheses to match every call)",
                    ));
                }
                (&trimmed[..open], Some(inner.trim()))
            }
        };
        let tool = tool.trim();
        if tool.is_empty() {
            return Err(err("no tool name before '('"));
        }
        if !tool
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '*' | '?' | '.'))
        {
            return Err(err(
                "a tool name may hold letters, digits, _ - . and the wildcards * ?",
            ));
        }
        let tool = Glob::new(tool)
            .map_err(|e| err(&e.to_string()))?
            .compile_matcher();
        let pattern = match pattern {
            None => None,
            Some(p) => Some(Pattern {
                command: GlobBuilder::new(p)
                    .literal_separator(false)
                    .backslash_escape(true)
                    .build()
                    .map_err(|e| err(&e.to_string()))?
                    .compile_matcher(),
                path: GlobBuilder::new(p.trim_start_matches("./"))
                    .literal_separator(true)
                    .build()
                    .map_err(|e| err(&e.to_string()))?
                    .compile_matcher(),
            }),
        };
        Ok(Rule {
            text: trimmed.to_owned(),
            tool,
            pattern,
        })
    }

    /// The rule as written.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether this rule, deciding `action`, applies to a call.
    pub fn applies(
        &self,
        action: Action,
        tool: &str,
        bash: Option<&Verdict>,
        paths: &[String],
    ) -> bool {
        // An MCP tool (`mcp__server__tool`) is also matched in the seed's spelling
        // (`mcp_server_tool`), so rules written either way apply.
        if !self.tool.is_match(tool)
            && !mcp_seed_spelling(tool).is_some_and(|alias| self.tool.is_match(&alias))
        {
            return false;
        }
        let Some(pattern) = &self.pattern else {
            return true;
        };
        let every = action == Action::Allow;
        let check = |matched: Vec<bool>| {
            if every {
                matched.iter().all(|m| *m)
            } else {
                matched.iter().any(|m| *m)
            }
        };
        if let Some(verdict) = bash {
            if verdict.segments.is_empty() {
                return false;
            }
            return check(
                verdict
                    .segments
                    .iter()
                    .map(|s| {
                        // Normalised spellings (`"git"  push`, `/usr/bin/git push`)
                        // match like the plain one. Only ask and deny rules look
                        // past wrappers (`sudo git push`): an allow grant for
                        // `git push*` must not approve `sudo git push`.
                        let inner = (!every).then_some(s.command.as_str());
                        [Some(s.text.trim()), Some(s.invocation.as_str()), inner]
                            .into_iter()
                            .flatten()
                            .any(|form| !form.is_empty() && pattern.command.is_match(form))
                    })
                    .collect(),
            );
        }
        if paths.is_empty() {
            // A pattern needs something to match: a tool with neither a command nor a
            // path is only matched by a rule without a pattern.
            return false;
        }
        check(
            paths
                .iter()
                .map(|p| pattern.path.is_match(p.trim_start_matches("./")))
                .collect(),
        )
    }
}

/// The seed's spelling of an MCP tool name: `mcp__server__tool` → `mcp_server_tool`.
pub fn mcp_seed_spelling(name: &str) -> Option<String> {
    let rest = name.strip_prefix("mcp__")?;
    let (server, tool) = rest.split_once("__")?;
    Some(format!("mcp_{server}_{tool}"))
}

impl std::fmt::Display for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}
