//! Protected writes: a command that writes into a path on the one
//! protected-path list (`crate::protected`: `.git/`, `.atto/`, `.attocode/`,
//! atto's config and data), or configures git to run a program, needs
//! approval even where WARN would be auto-allowed.
//!
//! Owns which programs write to which of their operands, and which git
//! configuration keys run programs; the list itself is `crate::protected`. It only marks
//! segments (`Segment::protected_write`); the gate turns the mark into an ask.
//! Reading those paths (`cat .git/config`) is not a protected write.

use super::block::lexical_normalize;
use super::words::Word;

/// Is `path`, as written in a command, on the one protected-path list?
pub(crate) fn is_protected_path(path: &str) -> bool {
    crate::protected::is_protected_text(&lexical_normalize(path.trim()))
}

/// Non-option words; `--` ends options.
fn operands(args: &[Word]) -> Vec<&Word> {
    let mut out = Vec::new();
    let mut done = false;
    for a in args {
        if !done && a.text == "--" {
            done = true;
        } else if done || !a.text.starts_with('-') || a.text == "-" {
            out.push(a);
        }
    }
    out
}

/// The directory named by `-t DIR` / `--target-directory[=]DIR`.
fn target_directory(args: &[Word]) -> Option<&str> {
    for (k, a) in args.iter().enumerate() {
        let t = a.text.as_str();
        if t == "-t" || t == "--target-directory" {
            return args.get(k + 1).map(|d| d.text.as_str());
        }
        if let Some(d) = t.strip_prefix("--target-directory=") {
            return Some(d);
        }
        if let Some(d) = t.strip_prefix("-t").filter(|d| !d.is_empty()) {
            return Some(d);
        }
    }
    None
}

/// Does a short-option cluster or long option carry `short`/`long`?
fn has_flag(args: &[Word], short: char, long: &str) -> bool {
    args.iter()
        .map(|a| a.text.as_str())
        .take_while(|t| *t != "--")
        .any(|t| {
            t == long
                || t.starts_with(&format!("{long}="))
                || (t.starts_with('-') && !t.starts_with("--") && t[1..].contains(short))
        })
}

/// The protected path `prog args` writes to, as a reason; `None` otherwise.
pub(crate) fn write_target(prog: &str, args: &[Word]) -> Option<String> {
    let ops = operands(args);
    let written: Vec<&str> = match prog {
        "cp" | "mv" | "install" | "ln" | "rsync" => match target_directory(args) {
            Some(d) => vec![d],
            None => ops.last().map(|w| w.text.as_str()).into_iter().collect(),
        },
        "tee" | "touch" | "mkdir" | "rm" | "rmdir" | "unlink" | "shred" | "chmod" | "chown"
        | "chgrp" | "truncate" | "patch" => ops.iter().map(|w| w.text.as_str()).collect(),
        "sed" | "gsed" | "perl" | "ruby" if has_flag(args, 'i', "--in-place") => {
            ops.iter().map(|w| w.text.as_str()).collect()
        }
        "dd" => args
            .iter()
            .filter_map(|a| a.text.strip_prefix("of="))
            .collect(),
        _ => return None,
    };
    written
        .into_iter()
        .find(|p| is_protected_path(p))
        .map(|p| protected_reason(prog, p))
}

/// The reason shown for a write into a protected directory.
pub(crate) fn protected_reason(what: &str, path: &str) -> String {
    format!(
        "{what} writes to {path}: repository internals and atto's own files always need approval"
    )
}

/// Git configuration keys whose value is a program git runs (or a path that
/// decides which programs run).
pub(crate) fn runs_program_key(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    const EXACT: &[&str] = &[
        "core.fsmonitor",
        "core.hookspath",
        "core.pager",
        "core.editor",
        "core.sshcommand",
        "core.askpass",
        "core.gitproxy",
        "core.worktree",
        "diff.external",
        "sequence.editor",
        "gpg.program",
        "credential.helper",
        "remote.origin.uploadpack",
        "remote.origin.receivepack",
        "uploadpack.packobjectshook",
        "include.path",
        "init.templatedir",
        "web.browser",
        "instaweb.httpd",
        "sendemail.smtpserver",
        "ssh.variant",
    ];
    if EXACT.contains(&k.as_str()) {
        return true;
    }
    let parts: Vec<&str> = k.split('.').collect();
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    match (first, last) {
        ("diff", "textconv" | "command") => true,
        ("merge" | "mergetool" | "difftool", "driver" | "cmd" | "path") => true,
        ("filter", "clean" | "smudge" | "process") => true,
        ("remote", "uploadpack" | "receivepack" | "proxy" | "vcs") => true,
        ("credential", "helper") => true,
        ("gpg", "program") => true,
        ("includeif", "path") => true,
        ("pager", _) if parts.len() >= 2 => true,
        (_, "sshcommand" | "editor" | "pager" | "askpass" | "hookspath" | "fsmonitor") => true,
        _ => false,
    }
}

/// A git configuration assignment that runs a program: the key is one of
/// `runs_program_key`, or an alias whose value starts with `!`.
pub(crate) fn runs_program_setting(key: &str, value: Option<&str>) -> bool {
    runs_program_key(key)
        || (key.to_ascii_lowercase().starts_with("alias.")
            && value.is_some_and(|v| v.trim_start().starts_with('!')))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protected_paths() {
        assert!(is_protected_path(".git/hooks/pre-commit"));
        assert!(is_protected_path("./.git/config"));
        assert!(is_protected_path("sub/.git"));
        assert!(is_protected_path(".atto/config.toml"));
        assert!(is_protected_path(".attocode/swarm.yaml"));
        assert!(is_protected_path("~/.config/atto/config.toml"));
        assert!(!is_protected_path(".gitignore"));
        assert!(!is_protected_path("src/git/x.rs"));
        assert!(!is_protected_path(".github/workflows/ci.yml"));
    }

    #[test]
    fn program_keys() {
        assert!(runs_program_key("core.hooksPath"));
        assert!(runs_program_key("diff.pdf.textconv"));
        assert!(runs_program_key("filter.lfs.smudge"));
        assert!(runs_program_key("merge.ours.driver"));
        assert!(runs_program_key("pager.log"));
        assert!(!runs_program_key("user.name"));
        assert!(!runs_program_key("core.autocrlf"));
        assert!(runs_program_setting("alias.x", Some("!rm -rf .")));
        assert!(!runs_program_setting("alias.co", Some("checkout")));
    }
}
