//! git objects without git: hashing blobs and trees, writing them to the side repository's
//! loose object store, and reading and writing tree objects. A snapshot from the watcher's
//! list of changed paths (see `update`) builds its tree here, so it costs what changed, not a
//! git process that loads an index of the whole workspace.
//!
//! What is written is exactly what git writes: the same object ids (SHA-1 of `<kind> <size>\0`
//! and the content, with git's collision detection, so a crafted collision is refused as git
//! refuses it), zlib-compressed under `objects/xx/…`, made read-only. A file is written to a
//! temporary name in `objects/` and renamed into place, so a reader (or a crash) never sees half
//! an object; an object already stored loose is not written again. Content goes in byte for
//! byte: the side repository's `info/attributes` switches every conversion off (see `side`).
//! This module does not decide what a snapshot holds.

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use sha1_checked::{CollisionResult, Digest, Sha1};

/// How the temporary files of objects being written are named (in `objects/`).
pub(crate) const TEMP_PREFIX: &str = "tmp_obj_atto_";

/// A SHA-1 object id.
pub(crate) type Oid = [u8; 20];

/// git's empty tree.
#[cfg(test)]
pub(crate) const EMPTY_TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/// The modes a tree entry can have, as git writes them.
pub(crate) const MODE_FILE: &[u8] = b"100644";
pub(crate) const MODE_EXEC: &[u8] = b"100755";
pub(crate) const MODE_LINK: &[u8] = b"120000";
pub(crate) const MODE_TREE: &[u8] = b"40000";

/// Why an object was not written.
#[derive(Debug)]
pub(crate) enum ObjectError {
    /// The file to store could not be read.
    Read(PathBuf, std::io::Error),
    /// The store could not be written (a full disk, permissions).
    Store(PathBuf, std::io::Error),
    /// The content is a SHA-1 collision attack; git refuses it too.
    Collision(PathBuf),
    /// The file changed size while it was read: whatever was read is not what it holds.
    Moving(PathBuf),
}

pub(crate) fn hex(oid: &Oid) -> String {
    use std::fmt::Write as _;
    oid.iter().fold(String::with_capacity(40), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

pub(crate) fn parse_hex(text: &str) -> Option<Oid> {
    let bytes = text.as_bytes();
    if bytes.len() != 40 {
        return None;
    }
    let digit = |c: u8| char::from(c).to_digit(16);
    let mut oid = [0u8; 20];
    for (i, pair) in bytes.chunks(2).enumerate() {
        let value = digit(pair[0])? * 16 + digit(pair[1])?;
        oid[i] = u8::try_from(value).ok()?;
    }
    Some(oid)
}

/// The side repository's loose object store.
#[derive(Debug, Clone)]
pub(crate) struct Store {
    objects: PathBuf,
}

impl Store {
    pub(crate) fn new(side: &Path) -> Self {
        Self {
            objects: side.join("objects"),
        }
    }

    fn loose_path(&self, oid: &Oid) -> PathBuf {
        let name = hex(oid);
        self.objects.join(&name[..2]).join(&name[2..])
    }

    /// Writes an object held in memory (a tree, a symbolic link's target) unless it is stored
    /// loose already.
    pub(crate) fn write(&self, kind: &str, data: &[u8]) -> Result<Oid, ObjectError> {
        let mut hasher = Sha1::new();
        hasher.update(format!("{kind} {}\0", data.len()));
        hasher.update(data);
        let oid = finish(hasher, || self.objects.clone())?;
        if self.loose_path(&oid).exists() {
            return Ok(oid);
        }
        let mut tmp = Temp::create(&self.objects)?;
        tmp.compress(format!("{kind} {}\0", data.len()).as_bytes())?;
        tmp.compress(data)?;
        tmp.place(&self.loose_path(&oid))?;
        Ok(oid)
    }

    /// Writes the content of `file` (opened from workspace path `path`, named in errors) as a
    /// blob, reading it once: it is hashed and compressed as it is read.
    pub(crate) fn write_file(&self, file: File, path: &Path) -> Result<Oid, ObjectError> {
        let mut tmp = Some(Temp::create(&self.objects)?);
        let oid = read_blob(file, path, tmp.as_mut())?;
        let target = self.loose_path(&oid);
        if let Some(tmp) = tmp.filter(|_| !target.exists()) {
            tmp.place(&target)?;
        }
        Ok(oid)
    }
}

/// The blob id of `file`'s content (opened from `path`, named in errors), read once and
/// stored nowhere.
pub(crate) fn hash_file(file: File, path: &Path) -> Result<Oid, ObjectError> {
    read_blob(file, path, None)
}

/// The blob id of in-memory content (a symbolic link's target), stored nowhere.
pub(crate) fn hash_blob(data: &[u8]) -> Result<Oid, ObjectError> {
    let mut hasher = Sha1::new();
    hasher.update(format!("blob {}\0", data.len()));
    hasher.update(data);
    finish(hasher, PathBuf::new)
}

/// Reads `file` to its end, hashing it as a blob and, with `tmp`, compressing it there. A
/// file whose size changes as it is read is refused.
fn read_blob(mut file: File, path: &Path, mut tmp: Option<&mut Temp>) -> Result<Oid, ObjectError> {
    let io = |e| ObjectError::Read(path.to_path_buf(), e);
    let size = file.metadata().map_err(io)?.len();
    let header = format!("blob {size}\0");
    let mut hasher = Sha1::new();
    hasher.update(header.as_bytes());
    if let Some(tmp) = tmp.as_deref_mut() {
        tmp.compress(header.as_bytes())?;
    }
    let mut buf = vec![0u8; 64 * 1024];
    let mut read = 0u64;
    loop {
        let n = match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(io(e)),
        };
        read += n as u64;
        if read > size {
            return Err(ObjectError::Moving(path.to_path_buf()));
        }
        hasher.update(&buf[..n]);
        if let Some(tmp) = tmp.as_deref_mut() {
            tmp.compress(&buf[..n])?;
        }
    }
    if read != size {
        return Err(ObjectError::Moving(path.to_path_buf()));
    }
    finish(hasher, || path.to_path_buf())
}

fn finish(hasher: Sha1, what: impl FnOnce() -> PathBuf) -> Result<Oid, ObjectError> {
    match hasher.try_finalize() {
        CollisionResult::Ok(out) => {
            let mut oid = [0u8; 20];
            oid.copy_from_slice(&out);
            Ok(oid)
        }
        CollisionResult::Mitigated(_) | CollisionResult::Collision(_) => {
            Err(ObjectError::Collision(what()))
        }
    }
}

/// A loose object being written: compressed into a temporary file in `objects/`, removed
/// unless it is placed (one a killed process left is swept by the next open, see `side`).
struct Temp {
    file: Unplaced,
    encoder: flate2::write::ZlibEncoder<File>,
}

/// A temporary file removed when dropped, unless placed.
struct Unplaced {
    path: PathBuf,
    placed: bool,
}

impl Drop for Unplaced {
    fn drop(&mut self) {
        if !self.placed {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

impl Temp {
    fn create(objects: &Path) -> Result<Self, ObjectError> {
        let path = objects.join(format!(
            "{TEMP_PREFIX}{}_{:08x}",
            std::process::id(),
            fastrand::u32(..)
        ));
        let file = File::options()
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| ObjectError::Store(path.clone(), e))?;
        Ok(Self {
            file: Unplaced {
                path,
                placed: false,
            },
            encoder: flate2::write::ZlibEncoder::new(file, flate2::Compression::fast()),
        })
    }

    fn compress(&mut self, bytes: &[u8]) -> Result<(), ObjectError> {
        self.encoder
            .write_all(bytes)
            .map_err(|e| ObjectError::Store(self.file.path.clone(), e))
    }

    /// Finishes the stream and renames the file to `target` (the same content, if another
    /// process placed it first), read-only as git leaves its objects.
    fn place(self, target: &Path) -> Result<(), ObjectError> {
        let Temp { mut file, encoder } = self;
        let io = |p: &Path, e| ObjectError::Store(p.to_path_buf(), e);
        let written = encoder.finish().map_err(|e| io(&file.path, e))?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            written
                .set_permissions(std::fs::Permissions::from_mode(0o444))
                .map_err(|e| io(&file.path, e))?;
        }
        drop(written);
        if let Some(dir) = target.parent() {
            std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
        }
        std::fs::rename(&file.path, target).map_err(|e| io(target, e))?;
        file.placed = true;
        Ok(())
    }
}

/// One entry of a tree object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TreeEntry {
    pub(crate) mode: Vec<u8>,
    pub(crate) name: Vec<u8>,
    pub(crate) oid: Oid,
}

impl TreeEntry {
    pub(crate) fn is_tree(&self) -> bool {
        self.mode == MODE_TREE
    }

    /// A file or a symbolic link (not a tree, not a submodule).
    pub(crate) fn is_blob(&self) -> bool {
        self.mode.starts_with(b"10") || self.mode == MODE_LINK
    }
}

/// The entries of a tree object; `None` when it is not one.
pub(crate) fn parse_tree(data: &[u8]) -> Option<Vec<TreeEntry>> {
    let mut entries = Vec::new();
    let mut rest = data;
    while !rest.is_empty() {
        let space = rest.iter().position(|b| *b == b' ')?;
        let nul = space + rest[space..].iter().position(|b| *b == 0)?;
        let oid: Oid = rest.get(nul + 1..nul + 21)?.try_into().ok()?;
        entries.push(TreeEntry {
            mode: rest[..space].to_vec(),
            name: rest[space + 1..nul].to_vec(),
            oid,
        });
        rest = &rest[nul + 21..];
    }
    Some(entries)
}

/// A tree object's content, its entries in git's order (a tree sorts as its name followed by
/// `/`).
pub(crate) fn format_tree(entries: &mut [TreeEntry]) -> Vec<u8> {
    entries.sort_by(|a, b| tree_order(&a.name, a.is_tree(), &b.name, b.is_tree()));
    let mut out = Vec::with_capacity(entries.len() * 40);
    for e in entries.iter() {
        out.extend_from_slice(&e.mode);
        out.push(b' ');
        out.extend_from_slice(&e.name);
        out.push(0);
        out.extend_from_slice(&e.oid);
    }
    out
}

/// git's order of tree entries.
pub(crate) fn tree_order(a: &[u8], a_tree: bool, b: &[u8], b_tree: bool) -> std::cmp::Ordering {
    let tail = |tree: bool| if tree { Some(b'/') } else { None };
    a.iter()
        .copied()
        .chain(tail(a_tree))
        .cmp(b.iter().copied().chain(tail(b_tree)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_gits_and_trees_round_trip_in_gits_order() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("objects")).unwrap();
        let store = Store::new(dir.path());
        let empty = store.write("tree", b"").unwrap();
        assert_eq!(hex(&empty), EMPTY_TREE);
        // `printf 'hello\n' | git hash-object --stdin`
        let file = dir.path().join("hello");
        std::fs::write(&file, "hello\n").unwrap();
        let blob = store.write_file(File::open(&file).unwrap(), &file).unwrap();
        assert_eq!(hex(&blob), "ce013625030ba8dba906f756967f9e9ca394464a");
        assert_eq!(store.write("blob", b"hello\n").unwrap(), blob);
        assert!(store.loose_path(&blob).is_file());
        let leftovers = std::fs::read_dir(dir.path().join("objects"))
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .starts_with("tmp_")
            })
            .count();
        assert_eq!(leftovers, 0);

        let entry = |mode: &[u8], name: &[u8]| TreeEntry {
            mode: mode.to_vec(),
            name: name.to_vec(),
            oid: blob,
        };
        // "a.b" < "a/" (a tree) < "a0": '.' < '/' < '0'.
        let mut entries = vec![
            entry(MODE_FILE, b"a0"),
            entry(MODE_TREE, b"a"),
            entry(MODE_EXEC, b"a.b"),
        ];
        let data = format_tree(&mut entries);
        let names: Vec<&[u8]> = entries.iter().map(|e| e.name.as_slice()).collect();
        assert_eq!(names, [&b"a.b"[..], b"a", b"a0"]);
        assert_eq!(parse_tree(&data).unwrap(), entries);
        assert_eq!(parse_tree(b"100644 x\0short"), None);
    }

    #[test]
    fn hex_round_trips_and_refuses_what_is_not_an_id() {
        let oid = parse_hex(EMPTY_TREE).unwrap();
        assert_eq!(hex(&oid), EMPTY_TREE);
        assert_eq!(parse_hex("4b825dc"), None);
        assert_eq!(parse_hex(&"g".repeat(40)), None);
    }
}
