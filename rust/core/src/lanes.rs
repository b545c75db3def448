//! Keyed BLAKE3 of many short inputs at once, one input's chunk per SIMD lane.
//!
//! The `blake3` crate fills its SIMD lanes with the chunks of *one* input, so
//! an input of one or two chunks (a message's encoding, about 2 KB) is
//! compressed a block at a time. [`keyed_hash_many`] compresses the chunks of
//! different inputs side by side instead: [`LANES`] chunks at once, each with
//! its own length, chunk counter and flags, then joins each input's chunk
//! chaining values into its root with `blake3::hazmat`. The digests are exactly
//! `blake3::keyed_hash` of each input; the tests below compare the two over
//! every length around the block and chunk bounds and over random batches,
//! and each lane with its chunk computed alone.
//!
//! The lanes are AVX2 registers of eight 32-bit words (`avx2` below). On a
//! CPU without AVX2 each input is hashed alone by `blake3`, which is then the
//! faster way.
//!
//! Measured (criterion, `keyed_hash_2k_inputs` in benches/chain.rs; figures
//! in docs/performance.md): 2,000 inputs of 1.7-1.9 KB hash at 2.6 GiB/s
//! through the lanes, against 1.2 GiB/s one at a time.

use blake3::hazmat::{
    merge_subtrees_non_root, merge_subtrees_root, ChainingValue, HasherExt, Mode,
};

/// Chunks compressed side by side: one AVX2 register of 32-bit words.
pub const LANES: usize = 8;
const CHUNK_LEN: usize = 1024;
const BLOCK_LEN: usize = 64;

/// Below this many inputs the lanes would mostly idle: each input is hashed alone.
const MIN_INPUTS: usize = 4;

/// `blake3::keyed_hash(key, input)` of every input, in order.
#[must_use]
pub fn keyed_hash_many(key: &[u8; 32], inputs: &[&[u8]]) -> Vec<[u8; 32]> {
    if inputs.len() >= MIN_INPUTS && lanes_available() {
        return through_lanes(key, inputs);
    }
    inputs
        .iter()
        .map(|input| *blake3::keyed_hash(key, input).as_bytes())
        .collect()
}

fn lanes_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    return std::is_x86_feature_detected!("avx2");
    #[cfg(not(target_arch = "x86_64"))]
    return false;
}

/// One chunk to compress: its bytes (at most a chunk), its index in its input
/// (the chunk counter), and whether it is its input's only chunk (the root).
#[derive(Clone, Copy)]
struct Chunk<'a> {
    bytes: &'a [u8],
    counter: u64,
    root: bool,
}

impl Chunk<'_> {
    /// Blocks compressed for this chunk; the empty input is one empty block.
    fn blocks(&self) -> usize {
        self.bytes.len().div_ceil(BLOCK_LEN).max(1)
    }

    /// This chunk's chaining value (its input's digest, for a root chunk)
    /// computed alone, by `blake3`: what a lane must give.
    fn alone(&self, key: &[u8; 32]) -> ChainingValue {
        let mut hasher = blake3::Hasher::new_keyed(key);
        if self.root {
            return *hasher.update(self.bytes).finalize().as_bytes();
        }
        hasher.set_input_offset(self.counter * CHUNK_LEN as u64);
        hasher.update(self.bytes).finalize_non_root()
    }
}

/// [`keyed_hash_many`] through the lanes: every chunk of every input
/// compressed, then each input's chunks joined into its root.
fn through_lanes(key: &[u8; 32], inputs: &[&[u8]]) -> Vec<[u8; 32]> {
    // Input i's chunks are chunks[first[i]..first[i + 1]].
    let mut chunks = Vec::with_capacity(inputs.len() * 2);
    let mut first = Vec::with_capacity(inputs.len() + 1);
    for input in inputs {
        first.push(chunks.len());
        let root = input.len() <= CHUNK_LEN;
        if input.is_empty() {
            chunks.push(Chunk {
                bytes: input,
                counter: 0,
                root,
            });
        }
        for (counter, bytes) in (0u64..).zip(input.chunks(CHUNK_LEN)) {
            chunks.push(Chunk {
                bytes,
                counter,
                root,
            });
        }
    }
    first.push(chunks.len());
    let cvs = compress_chunks(key, &chunks);
    let mode = Mode::KeyedHash(key);
    first
        .windows(2)
        .map(|span| {
            let cvs = &cvs[span[0]..span[1]];
            if let [only] = cvs {
                return *only;
            }
            let left = left_chunks(cvs.len());
            let (l, r) = (subtree(&cvs[..left], mode), subtree(&cvs[left..], mode));
            *merge_subtrees_root(&l, &r, mode).as_bytes()
        })
        .collect()
}

/// The chaining value of a non-root subtree of chunk chaining values.
fn subtree(cvs: &[ChainingValue], mode: Mode) -> ChainingValue {
    if let [only] = cvs {
        return *only;
    }
    let left = left_chunks(cvs.len());
    let (l, r) = (subtree(&cvs[..left], mode), subtree(&cvs[left..], mode));
    merge_subtrees_non_root(&l, &r, mode)
}

/// Chunks in the left subtree of `n >= 2` chunks: the largest power of two below `n`.
fn left_chunks(n: usize) -> usize {
    1 << (usize::BITS - 1 - (n - 1).leading_zeros())
}

/// The chaining value of every chunk (for a root chunk, its input's digest),
/// in order. Chunks of as many blocks go through the lanes together, so few
/// lanes idle.
fn compress_chunks(key: &[u8; 32], chunks: &[Chunk<'_>]) -> Vec<ChainingValue> {
    let mut order: Vec<usize> = (0..chunks.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(chunks[i].blocks()));
    let mut out = vec![[0u8; 32]; chunks.len()];
    for group in order.chunks(LANES) {
        let mut lanes = [Chunk {
            bytes: &[],
            counter: 0,
            root: false,
        }; LANES];
        for (lane, &i) in lanes.iter_mut().zip(group) {
            *lane = chunks[i];
        }
        let cvs = compress_group(key, &lanes[..group.len()]);
        for (&i, cv) in group.iter().zip(cvs) {
            out[i] = cv;
        }
    }
    out
}

/// The chaining values of up to [`LANES`] chunks (lanes past `lanes.len()`
/// are left zero): side by side where the CPU has AVX2, else one at a time.
fn compress_group(key: &[u8; 32], lanes: &[Chunk<'_>]) -> [ChainingValue; LANES] {
    #[cfg(target_arch = "x86_64")]
    if lanes_available() {
        // SAFETY: the CPU was just seen to have AVX2, the one feature the
        // function is compiled for.
        #[allow(unsafe_code)]
        return unsafe { avx2::compress_group(key, lanes) };
    }
    let mut out = [[0; 32]; LANES];
    for (cv, chunk) in out.iter_mut().zip(lanes) {
        *cv = chunk.alone(key);
    }
    out
}

/// The AVX2 kernel: the state's sixteen words each one register of eight
/// lanes, the blocks' words transposed into the same form.
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::{
        __m256i, _mm256_add_epi32, _mm256_blendv_epi8, _mm256_extract_epi32, _mm256_loadu_si256,
        _mm256_or_si256, _mm256_permute2x128_si256, _mm256_set1_epi32, _mm256_setr_epi32,
        _mm256_setr_epi8, _mm256_shuffle_epi8, _mm256_slli_epi32, _mm256_srli_epi32,
        _mm256_unpackhi_epi32, _mm256_unpackhi_epi64, _mm256_unpacklo_epi32, _mm256_unpacklo_epi64,
        _mm256_xor_si256,
    };

    use super::{ChainingValue, Chunk, BLOCK_LEN, LANES};

    // BLAKE3's domain flags (the BLAKE3 paper, §2.1).
    const CHUNK_START: u32 = 1;
    const CHUNK_END: u32 = 2;
    const ROOT: u32 = 8;
    const KEYED_HASH: u32 = 16;

    const IV: [u32; 8] = [
        0x6A09_E667,
        0xBB67_AE85,
        0x3C6E_F372,
        0xA54F_F53A,
        0x510E_527F,
        0x9B05_688C,
        0x1F83_D9AB,
        0x5BE0_CD19,
    ];

    /// The message word order of each of the seven rounds.
    const SCHEDULE: [[usize; 16]; 7] = [
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
        [2, 6, 3, 10, 7, 0, 4, 13, 1, 11, 12, 5, 9, 14, 15, 8],
        [3, 4, 10, 12, 13, 2, 7, 14, 6, 5, 9, 0, 11, 15, 8, 1],
        [10, 7, 12, 9, 14, 3, 13, 15, 4, 0, 11, 2, 5, 8, 1, 6],
        [12, 13, 9, 11, 15, 10, 14, 8, 7, 2, 5, 3, 0, 1, 6, 4],
        [9, 14, 11, 5, 8, 12, 15, 1, 13, 3, 0, 10, 2, 6, 4, 7],
        [11, 15, 5, 0, 1, 9, 8, 6, 14, 10, 2, 12, 3, 4, 7, 13],
    ];

    /// One word of every lane.
    type Words = [u32; LANES];

    /// Block `b` of every lane: its 64 bytes (zero-padded past a short chunk's
    /// end, zeros for a lane with no block `b`), its length and flags, and
    /// whether the lane has such a block.
    struct Blocks<'a> {
        bytes: [&'a [u8; BLOCK_LEN]; LANES],
        len: Words,
        flags: Words,
        active: [bool; LANES],
    }

    const ZERO_BLOCK: [u8; BLOCK_LEN] = [0; BLOCK_LEN];

    impl<'a> Blocks<'a> {
        fn of(lanes: &[Chunk<'a>], b: usize, padded: &'a mut [[u8; BLOCK_LEN]; LANES]) -> Self {
            let mut out = Blocks {
                bytes: [&ZERO_BLOCK; LANES],
                len: [0; LANES],
                flags: [0; LANES],
                active: [false; LANES],
            };
            for ((l, chunk), pad) in lanes.iter().enumerate().zip(padded.iter_mut()) {
                if b >= chunk.blocks() {
                    continue;
                }
                out.active[l] = true;
                let rest = &chunk.bytes[(b * BLOCK_LEN).min(chunk.bytes.len())..];
                out.bytes[l] = if let Some(block) = rest.first_chunk::<BLOCK_LEN>() {
                    block
                } else {
                    *pad = ZERO_BLOCK;
                    pad[..rest.len()].copy_from_slice(rest);
                    pad
                };
                out.len[l] = rest.len().min(BLOCK_LEN) as u32;
                out.flags[l] = KEYED_HASH;
                if b == 0 {
                    out.flags[l] |= CHUNK_START;
                }
                if b + 1 == chunk.blocks() {
                    out.flags[l] |= CHUNK_END | if chunk.root { ROOT } else { 0 };
                }
            }
            out
        }
    }

    /// The chunks' counters, split into their low and high words.
    fn counters(lanes: &[Chunk<'_>]) -> (Words, Words) {
        let mut low: Words = [0; LANES];
        let mut high: Words = [0; LANES];
        for (l, chunk) in lanes.iter().enumerate() {
            low[l] = chunk.counter as u32;
            high[l] = (chunk.counter >> 32) as u32;
        }
        (low, high)
    }

    /// A chaining value's bytes from its words.
    fn cv_bytes(words: Words) -> ChainingValue {
        let mut out = [0u8; 32];
        for (bytes, w) in out.chunks_exact_mut(4).zip(words) {
            bytes.copy_from_slice(&w.to_le_bytes());
        }
        out
    }

    #[target_feature(enable = "avx2")]
    pub fn compress_group(key: &[u8; 32], lanes: &[Chunk<'_>]) -> [ChainingValue; LANES] {
        let key: [u32; 8] = std::array::from_fn(|i| {
            u32::from_le_bytes([key[4 * i], key[4 * i + 1], key[4 * i + 2], key[4 * i + 3]])
        });
        let most = lanes.iter().map(Chunk::blocks).max().unwrap_or(0);
        let mut cv: [__m256i; 8] = std::array::from_fn(|w| splat(key[w]));
        let (low, high) = counters(lanes);
        let (low, high) = (vector(low), vector(high));
        let mut padded = [ZERO_BLOCK; LANES];
        for b in 0..most {
            let blocks = Blocks::of(lanes, b, &mut padded);
            let m = transposed(&blocks.bytes);
            let mut v = [
                cv[0],
                cv[1],
                cv[2],
                cv[3],
                cv[4],
                cv[5],
                cv[6],
                cv[7],
                splat(IV[0]),
                splat(IV[1]),
                splat(IV[2]),
                splat(IV[3]),
                low,
                high,
                vector(blocks.len),
                vector(blocks.flags),
            ];
            round::<0>(&mut v, &m);
            round::<1>(&mut v, &m);
            round::<2>(&mut v, &m);
            round::<3>(&mut v, &m);
            round::<4>(&mut v, &m);
            round::<5>(&mut v, &m);
            round::<6>(&mut v, &m);
            let active = vector(blocks.active.map(|a| if a { u32::MAX } else { 0 }));
            for w in 0..8 {
                cv[w] = _mm256_blendv_epi8(cv[w], _mm256_xor_si256(v[w], v[w + 8]), active);
            }
        }
        let rows = transpose(cv);
        std::array::from_fn(|l| {
            if l < lanes.len() {
                cv_bytes(words(rows[l]))
            } else {
                [0; 32]
            }
        })
    }

    #[target_feature(enable = "avx2")]
    fn splat(word: u32) -> __m256i {
        _mm256_set1_epi32(word.cast_signed())
    }

    #[target_feature(enable = "avx2")]
    fn vector(w: Words) -> __m256i {
        let w = w.map(u32::cast_signed);
        _mm256_setr_epi32(w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7])
    }

    #[target_feature(enable = "avx2")]
    fn words(x: __m256i) -> Words {
        [
            _mm256_extract_epi32::<0>(x),
            _mm256_extract_epi32::<1>(x),
            _mm256_extract_epi32::<2>(x),
            _mm256_extract_epi32::<3>(x),
            _mm256_extract_epi32::<4>(x),
            _mm256_extract_epi32::<5>(x),
            _mm256_extract_epi32::<6>(x),
            _mm256_extract_epi32::<7>(x),
        ]
        .map(i32::cast_unsigned)
    }

    /// The sixteen message words of every lane's block, word `w` of lane `l`
    /// in lane `l` of register `w`.
    #[target_feature(enable = "avx2")]
    fn transposed(blocks: &[&[u8; BLOCK_LEN]; LANES]) -> [__m256i; 16] {
        // SAFETY: each load reads 32 bytes at offset 0 or 32 of a 64-byte
        // block; `loadu` needs no alignment.
        #[allow(unsafe_code)]
        let half = |o: usize| -> [__m256i; 8] {
            std::array::from_fn(|l| unsafe {
                _mm256_loadu_si256(blocks[l][o..o + 32].as_ptr().cast())
            })
        };
        let (low, high) = (transpose(half(0)), transpose(half(32)));
        std::array::from_fn(|w| if w < 8 { low[w] } else { high[w - 8] })
    }

    /// The 8x8 transpose of 32-bit words: word `j` of row `i` becomes word `i` of row `j`.
    #[target_feature(enable = "avx2")]
    fn transpose(rows: [__m256i; 8]) -> [__m256i; 8] {
        // Pairs of rows interleaved by word, then by pairs of words...
        let pairs: [__m256i; 8] = std::array::from_fn(|i| {
            let (a, b) = (rows[2 * (i / 2)], rows[2 * (i / 2) + 1]);
            if i % 2 == 0 {
                _mm256_unpacklo_epi32(a, b)
            } else {
                _mm256_unpackhi_epi32(a, b)
            }
        });
        // ...then by quads of words (rows 0-3 in quads[0..4], rows 4-7 in quads[4..8])...
        let quads: [__m256i; 8] = std::array::from_fn(|i| {
            let base = 4 * (i / 4);
            let (a, b) = (pairs[base + (i % 4) / 2], pairs[base + 2 + (i % 4) / 2]);
            if i % 2 == 0 {
                _mm256_unpacklo_epi64(a, b)
            } else {
                _mm256_unpackhi_epi64(a, b)
            }
        });
        // ...then the 128-bit halves: words 0-3 from the low halves, 4-7 from the high.
        std::array::from_fn(|j| {
            let (a, b) = (quads[j % 4], quads[4 + j % 4]);
            if j < 4 {
                _mm256_permute2x128_si256::<0x20>(a, b)
            } else {
                _mm256_permute2x128_si256::<0x31>(a, b)
            }
        })
    }

    /// Round `R`, written out per round so that its word order is constant.
    #[target_feature(enable = "avx2")]
    fn round<const R: usize>(v: &mut [__m256i; 16], m: &[__m256i; 16]) {
        let s = &SCHEDULE[R];
        g(v, [0, 4, 8, 12], m[s[0]], m[s[1]]);
        g(v, [1, 5, 9, 13], m[s[2]], m[s[3]]);
        g(v, [2, 6, 10, 14], m[s[4]], m[s[5]]);
        g(v, [3, 7, 11, 15], m[s[6]], m[s[7]]);
        g(v, [0, 5, 10, 15], m[s[8]], m[s[9]]);
        g(v, [1, 6, 11, 12], m[s[10]], m[s[11]]);
        g(v, [2, 7, 8, 13], m[s[12]], m[s[13]]);
        g(v, [3, 4, 9, 14], m[s[14]], m[s[15]]);
    }

    /// BLAKE3's quarter-round `G` on state words `abcd`, in every lane (the
    /// names are the BLAKE3 paper's).
    #[allow(clippy::many_single_char_names)]
    #[target_feature(enable = "avx2")]
    fn g(v: &mut [__m256i; 16], [a, b, c, d]: [usize; 4], x: __m256i, y: __m256i) {
        v[a] = _mm256_add_epi32(_mm256_add_epi32(v[a], v[b]), x);
        v[d] = rotr_bytes::<2>(_mm256_xor_si256(v[d], v[a]));
        v[c] = _mm256_add_epi32(v[c], v[d]);
        v[b] = rotr_bits::<12, 20>(_mm256_xor_si256(v[b], v[c]));
        v[a] = _mm256_add_epi32(_mm256_add_epi32(v[a], v[b]), y);
        v[d] = rotr_bytes::<1>(_mm256_xor_si256(v[d], v[a]));
        v[c] = _mm256_add_epi32(v[c], v[d]);
        v[b] = rotr_bits::<7, 25>(_mm256_xor_si256(v[b], v[c]));
    }

    /// Each 32-bit word rotated right by `BYTES` whole bytes: a byte shuffle
    /// within each word.
    #[target_feature(enable = "avx2")]
    fn rotr_bytes<const BYTES: usize>(x: __m256i) -> __m256i {
        let o: [i8; 32] = std::array::from_fn(|i| (i % 16 / 4 * 4 + (i % 4 + BYTES) % 4) as i8);
        let order = _mm256_setr_epi8(
            o[0], o[1], o[2], o[3], o[4], o[5], o[6], o[7], o[8], o[9], o[10], o[11], o[12], o[13],
            o[14], o[15], o[16], o[17], o[18], o[19], o[20], o[21], o[22], o[23], o[24], o[25],
            o[26], o[27], o[28], o[29], o[30], o[31],
        );
        _mm256_shuffle_epi8(x, order)
    }

    /// Each 32-bit word rotated right by `RIGHT` bits (`LEFT` is 32 - `RIGHT`).
    #[target_feature(enable = "avx2")]
    fn rotr_bits<const RIGHT: i32, const LEFT: i32>(x: __m256i) -> __m256i {
        _mm256_or_si256(_mm256_srli_epi32::<RIGHT>(x), _mm256_slli_epi32::<LEFT>(x))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: [u8; 32] = *b"thinkseal lanes test key 32 byte";

    fn input(len: usize, seed: u8) -> Vec<u8> {
        (0..len)
            .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
            .collect()
    }

    fn one_at_a_time(inputs: &[&[u8]]) -> Vec<[u8; 32]> {
        inputs
            .iter()
            .map(|i| *blake3::keyed_hash(&KEY, i).as_bytes())
            .collect()
    }

    #[test]
    fn every_length_around_the_block_and_chunk_bounds() {
        let mut lens: Vec<usize> = (0..=130).collect();
        for bound in [1024, 2048, 3072, 4096, 5120, 8192, 9216] {
            lens.extend(bound - 66..=bound + 66);
        }
        let owned: Vec<Vec<u8>> = lens
            .iter()
            .enumerate()
            .map(|(i, &n)| input(n, i as u8))
            .collect();
        let inputs: Vec<&[u8]> = owned.iter().map(Vec::as_slice).collect();
        assert_eq!(keyed_hash_many(&KEY, &inputs), one_at_a_time(&inputs));
        // The same inputs in another order share the lanes with other neighbours.
        let reversed: Vec<&[u8]> = inputs.iter().rev().copied().collect();
        assert_eq!(keyed_hash_many(&KEY, &reversed), one_at_a_time(&reversed));
    }

    #[test]
    fn through_the_lanes_even_for_one_input() {
        // keyed_hash_many takes the lanes from MIN_INPUTS inputs on; here
        // they are taken for every batch (one at a time without AVX2).
        let owned: Vec<Vec<u8>> = [0, 1, 64, 65, 700, 1024, 1025, 3000, 70_000]
            .iter()
            .map(|&n| input(n, 3))
            .collect();
        let inputs: Vec<&[u8]> = owned.iter().map(Vec::as_slice).collect();
        assert_eq!(through_lanes(&KEY, &inputs), one_at_a_time(&inputs));
        assert_eq!(
            through_lanes(&KEY, &inputs[4..5]),
            one_at_a_time(&inputs[4..5])
        );
    }

    #[test]
    fn each_lane_gives_its_chunk_computed_alone() {
        // Lanes of every length class, counters past 32 bits, root and not,
        // and groups of fewer than LANES chunks.
        let owned: Vec<Vec<u8>> = [0, 1, 63, 64, 65, 640, 1000, 1024]
            .iter()
            .map(|&n| input(n, 9))
            .collect();
        for take in 1..=LANES {
            let lanes: Vec<Chunk<'_>> = owned
                .iter()
                .take(take)
                .enumerate()
                .map(|(i, bytes)| Chunk {
                    bytes,
                    counter: if i % 3 == 0 {
                        0
                    } else {
                        (i as u64) << (4 + 5 * i)
                    },
                    root: i % 3 == 0,
                })
                .collect();
            let cvs = compress_group(&KEY, &lanes);
            for (l, chunk) in lanes.iter().enumerate() {
                assert_eq!(cvs[l], chunk.alone(&KEY), "lane {l} of {take}");
            }
            assert!(cvs[take..].iter().all(|cv| *cv == [0; 32]));
        }
    }

    #[test]
    fn left_subtrees_are_the_largest_power_of_two_below() {
        let seen: Vec<usize> = (2..=9).map(left_chunks).collect();
        assert_eq!(seen, [1, 2, 2, 4, 4, 4, 4, 8]);
    }
}
