//! Launchers: programs that set up a process (architecture, scheduling,
//! resource limits, fake root, namespaces, locks, terminals, tracing) and
//! then exec the command that follows.
//!
//! Owns their option grammar, so `setarch x86_64 rm -rf /` is judged as
//! `rm -rf /` (BLOCK), and `flock f -c CODE` / `script -c CODE` / `sg g -c
//! CODE` judge CODE as shell code. The launcher itself is at least WARN: it
//! changes how the command runs. The simple wrappers (`sudo`, `env`, `nice`
//! …) are in `wrappers`.

use super::BashRisk;
use super::command::{self, Judge, judge_at};
use super::walk::Walker;
use super::words::Word;
use super::wrappers::{NO_OPTS, Opts, skip_options};

/// Names under which util-linux `setarch` runs with the architecture implied.
const SETARCH_ALIASES: &[&str] = &[
    "linux32", "linux64", "i386", "i486", "i586", "i686", "x86_64", "uname26", "ppc", "ppc32",
    "ppc64", "s390", "s390x", "sparc", "sparc32", "sparc64", "parisc", "parisc32", "parisc64",
    "mips", "mips32", "mips64",
];

/// One launcher: its options, how many operands come before the command
/// (`chrt PRIORITY cmd`), and what it does to the command.
struct Launcher {
    opts: Opts,
    leading: usize,
    /// Options that point the launcher at another process instead of a command.
    pid_opts: &'static [&'static str],
    what: &'static str,
}

const fn launcher(
    with_arg: &'static str,
    long_with_arg: &'static [&'static str],
    leading: usize,
    what: &'static str,
) -> Launcher {
    Launcher {
        opts: Opts {
            with_arg,
            long_with_arg,
            numeric: false,
        },
        leading,
        pid_opts: &[],
        what,
    }
}

/// Every launcher but `setarch`'s aliases, by the names it runs under.
static LAUNCHERS: &[(&[&str], Launcher)] = &[
    (
        &["setarch"],
        launcher("", &[], 1, "runs the command with another architecture"),
    ),
    (
        &["chrt"],
        Launcher {
            pid_opts: &["-p", "--pid"],
            ..launcher(
                "TPD",
                &["--sched-runtime", "--sched-period", "--sched-deadline"],
                1,
                "runs the command with another scheduling policy",
            )
        },
    ),
    (
        &["taskset"],
        Launcher {
            pid_opts: &["-p", "--pid", "-ap", "-pc", "-cp", "-acp"],
            ..launcher("", &[], 1, "runs the command on chosen CPUs")
        },
    ),
    (
        &["prlimit"],
        Launcher {
            pid_opts: &["-p", "--pid"],
            ..launcher(
                "po",
                &["--pid", "--output"],
                0,
                "runs the command with resource limits",
            )
        },
    ),
    (
        &["fakeroot"],
        launcher(
            "lsib",
            &["--lib", "--faked"],
            0,
            "runs the command as a fake root",
        ),
    ),
    (
        &["unshare"],
        launcher(
            "SGRw",
            &[
                "--setuid",
                "--setgid",
                "--root",
                "--wd",
                "--propagation",
                "--setgroups",
            ],
            0,
            "runs the command in new namespaces",
        ),
    ),
    (
        &["nsenter"],
        launcher(
            "tSG",
            &["--target", "--setuid", "--setgid"],
            0,
            "runs the command inside another process's namespaces",
        ),
    ),
    (
        &["chroot"],
        launcher("", &[], 1, "runs the command with another root directory"),
    ),
    (
        &[
            "noglob",
            "nocorrect",
            "eatmydata",
            "catchsegv",
            "torsocks",
            "proxychains",
            "proxychains4",
            "unbuffer",
            "chronic",
            "nocache",
            "dbus-run-session",
        ],
        launcher("", &[], 0, "runs the command"),
    ),
    (
        &["pkexec"],
        launcher("", &["--user"], 0, "runs the command as another user"),
    ),
    (
        &["systemd-run"],
        launcher(
            "upEMH",
            &[
                "--unit",
                "--property",
                "--description",
                "--slice",
                "--uid",
                "--gid",
                "--working-directory",
                "--setenv",
                "--nice",
                "--machine",
                "--host",
                "--on-calendar",
            ],
            0,
            "runs the command as a system service",
        ),
    ),
    (
        &["firejail"],
        launcher("", &[], 0, "runs the command in a sandbox"),
    ),
    (
        &["numactl"],
        launcher("CNmPi", &[], 0, "runs the command with a memory policy"),
    ),
    (
        &["cpulimit"],
        launcher(
            "lpe",
            &["--limit", "--pid", "--exe"],
            0,
            "runs the command with a CPU limit",
        ),
    ),
    (
        &["trickle"],
        launcher("dutwn", &[], 0, "runs the command with a bandwidth limit"),
    ),
    (
        &["faketime"],
        launcher("", &[], 1, "runs the command with a fake clock"),
    ),
    (
        &["xvfb-run"],
        launcher(
            "nsfe",
            &[
                "--server-num",
                "--server-args",
                "--auth-file",
                "--error-file",
            ],
            0,
            "runs the command with a virtual display",
        ),
    ),
    (
        &["strace", "ltrace"],
        launcher("eopsSaIbuEPX", &["--output"], 0, "traces the command"),
    ),
    (
        &["caffeinate"],
        launcher(
            "tw",
            &[],
            0,
            "runs the command while keeping the machine awake",
        ),
    ),
];

/// `setarch` run under an architecture's name: that name is the architecture.
static SETARCH_ALIAS: Launcher = launcher("", &[], 0, "runs the command with another architecture");

fn spec(prog: &str) -> Option<&'static Launcher> {
    if SETARCH_ALIASES.contains(&prog) {
        return Some(&SETARCH_ALIAS);
    }
    LAUNCHERS
        .iter()
        .find(|(names, _)| names.contains(&prog))
        .map(|(_, l)| l)
}

/// Judges `prog` if it is a launcher; `None` otherwise.
pub(crate) fn unwrap(w: &mut Walker<'_>, prog: &str, args: &[Word], depth: usize) -> Option<Judge> {
    let j = match prog {
        "flock" => flock(w, args, depth),
        "script" => script(w, args),
        "sg" => sg(w, args, depth),
        "parallel" => parallel(w, args, depth),
        _ => {
            let l = spec(prog)?;
            launch(w, prog, args, depth, l)
        }
    };
    Some(j)
}

fn launch(w: &mut Walker<'_>, prog: &str, args: &[Word], depth: usize, l: &Launcher) -> Judge {
    let mut i = 0;
    // `setarch ARCH [options] cmd`: the architecture comes first.
    if prog == "setarch" && args.first().is_some_and(|a| !a.text.starts_with('-')) {
        i = 1;
    }
    let leading = if prog == "setarch" { 0 } else { l.leading };
    let opts_end = i + skip_options(&args[i.min(args.len())..], &l.opts);
    if args[i.min(args.len())..opts_end.min(args.len())]
        .iter()
        .any(|a| l.pid_opts.contains(&a.text.as_str()))
    {
        return Judge::warn(Some(prog), &format!("{prog} changes a running process"));
    }
    let start = (opts_end + leading).min(args.len());
    let rest = &args[start..];
    if rest.is_empty() {
        return Judge::warn(
            Some(prog),
            &format!("{prog} without a command starts a shell or changes process settings"),
        );
    }
    let mut j = judge_at(w, rest, depth);
    j.raise(BashRisk::Warn, &format!("{prog} {}", l.what));
    j
}

/// `flock [opts] FILE CMD …`, `flock [opts] FILE -c CODE`, `flock FD`.
fn flock(w: &mut Walker<'_>, args: &[Word], depth: usize) -> Judge {
    let o = Opts {
        with_arg: "wEc",
        long_with_arg: &["--timeout", "--wait", "--conflict-exit-code", "--command"],
        numeric: false,
    };
    let lock = "flock runs the command while holding a lock";
    if let Some(code) = option_value(args, 'c', "--command", 1) {
        let mut j = command::code_string(w, "flock", "flock -c", &code);
        j.raise(BashRisk::Warn, lock);
        return j;
    }
    let i = skip_options(args, &o).min(args.len());
    let rest = args.get(i + 1..).unwrap_or(&[]);
    if rest.is_empty() {
        return Judge::warn(Some("flock"), "flock locks a file or descriptor");
    }
    let mut j = judge_at(w, rest, depth + 1);
    j.raise(BashRisk::Warn, lock);
    j
}

/// `script [opts] [FILE]`: records a session into FILE; `-c CODE` runs CODE.
fn script(w: &mut Walker<'_>, args: &[Word]) -> Judge {
    let writes = "script records the session into a file";
    match option_value(args, 'c', "--command", 0) {
        Some(code) => {
            let mut j = command::code_string(w, "script", "script -c", &code);
            j.raise(BashRisk::Warn, writes);
            j
        }
        None => Judge::warn(
            Some("script"),
            "script starts a shell and records it into a file",
        ),
    }
}

/// `sg GROUP -c CODE` or `sg GROUP CMD`.
fn sg(w: &mut Walker<'_>, args: &[Word], depth: usize) -> Judge {
    let why = "sg runs the command with another group";
    if let Some(code) = option_value(args, 'c', "--command", 1) {
        let mut j = command::code_string(w, "sg", "sg -c", &code);
        j.raise(BashRisk::Warn, why);
        return j;
    }
    let i = skip_options(args, &NO_OPTS).min(args.len());
    match args.get(i + 1..) {
        Some(rest) if !rest.is_empty() => {
            let mut j = judge_at(w, rest, depth + 1);
            j.raise(BashRisk::Warn, why);
            j
        }
        _ => Judge::warn(Some("sg"), "sg opens a shell with another group"),
    }
}

/// GNU `parallel [opts] CMD ::: ARGS`: each argument is put in place of `{}`
/// (or appended) and the line runs in a shell.
fn parallel(w: &mut Walker<'_>, args: &[Word], depth: usize) -> Judge {
    let o = Opts {
        with_arg: "jSadIENnLX",
        long_with_arg: &[
            "--jobs",
            "--sshlogin",
            "--arg-file",
            "--delimiter",
            "--colsep",
            "--joblog",
            "--results",
            "--tmpdir",
            "--delay",
            "--timeout",
            "--max-args",
            "--max-lines",
            "--workdir",
            "--env",
            "--basefile",
            "--replace",
        ],
        numeric: false,
    };
    let i = skip_options(args, &o).min(args.len());
    let sep = args[i..]
        .iter()
        .position(|a| a.text.starts_with(":::"))
        .map_or(args.len(), |k| i + k);
    let cmd = &args[i..sep];
    let inputs: Vec<&Word> = args
        .get(sep + 1..)
        .unwrap_or(&[])
        .iter()
        .filter(|a| !a.text.starts_with(":::"))
        .take(16)
        .collect();
    if cmd.is_empty() {
        return Judge::warn(
            Some("parallel"),
            "parallel runs the commands it reads from its input",
        );
    }
    let line: Vec<&str> = cmd.iter().map(|c| c.text.as_str()).collect();
    let line = line.join(" ");
    let mut j = judge_at(w, cmd, depth + 1);
    for input in inputs {
        let run = if line.contains("{}") {
            line.replace("{}", &input.text)
        } else {
            format!("{line} {}", input.text)
        };
        let inner = command::code_string(w, "parallel", "parallel", &Word::literal(&run));
        if let (true, Some(r)) = (inner.risk > j.risk, inner.reasons.first()) {
            j.raise(inner.risk, r);
        }
    }
    j.raise(
        BashRisk::Warn,
        "parallel runs the command once per input, through a shell",
    );
    j
}

/// The value of `-c CODE`, `-qc CODE`, `-cCODE`, `--command CODE` or
/// `--command=CODE`, looked for among the options and the first `operands`
/// operands (`flock FILE -c CODE`), not in the command that follows.
fn option_value(args: &[Word], short: char, long: &str, operands: usize) -> Option<Word> {
    let mut seen = 0;
    for (k, a) in args.iter().enumerate() {
        let t = a.text.as_str();
        if t == "--" {
            return None;
        }
        if !t.starts_with('-') || t == "-" {
            seen += 1;
            if seen > operands {
                return None;
            }
            continue;
        }
        if t == long {
            return args.get(k + 1).cloned();
        }
        if let Some(v) = t.strip_prefix(long).and_then(|r| r.strip_prefix('=')) {
            return Some(Word {
                text: v.to_string(),
                ..a.clone()
            });
        }
        if t.starts_with('-')
            && !t.starts_with("--")
            && let Some(pos) = t[1..].find(short)
        {
            let inline = &t[pos + 2..];
            if inline.is_empty() {
                return args.get(k + 1).cloned();
            }
            return Some(Word {
                text: inline.to_string(),
                ..a.clone()
            });
        }
    }
    None
}
