//! Walks a Python JSON value into the compact wire JSON of `thinkseal_core::wire`
//! (byte for byte what `json.dumps(value, ensure_ascii=False,
//! separators=(",", ":"), allow_nan=False)` returns, encoded as UTF-8).
//!
//! The stdlib's type rules are followed: `None`, `True`, `False`, `str`, `int`
//! and `float` (and their subclasses, written through the base type), `list`
//! and `tuple` as arrays, `dict` as an object in its own order with `str`,
//! `int`, `float`, `bool` or `None` keys. Anything else is the stdlib's
//! `TypeError`; NaN, the infinities, lone surrogates and nesting past
//! `MAX_DEPTH` (the stdlib's circular-reference check) are a
//! `ValidationError` (a `ValueError`, as the stdlib's are) naming the path.

use pyo3::exceptions::PyTypeError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use thinkseal_core::jcs::{Path, MAX_DEPTH};
use thinkseal_core::wire;

use crate::errors::validation_error;
use crate::strings;

/// Where a failure happened, collected while unwinding (the happy path keeps no path).
enum Segment {
    Index(usize),
    Key(String),
}

enum Failure {
    /// A value the wire cannot hold: `ValidationError(reason)` at the path.
    Invalid(String, Vec<Segment>),
    /// Already a Python exception (a `TypeError`, or an error from Python code).
    Raised(PyErr),
}

impl From<PyErr> for Failure {
    fn from(err: PyErr) -> Self {
        Failure::Raised(err)
    }
}

fn invalid(reason: impl Into<String>) -> Failure {
    Failure::Invalid(reason.into(), Vec::new())
}

fn at(segment: impl FnOnce() -> Segment) -> impl FnOnce(Failure) -> Failure {
    move |failure| match failure {
        Failure::Invalid(reason, mut segments) => {
            segments.push(segment());
            Failure::Invalid(reason, segments)
        }
        raised @ Failure::Raised(_) => raised,
    }
}

/// The wire bytes of `obj`; errors name their path under `root`.
pub fn wire_json(obj: &Bound<'_, PyAny>, root: &str) -> PyResult<Vec<u8>> {
    let mut out = Vec::with_capacity(256);
    match write(&mut out, obj, 0) {
        Ok(()) => Ok(out),
        Err(Failure::Raised(err)) => Err(err),
        Err(Failure::Invalid(reason, segments)) => {
            let mut path = Path::starting_at(root);
            for segment in segments.iter().rev() {
                match segment {
                    Segment::Index(i) => path.push_index(*i),
                    Segment::Key(k) => path.push_key(k),
                }
            }
            Err(validation_error(obj.py(), &path.render(), &reason))
        }
    }
}

/// Appends the wire bytes of `obj`, nested `depth` levels deep in a value
/// `wire_json` writes (so the depth limit falls where it falls there); false
/// when `wire_json` would raise (what was appended is then unspecified).
pub fn write_value(out: &mut Vec<u8>, obj: &Bound<'_, PyAny>, depth: usize) -> bool {
    write(out, obj, depth).is_ok()
}

fn write(out: &mut Vec<u8>, obj: &Bound<'_, PyAny>, depth: usize) -> Result<(), Failure> {
    // The stdlib's order of checks; exact types first would not change the result.
    if let Ok(s) = obj.cast::<PyString>() {
        wire::write_string(out, &text(s)?);
    } else if obj.is_none() {
        out.extend_from_slice(b"null");
    } else if let Ok(b) = obj.cast::<PyBool>() {
        out.extend_from_slice(if b.is_true() { b"true" } else { b"false" });
    } else if obj.is_instance_of::<PyInt>() {
        write_int(out, obj)?;
    } else if let Ok(f) = obj.cast::<PyFloat>() {
        write_float(out, f.value())?;
    } else if let Ok(list) = obj.cast::<PyList>() {
        // The C-level items, as the stdlib reads them (PySequence_Fast).
        let depth = enter(depth)?;
        out.push(b'[');
        for (i, item) in list.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            write(out, &item, depth).map_err(at(|| Segment::Index(i)))?;
        }
        out.push(b']');
    } else if let Ok(tuple) = obj.cast::<PyTuple>() {
        let depth = enter(depth)?;
        out.push(b'[');
        for (i, item) in tuple.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            write(out, &item, depth).map_err(at(|| Segment::Index(i)))?;
        }
        out.push(b']');
    } else if let Ok(dict) = obj.cast::<PyDict>() {
        let depth = enter(depth)?;
        out.push(b'{');
        for (i, (key, value)) in dict.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            write_key(out, &key)?;
            out.push(b':');
            write(out, &value, depth).map_err(at(|| Segment::Key(key_text(&key))))?;
        }
        out.push(b'}');
    } else {
        return Err(PyTypeError::new_err(format!(
            "Object of type {} is not JSON serializable",
            type_name(obj)
        ))
        .into());
    }
    Ok(())
}

fn enter(depth: usize) -> Result<usize, Failure> {
    if depth >= MAX_DEPTH {
        return Err(invalid(format!(
            "nested deeper than {MAX_DEPTH} levels (or circular)"
        )));
    }
    Ok(depth + 1)
}

fn text<'a>(s: &'a Bound<'_, PyString>) -> Result<std::borrow::Cow<'a, str>, Failure> {
    strings::utf8(s)
        .map_err(|_| invalid("string is not valid Unicode (it contains a lone surrogate)"))
}

fn write_float(out: &mut Vec<u8>, x: f64) -> Result<(), Failure> {
    wire::write_float(out, x).map_err(|_| {
        invalid(format!(
            "Out of range float values are not JSON compliant: {}",
            if x.is_nan() {
                "nan"
            } else if x > 0.0 {
                "inf"
            } else {
                "-inf"
            }
        ))
    })
}

/// `int.__repr__` (not the value's own `__repr__`/`__str__`: a subclass such
/// as an `IntEnum` is written as its number, as the stdlib writes it).
fn write_int(out: &mut Vec<u8>, obj: &Bound<'_, PyAny>) -> Result<(), Failure> {
    if let Ok(small) = obj.extract::<i64>() {
        out.extend_from_slice(small.to_string().as_bytes());
        return Ok(());
    }
    let py = obj.py();
    let repr = py
        .get_type::<PyInt>()
        .getattr(intern!(py, "__repr__"))?
        .call1((obj,))?;
    let repr = repr.cast::<PyString>().map_err(PyErr::from)?;
    out.extend_from_slice(text(repr)?.as_bytes());
    Ok(())
}

/// An object key, converted as the stdlib converts non-`str` keys.
fn write_key(out: &mut Vec<u8>, key: &Bound<'_, PyAny>) -> Result<(), Failure> {
    if let Ok(s) = key.cast::<PyString>() {
        wire::write_string(out, &text(s)?);
        return Ok(());
    }
    let mut literal = Vec::new();
    if let Ok(f) = key.cast::<PyFloat>() {
        write_float(&mut literal, f.value())?;
    } else if let Ok(b) = key.cast::<PyBool>() {
        literal.extend_from_slice(if b.is_true() { b"true" } else { b"false" });
    } else if key.is_none() {
        literal.extend_from_slice(b"null");
    } else if key.is_instance_of::<PyInt>() {
        write_int(&mut literal, key)?;
    } else {
        return Err(PyTypeError::new_err(format!(
            "keys must be str, int, float, bool or None, not {}",
            type_name(key)
        ))
        .into());
    }
    out.push(b'"');
    out.extend_from_slice(&literal);
    out.push(b'"');
    Ok(())
}

fn key_text(key: &Bound<'_, PyAny>) -> String {
    match key.cast::<PyString>() {
        Ok(s) => strings::utf8(s).map_or_else(|_| "?".to_owned(), std::borrow::Cow::into_owned),
        Err(_) => key
            .repr()
            .ok()
            .and_then(|r| strings::utf8(&r).ok().map(std::borrow::Cow::into_owned))
            .unwrap_or_else(|| "?".to_owned()),
    }
}

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map_or_else(|_| "?".to_owned(), |n| n.to_string())
}
