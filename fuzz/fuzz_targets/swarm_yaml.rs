//! Swarm YAML from a cloned repository (`.atto/swarm.yaml` and `.attocode/swarm.yaml`):
//! a config or a one-line error naming the file.
#![no_main]

use std::path::Path;

use atto_swarm::config::SwarmConfig;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&spelling, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let path = if spelling & 1 == 0 {
        Path::new("/repo/.atto/swarm.yaml")
    } else {
        Path::new("/repo/.attocode/swarm.yaml")
    };
    if let Err(e) = SwarmConfig::parse(text, path) {
        let shown = e.to_string();
        assert!(
            shown.contains(&path.display().to_string()),
            "the error does not name the file: {shown}"
        );
        assert!(!shown.contains('\n'), "a multi-line error: {shown:?}");
    }
});
