//! Which inherited environment variables a shell command must not see: anything that
//! looks like a credential. Names are matched case-insensitively.

/// Variables always passed through, whatever their names contain.
const KEEP: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "TERM",
    "PWD",
    "TMPDIR",
    "TZ",
    "SSH_AUTH_SOCK",
    "XDG_RUNTIME_DIR",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_CACHE_HOME",
];

/// Name fragments that mark a secret.
const SECRET_PARTS: &[&str] = &[
    "KEY",
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "CREDENTIAL",
    "PRIVATE",
    "COOKIE",
];

/// Name prefixes whose whole family is credentials or account configuration.
const SECRET_PREFIXES: &[&str] = &["AWS_"];

/// Whether an environment variable called `name` should be withheld from commands.
pub(crate) fn is_secret(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    if KEEP.contains(&upper.as_str()) || upper.starts_with("LC_") {
        return false;
    }
    SECRET_PARTS.iter().any(|part| upper.contains(part))
        || SECRET_PREFIXES
            .iter()
            .any(|prefix| upper.starts_with(prefix))
}

#[cfg(test)]
mod tests {
    use super::is_secret;

    #[test]
    fn table() {
        let cases = [
            ("OPENAI_API_KEY", true),
            ("foo_api_key", true),
            ("GITHUB_TOKEN", true),
            ("GH_TOKEN", true),
            ("AWS_PROFILE", true),
            ("AWS_SECRET_ACCESS_KEY", true),
            ("DB_PASSWORD", true),
            ("MYSQL_PASSWD", true),
            ("GOOGLE_APPLICATION_CREDENTIALS", true),
            ("CLIENT_SECRET", true),
            ("SSH_PRIVATE_KEY", true),
            ("PATH", false),
            ("HOME", false),
            ("LC_ALL", false),
            ("SSH_AUTH_SOCK", false),
            ("CARGO_HOME", false),
            ("RUST_LOG", false),
            ("TERM", false),
        ];
        for (name, secret) in cases {
            assert_eq!(is_secret(name), secret, "{name}");
        }
    }
}
