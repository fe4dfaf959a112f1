//! `atto demo`: the whole loop offline, saying plainly that the model is scripted.

use crate::common::{Env, stderr};

#[test]
fn demo_fixes_the_project_and_says_the_model_is_scripted() {
    let env = Env::new();
    let dir = env.dir.path().join("demo-project");
    let out = env
        .atto()
        .arg("demo")
        .arg("--dir")
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("SCRIPTED"), "{stdout}");
    assert!(
        stdout.contains("Hello, world!"),
        "the real python3 run shows: {stdout}"
    );
    assert!(stdout.contains(&dir.display().to_string()), "{stdout}");
    let fixed = std::fs::read_to_string(dir.join("greet.py")).unwrap();
    assert!(fixed.contains("+ name +"), "{fixed}");
}
