//! The Anthropic Messages wire turns of the plain message shapes, written
//! straight to bytes: the bytes `wire_json` gives for the turn dict that
//! python/thinkseal/providers/_claude.py (`assistant_blocks`, `user_wire`)
//! and anthropic.py (the block spellings) build, without building it.
//!
//! The Python path stays the definition. Whatever is not a plain case here
//! gives `None`, and Python builds the turn (raising its own error, if it
//! has one): a class other than the exact ones below, content that is not
//! one `str`, a native block, a text part that Python might find blank (the
//! Unicode whitespace rules differ between Rust and Python), a value the
//! wire cannot hold. So no turn written here holds a cache breakpoint: its
//! `turn_tally` is 0. `tests/providers/test_native_turns.py` compares the two
//! paths over random histories.

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyList, PyString, PyTuple};
use thinkseal_core::wire::write_string;

use crate::strings;

/// The classes a turn's messages and parts are checked against (exactly),
/// handed over by python/thinkseal/providers/anthropic.py in this order.
pub struct Kit<'py> {
    assistant: Bound<'py, PyAny>,
    user: Bound<'py, PyAny>,
    tool: Bound<'py, PyAny>,
    tool_call: Bound<'py, PyAny>,
    text: Bound<'py, PyAny>,
    redacted: Bound<'py, PyAny>,
    opaque: Bound<'py, PyAny>,
}

impl<'py> Kit<'py> {
    /// The kit from its tuple (None when it is not seven items).
    pub fn from_tuple(kit: &Bound<'py, PyTuple>) -> Option<Self> {
        if kit.len() != 7 {
            return None;
        }
        let item = |i| kit.get_item(i).ok();
        Some(Self {
            assistant: item(0)?,
            user: item(1)?,
            tool: item(2)?,
            tool_call: item(3)?,
            text: item(4)?,
            redacted: item(5)?,
            opaque: item(6)?,
        })
    }
}

/// Why a turn is left to Python (nothing to report: Python builds it).
struct NotPlain;

impl From<PyErr> for NotPlain {
    fn from(_: PyErr) -> Self {
        NotPlain
    }
}

type Written = Result<(), NotPlain>;

/// The wire bytes of the turn `role` ("assistant": one message; "user": its
/// tool results and user messages, in order), or None when it is not a
/// plain case.
pub fn turn(role: &str, group: &Bound<'_, PyList>, kit: &Kit<'_>) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(2048);
    let written = match role {
        "assistant" if group.len() == 1 => group
            .get_item(0)
            .map_err(NotPlain::from)
            .and_then(|message| assistant(&mut out, &message, kit)),
        "user" if !group.is_empty() => user(&mut out, group, kit),
        _ => Err(NotPlain),
    };
    written.ok().map(|()| out)
}

fn assistant(out: &mut Vec<u8>, message: &Bound<'_, PyAny>, kit: &Kit<'_>) -> Written {
    if !message.get_type().is(&kit.assistant) {
        return Err(NotPlain);
    }
    let py = message.py();
    let parts = message.getattr(intern!(py, "parts"))?;
    let parts = parts.cast_exact::<PyTuple>().map_err(|_| NotPlain)?;
    out.extend_from_slice(br#"{"role":"assistant","content":["#);
    let mut blocks = 0;
    for part in parts.iter() {
        let kind = part.get_type();
        let start = out.len();
        if blocks > 0 {
            out.push(b',');
        }
        if let Ok(text) = part.cast_exact::<PyString>() {
            let text = strings::utf8(text).map_err(|_| NotPlain)?;
            if !strings::surely_not_blank(&text) {
                return Err(NotPlain);
            }
            out.extend_from_slice(br#"{"type":"text","text":"#);
            write_string(out, &text);
        } else if kind.is(&kit.tool_call) {
            out.extend_from_slice(br#"{"type":"tool_use","id":"#);
            attribute_str(out, &part, intern!(py, "id"))?;
            out.extend_from_slice(br#","name":"#);
            attribute_str(out, &part, intern!(py, "name"))?;
            out.extend_from_slice(br#","input":"#);
            let arguments = part.getattr(intern!(py, "arguments"))?;
            // At the depth the Python path writes it: turn, content list, block.
            if !crate::wire::write_value(out, &arguments, 3) {
                return Err(NotPlain);
            }
        } else if kind.is(&kit.text) {
            let signature = part.getattr(intern!(py, "signature"))?;
            if signature.is_none() {
                out.truncate(start); // unsigned: not sealed, left out
                continue;
            }
            out.extend_from_slice(br#"{"type":"thinking","thinking":"#);
            attribute_str(out, &part, intern!(py, "text"))?;
            out.extend_from_slice(br#","signature":"#);
            string(out, &signature)?;
        } else if kind.is(&kit.redacted) {
            out.extend_from_slice(br#"{"type":"redacted_thinking","data":"#);
            attribute_str(out, &part, intern!(py, "data"))?;
        } else if kind.is(&kit.opaque) {
            out.truncate(start); // another provider's: never sent to Claude
            continue;
        } else {
            return Err(NotPlain); // a native block, or a subclass
        }
        out.push(b'}');
        blocks += 1;
    }
    if blocks == 0 {
        return Err(NotPlain);
    }
    out.extend_from_slice(b"]}");
    Ok(())
}

fn user(out: &mut Vec<u8>, group: &Bound<'_, PyList>, kit: &Kit<'_>) -> Written {
    if group.len() == 1 {
        let message = group.get_item(0)?;
        if message.get_type().is(&kit.user) {
            // A lone user message of one text goes as a string (anthropic.py, user_wire).
            out.extend_from_slice(br#"{"role":"user","content":"#);
            string(out, &message.getattr(intern!(message.py(), "content"))?)?;
            out.push(b'}');
            return Ok(());
        }
    }
    out.extend_from_slice(br#"{"role":"user","content":["#);
    for (i, message) in group.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        let py = message.py();
        let kind = message.get_type();
        let content = message.getattr(intern!(py, "content"))?;
        let content = content.cast_exact::<PyString>().map_err(|_| NotPlain)?;
        if kind.is(&kit.tool) {
            // One plain text goes as a string (anthropic.py, tool_result_blocks).
            out.extend_from_slice(br#"{"type":"tool_result","tool_use_id":"#);
            attribute_str(out, &message, intern!(py, "tool_call_id"))?;
            out.extend_from_slice(br#","content":"#);
            string(out, content.as_any())?;
            let is_error = message.getattr(intern!(py, "is_error"))?;
            let is_error = is_error.cast_exact::<PyBool>().map_err(|_| NotPlain)?;
            if is_error.is_true() {
                out.extend_from_slice(br#","is_error":true"#);
            }
        } else if kind.is(&kit.user) {
            out.extend_from_slice(br#"{"type":"text","text":"#);
            string(out, content.as_any())?;
        } else {
            return Err(NotPlain);
        }
        out.push(b'}');
    }
    out.extend_from_slice(b"]}");
    Ok(())
}

/// The `str` attribute `name` of `obj` as a JSON string.
fn attribute_str(out: &mut Vec<u8>, obj: &Bound<'_, PyAny>, name: &Bound<'_, PyString>) -> Written {
    string(out, &obj.getattr(name)?)
}

/// An exact `str` as a JSON string (None for anything else, or a lone surrogate).
fn string(out: &mut Vec<u8>, value: &Bound<'_, PyAny>) -> Written {
    let value = value.cast_exact::<PyString>().map_err(|_| NotPlain)?;
    write_string(out, &strings::utf8(value).map_err(|_| NotPlain)?);
    Ok(())
}
