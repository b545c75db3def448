//! Python values encoded into the core's canonical bytes: messages (the
//! encoding their digest is taken over), JSON values (RFC 8785) and strings
//! (read as UTF-8 without a copy left inside them).
//!
//! The Python classes (python/thinkseal/_messages.py, _blocks.py) store their
//! fields in slots with the names read here; `role` and `_fp_kind` are class
//! attributes that say which shape an object has.

use std::borrow::Cow;

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use thinkseal_core::encode;
use thinkseal_core::jcs::{self, Path};

use crate::errors::validation_error;
use crate::strings;

/// A Python `str` as UTF-8 (no copy left inside it: see strings.rs), or a
/// `ValidationError` naming `path` (not a str, or a lone surrogate).
pub fn py_str<'a>(obj: &'a Bound<'_, PyAny>, path: &str) -> PyResult<Cow<'a, str>> {
    strings::utf8(as_str(obj, path)?).map_err(|_| lone_surrogate(obj.py(), path))
}

/// `py_str` appended to `out` (strings.rs `append_utf8`): how the long texts
/// of a message are encoded, with no temporary copy of them.
fn append_py_str(out: &mut Vec<u8>, obj: &Bound<'_, PyAny>, path: &str) -> PyResult<()> {
    strings::append_utf8(as_str(obj, path)?, out).map_err(|_| lone_surrogate(obj.py(), path))
}

fn as_str<'a, 'py>(obj: &'a Bound<'py, PyAny>, path: &str) -> PyResult<&'a Bound<'py, PyString>> {
    obj.cast::<PyString>().map_err(|_| {
        validation_error(
            obj.py(),
            path,
            &format!("expected str, got {}", type_name(obj)),
        )
    })
}

fn lone_surrogate(py: Python<'_>, path: &str) -> PyErr {
    validation_error(
        py,
        path,
        "string is not valid Unicode (it contains a lone surrogate)",
    )
}

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map_or_else(|_| "?".to_owned(), |n| n.to_string())
}

/// RFC 8785 bytes of a Python JSON value (dict / list / tuple / str / int /
/// float / bool / None), validating as it goes, nested at most `max_depth`
/// levels, with no string (value or key) over `max_string` characters.
pub fn canonical_json(
    obj: &Bound<'_, PyAny>,
    root: &str,
    max_depth: usize,
    max_string: usize,
) -> PyResult<Vec<u8>> {
    let mut out = Vec::with_capacity(64);
    let mut path = Path::starting_at(root)
        .with_max_depth(max_depth)
        .with_max_string(max_string);
    write_json(&mut out, obj, &mut path)?;
    Ok(out)
}

fn write_json(out: &mut Vec<u8>, obj: &Bound<'_, PyAny>, path: &mut Path) -> PyResult<()> {
    let py = obj.py();
    let fail = |path: &Path, reason: String| validation_error(py, &path.render(), &reason);
    if obj.is_none() {
        out.extend_from_slice(b"null");
    } else if let Ok(b) = obj.cast::<PyBool>() {
        out.extend_from_slice(if b.is_true() { b"true" } else { b"false" });
    } else if obj.is_instance_of::<PyInt>() {
        write_int(out, obj).map_err(|reason| fail(path, reason))?;
    } else if let Ok(f) = obj.cast::<PyFloat>() {
        jcs::write_f64(out, f.value()).map_err(|e| fail(path, e.to_string()))?;
    } else if obj.is_instance_of::<PyString>() {
        path.check_string(obj.len()?)
            .map_err(|e| fail(path, e.reason))?;
        let s = py_str(obj, &path.render())?;
        jcs::write_string(out, &s);
    } else if let Ok(dict) = obj.cast::<PyDict>() {
        path.enter().map_err(|e| fail(path, e.reason))?;
        let keys: Vec<Bound<'_, PyAny>> = dict.keys().iter().collect();
        for key in &keys {
            if !key.is_instance_of::<PyString>() {
                return Err(fail(
                    path,
                    format!("object key {} is not a string", short_repr(key)),
                ));
            }
        }
        let mut texts: Vec<Cow<'_, str>> = Vec::with_capacity(keys.len());
        let mut values: Vec<Bound<'_, PyAny>> = Vec::with_capacity(keys.len());
        for key in &keys {
            path.check_string(key.len()?)
                .map_err(|e| fail(path, format!("object key: {}", e.reason)))?;
            texts.push(py_str(key, &path.render())?);
            values.push(
                dict.get_item(key)?
                    .ok_or_else(|| fail(path, "dictionary changed while it was read".into()))?,
            );
        }
        let mut members: Vec<(&str, Bound<'_, PyAny>)> =
            texts.iter().map(|t| &**t).zip(values).collect();
        jcs::sort_members(&mut members);
        jcs::write_object(out, &members, path, |out, value, path| {
            write_json(out, value, path)
        })?;
        path.leave();
    } else if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        path.enter().map_err(|e| fail(path, e.reason))?;
        // The C-level items, not a subclass's __iter__: what is hashed is what is stored.
        let items: Vec<Bound<'_, PyAny>> = match obj.cast::<PyList>() {
            Ok(list) => list.iter().collect(),
            Err(_) => obj.cast::<PyTuple>()?.iter().collect(),
        };
        jcs::write_array(out, &items, path, |out, item, path| {
            write_json(out, item, path)
        })?;
        path.leave();
    } else {
        return Err(fail(
            path,
            format!("{} is not a JSON value", type_name(obj)),
        ));
    }
    Ok(())
}

fn short_repr(obj: &Bound<'_, PyAny>) -> String {
    let text = obj
        .repr()
        .map_or_else(|_| "?".to_owned(), |r| r.to_string());
    match text.char_indices().nth(40) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text,
    }
}

/// Integers are written with all their digits (documented deviation from RFC 8785).
fn write_int(out: &mut Vec<u8>, obj: &Bound<'_, PyAny>) -> Result<(), String> {
    if let Ok(small) = obj.extract::<i64>() {
        out.extend_from_slice(small.to_string().as_bytes());
        return Ok(());
    }
    // int.__repr__ rather than str(): a subclass may override __str__.
    let repr = obj
        .py()
        .get_type::<PyInt>()
        .getattr(intern!(obj.py(), "__repr__"))
        .and_then(|f| f.call1((obj,)))
        .map_err(|_| "integer is too large to write (Python's int digit limit)".to_owned())?;
    let digits = repr
        .cast::<PyString>()
        .ok()
        .and_then(|s| strings::utf8(s).ok())
        .unwrap_or_default();
    if !jcs::is_integer_literal(&digits) {
        return Err("integer could not be written".to_owned());
    }
    jcs::write_integer(out, &digits);
    Ok(())
}

/// Appends the canonical encoding of a thinkseal message object to `out`,
/// reading its strings in place (no copies besides the one into `out`).
pub fn encode_message(out: &mut Vec<u8>, obj: &Bound<'_, PyAny>) -> PyResult<()> {
    let py = obj.py();
    let role = obj.getattr(intern!(py, "role"))?;
    // What the fingerprint reads of a message's content (breakpoints left out,
    // a lone text part as a string): see `_ContentMessage` in _messages.py.
    let content = intern!(py, "_fp_content");
    match py_str(&role, "Message.role")?.as_ref() {
        "system" => {
            out.push(encode::tag::SYSTEM);
            encode_content(out, &obj.getattr(content)?, "SystemMessage.content")?;
        }
        "user" => {
            out.push(encode::tag::USER);
            encode_content(out, &obj.getattr(content)?, "UserMessage.content")?;
        }
        "tool" => {
            out.push(encode::tag::TOOL_RESULT);
            encode_content(out, &obj.getattr(content)?, "ToolMessage.content")?;
            encode::put_tool_result_tail(
                out,
                &py_str(
                    &obj.getattr(intern!(py, "tool_call_id"))?,
                    "ToolMessage.tool_call_id",
                )?,
                obj.getattr(intern!(py, "is_error"))?.is_truthy()?,
            );
        }
        "assistant" => {
            let parts = obj.getattr(intern!(py, "parts"))?;
            let Ok(parts) = parts.cast::<PyTuple>() else {
                return Err(validation_error(
                    py,
                    "AssistantMessage.parts",
                    "expected a tuple",
                ));
            };
            encode::put_assistant_header(out, parts.len());
            for part in parts.iter() {
                encode_part(out, &part)?;
            }
        }
        other => {
            return Err(validation_error(
                py,
                "Message.role",
                &format!("unknown role {other:?}"),
            ));
        }
    }
    Ok(())
}

/// A message's content: a string, or a tuple of content parts.
fn encode_content(out: &mut Vec<u8>, obj: &Bound<'_, PyAny>, path: &str) -> PyResult<()> {
    let py = obj.py();
    if obj.is_instance_of::<PyString>() {
        return encode::put_str_with(out, |out| append_py_str(out, obj, path));
    }
    let Ok(parts) = obj.cast::<PyTuple>() else {
        return Err(validation_error(
            py,
            path,
            "expected a str or a tuple of parts",
        ));
    };
    encode::put_list_header(out, parts.len());
    for part in parts.iter() {
        if part.is_instance_of::<PyString>() {
            encode::put_text_part_with(out, |out| append_py_str(out, &part, path))?;
            continue;
        }
        let kind = part.getattr(intern!(py, "_fp_kind")).map_err(|_| {
            validation_error(
                py,
                path,
                &format!("{} is not a content part", type_name(&part)),
            )
        })?;
        match py_str(&kind, path)?.as_ref() {
            "image" => encode::put_image(
                out,
                opt_bytes(&part.getattr(intern!(py, "data"))?, "Image.data")?,
                opt_str(
                    &part.getattr(intern!(py, "media_type"))?,
                    "Image.media_type",
                )?
                .as_deref(),
                opt_str(&part.getattr(intern!(py, "url"))?, "Image.url")?.as_deref(),
            ),
            "document" => encode::put_document(
                out,
                &encode::DocumentFields {
                    data: opt_bytes(&part.getattr(intern!(py, "data"))?, "Document.data")?,
                    url: opt_str(&part.getattr(intern!(py, "url"))?, "Document.url")?.as_deref(),
                    text: opt_str(&part.getattr(intern!(py, "text"))?, "Document.text")?.as_deref(),
                    title: opt_str(&part.getattr(intern!(py, "title"))?, "Document.title")?
                        .as_deref(),
                    citations: part.getattr(intern!(py, "citations"))?.is_truthy()?,
                    media_type: &py_str(
                        &part.getattr(intern!(py, "media_type"))?,
                        "Document.media_type",
                    )?,
                },
            ),
            "native" => encode_native(out, &part)?,
            other => {
                return Err(validation_error(
                    py,
                    path,
                    &format!("unknown content part kind {other:?}"),
                ));
            }
        }
    }
    Ok(())
}

fn opt_str<'a>(obj: &'a Bound<'_, PyAny>, path: &str) -> PyResult<Option<Cow<'a, str>>> {
    if obj.is_none() {
        Ok(None)
    } else {
        py_str(obj, path).map(Some)
    }
}

fn opt_bytes<'a>(obj: &'a Bound<'_, PyAny>, path: &str) -> PyResult<Option<&'a [u8]>> {
    if obj.is_none() {
        return Ok(None);
    }
    obj.cast::<PyBytes>()
        .map(|b| Some(b.as_bytes()))
        .map_err(|_| validation_error(obj.py(), path, "expected bytes"))
}

fn encode_native(out: &mut Vec<u8>, obj: &Bound<'_, PyAny>) -> PyResult<()> {
    let py = obj.py();
    encode::put_native(
        out,
        &py_str(&obj.getattr(intern!(py, "provider"))?, "Native.provider")?,
        &py_str(&obj.getattr(intern!(py, "data"))?, "Native.data")?,
        opt_str(&obj.getattr(intern!(py, "text"))?, "Native.text")?.as_deref(),
    );
    Ok(())
}

fn encode_part(out: &mut Vec<u8>, obj: &Bound<'_, PyAny>) -> PyResult<()> {
    let py = obj.py();
    if obj.is_instance_of::<PyString>() {
        return encode::put_text_part_with(out, |out| {
            append_py_str(out, obj, "AssistantMessage.parts")
        });
    }
    let kind = obj.getattr(intern!(py, "_fp_kind")).map_err(|_| {
        validation_error(
            py,
            "AssistantMessage.parts",
            &format!(
                "{} is not a text, tool call or thinking block",
                type_name(obj)
            ),
        )
    })?;
    match py_str(&kind, "AssistantMessage.parts")?.as_ref() {
        "call" => {
            let arguments = obj.getattr(intern!(py, "_arguments_jcs"))?;
            let Ok(arguments) = arguments.cast::<PyBytes>() else {
                return Err(validation_error(
                    py,
                    "ToolCall.arguments",
                    "not canonicalised",
                ));
            };
            encode::put_tool_call(
                out,
                &py_str(&obj.getattr(intern!(py, "id"))?, "ToolCall.id")?,
                &py_str(&obj.getattr(intern!(py, "name"))?, "ToolCall.name")?,
                arguments.as_bytes(),
            );
        }
        "text" => {
            let signature = obj.getattr(intern!(py, "signature"))?;
            let signature = if signature.is_none() {
                None
            } else {
                Some(py_str(&signature, "ThinkingBlock.Text.signature")?)
            };
            let text = obj.getattr(intern!(py, "text"))?;
            encode::put_thinking_text_with(
                out,
                |out| append_py_str(out, &text, "ThinkingBlock.Text.text"),
                signature.as_deref(),
            )?;
        }
        "redacted" => {
            encode::put_redacted(
                out,
                &py_str(
                    &obj.getattr(intern!(py, "data"))?,
                    "ThinkingBlock.Redacted.data",
                )?,
            );
        }
        "native" => encode_native(out, obj)?,
        "opaque" => encode::put_opaque(
            out,
            &py_str(
                &obj.getattr(intern!(py, "provider"))?,
                "ThinkingBlock.Opaque.provider",
            )?,
            &py_str(
                &obj.getattr(intern!(py, "data"))?,
                "ThinkingBlock.Opaque.data",
            )?,
        ),
        other => {
            return Err(validation_error(
                py,
                "AssistantMessage.parts",
                &format!("unknown part kind {other:?}"),
            ));
        }
    }
    Ok(())
}
