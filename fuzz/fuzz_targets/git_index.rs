//! The git index reader (versions 2, 3, 4, extensions) on any bytes, and on indexes built
//! from fuzzer-chosen entries and extensions with a sound frame, so it reaches the
//! extension and cache-tree code. Properties: never more entries than the header states,
//! and an index seeding takes over is one the reader reads whole.
#![no_main]

use arbitrary::{Arbitrary, Unstructured};
use atto_checkpoint::fuzzing::{index_paths, usable_index};
use libfuzzer_sys::fuzz_target;

#[derive(Debug, Arbitrary)]
struct Entry {
    stat: [u8; 40],
    oid: [u8; 20],
    flags: u16,
    extended: u16,
    strip: u8,
    path: Vec<u8>,
}

#[derive(Debug, Arbitrary)]
struct Built {
    version: u8,
    /// Added to the real entry count in the header (a lying header).
    extra: u8,
    entries: Vec<Entry>,
    extensions: Vec<([u8; 4], Vec<u8>, bool)>,
    tail: Vec<u8>,
}

fn varint(mut n: u64, out: &mut Vec<u8>) {
    let mut bytes = vec![(n & 0x7f) as u8];
    while n >= 0x80 {
        n = (n >> 7) - 1;
        bytes.push(0x80 | (n & 0x7f) as u8);
    }
    bytes.reverse();
    out.extend(bytes);
}

fn build(b: &Built) -> (Vec<u8>, u32) {
    let version = 2 + u32::from(b.version % 3);
    let stated = u32::try_from(b.entries.len())
        .unwrap_or(u32::MAX)
        .saturating_add(u32::from(b.extra));
    let mut out = Vec::new();
    out.extend_from_slice(b"DIRC");
    out.extend_from_slice(&version.to_be_bytes());
    out.extend_from_slice(&stated.to_be_bytes());
    for e in &b.entries {
        let start = out.len();
        let path: Vec<u8> = e
            .path
            .iter()
            .copied()
            .filter(|c| *c != 0)
            .take(300)
            .collect();
        let mut flags = e.flags & !0x0fff | u16::try_from(path.len().min(0xfff)).unwrap_or(0xfff);
        if version == 2 {
            flags &= !0x4000;
        }
        out.extend_from_slice(&e.stat);
        out.extend_from_slice(&e.oid);
        out.extend_from_slice(&flags.to_be_bytes());
        if flags & 0x4000 != 0 {
            out.extend_from_slice(&e.extended.to_be_bytes());
        }
        if version == 4 {
            varint(u64::from(e.strip % 8), &mut out);
        }
        out.extend_from_slice(&path);
        out.push(0);
        if version != 4 {
            while (out.len() - start) % 8 != 0 {
                out.push(0);
            }
        }
    }
    for (signature, data, tree) in &b.extensions {
        let sig: &[u8] = if *tree { b"TREE" } else { signature };
        out.extend_from_slice(sig);
        out.extend_from_slice(&u32::try_from(data.len()).unwrap_or(0).to_be_bytes());
        out.extend_from_slice(data);
    }
    out.extend_from_slice(&[0u8; 20]);
    out.extend_from_slice(&b.tail);
    (out, stated)
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let (bytes, stated) = if mode & 1 == 0 {
        let stated = rest
            .get(8..12)
            .map_or(0, |w| u32::from_be_bytes([w[0], w[1], w[2], w[3]]));
        (rest.to_vec(), stated)
    } else {
        let Ok(built) = Built::arbitrary(&mut Unstructured::new(rest)) else {
            return;
        };
        build(&built)
    };
    let read = index_paths(&bytes);
    if let Some(read) = &read {
        assert!(
            read.paths.len() as u64 <= u64::from(stated),
            "more entries than the header states"
        );
    }
    if usable_index(&bytes) {
        assert!(
            read.is_some(),
            "seeding takes over an index the reader cannot read whole"
        );
    }
});
