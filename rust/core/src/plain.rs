//! Plain runs of JSON string bytes: how many bytes a string's text starts
//! with that need no escape. The writer copies such a run as it is
//! ([`crate::jcs::write_string`]); the reader finds there where a string ends
//! or escapes ([`crate::parse`]). Most of a JSON text's bytes are in
//! strings, so this one scan is on every path that writes or reads one.
//!
//! Whole 32-byte blocks are tested at once: with AVX2 where the CPU has it
//! (one compare of each kind and a mask a block), else with a fold the
//! compiler turns into SSE2 compares. Then eight bytes at a time (short
//! strings, keys among them, and the block that holds the stop), the stop's
//! place read from the word's mask; the last few bytes byte by byte.

/// Whether `b` is a control character, `"` or `\\`: the bytes a JSON string
/// escapes (and, unescaped, ends or refuses).
fn needs_escape(b: u8) -> bool {
    b < 0x20 || b == b'"' || b == b'\\'
}

/// How many bytes `bytes` starts with that need no escape: up to the first
/// control character, `"` or `\\` (all of them when there is none).
pub(crate) fn plain_len(bytes: &[u8]) -> usize {
    // A stop in the first word ends the run before the blocks' setup: text
    // that escapes often, keys and other short strings end here.
    let mut at = match first_word(bytes) {
        Some(0) => 8 + plain_blocks(&bytes[8..]),
        Some(stops) => return stops.trailing_zeros() as usize / 8,
        None => 0,
    };
    while let Some(word) = bytes.get(at..at + 8) {
        let Ok(word) = <[u8; 8]>::try_from(word) else {
            break;
        };
        let stops = escape_mask(u64::from_le_bytes(word));
        if stops != 0 {
            return at + stops.trailing_zeros() as usize / 8;
        }
        at += 8;
    }
    at + bytes[at..]
        .iter()
        .position(|&b| needs_escape(b))
        .unwrap_or(bytes.len() - at)
}

/// The escape mask of the first eight bytes of `bytes`, if it has eight.
fn first_word(bytes: &[u8]) -> Option<u64> {
    let word = <[u8; 8]>::try_from(bytes.get(..8)?).ok()?;
    Some(escape_mask(u64::from_le_bytes(word)))
}

/// A place no later than the first byte of `bytes` that needs an escape and
/// no earlier than the start of the whole 32-byte block that holds it (where
/// the whole blocks end when none does); every byte before it is plain. The
/// AVX2 scan returns the stop itself, the portable one its block's start.
fn plain_blocks(bytes: &[u8]) -> usize {
    #[cfg(target_arch = "x86_64")]
    if bytes.len() >= 32 && std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU was just seen to have AVX2, the one feature the
        // function is compiled for. Measured reason: `from_json` + `prepare`
        // of 300 bench messages, 43,234 -> 40,753 instructions a message
        // (callgrind); `wire_json` of a 1.6 KB string 0.232-0.236 -> 0.180 us
        // (see docs/performance.md).
        #[allow(unsafe_code)]
        return unsafe { avx2::plain_blocks(bytes) };
    }
    portable_blocks(bytes)
}

/// [`plain_blocks`] without AVX2: where the first whole block that holds a
/// stop starts (the word loop finds the stop in it).
fn portable_blocks(bytes: &[u8]) -> usize {
    let mut at = 0;
    for block in bytes.chunks_exact(32) {
        if block.iter().fold(false, |stop, &b| stop | needs_escape(b)) {
            break;
        }
        at += 32;
    }
    at
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::{
        _mm256_cmpeq_epi8, _mm256_loadu_si256, _mm256_min_epu8, _mm256_movemask_epi8,
        _mm256_or_si256, _mm256_set1_epi8,
    };

    /// [`super::plain_blocks`] with AVX2: each 32-byte block compared with
    /// `"` and `\\`, and with its bytewise minimum against 0x1f (equal for
    /// the control bytes); the first stop's place read from the mask.
    #[target_feature(enable = "avx2")]
    pub(super) fn plain_blocks(bytes: &[u8]) -> usize {
        let quote = _mm256_set1_epi8(0x22);
        let backslash = _mm256_set1_epi8(0x5c);
        let control = _mm256_set1_epi8(0x1f);
        let mut at = 0;
        for block in bytes.chunks_exact(32) {
            // SAFETY: the load reads the 32 bytes of `block`; `loadu` needs
            // no alignment.
            #[allow(unsafe_code)]
            let v = unsafe { _mm256_loadu_si256(block.as_ptr().cast()) };
            let stops = _mm256_or_si256(
                _mm256_or_si256(_mm256_cmpeq_epi8(v, quote), _mm256_cmpeq_epi8(v, backslash)),
                _mm256_cmpeq_epi8(_mm256_min_epu8(v, control), v),
            );
            let mask = _mm256_movemask_epi8(stops).cast_unsigned();
            if mask != 0 {
                return at + mask.trailing_zeros() as usize;
            }
            at += 32;
        }
        at
    }
}

/// The eight bytes of `w` (read little-endian) that need an escape, by the
/// classic "has a byte less than n / equal to c" word tricks: the high bit
/// of such a byte is set. A borrow can also set it in a byte above one that
/// needs an escape, never below, so the lowest bit set is always the first
/// such byte (`trailing_zeros() / 8` is its place) and zero means none.
fn escape_mask(w: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let below_space = w.wrapping_sub(ONES * 0x20) & !w & HIGH;
    let quote = w ^ (ONES * u64::from(b'"'));
    let quote = quote.wrapping_sub(ONES) & !quote & HIGH;
    let backslash = w ^ (ONES * u64::from(b'\\'));
    let backslash = backslash.wrapping_sub(ONES) & !backslash & HIGH;
    below_space | quote | backslash
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first_stop(bytes: &[u8]) -> usize {
        bytes
            .iter()
            .position(|&b| needs_escape(b))
            .unwrap_or(bytes.len())
    }

    /// Texts with one stop byte at every place around the 32-byte blocks,
    /// after multi-byte text too, another stop after it; and without a stop.
    fn texts() -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        for filler in ["a", "é", "日本", "\u{7f}\u{80}\u{ff}"] {
            let text: String = filler.repeat(90);
            let plain = text.as_bytes();
            out.push(plain.to_vec());
            for at in (0..plain.len()).filter(|&at| text.is_char_boundary(at)) {
                for stop in [b'"', b'\\', 0x00, 0x1f, b'\n'] {
                    let mut bytes = plain[..at].to_vec();
                    bytes.push(stop);
                    bytes.extend_from_slice(&plain[at..]);
                    bytes.push(if stop == b'"' { 0x01 } else { b'"' });
                    out.push(bytes);
                }
            }
        }
        out
    }

    #[test]
    fn a_plain_run_ends_at_the_first_quote_backslash_or_control_byte() {
        for bytes in texts() {
            assert_eq!(plain_len(&bytes), first_stop(&bytes), "{bytes:?}");
        }
        assert_eq!(plain_len(b""), 0);
    }

    #[test]
    fn each_block_scan_stops_no_later_than_the_first_stop_and_past_plain_blocks() {
        // Both scans, whichever the CPU would pick: each returns a place at
        // or before the first stop, and reaches the block that holds it.
        let mut scans: Vec<fn(&[u8]) -> usize> = vec![portable_blocks];
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") {
            #[allow(unsafe_code)]
            scans.push(|bytes| unsafe { avx2::plain_blocks(bytes) }); // SAFETY: AVX2 seen just above
        }
        for bytes in texts() {
            let stop = first_stop(&bytes);
            let whole = bytes.len() / 32 * 32;
            for scan in &scans {
                let at = scan(&bytes);
                assert!(at <= stop, "{at} past the stop at {stop}: {bytes:?}");
                assert!(
                    at >= (stop / 32 * 32).min(whole),
                    "{at} short of the block at {stop}: {bytes:?}"
                );
            }
        }
    }

    #[test]
    fn an_escape_mask_places_the_first_byte_to_escape() {
        // Bytes next to the ones that need an escape, where a borrow could set
        // a bit: before the first such byte none is set, and it is the lowest.
        let plain = [0x20, 0x21, 0x23, 0x5b, 0x5d, 0x7f, 0x80, 0xff];
        let any = [0x00, 0x01, 0x1f, b'"', b'\\', 0x20, 0x21, 0x23, 0x5d, 0xff];
        for at in 0..8 {
            for stop in [0x00, 0x01, 0x1f, b'"', b'\\'] {
                for &below in &plain {
                    for &above in &any {
                        let mut word = [above; 8];
                        word[..at].fill(below);
                        word[at] = stop;
                        let mask = escape_mask(u64::from_le_bytes(word));
                        assert_eq!(mask.trailing_zeros() as usize / 8, at, "{word:?}");
                    }
                }
            }
        }
        for &b in &plain {
            assert_eq!(escape_mask(u64::from_le_bytes([b; 8])), 0);
        }
    }
}
