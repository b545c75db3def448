//! The checks of a store's prepared fragments (docs/persistence.md,
//! "Prepared fragments").
//!
//! A fragment row keeps what a request to one target needs of a run of stored
//! messages (their wire bytes and replay decisions). Its check is a keyed
//! BLAKE3 hash, under a key of its own, of a length-prefixed header (what the
//! row claims: its target, wire key, range and the stored rows' chain values)
//! and its data, so a row edited, truncated or moved in storage is noticed
//! before anything of it is sent.

use std::sync::LazyLock;

use crate::digest::Digest;

pub const FRAGMENT_DOMAIN: &str = "thinkseal 2026-12-06 v1 stored fragment";

/// Below this, threads cost more than they save.
const RAYON_BYTES: usize = 1 << 20;

static FRAGMENT_KEY: LazyLock<Digest> = LazyLock::new(|| blake3::derive_key(FRAGMENT_DOMAIN, b""));

/// The check of a fragment row: `header` (length-prefixed, so no two
/// (header, data) pairs hash alike) then `data`.
#[must_use]
pub fn check(header: &[u8], data: &[u8]) -> Digest {
    let mut hasher = blake3::Hasher::new_keyed(&FRAGMENT_KEY);
    hasher.update(&(header.len() as u64).to_le_bytes());
    hasher.update(header);
    // A long session's data runs to megabytes: hashed on every core past
    // RAYON_BYTES (the same value either way; BLAKE3 is a tree).
    if data.len() >= RAYON_BYTES {
        hasher.update_rayon(data);
    } else {
        hasher.update(data);
    }
    *hasher.finalize().as_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_split_between_header_and_data_is_part_of_the_check() {
        assert_ne!(check(b"ab", b"c"), check(b"a", b"bc"));
        assert_eq!(check(b"ab", b"c"), check(b"ab", b"c"));
    }

    #[test]
    fn every_byte_of_the_data_counts() {
        let data = vec![7u8; 100_000];
        let mut edited = data.clone();
        edited[99_999] = 8;
        assert_ne!(check(b"h", &data), check(b"h", &edited));
        // Past RAYON_BYTES the data is hashed on several threads: the same check as in one pass.
        let large = vec![3u8; 3 * RAYON_BYTES];
        let mut one_pass = blake3::Hasher::new_keyed(&FRAGMENT_KEY);
        one_pass.update(&1u64.to_le_bytes());
        one_pass.update(b"h");
        one_pass.update(&large);
        assert_eq!(check(b"h", &large), *one_pass.finalize().as_bytes());
    }
}
