//! UTF-8 from the code units `CPython` keeps a `str`'s text in: one byte a
//! unit (Latin-1), two (UCS-2) or four (UCS-4). The bindings read a string's
//! storage in place and write its UTF-8 straight into an encoding with these.
//!
//! `CPython` never pairs surrogates inside a `str` ("\ud83c\udf27" is two
//! lone surrogates, not U+1F327, which is stored as one UCS-4 unit), so
//! every surrogate is refused, as `str.encode()` refuses it.
//!
//! Latin-1 and UCS-2 text is transcoded a block of units at a time where the
//! CPU allows. Each unit is widened to 32 bits and its one-, two- and
//! three-byte forms are computed side by side, the right one picked by
//! compare; then the bytes are packed together:
//!
//! - with AVX-512 (VBMI2, so Ice Lake and later, Zen 4 and later), sixteen
//!   units a block, by one byte compress under a mask of the bytes each
//!   unit has;
//! - with AVX2, eight units a block, four at a time by a shuffle from a
//!   table indexed by their lengths.
//!
//! Mixed text (a few accented letters or CJK characters among ASCII)
//! changes a unit's length every few units, which a unit-by-unit loop pays
//! for in mispredicted branches. The portable loop stays for other CPUs and
//! for the last few units. Measured in docs/performance.md.

/// The text holds a surrogate code unit or a value past U+10FFFF (no UTF-8 form).
#[derive(Debug, PartialEq, Eq)]
pub struct LoneSurrogate;

/// Bytes a block may write past the UTF-8 of the units before it: an
/// AVX-512 block stores 64 bytes (of 16 to 48), an AVX2 block's second
/// 16-byte store starts up to 12 bytes in.
const SLACK: usize = 64;

/// Appends the UTF-8 of Latin-1 `units` to `out` (never an error: no
/// Latin-1 unit is a surrogate; the `Result` is the other kinds').
pub fn latin1(units: &[u8], out: &mut Vec<u8>) -> Result<(), LoneSurrogate> {
    write(Kind::Latin1(units), units.len() * 2, out)
}

/// Appends the UTF-8 of UCS-2 `units` to `out`; on an error `out` is left as it was.
pub fn ucs2(units: &[u16], out: &mut Vec<u8>) -> Result<(), LoneSurrogate> {
    write(Kind::Ucs2(units), units.len() * 3, out)
}

/// Appends the UTF-8 of UCS-4 `points` to `out`; on an error `out` is left as it was.
pub fn ucs4(points: &[u32], out: &mut Vec<u8>) -> Result<(), LoneSurrogate> {
    write(Kind::Ucs4(points), points.len() * 4, out)
}

/// The units of a string, as it stores them.
#[derive(Clone, Copy)]
enum Kind<'a> {
    Latin1(&'a [u8]),
    Ucs2(&'a [u16]),
    Ucs4(&'a [u32]),
}

/// Appends the UTF-8 of `units` to `out`, written by index into `room`
/// bytes (enough for the longest UTF-8 the units can have) and [`SLACK`],
/// then cut to what was written: per-byte pushes cost 2-3x more.
fn write(units: Kind<'_>, room: usize, out: &mut Vec<u8>) -> Result<(), LoneSurrogate> {
    write_with(blocks, units, room, out)
}

/// The whole blocks' loop [`write`] runs ([`blocks`]; the tests run each).
type Blocks = fn(Kind<'_>, &mut [u8], usize) -> Result<(usize, usize), LoneSurrogate>;

/// [`write`] with the given loop over whole blocks.
fn write_with(
    blocks: Blocks,
    units: Kind<'_>,
    room: usize,
    out: &mut Vec<u8>,
) -> Result<(), LoneSurrogate> {
    let start = out.len();
    out.resize(start + room + SLACK, 0);
    let written = blocks(units, out, start).and_then(|(done, n)| match units {
        Kind::Latin1(units) => put_points(out, n, units[done..].iter().map(|&u| u32::from(u))),
        Kind::Ucs2(units) => put_points(out, n, units[done..].iter().map(|&u| u32::from(u))),
        Kind::Ucs4(points) => put_points(out, n, points[done..].iter().copied()),
    });
    match written {
        Ok(n) => {
            out.truncate(n);
            Ok(())
        }
        Err(e) => {
            out.truncate(start);
            Err(e)
        }
    }
}

/// Transcodes the whole blocks of `units` into `out` from `at` on: how many
/// units were done and where their UTF-8 ends. `out` must have room for
/// four bytes a unit (three for UCS-2, two for Latin-1) and [`SLACK`] after
/// `at`. The widest loop this CPU has: AVX-512, AVX2, else the portable one.
fn blocks(units: Kind<'_>, out: &mut [u8], at: usize) -> Result<(usize, usize), LoneSurrogate> {
    avx512_blocks(units, out, at)
        .or_else(|| avx2_blocks(units, out, at))
        .unwrap_or_else(|| portable_blocks(units, out, at))
}

/// [`blocks`] with AVX-512 (16 units a block), if this CPU has it.
#[cfg_attr(not(target_arch = "x86_64"), allow(unused_variables))]
fn avx512_blocks(
    units: Kind<'_>,
    out: &mut [u8],
    at: usize,
) -> Option<Result<(usize, usize), LoneSurrogate>> {
    #[cfg(target_arch = "x86_64")]
    if avx512::detected() {
        // SAFETY: the CPU was just seen to have every feature the functions
        // are compiled for. Measured reason: see docs/performance.md.
        #[allow(unsafe_code)]
        return Some(match units {
            Kind::Latin1(units) => Ok(unsafe { avx512::latin1(units, out, at) }),
            Kind::Ucs2(units) => unsafe { avx512::ucs2(units, out, at) },
            Kind::Ucs4(_) => Ok((0, at)),
        });
    }
    None
}

/// [`blocks`] with AVX2 (8 units a block), if this CPU has it.
#[cfg_attr(not(target_arch = "x86_64"), allow(unused_variables))]
fn avx2_blocks(
    units: Kind<'_>,
    out: &mut [u8],
    at: usize,
) -> Option<Result<(usize, usize), LoneSurrogate>> {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU was just seen to have AVX2, the one feature the
        // functions are compiled for. Measured reason: see the module's
        // documentation and docs/performance.md.
        #[allow(unsafe_code)]
        return Some(match units {
            Kind::Latin1(units) => Ok(unsafe { avx2::latin1(units, out, at) }),
            Kind::Ucs2(units) => unsafe { avx2::ucs2(units, out, at) },
            Kind::Ucs4(_) => Ok((0, at)),
        });
    }
    None
}

/// [`blocks`] without AVX2: four UCS-2 units at a time, copied as they are
/// when all four are ASCII, else one by one; other kinds are left to the
/// unit-by-unit loop.
fn portable_blocks(
    units: Kind<'_>,
    out: &mut [u8],
    at: usize,
) -> Result<(usize, usize), LoneSurrogate> {
    let mut n = at;
    let done = match units {
        Kind::Latin1(_) | Kind::Ucs4(_) => 0,
        Kind::Ucs2(units) => {
            for quad in units.chunks_exact(4) {
                if (quad[0] | quad[1] | quad[2] | quad[3]) < 0x80 {
                    for (k, &u) in quad.iter().enumerate() {
                        out[n + k] = u as u8;
                    }
                    n += 4;
                } else {
                    for &u in quad {
                        n = put_point(out, n, u32::from(u))?;
                    }
                }
            }
            units.len() / 4 * 4
        }
    };
    Ok((done, n))
}

/// Writes the UTF-8 of `points` at `out[n..]`, one by one; where it ends.
fn put_points(
    out: &mut [u8],
    mut n: usize,
    points: impl Iterator<Item = u32>,
) -> Result<usize, LoneSurrogate> {
    for p in points {
        n = put_point(out, n, p)?;
    }
    Ok(n)
}

/// Writes the UTF-8 of `p` at `out[n..]`; where the next one goes.
///
/// Always inlined: as a call (which the compiler chose for `#[inline]`), a
/// 1.6 KB non-ASCII string took 1.83-1.98 us to write as JSON instead of
/// 1.07-1.18 (see docs/performance.md).
#[allow(clippy::inline_always)]
#[inline(always)]
fn put_point(out: &mut [u8], n: usize, p: u32) -> Result<usize, LoneSurrogate> {
    Ok(match p {
        0..=0x7F => {
            out[n] = p as u8;
            n + 1
        }
        0x80..=0x7FF => {
            out[n] = 0xC0 | (p >> 6) as u8;
            out[n + 1] = 0x80 | (p & 0x3F) as u8;
            n + 2
        }
        0xD800..=0xDFFF | 0x11_0000.. => return Err(LoneSurrogate),
        0x800..=0xFFFF => {
            out[n] = 0xE0 | (p >> 12) as u8;
            out[n + 1] = 0x80 | ((p >> 6) & 0x3F) as u8;
            out[n + 2] = 0x80 | (p & 0x3F) as u8;
            n + 3
        }
        _ => {
            out[n] = 0xF0 | (p >> 18) as u8;
            out[n + 1] = 0x80 | ((p >> 12) & 0x3F) as u8;
            out[n + 2] = 0x80 | ((p >> 6) & 0x3F) as u8;
            out[n + 3] = 0x80 | (p & 0x3F) as u8;
            n + 4
        }
    })
}

/// The two- and three-byte UTF-8 of each 32-bit lane of `$w`, the first
/// byte in the lane's lowest: `(110xxxxx 10xxxxxx, 1110xxxx 10xxxxxx
/// 10xxxxxx)`. The same steps for either vector width, given its
/// intrinsics (broadcast, and, or, shifts right and left).
#[cfg(target_arch = "x86_64")]
macro_rules! two_and_three_byte_forms {
    ($w:expr, $set1:ident, $and:ident, $or:ident, $srli:ident, $slli:ident) => {{
        let w = $w;
        let low6 = $or($and(w, $set1(0x3F)), $set1(0x80));
        let mid6 = $or($and($srli::<6>(w), $set1(0x3F)), $set1(0x80));
        let two = $or($or($srli::<6>(w), $set1(0xC0)), $slli::<8>(low6));
        let three = $or(
            $or($srli::<12>(w), $set1(0xE0)),
            $or($slli::<8>(mid6), $slli::<16>(low6)),
        );
        (two, three)
    }};
}

/// Unaligned 16-byte loads and stores and the prefetch hint, SSE2 (which
/// every x86-64 CPU has), shared by both kernels.
#[cfg(target_arch = "x86_64")]
mod sse2 {
    use std::arch::x86_64::{
        __m128i, _mm_loadu_si128, _mm_prefetch, _mm_storeu_si128, _MM_HINT_T0,
    };

    /// 16 bytes as a vector.
    pub(super) fn load(bytes: &[u8; 16]) -> __m128i {
        // SAFETY: the 16 bytes of `bytes` are read; `loadu` needs no alignment.
        #[allow(unsafe_code)]
        unsafe {
            _mm_loadu_si128(bytes.as_ptr().cast())
        }
    }

    /// Eight UCS-2 units as a vector.
    pub(super) fn load_units(units: &[u16; 8]) -> __m128i {
        // SAFETY: the 16 bytes of `units` are read; `loadu` needs no alignment.
        #[allow(unsafe_code)]
        unsafe {
            _mm_loadu_si128(units.as_ptr().cast())
        }
    }

    /// How far ahead of the block being read the text is asked for.
    const AHEAD: usize = 512;

    /// Asks for the cache line [`AHEAD`] bytes past the start of `block`.
    /// Measured reason: a fresh string's text is not in the caches, and the
    /// processor's own prefetch did not keep up; the cold digests of 2,100
    /// fresh non-ASCII messages took 2.68-2.75 us a message on one thread
    /// without it, 2.47-2.51 with it at 256, 512 or 1,024 bytes (1.77
    /// against 1.51-1.55 on two threads; see docs/performance.md).
    #[target_feature(enable = "sse")]
    pub(super) fn prefetch_ahead<T>(block: &[T]) {
        // A hint: it reads nothing into the program and never faults,
        // whatever the address (here maybe past the text).
        _mm_prefetch::<_MM_HINT_T0>(block.as_ptr().cast::<i8>().wrapping_add(AHEAD));
    }

    /// Stores the 16 bytes of `v` in the first 16 of `dst`.
    pub(super) fn store(dst: &mut [u8], v: __m128i) {
        let dst: &mut [u8; 16] = (&mut dst[..16]).try_into().expect("16 bytes");
        // SAFETY: the 16 bytes of `dst` are written; `storeu` needs no alignment.
        #[allow(unsafe_code)]
        unsafe {
            _mm_storeu_si128(dst.as_mut_ptr().cast(), v);
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use std::arch::x86_64::{
        __m256i, __m512i, _mm256_and_si256, _mm256_cmpeq_epi16_mask, _mm256_cvtepi16_epi8,
        _mm256_loadu_si256, _mm256_set1_epi16, _mm256_test_epi16_mask, _mm512_and_si512,
        _mm512_cmpgt_epu32_mask, _mm512_cvtepu16_epi32, _mm512_cvtepu8_epi32,
        _mm512_mask_blend_epi32, _mm512_maskz_compress_epi8, _mm512_or_si512, _mm512_set1_epi32,
        _mm512_slli_epi32, _mm512_srli_epi32, _mm512_storeu_si512, _mm_movemask_epi8, _pdep_u64,
    };

    use super::sse2::{load, prefetch_ahead, store};
    use super::LoneSurrogate;

    /// Whether this CPU has every feature the functions here are compiled for.
    pub(super) fn detected() -> bool {
        std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("avx512bw")
            && std::is_x86_feature_detected!("avx512vl")
            && std::is_x86_feature_detected!("avx512vbmi2")
            && std::is_x86_feature_detected!("bmi2")
            && std::is_x86_feature_detected!("popcnt")
    }

    /// Writes the UTF-8 of sixteen units (each in a 32-bit lane of `w`, none
    /// a surrogate) at `out[n..]`; how many bytes it has. Stores 64 bytes.
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vbmi2,bmi2,popcnt")]
    fn put16(w: __m512i, out: &mut [u8], n: usize) -> usize {
        let (two, three) = two_and_three_byte_forms!(
            w,
            _mm512_set1_epi32,
            _mm512_and_si512,
            _mm512_or_si512,
            _mm512_srli_epi32,
            _mm512_slli_epi32
        );
        let wide = _mm512_cmpgt_epu32_mask(w, _mm512_set1_epi32(0x7F));
        let wider = _mm512_cmpgt_epu32_mask(w, _mm512_set1_epi32(0x7FF));
        let forms = _mm512_mask_blend_epi32(wider, _mm512_mask_blend_epi32(wide, w, two), three);
        // Each lane's first byte, its second when it is 0x80 or more, its
        // third when 0x800 or more: bits 4k, 4k + 1 and 4k + 2 for lane k.
        let keep = 0x1111_1111_1111_1111
            | _pdep_u64(u64::from(wide), 0x2222_2222_2222_2222)
            | _pdep_u64(u64::from(wider), 0x4444_4444_4444_4444);
        store64(&mut out[n..n + 64], _mm512_maskz_compress_epi8(keep, forms));
        keep.count_ones() as usize
    }

    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vbmi2,bmi2,popcnt")]
    fn store64(dst: &mut [u8], v: __m512i) {
        let dst: &mut [u8; 64] = dst.try_into().expect("64 bytes");
        // SAFETY: the 64 bytes of `dst` are written; `storeu` needs no alignment.
        #[allow(unsafe_code)]
        unsafe {
            _mm512_storeu_si512(dst.as_mut_ptr().cast(), v);
        }
    }

    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vbmi2,bmi2,popcnt")]
    fn load_units(units: &[u16; 16]) -> __m256i {
        // SAFETY: the 32 bytes of `units` are read; `loadu` needs no alignment.
        #[allow(unsafe_code)]
        unsafe {
            _mm256_loadu_si256(units.as_ptr().cast())
        }
    }

    /// [`super::blocks`] of UCS-2 units with AVX-512, sixteen at a time.
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vbmi2,bmi2,popcnt")]
    pub(super) fn ucs2(
        units: &[u16],
        out: &mut [u8],
        at: usize,
    ) -> Result<(usize, usize), LoneSurrogate> {
        let mut n = at;
        let past_ascii = _mm256_set1_epi16(0xFF80_u16.cast_signed());
        let surrogate_bits = _mm256_set1_epi16(0xF800_u16.cast_signed());
        let surrogate = _mm256_set1_epi16(0xD800_u16.cast_signed());
        for block in units.chunks_exact(16) {
            prefetch_ahead(block);
            let v = load_units(block.try_into().expect("sixteen units"));
            if _mm256_test_epi16_mask(v, past_ascii) == 0 {
                store(&mut out[n..], _mm256_cvtepi16_epi8(v));
                n += 16;
                continue;
            }
            if _mm256_cmpeq_epi16_mask(_mm256_and_si256(v, surrogate_bits), surrogate) != 0 {
                return Err(LoneSurrogate);
            }
            n += put16(_mm512_cvtepu16_epi32(v), out, n);
        }
        Ok((units.len() / 16 * 16, n))
    }

    /// [`super::blocks`] of Latin-1 units with AVX-512, sixteen at a time.
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vbmi2,bmi2,popcnt")]
    pub(super) fn latin1(units: &[u8], out: &mut [u8], at: usize) -> (usize, usize) {
        let mut n = at;
        for block in units.chunks_exact(16) {
            prefetch_ahead(block);
            let v = load(block.try_into().expect("sixteen units"));
            if _mm_movemask_epi8(v) == 0 {
                out[n..n + 16].copy_from_slice(block);
                n += 16;
                continue;
            }
            n += put16(_mm512_cvtepu8_epi32(v), out, n);
        }
        (units.len() / 16 * 16, n)
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::{
        __m256i, _mm256_and_si256, _mm256_blendv_epi8, _mm256_castsi128_si256, _mm256_castsi256_ps,
        _mm256_castsi256_si128, _mm256_cmpgt_epi32, _mm256_cvtepu16_epi32, _mm256_cvtepu8_epi32,
        _mm256_extracti128_si256, _mm256_inserti128_si256, _mm256_movemask_ps, _mm256_or_si256,
        _mm256_set1_epi32, _mm256_shuffle_epi8, _mm256_slli_epi32, _mm256_srli_epi32,
        _mm_and_si128, _mm_cmpeq_epi16, _mm_cvtsi64_si128, _mm_movemask_epi8, _mm_packus_epi16,
        _mm_set1_epi16, _mm_testz_si128,
    };

    use super::sse2::{load, load_units, prefetch_ahead, store};
    use super::LoneSurrogate;

    /// For four units' lengths (bit k: unit k is 0x80 or more; bit k + 4:
    /// 0x800 or more), the shuffle that packs their UTF-8 bytes, each unit's
    /// at the start of its 32-bit lane, one after another. Index values where
    /// a unit is 0x800 or more but not 0x80 or more never occur.
    static PACK: [[u8; 16]; 256] = pack_table();

    /// For the same index, how many bytes the four units' UTF-8 has.
    static PACKED_LEN: [u8; 256] = packed_len_table();

    const fn packed_len_table() -> [u8; 256] {
        let mut table = [0_u8; 256];
        let mut index = 0;
        while index < 256 {
            table[index] = 4 + (index as u32).count_ones() as u8;
            index += 1;
        }
        table
    }

    const fn pack_table() -> [[u8; 16]; 256] {
        let mut table = [[0x80_u8; 16]; 256];
        let mut index = 0;
        while index < 256 {
            let mut at = 0;
            let mut lane = 0;
            while lane < 4 {
                let len = 1 + ((index >> lane) & 1) + ((index >> (lane + 4)) & 1);
                let mut b = 0;
                while b < len {
                    table[index][at] = (4 * lane + b) as u8;
                    at += 1;
                    b += 1;
                }
                lane += 1;
            }
            index += 1;
        }
        table
    }

    /// Writes the UTF-8 of eight units (each in a 32-bit lane of `w`, none a
    /// surrogate) at `out[n..]`; how many bytes it has. Stores 16 bytes at
    /// `n` and 16 at most 12 bytes after it.
    #[target_feature(enable = "avx2")]
    fn put8(w: __m256i, out: &mut [u8], n: usize) -> usize {
        let (two, three) = two_and_three_byte_forms!(
            w,
            _mm256_set1_epi32,
            _mm256_and_si256,
            _mm256_or_si256,
            _mm256_srli_epi32,
            _mm256_slli_epi32
        );
        let past_ascii = _mm256_cmpgt_epi32(w, _mm256_set1_epi32(0x7F));
        let past_two = _mm256_cmpgt_epi32(w, _mm256_set1_epi32(0x7FF));
        let forms = _mm256_blendv_epi8(_mm256_blendv_epi8(w, two, past_ascii), three, past_two);
        let wide = _mm256_movemask_ps(_mm256_castsi256_ps(past_ascii)).cast_unsigned() as usize;
        let wider = _mm256_movemask_ps(_mm256_castsi256_ps(past_two)).cast_unsigned() as usize;
        let low = (wide & 0xF) | ((wider & 0xF) << 4);
        let high = (wide >> 4) | ((wider >> 4) << 4);
        let packed = _mm256_shuffle_epi8(
            forms,
            _mm256_inserti128_si256::<1>(
                _mm256_castsi128_si256(load(&PACK[low])),
                load(&PACK[high]),
            ),
        );
        let first = usize::from(PACKED_LEN[low]);
        store(&mut out[n..], _mm256_castsi256_si128(packed));
        store(&mut out[n + first..], _mm256_extracti128_si256::<1>(packed));
        first + usize::from(PACKED_LEN[high])
    }

    /// [`super::blocks`] of UCS-2 units with AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) fn ucs2(
        units: &[u16],
        out: &mut [u8],
        at: usize,
    ) -> Result<(usize, usize), LoneSurrogate> {
        let mut n = at;
        let past_ascii = _mm_set1_epi16(0xFF80_u16.cast_signed());
        let surrogate_bits = _mm_set1_epi16(0xF800_u16.cast_signed());
        let surrogate = _mm_set1_epi16(0xD800_u16.cast_signed());
        for block in units.chunks_exact(8) {
            prefetch_ahead(block);
            let v = load_units(block.try_into().expect("eight units"));
            if _mm_testz_si128(v, past_ascii) == 1 {
                // All ASCII: each unit's low byte (16 bytes stored, 8 kept).
                store(&mut out[n..], _mm_packus_epi16(v, v));
                n += 8;
                continue;
            }
            let surrogates = _mm_cmpeq_epi16(_mm_and_si128(v, surrogate_bits), surrogate);
            if _mm_movemask_epi8(surrogates) != 0 {
                return Err(LoneSurrogate);
            }
            n += put8(_mm256_cvtepu16_epi32(v), out, n);
        }
        Ok((units.len() / 8 * 8, n))
    }

    /// [`super::blocks`] of Latin-1 units with AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) fn latin1(units: &[u8], out: &mut [u8], at: usize) -> (usize, usize) {
        let mut n = at;
        for block in units.chunks_exact(8) {
            prefetch_ahead(block);
            let word = u64::from_le_bytes(block.try_into().expect("eight units"));
            if word & 0x8080_8080_8080_8080 == 0 {
                out[n..n + 8].copy_from_slice(block);
                n += 8;
                continue;
            }
            let v = _mm_cvtsi64_si128(word.cast_signed());
            n += put8(_mm256_cvtepu8_epi32(v), out, n);
        }
        (units.len() / 8 * 8, n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Every whole-block loop this CPU can run (the others stand in for
    /// the portable one).
    fn loops() -> Vec<Blocks> {
        vec![
            portable_blocks,
            |units, out, at| {
                avx2_blocks(units, out, at).unwrap_or_else(|| portable_blocks(units, out, at))
            },
            |units, out, at| {
                avx512_blocks(units, out, at).unwrap_or_else(|| portable_blocks(units, out, at))
            },
        ]
    }

    /// What `str.encode()` makes of the code units: their UTF-8, or an
    /// error for any surrogate (`CPython` never pairs them) or value past U+10FFFF.
    fn expected(points: &[u32]) -> Result<Vec<u8>, LoneSurrogate> {
        let text: Option<String> = points.iter().map(|&p| char::from_u32(p)).collect();
        text.map(String::into_bytes).ok_or(LoneSurrogate)
    }

    /// Writes `points` as each kind that holds them, with each loop, after a
    /// prefix: the prefix and the expected UTF-8, or the prefix alone.
    fn check(points: &[u32]) {
        let want = expected(points);
        let prefix = b"prefix:".to_vec();
        for blocks in loops() {
            let mut kinds: Vec<(Kind<'_>, usize)> = Vec::new();
            let latin1: Vec<u8>;
            let ucs2: Vec<u16>;
            if points.iter().all(|&p| p <= 0xFF) {
                latin1 = points.iter().map(|&p| p as u8).collect();
                kinds.push((Kind::Latin1(&latin1), 2));
            }
            if points.iter().all(|&p| p <= 0xFFFF) {
                ucs2 = points.iter().map(|&p| p as u16).collect();
                kinds.push((Kind::Ucs2(&ucs2), 3));
            }
            kinds.push((Kind::Ucs4(points), 4));
            for (kind, per_unit) in kinds {
                let mut out = prefix.clone();
                let got = write_with(blocks, kind, points.len() * per_unit, &mut out);
                if let Ok(bytes) = &want {
                    assert_eq!(got, Ok(()), "{points:x?}");
                    assert_eq!(out[..prefix.len()], prefix[..]);
                    assert_eq!(out[prefix.len()..], bytes[..], "{points:x?}");
                } else {
                    assert_eq!(got, Err(LoneSurrogate), "{points:x?}");
                    assert_eq!(out, prefix, "an error leaves the buffer as it was");
                }
            }
        }
    }

    /// The code points where a unit's UTF-8 length changes, and surrogates.
    const EDGES: [u32; 14] = [
        0, 0x41, 0x7F, 0x80, 0xE9, 0xFF, 0x100, 0x7FF, 0x800, 0x6771, 0xD7FF, 0xD800, 0xDFFF,
        0xFFFF,
    ];

    #[test]
    fn each_edge_unit_at_every_place_around_the_blocks() {
        for filler in [0x61, 0xE9, 0x6771, 0xFFFF, 0x7FF] {
            for len in [0, 1, 7, 8, 9, 15, 16, 17, 31, 33, 40] {
                for at in 0..len {
                    for unit in EDGES {
                        let mut points = vec![filler; len];
                        points[at] = unit;
                        check(&points);
                    }
                }
            }
        }
        check(&[0x1_F327, 0x10_FFFF, 0x61]);
        check(&[0x11_0000]);
    }

    #[test]
    fn mixed_text_as_people_write_it() {
        let text = "lörem ipsüm dolor sit ämet — 東京の天気 ".repeat(14);
        check(&text.chars().map(u32::from).collect::<Vec<_>>());
        let text = "déjà vu à la carte, naïve café ".repeat(9);
        check(&text.chars().map(u32::from).collect::<Vec<_>>());
    }

    fn unit() -> impl Strategy<Value = u32> {
        prop_oneof![
            0..0x80_u32,
            0x80..0x100_u32,
            0x100..0x800_u32,
            0x800..0xD800_u32,
            0xE000..0x1_0000_u32,
            Just(0xD800_u32),
            0x1_0000..0x11_0000_u32,
        ]
    }

    proptest! {
        #[test]
        fn any_units_as_str_encode_writes_them(points in prop::collection::vec(unit(), 0..80)) {
            check(&points);
        }

        #[test]
        fn mostly_one_kind_of_text(base in prop::sample::select(vec![0x20_u32, 0xC0, 0x3040]),
                                   picks in prop::collection::vec(0..0x60_u32, 0..120)) {
            let points: Vec<u32> = picks.iter().map(|&p| base + p).collect();
            check(&points);
        }
    }
}
