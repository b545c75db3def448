//! `Conversation.from_json`'s fast path: the stored text read in Rust
//! (`thinkseal_core::parse`, without the GIL), the common message shapes built
//! as Python objects here with every check done once, and their digests taken
//! from the parsed values, hashed on a second thread while the next messages
//! are built (pipeline.rs).
//!
//! The Python path stays the definition. Whatever this module is not sure
//! of goes back to it: a text the reader refuses (the caller then reads it
//! with `json`), and any message whose shape or values are not a plain case
//! below (it is handed back as the dict `json.loads` would have produced, and
//! `message_from_dict` builds it or names what is wrong). Every check here is
//! at least as strict as the Python one it stands for, so a message built
//! here is one the Python path would have built, field for field.
//!
//! [`frozen_json`] reads a request body back (`PreparedRequest.body`, which
//! the wire caches keep only as bytes) the same way, into read-only containers.
//!
//! The objects are made as the Python classes make their trusted copies:
//! `object.__new__(cls)`, then `object.__setattr__` per slot (the classes
//! refuse ordinary attribute writes). Both are done here without the Python
//! calls: [`Allocator::make`] allocates as `object.__new__` does (after one
//! real call of it per class), [`write_slot`] writes as `object.__setattr__`.
//! The slot names are those of python/thinkseal/_messages.py, _blocks.py,
//! _binding.py and _json.py.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::HashMap;
use std::thread;

use pyo3::exceptions::PyTypeError;
use pyo3::ffi;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple, PyType};
use thinkseal_core::encode;
use thinkseal_core::parse::{self, Value};

use crate::kit::kit;
use crate::pipeline::Hasher;
use crate::strings::{self, surely_not_blank};

/// How deep the reader goes before leaving a text to the Python path: the
/// deepest nesting any limit allows (`Limits.max_depth` ≤ 256) plus the
/// document's own levels.
const READ_DEPTH: usize = 256 + 8;

kit! {
    /// The classes the objects are made with, handed over by
    /// python/thinkseal/_load.py in this order.
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
        frozen_dict,
        frozen_list,
    }
}

/// What the checks allow (`thinkseal.Limits`).
#[derive(Clone, Copy)]
#[allow(clippy::struct_field_names)] // named as the `Limits` fields they carry
struct Bounds {
    max_depth: usize,
    max_string: usize,
    max_parts: usize,
}

struct Loader<'py, 'scope, 'env> {
    py: Python<'py>,
    kit: Kit<'py>,
    bounds: Bounds,
    /// One `Origin` object per distinct (provider, model, account) of the bindings.
    origins: HashMap<(String, String, Option<String>), Bound<'py, PyAny>>,
    /// Canonical encodings of the messages built here, hashed on a second
    /// thread while the next ones are built (pipeline.rs).
    digests: Hasher<'scope, 'env>,
    built: Vec<Bound<'py, PyAny>>,
    /// The allocators of the kit's classes met so far.
    allocators: RefCell<Vec<Allocator>>,
}

/// The document written by `Conversation.to_json`, read from `text` (a `str`
/// or UTF-8 `bytes`): the decoded JSON with every message that is a plain
/// case already a message object (its digest set), the others left as
/// dicts. `None` when the reader refuses the text.
pub fn load_document<'py>(
    text: &Bound<'py, PyAny>,
    kit: &Bound<'py, PyTuple>,
    max_depth: usize,
    max_string: usize,
    max_parts: usize,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let py = text.py();
    let Some(source) = source_text(text) else {
        return Ok(None);
    };
    // The text is read without the GIL: it touches no Python object (the str
    // or bytes it borrows from is immutable and kept alive by `text`), so other
    // threads, an event loop among them, run while a large text is parsed.
    let Ok(document) = py.detach(|| parse::parse(&source, READ_DEPTH)) else {
        return Ok(None);
    };
    let kit = Kit::of(kit, "load_document")?;
    let Value::Object(members) = &document else {
        return to_python(py, &document).map(Some);
    };
    thread::scope(|scope| {
        let mut loader = Loader {
            py,
            kit,
            bounds: Bounds {
                max_depth,
                max_string,
                max_parts,
            },
            origins: HashMap::new(),
            digests: Hasher::new(scope, 2),
            built: Vec::new(),
            allocators: RefCell::new(Vec::new()),
        };
        let out = PyDict::new(py);
        for (key, value) in members {
            let item = match (key.as_ref(), value) {
                ("messages", Value::Array(messages)) => loader.messages(messages)?.into_any(),
                _ => to_python(py, value)?,
            };
            out.set_item(strings::new_str(py, key)?, item)?;
        }
        loader.set_digests()?;
        Ok(Some(out.into_any()))
    })
}

/// The text of a `str` or of UTF-8 `bytes`; `None` for anything else (left
/// to the Python path, which reads other encodings or names the error).
fn source_text<'a>(text: &'a Bound<'_, PyAny>) -> Option<Cow<'a, str>> {
    if let Ok(s) = text.cast::<PyString>() {
        strings::utf8(s).ok()
    } else if let Ok(b) = text.cast::<PyBytes>() {
        std::str::from_utf8(b.as_bytes()).ok().map(Cow::Borrowed)
    } else {
        None
    }
}

/// The JSON array or object of `text` with read-only containers, as
/// `_json.frozen(json.loads(text))` makes it (`frozen_dict` and `frozen_list`
/// are `_json.FrozenDict` and `FrozenList`); `None` when the reader refuses
/// the text or it holds a scalar.
pub fn frozen_json<'py>(
    text: &Bound<'py, PyAny>,
    frozen_dict: &Bound<'py, PyAny>,
    frozen_list: &Bound<'py, PyAny>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let Some(source) = source_text(text) else {
        return Ok(None);
    };
    match parse::parse(&source, READ_DEPTH) {
        Ok(value @ (Value::Array(_) | Value::Object(_))) => {
            frozen_value(text.py(), &value, frozen_dict, frozen_list).map(Some)
        }
        _ => Ok(None),
    }
}

/// `value` with read-only containers. Each container is made empty and
/// filled through the C-level dict and list calls, which the read-only
/// classes leave as they are (they refuse only the Python-level methods).
fn frozen_value<'py>(
    py: Python<'py>,
    value: &Value<'_>,
    frozen_dict: &Bound<'py, PyAny>,
    frozen_list: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    match value {
        Value::Array(items) => {
            let object = frozen_list.call0()?;
            let list = object.cast::<PyList>()?;
            for item in items {
                list.append(frozen_value(py, item, frozen_dict, frozen_list)?)?;
            }
            Ok(object)
        }
        Value::Object(members) => {
            let object = frozen_dict.call0()?;
            let dict = object.cast::<PyDict>()?;
            for (k, v) in members {
                dict.set_item(
                    strings::new_str(py, k)?,
                    frozen_value(py, v, frozen_dict, frozen_list)?,
                )?;
            }
            Ok(object)
        }
        scalar => to_python(py, scalar),
    }
}

/// A JSON value as the Python objects `json.loads` makes of it.
fn to_python<'py>(py: Python<'py>, value: &Value<'_>) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Int(i) => PyInt::new(py, *i).into_any(),
        Value::Float(x) => PyFloat::new(py, *x).into_any(),
        Value::Str(s) => strings::new_str(py, s)?.into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(to_python(py, item)?)?;
            }
            list.into_any()
        }
        Value::Object(members) => {
            let dict = PyDict::new(py);
            for (k, v) in members {
                dict.set_item(strings::new_str(py, k)?, to_python(py, v)?)?;
            }
            dict.into_any()
        }
    })
}

/// A string of valid Unicode (the reader guarantees it) within
/// `Limits.max_string` characters, like `check_str`.
fn within(s: &str, bounds: Bounds) -> bool {
    s.len() <= bounds.max_string || s.chars().count() <= bounds.max_string
}

fn str_of<'v>(value: Option<&'v Value<'_>>, bounds: Bounds) -> Option<&'v str> {
    match value {
        Some(Value::Str(s)) if within(s, bounds) => Some(s),
        _ => None,
    }
}

fn non_blank<'v>(value: Option<&'v Value<'_>>, bounds: Bounds) -> Option<&'v str> {
    str_of(value, bounds).filter(|s| surely_not_blank(s))
}

/// One part of an assistant turn, checked, before it becomes an object.
enum Part<'v> {
    Text(&'v str),
    Call {
        id: &'v str,
        name: &'v str,
        arguments: &'v Value<'v>,
        canonical: Vec<u8>,
    },
    Thinking {
        text: &'v str,
        signature: Option<&'v str>,
    },
    Redacted(&'v str),
    Opaque {
        provider: &'v str,
        data: &'v str,
    },
}

/// A stored binding's fields, when they need no percent-decoding.
struct BindingText<'v> {
    version: u32,
    provider: &'v str,
    model: &'v str,
    account: Option<&'v str>,
    prefix: [u8; 32],
    turn: [u8; 32],
}

/// `thinkseal-binding/V;provider;model;[=account];prefix-hex;turn-hex`, as
/// `Binding.parse` reads it; `None` for anything else and for fields that are
/// percent-encoded or that `Origin` might refuse.
fn binding_text(text: &str, bounds: Bounds) -> Option<BindingText<'_>> {
    let rest = text.strip_prefix("thinkseal-binding/")?;
    let mut fields = rest.split(';');
    let mut next = || fields.next();
    // Six fields and no seventh, read in order (a tuple's are evaluated left to right).
    let (Some(version), Some(provider), Some(model), Some(account), Some(prefix), Some(turn), None) =
        (next(), next(), next(), next(), next(), next(), next())
    else {
        return None;
    };
    if version.is_empty() || version.len() > 9 || !version.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let account = match account.strip_prefix('=') {
        None if account.is_empty() => None,
        None => return None,
        Some("") => None,
        Some(a) => Some(a),
    };
    let plain = |s: &str| !s.contains('%') && within(s, bounds);
    if !(plain(provider) && plain(model) && account.is_none_or(plain)) {
        return None;
    }
    if !(surely_not_blank(provider) && surely_not_blank(model)) {
        return None;
    }
    Some(BindingText {
        version: version.parse().ok()?,
        provider,
        model,
        account,
        prefix: hex32(prefix)?,
        turn: hex32(turn)?,
    })
}

/// Each byte's value as a lowercase hex digit; 0xFF for any other byte.
const HEX_DIGIT: [u8; 256] = {
    let mut table = [0xFF; 256];
    let mut d = 0;
    while d < 16 {
        table[b"0123456789abcdef"[d] as usize] = d as u8;
        d += 1;
    }
    table
};

/// 64 lowercase hex digits as 32 bytes.
fn hex32(text: &str) -> Option<[u8; 32]> {
    let digits: &[u8; 64] = text.as_bytes().try_into().ok()?;
    let mut out = [0u8; 32];
    let mut seen = 0;
    for (byte, pair) in out.iter_mut().zip(digits.chunks_exact(2)) {
        let (high, low) = (HEX_DIGIT[pair[0] as usize], HEX_DIGIT[pair[1] as usize]);
        seen |= high | low;
        *byte = high << 4 | low;
    }
    // One test for all 64: a byte that is no digit set the table's high bits.
    (seen & 0xF0 == 0).then_some(out)
}

impl<'py> Loader<'py, '_, '_> {
    fn messages(&mut self, messages: &[Value<'_>]) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(self.py);
        self.built.reserve(messages.len());
        for message in messages {
            let start = self.digests.buffer.len();
            let item = if let Some(built) = self.message(message)? {
                self.digests.end();
                self.built.push(built.clone());
                built
            } else {
                self.digests.buffer.truncate(start);
                to_python(self.py, message)?
            };
            list.append(item)?;
        }
        Ok(list)
    }

    /// Waits for the digests (hashed without the GIL) and stores each on its message.
    fn set_digests(self) -> PyResult<()> {
        let py = self.py;
        let digests = self.digests.finish(py);
        let name = intern!(py, "_digest");
        for (message, digest) in self.built.iter().zip(digests) {
            write_slot(message, name, PyBytes::new(py, &digest).as_any())?;
        }
        Ok(())
    }

    /// `cls`'s allocator, checked the first time `cls` is met.
    fn allocator(&self, cls: &Bound<'py, PyAny>) -> PyResult<Allocator> {
        let met = self
            .allocators
            .borrow()
            .iter()
            .copied()
            .find(|a| a.ty.cast() == cls.as_ptr());
        if let Some(allocator) = met {
            return Ok(allocator);
        }
        let allocator = Allocator::checked(cls)?;
        self.allocators.borrow_mut().push(allocator);
        Ok(allocator)
    }

    fn object(
        &self,
        cls: &Bound<'py, PyAny>,
        slots: &[(&Bound<'py, PyString>, Bound<'py, PyAny>)],
    ) -> PyResult<Bound<'py, PyAny>> {
        let object = self.allocator(cls)?.make(self.py)?;
        for (name, value) in slots {
            write_slot(&object, name, value)?;
        }
        Ok(object)
    }

    fn string(&self, s: &str) -> PyResult<Bound<'py, PyAny>> {
        Ok(strings::new_str(self.py, s)?.into_any())
    }

    /// The message object for a plain case, its encoding appended; `None` otherwise.
    fn message(&mut self, message: &Value<'_>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let bounds = self.bounds;
        match str_of(message.get("role"), bounds) {
            Some(role @ ("system" | "user")) => {
                let Some(content) = non_blank(message.get("content"), bounds) else {
                    return Ok(None);
                };
                let (cls, tag) = if role == "system" {
                    (&self.kit.system, encode::tag::SYSTEM)
                } else {
                    (&self.kit.user, encode::tag::USER)
                };
                self.digests.buffer.push(tag);
                encode::put_str(&mut self.digests.buffer, content);
                self.content_message(cls, content, &[]).map(Some)
            }
            Some("tool") => {
                let (Some(content), Some(call_id)) = (
                    non_blank(message.get("content"), bounds),
                    non_blank(message.get("tool_call_id"), bounds),
                ) else {
                    return Ok(None);
                };
                let is_error = match message.get("is_error") {
                    None => false,
                    Some(Value::Bool(b)) => *b,
                    Some(_) => return Ok(None),
                };
                self.digests.buffer.push(encode::tag::TOOL_RESULT);
                encode::put_str(&mut self.digests.buffer, content);
                encode::put_tool_result_tail(&mut self.digests.buffer, call_id, is_error);
                let py = self.py;
                let extra = [
                    (intern!(py, "tool_call_id"), self.string(call_id)?),
                    (
                        intern!(py, "is_error"),
                        PyBool::new(py, is_error).to_owned().into_any(),
                    ),
                ];
                self.content_message(&self.kit.tool, content, &extra)
                    .map(Some)
            }
            Some("assistant") => self.assistant(message),
            _ => Ok(None),
        }
    }

    /// A system, user or tool message whose content is one plain string.
    fn content_message(
        &self,
        cls: &Bound<'py, PyAny>,
        content: &str,
        extra: &[(&Bound<'py, PyString>, Bound<'py, PyAny>)],
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = self.py;
        let content = self.string(content)?;
        let object = self.object(
            cls,
            &[
                (intern!(py, "content"), content.clone()),
                (intern!(py, "_fp_content"), content),
                (intern!(py, "_breakpoints"), PyTuple::empty(py).into_any()),
                (intern!(py, "_digest"), py.None().into_bound(py)),
                (intern!(py, "_wire"), py.None().into_bound(py)),
            ],
        )?;
        for (name, value) in extra {
            write_slot(&object, name, value)?;
        }
        Ok(object)
    }

    fn assistant(&mut self, message: &Value<'_>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let bounds = self.bounds;
        let Some(Value::Array(raw_parts)) = message.get("parts") else {
            return Ok(None);
        };
        if raw_parts.len() > bounds.max_parts {
            return Ok(None);
        }
        let mut parts = Vec::with_capacity(raw_parts.len());
        for raw in raw_parts {
            let Some(part) = self.part(raw) else {
                return Ok(None);
            };
            parts.push(part);
        }
        let binding = match message.get("binding") {
            None | Some(Value::Null) => None,
            Some(Value::Str(text)) => match binding_text(text, bounds) {
                Some(b) => Some(b),
                None => return Ok(None),
            },
            Some(_) => return Ok(None),
        };
        let out = &mut self.digests.buffer;
        encode::put_assistant_header(out, parts.len());
        for part in &parts {
            match part {
                Part::Text(text) => encode::put_text_part(out, text),
                Part::Call {
                    id,
                    name,
                    canonical,
                    ..
                } => encode::put_tool_call(out, id, name, canonical),
                Part::Thinking { text, signature } => {
                    encode::put_thinking_text(out, text, *signature);
                }
                Part::Redacted(data) => encode::put_redacted(out, data),
                Part::Opaque { provider, data } => encode::put_opaque(out, provider, data),
            }
        }
        let py = self.py;
        let mut objects = Vec::with_capacity(parts.len());
        let mut calls = Vec::new();
        let mut thinking = Vec::new();
        let mut texts = Vec::new();
        for part in &parts {
            let object = self.part_object(part)?;
            match part {
                Part::Text(text) => texts.push((*text, object.clone())),
                Part::Call { .. } => calls.push(object.clone()),
                _ => thinking.push(object.clone()),
            }
            objects.push(object);
        }
        // As `"".join(texts)`: one text part is the content itself.
        let content = match &texts[..] {
            [] => py.None().into_bound(py),
            [(_, only)] => only.clone(),
            _ => self.string(&texts.iter().map(|(text, _)| *text).collect::<String>())?,
        };
        let binding = match binding {
            Some(b) => self.binding(&b)?,
            None => py.None().into_bound(py),
        };
        self.object(
            &self.kit.assistant,
            &[
                (intern!(py, "parts"), PyTuple::new(py, objects)?.into_any()),
                (intern!(py, "content_opt"), content),
                (
                    intern!(py, "tool_calls"),
                    PyTuple::new(py, calls)?.into_any(),
                ),
                (
                    intern!(py, "thinking"),
                    PyTuple::new(py, thinking)?.into_any(),
                ),
                (intern!(py, "thinking_binding"), binding),
                (intern!(py, "_digest"), py.None().into_bound(py)),
                (intern!(py, "_wire"), py.None().into_bound(py)),
                (intern!(py, "_unsealed"), py.None().into_bound(py)),
            ],
        )
        .map(Some)
    }

    /// One stored part (`message_from_dict`'s `_part_from_dict`), checked as
    /// its constructor checks it; `None` for anything else.
    fn part<'v>(&self, raw: &'v Value<'v>) -> Option<Part<'v>> {
        let bounds = self.bounds;
        match str_of(raw.get("type"), bounds)? {
            "text" => str_of(raw.get("text"), bounds).map(Part::Text),
            "tool_call" => {
                let id = non_blank(raw.get("id"), bounds)?;
                let name = non_blank(raw.get("name"), bounds)?;
                let arguments = raw.get("arguments")?;
                if !matches!(arguments, Value::Object(_)) || !strings_within(arguments, bounds) {
                    return None;
                }
                let mut canonical = Vec::new();
                parse::write_canonical(&mut canonical, arguments, bounds.max_depth).ok()?;
                Some(Part::Call {
                    id,
                    name,
                    arguments,
                    canonical,
                })
            }
            "thinking" => {
                let text = str_of(raw.get("text"), bounds)?;
                let signature = match raw.get("signature") {
                    None | Some(Value::Null) => None,
                    Some(Value::Str(s)) if within(s, bounds) => {
                        Some(s.as_ref()).filter(|s| !s.is_empty())
                    }
                    Some(_) => return None,
                };
                (!text.is_empty() || signature.is_some())
                    .then_some(Part::Thinking { text, signature })
            }
            "redacted_thinking" => non_blank(raw.get("data"), bounds).map(Part::Redacted),
            "opaque_thinking" => Some(Part::Opaque {
                provider: non_blank(raw.get("provider"), bounds)?,
                data: non_blank(raw.get("data"), bounds)?,
            }),
            _ => None,
        }
    }

    fn part_object(&self, part: &Part<'_>) -> PyResult<Bound<'py, PyAny>> {
        let py = self.py;
        let none = || py.None().into_bound(py);
        match part {
            Part::Text(text) => self.string(text),
            Part::Call {
                id,
                name,
                arguments,
                canonical,
            } => self.object(
                &self.kit.tool_call,
                &[
                    (intern!(py, "id"), self.string(id)?),
                    (intern!(py, "name"), self.string(name)?),
                    (intern!(py, "arguments"), self.frozen(arguments)?),
                    (
                        intern!(py, "_arguments_jcs"),
                        PyBytes::new(py, canonical).into_any(),
                    ),
                ],
            ),
            Part::Thinking { text, signature } => self.object(
                &self.kit.text,
                &[
                    (intern!(py, "text"), self.string(text)?),
                    (
                        intern!(py, "signature"),
                        match signature {
                            Some(s) => self.string(s)?,
                            None => none(),
                        },
                    ),
                ],
            ),
            Part::Redacted(data) => self.object(
                &self.kit.redacted,
                &[(intern!(py, "data"), self.string(data)?)],
            ),
            Part::Opaque { provider, data } => self.object(
                &self.kit.opaque,
                &[
                    (intern!(py, "provider"), self.string(provider)?),
                    (intern!(py, "data"), self.string(data)?),
                ],
            ),
        }
    }

    /// A JSON value as `_json._freeze` makes it: read-only containers.
    fn frozen(&self, value: &Value<'_>) -> PyResult<Bound<'py, PyAny>> {
        frozen_value(self.py, value, &self.kit.frozen_dict, &self.kit.frozen_list)
    }

    fn binding(&mut self, b: &BindingText<'_>) -> PyResult<Bound<'py, PyAny>> {
        let py = self.py;
        let key = (
            b.provider.to_owned(),
            b.model.to_owned(),
            b.account.map(str::to_owned),
        );
        let origin = if let Some(origin) = self.origins.get(&key) {
            origin.clone()
        } else {
            let account = b
                .account
                .map_or_else(|| Ok(py.None().into_bound(py)), |a| self.string(a))?;
            let origin = self.object(
                &self.kit.origin,
                &[
                    (intern!(py, "provider"), self.string(b.provider)?),
                    (intern!(py, "model"), self.string(b.model)?),
                    (intern!(py, "account"), account),
                ],
            )?;
            self.origins.insert(key, origin.clone());
            origin
        };
        self.object(
            &self.kit.binding,
            &[
                (intern!(py, "origin"), origin),
                (intern!(py, "version"), PyInt::new(py, b.version).into_any()),
                (
                    intern!(py, "prefix"),
                    PyBytes::new(py, &b.prefix).into_any(),
                ),
                (intern!(py, "turn"), PyBytes::new(py, &b.turn).into_any()),
            ],
        )
    }
}

/// Every string in `value`, keys included, within `Limits.max_string`
/// (`canonical_json` checks them; over the limit, the Python path names it).
fn strings_within(value: &Value<'_>, bounds: Bounds) -> bool {
    match value {
        Value::Str(s) => within(s, bounds),
        Value::Array(items) => items.iter().all(|v| strings_within(v, bounds)),
        Value::Object(members) => members
            .iter()
            .all(|(k, v)| within(k, bounds) && strings_within(v, bounds)),
        _ => true,
    }
}

/// `object.__setattr__(object, name, value)`: the generic attribute write the
/// classes' own trusted constructors use (they refuse `setattr`).
///
/// Measured reason for calling it directly rather than through the Python
/// builtin: reading 2,000 stored 1.7 KB messages (`_load.decode_stored`, min
/// of 40) took 4.78-4.94 us per message this way, 5.65-5.76 through
/// `object.__setattr__` (a call with an argument tuple per slot).
#[allow(unsafe_code)] // one audited call, with its SAFETY note and measured reason
pub(crate) fn write_slot(
    object: &Bound<'_, PyAny>,
    name: &Bound<'_, PyString>,
    value: &Bound<'_, PyAny>,
) -> PyResult<()> {
    // SAFETY: the three pointers are live references the caller holds for the
    // whole call, and the GIL is held (they are `Bound`); the function borrows
    // them (it steals no reference) and returns -1 with an exception set on
    // failure, which `PyErr::fetch` takes.
    let status =
        unsafe { ffi::PyObject_GenericSetAttr(object.as_ptr(), name.as_ptr(), value.as_ptr()) };
    if status == 0 {
        Ok(())
    } else {
        Err(PyErr::fetch(object.py()))
    }
}

/// A class whose instances [`Allocator::make`] makes: one `object.__new__`
/// took once, so its layout is `object`'s and its slots.
#[derive(Clone, Copy)]
struct Allocator {
    ty: *mut ffi::PyTypeObject,
    alloc: ffi::allocfunc,
}

impl Allocator {
    /// `cls`'s allocator, after `object.__new__(cls)` made an instance of
    /// it: that call refuses every class whose instances need more than
    /// zero-filled memory (a builtin type such as `dict`, a class of a C
    /// extension with its own `__new__`), and abstract classes.
    fn checked(cls: &Bound<'_, PyAny>) -> PyResult<Self> {
        let py = cls.py();
        let ty = cls.cast::<PyType>()?;
        py.get_type::<PyAny>()
            .getattr(intern!(py, "__new__"))?
            .call1((ty,))?;
        // SAFETY: `ty` is a live type object and the GIL is held.
        #[allow(unsafe_code)] // reads one field of a live type object
        let alloc = unsafe { (*ty.as_type_ptr()).tp_alloc };
        let alloc = alloc
            .ok_or_else(|| PyTypeError::new_err("load_document: a class without an allocator"))?;
        Ok(Self {
            ty: ty.as_type_ptr(),
            alloc,
        })
    }

    /// What `object.__new__(cls)` returns: `object_new` takes the type's
    /// allocator, `tp_alloc(cls, 0)`, once its checks passed. They passed for
    /// this class in [`Allocator::checked`], and the one memory depends on
    /// (that an instance is `object` and slots) is about the class's layout,
    /// which cannot change.
    ///
    /// Measured reason for allocating directly rather than calling
    /// `object.__new__` each time: that call makes an argument tuple and a
    /// slice of it per object. `from_json` of 3,000 stored assistant turns
    /// took 4.36-4.73 us per turn this way against 4.74-4.96 (the allocation
    /// alone changed; three alternating runs, min of 31).
    #[allow(unsafe_code)] // one audited call, with its SAFETY note and measured reason
    fn make<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        // SAFETY: `ty` is kept alive by the kit for the whole load (the GIL
        // is held); `tp_alloc` returns a new reference with every slot NULL
        // (unset), or NULL with an exception set, which
        // `from_owned_ptr_or_err` takes.
        unsafe { Bound::from_owned_ptr_or_err(py, (self.alloc)(self.ty, 0)) }
    }
}
