//! The user's `config.toml`, with and without a profile: a config or a one-line error
//! naming the file (and, for what the TOML parser rejects, the line), for any text and for
//! TOML built from the schema's own keys.
#![no_main]

use std::path::Path;

use arbitrary::{Result, Unstructured};
use atto_config::{KEYS, Loaded};
use libfuzzer_sys::fuzz_target;

/// Values of every type the schema's keys take, and some that no key takes.
const VALUES: &[&str] = &[
    "\"x\"",
    "\"chat\"",
    "\"review\"",
    "\"\"",
    "0",
    "1",
    "-1",
    "1.5",
    "-0.1",
    "nan",
    "inf",
    "true",
    "false",
    "[]",
    "[\"a\", \"b\"]",
    "{}",
    "{ model = \"m\", effort = \"high\" }",
    "18446744073709551616",
    "1979-05-27",
];

/// A key of the schema with its placeholders named, or a made-up one.
fn key(u: &mut Unstructured<'_>) -> Result<String> {
    if u.ratio(1, 16)? {
        return Ok("zz_unknown".to_owned());
    }
    let key = u.choose(KEYS)?;
    let names = ["a", "b", "p"];
    let segments: Result<Vec<String>> = key
        .name
        .split('.')
        .map(|s| {
            if s.chars().all(|c| c.is_ascii_uppercase()) {
                u.choose(&names).map(|n| (*n).to_owned())
            } else {
                Ok(s.to_owned())
            }
        })
        .collect();
    let name = segments?.join(".");
    // A profile may hold the keys a profile sets.
    Ok(if key.set_in.profile && u.ratio(1, 3)? {
        format!("profiles.p.{}", key.name)
    } else {
        name
    })
}

/// TOML lines of dotted keys, each set to one of [`VALUES`].
fn document(u: &mut Unstructured<'_>) -> Result<String> {
    let mut text = String::new();
    for _ in 0..u.int_in_range(0..=8)? {
        text.push_str(&format!("{} = {}\n", key(u)?, u.choose(VALUES)?));
    }
    Ok(text)
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let text = if mode & 1 == 0 {
        String::from_utf8_lossy(rest).into_owned()
    } else {
        let Ok(text) = document(&mut Unstructured::new(rest)) else {
            return;
        };
        text
    };
    let path = Path::new("/home/u/.config/atto/config.toml");
    let profile = (mode & 2 != 0).then_some("p");
    let loaded = Loaded::parse(&text, path).and_then(|l| l.with_profile(profile, path));
    if let Err(e) = loaded {
        let shown = e.to_string();
        assert!(
            shown.starts_with("invalid config /home/u/.config/atto/config.toml: "),
            "the error does not name the file: {shown}"
        );
        assert!(!shown.contains('\n'), "a multi-line error: {shown:?}");
    }
});
