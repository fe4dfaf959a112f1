//! Per-program judgement tables for plain programs (no wrappers, no shells).
//!
//! Owns the read-only list (the seeds' 26 safe commands and safe prefixes
//! are a subset), the flags that turn a read-only tool into one that writes
//! or runs code (`sort -o`, `rg --pre`, `tar x`, `tree -o` …), and network
//! and decoder markers used to link `curl … | sh`. Unknown programs are WARN.
//! Deliberate tightenings of the seeds: `python -c` (a seed safe prefix) is
//! WARN because arbitrary python can write files; `less`, `man`, `file`,
//! `iconv` and `sdiff` are SAFE only without the options that write or start
//! other programs.

use super::changers::CHANGERS;
use super::command::Judge;
use super::option_lists::TAR_LIST;
use super::options::{self, Operands, Spec};
use super::words::Word;
use super::{BashRisk, builtins, git, listings, scripts};

/// Read-only whatever their arguments: no flag of theirs writes a file, runs
/// a program or touches the network.
const READ_ONLY: &[&str] = &[
    "ls",
    "dir",
    "vdir",
    "pwd",
    "cat",
    "tac",
    "head",
    "tail",
    "wc",
    "echo",
    "which",
    "whereis",
    "type",
    "whoami",
    "uname",
    "id",
    "groups",
    "df",
    "du",
    "stat",
    "printenv",
    "grep",
    "egrep",
    "fgrep",
    "zgrep",
    "more",
    "cut",
    "tr",
    "nl",
    "od",
    "hexdump",
    "basename",
    "dirname",
    "realpath",
    "readlink",
    "md5sum",
    "sha1sum",
    "sha224sum",
    "sha256sum",
    "sha384sum",
    "sha512sum",
    "b2sum",
    "cksum",
    "sum",
    "true",
    "false",
    "test",
    "[",
    ":",
    "sleep",
    "seq",
    "column",
    "comm",
    "diff",
    "cmp",
    "jq",
    "expr",
    "fold",
    "fmt",
    "paste",
    "join",
    "rev",
    "strings",
    "nproc",
    "free",
    "uptime",
    "ps",
    "pgrep",
    "tty",
    "logname",
    "users",
    "who",
    "w",
    "arch",
    "getconf",
    "locale",
    "cal",
    "lscpu",
    "lsblk",
    "nm",
    "readelf",
    "objdump",
    "size",
    "zcat",
    "bzcat",
    "xzcat",
    "look",
    "numfmt",
    "tsort",
    "lsof",
    "popd",
    "dirs",
    "exit",
    "return",
    "wait",
    "jobs",
    "help",
    "shift",
    "getopts",
    "set",
    "shopt",
    "umask",
    "ulimit",
    "unalias",
    "apropos",
    "whatis",
    "env",
    "tput",
    "clear",
    "yes",
    "factor",
    "sha1",
    "md5",
    "shasum",
    "zdiff",
    "diff3",
];

/// Read-only programs that parse no options: every word is an operand
/// (`test -f x`, `expr 1 - 2`).
const OPERANDS_ONLY: &[&str] = &["test", "[", "expr", "yes", "echo"];

/// Programs without an entry in `options` know only `--help`/`--version`.
const NO_OPTIONS: Spec = Spec {
    short: "",
    long: "",
    numbers: false,
};

/// The reason `prog args` uses an option that is not known to be
/// read-only; `None` when every option is on its list.
fn unknown_option(prog: &str, args: &[Word]) -> Option<String> {
    let spec = options::spec_of(prog).unwrap_or(&NO_OPTIONS);
    let bad = options::scan(spec, args, Operands::Anywhere).unknown?;
    Some(options::unknown_reason(prog, &bad))
}

/// Builtins and trivial programs that only touch the shell's own state.
const SHELL_STATE: &[&str] = &[
    "true", "false", ":", "sleep", "set", "shopt", "umask", "ulimit", "unalias", "shift",
    "getopts", "popd", "dirs", "wait", "exit", "return", "jobs", "clear", "tput", "yes",
];

/// Programs that access the network.
const FETCHERS: &[&str] = &[
    "curl",
    "wget",
    "fetch",
    "aria2c",
    "http",
    "https",
    "httpie",
    "xh",
    "nc",
    "ncat",
    "netcat",
    "socat",
    "lwp-request",
    "lwp-download",
    "telnet",
    "ftp",
    "tftp",
];

/// Tools for which a lone `--version` is harmless.
const VERSIONED: &[&str] = &[
    "cargo",
    "rustc",
    "rustup",
    "npm",
    "npx",
    "pnpm",
    "yarn",
    "go",
    "gcc",
    "g++",
    "cc",
    "clang",
    "make",
    "cmake",
    "java",
    "javac",
    "docker",
    "pip",
    "pip3",
    "tsc",
    "deno",
    "bun",
    "curl",
    "wget",
    "gh",
    "uv",
    "pytest",
    "mypy",
    "ruff",
    "eslint",
    "node",
    "kubectl",
    "terraform",
];

pub(super) fn safe(prog: &str, reason: &str) -> Judge {
    Judge::safe(Some(prog), reason)
}

pub(super) fn warn(prog: &str, reason: &str) -> Judge {
    Judge::warn(Some(prog), reason)
}

/// Judges a plain program.
pub(crate) fn judge_program(prog: &str, args: &[Word]) -> Judge {
    if let Some(j) = builtins::builtin(prog, args) {
        return j;
    }
    if SHELL_STATE.contains(&prog) {
        return safe(prog, &format!("{prog} changes no files (shell builtin)"));
    }
    if let Some(j) = runs_helper(prog, args) {
        return j;
    }
    if OPERANDS_ONLY.contains(&prog) {
        return safe(prog, &format!("{prog} only reads"));
    }
    if READ_ONLY.contains(&prog) {
        return match unknown_option(prog, args) {
            Some(reason) => warn(prog, &reason),
            None => safe(prog, &format!("{prog} only reads")),
        };
    }
    let mut j = judge_known(prog, args);
    // A SAFE verdict holds only for options known to be read-only.
    if j.risk == BashRisk::Safe
        && options::spec_of(prog).is_some()
        && let Some(reason) = unknown_option(prog, args)
    {
        j.raise(BashRisk::Warn, &reason);
    }
    // `sort -[o]x`, `git log --ext-dif?`: a glob in option position may
    // expand (to a file named like an option) into a flag that writes.
    if j.risk == BashRisk::Safe
        && let Some(a) = args.iter().find(|a| a.glob && a.text.starts_with('-'))
    {
        j.raise(
            BashRisk::Warn,
            &format!(
                "the option {} of {prog} is a glob, so the flag it becomes cannot be checked",
                a.text
            ),
        );
    }
    // These programs have flags that write or execute; a flag hidden in an
    // expansion cannot be checked.
    if j.risk == BashRisk::Safe && args.iter().any(|a| a.dynamic) {
        j.raise(
            BashRisk::Warn,
            &format!(
                "an argument of {prog} comes from an expansion, so its flags cannot be checked"
            ),
        );
    }
    j
}

/// Options of otherwise read-only programs that start a helper program or
/// load code: `diff3 --diff-program`, binutils' `--plugin`.
fn runs_helper(prog: &str, args: &[Word]) -> Option<Judge> {
    let opts: &[&str] = match prog {
        "diff3" | "sdiff" | "zdiff" => &["--diff-program"],
        "nm" | "objdump" | "size" | "readelf" | "strings" => &["--plugin"],
        "ps" => &["--pager"],
        _ => return None,
    };
    let hit = args.iter().find(|a| {
        opts.iter()
            .any(|o| a.text == *o || a.text.starts_with(&format!("{o}=")))
    })?;
    Some(warn(
        prog,
        &format!("{prog} {} runs or loads another program", hit.text),
    ))
}

pub(super) fn texts(args: &[Word]) -> Vec<&str> {
    args.iter().map(|w| w.text.as_str()).collect()
}

/// Does a short-option cluster or long option in `args` carry `short`/`long`?
/// `with_arg` lists the short options whose value ends a cluster.
fn has_opt(args: &[&str], short: char, long: &str, with_arg: &str) -> bool {
    args.iter().take_while(|t| **t != "--").any(|t| {
        if let Some(l) = t.strip_prefix("--") {
            return !long.is_empty()
                && (l == &long[2..] || l.starts_with(&format!("{}=", &long[2..])));
        }
        if !t.starts_with('-') || t.len() < 2 {
            return false;
        }
        for c in t[1..].chars() {
            if c == short {
                return true;
            }
            if with_arg.contains(c) {
                return false;
            }
        }
        false
    })
}

/// Non-option arguments.
fn positionals(args: &[&str]) -> usize {
    args.iter()
        .filter(|t| !t.starts_with('-') || **t == "-")
        .count()
}

/// Programs whose only risky options are the listed flags: with one of them
/// they write (or run) as the reason says, without them they only read.
const WRITE_FLAGS: &[(&str, &[&str], &str)] = &[
    ("tree", &["-o"], "tree -o writes its output to a file"),
    (
        "file",
        &["-C", "--compile"],
        "file -C writes a compiled magic file",
    ),
    (
        "iconv",
        &["-o", "--output"],
        "iconv -o writes its output to a file",
    ),
    (
        "sdiff",
        &["-o", "--output"],
        "sdiff -o writes its output to a file",
    ),
    (
        "shuf",
        &["-o", "--output"],
        "shuf -o writes its output to a file",
    ),
    ("yq", &["-i", "--inplace"], "yq -i edits files in place"),
    (
        "fd",
        &["-x", "-X", "--exec", "--exec-batch"],
        "fd --exec runs a command for each file",
    ),
    (
        "fdfind",
        &["-x", "-X", "--exec", "--exec-batch"],
        "fd --exec runs a command for each file",
    ),
];

fn judge_known(prog: &str, args: &[Word]) -> Judge {
    let t = texts(args);
    if VERSIONED.contains(&prog) && matches!(t.as_slice(), ["--version"]) {
        return safe(prog, &format!("{prog} --version only prints its version"));
    }
    if let Some(j) = listings::read_only_form(prog, args) {
        return j;
    }
    if let Some((_, flags, reason)) = WRITE_FLAGS.iter().find(|(p, _, _)| *p == prog) {
        return flag_writes(prog, &t, flags, reason);
    }
    match prog {
        "git" => git::judge(args),
        "sed" | "gsed" => scripts::sed(args),
        "awk" | "gawk" | "mawk" | "nawk" => scripts::awk(prog, args),
        "sort" => sort(&t),
        "rg" => rg(&t),
        "tar" | "bsdtar" | "gtar" => tar(prog, args),
        "uniq" => {
            if positionals(&t) >= 2 {
                warn(prog, "uniq writes its output to the second file")
            } else {
                safe(prog, "uniq only prints")
            }
        }
        "date" => date(&t),
        "hostname" => hostname(&t),
        "xxd" | "base64" | "base32" | "basenc" | "uudecode" | "openssl" => decoder(prog, &t),
        "unzip" => {
            if t.iter()
                .any(|a| matches!(*a, "-l" | "-v" | "-t" | "-Z" | "-p" | "-z"))
            {
                safe(prog, "unzip only lists or prints")
            } else {
                warn(prog, "unzip extracts files")
            }
        }
        "gzip" | "gunzip" | "bzip2" | "bunzip2" | "xz" | "unxz" | "zstd" | "unzstd" | "lz4" => {
            compressor(prog, &t)
        }
        "tee" => tee(&t),
        "dd" => dd(&t),
        "npm" | "pnpm" | "yarn" | "bun" => package_manager(prog, &t),
        p if FETCHERS.contains(&p) => {
            let mut j = warn(prog, &format!("{prog} accesses the network"));
            j.fetch = true;
            j
        }
        _ => match CHANGERS.iter().find(|(p, _)| *p == prog) {
            Some((_, reason)) => warn(prog, reason),
            None => warn(prog, &format!("{prog} is not a known read-only program")),
        },
    }
}

/// `sort` writes with `-o`, runs a program with `--compress-program` and
/// writes temporary files with `-T`.
fn sort(t: &[&str]) -> Judge {
    let prog = "sort";
    if has_opt(t, 'o', "--output", "ktoST") {
        warn(prog, "sort -o writes its output to a file")
    } else if t.iter().any(|a| a.starts_with("--compress-program")) {
        warn(prog, "sort --compress-program runs a program")
    } else if has_opt(t, 'T', "--temporary-directory", "kot") {
        warn(
            prog,
            "sort -T writes temporary files into the given directory",
        )
    } else {
        safe(prog, "sort only prints")
    }
}

/// `rg` runs programs with `--pre` (and its kin) and `-z`.
fn rg(t: &[&str]) -> Judge {
    let prog = "rg";
    if t.iter().any(|a| {
        *a == "--pre"
            || a.starts_with("--pre=")
            || a.starts_with("--pre-glob")
            || a.starts_with("--hostname-bin")
    }) {
        warn(prog, "rg --pre runs a preprocessor program on each file")
    } else if has_opt(t, 'z', "--search-zip", "efgmrtATBCEMj") {
        warn(
            prog,
            "rg -z runs decompression programs on compressed files",
        )
    } else {
        safe(prog, "rg only reads")
    }
}

/// `date` prints, unless given a time to set the system clock to.
fn date(t: &[&str]) -> Judge {
    let prog = "date";
    let sets = has_opt(t, 's', "--set", "dfr")
        || t.iter().any(|a| !a.starts_with('-') && !a.starts_with('+'));
    if sets {
        warn(prog, "date sets the system clock")
    } else {
        safe(prog, "date only prints the date")
    }
}

/// `hostname` prints, unless given a name (or a file of one) to set.
fn hostname(t: &[&str]) -> Judge {
    let prog = "hostname";
    if positionals(t) > 0 || has_opt(t, 'F', "--file", "") {
        warn(prog, "hostname sets the host name")
    } else {
        safe(prog, "hostname only prints the host name")
    }
}

/// Encoders and decoders: the verdict marks whether they decode, which links
/// `… | base64 -d | sh` to the shell it feeds.
fn decoder(prog: &str, t: &[&str]) -> Judge {
    match prog {
        "xxd" => {
            let mut j = if positionals(t) >= 2 {
                warn(prog, "xxd writes its output to the second file")
            } else {
                safe(prog, "xxd only prints")
            };
            j.decode = has_opt(t, 'r', "--revert", "cglos");
            j
        }
        "uudecode" => {
            let mut j = warn(prog, "uudecode writes decoded files");
            j.decode = true;
            j
        }
        "openssl" => {
            let mut j = warn(prog, "openssl can write keys and files");
            j.decode = t.contains(&"-d") || t.contains(&"-base64") || t.contains(&"base64");
            j
        }
        "base64" | "base32" | "basenc" => {
            let mut j = safe(prog, &format!("{prog} only prints"));
            j.decode = has_opt(t, 'd', "--decode", "w") || t.contains(&"-D");
            j
        }
        _ => warn(prog, &format!("{prog} is not a known read-only program")),
    }
}

/// Compressors replace their file operands unless they print to stdout,
/// list or test.
fn compressor(prog: &str, t: &[&str]) -> Judge {
    let to_stdout = t.iter().any(|a| {
        matches!(
            *a,
            "-c" | "--stdout" | "-l" | "--list" | "-t" | "--test" | "-dc" | "-cd"
        )
    });
    if to_stdout || positionals(t) == 0 {
        safe(prog, &format!("{prog} only prints"))
    } else {
        warn(
            prog,
            &format!("{prog} replaces files with (de)compressed ones"),
        )
    }
}

/// `tee` writes to every file operand but the standard streams.
fn tee(t: &[&str]) -> Judge {
    let prog = "tee";
    let files: Vec<&&str> = t
        .iter()
        .filter(|a| {
            !a.starts_with('-') && !matches!(**a, "/dev/null" | "/dev/stdout" | "/dev/stderr")
        })
        .collect();
    match files.first() {
        None => safe(prog, "tee only copies its input to its output"),
        Some(f) => warn(prog, &format!("tee writes to {f}")),
    }
}

/// `dd KEY=VALUE …`: every operand must be a known key, and every `of=`
/// (dd uses the last one) must be `/dev/null`.
fn dd(t: &[&str]) -> Judge {
    const READ_KEYS: &[&str] = &[
        "if", "bs", "ibs", "obs", "cbs", "count", "skip", "iseek", "seek", "oseek", "status",
        "iflag", "oflag", "conv",
    ];
    for a in t {
        match a.split_once('=') {
            Some(("of", "/dev/null")) => {}
            Some(("of", of)) => return warn("dd", &format!("dd writes to {of}")),
            Some((key, _)) if READ_KEYS.contains(&key) => {}
            _ => {
                return warn(
                    "dd",
                    &format!("dd operand {a} is not on its list of read-only operands"),
                );
            }
        }
    }
    safe("dd", "dd only copies its input to its output")
}

fn flag_writes(prog: &str, t: &[&str], flags: &[&str], reason: &str) -> Judge {
    let hit = t.iter().any(|a| {
        flags
            .iter()
            .any(|f| a == f || (f.starts_with("--") && a.starts_with(&format!("{f}="))))
    });
    if hit {
        warn(prog, reason)
    } else {
        safe(prog, &format!("{prog} only reads"))
    }
}

/// `tar t` lists (SAFE) when every option is a list-mode read-only one;
/// creating, extracting or updating writes; some options run programs.
fn tar(prog: &str, args: &[Word]) -> Judge {
    let j = tar_operation(prog, &texts(args));
    if j.risk != BashRisk::Safe {
        return j;
    }
    // Old style (`tar tzf a.tar`): the first word is a cluster of letters.
    let mut words = args.to_vec();
    if let Some(first) = words.first_mut()
        && !first.text.starts_with('-')
    {
        let arg_letters = first.text.chars().filter(|c| "fbCTX".contains(*c)).count();
        if arg_letters > 1 {
            return warn(prog, "tar's old-style options could not be read");
        }
        first.text.insert(0, '-');
    }
    if let Some(bad) = options::scan(&TAR_LIST, &words, Operands::Anywhere).unknown {
        return warn(prog, &options::unknown_reason(prog, &bad));
    }
    let remote = words.iter().any(|w| {
        let value = w.text.strip_prefix("--file=").unwrap_or(&w.text);
        !value.starts_with('-') && value.split('/').next().is_some_and(|h| h.contains(':'))
    });
    if remote && !words.iter().any(|w| w.text == "--force-local") {
        return warn(
            prog,
            "tar opens an archive named HOST:FILE on another host through a remote shell",
        );
    }
    j
}

fn tar_operation(prog: &str, t: &[&str]) -> Judge {
    const RUNS: &[&str] = &[
        "--to-command",
        "--use-compress-program",
        "-I",
        "--checkpoint-action",
        "--rsh-command",
        "--rmt-command",
        "--info-script",
        "--new-volume-script",
        "-F",
    ];
    if let Some(o) = t.iter().find(|a| RUNS.iter().any(|r| a.starts_with(r))) {
        return warn(prog, &format!("tar {o} runs a program"));
    }
    let mut letters = String::new();
    for (k, a) in t.iter().enumerate() {
        if let Some(long) = a.strip_prefix("--") {
            match long {
                "list" => letters.push('t'),
                "extract" | "get" => letters.push('x'),
                "create" => letters.push('c'),
                "append" | "update" | "delete" | "concatenate" | "catenate" => letters.push('u'),
                _ => {}
            }
        } else if let Some(short) = a.strip_prefix('-') {
            letters.push_str(short);
        } else if k == 0 {
            // Old style: `tar xzf file`.
            letters.push_str(a);
        }
    }
    if letters.contains(['I', 'F']) {
        return warn(prog, "tar -I/-F runs a program");
    }
    if letters.contains(['x', 'c', 'r', 'u', 'A']) {
        return warn(prog, "tar creates, extracts or updates files");
    }
    if letters.contains('t') {
        return safe(prog, "tar t only lists an archive");
    }
    warn(prog, "tar's operation could not be determined")
}

fn package_manager(prog: &str, t: &[&str]) -> Judge {
    match t.first().copied() {
        Some("publish") => warn(
            prog,
            &format!("{prog} publish releases a package to the registry"),
        ),
        Some("ls" | "list" | "--version" | "-v") if t.len() <= 2 => {
            safe(prog, &format!("{prog} {} only lists", t[0]))
        }
        Some("test" | "t" | "run" | "start" | "exec" | "x" | "run-script") => warn(
            prog,
            &format!("{prog} runs the project's scripts (project code)"),
        ),
        Some(
            "install" | "i" | "ci" | "add" | "update" | "upgrade" | "remove" | "uninstall" | "rm",
        ) => warn(
            prog,
            &format!("{prog} installs or removes packages (their scripts run)"),
        ),
        _ => warn(
            prog,
            &format!("{prog} may change packages or run project scripts"),
        ),
    }
}
