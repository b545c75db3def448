//! The replay walk's plain run (python/thinkseal/_walk.py, `walk`), done
//! natively: from `start`, every message that goes out as itself, decided,
//! paired and chained, up to the first that does not or that is not a plain
//! case here. Python decides that one message and calls again.
//!
//! The Python walk stays the definition (docs/fingerprint.md §6). What goes
//! out as itself, and so is decided here:
//! - a `SystemMessage`; a `UserMessage` (it closes the open calls); a
//!   `ToolMessage` that answers an open call (it closes that call);
//! - an `AssistantMessage` every call of which is answered (no id repeated),
//!   either kept (sealed parts, bound under this fingerprint version to the
//!   target, its turn digest and its prefix matching) or with no sealed part
//!   and no binding (`no-sealed-thinking`, where `unsealed()` is itself).
//!
//! Everything else stops the run: a stray tool result, a turn that goes out
//! unsealed or loses a call, a class other than the exact message and part
//! classes (a subclass, a native block), a value of an unexpected type. So a
//! run only ever writes the codes `kept` and `no-sealed-thinking`, and a
//! message that Python would decide otherwise, or whose decision might
//! raise, is left to Python. [`sent_run`] does the same for
//! `Replay.sent_messages`, from codes decided before. `tests/test_walk_native.py`
//! compares the native runs with the Python loops over random histories.
//!
//! The pairing state is the `set` of open call ids that `Pairing` keeps
//! (`Pairing._open`): read and updated in place, so Python goes on with it.
//! A digest missing on a message is computed and stored on it, as the Python
//! walk's `ensure_digests` does.

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PySet, PyString, PyTuple};
use thinkseal_core::digest::{self, Digest};
use thinkseal_core::model::Origin;

use crate::encode;
use crate::kit::kit;
use crate::load::write_slot;
use crate::strings;

kit! {
    /// The classes the messages and their parts are checked against (exactly),
    /// handed over by python/thinkseal/_walk.py in this order.
    Kit {
        system,
        user,
        tool,
        assistant,
        tool_call,
        text,
        redacted,
        opaque,
        binding,
        origin,
    }
}

/// The walk's reason codes (python/thinkseal/_walk.py: 1 + the position in `Reason`).
const KEPT: u8 = 1;
const NO_SEALED: u8 = 2;

/// What a run decided: messages `start..stop`, each one's chain value after
/// it (32 bytes each) and code, and the indices of the assistant turns.
#[derive(Default)]
pub struct Run {
    pub stop: usize,
    pub chain: Vec<u8>,
    pub codes: Vec<u8>,
    pub turns: Vec<usize>,
}

/// Where a run stops: the message is Python's to decide.
struct Stop;

impl From<PyErr> for Stop {
    fn from(_: PyErr) -> Self {
        Stop
    }
}

/// The target and request a run decides for.
pub struct Target<'a, 'py> {
    pub origin: &'a Bound<'py, PyAny>,
    pub context: Digest,
}

/// The target and request as a run reads them: the core's `Origin` and the
/// request's context digest.
struct Request {
    origin: Origin,
    context: Digest,
}

/// Decides `items[start..end]` (of the first `total`) from the chain value
/// `chain` while they go out as themselves, with `open` the pairing's open
/// call ids before `start` (updated in place).
pub fn run(
    items: &Bound<'_, PyList>,
    bounds: (usize, usize, usize),
    open: &Bound<'_, PySet>,
    chain: Digest,
    target: &Target<'_, '_>,
    kit: &Kit<'_>,
) -> Run {
    let (start, end, total) = bounds;
    let total = total.min(items.len());
    let end = end.min(total);
    let mut out = Run {
        stop: start,
        ..Run::default()
    };
    // An origin of another class compares by Python's rules: left to Python.
    let Ok(origin) = plain_origin(target.origin, kit) else {
        return out;
    };
    let request = Request {
        origin,
        context: target.context,
    };
    let mut value = chain;
    for i in start..end {
        let Ok(message) = items.get_item(i) else {
            break;
        };
        let Ok((code, pairing)) = decide(items, i, total, &message, open, &value, &request, kit)
        else {
            break;
        };
        // The pairing moves only once nothing can stop the run at this message.
        let Ok(own) = message_digest(&message) else {
            break;
        };
        if pairing.apply(open).is_err() {
            break;
        }
        value = digest::chain_step(&value, &own);
        out.chain.extend_from_slice(&value);
        out.codes.push(code);
        if code != 0 {
            out.turns.push(i);
        }
        out.stop = i + 1;
    }
    out
}

/// `Pairing.sent` over `items[start..end]` (of the first `total`), whose
/// decided codes are `codes` (`codes[k]` for message `first + k`), while
/// each goes out as itself: the index of the first that does not, or that is
/// not a plain case (or has no code), with `open` moved past the ones before it.
pub fn sent_run(
    items: &Bound<'_, PyList>,
    bounds: (usize, usize, usize),
    open: &Bound<'_, PySet>,
    (codes, first): (&[u8], usize),
    kit: &Kit<'_>,
) -> usize {
    let (start, end, total) = bounds;
    let total = total.min(items.len());
    let end = end.min(total);
    let mut stop = start;
    for i in start..end {
        let Some(&code) = i.checked_sub(first).and_then(|k| codes.get(k)) else {
            break;
        };
        let Ok(message) = items.get_item(i) else {
            break;
        };
        let Ok(pairing) = as_itself(items, (i, total), &message, open, code, kit) else {
            break;
        };
        if pairing.apply(open).is_err() {
            break;
        }
        stop = i + 1;
    }
    stop
}

/// An exact `Origin` (the target, a binding's) as the core's `Origin`;
/// fields compared as text are compared as Python compares the strings.
fn plain_origin(origin: &Bound<'_, PyAny>, kit: &Kit<'_>) -> Result<Origin, Stop> {
    if !origin.get_type().is(&kit.origin) {
        return Err(Stop);
    }
    let py = origin.py();
    let account = origin.getattr(intern!(py, "account"))?;
    Ok(Origin {
        provider: plain_str(&origin.getattr(intern!(py, "provider"))?)?,
        model: plain_str(&origin.getattr(intern!(py, "model"))?)?,
        account: if account.is_none() {
            None
        } else {
            Some(plain_str(&account)?)
        },
    })
}

fn plain_str(value: &Bound<'_, PyAny>) -> Result<String, Stop> {
    let value = value.cast_exact::<PyString>().map_err(|_| Stop)?;
    // Not `to_str()`: it would leave a UTF-8 copy inside a non-ASCII str (strings.rs).
    Ok(strings::utf8(value).map_err(|_| Stop)?.into_owned())
}

/// How a message moves the pairing's open call ids.
enum Pairing<'py> {
    Same,
    /// A user message: no call is open after it.
    Close,
    /// A tool result: the call it answers is closed.
    Answer(Bound<'py, PyAny>),
    /// An assistant turn: its answered calls are open.
    Open(Vec<Bound<'py, PyAny>>),
}

impl Pairing<'_> {
    fn apply(self, open: &Bound<'_, PySet>) -> PyResult<()> {
        match self {
            Pairing::Same => {}
            Pairing::Close => open.clear(),
            Pairing::Answer(id) => {
                open.discard(id)?;
            }
            Pairing::Open(ids) => {
                open.clear();
                for id in ids {
                    open.add(id)?;
                }
            }
        }
        Ok(())
    }
}

/// The code of message `i` when it goes out as itself (0 for a message that
/// is not an assistant turn) and how it moves the pairing; `Stop` when it
/// does not go out as itself, or when Python has to say.
#[allow(clippy::too_many_arguments)] // one message in its walk's state
fn decide<'py>(
    items: &Bound<'py, PyList>,
    i: usize,
    total: usize,
    message: &Bound<'py, PyAny>,
    open: &Bound<'_, PySet>,
    chain: &Digest,
    request: &Request,
    kit: &Kit<'_>,
) -> Result<(u8, Pairing<'py>), Stop> {
    if let Some(moved) = not_a_turn(message, open, kit)? {
        return Ok((0, moved));
    }
    let answered = all_answered(items, i, total, message, kit)?;
    let binding = message.getattr(intern!(message.py(), "thinking_binding"))?;
    let code = if !sealed(message, kit)? {
        // `unsealed()` is the turn itself only when it is unbound too.
        if !binding.is_none() {
            return Err(Stop);
        }
        NO_SEALED
    } else if kept(message, &binding, chain, request, kit)? {
        KEPT
    } else {
        return Err(Stop);
    };
    Ok((code, Pairing::Open(answered)))
}

/// How message `i`, decided `code`, moves the pairing when it goes out as
/// itself (`Pairing.sent`); `Stop` when it does not, or when Python has to say.
fn as_itself<'py>(
    items: &Bound<'py, PyList>,
    (i, total): (usize, usize),
    message: &Bound<'py, PyAny>,
    open: &Bound<'_, PySet>,
    code: u8,
    kit: &Kit<'_>,
) -> Result<Pairing<'py>, Stop> {
    if let Some(moved) = not_a_turn(message, open, kit)? {
        return Ok(moved);
    }
    let answered = all_answered(items, i, total, message, kit)?;
    let itself = match code {
        KEPT => true,
        NO_SEALED => {
            let binding = message.getattr(intern!(message.py(), "thinking_binding"))?;
            binding.is_none() && !sealed(message, kit)?
        }
        _ => false, // unsealed: another object
    };
    if itself {
        Ok(Pairing::Open(answered))
    } else {
        Err(Stop)
    }
}

/// How a message that is not an assistant turn moves the pairing when it goes
/// out as itself; None for an assistant turn; `Stop` for a stray tool result
/// (it goes out as a user message) and for any class but the exact ones.
fn not_a_turn<'py>(
    message: &Bound<'py, PyAny>,
    open: &Bound<'_, PySet>,
    kit: &Kit<'_>,
) -> Result<Option<Pairing<'py>>, Stop> {
    let kind = message.get_type();
    if kind.is(&kit.system) {
        return Ok(Some(Pairing::Same));
    }
    if kind.is(&kit.user) {
        return Ok(Some(Pairing::Close));
    }
    if kind.is(&kit.tool) {
        let id = message.getattr(intern!(message.py(), "tool_call_id"))?;
        id.cast_exact::<PyString>().map_err(|_| Stop)?;
        // A result that answers no open call goes out as a user message: Python's.
        return if open.contains(&id)? {
            Ok(Some(Pairing::Answer(id)))
        } else {
            Err(Stop)
        };
    }
    if kind.is(&kit.assistant) {
        Ok(None)
    } else {
        Err(Stop)
    }
}

/// The call ids of the turn at `i`, when the run after it answers every one
/// (no id repeated); `Stop` otherwise (the calls left are dropped, unsealing).
fn all_answered<'py>(
    items: &Bound<'py, PyList>,
    i: usize,
    total: usize,
    message: &Bound<'py, PyAny>,
    kit: &Kit<'_>,
) -> Result<Vec<Bound<'py, PyAny>>, Stop> {
    let calls = call_ids(message, kit)?;
    let answered = answered(items, i, total, &calls, kit)?;
    if answered.len() == calls.len() {
        Ok(answered)
    } else {
        Err(Stop)
    }
}

/// The ids of the turn's calls, in order (exact `ToolCall`s with `str` ids).
fn call_ids<'py>(
    message: &Bound<'py, PyAny>,
    kit: &Kit<'_>,
) -> Result<Vec<Bound<'py, PyAny>>, Stop> {
    let py = message.py();
    let calls = message.getattr(intern!(py, "tool_calls"))?;
    let calls = calls.cast_exact::<PyTuple>().map_err(|_| Stop)?;
    let mut ids = Vec::with_capacity(calls.len());
    for call in calls.iter() {
        if !call.get_type().is(&kit.tool_call) {
            return Err(Stop);
        }
        let id = call.getattr(intern!(py, "id"))?;
        id.cast_exact::<PyString>().map_err(|_| Stop)?;
        ids.push(id);
    }
    Ok(ids)
}

/// The distinct call ids of the turn at `i` that the run of tool and system
/// messages after it answers (`Pairing.assistant`: the first result for a
/// wanted id answers it; the look-ahead ends at the first other message, at
/// `total`, or once every wanted id is answered).
fn answered<'py>(
    items: &Bound<'py, PyList>,
    i: usize,
    total: usize,
    calls: &[Bound<'py, PyAny>],
    kit: &Kit<'_>,
) -> Result<Vec<Bound<'py, PyAny>>, Stop> {
    let py = items.py();
    let wanted = PySet::new(py, calls)?;
    let done = PySet::empty(py)?;
    let mut answered = Vec::new();
    let mut j = i + 1;
    while j < total && done.len() < wanted.len() {
        let item = items.get_item(j)?;
        let kind = item.get_type();
        if kind.is(&kit.tool) {
            let id = item.getattr(intern!(py, "tool_call_id"))?;
            id.cast_exact::<PyString>().map_err(|_| Stop)?;
            if wanted.contains(&id)? && !done.contains(&id)? {
                done.add(&id)?;
                answered.push(id);
            }
        } else if !kind.is(&kit.system) {
            if kind.is(&kit.user) || kind.is(&kit.assistant) {
                break;
            }
            return Err(Stop); // another class: its role is Python's to read
        }
        j += 1;
    }
    Ok(answered)
}

/// Whether the turn has sealed parts (`has_sealed_parts`): a signed text, a
/// redacted or opaque block. A native block or any other class stops the run.
fn sealed(message: &Bound<'_, PyAny>, kit: &Kit<'_>) -> Result<bool, Stop> {
    let py = message.py();
    let parts = message.getattr(intern!(py, "parts"))?;
    let parts = parts.cast_exact::<PyTuple>().map_err(|_| Stop)?;
    let mut sealed = false;
    for part in parts.iter() {
        let kind = part.get_type();
        if part.is_exact_instance_of::<PyString>() || kind.is(&kit.tool_call) {
            continue;
        }
        if kind.is(&kit.text) {
            sealed |= !part.getattr(intern!(py, "signature"))?.is_none();
        } else if kind.is(&kit.redacted) || kind.is(&kit.opaque) {
            sealed = true;
        } else {
            return Err(Stop);
        }
    }
    Ok(sealed)
}

/// Whether a turn with sealed parts is kept: bound under this version to the
/// target, its own digest and its prefix as bound.
fn kept(
    message: &Bound<'_, PyAny>,
    binding: &Bound<'_, PyAny>,
    chain: &Digest,
    request: &Request,
    kit: &Kit<'_>,
) -> Result<bool, Stop> {
    if !binding.get_type().is(&kit.binding) {
        return Err(Stop);
    }
    let py = binding.py();
    let version: u32 = binding.getattr(intern!(py, "version"))?.extract()?;
    // Bound elsewhere, even with a prefix that matches the target: origin-mismatch.
    let bound = plain_origin(&binding.getattr(intern!(py, "origin"))?, kit)?;
    if version != digest::VERSION || bound != request.origin {
        return Ok(false);
    }
    let turn = binding.getattr(intern!(py, "turn"))?;
    if digest_bytes(&turn)? != message_digest(message)? {
        return Ok(false);
    }
    let prefix = binding.getattr(intern!(py, "prefix"))?;
    Ok(digest_bytes(&prefix)?
        == digest::prefix_digest(version, &request.origin, &request.context, chain))
}

/// 32 bytes held by an exact `bytes`.
fn digest_bytes(value: &Bound<'_, PyAny>) -> Result<Digest, Stop> {
    let value = value.cast_exact::<PyBytes>().map_err(|_| Stop)?;
    Digest::try_from(value.as_bytes()).map_err(|_| Stop)
}

/// The message's digest (`Message.digest`): the one it holds, or computed
/// and stored on it.
fn message_digest(message: &Bound<'_, PyAny>) -> Result<Digest, Stop> {
    let py = message.py();
    let name = intern!(py, "_digest");
    let held = message.getattr(name)?;
    if !held.is_none() {
        return digest_bytes(&held);
    }
    let mut encoding = Vec::with_capacity(2048);
    encode::encode_message(&mut encoding, message)?;
    let own = digest::digest_encoding(&encoding);
    write_slot(message, name, PyBytes::new(py, &own).as_any())?;
    Ok(own)
}
