//! Where a command writes, as far as atto can tell from the parse alone: redirection
//! destinations and the file operands of programs whose job is to write them.
//!
//! Owns: listing those paths, so atto's own knowledge (never the command's output)
//! can say "this command writes to /etc/x, which the sandbox does not permit".
//! Deliberately does not: judge risk (the classifier does) or promise completeness —
//! a program may write anywhere it likes; this names only what the command line shows.

use tree_sitter::Node;

use super::command::normalize_program;
use super::walk::MAX_NODE_NEST;
use super::{MAX_COMMAND_BYTES, with_parser, words};

/// The paths `command` visibly writes: `> f`, `>> f`, `&> f`, `tee f`, `touch f`,
/// `mkdir d`, `cp … dest`, `mv … dest`, `install … dest`, `ln … dest`, `rm f`,
/// `truncate … f`, `dd of=f`, `sed -i … f`. Words with expansions are given as the
/// best static guess (`$HOME` → `~`). Unparseable or oversized commands give nothing.
pub fn write_targets(command: &str) -> Vec<String> {
    if command.len() > MAX_COMMAND_BYTES {
        return Vec::new();
    }
    with_parser(|parser| {
        let Some(tree) = parser.parse(command, None) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        collect(tree.root_node(), command.as_bytes(), &mut out, 0);
        out.dedup();
        out
    })
    .unwrap_or_default()
}

fn collect(node: Node<'_>, src: &[u8], out: &mut Vec<String>, depth: usize) {
    if depth > MAX_NODE_NEST {
        return;
    }
    match node.kind() {
        "file_redirect" => redirect(node, src, out),
        "command" => command(node, src, out),
        _ => {}
    }
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        collect(child, src, out, depth + 1);
    }
}

fn redirect(node: Node<'_>, src: &[u8], out: &mut Vec<String>) {
    let mut cursor = node.walk();
    let writes = node
        .children(&mut cursor)
        .filter(|c| !c.is_named())
        .any(|c| matches!(c.kind(), ">" | ">>" | ">|" | "&>" | "&>>" | "<>"));
    if let Some(dest) = node.child_by_field_name("destination")
        && writes
    {
        let word = words::eval(dest, src).text;
        if !word.is_empty() && !word.starts_with("/dev/") {
            out.push(word);
        }
    }
}

fn command(node: Node<'_>, src: &[u8], out: &mut Vec<String>) {
    let mut name: Option<String> = None;
    let mut args: Vec<String> = Vec::new();
    let mut cursor = node.walk();
    for (i, child) in node.children(&mut cursor).enumerate() {
        match node.field_name_for_child(i as u32) {
            Some("name") => name = Some(normalize_program(&words::eval(child, src).text).0),
            Some("argument") => args.push(words::eval(child, src).text),
            _ => {}
        }
    }
    let Some(name) = name else { return };
    let operands: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
    match name.as_str() {
        "touch" | "mkdir" | "rm" | "rmdir" | "tee" | "truncate" | "shred" | "unlink" => {
            out.extend(operands.into_iter().cloned());
        }
        "cp" | "mv" | "install" | "ln" | "rsync" => {
            let target_dir = args
                .iter()
                .zip(args.iter().skip(1))
                .find(|(flag, _)| *flag == "-t" || *flag == "--target-directory")
                .map(|(_, dir)| dir.clone())
                .or_else(|| {
                    args.iter()
                        .find_map(|a| a.strip_prefix("--target-directory="))
                        .map(str::to_owned)
                });
            match target_dir {
                Some(dir) => out.push(dir),
                None if operands.len() >= 2 => {
                    out.extend(operands.last().map(|s| (*s).clone()));
                }
                None => {}
            }
        }
        "dd" => out.extend(
            args.iter()
                .filter_map(|a| a.strip_prefix("of="))
                .map(str::to_owned),
        ),
        "sed" | "perl"
            if args
                .iter()
                .any(|a| a.starts_with("-i") || a == "--in-place") =>
        {
            // The first operand is the script (unless given with -e); the rest are files.
            let scripted = args.iter().any(|a| a == "-e" || a == "--expression");
            out.extend(operands.into_iter().skip(usize::from(!scripted)).cloned());
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::write_targets;

    #[test]
    fn table() {
        let cases: &[(&str, &[&str])] = &[
            ("ls -la", &[]),
            ("echo hi > /etc/x", &["/etc/x"]),
            ("echo hi >> out.txt 2>/dev/null", &["out.txt"]),
            ("cat a | tee -a /opt/log b", &["/opt/log", "b"]),
            ("touch /opt/a && mkdir -p /opt/d", &["/opt/a", "/opt/d"]),
            ("cp -r src /usr/local/x", &["/usr/local/x"]),
            ("mv -t /srv a b", &["/srv"]),
            ("dd if=/dev/zero of=/var/img bs=1M", &["/var/img"]),
            ("sed -i 's/a/b/' /etc/hosts", &["/etc/hosts"]),
            ("rm -f \"$HOME/.bashrc\"", &["~/.bashrc"]),
            ("bash -c 'touch /opt/inner'", &[]),
            // A printed "Permission denied" is text, not a write.
            ("echo \"x: '/home/u/f': Permission denied\"", &[]),
        ];
        for (command, want) in cases {
            assert_eq!(write_targets(command), *want, "{command}");
        }
    }
}
