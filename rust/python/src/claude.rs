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
//!
//! [`turns`] does the whole of `Wire.turns` for a run of as-sent messages
//! when every message in it is a plain case: the layout of `plan_turns`, each
//! one-message turn's bytes kept on its message as `_memo.put` keeps them
//! (and read back from there as `_memo.entry` reads them), and the turns
//! written here. At the first message that is not a plain case it stops and
//! gives `None`; the turns it kept on their messages until then are the ones
//! Python would have kept, so the Python path finds them.

use pyo3::exceptions::PyAttributeError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyInt, PyList, PyString, PyTuple};
use thinkseal_core::wire::write_string;

use crate::kit::kit;
use crate::load::write_slot;
use crate::strings;

kit! {
    /// The classes a turn's messages and parts are checked against (exactly),
    /// handed over by python/thinkseal/providers/anthropic.py in this order.
    Kit {
        assistant,
        user,
        tool,
        tool_call,
        text,
        redacted,
        opaque,
        system,
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

/// The room a turn's buffer starts with, for each of its messages: most
/// messages' wire bytes fit, so a turn of several (tool results and a user
/// message) is not copied as it grows. It grew in about one turn of three
/// of the bench's history with room for one message only.
const ROOM: usize = 2048;

/// The wire bytes of the turn `role` ("assistant": one message; "user": its
/// tool results and user messages, in order), or None when it is not a
/// plain case.
pub fn turn(role: &str, group: &Bound<'_, PyList>, kit: &Kit<'_>) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(ROOM * group.len().max(1));
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

/// The memo keys the turns are kept under (`Wire.assistant_turn` and
/// `Wire.user_turn`: the adapter's key, and it with `:user`), interned.
pub struct Keys<'py> {
    pub assistant: Bound<'py, PyString>,
    pub user: Bound<'py, PyString>,
}

/// A run's wire turns: their bytes and `turn_tally` each.
pub type Turns<'py> = (Vec<Bound<'py, PyBytes>>, Vec<i64>);

/// `Wire.turns(sent)`, or None when a message of `sent` is not a plain case.
pub fn turns<'py>(
    sent: &Bound<'py, PyList>,
    keys: &Keys<'py>,
    kit: &Kit<'py>,
) -> Option<Turns<'py>> {
    let mut plan = Plan {
        keys,
        kit,
        turns: (
            Vec::with_capacity(sent.len()),
            Vec::with_capacity(sent.len()),
        ),
        run: Vec::new(),
        order: None,
    };
    for message in sent.iter() {
        plan.add(message).ok()?;
    }
    plan.flush().ok()?;
    Some(plan.turns)
}

/// `plan_turns`, mapping each turn as it is laid out.
struct Plan<'a, 'py> {
    keys: &'a Keys<'py>,
    kit: &'a Kit<'py>,
    turns: Turns<'py>,
    /// The tool results and user messages since the last assistant turn that went out.
    run: Vec<Bound<'py, PyAny>>,
    /// That turn's call ids and their places (the last place for an id used twice).
    order: Option<Bound<'py, PyDict>>,
}

impl<'py> Plan<'_, 'py> {
    fn add(&mut self, message: Bound<'py, PyAny>) -> Written {
        let kind = message.get_type();
        let kit = self.kit;
        if kind.is(&kit.tool) || kind.is(&kit.user) {
            self.run.push(message);
        } else if kind.is(&kit.assistant) {
            if !goes_out(&message, kit)? {
                return Ok(()); // left out: the user turns around it merge
            }
            self.flush()?;
            let turn = kept(&message, &self.keys.assistant, |out| {
                assistant(out, &message, kit)
            })?;
            self.push(turn);
            self.order = Some(call_order(&message)?);
        } else if !kind.is(&kit.system) {
            return Err(NotPlain); // system messages go in the system field
        }
        Ok(())
    }

    fn push(&mut self, (data, tally): (Bound<'py, PyBytes>, i64)) {
        self.turns.0.push(data);
        self.turns.1.push(tally);
    }

    /// The run as one user turn: its tool results first, in the order of the
    /// calls they answer (a stable sort; an id not called sorts as place 0),
    /// then the user messages.
    fn flush(&mut self) -> Written {
        if self.run.is_empty() {
            return Ok(());
        }
        let mut results = Vec::new();
        let mut texts = Vec::new();
        for message in self.run.drain(..) {
            if message.get_type().is(&self.kit.tool) {
                let place = match &self.order {
                    Some(order) => {
                        let id = message.getattr(intern!(message.py(), "tool_call_id"))?;
                        match order.get_item(id)? {
                            Some(place) => place.extract::<usize>()?,
                            None => 0,
                        }
                    }
                    None => 0,
                };
                results.push((place, message));
            } else {
                texts.push(message);
            }
        }
        results.sort_by_key(|(place, _)| *place);
        let group: Vec<_> = results.into_iter().map(|(_, m)| m).chain(texts).collect();
        let py = group[0].py();
        let turn = if let [message] = group.as_slice() {
            // The list is made only when the turn is not kept already.
            kept(message, &self.keys.user, |out| {
                user(out, &PyList::new(py, [message])?, self.kit)
            })?
        } else {
            let mut out = Vec::with_capacity(ROOM * group.len());
            user(&mut out, &PyList::new(py, &group)?, self.kit)?;
            (PyBytes::new(py, &out), 0)
        };
        self.push(turn);
        Ok(())
    }
}

/// `Wire.goes_out` of a plain turn: it has a call or a text (a text Python
/// might find blank is not a plain case).
fn goes_out(message: &Bound<'_, PyAny>, kit: &Kit<'_>) -> Result<bool, NotPlain> {
    let parts = message.getattr(intern!(message.py(), "parts"))?;
    let parts = parts.cast_exact::<PyTuple>().map_err(|_| NotPlain)?;
    let mut out = false;
    for part in parts.iter() {
        let kind = part.get_type();
        if let Ok(text) = part.cast_exact::<PyString>() {
            let text = strings::utf8(text).map_err(|_| NotPlain)?;
            if !strings::surely_not_blank(&text) {
                return Err(NotPlain);
            }
            out = true;
        } else if kind.is(&kit.tool_call) {
            out = true;
        } else if !(kind.is(&kit.text) || kind.is(&kit.redacted) || kind.is(&kit.opaque)) {
            return Err(NotPlain);
        }
    }
    Ok(out)
}

/// `{call.id: k for k, call in enumerate(message.tool_calls)}`.
fn call_order<'py>(message: &Bound<'py, PyAny>) -> Result<Bound<'py, PyDict>, NotPlain> {
    let py = message.py();
    let order = PyDict::new(py);
    let calls = message.getattr(intern!(py, "tool_calls"))?;
    for (k, call) in calls
        .cast_exact::<PyTuple>()
        .map_err(|_| NotPlain)?
        .iter()
        .enumerate()
    {
        order.set_item(call.getattr(intern!(py, "id"))?, k)?;
    }
    Ok(order)
}

/// The turn kept on `message` under `key` (`_memo.entry`): its bytes and
/// tally; or, when none is kept, the turn `write` writes, kept there as
/// `_memo.put` keeps it (a written turn counts no breakpoint).
fn kept<'py>(
    message: &Bound<'py, PyAny>,
    key: &Bound<'py, PyString>,
    write: impl FnOnce(&mut Vec<u8>) -> Written,
) -> Result<(Bound<'py, PyBytes>, i64), NotPlain> {
    let py = message.py();
    let slot = intern!(py, "_wire");
    // An unset slot reads as None (`getattr(message, "_wire", None)`).
    let store = match message.getattr(slot) {
        Ok(store) => store,
        Err(err) if err.is_instance_of::<PyAttributeError>(py) => py.None().into_bound(py),
        Err(_) => return Err(NotPlain),
    };
    let found = if let Ok(pair) = store.cast_exact::<PyTuple>() {
        if pair.len() != 2 {
            return Err(NotPlain);
        }
        if pair.get_item(0)?.eq(key)? {
            Some(pair.get_item(1)?)
        } else {
            None
        }
    } else if let Ok(entries) = store.cast_exact::<PyDict>() {
        entries.get_item(key)?
    } else if store.is_none() {
        None
    } else {
        return Err(NotPlain);
    };
    if let Some(value) = found {
        return entry_value(&value);
    }
    let mut out = Vec::with_capacity(ROOM);
    write(&mut out)?;
    let data = PyBytes::new(py, &out);
    if let Ok(entries) = store.cast_exact::<PyDict>() {
        entries.set_item(key, &data)?;
    } else if store.is_none() {
        write_slot(
            message,
            slot,
            PyTuple::new(py, [key.as_any(), data.as_any()])?.as_any(),
        )?;
    } else {
        let pair = store.cast_exact::<PyTuple>().map_err(|_| NotPlain)?;
        let entries = PyDict::new(py);
        entries.set_item(pair.get_item(0)?, pair.get_item(1)?)?;
        entries.set_item(key, &data)?;
        write_slot(message, slot, entries.as_any())?;
    }
    Ok((data, 0))
}

/// A kept turn (`counted`): its bytes alone (tally 0) or `(bytes, tally)`.
fn entry_value<'py>(value: &Bound<'py, PyAny>) -> Result<(Bound<'py, PyBytes>, i64), NotPlain> {
    if let Ok(data) = value.cast_exact::<PyBytes>() {
        return Ok((data.clone(), 0));
    }
    let pair = value.cast_exact::<PyTuple>().map_err(|_| NotPlain)?;
    if pair.len() != 2 {
        return Err(NotPlain);
    }
    let data = pair
        .get_item(0)?
        .cast_exact::<PyBytes>()
        .map_err(|_| NotPlain)?
        .clone();
    let tally = pair.get_item(1)?;
    let tally = tally
        .cast_exact::<PyInt>()
        .map_err(|_| NotPlain)?
        .extract::<i64>()?;
    Ok((data, tally))
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
