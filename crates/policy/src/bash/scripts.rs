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

const SED_WRITES: &str = "the sed script writes to a file (w)";
const SED_RUNS: &str = "the sed script runs a shell command (e)";
const SED_UNKNOWN: &str = "the sed script could not be fully understood";

/// Reads a sed script far enough to find commands that write or execute.
fn sed_script_risk(script: &str) -> Option<&'static str> {
    let mut r = SedReader {
        c: script.chars().collect(),
        i: 0,
    };
    while r.i < r.c.len() {
        while r.i < r.c.len() && (r.c[r.i].is_whitespace() || r.c[r.i] == ';') {
            r.i += 1;
        }
        if r.i >= r.c.len() {
            break;
        }
        if !r.addresses() {
            return Some(SED_UNKNOWN);
        }
        while r.i < r.c.len() && (r.c[r.i] == '!' || r.c[r.i] == ' ') {
            r.i += 1;
        }
        let Some(&cmd) = r.c.get(r.i) else {
            return Some(SED_UNKNOWN);
        };
        r.i += 1;
        if let Some(risk) = r.command(cmd) {
            return Some(risk);
        }
    }
    None
}

/// A sed script and the position of its reader.
struct SedReader {
    c: Vec<char>,
    i: usize,
}

impl SedReader {
    fn skip_line(&mut self) {
        while self.i < self.c.len() && self.c[self.i] != '\n' {
            self.i += 1;
        }
    }

    /// Skips a delimited part (regex or replacement), honouring backslashes;
    /// false when the delimiter never comes.
    fn delimited(&mut self, d: char) -> bool {
        let c = &self.c;
        while self.i < c.len() {
            if c[self.i] == '\\' {
                self.i += 2;
                continue;
            }
            if c[self.i] == d {
                self.i += 1;
                return true;
            }
            self.i += 1;
        }
        false
    }

    /// Skips the addresses: numbers, $, /re/, \cREc, first~step, ranges.
    /// False when a regex is not closed.
    fn addresses(&mut self) -> bool {
        loop {
            while self.i < self.c.len()
                && (self.c[self.i].is_ascii_digit()
                    || matches!(self.c[self.i], '$' | '~' | '+' | ',' | ' '))
            {
                self.i += 1;
            }
            if self.i < self.c.len() && self.c[self.i] == '/' {
                self.i += 1;
                if !self.delimited('/') {
                    return false;
                }
                while self.i < self.c.len() && matches!(self.c[self.i], 'I' | 'M') {
                    self.i += 1;
                }
                continue;
            }
            if self.i + 1 < self.c.len() && self.c[self.i] == '\\' {
                let d = self.c[self.i + 1];
                self.i += 2;
                if !self.delimited(d) {
                    return false;
                }
                continue;
            }
            return true;
        }
    }

    /// Reads the arguments of the command `cmd`; the risk it carries, or
    /// `SED_UNKNOWN` when it is not one the reader knows.
    fn command(&mut self, cmd: char) -> Option<&'static str> {
        match cmd {
            '{' | '}' => {}
            '#' | 'a' | 'i' | 'c' | 'r' | 'R' | ':' | 'b' | 't' | 'T' | 'v' => {
                // Text, file names to read, labels: to the end of the line
                // (GNU also ends labels and branches at `;`).
                if matches!(cmd, 'b' | 't' | 'T' | ':' | 'v') {
                    while self.i < self.c.len() && !matches!(self.c[self.i], '\n' | ';' | '}') {
                        self.i += 1;
                    }
                } else {
                    self.skip_line();
                }
            }
            'w' | 'W' => return Some(SED_WRITES),
            'e' => return Some(SED_RUNS),
            's' => {
                if !self.two_parts() {
                    return Some(SED_UNKNOWN);
                }
                while self.i < self.c.len()
                    && !matches!(self.c[self.i], ';' | '\n' | '}')
                    && !self.c[self.i].is_whitespace()
                {
                    match self.c[self.i] {
                        'w' => return Some(SED_WRITES),
                        'e' => return Some(SED_RUNS),
                        _ => self.i += 1,
                    }
                }
            }
            'y' => {
                if !self.two_parts() {
                    return Some(SED_UNKNOWN);
                }
            }
            'q' | 'Q' | 'l' | 'L' => {
                while self.i < self.c.len()
                    && (self.c[self.i].is_ascii_digit() || self.c[self.i] == ' ')
                {
                    self.i += 1;
                }
            }
            'p' | 'P' | 'd' | 'D' | 'n' | 'N' | 'g' | 'G' | 'h' | 'H' | 'x' | '=' | 'z' | 'F' => {}
            _ => return Some(SED_UNKNOWN),
        }
        None
    }

    /// Skips the two delimited parts of `s/re/new/` or `y/abc/xyz/`, the
    /// delimiter being the next character; false when one is not closed.
    fn two_parts(&mut self) -> bool {
        let Some(&d) = self.c.get(self.i) else {
            return false;
        };
        self.i += 1;
        self.delimited(d) && self.delimited(d)
    }
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
