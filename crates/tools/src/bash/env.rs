//! Which inherited environment variables a shell command sees: an allowlist of
//! variables that carry no secrets and run no code, plus the ones the user names.
//!
//! Guessing secrets from names (`*_KEY`, `*_TOKEN`) misses too much (`*_AUTH`, `*_PAT`,
//! `DATABASE_URL`, `*_DSN`), so nothing passes unless it is listed here or named by the
//! user. Also withheld: variables that make programs run code (`BASH_ENV`, `ENV`,
//! `LD_PRELOAD`, `PROMPT_COMMAND`, `PYTHONSTARTUP`, `LESSOPEN`, `EDITOR`, `GIT_*`, module
//! search paths such as `PYTHONPATH`), handles on the user's session (`SSH_AUTH_SOCK`,
//! `GPG_AGENT_INFO`, `DBUS_SESSION_BUS_ADDRESS`, `XDG_RUNTIME_DIR`, `DISPLAY`,
//! `WAYLAND_DISPLAY`, `DOCKER_HOST`) and proxies, whose URLs may hold credentials. What
//! bash sets itself (`PAGER=cat`, `TERM=dumb` when unset) lives in `bash`.

/// Passed by exact name: where things are, how text looks, and toolchain locations.
const PASS: &[&str] = &[
    // The user and the shell.
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "PWD",
    "TMPDIR",
    "TZ",
    "HOSTNAME",
    // Language and terminal.
    "LANG",
    "LANGUAGE",
    "TERM",
    "COLORTERM",
    "NO_COLOR",
    "COLUMNS",
    "LINES",
    // Where per-user files live (the defaults are under HOME anyway).
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_CACHE_HOME",
    "XDG_STATE_HOME",
    // Toolchain locations: which installed toolchain and which caches to use.
    "CARGO_HOME",
    "CARGO_TARGET_DIR",
    "RUSTUP_HOME",
    "RUSTUP_TOOLCHAIN",
    "RUST_BACKTRACE",
    "GOPATH",
    "GOROOT",
    "GOCACHE",
    "GOMODCACHE",
    "JAVA_HOME",
    "VIRTUAL_ENV",
    "CONDA_PREFIX",
];

/// Passed by prefix: the locale categories.
const PASS_PREFIXES: &[&str] = &["LC_"];

/// Whether a command may see the inherited variable `name`: it is on the allowlist or
/// the user named it in `extra` (exact, case-sensitive names, as the OS compares them).
pub(crate) fn passes(name: &str, extra: &[String]) -> bool {
    PASS.contains(&name)
        || PASS_PREFIXES.iter().any(|prefix| name.starts_with(prefix))
        || extra.iter().any(|named| named == name)
}

#[cfg(test)]
mod tests {
    use super::passes;

    #[test]
    fn table() {
        let cases = [
            // Harmless and needed.
            ("PATH", true),
            ("HOME", true),
            ("USER", true),
            ("LANG", true),
            ("LC_ALL", true),
            ("LC_CTYPE", true),
            ("TERM", true),
            ("NO_COLOR", true),
            ("TMPDIR", true),
            ("CARGO_HOME", true),
            ("RUSTUP_HOME", true),
            ("GOPATH", true),
            ("JAVA_HOME", true),
            ("VIRTUAL_ENV", true),
            // Credentials, whatever they are called.
            ("OPENAI_API_KEY", false),
            ("GITHUB_TOKEN", false),
            ("AWS_SECRET_ACCESS_KEY", false),
            ("AWS_PROFILE", false),
            ("NPM_AUTH", false),
            ("GITLAB_PAT", false),
            ("DATABASE_URL", false),
            ("SENTRY_DSN", false),
            ("PGPASSWORD", false),
            ("GOOGLE_APPLICATION_CREDENTIALS", false),
            // Handles on the user's session.
            ("SSH_AUTH_SOCK", false),
            ("GPG_AGENT_INFO", false),
            ("DOCKER_HOST", false),
            ("DBUS_SESSION_BUS_ADDRESS", false),
            ("XDG_RUNTIME_DIR", false),
            ("DISPLAY", false),
            ("WAYLAND_DISPLAY", false),
            // Proxies may carry credentials in their URL.
            ("HTTP_PROXY", false),
            ("https_proxy", false),
            ("ALL_PROXY", false),
            // Variables that make programs run code.
            ("BASH_ENV", false),
            ("ENV", false),
            ("PROMPT_COMMAND", false),
            ("LD_PRELOAD", false),
            ("LD_LIBRARY_PATH", false),
            ("PYTHONSTARTUP", false),
            ("PYTHONPATH", false),
            ("NODE_OPTIONS", false),
            ("LESSOPEN", false),
            ("EDITOR", false),
            ("VISUAL", false),
            ("PAGER", false),
            ("GIT_SSH_COMMAND", false),
            ("GIT_CONFIG_GLOBAL", false),
            ("RUSTC_WRAPPER", false),
            ("RUSTFLAGS", false),
            // Names are compared exactly, as the OS does.
            ("path", false),
            ("lc_all", false),
        ];
        for (name, passed) in cases {
            assert_eq!(passes(name, &[]), passed, "{name}");
        }
    }

    #[test]
    fn named_variables_pass_exactly() {
        let extra = vec!["DATABASE_URL".to_string(), "HTTPS_PROXY".to_string()];
        assert!(passes("DATABASE_URL", &extra));
        assert!(passes("HTTPS_PROXY", &extra));
        assert!(!passes("https_proxy", &extra));
        assert!(!passes("DATABASE_URL_2", &extra));
        assert!(passes("PATH", &extra));
    }
}
