//! Tool names: `mcp__<server>__<tool>` (the ecosystem's convention, unambiguous when the
//! names hold single underscores) and the seed's `mcp_<server>_<tool>` spelling, which
//! rules, grants and calls also accept.

/// The prefix every MCP tool name starts with.
pub const PREFIX: &str = "mcp__";

/// Longest tool name the model APIs accept.
const MAX_NAME: usize = 64;

/// The name the model calls `tool` of `server` by. Characters the model APIs refuse
/// become `_`; a name past 64 characters is cut and ends in a short hash of the whole,
/// so two long names stay distinct.
pub fn tool_name(server: &str, tool: &str) -> String {
    let clean: String = tool
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let full = format!("{PREFIX}{server}__{clean}");
    if full.len() <= MAX_NAME {
        return full;
    }
    let hash = full.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    let suffix = format!("_{:08x}", hash & 0xffff_ffff);
    format!("{}{suffix}", &full[..MAX_NAME - suffix.len()])
}

/// The seed's spelling of a `mcp__server__tool` name: `mcp_server_tool` (policy owns
/// it, since rules match both).
pub use atto_policy::gate::mcp_seed_spelling as seed_spelling;

/// The server part of a `mcp__server__tool` or `mcp_server_tool` name, given the
/// configured server names (the seed spelling is ambiguous without them).
pub fn server_of<'a>(name: &str, servers: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    if let Some(rest) = name.strip_prefix(PREFIX) {
        let (server, _) = rest.split_once("__")?;
        return servers.into_iter().find(|s| *s == server);
    }
    let rest = name.strip_prefix("mcp_")?;
    // The longest configured name that fits, so `a_b` wins over `a` for `mcp_a_b_tool`.
    servers
        .into_iter()
        .filter(|s| {
            rest.strip_prefix(*s)
                .is_some_and(|t| t.starts_with('_') && t.len() > 1)
        })
        .max_by_key(|s| s.len())
}

/// The canonical `mcp__server__tool` form of a name in either spelling.
pub fn canonical<'a>(name: &str, servers: impl IntoIterator<Item = &'a str>) -> Option<String> {
    if name.starts_with(PREFIX) {
        return Some(name.to_owned());
    }
    let server = server_of(name, servers)?;
    let tool = name
        .strip_prefix("mcp_")?
        .strip_prefix(server)?
        .strip_prefix('_')?;
    Some(format!("{PREFIX}{server}__{tool}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_in_both_spellings() {
        assert_eq!(tool_name("fs", "read_file"), "mcp__fs__read_file");
        assert_eq!(tool_name("fs", "weird.name/x"), "mcp__fs__weird_name_x");
        assert_eq!(
            seed_spelling("mcp__fs__read_file").as_deref(),
            Some("mcp_fs_read_file")
        );
        let servers = ["fs", "my_fs"];
        assert_eq!(server_of("mcp__fs__read_file", servers), Some("fs"));
        assert_eq!(server_of("mcp_my_fs_read_file", servers), Some("my_fs"));
        assert_eq!(server_of("mcp_other_x", servers), None);
        assert_eq!(
            canonical("mcp_my_fs_read_file", servers).as_deref(),
            Some("mcp__my_fs__read_file")
        );
    }

    #[test]
    fn long_names_are_cut_and_stay_distinct() {
        let a = tool_name("server", &"a".repeat(80));
        let b = tool_name("server", &format!("{}b", "a".repeat(79)));
        assert_eq!(a.len(), 64);
        assert_ne!(a, b);
    }
}
