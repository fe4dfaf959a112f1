//! Definitions: variable assignments, `export`/`declare`, and functions.
//!
//! Owns the rules for what a definition may change (variables that decide
//! which program runs, text that a later expansion would execute) and fork
//! bomb detection. Running a defined function is `command`'s concern.

use tree_sitter::Node;

use super::BashRisk;
use super::command::Judge;
use super::walk::{MAX_NODE_NEST, Walker, text};
use super::words;

/// Does `node` call `name`, and does it do so in a pipeline or with `&`?
fn self_calls(node: Node<'_>, src: &[u8], name: &str, piped: bool, nest: usize) -> (bool, bool) {
    if nest >= MAX_NODE_NEST {
        return (false, false);
    }
    let mut calls = false;
    let mut bomb = false;
    if node.kind() == "command" {
        let called = node
            .child_by_field_name("name")
            .map(|n| words::eval(n, src).text == name)
            .unwrap_or(false);
        let backgrounded = node
            .next_sibling()
            .map(|s| s.kind() == "&")
            .unwrap_or(false);
        if called {
            calls = true;
            bomb |= piped || backgrounded;
        }
    }
    let piped = piped || node.kind() == "pipeline";
    let mut cursor = node.walk();
    for child in node.named_children(&mut cursor) {
        let (c, b) = self_calls(child, src, name, piped, nest + 1);
        calls |= c;
        bomb |= b;
    }
    (calls, bomb)
}

/// Variables whose value changes which program runs or what it loads.
const DANGEROUS_VARS: &[&str] = &[
    "PATH",
    "LD_PRELOAD",
    "LD_LIBRARY_PATH",
    "LD_AUDIT",
    "DYLD_INSERT_LIBRARIES",
    "DYLD_LIBRARY_PATH",
    "BASH_ENV",
    "ENV",
    "IFS",
    "PROMPT_COMMAND",
    "PYTHONPATH",
    "PYTHONSTARTUP",
    "PYTHONHOME",
    "NODE_OPTIONS",
    "PERL5OPT",
    "PERL5LIB",
    "RUBYOPT",
    "SHELLOPTS",
    "BASHOPTS",
    "PAGER",
    "EDITOR",
    "VISUAL",
    "LESSOPEN",
    "LESSCLOSE",
    "LESSKEY",
    "LESSKEYIN",
    "MANPAGER",
    "MANOPT",
    "BROWSER",
    "SYSTEMD_PAGER",
    "GIT_SSH",
    "SSH_ASKPASS",
    "SUDO_ASKPASS",
    "PS4",
    "PS0",
    // Config files and default options named by the environment: they can
    // turn on flags that run programs (`--pre`, `--use-compress-program`).
    "RIPGREP_CONFIG_PATH",
    "TAR_OPTIONS",
    "GREP_OPTIONS",
    "LESS",
    "XDG_CONFIG_HOME",
    "HOME",
    "ZDOTDIR",
    "INPUTRC",
    "PIP_CONFIG_FILE",
    "NPM_CONFIG_USERCONFIG",
    "CARGO_HOME",
    "RUSTC_WRAPPER",
    "CC",
    "CXX",
    // Read by the C library or by libraries almost every program links:
    // they load shared objects or configuration that names them.
    "GCONV_PATH",
    "GLIBC_TUNABLES",
    "LOCPATH",
    "NLSPATH",
    "HOSTALIASES",
    "OPENSSL_CONF",
    "OPENSSL_ENGINES",
    "OPENSSL_MODULES",
    // Default options and startup code of tools that are otherwise SAFE.
    "LESSKEY_CONTENT",
    "LESSKEYIN_SYSTEM",
    "LESSEDIT",
    "SHELL",
    "GZIP",
    "BZIP",
    "BZIP2",
    "XZ_OPT",
    "XZ_DEFAULTS",
    "PERL5DB",
    "PERLLIB",
    "RUBYLIB",
    "NODE_PATH",
    "PYTHONWARNINGS",
    "PYTHONBREAKPOINT",
    "JAVA_TOOL_OPTIONS",
    "_JAVA_OPTIONS",
    "JDK_JAVA_OPTIONS",
    // Client configuration that names programs or hosts to run them on.
    "KUBECONFIG",
    "DOCKER_CONFIG",
    "DOCKER_HOST",
    "EXINIT",
    "VIMINIT",
    "MYVIMRC",
];

/// Prefixes of variable families that load code: the dynamic loader
/// (`LD_PRELOAD`, `LD_AUDIT`, `LD_DEBUG_OUTPUT` …, macOS `DYLD_*`), git
/// (`GIT_DIR`, `GIT_EXTERNAL_DIFF` …) and exported bash functions.
const DANGEROUS_PREFIXES: &[&str] = &["LD_", "DYLD_", "GIT_", "BASH_FUNC_"];

/// Does setting `name` change which program runs or what it loads?
pub(crate) fn is_dangerous_var(name: &str) -> bool {
    DANGEROUS_VARS.contains(&name) || DANGEROUS_PREFIXES.iter().any(|p| name.starts_with(p))
}

impl Walker<'_> {
    /// A variable assignment, alone or before a command.
    pub(super) fn assignment(
        &mut self,
        node: Node<'_>,
        src: &[u8],
        floor: Option<&mut Vec<(BashRisk, String)>>,
    ) {
        let name = node
            .child_by_field_name("name")
            .map(|n| text(n, src))
            .unwrap_or("");
        let mut had_subst = false;
        let mut found: Vec<(BashRisk, String)> = Vec::new();
        if let Some(value) = node.child_by_field_name("value") {
            had_subst = self.substitutions_in(value, src);
            // Arithmetic, `${x@P}` or eval of this variable would run it.
            let v = words::eval(value, src);
            self.remember_var(name, &v);
            if !v.dynamic && (v.text.contains("$(") || v.text.contains('`')) {
                found.push((
                    BashRisk::Warn,
                    "stores text containing a command substitution, which a later expansion can run"
                        .to_string(),
                ));
            }
        }
        if is_dangerous_var(name) {
            found.push((
                BashRisk::Warn,
                format!("sets {name}, which changes what programs run or load"),
            ));
        }
        if had_subst {
            found.push((
                BashRisk::Warn,
                "uses the output of a command substitution".to_string(),
            ));
        }
        match floor {
            Some(f) => f.extend(found),
            None => {
                let mut j = Judge::safe(None, "sets a shell variable");
                for (risk, reason) in found {
                    j.raise(risk, &reason);
                }
                self.push_judged(text(node, src), j);
            }
        }
    }

    /// `export`, `declare`, `local`, `readonly`, `unset`.
    pub(super) fn declaration(&mut self, node: Node<'_>, src: &[u8]) {
        let mut cursor = node.walk();
        let kids: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
        let mut floor = Vec::new();
        let mut subst = false;
        for child in kids {
            if child.kind() == "variable_assignment" {
                self.assignment(child, src, Some(&mut floor));
            } else {
                subst |= self.substitutions_in(child, src);
                let t = text(child, src);
                if words::eval(child, src).dynamic {
                    floor.push((
                        BashRisk::Warn,
                        "the variable name comes from an expansion".into(),
                    ));
                }
                if t.starts_with('-') && t.contains('n') {
                    floor.push((
                        BashRisk::Warn,
                        "creates a name reference to another variable".into(),
                    ));
                }
                if is_dangerous_var(t) {
                    floor.push((
                        BashRisk::Warn,
                        format!("changes {t}, which changes what programs run or load"),
                    ));
                }
            }
        }
        let mut j = Judge::safe(None, "declares shell variables");
        if subst {
            j.raise(BashRisk::Warn, "uses the output of a command substitution");
        }
        for (risk, reason) in floor {
            j.raise(risk, &reason);
        }
        self.push_judged(text(node, src), j);
    }

    /// A function definition: its body is judged as if called, and a body
    /// that calls itself in a pipeline or in the background is a fork bomb.
    pub(super) fn function(&mut self, node: Node<'_>, src: &[u8]) {
        let name = node
            .child_by_field_name("name")
            .map(|n| words::unescape_unquoted(text(n, src)))
            .unwrap_or_default();
        self.functions.push(name.clone());
        let def_text = text(node, src);
        if let Some(body) = node.child_by_field_name("body") {
            let (calls, bomb) = self_calls(body, src, &name, false, 0);
            if bomb {
                self.note(
                    def_text,
                    BashRisk::Block,
                    "fork bomb: a function that starts copies of itself in a pipeline or in the background",
                );
            } else if calls {
                self.note(def_text, BashRisk::Warn, "a function that calls itself");
            }
            self.walk(body, src);
        } else {
            self.note(def_text, BashRisk::Safe, "defines a function");
        }
    }
}
