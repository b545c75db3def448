//! Reading Python `str` objects as UTF-8 without leaving a copy behind.
//!
//! pyo3's `to_str()` (and every `&str` / `String` extraction) goes through
//! `PyUnicode_AsUTF8AndSize`, which, for any string that is not pure ASCII,
//! allocates a UTF-8 copy and keeps it inside the string object for the
//! string's lifetime: +1.2 KB per 1.6 KB non-ASCII message after one replay
//! decision. Here the text is read from the string's own storage (Latin-1,
//! UCS-2 or UCS-4 code units): ASCII text is borrowed as it is, anything else
//! is encoded into a temporary that is dropped after use, or straight into the
//! caller's buffer (`append_utf8`, how message encodings are written).

use std::borrow::Cow;

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::string::PyStringData;
use pyo3::types::PyString;
use thinkseal_core::utf8;

pub use thinkseal_core::utf8::LoneSurrogate;

/// The code units of `s`, read in place.
#[allow(unsafe_code)] // one audited block, with its SAFETY note and measured reason
fn storage<'a>(s: &'a Bound<'_, PyString>) -> Result<PyStringData<'a>, LoneSurrogate> {
    // SAFETY: `data()` decodes the string's state bitfield by hand (pyo3 tests it
    // on x86_64 and aarch64, the targets we ship); the slice it returns borrows
    // `s`, an immutable str kept alive for 'a. Measured reason (cold digests of
    // 2,100 fresh 1.6 KB non-ASCII messages, one thread): 5.2 us/msg this way,
    // 10.5-11.2 with the safe `encode_utf8()` (a temporary bytes object per
    // string, then a copy); ASCII text is read in place, with no copy at all.
    unsafe { s.data() }.map_err(|_| LoneSurrogate)
}

/// Whether `latin1`, the code units of `s`, are ASCII. `CPython` keeps a
/// compact ASCII string's text right after its `PyASCIIObject` header, and
/// every other string's text elsewhere (after the longer header of a compact
/// non-ASCII string, or in its own block for a `str` subclass's instance), so
/// where the text starts answers without reading it. Any other string is
/// scanned. Measured reason: the scan of every string the wire writer reads
/// was 2.5 % of `from_json` + `prepare`'s instructions (callgrind).
fn is_ascii(s: &Bound<'_, PyString>, latin1: &[u8]) -> bool {
    let after_header = s
        .as_ptr()
        .cast::<u8>()
        .wrapping_add(std::mem::size_of::<ffi::PyASCIIObject>());
    std::ptr::eq(latin1.as_ptr(), after_header) || latin1.is_ascii()
}

/// The UTF-8 text of `s`, borrowed when it is ASCII, without caching anything in `s`.
#[allow(unsafe_code)] // one audited block, with its SAFETY note and measured reason
pub fn utf8<'a>(s: &'a Bound<'_, PyString>) -> Result<Cow<'a, str>, LoneSurrogate> {
    if let PyStringData::Ucs1(latin1) = storage(s)? {
        if is_ascii(s, latin1) {
            // SAFETY: ASCII bytes are UTF-8 as they are, checked just above
            // (by the text's place, which rests on the layout `storage`
            // already reads, or by the scan).
            // Measured reason: `str::from_utf8` checked them a second time;
            // `_core.wire_json` of a 1.6 KB ASCII string took 0.557 us with
            // it, 0.512-0.535 without (min of 15 x 2,000 calls).
            return Ok(Cow::Borrowed(unsafe {
                std::str::from_utf8_unchecked(latin1)
            }));
        }
    }
    let mut utf8 = Vec::new();
    append_utf8(s, &mut utf8)?;
    // SAFETY: `append_utf8` writes only the UTF-8 encodings of Unicode scalar
    // values (surrogates and values past U+10FFFF are refused before a byte is
    // written), so `utf8` is valid UTF-8. Measured reason: `String::from_utf8`
    // re-validating it made a 1.6 KB non-ASCII string cost 3.3-5.7 us to read
    // instead of 2.0-2.3 (`_core.wire_json`, min of 9 x 5,000 calls).
    Ok(Cow::Owned(unsafe { String::from_utf8_unchecked(utf8) }))
}

/// Appends the UTF-8 text of `s` to `out`, transcoded straight from the
/// string's storage (no temporary; [`thinkseal_core::utf8`]): how the
/// message encoder writes text. On an error, `out` is left as it was.
pub fn append_utf8(s: &Bound<'_, PyString>, out: &mut Vec<u8>) -> Result<(), LoneSurrogate> {
    match storage(s)? {
        PyStringData::Ucs1(latin1) if is_ascii(s, latin1) => {
            out.extend_from_slice(latin1);
            Ok(())
        }
        PyStringData::Ucs1(latin1) => utf8::latin1(latin1, out),
        PyStringData::Ucs2(units) => utf8::ucs2(units, out),
        PyStringData::Ucs4(points) => utf8::ucs4(points, out),
    }
}

/// Whether `str.strip()` leaves something of `s`: certain when an ASCII
/// character other than Python's ASCII whitespace is present. A string of
/// only other characters is left to the Python path (Unicode whitespace
/// rules differ between Rust and Python).
pub fn surely_not_blank(s: &str) -> bool {
    s.bytes().any(|b| {
        b.is_ascii() && !matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | 0x1c..=0x1f)
    })
}

/// A new `str` of `s`, as `PyString::new` makes it. ASCII text (most of a
/// stored history) is copied into a fresh compact ASCII string, as `CPython`
/// does once it knows text is ASCII; other text goes through `CPython`'s
/// UTF-8 decoder. A failed allocation is the `MemoryError` it raised.
///
/// Measured reason: `PyString::new` decodes the text as UTF-8, its ASCII
/// check a loop of 8 bytes at a time, then copies it; Rust's `is_ascii`
/// and a copy cost less. `from_json` + `prepare` of 1,000 bench messages
/// took 4.76-4.95 us a message this way against 4.93-5.09 (three
/// alternating runs, the peers imported).
#[allow(unsafe_code)] // one audited block, with its SAFETY note and measured reason
pub fn new_str<'py>(py: Python<'py>, s: &str) -> PyResult<Bound<'py, PyString>> {
    if !s.is_ascii() {
        return Ok(PyString::new(py, s));
    }
    let len = ffi::Py_ssize_t::try_from(s.len())?;
    // SAFETY: the GIL is held (`py`). `PyUnicode_New(len, 127)` returns a
    // new reference to a compact ASCII string of `len` one-byte code units,
    // not yet seen by anyone else (or NULL with an exception set, which
    // `from_owned_ptr_or_err` takes); its data holds `len` bytes, into which
    // the `len` bytes of `s`, all ASCII, are copied. The empty string may
    // be a shared singleton, into which nothing is copied.
    unsafe {
        let text = Bound::from_owned_ptr_or_err(py, ffi::PyUnicode_New(len, 127))?;
        std::ptr::copy_nonoverlapping(
            s.as_ptr(),
            ffi::PyUnicode_DATA(text.as_ptr()).cast::<u8>(),
            s.len(),
        );
        Ok(text.cast_into_unchecked())
    }
}
