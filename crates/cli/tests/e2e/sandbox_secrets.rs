//! The credential stores through the front door: a command the model runs cannot read
//! `~/.ssh`, atto's own config or a path named in `[sandbox] hide`, and reads a default
//! one the user unhid. What a command reads goes to the model provider.

use atto_testkit::{Reply, Script};
use serde_json::json;

use crate::common::{Env, call, calls, stderr, tool_results};

#[test]
fn commands_cannot_read_the_hidden_credential_stores() {
    let mut env = Env::new();
    let home = env.dir.path().join("home");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(home.join(".ssh/id_rsa"), "SSH-SECRET\n").unwrap();
    std::fs::write(home.join(".pypirc"), "PYPI-SECRET\n").unwrap();
    std::fs::write(home.join(".netrc"), "NETRC-UNHIDDEN\n").unwrap();
    let config = home.join(".config/atto/config.toml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str(
        "\n[sandbox]\nhide = [\"~/.pypirc\"]\nunhide = [\"~/.netrc\"]\n# CONFIG-SECRET\n",
    );
    std::fs::write(&config, text).unwrap();
    env.serve(Script::new(vec![
        calls(vec![call(
            "bash",
            json!({"command": "cat ~/.ssh/id_rsa ~/.pypirc ~/.netrc ~/.config/atto/config.toml; echo end"}),
        )]),
        Reply::text("ok"),
    ]));
    let out = env
        .exec_with(&["--permission", "auto-safe"], "read the keys")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let result = &tool_results(&env, 1)[0];
    assert!(result.contains("end"), "{result}");
    assert!(result.contains("NETRC-UNHIDDEN"), "{result}");
    for secret in ["SSH-SECRET", "PYPI-SECRET", "CONFIG-SECRET"] {
        assert!(!result.contains(secret), "{secret} was read: {result}");
    }
}
