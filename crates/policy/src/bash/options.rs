//! Known read-only options per program, read the way the program's own
//! option parser reads them.
//!
//! Owns the notation of the allowlist (`Spec`; the lists themselves are in
//! `option_lists`) and a getopt-style matcher: bundled short options
//! (`-rnk3`), attached and detached arguments (`-oFILE`, `-o FILE`, `--opt=value`, `--opt value`), numbers as
//! options (`head -5`) and `--` ending the options. A long option counts only
//! when written out in full: GNU getopt reads any unambiguous prefix
//! (`--outp`) as the option it starts, and which option that is depends on the
//! program's whole option set, which this table deliberately does not hold,
//! so an abbreviation is an unknown option. Whatever is not on a program's
//! list makes it WARN. What an operand means (the files `uniq a b` writes,
//! `dd of=`) stays with the program's judge in `rules`.

use super::option_lists::SPECS;
use super::words::Word;

/// The read-only options of one program, in getopt notation.
pub(crate) struct Spec {
    /// Short options: a letter, then `:` when it takes an argument (the rest
    /// of the word, or the next word) or `::` when its argument can only be
    /// attached (`-w5`).
    pub short: &'static str,
    /// Long options, space-separated: `name` takes no argument, `name=` takes
    /// one (`--name=V` or `--name V`), `name?` takes one only as `--name=V`.
    /// When a name appears twice, the first entry wins.
    pub long: &'static str,
    /// `-5`, `-20` are options (`head -5`, `git log -3`).
    pub numbers: bool,
}

pub(super) const fn spec(short: &'static str, long: &'static str) -> Spec {
    Spec {
        short,
        long,
        numbers: false,
    }
}

pub(super) const fn numeric(short: &'static str, long: &'static str) -> Spec {
    Spec {
        short,
        long,
        numbers: true,
    }
}

/// Every program may print its help or version.
const COMMON_LONG: &str = "help version";
/// The read-only options of `prog`, when it has a list.
pub(crate) fn spec_of(prog: &str) -> Option<&'static Spec> {
    SPECS
        .iter()
        .find(|(names, _)| names.contains(&prog))
        .map(|(_, s)| s)
}

/// Where the options of a command end.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Operands {
    /// GNU programs take options anywhere before `--`.
    Anywhere,
    /// Wrappers (`xargs`, `time`, `env`) stop at the first operand: it is the
    /// command they run.
    EndOptions,
}

/// The outcome of reading a command's options against a `Spec`.
pub(crate) struct Scan {
    /// The first option that is not on the list, as written (`--outp`, `-o`).
    pub unknown: Option<String>,
    /// Index of the first operand when options end there
    /// (`Operands::EndOptions`), else `args.len()`.
    pub first_operand: usize,
}

/// Reads `args` as the program's option parser does and finds the first
/// option `spec` does not list. A word whose value is decided at run time
/// and could not be guessed is taken as an operand: the judge of a program
/// with options that write decides separately what such a word means.
pub(crate) fn scan(spec: &Spec, args: &[Word], mode: Operands) -> Scan {
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let t = a.text.as_str();
        i += 1;
        if t == "--" {
            return Scan {
                unknown: None,
                first_operand: if mode == Operands::EndOptions {
                    i
                } else {
                    args.len()
                },
            };
        }
        let unguessed = a.dynamic && !a.guessable;
        if !t.starts_with('-') || t == "-" || unguessed {
            if mode == Operands::EndOptions {
                return Scan {
                    unknown: None,
                    first_operand: i - 1,
                };
            }
            continue;
        }
        let next = args.get(i).map(|w| w.text.as_str());
        let step = match t.strip_prefix("--") {
            Some(long) => long_option(spec, long, next),
            None => short_cluster(spec, &t[1..]),
        };
        match step {
            Ok(extra) => i += extra,
            Err(bad) => {
                return Scan {
                    unknown: Some(bad),
                    first_operand: args.len(),
                };
            }
        }
    }
    Scan {
        unknown: None,
        first_operand: args.len(),
    }
}

/// `--name`, `--name=value`, `--name value`: how many following words it
/// consumes, or the option as written when it is not on the list.
fn long_option(spec: &Spec, long: &str, next: Option<&str>) -> Result<usize, String> {
    let (name, attached) = match long.split_once('=') {
        Some((n, _)) => (n, true),
        None => (long, false),
    };
    let entry = spec
        .long
        .split_whitespace()
        .chain(COMMON_LONG.split_whitespace())
        .find(|e| e.trim_end_matches(['=', '?']) == name);
    match entry {
        Some(e) if e.ends_with('=') => Ok(usize::from(!attached && next.is_some())),
        Some(e) if e.ends_with('?') => Ok(0),
        // getopt refuses a value given to an option without one.
        Some(_) if !attached => Ok(0),
        _ => Err(format!("--{name}")),
    }
}

/// `-abc`, `-k3`, `-o FILE`, `-5`: how many following words it consumes, or
/// the first letter that is not on the list.
fn short_cluster(spec: &Spec, flags: &str) -> Result<usize, String> {
    if spec.numbers && flags.chars().all(|c| c.is_ascii_digit()) {
        return Ok(0);
    }
    for (k, c) in flags.char_indices() {
        let Some(pos) = spec.short.find(c).filter(|_| c != ':') else {
            return Err(format!("-{c}"));
        };
        let after = &spec.short[pos + c.len_utf8()..];
        if after.starts_with("::") {
            return Ok(0);
        }
        if after.starts_with(':') {
            let attached = k + c.len_utf8() < flags.len();
            return Ok(usize::from(!attached));
        }
    }
    Ok(0)
}

/// The reason a program is not SAFE because of `option`.
pub(crate) fn unknown_reason(prog: &str, option: &str) -> String {
    if option.starts_with("--") {
        format!(
            "{prog} option {option} is not on its list of read-only options (an abbreviation \
             is read as whichever long option it starts)"
        )
    } else {
        format!("{prog} option {option} is not on its list of read-only options")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<Word> {
        s.split_whitespace().map(Word::literal).collect()
    }

    fn unknown(prog: &str, args: &str) -> Option<String> {
        let spec = spec_of(prog).unwrap_or(&Spec {
            short: "",
            long: "",
            numbers: false,
        });
        scan(spec, &words(args), Operands::Anywhere).unknown
    }

    #[test]
    fn options_are_read_as_getopt_reads_them() {
        assert_eq!(unknown("sort", "-rnk3 f"), None);
        assert_eq!(unknown("sort", "-k 2,2 -t: f"), None);
        // `-t` takes the next word, so `-o` there is its value.
        assert_eq!(unknown("sort", "-t -o f"), None);
        assert_eq!(unknown("sort", "-uo x f"), Some("-o".into()));
        assert_eq!(unknown("sort", "--outp=x f"), Some("--outp".into()));
        assert_eq!(unknown("sort", "--key 2 f"), None);
        assert_eq!(unknown("sort", "f -- -o"), None);
        assert_eq!(unknown("sort", "f -o x"), Some("-o".into()));
        assert_eq!(unknown("head", "-5 f"), None);
        assert_eq!(unknown("cat", "-5 f"), Some("-5".into()));
        assert_eq!(unknown("ls", "--color=auto -la"), None);
        // An option without an argument given one is refused by getopt.
        assert_eq!(unknown("ls", "--all=x"), Some("--all".into()));
        assert_eq!(unknown("whoami", "--help"), None);
        assert_eq!(unknown("whoami", "-x"), Some("-x".into()));
    }

    #[test]
    fn wrappers_stop_at_the_first_operand() {
        let spec = Spec {
            short: "0a:I:",
            long: "arg-file= null",
            numbers: false,
        };
        let s = scan(&spec, &words("-0 -a f rm -rf x"), Operands::EndOptions);
        assert_eq!((s.unknown, s.first_operand), (None, 3));
        let s = scan(&spec, &words("--arg f rm"), Operands::EndOptions);
        assert_eq!(s.unknown, Some("--arg".into()));
        let s = scan(&spec, &words("-- rm"), Operands::EndOptions);
        assert_eq!(s.first_operand, 1);
    }
}
