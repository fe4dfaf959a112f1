//! `git`: which subcommands only read the repository.
//!
//! SAFE: status, log, diff, show, branch/tag/stash/remote/config listing, the
//! plumbing readers, dry runs (`clean -n`) and `SUB --help`. Everything else
//! (push, reset, checkout, clean, commit, fetch, pull …), options that run
//! programs (`--ext-diff`, `--textconv`) and `-c` overrides other than
//! cosmetic keys are WARN; setting a key that runs a program (`git config
//! core.hooksPath …`, `git -c core.fsmonitor=…`) is also a protected write.
//! It does not protect against a repository whose own config runs programs;
//! that is the sandbox's job.

use std::ops::ControlFlow;

use super::BashRisk;

use super::command::Judge;
use super::option_lists::{GIT_GREP as GREP, GIT_LOG as LOG, GIT_SHORTLOG as SHORTLOG};
use super::options::{self, Operands};
use super::protected;
use super::words::Word;

/// Subcommands that only read, whatever their flags.
const READERS: &[&str] = &[
    "status",
    "rev-parse",
    "ls-files",
    "ls-tree",
    "cat-file",
    "blame",
    "annotate",
    "describe",
    "rev-list",
    "merge-base",
    "name-rev",
    "show-ref",
    "for-each-ref",
    "count-objects",
    "var",
    "check-ignore",
    "check-attr",
    "check-ref-format",
    "show-branch",
    "cherry",
    "version",
    "verify-pack",
];

/// Subcommands that print diffs and logs: SAFE unless told to write a file or
/// run an external diff program.
const DIFFERS: &[&str] = &[
    "log",
    "show",
    "diff",
    "shortlog",
    "whatchanged",
    "diff-tree",
    "diff-files",
    "diff-index",
    "range-diff",
];

fn safe(reason: &str) -> Judge {
    Judge::safe(Some("git"), reason)
}

fn warn(reason: &str) -> Judge {
    Judge::warn(Some("git"), reason)
}

/// Judges `git ARGS`.
pub(crate) fn judge(args: &[Word]) -> Judge {
    let GlobalOptions {
        end: i,
        override_config,
        program_key,
    } = match global_options(args) {
        ControlFlow::Continue(o) => o,
        ControlFlow::Break(j) => return j,
    };
    let Some(sub) = args.get(i) else {
        return safe("git without a subcommand only prints help");
    };
    let rest = &args[i + 1..];
    let help = rest
        .iter()
        .take_while(|a| a.text != "--")
        .any(|a| matches!(a.text.as_str(), "--help" | "-h"));
    let mut j = if sub.dynamic {
        warn("the git subcommand comes from an expansion")
    } else if help && override_config.is_none() && rest.iter().all(|a| !a.dynamic) {
        safe(&format!("git {} --help only prints help", sub.text))
    } else {
        subcommand(sub.text.as_str(), rest)
    };
    if let Some(reason) = override_config {
        j.raise(BashRisk::Warn, reason);
    }
    if let Some(key) = program_key {
        j.raise(
            BashRisk::Warn,
            &format!("git -c {key} makes git run a program: configuring git always needs approval"),
        );
        j.protected_write = true;
    }
    j
}

/// What git's own options (before the subcommand) say.
struct GlobalOptions {
    /// The index of the subcommand.
    end: usize,
    /// Why the options may change which programs git runs.
    override_config: Option<&'static str>,
    /// A `-c` key that makes git run a program.
    program_key: Option<String>,
}

/// Reads git's own options; breaks with the verdict when they alone decide
/// it (`git --version`, an option not known to be read-only).
fn global_options(args: &[Word]) -> ControlFlow<Judge, GlobalOptions> {
    let mut override_config = None;
    let mut program_key: Option<String> = None;
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let t = a.text.as_str();
        match t {
            "-C" | "--work-tree" | "--namespace" => i += 2,
            "--git-dir" => {
                override_config = Some(GIT_DIR_REASON);
                i += 2;
            }
            _ if t.starts_with("--git-dir=") => {
                override_config = Some(GIT_DIR_REASON);
                i += 1;
            }
            "-c" if args.get(i + 1).is_some_and(|kv| harmless_key(&kv.text)) => i += 2,
            "-c" => {
                override_config = Some("git -c overrides configuration, which can run programs");
                if let Some(kv) = args.get(i + 1) {
                    program_key = program_setting(&kv.text).or(program_key);
                }
                i += 2;
            }
            "--no-pager"
            | "-P"
            | "--paginate"
            | "-p"
            | "--bare"
            | "--no-replace-objects"
            | "--literal-pathspecs"
            | "--glob-pathspecs"
            | "--noglob-pathspecs"
            | "--icase-pathspecs"
            | "--no-optional-locks"
            | "--no-advice"
            | "--exec-path"
            | "--html-path"
            | "--man-path"
            | "--info-path" => i += 1,
            "--version" | "--help" | "-h" => {
                return ControlFlow::Break(safe("git only prints information"));
            }
            _ if t.starts_with("--work-tree=") || t.starts_with("--namespace=") => i += 1,
            _ if t.starts_with("--config-env") || t.starts_with("--exec-path=") => {
                override_config = Some("git option changes which programs git runs");
                i += 1;
            }
            _ if t.starts_with('-') => {
                return ControlFlow::Break(warn(&format!(
                    "git option {t} is not known to be read-only"
                )));
            }
            _ => break,
        }
    }
    ControlFlow::Continue(GlobalOptions {
        end: i,
        override_config,
        program_key,
    })
}

/// The key of a `-c KEY=VALUE` that makes git run a program.
fn program_setting(kv: &str) -> Option<String> {
    let (k, v) = kv.split_once('=').map_or((kv, None), |(k, v)| (k, Some(v)));
    protected::runs_program_setting(k, v).then(|| k.to_string())
}

/// `git -c KEY=VALUE` for keys that only change how output looks.
fn harmless_key(kv: &str) -> bool {
    let key = kv.split('=').next().unwrap_or(kv).to_ascii_lowercase();
    key.starts_with("color.")
        || key.starts_with("advice.")
        || matches!(
            key.as_str(),
            "core.quotepath"
                | "core.abbrev"
                | "log.date"
                | "log.decorate"
                | "log.follow"
                | "column.ui"
                | "i18n.logoutputencoding"
                | "user.name"
                | "user.email"
        )
}

fn texts(rest: &[Word]) -> Vec<&str> {
    rest.iter().map(|w| w.text.as_str()).collect()
}

fn subcommand(sub: &str, rest: &[Word]) -> Judge {
    let r = texts(rest);
    match sub {
        "cat-file" if r.iter().any(|t| matches!(*t, "--textconv" | "--filters")) => {
            warn("git cat-file --textconv/--filters runs the repository's conversion programs")
        }
        _ if READERS.contains(&sub) => safe(&format!("git {sub} only reads the repository")),
        _ if DIFFERS.contains(&sub) => differ(sub, &r, rest),
        "help" => help(&r),
        "grep" => grep(rest),
        "branch" => listing(sub, &r, BRANCH_LIST, BRANCH_LIST_ARG, "changes branches"),
        "tag" => listing(sub, &r, TAG_LIST, TAG_LIST_ARG, "creates or deletes tags"),
        "remote" => match r.as_slice() {
            [] | ["-v"] | ["--verbose"] | ["get-url", ..] => safe("git remote only lists remotes"),
            _ => warn("git remote changes remotes or contacts the network"),
        },
        // `stash list` takes log options and `stash show` diff options, `--output=FILE`
        // among them: judged like `git log` on what follows.
        "stash" => match r.first() {
            Some(&action @ ("list" | "show")) => {
                differ(&format!("stash {action}"), &r[1..], &rest[1..])
            }
            _ => warn("git stash changes the working tree"),
        },
        "config" => config(&r),
        "clean" => clean(&r),
        "reflog" => match r.first() {
            None | Some(&"show") => safe("git reflog only reads"),
            Some(t) if t.starts_with('-') => safe("git reflog only reads"),
            _ => warn("git reflog expire/delete removes history"),
        },
        "push" => push(&r),
        "reset" => warn("git reset moves the branch and may discard changes"),
        "checkout" | "switch" | "restore" => warn(&format!(
            "git {sub} changes the working tree and may discard changes"
        )),
        "fetch" | "pull" | "clone" | "ls-remote" | "submodule" => warn(&format!(
            "git {sub} contacts the network and changes the repository"
        )),
        _ => warn(&format!(
            "git {sub} changes the repository or is not known to be read-only"
        )),
    }
}

/// `git config`: reading is SAFE; setting a key that runs a program (also
/// `--global`/`--system`) or editing the file is a protected write.
/// `git help`: prints, unless asked to start a browser or info viewer.
fn help(r: &[&str]) -> Judge {
    if r.iter()
        .any(|t| matches!(*t, "-w" | "--web" | "-i" | "--info"))
    {
        warn("git help -w/-i starts a browser or info viewer")
    } else {
        safe("git help only prints help")
    }
}

/// `git grep`: reads, unless an option opens a pager program.
fn grep(rest: &[Word]) -> Judge {
    match options::scan(&GREP, rest, Operands::Anywhere).unknown {
        Some(bad) if bad == "-O" || "--open-files-in-pager".starts_with(bad.as_str()) => {
            warn(&format!("git grep {bad} runs a pager program"))
        }
        Some(bad) => warn(&options::unknown_reason("git grep", &bad)),
        None => safe("git grep only reads the repository"),
    }
}

/// `git clean`: deletes, unless a dry run.
fn clean(r: &[&str]) -> Judge {
    let dry = r.iter().take_while(|t| **t != "--").any(|t| {
        *t == "--dry-run" || (t.starts_with('-') && !t.starts_with("--") && t.contains('n'))
    });
    if dry {
        safe("git clean -n only lists what it would delete")
    } else {
        warn("git clean deletes untracked files")
    }
}

/// `git push`, with a further reason when it forces.
fn push(r: &[&str]) -> Judge {
    let force = r.iter().any(|t| {
        matches!(*t, "-f" | "--force" | "--mirror")
            || t.starts_with("--force-")
            || t.starts_with('+')
    });
    let mut j = warn("git push publishes commits to a remote");
    if force {
        j.raise(
            BashRisk::Warn,
            "force-pushing rewrites the remote's history",
        );
    }
    j
}

fn config(r: &[&str]) -> Judge {
    let reading = r.iter().any(|t| {
        matches!(
            *t,
            "--get"
                | "--get-all"
                | "--get-regexp"
                | "--get-urlmatch"
                | "--get-color"
                | "--get-colorbool"
                | "--list"
                | "-l"
        )
    }) || matches!(r.first(), Some(&("get" | "list")));
    let editing = r.iter().any(|t| {
        matches!(
            *t,
            "-e" | "--edit"
                | "--add"
                | "--unset"
                | "--unset-all"
                | "--replace-all"
                | "--rename-section"
                | "--remove-section"
                | "set"
                | "unset"
                | "edit"
        )
    });
    if reading && !editing {
        return safe("git config only reads configuration");
    }
    if r.iter().any(|t| matches!(*t, "-e" | "--edit" | "edit")) {
        let mut j = warn("git config --edit opens the configuration in an editor");
        j.protected_write = true;
        return j;
    }
    // Operands after the options that take a value: KEY [VALUE].
    let mut ops: Vec<&str> = Vec::new();
    let mut i = 0;
    while let Some(t) = r.get(i) {
        i += 1;
        if matches!(*t, "set" | "unset" | "add") && ops.is_empty() && i == 1 {
            continue;
        }
        if matches!(
            *t,
            "-f" | "--file" | "--blob" | "--type" | "--default" | "--comment" | "--value"
        ) {
            i += 1;
            continue;
        }
        if !t.starts_with('-') {
            ops.push(t);
        }
    }
    let mut j = warn("git config changes configuration");
    if let Some(key) = ops.first()
        && protected::runs_program_setting(key, ops.get(1).copied())
    {
        j.raise(
            BashRisk::Warn,
            &format!(
                "git config {key} makes git run a program: configuring git always needs approval"
            ),
        );
        j.protected_write = true;
    }
    j
}

fn differ(sub: &str, r: &[&str], rest: &[Word]) -> Judge {
    if r.iter()
        .any(|t| *t == "--output" || t.starts_with("--output="))
    {
        return warn(&format!("git {sub} --output writes to a file"));
    }
    if r.contains(&"--textconv") {
        return warn(&format!(
            "git {sub} --textconv runs the repository's text conversion programs"
        ));
    }
    if r.contains(&"--ext-diff") {
        return warn(&format!(
            "git {sub} --ext-diff runs an external diff program"
        ));
    }
    let spec = if sub == "shortlog" { &SHORTLOG } else { &LOG };
    match options::scan(spec, rest, Operands::Anywhere).unknown {
        Some(bad) => warn(&options::unknown_reason(&format!("git {sub}"), &bad)),
        None => safe(&format!("git {sub} only reads the repository")),
    }
}

/// Why `git --git-dir` is not SAFE: a repository directory in the workspace
/// is project content, and its configuration names programs git runs.
const GIT_DIR_REASON: &str = "git --git-dir uses that repository's configuration, which can run \
     programs (textconv drivers, pagers, external diff)";

const BRANCH_LIST: &[&str] = &[
    "-a",
    "--all",
    "-r",
    "--remotes",
    "-l",
    "--list",
    "-v",
    "-vv",
    "--verbose",
    "--show-current",
    "--color",
    "--no-color",
    "--column",
    "--no-column",
    "-i",
    "--ignore-case",
    "--omit-empty",
    "--contains",
    "--no-contains",
    "--merged",
    "--no-merged",
    "--points-at",
    "--sort",
    "--format",
    "--abbrev",
    "--no-abbrev",
];
const BRANCH_LIST_ARG: &[&str] = &[
    "--contains",
    "--no-contains",
    "--merged",
    "--no-merged",
    "--points-at",
    "--sort",
    "--format",
];
const TAG_LIST: &[&str] = &[
    "-l",
    "--list",
    "--contains",
    "--no-contains",
    "--merged",
    "--no-merged",
    "--points-at",
    "--sort",
    "--format",
    "--column",
    "--no-column",
    "--color",
    "-i",
    "--ignore-case",
];
const TAG_LIST_ARG: &[&str] = &[
    "--contains",
    "--no-contains",
    "--merged",
    "--no-merged",
    "--points-at",
    "--sort",
    "--format",
];

/// `git branch` / `git tag`: SAFE only when every flag lists and names are
/// patterns given with `--list`.
fn listing(sub: &str, r: &[&str], list: &[&str], with_arg: &[&str], change: &str) -> Judge {
    let explicit_list = r.iter().any(|t| matches!(*t, "-l" | "--list"));
    let mut i = 0;
    while let Some(t) = r.get(i) {
        let flag = t.split('=').next().unwrap_or(t);
        let known = list.contains(&flag) || (sub == "tag" && t.starts_with("-n"));
        if t.starts_with('-') {
            if !known {
                return warn(&format!("git {sub} {t} {change}"));
            }
            i += if with_arg.contains(t) { 2 } else { 1 };
            continue;
        }
        if !explicit_list {
            return warn(&format!("git {sub} {t} {change}"));
        }
        i += 1;
    }
    safe(&format!("git {sub} only lists"))
}
