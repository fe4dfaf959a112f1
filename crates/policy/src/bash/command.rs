//! Judges one simple command: works out which program really runs and hands
//! it to the right judge.
//!
//! Owns program-name normalisation (quotes, backslashes, `/bin/rm` → `rm`,
//! names built by expansions or globs), code runners (shells with `-c`,
//! interpreters, `eval`, `source`, `trap`, `alias`) and `cd` tracking.
//! Wrappers that run another command live in `wrappers`; per-program tables
//! in `rules`; the destructive patterns in `block`.

use super::interp;
use super::patterns;
use super::protected;
use super::walk::Walker;
use super::words::{self, Word};
use super::{BashRisk, block, rules, wrappers};

/// How many wrappers deep (`sudo env nice timeout …`) we unwrap.
const MAX_WRAP: usize = 12;

/// Directories whose programs are the real system tools: `/bin/rm` is `rm`,
/// while `./rm` or `~/bin/ls` could be anything.
const SYSTEM_BIN_DIRS: &[&str] = &[
    "/bin",
    "/sbin",
    "/usr/bin",
    "/usr/sbin",
    "/usr/local/bin",
    "/usr/local/sbin",
    "/opt/homebrew/bin",
    "/run/current-system/sw/bin",
];

const SHELLS: &[&str] = &[
    "bash", "sh", "dash", "zsh", "ksh", "ksh93", "mksh", "ash", "yash", "fish", "posh", "rbash",
];

/// Names a glob in program position is tested against (`/bin/r?`).
const DANGEROUS_NAMES: &[&str] = &[
    "rm", "dd", "mkfs", "shred", "chmod", "chown", "mv", "reboot", "shutdown", "halt", "poweroff",
    "bash", "sh", "wipefs",
];

/// The judgement of one command, before it becomes a `Segment`.
#[derive(Debug, Clone)]
pub(crate) struct Judge {
    pub risk: BashRisk,
    pub reasons: Vec<String>,
    pub program: Option<String>,
    pub fetch: bool,
    pub decode: bool,
    pub stdin_code: bool,
    pub shell: bool,
    /// Takes code in its arguments (`sh -c`, `python script`, `eval`,
    /// `source`): a substitution there that fetches or decodes is BLOCK.
    pub code_runner: bool,
    /// What the command prints, when known statically (`echo`, `printf`).
    pub output: Option<String>,
    /// The words of the program that actually runs (wrappers dropped),
    /// program name normalised; set by the innermost `judge_at`.
    pub argv: Option<Vec<String>>,
    /// The whole command line as typed, wrappers included, normalised; set
    /// by the walker for the segment it pushes.
    pub invocation: Option<String>,
    /// Writes into `.git/`/`.atto/` or configures git to run a program.
    pub protected_write: bool,
    /// An interpreter (`python`, `perl` …) reading its program from standard
    /// input: a here-doc it reads is scanned as that language.
    pub stdin_lang: Option<String>,
    /// `xargs CMD`: the command that runs with the words read from input,
    /// judged again when a pipeline shows what that input is.
    pub xargs: Option<XargsPlan>,
}

/// What `xargs` runs: its command and the `-I` replacement string, if any.
#[derive(Debug, Clone)]
pub(crate) struct XargsPlan {
    pub command: Vec<Word>,
    pub replace: Option<String>,
}

impl Judge {
    pub(crate) fn new(risk: BashRisk, program: Option<&str>, reason: &str) -> Self {
        Judge {
            risk,
            reasons: vec![reason.to_string()],
            program: program.map(str::to_string),
            fetch: false,
            decode: false,
            stdin_code: false,
            shell: false,
            code_runner: false,
            output: None,
            argv: None,
            invocation: None,
            protected_write: false,
            stdin_lang: None,
            xargs: None,
        }
    }

    pub(crate) fn safe(program: Option<&str>, reason: &str) -> Self {
        Judge::new(BashRisk::Safe, program, reason)
    }

    pub(crate) fn warn(program: Option<&str>, reason: &str) -> Self {
        Judge::new(BashRisk::Warn, program, reason)
    }

    /// Raises the risk (never lowers it) and records the reason.
    pub(crate) fn raise(&mut self, risk: BashRisk, reason: &str) {
        raise_into(&mut self.risk, &mut self.reasons, risk, reason);
    }
}

/// Shared by judges and segments: a reason that raises the risk goes first so
/// the worst reason leads; duplicates are dropped.
pub(crate) fn raise_into(
    current: &mut BashRisk,
    reasons: &mut Vec<String>,
    risk: BashRisk,
    reason: &str,
) {
    if reasons.iter().any(|r| r == reason) {
        *current = (*current).max(risk);
        return;
    }
    if risk > *current {
        *current = risk;
        reasons.insert(0, reason.to_string());
    } else {
        reasons.push(reason.to_string());
    }
}

/// Judges the command made of `words` (program first).
pub(crate) fn judge(w: &mut Walker<'_>, words: &[Word]) -> Judge {
    judge_at(w, words, 0)
}

/// Judges `words`, `depth` wrappers deep.
pub(crate) fn judge_at(w: &mut Walker<'_>, words: &[Word], depth: usize) -> Judge {
    let Some(name) = words.first() else {
        return Judge::safe(None, "nothing to run");
    };
    if depth > MAX_WRAP {
        return Judge::warn(None, "too many nested wrappers to analyse");
    }
    if name.dynamic {
        return dynamic_name(w, words, depth);
    }
    if name.glob {
        return glob_name(w, words, depth);
    }
    let (prog, trusted) = normalize_program(&name.text);
    if prog.is_empty() {
        return Judge::warn(None, "the program name is empty");
    }
    let args = &words[1..];
    let mut j = if w.functions.iter().any(|f| f == &name.text) {
        Judge::safe(
            Some(&prog),
            "calls a function defined in this command (its body is judged on its own)",
        )
    } else {
        dispatch(w, &prog, args, depth)
    };
    if let Some(reason) = block::check(&prog, args, w.cwd_protected.as_deref()) {
        j.raise(BashRisk::Block, &reason);
    }
    if let Some(reason) = protected::write_target(&prog, args) {
        j.raise(BashRisk::Warn, &reason);
        j.protected_write = true;
    }
    if j.argv.is_none() {
        let mut argv = vec![prog.clone()];
        argv.extend(args.iter().map(|a| a.text.clone()));
        j.argv = Some(argv);
    }
    if !trusted {
        j.raise(
            BashRisk::Warn,
            &format!(
                "runs {} by path, and only programs in system directories are trusted",
                name.text
            ),
        );
    }
    if j.program.is_none() {
        j.program = Some(prog);
    }
    j
}

fn dispatch(w: &mut Walker<'_>, prog: &str, args: &[Word], depth: usize) -> Judge {
    if let Some(j) = wrappers::unwrap(w, prog, args, depth) {
        return j;
    }
    if SHELLS.contains(&prog) {
        return shell(w, prog, args);
    }
    if let Some(j) = interpreter(w, prog, args) {
        return j;
    }
    match prog {
        "eval" => eval(w, args),
        "source" | "." if args.first().is_some_and(|a| is_stdin_path(&a.text)) => {
            let mut j = Judge::warn(
                Some(prog),
                &format!("{prog} runs commands read from its input"),
            );
            j.stdin_code = true;
            j.shell = true;
            j
        }
        "source" | "." => {
            let mut j = Judge::warn(
                Some(prog),
                &format!(
                    "{prog} runs the script {} in the current shell",
                    args.first().map(|a| a.text.as_str()).unwrap_or("(none)")
                ),
            );
            j.code_runner = true;
            j
        }
        "trap" => trap(w, args),
        "alias" => alias(w, args),
        "cd" | "pushd" => cd(w, prog, args),
        _ => rules::judge_program(prog, args),
    }
}

/// Script operands that mean "read the program from standard input".
fn is_stdin_path(t: &str) -> bool {
    matches!(t, "-" | "/dev/stdin" | "/dev/fd/0" | "/proc/self/fd/0")
}

/// `'rm'` → `rm`, `/bin/rm` → `rm` (trusted), `./rm` → `rm` (untrusted).
pub(crate) fn normalize_program(text: &str) -> (String, bool) {
    match text.rfind('/') {
        Some(idx) => {
            let dir = block::lexical_normalize(&text[..idx.max(1)]);
            let base = text[idx + 1..].to_string();
            (base, SYSTEM_BIN_DIRS.contains(&dir.as_str()))
        }
        None => (text.to_string(), true),
    }
}

/// `$CMD args`, `$(echo rm) -rf /`, `rm${IFS}-rf${IFS}/`.
fn dynamic_name(w: &mut Walker<'_>, words: &[Word], depth: usize) -> Judge {
    let name = &words[0];
    // `**$(…)`: the glob before the expansion still picks the program, whatever the
    // expansion adds, so it is judged as a glob that can end in anything.
    let literal = name.text.split(['$', '`']).next().unwrap_or_default();
    if !name.guessable && literal.contains(['*', '?', '[']) {
        let mut ws = words.to_vec();
        ws[0] = Word::literal(&format!("{literal}*"));
        let mut j = glob_name(w, &ws, depth);
        j.raise(
            BashRisk::Warn,
            &format!(
                "the program to run is decided by an expansion ({})",
                name.text
            ),
        );
        return j;
    }
    if !name.guessable {
        return Judge::warn(
            None,
            &format!(
                "the program to run is decided by an expansion ({})",
                name.text
            ),
        );
    }
    let guessed: Vec<Word> = words
        .iter()
        .map(|x| Word {
            dynamic: x.dynamic && !x.guessable,
            ..x.clone()
        })
        .collect();
    let mut j = judge_at(w, &guessed, depth + 1);
    j.raise(
        BashRisk::Warn,
        &format!(
            "the program to run comes from an expansion (it appears to be {})",
            name.text
        ),
    );
    j
}

/// `/bin/r? -rf /`: could the glob name a dangerous program?
fn glob_name(w: &mut Walker<'_>, words: &[Word], depth: usize) -> Judge {
    let name = &words[0].text;
    let base = name.rsplit('/').next().unwrap_or(name);
    let mut j = Judge::warn(
        None,
        &format!("the program name {name} is a glob pattern, so what runs is unknown"),
    );
    for candidate in DANGEROUS_NAMES
        .iter()
        .filter(|c| patterns::glob_match(base, c))
    {
        let mut ws = words.to_vec();
        ws[0] = Word::literal(candidate);
        let inner = judge_at(w, &ws, depth + 1);
        if inner.risk == BashRisk::Block {
            for r in &inner.reasons {
                j.raise(
                    BashRisk::Block,
                    &format!("the glob can match {candidate}: {r}"),
                );
            }
            break;
        }
    }
    j
}

/// `bash -c STRING`, `sh script.sh`, `bash` reading its input.
fn shell(w: &mut Walker<'_>, prog: &str, args: &[Word]) -> Judge {
    let mut i = 0;
    let mut dash_c = false;
    let mut read_stdin = false;
    while let Some(a) = args.get(i) {
        let t = a.text.as_str();
        if t == "--" || t == "-" {
            read_stdin |= t == "-";
            i += 1;
            break;
        }
        if t.starts_with("--") {
            i += if matches!(t, "--rcfile" | "--init-file") {
                2
            } else {
                1
            };
            continue;
        }
        if (t.starts_with('-') || t.starts_with('+')) && t.len() > 1 && a.is_static() {
            let flags = &t[1..];
            dash_c |= flags.contains('c');
            read_stdin |= flags.contains('s');
            i += if flags.ends_with('o') || flags.ends_with('O') {
                2
            } else {
                1
            };
            continue;
        }
        break;
    }
    let operand = args.get(i);
    let mut j = match (dash_c, operand) {
        (true, None) => Judge::warn(Some(prog), &format!("{prog} -c without a command")),
        (true, Some(code)) => code_string(w, prog, &format!("{prog} -c"), code),
        (false, Some(script)) if !read_stdin && !is_stdin_path(&script.text) => {
            let mut j = Judge::warn(
                Some(prog),
                &format!("{prog} runs the script {} (project code)", script.text),
            );
            j.code_runner = true;
            j
        }
        _ => {
            let mut j = Judge::warn(
                Some(prog),
                &format!("{prog} reads commands from its input and runs them"),
            );
            j.stdin_code = true;
            j
        }
    };
    j.shell = true;
    j
}

/// A string that will run as shell code: parse and judge it on its own.
pub(crate) fn code_string(w: &mut Walker<'_>, prog: &str, what: &str, code: &Word) -> Judge {
    let mut j = Judge::safe(
        Some(prog),
        &format!("{what} runs the given string (judged as its own commands)"),
    );
    j.code_runner = true;
    if code.dynamic {
        j.raise(
            BashRisk::Warn,
            &format!("{what} runs a string built at run time"),
        );
        if !code.guessable {
            // `… | bash -c "$(cat)"`: the string may be whatever is piped in.
            j.stdin_code = true;
            return j;
        }
    }
    w.walk_source(&code.text.replace(words::IFS_MARK, " "));
    j
}

/// The options of an interpreter that decide what it runs.
struct Grammar {
    /// Options whose value is code (`-c`, `--eval`).
    code: &'static [&'static str],
    /// Options that run a module (`-m`).
    module: &'static [&'static str],
    /// Options that only print information when given alone.
    version: &'static [&'static str],
    /// Options that take the next word as their value.
    with_arg: &'static [&'static str],
    /// Short options that take the rest of their word as a value
    /// (`-MFile::Path`, `-rfileutils`): a code letter after them is not one.
    attached: &'static str,
}

fn grammar(prog: &str) -> Option<Grammar> {
    let g = |code, module, version, with_arg, attached| Grammar {
        code,
        module,
        version,
        with_arg,
        attached,
    };
    Some(match prog {
        p if p.starts_with("python") || p.starts_with("pypy") => g(
            &["-c"],
            &["-m"],
            &["-V", "--version", "-h", "--help"],
            &["-W", "-X", "-Q"],
            "WXQ",
        ),
        "node" | "nodejs" => g(
            &["-e", "--eval", "-p", "--print"],
            &[],
            &["-v", "--version", "-h", "--help"],
            &["-r", "--require", "--import", "--loader"],
            "r",
        ),
        "perl" => g(
            &["-e", "-E"],
            &[],
            &["-v", "-V", "--version"],
            &["-I"],
            "MmIlx0iDdCF",
        ),
        "ruby" => g(
            &["-e"],
            &[],
            &["-v", "--version", "-h", "--help"],
            &["-I", "-r"],
            "rIECxFKT",
        ),
        "php" => g(
            &["-r"],
            &[],
            &["-v", "--version", "-h"],
            &["-d", "-c"],
            "dc",
        ),
        "lua" | "luajit" => g(&["-e"], &[], &["-v"], &["-l"], "l"),
        "Rscript" => g(&["-e"], &[], &["--version"], &[], "WXQ"),
        _ => return None,
    })
}

impl Grammar {
    /// Where a code option starts in the short-option cluster `t` (an index
    /// into `t[1..]`).
    fn code_at(&self, t: &str) -> Option<usize> {
        let short_code: Vec<char> = self
            .code
            .iter()
            .filter(|c| c.len() == 2)
            .filter_map(|c| c.chars().nth(1))
            .collect();
        for (k, c) in t[1..].char_indices() {
            if short_code.contains(&c) {
                return Some(k);
            }
            if self.attached.contains(c) {
                return None;
            }
        }
        None
    }

    /// `None` when `args[i]` is not an option that gives code; otherwise the
    /// code it gives, when there is any: `-c CODE`, `--eval=CODE`,
    /// `-pe CODE`, `-e'CODE'`.
    fn code_option(&self, args: &[Word], i: usize) -> Option<Option<String>> {
        let t = args.get(i)?.text.as_str();
        let is_cluster = t.starts_with('-') && !t.starts_with("--") && t.len() > 1;
        let cluster_code = is_cluster.then(|| self.code_at(t)).flatten();
        let long_eq = t
            .split_once('=')
            .filter(|(o, _)| self.code.contains(o))
            .map(|(_, v)| v.to_string());
        if !(self.code.contains(&t) || long_eq.is_some() || cluster_code.is_some()) {
            return None;
        }
        let inline = cluster_code.map(|k| &t[k + 2..]).filter(|v| !v.is_empty());
        Some(
            long_eq
                .or(inline.map(str::to_string))
                .or_else(|| args.get(i + 1).map(|a| a.text.clone())),
        )
    }
}

/// Interpreters run code we do not analyse: WARN, except `--version`.
/// The seeds list `python -c` as a safe prefix; arbitrary python can write
/// files, so it is deliberately WARN here.
fn interpreter(w: &mut Walker<'_>, prog: &str, args: &[Word]) -> Option<Judge> {
    let g = grammar(prog)?;
    if args.len() == 1 && g.version.contains(&args[0].text.as_str()) {
        return Some(Judge::safe(
            Some(prog),
            &format!("{prog} {} only prints information", args[0].text),
        ));
    }
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let t = a.text.as_str();
        if let Some(body) = g.code_option(args, i) {
            let mut j = Judge::warn(
                Some(prog),
                &format!("runs {prog} code given on the command line"),
            );
            j.code_runner = true;
            if let Some(body) = body {
                interp::scan(w, prog, &body, &mut j);
            }
            return Some(j);
        }
        if g.module.contains(&t) {
            let m = args.get(i + 1).map(|m| m.text.as_str()).unwrap_or("?");
            return Some(Judge::warn(
                Some(prog),
                &format!("runs the {prog} module {m}"),
            ));
        }
        if is_stdin_path(t) {
            break;
        }
        if t.starts_with('-') {
            i += if g.with_arg.contains(&t) { 2 } else { 1 };
            continue;
        }
        let mut j = Judge::warn(
            Some(prog),
            &format!("runs the {prog} script {t} (project code)"),
        );
        j.code_runner = true;
        return Some(j);
    }
    let mut j = Judge::warn(
        Some(prog),
        &format!("{prog} reads code from its input and runs it"),
    );
    j.stdin_code = true;
    j.stdin_lang = Some(prog.to_string());
    Some(j)
}

/// `eval ARGS`: bash joins the words with spaces and runs the result.
fn eval(w: &mut Walker<'_>, args: &[Word]) -> Judge {
    if args.is_empty() {
        return Judge::safe(Some("eval"), "eval with nothing to run");
    }
    let joined = Word {
        text: args
            .iter()
            .map(|a| a.text.as_str())
            .collect::<Vec<_>>()
            .join(" "),
        dynamic: args.iter().any(|a| a.dynamic),
        guessable: args.iter().all(|a| a.guessable),
        ..Word::default()
    };
    code_string(w, "eval", "eval", &joined)
}

/// `trap 'code' SIGNAL`: the code runs later, so judge it now.
fn trap(w: &mut Walker<'_>, args: &[Word]) -> Judge {
    match args.first() {
        None => Judge::safe(Some("trap"), "trap lists signal handlers"),
        Some(a) if a.text.starts_with('-') || a.text.is_empty() || args.len() == 1 => {
            Judge::safe(Some("trap"), "trap lists or resets signal handlers")
        }
        Some(code) => code_string(w, "trap", "trap", code),
    }
}

/// `alias name='value'`: judge the value as code.
fn alias(w: &mut Walker<'_>, args: &[Word]) -> Judge {
    let mut j = Judge::safe(Some("alias"), "alias lists or defines aliases");
    for a in args {
        if let Some((_, value)) = a.text.split_once('=') {
            let code = Word {
                text: value.to_string(),
                ..a.clone()
            };
            let inner = code_string(w, "alias", "alias", &code);
            if let (true, Some(r)) = (inner.risk > BashRisk::Safe, inner.reasons.first()) {
                j.raise(inner.risk, r);
            }
        }
    }
    j
}

/// `cd DIR` is read-only, but `cd / && rm -rf *` must still be BLOCK: track
/// whether the working directory is now a protected one.
fn cd(w: &mut Walker<'_>, prog: &str, args: &[Word]) -> Judge {
    let target = args
        .iter()
        .find(|a| !(a.text.starts_with('-') && a.text.len() > 1) || a.text == "-");
    w.cwd_protected = match target {
        None => Some("~".to_string()),
        Some(t) if t.text == "-" || (t.dynamic && !t.guessable) => None,
        Some(t) => block::protected(&t.text, w.cwd_protected.as_deref()).map(|p| p.path),
    };
    Judge::safe(Some(prog), &format!("{prog} changes the working directory"))
}
