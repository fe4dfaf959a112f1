//! Wrappers: programs whose job is to run another command.
//!
//! Owns the option grammar of `sudo`, `doas`, `env`, `nice`, `ionice`,
//! `timeout`, `nohup`, `time`, `command`, `builtin`, `exec`, `stdbuf`,
//! `setsid`, `xargs`, `watch`, `su`, `busybox` and `find -exec`, so the
//! command they run is judged as if typed directly. Launchers that set up
//! a process (architecture, scheduling, limits, namespaces, locks) are in
//! `launchers`. It does not judge plain programs (that is `rules`).

use super::command::{self, Judge, XargsPlan, judge_at};
use super::defs::is_dangerous_var;
use super::option_lists::{TIME, XARGS};
use super::options::{self, Operands};
use super::walk::Walker;
use super::words::Word;
use super::{BashRisk, block, find, launchers};

/// Short options that take an argument, long ones that take one when not
/// written `--opt=value`, and whether `-10` style numbers are options.
pub(super) struct Opts {
    pub with_arg: &'static str,
    pub long_with_arg: &'static [&'static str],
    pub numeric: bool,
}

pub(super) const NO_OPTS: Opts = Opts {
    with_arg: "",
    long_with_arg: &[],
    numeric: false,
};

/// Programs that stay read-only whatever extra arguments `xargs` appends
/// (no flag of theirs writes or executes).
const XARGS_SAFE: &[&str] = &[
    "echo",
    "printf",
    "cat",
    "head",
    "tail",
    "wc",
    "ls",
    "grep",
    "egrep",
    "fgrep",
    "stat",
    "du",
    "basename",
    "dirname",
    "realpath",
    "readlink",
    "md5sum",
    "sha1sum",
    "sha256sum",
    "sha512sum",
    "cksum",
    "test",
    "true",
    "false",
];

/// Judges `prog` if it is a wrapper; `None` otherwise.
pub(crate) fn unwrap(w: &mut Walker<'_>, prog: &str, args: &[Word], depth: usize) -> Option<Judge> {
    let d = depth + 1;
    let j = match prog {
        "sudo" | "doas" => sudo(w, prog, args, d),
        "env" => env(w, args, d),
        "nice" | "builtin" | "setsid" | "coproc" | "exec" | "stdbuf" => {
            option_wrapper(w, prog, args, d)
        }
        "ionice" => ionice(w, args, d),
        "timeout" => timeout(w, args, d),
        "nohup" => {
            let mut j = inner(w, prog, args, &NO_OPTS, d, "nohup without a command");
            j.raise(
                BashRisk::Warn,
                "nohup keeps the command running after the shell exits (and may write nohup.out)",
            );
            j
        }
        "time" => time(w, args, d),
        "command" => command_builtin(w, args, d),
        "xargs" => xargs(w, args, d),
        "watch" => watch(w, args, d),
        // `runuser -u USER [--] CMD …` runs CMD directly (no shell).
        "runuser"
            if args
                .iter()
                .any(|a| a.text == "-u" || a.text.starts_with("--user")) =>
        {
            runuser(w, args, d)
        }
        "su" | "runuser" => su(w, prog, args),
        "busybox" => match args.first() {
            Some(a) if !a.text.starts_with('-') => judge_at(w, args, d),
            _ => Judge::safe(Some(prog), "busybox lists its applets"),
        },
        "find" => find::find(w, args, d),
        _ => return launchers::unwrap(w, prog, args, d),
    };
    Some(j)
}

/// Wrappers whose only grammar is their own options before the command:
/// `nice`, `exec`, `stdbuf`, and `builtin`, `setsid`, `coproc` (which take
/// none).
fn option_wrapper(w: &mut Walker<'_>, prog: &str, args: &[Word], depth: usize) -> Judge {
    match prog {
        "nice" => {
            let o = Opts {
                with_arg: "n",
                long_with_arg: &["--adjustment"],
                numeric: true,
            };
            inner(
                w,
                prog,
                args,
                &o,
                depth,
                "nice prints the scheduling priority",
            )
        }
        "exec" => {
            let o = Opts {
                with_arg: "a",
                ..NO_OPTS
            };
            inner(
                w,
                prog,
                args,
                &o,
                depth,
                "exec only applies its redirections",
            )
        }
        "stdbuf" => {
            let o = Opts {
                with_arg: "ioe",
                long_with_arg: &["--input", "--output", "--error"],
                numeric: false,
            };
            inner(w, prog, args, &o, depth, "stdbuf without a command")
        }
        // `builtin`, `setsid` and `coproc`.
        _ => inner(
            w,
            prog,
            args,
            &NO_OPTS,
            depth,
            &format!("{prog} with nothing to run"),
        ),
    }
}

/// `ionice [OPTIONS] [CMD]`: WARN when it changes another process's
/// priority.
fn ionice(w: &mut Walker<'_>, args: &[Word], depth: usize) -> Judge {
    let prog = "ionice";
    let o = Opts {
        with_arg: "cnpPu",
        long_with_arg: &["--class", "--classdata", "--pid", "--pgid", "--uid"],
        numeric: false,
    };
    let mut j = inner(w, prog, args, &o, depth, "ionice prints the I/O priority");
    let other = args.iter().any(|a| {
        matches!(
            a.text.as_str(),
            "-p" | "-P" | "-u" | "--pid" | "--pgid" | "--uid"
        )
    });
    if other {
        j.raise(
            BashRisk::Warn,
            "ionice changes another process's I/O priority",
        );
    }
    j
}

/// `timeout [OPTIONS] DURATION CMD`.
fn timeout(w: &mut Walker<'_>, args: &[Word], depth: usize) -> Judge {
    let o = Opts {
        with_arg: "sk",
        long_with_arg: &["--signal", "--kill-after"],
        numeric: false,
    };
    // The first operand is the duration.
    let i = skip_options(args, &o) + 1;
    wrapped(
        w,
        "timeout",
        args.get(i..).unwrap_or(&[]),
        depth,
        "timeout without a command",
    )
}

/// The `command` builtin: `-v`/`-V` only look a name up; otherwise it runs
/// the command.
fn command_builtin(w: &mut Walker<'_>, args: &[Word], depth: usize) -> Judge {
    let prog = "command";
    let i = skip_options(args, &NO_OPTS);
    let lookup = args[..i]
        .iter()
        .any(|a| a.text.contains('v') || a.text.contains('V'));
    if lookup {
        Judge::safe(Some(prog), "command -v only looks a name up")
    } else {
        wrapped(w, prog, &args[i..], depth, "command with nothing to run")
    }
}

/// `runuser -u USER [--] CMD …`: CMD is judged and raised to WARN.
fn runuser(w: &mut Walker<'_>, args: &[Word], depth: usize) -> Judge {
    let prog = "runuser";
    let o = Opts {
        with_arg: "ugGw",
        long_with_arg: &[
            "--user",
            "--group",
            "--supp-group",
            "--whitelist-environment",
        ],
        numeric: false,
    };
    let mut j = inner(w, prog, args, &o, depth, "runuser without a command");
    j.raise(BashRisk::Warn, "runuser runs the command as another user");
    j
}

/// Returns the index of the first operand after the options.
pub(super) fn skip_options(args: &[Word], o: &Opts) -> usize {
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let t = a.text.as_str();
        if t == "--" {
            return i + 1;
        }
        if !t.starts_with('-') || t == "-" || a.dynamic {
            return i;
        }
        if t.starts_with("--") {
            // getopt reads an abbreviation (`--out` for `--output`) as the
            // option it starts, argument included: the next word is that
            // argument, not the command.
            let takes_arg =
                !t.contains('=') && t.len() > 2 && o.long_with_arg.iter().any(|l| l.starts_with(t));
            i += if takes_arg { 2 } else { 1 };
            continue;
        }
        let flags = &t[1..];
        if o.numeric && flags.chars().all(|c| c.is_ascii_digit()) {
            i += 1;
            continue;
        }
        // In a cluster such as `-un`, an option that takes an argument eats
        // the rest of the word, or the next word when it is last.
        let last_takes = flags
            .char_indices()
            .find(|(_, c)| o.with_arg.contains(*c))
            .map(|(k, c)| k + c.len_utf8() == flags.len())
            .unwrap_or(false);
        i += if last_takes { 2 } else { 1 };
    }
    i
}

fn inner(
    w: &mut Walker<'_>,
    prog: &str,
    args: &[Word],
    o: &Opts,
    depth: usize,
    empty: &str,
) -> Judge {
    let i = skip_options(args, o).min(args.len());
    wrapped(w, prog, &args[i..], depth, empty)
}

/// Judges the wrapped command; a wrapper alone is SAFE with `empty` as reason.
fn wrapped(w: &mut Walker<'_>, prog: &str, rest: &[Word], depth: usize, empty: &str) -> Judge {
    if rest.is_empty() {
        return Judge::safe(Some(prog), empty);
    }
    judge_at(w, rest, depth)
}

/// Skips `NAME=value` words (as `env` and `sudo` accept), noting dangerous
/// ones.
fn skip_assignments(args: &[Word], from: usize, floor: &mut Vec<String>) -> usize {
    let mut i = from;
    while let Some(a) = args.get(i) {
        let Some((name, _)) = a.text.split_once('=') else {
            break;
        };
        let valid = !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            break;
        }
        if is_dangerous_var(name) {
            floor.push(format!(
                "sets {name}, which changes what programs run or load"
            ));
        }
        i += 1;
    }
    i
}

fn sudo(w: &mut Walker<'_>, prog: &str, args: &[Word], depth: usize) -> Judge {
    let o = Opts {
        with_arg: "ugCDprtTU",
        long_with_arg: &[
            "--user",
            "--group",
            "--chdir",
            "--prompt",
            "--role",
            "--type",
            "--command-timeout",
            "--other-user",
            "--host",
            "--close-from",
        ],
        numeric: false,
    };
    let i = skip_options(args, &o).min(args.len());
    let mut floor = Vec::new();
    let k = skip_assignments(args, i, &mut floor);
    let rest = &args[k..];
    let root = format!("{prog} runs the command as root");
    if rest.is_empty() {
        let flags: String = args[..i].iter().map(|a| a.text.as_str()).collect();
        let why = if flags.contains('e') {
            format!("{prog} -e edits files as root")
        } else if flags.contains('s') || flags.contains('i') {
            format!("{prog} opens a root shell")
        } else {
            format!("{prog} changes or shows its own credentials")
        };
        return Judge::warn(Some(prog), &why);
    }
    let mut j = judge_at(w, rest, depth);
    j.raise(BashRisk::Warn, &root);
    for f in floor {
        j.raise(BashRisk::Warn, &f);
    }
    // The seeds' blocked patterns `sudo rm` and `sudo chmod`.
    if let Some(p @ ("rm" | "chmod")) = j.program.as_deref() {
        let reason = format!("{prog} {p} changes files as root (a blocked pattern)");
        j.raise(BashRisk::Block, &reason);
    }
    j
}

/// What `env`'s options say: the index where they end, the string `-S`
/// splits into the command, and the reasons that keep the verdict at WARN.
struct EnvOptions {
    end: usize,
    split: Option<String>,
    floor: Vec<String>,
}

fn env(w: &mut Walker<'_>, args: &[Word], depth: usize) -> Judge {
    let EnvOptions {
        end,
        split,
        mut floor,
    } = env_options(w, args);
    let i = skip_assignments(args, end.min(args.len()), &mut floor);
    let rest = args.get(i..).unwrap_or(&[]);
    let mut j = if let Some(s) = split {
        let mut code = s;
        for r in rest {
            code.push(' ');
            code.push_str(&r.text);
        }
        command::code_string(w, "env", "env -S", &Word::literal(&code))
    } else if rest.is_empty() {
        Judge::safe(Some("env"), "env prints the environment")
    } else {
        judge_at(w, rest, depth)
    };
    for f in floor {
        j.raise(BashRisk::Warn, &f);
    }
    j
}

/// Reads `env`'s options. `-C DIR` moves the walker's protected working
/// directory, since the command runs there.
fn env_options(w: &mut Walker<'_>, args: &[Word]) -> EnvOptions {
    let mut floor = Vec::new();
    let mut split: Option<String> = None;
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let t = a.text.as_str();
        match t {
            "--" => {
                i += 1;
                break;
            }
            "-" | "-i" | "--ignore-environment" | "-0" | "--null" | "-v" | "--debug" => i += 1,
            "-C" | "--chdir" => {
                // `env -C / rm -rf *` deletes in that directory.
                if let Some(dir) = args.get(i + 1) {
                    w.cwd_protected =
                        block::protected(&dir.text, w.cwd_protected.as_deref()).map(|p| p.path);
                }
                i += 2;
            }
            "-u" | "--unset" | "-P" => i += 2,
            "-S" | "--split-string" => {
                split = args.get(i + 1).map(|s| s.text.clone());
                i += 2;
                break;
            }
            _ if t.starts_with("--split-string=") => {
                split = t.split_once('=').map(|(_, v)| v.to_string());
                i += 1;
                break;
            }
            _ if t.starts_with("-S") => {
                split = Some(t[2..].to_string());
                i += 1;
                break;
            }
            _ if t.starts_with("--") => i += env_long_option(t, &mut floor),
            _ if t.starts_with('-') && t.len() > 1 => {
                floor.push(format!("env option {t} is not understood"));
                i += 1;
            }
            _ => break,
        }
    }
    EnvOptions {
        end: i,
        split,
        floor,
    }
}

/// How many words the long `env` option `t` takes (itself and perhaps its
/// value).
fn env_long_option(t: &str, floor: &mut Vec<String>) -> usize {
    let name = t.split_once('=').map_or(t, |(n, _)| n);
    match name {
        "--unset" | "--chdir" | "--argv0" if !t.contains('=') => 2,
        "--unset"
        | "--chdir"
        | "--argv0"
        | "--block-signal"
        | "--default-signal"
        | "--ignore-signal"
        | "--list-signal-handling"
        | "--help"
        | "--version" => 1,
        // An abbreviation (`--u`) may take the next word as its
        // value, so which command runs is not known.
        _ => {
            floor.push(format!(
                "{}: the command env runs cannot be found",
                options::unknown_reason("env", name)
            ));
            1
        }
    }
}

/// `time [-p] CMD` (the bash keyword) and GNU `time [OPTIONS] CMD`.
fn time(w: &mut Walker<'_>, args: &[Word], depth: usize) -> Judge {
    let scan = options::scan(&TIME, args, Operands::EndOptions);
    let i = match &scan.unknown {
        None => scan.first_operand,
        Some(_) => skip_options(args, &NO_OPTS),
    };
    let mut j = wrapped(
        w,
        "time",
        &args[i.min(args.len())..],
        depth,
        "time with nothing to run",
    );
    if let Some(bad) = scan.unknown {
        let reason = match bad.as_str() {
            "-o" | "-a" | "--output" | "--append" => {
                format!("time {bad} writes its report to a file")
            }
            _ => options::unknown_reason("time", &bad),
        };
        j.raise(BashRisk::Warn, &reason);
    }
    j
}

fn xargs(w: &mut Walker<'_>, args: &[Word], depth: usize) -> Judge {
    let o = Opts {
        with_arg: "adEILnPs",
        long_with_arg: &[
            "--arg-file",
            "--delimiter",
            "--max-args",
            "--max-procs",
            "--max-chars",
            "--max-lines",
            "--process-slot-var",
        ],
        numeric: false,
    };
    let scan = options::scan(&XARGS, args, Operands::EndOptions);
    let i = match &scan.unknown {
        None => scan.first_operand,
        Some(_) => skip_options(args, &o),
    }
    .min(args.len());
    let echo = [Word::literal("echo")];
    let rest = if i < args.len() {
        &args[i..]
    } else {
        &echo[..]
    };
    let mut j = judge_at(w, rest, depth);
    let prog = j.program.clone().unwrap_or_default();
    j.raise(
        j.risk,
        &format!("xargs runs {prog} with arguments read from its input"),
    );
    if let Some(bad) = scan.unknown {
        j.raise(
            BashRisk::Warn,
            &format!(
                "{}: the command xargs runs cannot be found",
                options::unknown_reason("xargs", &bad)
            ),
        );
    }
    j.xargs = Some(XargsPlan {
        command: rest.to_vec(),
        replace: replace_string(&args[..i]),
    });
    if j.risk == BashRisk::Safe && !XARGS_SAFE.contains(&prog.as_str()) {
        j.raise(
            BashRisk::Warn,
            &format!(
                "arguments read by xargs could turn on flags of {prog} that write or run code"
            ),
        );
    }
    j
}

/// The `-I R` / `-iR` / `--replace[=R]` string of xargs (`{}` by default).
fn replace_string(opts: &[Word]) -> Option<String> {
    for (k, a) in opts.iter().enumerate() {
        let t = a.text.as_str();
        if t == "-I" {
            return opts.get(k + 1).map(|r| r.text.clone());
        }
        if let Some(r) = t.strip_prefix("-I").or_else(|| t.strip_prefix("-i")) {
            return Some(if r.is_empty() {
                "{}".to_string()
            } else {
                r.to_string()
            });
        }
        if t == "--replace" {
            return Some("{}".to_string());
        }
        if let Some(r) = t.strip_prefix("--replace=") {
            return Some(r.to_string());
        }
    }
    None
}

fn watch(w: &mut Walker<'_>, args: &[Word], depth: usize) -> Judge {
    let o = Opts {
        with_arg: "n",
        long_with_arg: &["--interval"],
        numeric: false,
    };
    let i = skip_options(args, &o).min(args.len());
    let exec = args[..i]
        .iter()
        .any(|a| a.text == "--exec" || (!a.text.starts_with("--") && a.text.contains('x')));
    let rest = &args[i..];
    if rest.is_empty() {
        return Judge::warn(Some("watch"), "watch without a command");
    }
    if exec {
        return judge_at(w, rest, depth);
    }
    // Without -x, watch hands the joined words to `sh -c`.
    let code = Word {
        text: rest
            .iter()
            .map(|a| a.text.as_str())
            .collect::<Vec<_>>()
            .join(" "),
        dynamic: rest.iter().any(|a| a.dynamic),
        guessable: rest.iter().all(|a| a.guessable),
        ..Word::default()
    };
    command::code_string(w, "watch", "watch", &code)
}

fn su(w: &mut Walker<'_>, prog: &str, args: &[Word]) -> Judge {
    let mut code: Option<&Word> = None;
    let mut owned: Option<Word> = None;
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let t = a.text.as_str();
        if matches!(t, "-c" | "--command" | "--session-command") {
            code = args.get(i + 1);
            break;
        }
        if let Some(v) = t.strip_prefix("--command=") {
            owned = Some(Word {
                text: v.to_string(),
                ..a.clone()
            });
            break;
        }
        i += 1;
    }
    let as_user = format!("{prog} runs commands as another user");
    match owned.as_ref().or(code) {
        Some(c) => {
            let mut j = command::code_string(w, prog, &format!("{prog} -c"), c);
            j.raise(BashRisk::Warn, &as_user);
            j
        }
        None => Judge::warn(Some(prog), &format!("{prog} opens a shell as another user")),
    }
}
