//! placeholder crate root, replaced as the crate is written.
