//! The configuration reference as Markdown, produced from the schema table: the README's
//! section between its `config-reference` markers is this text (`atto config reference`
//! prints it; a test keeps the README equal to it).

use crate::schema::{KEYS, SetIn};

/// The reference table, one row per key.
pub fn reference() -> String {
    let mut out =
        String::from("| key | type | default | set in | what it does |\n|---|---|---|---|---|\n");
    for key in KEYS {
        out.push_str(&format!(
            "| `{}` | {} | {} | {} | {} |\n",
            key.name,
            key.kind,
            cell(key.default),
            places(key.set_in),
            cell(key.doc)
        ));
    }
    out
}

/// A cell's text with the table's separator escaped.
fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}

/// `user, project, profile, --flag`: where a key may be set.
fn places(set_in: SetIn) -> String {
    let mut places: Vec<String> = Vec::new();
    for (on, place) in [
        (set_in.user, "user"),
        (set_in.project, "project"),
        (set_in.profile, "profile"),
    ] {
        if on {
            places.push(place.to_owned());
        }
    }
    if let Some(flag) = set_in.flag {
        places.push(format!("`{flag}`"));
    }
    places.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    const START: &str = "<!-- config-reference: start (atto config reference) -->\n";
    const END: &str = "<!-- config-reference: end -->";

    #[test]
    fn the_readme_reference_is_the_table() {
        let readme = concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md");
        let text = std::fs::read_to_string(readme).unwrap();
        let section = text
            .split_once(START)
            .and_then(|(_, rest)| rest.split_once(END))
            .map(|(section, _)| section)
            .unwrap_or_else(|| panic!("README.md has no {START:?} … {END:?} section"));
        assert!(
            section == reference(),
            "README.md's configuration reference differs from the schema table: replace the \
             lines between its config-reference markers with the output of `atto config \
             reference`"
        );
    }
}
