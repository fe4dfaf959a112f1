//! `find`: lists files (SAFE) unless an action writes, deletes or runs a
//! command. Each `-exec`/`-execdir`/`-ok` command is judged as its own
//! segment; `-delete` (or `-exec rm`) under a protected root with no filter
//! narrowing it is `rm -rf` of that root.

use super::command::{Judge, judge_at};
use super::walk::Walker;
use super::words::Word;
use super::{BashRisk, block};

/// `find` tests that narrow what `-delete` hits; without one, `find / -delete`
/// is `rm -rf /`.
const FIND_FILTERS: &[&str] = &[
    "-name",
    "-iname",
    "-path",
    "-ipath",
    "-wholename",
    "-iwholename",
    "-regex",
    "-iregex",
    "-newer",
    "-mtime",
    "-mmin",
    "-atime",
    "-amin",
    "-ctime",
    "-cmin",
    "-size",
    "-user",
    "-group",
    "-perm",
    "-inum",
    "-links",
    "-empty",
    "-lname",
    "-ilname",
    "-samefile",
    "-uid",
    "-gid",
];

/// `find` lists files (SAFE) unless an action writes, deletes or runs a
/// command; each `-exec` command is judged as its own segment.
pub(super) fn find(w: &mut Walker<'_>, args: &[Word], depth: usize) -> Judge {
    let mut j = Judge::safe(Some("find"), "find only lists files");
    let mut i = 0;
    // Leading -H -L -P -D … -O… options.
    while let Some(a) = args.get(i) {
        match a.text.as_str() {
            "-H" | "-L" | "-P" => i += 1,
            "-D" => i += 2,
            t if t.starts_with("-O") => i += 1,
            _ => break,
        }
    }
    if args.iter().any(|a| a.dynamic) {
        j.raise(
            BashRisk::Warn,
            "an argument of find comes from an expansion, so its actions cannot be checked",
        );
    }
    let mut roots: Vec<&Word> = Vec::new();
    while let Some(a) = args.get(i) {
        if a.text.starts_with('-') || matches!(a.text.as_str(), "(" | "!" | ",") {
            break;
        }
        roots.push(a);
        i += 1;
    }
    let mut filtered = false;
    let mut deletes = false;
    while let Some(a) = args.get(i) {
        let t = a.text.as_str();
        i += 1;
        match t {
            "-exec" | "-execdir" | "-ok" | "-okdir" => {
                let start = i;
                while i < args.len() && !matches!(args[i].text.as_str(), ";" | "+") {
                    i += 1;
                }
                let cmd = &args[start..i.min(args.len())];
                i += 1;
                let inner = judge_at(w, cmd, depth);
                let prog = inner.program.clone().unwrap_or_default();
                deletes |= matches!(prog.as_str(), "rm" | "shred" | "unlink" | "rmdir");
                j.raise(
                    BashRisk::Safe,
                    &format!("find {t} runs {prog} for each file (judged on its own)"),
                );
                let text: Vec<&str> = cmd.iter().map(|c| c.text.as_str()).collect();
                w.push_judged(&text.join(" "), inner);
            }
            "-delete" => {
                deletes = true;
                j.raise(BashRisk::Warn, "find -delete deletes the files it finds");
            }
            "-fprint" | "-fprint0" | "-fprintf" | "-fls" => {
                j.raise(BashRisk::Warn, &format!("find {t} writes to a file"));
            }
            _ if FIND_FILTERS.contains(&t) => filtered = true,
            _ => {}
        }
    }
    if deletes && !filtered {
        let cwd = w.cwd_protected.clone();
        let hit = if roots.is_empty() {
            block::protected(".", cwd.as_deref())
        } else {
            roots
                .iter()
                .filter(|r| !r.dynamic || r.guessable)
                .find_map(|r| block::protected(&r.text, cwd.as_deref()))
        };
        if let Some(p) = hit {
            j.raise(
                BashRisk::Block,
                &format!("find deletes everything under {} ({})", p.path, p.what),
            );
        }
    }
    j
}
