//! Shell builtins and printers with their own rules: `echo`/`printf` (whose
//! output may be piped into a shell, so it is kept), `read`/`mapfile`, `let`
//! (arithmetic can run `a[$(cmd)]`), `man` and `less` (options that start
//! other programs).

use super::command::Judge;
use super::defs::is_dangerous_var;
use super::rules::{safe, texts, warn};
use super::words::{self, Word};

/// `echo`/`printf` (whose output may be piped into a shell) and the
/// builtins that assign variables or evaluate arithmetic.
pub(super) fn builtin(prog: &str, args: &[Word]) -> Option<Judge> {
    let t = texts(args);
    let all_static = args.iter().all(|a| !a.dynamic);
    let j = match prog {
        "echo" => {
            let mut j = safe(prog, "echo only prints");
            if all_static {
                let skip = t
                    .iter()
                    .take_while(|a| {
                        a.len() > 1
                            && a.starts_with('-')
                            && a[1..].chars().all(|c| "neE".contains(c))
                    })
                    .count();
                j.output = Some(t[skip..].join(" "));
            }
            j
        }
        "printf" => {
            if t.iter().any(|a| a.starts_with("-v")) {
                return Some(warn(prog, "printf -v assigns a shell variable"));
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
        "read" | "mapfile" | "readarray" => match t.iter().find(|a| is_dangerous_var(a)) {
            Some(v) => warn(
                prog,
                &format!("{prog} sets {v}, which changes what programs run or load"),
            ),
            None if prog == "read" => safe(prog, "read only reads a line into a variable"),
            None => safe(prog, &format!("{prog} only reads lines into an array")),
        },
        // Arithmetic evaluates subscripts such as `a[$(cmd)]`.
        "let" => {
            if t.iter().any(|a| a.contains('$') || a.contains('`')) || !all_static {
                warn(
                    prog,
                    "let evaluates arithmetic that can run command substitutions",
                )
            } else {
                safe(prog, "let only does arithmetic")
            }
        }
        "man" => {
            if t.iter().any(|a| a.starts_with('-')) {
                warn(prog, "man options can choose the pager or browser it runs")
            } else {
                safe(prog, "man only shows manual pages")
            }
        }
        "less" => {
            let runs = t.iter().any(|a| {
                a.starts_with('+')
                    || matches!(*a, "-o" | "-O" | "--log-file" | "--LOG-FILE")
                    || a.starts_with("--log-file=")
                    || a.starts_with("--LOG-FILE=")
                    || a.starts_with("-o")
                    || a.starts_with("-O")
            });
            if runs {
                warn(prog, "less options can write a log file or run commands")
            } else {
                safe(prog, "less only reads")
            }
        }
        _ => return None,
    };
    Some(j)
}
