//! The BLOCK rules: programs and redirections that destroy the system or a
//! disk.
//!
//! Owns protected-path resolution (`/`, `~`, `$HOME`, system directories,
//! `..` spellings), raw-device detection, and the per-program destructive
//! patterns (`rm -r`, `mkfs`, `dd of=/dev/…`, `chmod -R … /`, power-off …).
//! Code piped into shells and fork bombs are structural, so `walk` links
//! those; `sudo rm` lives with the `sudo` wrapper.

use super::BashRisk;
use super::command::normalize_program;
use super::patterns;
use super::words::Word;

/// Top-level directories whose loss breaks the machine or someone's data.
const SYSTEM_DIRS: &[&str] = &[
    "bin",
    "boot",
    "dev",
    "etc",
    "home",
    "lib",
    "lib32",
    "lib64",
    "libx32",
    "media",
    "mnt",
    "opt",
    "proc",
    "root",
    "run",
    "sbin",
    "srv",
    "sys",
    "usr",
    "var",
    "snap",
    "nix",
    "Users",
    "System",
    "Library",
    "Applications",
    "Volumes",
    "private",
];

/// Second-level system directories.
const SYSTEM_SUBDIRS: &[(&str, &[&str])] = &[
    (
        "usr",
        &[
            "bin", "sbin", "lib", "lib32", "lib64", "libexec", "local", "share", "include", "src",
        ],
    ),
    (
        "var",
        &[
            "lib", "log", "spool", "mail", "cache", "db", "backups", "opt", "www", "empty",
        ],
    ),
    ("private", &["etc", "var", "tmp"]),
];

/// Directories whose files the system needs: truncating one is BLOCK.
const SYSTEM_FILE_DIRS: &[&str] = &[
    "etc", "boot", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "usr", "sys", "proc",
];

/// Device files it is harmless to write to.
const BENIGN_DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/stdout",
    "/dev/stderr",
    "/dev/stdin",
    "/dev/tty",
];

/// A path whose recursive deletion (or chmod) is BLOCK.
#[derive(Debug, Clone)]
pub(crate) struct Protected {
    /// The resolved path, `~` for the home directory.
    pub path: String,
    /// What it is, for the reason ("the root directory").
    pub what: &'static str,
}

/// Collapses `//`, `.` and `..` without touching the file system.
pub(crate) fn lexical_normalize(path: &str) -> String {
    let absolute = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for c in path.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() && !absolute {
                    parts.push("..");
                }
            }
            _ => parts.push(c),
        }
    }
    let joined = parts.join("/");
    if absolute {
        format!("/{joined}")
    } else {
        joined
    }
}

/// Resolves `raw` to absolute components (`~` becomes `home/~`). `None` for a
/// relative path when the working directory is unknown.
fn components(raw: &str, cwd: Option<&str>) -> Option<Vec<String>> {
    let (mut base, rest): (Vec<String>, &str) = if let Some(r) = raw.strip_prefix('/') {
        (Vec::new(), r)
    } else if raw == "~" || raw.starts_with("~/") {
        (vec!["home".into(), "~".into()], &raw[1..])
    } else if let Some(r) = raw.strip_prefix('~') {
        let (user, rest) = r.split_once('/').unwrap_or((r, ""));
        let home = if user == "root" {
            vec!["root".to_string()]
        } else {
            vec!["home".to_string(), user.to_string()]
        };
        (home, rest)
    } else {
        (components(cwd?, None)?, raw)
    };
    for c in rest.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                base.pop();
            }
            _ => base.push(c.to_string()),
        }
    }
    Some(base)
}

fn display(comps: &[String]) -> String {
    match comps {
        [h, t, rest @ ..] if h == "home" && t == "~" => {
            let mut s = "~".to_string();
            for r in rest {
                s.push('/');
                s.push_str(r);
            }
            s
        }
        _ => format!("/{}", comps.join("/")),
    }
}

fn is_glob_only(c: &str) -> bool {
    c.contains(['*', '?']) && c.chars().all(|ch| matches!(ch, '*' | '?' | '.'))
}

/// Is `raw` (or everything inside it) a directory whose deletion destroys
/// the system or a home? `cwd` is the protected directory a previous `cd`
/// moved into, if any.
pub(crate) fn protected(raw: &str, cwd: Option<&str>) -> Option<Protected> {
    let raw = raw.trim();
    if raw.is_empty() {
        return None;
    }
    let Some(mut comps) = components(raw, cwd) else {
        // Relative to an unknown directory: only `..`, `../..` … escape it.
        let parts: Vec<&str> = raw
            .split('/')
            .filter(|c| !c.is_empty() && *c != ".")
            .collect();
        let ancestor = !parts.is_empty()
            && parts.iter().all(|c| *c == ".." || is_glob_only(c))
            && parts.first() == Some(&"..");
        return ancestor.then(|| Protected {
            path: raw.to_string(),
            what: "a parent directory of the working directory",
        });
    };
    while comps.last().is_some_and(|c| is_glob_only(c)) {
        comps.pop();
    }
    let what = match comps.as_slice() {
        [] => "the root directory",
        [first, ..] if first.contains(['*', '?', '[']) => {
            "a glob at the top of the file system, which matches system directories"
        }
        [h, t] if h == "home" && t == "~" => "your home directory",
        [h, _] if h == "home" || h == "Users" => "a home directory",
        [d] if SYSTEM_DIRS.contains(&d.as_str()) => "a system directory",
        [d, s]
            if SYSTEM_SUBDIRS
                .iter()
                .any(|(top, subs)| top == d && subs.contains(&s.as_str())) =>
        {
            "a system directory"
        }
        _ => return None,
    };
    Some(Protected {
        path: display(&comps),
        what,
    })
}

/// What writing to `path` means when it is under `/dev`.
enum Device {
    Plain,
    Benign,
    /// `/dev/shm/x`, `/dev/tcp/…`: a file or socket, not a disk.
    Special,
    Raw,
}

fn device(path: &str) -> Device {
    let p = lexical_normalize(path);
    if !p.starts_with("/dev/") {
        return Device::Plain;
    }
    if BENIGN_DEVICES.contains(&p.as_str())
        || p.starts_with("/dev/fd/")
        || p.starts_with("/dev/pts/")
    {
        return Device::Benign;
    }
    if ["/dev/shm/", "/dev/tcp/", "/dev/udp/", "/dev/mqueue/"]
        .iter()
        .any(|d| p.starts_with(d))
    {
        return Device::Special;
    }
    Device::Raw
}

fn raw_device(path: &str) -> bool {
    matches!(device(path), Device::Raw)
}

/// Is `path` a file the system needs (`/etc/passwd`, `/boot/…`)?
fn system_file(path: &str) -> bool {
    let p = lexical_normalize(path);
    p.strip_prefix('/')
        .and_then(|r| r.split('/').next())
        .is_some_and(|top| SYSTEM_FILE_DIRS.contains(&top))
}

/// Judges an output redirection; `None` when it writes nowhere that matters.
pub(crate) fn redirect_risk(
    op: &str,
    dest: &Word,
    dest_kind: Option<&str>,
) -> Option<(BashRisk, String)> {
    let writes = matches!(op, ">" | ">>" | ">|" | "&>" | "&>>" | ">&");
    if !writes {
        return None;
    }
    // `2>&1`, `>&2`, `>&-`: duplicating or closing a descriptor.
    if op == ">&" && (dest_kind == Some("number") || dest.text == "-") {
        return None;
    }
    if dest.dynamic && !dest.guessable {
        return Some((
            BashRisk::Warn,
            format!("writes to a file named by an expansion via {op}"),
        ));
    }
    match device(&dest.text) {
        Device::Benign => return None,
        Device::Raw => {
            return Some((
                BashRisk::Block,
                format!("writes directly to the device {}", dest.text),
            ));
        }
        Device::Special => {
            return Some((BashRisk::Warn, format!("writes to {} via {op}", dest.text)));
        }
        Device::Plain => {}
    }
    if op != ">>" && op != "&>>" && system_file(&dest.text) {
        return Some((
            BashRisk::Block,
            format!("truncates the system file {}", dest.text),
        ));
    }
    Some((BashRisk::Warn, format!("writes to a file via {op}")))
}

/// `truncate -s 0 FILE` has the size as its own word; it is not a target.
fn is_size(t: &str) -> bool {
    t.starts_with(|c: char| c.is_ascii_digit()) && !t.contains('/')
}

/// Positional (non-option) arguments; `--` ends options.
fn operands(args: &[Word]) -> Vec<&Word> {
    let mut out = Vec::new();
    let mut done = false;
    for a in args {
        if !done && a.text == "--" {
            done = true;
        } else if done || !a.text.starts_with('-') || a.text == "-" {
            out.push(a);
        }
    }
    out
}

fn has_flag(args: &[Word], short: char, long: &str) -> bool {
    args.iter()
        .map(|a| a.text.as_str())
        .take_while(|t| *t != "--")
        .any(|t| {
            t == long || (t.starts_with('-') && !t.starts_with("--") && t[1..].contains(short))
        })
}

/// The value bash would most plausibly pass, if we can guess it.
fn known(w: &Word) -> Option<Vec<String>> {
    (!w.dynamic || w.guessable).then(|| patterns::expand_braces(&w.text, 64))
}

/// The destructive pattern `prog args` matches, if any.
pub(crate) fn check(prog: &str, args: &[Word], cwd: Option<&str>) -> Option<String> {
    match prog {
        "rm" => rm(args, cwd),
        p if p.starts_with("mkfs")
            || matches!(
                p,
                "mke2fs" | "mkswap" | "wipefs" | "mkdosfs" | "mkntfs" | "mkexfatfs" | "newfs"
            ) =>
        {
            Some(format!("{p} formats a filesystem or wipes a disk"))
        }
        "dd" => dd(args),
        "truncate" => operands(args)
            .into_iter()
            .find(|a| (system_file(&a.text) || raw_device(&a.text)) && !is_size(&a.text))
            .map(|a| format!("truncate changes the size of the system file {}", a.text)),
        "rsync" if args.iter().any(|a| a.text.starts_with("--delete")) => rsync_delete(args, cwd),
        "fdisk" | "sfdisk" | "cfdisk" | "parted" | "gdisk" | "sgdisk" | "blkdiscard" | "shred" => {
            disk_tool(prog, args)
        }
        "cp" | "install" | "mv" | "tee" => copy(prog, args, cwd),
        "shutdown" | "reboot" | "halt" | "poweroff" => {
            Some(format!("{prog} shuts down or restarts the machine"))
        }
        "init" | "telinit" => args
            .iter()
            .any(|a| matches!(a.text.as_str(), "0" | "6"))
            .then(|| format!("{prog} changes the runlevel to halt or reboot")),
        "systemctl" => args
            .iter()
            .find(|a| {
                matches!(
                    a.text.as_str(),
                    "poweroff" | "reboot" | "halt" | "kexec" | "soft-reboot"
                )
            })
            .map(|a| format!("systemctl {} shuts down or restarts the machine", a.text)),
        "chmod" | "chown" | "chgrp" => ownership(prog, args, cwd),
        "kill" => (args.len() >= 2 && args.last().is_some_and(|a| a.text == "-1"))
            .then(|| "kill -1 signals every process the user can reach".to_string()),
        _ => None,
    }
}

/// `rm -r` of a protected path, or `--no-preserve-root`.
/// `dd of=…` onto a raw device or over a system file.
fn dd(args: &[Word]) -> Option<String> {
    let of = args.iter().find_map(|a| a.text.strip_prefix("of="))?;
    if raw_device(of) {
        Some(format!("dd writes directly to the device {of}"))
    } else if system_file(of) && !args.iter().any(|a| a.text.contains("conv=notrunc")) {
        Some(format!("dd overwrites the system file {of}"))
    } else {
        None
    }
}

/// `rsync --delete` into a protected directory.
fn rsync_delete(args: &[Word], cwd: Option<&str>) -> Option<String> {
    let dest = operands(args).into_iter().last()?;
    let alts = known(dest).unwrap_or_default();
    let p = alts.iter().find_map(|alt| protected(alt, cwd))?;
    Some(format!(
        "rsync --delete deletes everything in {} ({}) that the source lacks",
        p.path, p.what
    ))
}

/// Partitioners and wipers given a raw device, unless they only list it.
fn disk_tool(prog: &str, args: &[Word]) -> Option<String> {
    let listing = args.iter().any(|a| {
        matches!(
            a.text.as_str(),
            "-l" | "--list" | "-p" | "print" | "--print" | "-s"
        )
    });
    let dev = operands(args).into_iter().find(|a| raw_device(&a.text))?;
    (!listing).then(|| format!("{prog} destroys data on the device {}", dev.text))
}

/// `cp`, `install`, `mv` and `tee`: moving a protected path away, emptying a
/// system file, writing onto a raw device.
fn copy(prog: &str, args: &[Word], cwd: Option<&str>) -> Option<String> {
    let ops = operands(args);
    if prog == "mv" {
        let sources = &ops[..ops.len().saturating_sub(1)];
        for s in sources {
            for alt in known(s).unwrap_or_default() {
                if let Some(p) = protected(&alt, cwd) {
                    return Some(format!("mv moves away {} ({})", p.path, p.what));
                }
            }
        }
    }
    let targets: Vec<&&Word> = if prog == "tee" {
        ops.iter().collect()
    } else {
        ops.last().into_iter().collect()
    };
    // `cp /dev/null /etc/fstab` empties a file the system needs.
    let empty_source = ops.len() >= 2
        && ops[..ops.len() - 1].iter().any(|s| {
            matches!(
                lexical_normalize(&s.text).as_str(),
                "/dev/null" | "/dev/zero"
            )
        });
    if let (true, Some(dest)) = (empty_source && prog != "tee", ops.last())
        && system_file(&dest.text)
    {
        return Some(format!("{prog} empties the system file {}", dest.text));
    }
    targets
        .into_iter()
        .find(|t| raw_device(&t.text))
        .map(|t| format!("{prog} writes directly to the device {}", t.text))
}

fn rm(args: &[Word], cwd: Option<&str>) -> Option<String> {
    if args.iter().any(|a| a.text == "--no-preserve-root") {
        return Some("rm --no-preserve-root turns off rm's protection of /".to_string());
    }
    if !has_flag(args, 'r', "--recursive") && !has_flag(args, 'R', "--recursive") {
        return None;
    }
    for target in operands(args) {
        for alt in known(target).unwrap_or_default() {
            if let Some(p) = protected(&alt, cwd) {
                return Some(format!("rm -r deletes {} ({})", p.path, p.what));
            }
        }
    }
    None
}

/// `chmod -R 777 /`, `chown -R user /`, and any change of `/` itself.
fn ownership(prog: &str, args: &[Word], cwd: Option<&str>) -> Option<String> {
    let recursive = has_flag(args, 'R', "--recursive");
    let reference = args.iter().any(|a| a.text.starts_with("--reference"));
    // A chmod mode may look like an option (`-x`); it is the first operand.
    let mut ops: Vec<&Word> = Vec::new();
    for a in args {
        let t = a.text.as_str();
        let mode_like = prog == "chmod"
            && ops.is_empty()
            && t.len() > 1
            && t.starts_with('-')
            && t[1..].chars().all(|c| "rwxXst".contains(c));
        if mode_like || !t.starts_with('-') || t == "-" {
            ops.push(a);
        }
    }
    let targets = if reference {
        &ops[..]
    } else {
        ops.get(1..).unwrap_or(&[])
    };
    for t in targets {
        for alt in known(t).unwrap_or_default() {
            let Some(p) = protected(&alt, cwd) else {
                continue;
            };
            if recursive {
                return Some(format!("{prog} -R changes {} ({})", p.path, p.what));
            }
            if p.path == "/" {
                return Some(format!("{prog} changes the root directory itself"));
            }
        }
    }
    None
}

/// Last resort for commands the parser could not read cleanly: split the raw
/// text into rough words and look for the destructive patterns anyway.
pub(crate) fn crude_block(text: &str) -> Option<String> {
    let pieces: Vec<&str> = text.split([';', '&', '|', '(', ')', '`', '\n']).collect();
    for piece in &pieces {
        let mut ws: Vec<String> = Vec::new();
        for token in piece.split_whitespace() {
            let clean: String = token
                .replace("${IFS}", " ")
                .replace("$IFS", " ")
                .chars()
                .filter(|c| !matches!(c, '\'' | '"' | '\\'))
                .collect();
            for part in clean.split_whitespace() {
                ws.extend(patterns::expand_braces(part, 64));
            }
        }
        for k in 0..ws.len() {
            let (prog, _) = normalize_program(ws[k].trim_start_matches('{'));
            let args: Vec<Word> = ws[k + 1..]
                .iter()
                .map(|s| Word::literal(s.trim_end_matches('}')))
                .collect();
            if let Some(reason) = check(&prog, &args, None) {
                return Some(reason);
            }
        }
    }
    let stages: Vec<&str> = text.split('|').collect();
    let fetch_at = stages
        .iter()
        .position(|s| s.split_whitespace().any(|w| matches!(w, "curl" | "wget")))?;
    stages[fetch_at + 1..]
        .iter()
        .any(|s| {
            s.split_whitespace()
                .find(|w| !matches!(*w, "sudo" | "env" | "-E"))
                .is_some_and(|w| {
                    let (p, _) = normalize_program(w);
                    matches!(
                        p.as_str(),
                        "sh" | "bash" | "zsh" | "dash" | "python" | "python3" | "perl"
                    )
                })
        })
        .then(|| "runs code fetched from the network".to_string())
}
