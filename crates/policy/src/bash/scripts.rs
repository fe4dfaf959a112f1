//! `sed` and `awk`: read-only unless their options or their script write
//! files or run commands.
//!
//! Owns a small, conservative reader of sed scripts (the `w`/`W`/`e`
//! commands and `s///w`, `s///e` flags) and of awk programs (`system`, pipes,
//! `print > file`). Anything the reader does not understand is WARN.

use super::BashRisk;
use super::command::Judge;
use super::words::Word;

/// Judges `sed ARGS`.
pub(crate) fn sed(args: &[Word]) -> Judge {
    let mut scripts: Vec<&str> = Vec::new();
    let mut first_operand_is_script = true;
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let t = a.text.as_str();
        i += 1;
        if t == "--" {
            break;
        }
        if let Some(long) = t.strip_prefix("--") {
            let (name, value) = long
                .split_once('=')
                .map_or((long, None), |(n, v)| (n, Some(v)));
            match name {
                "in-place" => return Judge::warn(Some("sed"), "sed --in-place edits files"),
                "expression" => {
                    first_operand_is_script = false;
                    match value {
                        Some(v) => scripts.push(v),
                        None => {
                            scripts.extend(args.get(i).map(|w| w.text.as_str()));
                            i += 1;
                        }
                    }
                }
                "file" => {
                    return Judge::warn(
                        Some("sed"),
                        "sed reads its script from a file, which is not analysed",
                    );
                }
                "line-length" if value.is_none() => i += 1,
                _ => {}
            }
            continue;
        }
        if !t.starts_with('-') || t == "-" {
            if first_operand_is_script {
                scripts.push(t);
                first_operand_is_script = false;
            }
            continue;
        }
        // A cluster such as `-ne 'p'` or `-i.bak`.
        let flags = &t[1..];
        for (k, c) in flags.char_indices() {
            let rest = &flags[k + c.len_utf8()..];
            match c {
                'i' => return Judge::warn(Some("sed"), "sed -i edits files in place"),
                'e' | 'f' | 'l' => {
                    let value = if rest.is_empty() {
                        i += 1;
                        args.get(i - 1).map(|w| w.text.as_str())
                    } else {
                        Some(rest)
                    };
                    if c == 'f' {
                        return Judge::warn(
                            Some("sed"),
                            "sed reads its script from a file, which is not analysed",
                        );
                    }
                    if c == 'e' {
                        first_operand_is_script = false;
                        scripts.extend(value);
                    }
                    break;
                }
                _ => {}
            }
        }
    }
    for s in scripts {
        if let Some(reason) = sed_script_risk(s) {
            return Judge::warn(Some("sed"), reason);
        }
    }
    Judge::safe(Some("sed"), "sed only prints a transformed copy")
}

/// Reads a sed script far enough to find commands that write or execute.
fn sed_script_risk(script: &str) -> Option<&'static str> {
    const WRITES: &str = "the sed script writes to a file (w)";
    const RUNS: &str = "the sed script runs a shell command (e)";
    const UNKNOWN: &str = "the sed script could not be fully understood";
    let c: Vec<char> = script.chars().collect();
    let mut i = 0;
    let skip_line = |i: &mut usize| {
        while *i < c.len() && c[*i] != '\n' {
            *i += 1;
        }
    };
    // Skips a delimited part (regex or replacement), honouring backslashes.
    let delimited = |i: &mut usize, d: char| -> bool {
        while *i < c.len() {
            if c[*i] == '\\' {
                *i += 2;
                continue;
            }
            if c[*i] == d {
                *i += 1;
                return true;
            }
            *i += 1;
        }
        false
    };
    while i < c.len() {
        while i < c.len() && (c[i].is_whitespace() || c[i] == ';') {
            i += 1;
        }
        if i >= c.len() {
            break;
        }
        // Addresses: numbers, $, /re/, \cREc, first~step, ranges, `!`.
        loop {
            while i < c.len()
                && (c[i].is_ascii_digit() || matches!(c[i], '$' | '~' | '+' | ',' | ' '))
            {
                i += 1;
            }
            if i < c.len() && c[i] == '/' {
                i += 1;
                if !delimited(&mut i, '/') {
                    return Some(UNKNOWN);
                }
                while i < c.len() && matches!(c[i], 'I' | 'M') {
                    i += 1;
                }
                continue;
            }
            if i + 1 < c.len() && c[i] == '\\' {
                let d = c[i + 1];
                i += 2;
                if !delimited(&mut i, d) {
                    return Some(UNKNOWN);
                }
                continue;
            }
            break;
        }
        while i < c.len() && (c[i] == '!' || c[i] == ' ') {
            i += 1;
        }
        let Some(&cmd) = c.get(i) else {
            return Some(UNKNOWN);
        };
        i += 1;
        match cmd {
            '{' | '}' => {}
            '#' | 'a' | 'i' | 'c' | 'r' | 'R' | ':' | 'b' | 't' | 'T' | 'v' => {
                // Text, file names to read, labels: to the end of the line
                // (GNU also ends labels and branches at `;`).
                if matches!(cmd, 'b' | 't' | 'T' | ':' | 'v') {
                    while i < c.len() && c[i] != '\n' && c[i] != ';' && c[i] != '}' {
                        i += 1;
                    }
                } else {
                    skip_line(&mut i);
                }
            }
            'w' | 'W' => return Some(WRITES),
            'e' => return Some(RUNS),
            's' => {
                let Some(&d) = c.get(i) else {
                    return Some(UNKNOWN);
                };
                i += 1;
                if !delimited(&mut i, d) || !delimited(&mut i, d) {
                    return Some(UNKNOWN);
                }
                while i < c.len() && !matches!(c[i], ';' | '\n' | '}') && !c[i].is_whitespace() {
                    match c[i] {
                        'w' => return Some(WRITES),
                        'e' => return Some(RUNS),
                        _ => i += 1,
                    }
                }
            }
            'y' => {
                let Some(&d) = c.get(i) else {
                    return Some(UNKNOWN);
                };
                i += 1;
                if !delimited(&mut i, d) || !delimited(&mut i, d) {
                    return Some(UNKNOWN);
                }
            }
            'q' | 'Q' | 'l' | 'L' => {
                while i < c.len() && (c[i].is_ascii_digit() || c[i] == ' ') {
                    i += 1;
                }
            }
            'p' | 'P' | 'd' | 'D' | 'n' | 'N' | 'g' | 'G' | 'h' | 'H' | 'x' | '=' | 'z' | 'F' => {}
            _ => return Some(UNKNOWN),
        }
    }
    None
}

/// Options of awk that are read-only; anything else is WARN.
const AWK_FLAGS: &[&str] = &[
    "-b",
    "-c",
    "-C",
    "-M",
    "-n",
    "-N",
    "-O",
    "-P",
    "-r",
    "-s",
    "-S",
    "-t",
    "--posix",
    "--traditional",
    "--characters-as-bytes",
    "--sandbox",
    "--bignum",
    "--use-lc-numeric",
];

/// Judges `awk ARGS` (also gawk, mawk, nawk).
pub(crate) fn awk(prog: &str, args: &[Word]) -> Judge {
    let mut programs: Vec<&str> = Vec::new();
    let mut need_program = true;
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let t = a.text.as_str();
        i += 1;
        if t == "--" {
            break;
        }
        if !t.starts_with('-') || t == "-" {
            if need_program {
                programs.push(t);
                need_program = false;
            }
            continue;
        }
        match t {
            "-F" | "-v" | "--field-separator" | "--assign" => i += 1,
            "-e" | "--source" => {
                need_program = false;
                programs.extend(args.get(i).map(|w| w.text.as_str()));
                i += 1;
            }
            _ if t.starts_with("-F") || t.starts_with("-v") => {}
            _ if t.starts_with("--source=") => {
                need_program = false;
                programs.extend(t.split_once('=').map(|(_, v)| v));
            }
            _ if AWK_FLAGS.contains(&t) => {}
            _ => {
                return Judge::warn(
                    Some(prog),
                    &format!("{prog} option {t} may load code or write files"),
                );
            }
        }
    }
    for p in programs {
        if let Some(reason) = awk_program_risk(p) {
            return Judge::warn(Some(prog), reason);
        }
    }
    let mut j = Judge::safe(Some(prog), &format!("{prog} only prints"));
    if need_program {
        j.raise(BashRisk::Warn, &format!("{prog} has no program to check"));
    }
    j
}

/// Finds what in an awk program runs commands or writes files.
fn awk_program_risk(p: &str) -> Option<&'static str> {
    if p.contains("system") {
        return Some("the awk program calls system(), which runs commands");
    }
    if p.contains('@') {
        return Some("the awk program loads extensions or files (@load/@include)");
    }
    let stripped = p.replace("||", "");
    if stripped.contains('|') {
        return Some("the awk program pipes to or from a command");
    }
    // `print … > file` / `printf … >> file`; a `>` before the print is a
    // comparison in a pattern or condition.
    for stmt in p.split([';', '{', '}', '\n']) {
        if let Some(pos) = stmt.find("print")
            && stmt[pos..].contains('>')
        {
            return Some("the awk program writes to a file with print >");
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sed_scripts() {
        assert_eq!(sed_script_risk("s/a/b/g"), None);
        assert_eq!(sed_script_risk("1,5p;10q"), None);
        assert_eq!(sed_script_risk("/foo/d"), None);
        assert!(sed_script_risk("s/a/b/w out").is_some());
        assert!(sed_script_risk("s/a/b/e").is_some());
        assert!(sed_script_risk("1e rm -rf x").is_some());
        assert!(sed_script_risk("w out.txt").is_some());
        assert!(sed_script_risk("/x/w out").is_some());
        assert_eq!(sed_script_risk("s/we/ew/"), None);
        assert_eq!(sed_script_risk("$!N;s/\\n/ /"), None);
    }

    /// Found by the bash_classify fuzz target: a flag cluster holding a character of more
    /// than one byte was sliced inside it (a panic), so `-աe` never reached its `e`.
    #[test]
    fn a_sed_flag_cluster_with_a_wide_character_is_read_whole() {
        let v = crate::bash::classify("sed -\u{561}e 'w out' f");
        assert_ne!(v.risk, crate::bash::BashRisk::Safe, "{v:?}");
    }

    #[test]
    fn awk_programs() {
        assert_eq!(awk_program_risk("{print $1}"), None);
        assert_eq!(awk_program_risk("$3 > 100 {print $1}"), None);
        assert_eq!(awk_program_risk("NR==1 || NR==2"), None);
        assert!(awk_program_risk("{print > \"out\"}").is_some());
        assert!(awk_program_risk("{system(\"rm x\")}").is_some());
        assert!(awk_program_risk("{print | \"sh\"}").is_some());
    }
}
