//! The checks of a store's prepared fragments (docs/persistence.md,
//! "Prepared fragments").
//!
//! A fragment row keeps what a request to one target needs of a run of stored
//! messages (their wire bytes and replay decisions). Its check is a keyed
//! BLAKE3 hash, under a key of its own, of a length-prefixed header (what the
//! row claims: its target, wire key, range and the stored rows' chain values)
//! and its data, so a row edited, truncated or moved in storage is noticed
//! before anything of it is sent.

use crate::digest::Digest;

pub const FRAGMENT_DOMAIN: &str = "thinkseal 2026-12-06 v1 stored fragment";

/// Below this, threads cost more than they save. Measured on a 2-core
/// machine, each check after a full collection of a 570,000-object heap (a
/// worker's request begins cold): one thread hashed 1.8 MB in 0.37-0.38 ms
/// against 0.74 on both, 5.3 MB in 1.06-1.07 against 1.26-1.47, 11 MB alike
/// (2.2 ms), and both threads were ahead from about 17 MB (3.05 against
/// 3.44-3.57 ms; 26.5 MB: 3.85-4.27 against 5.31-5.33).
const RAYON_BYTES: usize = 16 << 20;

/// The key of a store's fragment checks, from its secret (empty for none: the
/// open key, which anyone can compute, as anyone can compute a fingerprint).
#[must_use]
pub fn key(secret: &[u8]) -> Digest {
    blake3::derive_key(FRAGMENT_DOMAIN, secret)
}

/// The check of a fragment row under `key`: `header` (length-prefixed, so no
/// two (header, data) pairs hash alike) then the data, which `parts` make
/// joined (a backend reads a long row's data in parts, and they are never
/// joined for the check; an entry's check has no data).
#[must_use]
pub fn check(key: &Digest, header: &[u8], parts: &[&[u8]]) -> Digest {
    let mut hasher = blake3::Hasher::new_keyed(key);
    hasher.update(&(header.len() as u64).to_le_bytes());
    hasher.update(header);
    for part in parts {
        // A part past RAYON_BYTES is hashed on every core (the same value
        // either way; BLAKE3 is a tree).
        if part.len() >= RAYON_BYTES {
            hasher.update_rayon(part);
        } else {
            hasher.update(part);
        }
    }
    *hasher.finalize().as_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The check made in one pass by `blake3` itself, the data whole.
    fn one_pass(key: &Digest, header: &[u8], data: &[u8]) -> Digest {
        let mut hasher = blake3::Hasher::new_keyed(key);
        hasher.update(&(header.len() as u64).to_le_bytes());
        hasher.update(header);
        hasher.update(data);
        *hasher.finalize().as_bytes()
    }

    #[test]
    fn the_split_between_header_and_data_is_part_of_the_check() {
        let open = key(b"");
        assert_ne!(check(&open, b"ab", &[b"c"]), check(&open, b"a", &[b"bc"]));
        assert_ne!(
            check(&open, b"ab", &[b"c"]),
            check(&open, b"a", &[b"b", b"c"])
        );
        assert_eq!(check(&open, b"ab", &[b"c"]), one_pass(&open, b"ab", b"c"));
        assert_eq!(check(&open, b"ab", &[]), one_pass(&open, b"ab", b""));
    }

    #[test]
    fn a_secret_makes_other_checks() {
        let open = key(b"");
        assert_ne!(key(b"s"), open);
        assert_ne!(
            check(&key(b"s"), b"h", &[b"d"]),
            check(&open, b"h", &[b"d"])
        );
        assert_ne!(
            check(&key(b"s"), b"h", &[b"d"]),
            check(&key(b"t"), b"h", &[b"d"])
        );
    }

    #[test]
    fn every_byte_of_the_data_counts() {
        let open = key(b"");
        let data = vec![7u8; 100_000];
        let mut edited = data.clone();
        edited[99_999] = 8;
        assert_ne!(check(&open, b"h", &[&data]), check(&open, b"h", &[&edited]));
    }

    #[test]
    fn parts_check_as_their_data_whole_does_in_one_pass() {
        let open = key(b"");
        let data: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
        // Past RAYON_BYTES a part is hashed on several threads.
        let large = vec![5u8; RAYON_BYTES + 4_096];
        for whole in [&data[..], &large[..]] {
            // Cuts at chunk bounds and inside chunks, empty parts, one part.
            for cuts in [
                vec![],
                vec![1_024],
                vec![0, 1],
                vec![7, 7, 100_001],
                vec![65_536, 262_144],
            ] {
                let mut parts = Vec::new();
                let mut at = 0;
                for cut in cuts {
                    parts.push(&whole[at..cut]);
                    at = cut;
                }
                parts.push(&whole[at..]);
                assert_eq!(
                    check(&open, b"head", &parts),
                    one_pass(&open, b"head", whole)
                );
            }
        }
    }
}
