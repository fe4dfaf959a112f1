//! Shell builtins and printers with their own rules: `echo`/`printf` (whose
//! output may be piped into a shell, so it is kept), `read`/`mapfile`
//! (`mapfile -C` runs a callback), arithmetic (`let`, `$((x))`, `(( x ))`,
//! `test -v 'a[i]'`: bash evaluates a variable's value as an expression, and
//! an array subscript in it, `a[$(cmd)]`, runs the command), `man` and
//! `less` (options that start other programs).

use super::command::Judge;
use super::defs::is_dangerous_var;
use super::option_lists::{MAPFILE, READ};
use super::options::{self, Operands};
use super::rules::{safe, texts, warn};
use super::words::{self, Word};

/// `echo`/`printf` (whose output may be piped into a shell) and the
/// builtins that assign variables or evaluate arithmetic.
pub(super) fn builtin(prog: &str, args: &[Word]) -> Option<Judge> {
    let t = texts(args);
    let all_static = args.iter().all(|a| !a.dynamic);
    let j = match prog {
        "echo" => echo(&t, all_static),
        "printf" => printf(&t, all_static),
        "read" | "mapfile" | "readarray" => read(prog, args, &t),
        "test" | "[" => match test_subscript(&t) {
            Some(reason) => warn(prog, &reason),
            None => safe(prog, &format!("{prog} only tests a condition")),
        },
        // Arithmetic evaluates subscripts such as `a[$(cmd)]`.
        "let" => {
            let read = t.iter().find_map(|a| arithmetic_reads(a));
            match read {
                _ if !all_static || t.iter().any(|a| a.contains('`')) => warn(
                    prog,
                    "let evaluates arithmetic that can run command substitutions",
                ),
                Some(name) => warn(prog, &arithmetic_reason(name)),
                None => safe(prog, "let only does arithmetic"),
            }
        }
        "man" => {
            if t.iter().any(|a| a.starts_with('-')) {
                warn(prog, "man options can choose the pager or browser it runs")
            } else {
                safe(prog, "man only shows manual pages")
            }
        }
        "less" => less(args, &t),
        _ => return None,
    };
    Some(j)
}

/// `echo` prints; with static words the verdict carries what it prints.
fn echo(t: &[&str], all_static: bool) -> Judge {
    let mut j = safe("echo", "echo only prints");
    if all_static {
        let skip = t
            .iter()
            .take_while(|a| {
                a.len() > 1 && a.starts_with('-') && a[1..].chars().all(|c| "neE".contains(c))
            })
            .count();
        j.output = Some(t[skip..].join(" "));
    }
    j
}

/// `printf` prints (what, when static) unless `-v` assigns a variable.
fn printf(t: &[&str], all_static: bool) -> Judge {
    let prog = "printf";
    if t.iter().any(|a| a.starts_with("-v")) {
        return warn(prog, "printf -v assigns a shell variable");
    }
    let mut j = safe(prog, "printf only prints");
    if all_static && let Some((fmt, rest)) = t.split_first() {
        let mut s = words::decode_c_escapes(fmt);
        for r in rest {
            s = s.replacen("%s", r, 1);
        }
        j.output = Some(s);
    }
    j
}

/// `read`, `mapfile`, `readarray`: read into variables, which must not be
/// ones that change what programs run.
fn read(prog: &str, args: &[Word], t: &[&str]) -> Judge {
    let spec = if prog == "read" { &READ } else { &MAPFILE };
    if let Some(bad) = options::scan(spec, args, Operands::Anywhere).unknown {
        let why = if bad == "-C" {
            format!("{prog} -C runs a callback command for the lines it reads")
        } else {
            options::unknown_reason(prog, &bad)
        };
        return warn(prog, &why);
    }
    match t.iter().find(|a| is_dangerous_var(a)) {
        Some(v) => warn(
            prog,
            &format!("{prog} sets {v}, which changes what programs run or load"),
        ),
        None if prog == "read" => safe(prog, "read only reads a line into a variable"),
        None => safe(prog, &format!("{prog} only reads lines into an array")),
    }
}

/// `less` reads, unless an option writes a log file or runs commands.
fn less(args: &[Word], t: &[&str]) -> Judge {
    let prog = "less";
    let runs = t.iter().any(|a| {
        a.starts_with('+')
            || matches!(*a, "-o" | "-O" | "--log-file" | "--LOG-FILE")
            || a.starts_with("--log-file=")
            || a.starts_with("--LOG-FILE=")
            || a.starts_with("-o")
            || a.starts_with("-O")
    });
    let unknown = options::spec_of(prog)
        .and_then(|spec| options::scan(spec, args, Operands::Anywhere).unknown);
    match unknown {
        _ if runs => warn(prog, "less options can write a log file or run commands"),
        Some(bad) => warn(prog, &options::unknown_reason(prog, &bad)),
        None => safe(prog, "less only reads"),
    }
}

/// The first variable an arithmetic expression reads, if any: bash evaluates
/// its value as an expression in turn, so a value such as `a[$(cmd)]` runs
/// `cmd`. A name assigned with `=` is not read; `$x` and `${x}` are.
pub(crate) fn arithmetic_reads(expr: &str) -> Option<&str> {
    let bytes = expr.as_bytes();
    let mut k = 0;
    while k < bytes.len() {
        let c = bytes[k];
        if c.is_ascii_digit() {
            // A number, including `0x1f` and `16#ff`.
            while k < bytes.len() && (bytes[k].is_ascii_alphanumeric() || bytes[k] == b'#') {
                k += 1;
            }
            continue;
        }
        if c.is_ascii_alphabetic() || c == b'_' {
            let start = k;
            while k < bytes.len() && (bytes[k].is_ascii_alphanumeric() || bytes[k] == b'_') {
                k += 1;
            }
            let rest = expr[k..].trim_start();
            let assigned = rest.starts_with('=') && !rest.starts_with("==");
            if !assigned {
                return Some(&expr[start..k]);
            }
            continue;
        }
        k += 1;
    }
    None
}

/// Why reading `name` in arithmetic is not SAFE.
pub(crate) fn arithmetic_reason(name: &str) -> String {
    format!(
        "arithmetic evaluates the value of {name} as an expression, which runs any command \
         substitution in an array subscript such as a[$(cmd)]"
    )
}

/// `test -v 'a[SUBSCRIPT]'` evaluates the subscript as arithmetic.
pub(crate) fn test_subscript(t: &[&str]) -> Option<String> {
    t.windows(2)
        .filter(|w| w[0] == "-v")
        .find_map(|w| subscript_risk(w[1]))
}

/// The reason a `-v` operand is not SAFE: its subscript is evaluated as
/// arithmetic, unless it is a plain number or `@`/`*`.
pub(crate) fn subscript_risk(operand: &str) -> Option<String> {
    let (_, sub) = operand.split_once('[')?;
    let sub = sub.strip_suffix(']').unwrap_or(sub);
    let plain = sub == "@" || sub == "*" || sub.chars().all(|c| c.is_ascii_digit());
    (!plain).then(|| {
        format!("-v {operand} evaluates the subscript as arithmetic, which can run commands")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_reads_variables_not_numbers_or_targets() {
        assert_eq!(arithmetic_reads("1+2"), None);
        assert_eq!(arithmetic_reads("x=1+2"), None);
        assert_eq!(arithmetic_reads("0x1f + 16#ff"), None);
        assert_eq!(arithmetic_reads("y=x+1"), Some("x"));
        assert_eq!(arithmetic_reads("x == 1"), Some("x"));
        assert_eq!(arithmetic_reads(" $x "), Some("x"));
        assert_eq!(arithmetic_reads("i++"), Some("i"));
    }
}
