//! Restores of what `bash` commands do to files beyond their text: executable bits, symbolic
//! links (one pointing outside the workspace), names with spaces, newlines and bytes that are
//! not UTF-8, a file replaced by a directory and back, empty directories; and a restore that
//! fails half-way.
#![cfg(unix)]
// Tests fail loudly on setup errors; workspace lints deny these outside #[test] functions.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::process::Command;

use atto_checkpoint::{CheckpointError, Checkpoints, Limits, SnapshotLabel};

#[derive(Debug, Clone, PartialEq, Eq)]
enum Node {
    File { bytes: Vec<u8>, executable: bool },
    Link(PathBuf),
    Dir,
}

/// Everything under `dir` (but `.git`), links as links.
fn dump(dir: &Path) -> BTreeMap<PathBuf, Node> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            let rel = path.strip_prefix(dir).unwrap().to_path_buf();
            let meta = path.symlink_metadata().unwrap();
            let node = if meta.file_type().is_symlink() {
                Node::Link(fs::read_link(&path).unwrap())
            } else if meta.is_dir() {
                stack.push(path.clone());
                Node::Dir
            } else {
                Node::File {
                    bytes: fs::read(&path).unwrap(),
                    executable: meta.permissions().mode() & 0o111 != 0,
                }
            };
            out.insert(rel, node);
        }
    }
    out
}

fn label(turn: u32, tool: &str) -> SnapshotLabel {
    SnapshotLabel {
        turn,
        tool: Some(tool.into()),
        note: String::new(),
    }
}

fn not_utf8() -> PathBuf {
    PathBuf::from(OsStr::from_bytes(b"caf\xe9 \xff.txt"))
}

#[test]
fn modes_links_and_odd_names_come_back_byte_for_byte() {
    let root = tempfile::tempdir().unwrap();
    let (ws, data) = (root.path().join("ws"), root.path().join("data"));
    let outside = root.path().join("outside.txt");
    fs::write(&outside, "not the workspace's\n").unwrap();
    fs::create_dir_all(ws.join("was_dir")).unwrap();
    fs::write(ws.join("run.sh"), "#!/bin/sh\necho hi\n").unwrap();
    fs::set_permissions(ws.join("run.sh"), fs::Permissions::from_mode(0o755)).unwrap();
    fs::write(ws.join("plain.txt"), "plain\n").unwrap();
    symlink("plain.txt", ws.join("link_in")).unwrap();
    symlink(&outside, ws.join("link_out")).unwrap();
    fs::write(ws.join("with space.txt"), "space\n").unwrap();
    fs::write(ws.join("new\nline.txt"), "newline\n").unwrap();
    fs::write(ws.join(not_utf8()), b"\xff bytes\n").unwrap();
    fs::write(ws.join("was_file"), "a file\n").unwrap();
    fs::write(ws.join("was_dir/inner.txt"), "inside\n").unwrap();
    fs::create_dir_all(ws.join("empty/nested")).unwrap();
    let before = dump(&ws);

    let cp = Checkpoints::open(&data, &ws, Limits::default()).unwrap();
    let first = cp.snapshot(&label(1, "bash")).unwrap();
    // What one bash command did.
    let script = r#"
        chmod -x run.sh
        rm link_in && echo replaced > link_in
        ln -sfn plain.txt link_out
        rm "with space.txt" "$(printf 'new\nline.txt')" "$(printf 'caf\351 \377.txt')"
        rm was_file && mkdir was_file && echo now > was_file/inner.txt
        rm -r was_dir && echo flat > was_dir
        echo fresh > created.txt
        rm -r empty && mkdir -p made/empty
    "#;
    let ran = Command::new("sh")
        .args(["-c", script])
        .current_dir(&ws)
        .status()
        .unwrap();
    assert!(ran.success());
    let second = cp.snapshot(&label(1, "bash")).unwrap();
    let changed = cp.changed_paths_between(first.id, second.id).unwrap();
    assert!(changed.contains(&not_utf8()), "{changed:?}");
    assert!(
        changed.contains(&PathBuf::from("new\nline.txt")),
        "{changed:?}"
    );
    assert!(
        changed.contains(&PathBuf::from("run.sh")),
        "the mode changed: {changed:?}"
    );

    let report = cp.restore(first.id).unwrap();
    assert_eq!(dump(&ws), before, "{report:?}");
    assert_eq!(
        fs::read_to_string(&outside).unwrap(),
        "not the workspace's\n",
        "the link was restored as a link, never written through"
    );
    assert!(report.changed.contains(&not_utf8()), "{report:?}");

    // And forward again, through the safety snapshot.
    let after_command = dump(&ws);
    cp.restore(report.safety_snapshot).unwrap();
    assert_ne!(dump(&ws), after_command);
    assert_eq!(fs::read_to_string(ws.join("was_dir")).unwrap(), "flat\n");
    assert!(ws.join("link_in").symlink_metadata().unwrap().is_file());
    assert!(!ws.join(not_utf8()).exists());
    assert!(ws.join("made/empty").is_dir() && !ws.join("empty").exists());
}

#[test]
fn restore_paths_takes_names_that_are_not_utf8() {
    let root = tempfile::tempdir().unwrap();
    let (ws, data) = (root.path().join("ws"), root.path().join("data"));
    fs::create_dir_all(&ws).unwrap();
    fs::write(ws.join(not_utf8()), "one\n").unwrap();
    fs::write(ws.join("other.txt"), "one\n").unwrap();
    let cp = Checkpoints::open(&data, &ws, Limits::default()).unwrap();
    let first = cp.snapshot(&label(1, "bash")).unwrap();
    fs::write(ws.join(not_utf8()), "two\n").unwrap();
    fs::write(ws.join("other.txt"), "two\n").unwrap();
    let report = cp.restore_paths(first.id, &[not_utf8()]).unwrap();
    assert_eq!(report.changed, [not_utf8()]);
    assert_eq!(fs::read_to_string(ws.join(not_utf8())).unwrap(), "one\n");
    assert_eq!(fs::read_to_string(ws.join("other.txt")).unwrap(), "two\n");
}

/// The target's copy of `m.txt` is lost from the side repository (as a damaged disk would
/// lose it): every object is read before the first write, so the restore stops before
/// rewriting `a.txt` or deleting `gone.txt`, and says which object is gone.
#[test]
fn a_restore_whose_objects_are_gone_changes_nothing_and_says_why() {
    let root = tempfile::tempdir().unwrap();
    let (ws, data) = (root.path().join("ws"), root.path().join("data"));
    fs::create_dir_all(&ws).unwrap();
    for name in ["a.txt", "m.txt", "z.txt"] {
        fs::write(ws.join(name), format!("{name} one\n")).unwrap();
    }
    let cp = Checkpoints::open(&data, &ws, Limits::default()).unwrap();
    let first = cp.snapshot(&label(1, "bash")).unwrap();
    for name in ["a.txt", "m.txt", "z.txt"] {
        fs::write(ws.join(name), format!("{name} two\n")).unwrap();
    }
    fs::write(ws.join("gone.txt"), "created after\n").unwrap();
    cp.snapshot(&label(1, "bash")).unwrap();
    let now = dump(&ws);

    let oid = Command::new("git")
        .args(["hash-object", "--stdin"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child.stdin.take().unwrap().write_all(b"m.txt one\n")?;
            child.wait_with_output()
        })
        .unwrap();
    let oid = String::from_utf8(oid.stdout).unwrap().trim().to_owned();
    fs::remove_file(
        cp.side_repo()
            .join("objects")
            .join(&oid[..2])
            .join(&oid[2..]),
    )
    .unwrap();

    let err = cp.restore(first.id).unwrap_err();
    let CheckpointError::Unrestorable { id, why } = &err else {
        panic!("{err}");
    };
    assert_eq!(*id, first.id);
    assert!(why.contains(&oid), "{err}");
    assert!(err.to_string().contains("no file was changed"), "{err}");
    assert_eq!(
        dump(&ws),
        now,
        "the workspace is as it was before the restore"
    );
}
