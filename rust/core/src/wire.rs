//! The compact JSON thinkseal puts on the wire: byte for byte what Python's
//! `json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)`
//! writes, so moving the encoding out of the stdlib changes no request body.
//!
//! Strings are escaped exactly as RFC 8785 escapes them (`"`, `\`, the five
//! short escapes, other controls as `\u00xx` in lower case, everything else
//! kept), which is also what the stdlib does with `ensure_ascii=False`; only
//! numbers differ: floats are written as Python's `repr` writes them.

use crate::jcs::{self, NonFinite};

/// A JSON string literal (the same escaping as [`jcs::write_string`]).
pub fn write_string(out: &mut Vec<u8>, s: &str) {
    jcs::write_string(out, s);
}

/// A finite float as Python's `float.__repr__` writes it: the shortest
/// round-trip digits, fixed notation for decimal exponents in (-4, 16],
/// scientific (`1e+16`, `1.5e-05`) outside, and a `.0` on integral values.
pub fn write_float(out: &mut Vec<u8>, x: f64) -> Result<(), NonFinite> {
    if !x.is_finite() {
        return Err(NonFinite);
    }
    if x.is_sign_negative() {
        out.push(b'-');
    }
    if x == 0.0 {
        out.extend_from_slice(b"0.0");
        return Ok(());
    }
    let (digits, n) = jcs::shortest_digits(x.abs());
    let k = i32::try_from(digits.len()).map_err(|_| NonFinite)?;
    if -4 < n && n <= 16 {
        if n <= 0 {
            out.extend_from_slice(b"0.");
            out.extend(std::iter::repeat_n(b'0', n.unsigned_abs() as usize));
            out.extend_from_slice(&digits);
        } else if n >= k {
            out.extend_from_slice(&digits);
            out.extend(std::iter::repeat_n(b'0', (n - k).unsigned_abs() as usize));
            out.extend_from_slice(b".0");
        } else {
            let (int_part, frac) = digits.split_at(n.unsigned_abs() as usize);
            out.extend_from_slice(int_part);
            out.push(b'.');
            out.extend_from_slice(frac);
        }
    } else {
        out.push(digits[0]);
        if k > 1 {
            out.push(b'.');
            out.extend_from_slice(&digits[1..]);
        }
        let e = n - 1;
        out.push(b'e');
        out.push(if e < 0 { b'-' } else { b'+' });
        let magnitude = e.unsigned_abs();
        if magnitude < 10 {
            out.push(b'0');
        }
        out.extend_from_slice(magnitude.to_string().as_bytes());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repr(x: f64) -> String {
        let mut out = Vec::new();
        write_float(&mut out, x).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn floats_as_python_repr() {
        // Expected values from CPython's repr().
        let cases: &[(f64, &str)] = &[
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (1.0, "1.0"),
            (-2.5, "-2.5"),
            (0.1, "0.1"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (1.5e-7, "1.5e-07"),
            (1e16, "1e+16"),
            (1_234_567_890_123_456.0, "1234567890123456.0"),
            (12_345_678_901_234_567.0, "1.2345678901234568e+16"),
            (1e22, "1e+22"),
            (f64::MAX, "1.7976931348623157e+308"),
            (5e-324, "5e-324"),
            (123.456, "123.456"),
            (100.0, "100.0"),
        ];
        for &(x, want) in cases {
            assert_eq!(repr(x), want, "{x:e}");
        }
    }

    #[test]
    fn non_finite_refused() {
        let mut out = Vec::new();
        assert!(write_float(&mut out, f64::NAN).is_err());
        assert!(write_float(&mut out, f64::INFINITY).is_err());
        assert!(out.is_empty());
    }
}
