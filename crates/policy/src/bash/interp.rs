//! What interpreter code given on the command line (`python -c`, `perl -e`,
//! `node -e`, `ruby -e`) or in a here-doc (`python3 - <<EOF`) runs.
//!
//! Owns a deliberately shallow reader: it finds calls that hand a string to a
//! shell (`os.system`, `subprocess.run`, `system`, `execSync`, backticks …)
//! and judges that string as shell code, and calls that delete a tree
//! (`shutil.rmtree`, `FileUtils.rm_rf`, `fs.rmSync`, `rmtree` …) and checks
//! their literal target. It never proves code read-only: the interpreter
//! itself stays at least WARN.

use super::BashRisk;
use super::block;
use super::command::Judge;
use super::walk::Walker;

/// Calls whose string arguments run as shell commands.
const SHELL_CALLS: &[&str] = &[
    "os.system",
    "os.popen",
    "os.execl",
    "os.execlp",
    "os.execv",
    "os.execvp",
    "os.spawnl",
    "subprocess.run",
    "subprocess.call",
    "subprocess.check_call",
    "subprocess.check_output",
    "subprocess.Popen",
    "subprocess.getoutput",
    "subprocess.getstatusoutput",
    "pty.spawn",
    "commands.getoutput",
    "system",
    "exec",
    "execSync",
    "execFileSync",
    "spawnSync",
    "spawn",
    "execFile",
    "popen",
    "IO.popen",
    "Open3.capture2",
    "Open3.capture3",
    "Open3.popen3",
    "qx",
    "shell_exec",
    "passthru",
    "proc_open",
];

/// Calls that delete a directory tree given as their first argument.
const TREE_DELETES: &[&str] = &[
    "shutil.rmtree",
    "rmtree",
    "remove_tree",
    "rm_rf",
    "rm_r",
    "remove_dir",
    "remove_entry_secure",
    "rmSync",
    "rmdirSync",
    "fs.rm",
    "fs.rmdir",
    "removedirs",
];

/// Expressions that evaluate to the home directory.
const HOME_EXPRS: &[&str] = &[
    "Dir.home",
    "Path.home()",
    "os.homedir()",
    "expanduser",
    "ENV['HOME']",
    "ENV[\"HOME\"]",
    "$ENV{HOME}",
    "$ENV{'HOME'}",
    "environ['HOME']",
    "environ[\"HOME\"]",
    "env.HOME",
];

/// Scans `code` (in the language of `prog`) and judges what it would run:
/// shell strings become their own segments; a tree deletion of a protected
/// path raises `j` to BLOCK.
pub(crate) fn scan(w: &mut Walker<'_>, prog: &str, code: &str, j: &mut Judge) {
    for (name, literals) in calls(code, SHELL_CALLS) {
        if literals.is_empty() {
            continue;
        }
        j.raise(
            BashRisk::Warn,
            &format!("the {prog} code runs shell commands ({name})"),
        );
        w.walk_source(&literals.join(" "));
    }
    for (name, literals) in calls(code, TREE_DELETES) {
        // `rm_rf(Dir.home)`, `rmtree(os.path.expanduser("~"))`.
        let after = code.split(name).nth(1).unwrap_or("");
        let head: String = after.chars().take(60).collect();
        let home = HOME_EXPRS.iter().any(|h| head.contains(h));
        let Some(target) = literals.first().map(String::as_str).or(home.then_some("~")) else {
            continue;
        };
        if let Some(p) = block::protected(target, w.cwd_protected.as_deref()) {
            j.raise(
                BashRisk::Block,
                &format!(
                    "the {prog} code deletes {} ({}) with {name}",
                    p.path, p.what
                ),
            );
        }
    }
    // Perl and Ruby run backtick strings (and `%x(…)`) as shell commands.
    if prog.starts_with("perl") || prog.starts_with("ruby") {
        for inner in backticks(code) {
            j.raise(
                BashRisk::Warn,
                &format!("the {prog} code runs shell commands (backticks)"),
            );
            w.walk_source(&inner);
        }
    }
}

/// Every call of one of `names` in `code`, with the string literals of its
/// argument list (a list `["rm", "-rf", "/"]` gives each element).
fn calls(code: &str, names: &[&'static str]) -> Vec<(&'static str, Vec<String>)> {
    let mut out = Vec::new();
    // `os.system(` is also found as `system(`: one argument list, one call.
    let mut seen: Vec<usize> = Vec::new();
    for name in names {
        let mut from = 0;
        while let Some(pos) = code[from..].find(name) {
            let start = from + pos;
            from = start + name.len();
            // `system` inside `filesystem` is not a call of `system`.
            let before = code[..start].chars().next_back();
            let after = code[from..].chars().next();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_')
                || after.is_some_and(|c| c.is_alphanumeric() || c == '_')
                || seen.contains(&from)
            {
                continue;
            }
            seen.push(from);
            out.push((*name, literals_after(&code[from..])));
        }
    }
    out
}

/// The string literals of an argument list that starts at `rest`
/// (`("rm -rf /")`, ` "rm -rf /";`, `(["rm", "-rf", "/"], …)`, `{rm -rf /}`).
fn literals_after(rest: &str) -> Vec<String> {
    let chars: Vec<char> = rest.chars().collect();
    let mut i = 0;
    let mut out = Vec::new();
    let mut depth = 0i32;
    while i < chars.len() && out.len() < 64 {
        let c = chars[i];
        match c {
            '(' | '[' | '{' => {
                // `qx{…}` / `qx(…)`: the body is the command.
                depth += 1;
                i += 1;
            }
            ')' | ']' | '}' => {
                depth -= 1;
                i += 1;
                if depth <= 0 {
                    break;
                }
            }
            '"' | '\'' | '`' => {
                let mut s = String::new();
                i += 1;
                while i < chars.len() && chars[i] != c {
                    if chars[i] == '\\' && i + 1 < chars.len() {
                        i += 1;
                    }
                    s.push(chars[i]);
                    i += 1;
                }
                i += 1;
                out.push(s);
            }
            ';' | '\n' if depth <= 0 => break,
            _ => i += 1,
        }
    }
    out
}

/// The bodies of `` `…` `` strings.
fn backticks(code: &str) -> Vec<String> {
    code.split('`')
        .skip(1)
        .step_by(2)
        .filter(|s| !s.trim().is_empty())
        .map(str::to_string)
        .take(16)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_literals_of_calls() {
        let c = calls(r#"import os; os.system("rm -rf /")"#, SHELL_CALLS);
        assert_eq!(c, vec![("os.system", vec!["rm -rf /".to_string()])]);
        let c = calls(
            r#"subprocess.run(["rm", "-rf", "/"], check=True)"#,
            SHELL_CALLS,
        );
        assert_eq!(c[0].1, ["rm", "-rf", "/"]);
        assert!(calls("filesystem(x)", SHELL_CALLS).is_empty());
        assert_eq!(calls("system 'ls'; 1", SHELL_CALLS)[0].1, ["ls"]);
    }
}
