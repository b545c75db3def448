//! `thinkseal._core`: the native module behind the `thinkseal` package.
//!
//! Most functions encode their Python arguments with the core's rules
//! (encode.rs), call the core and hand bytes back. Two build Python objects:
//! the stored-conversation reader (load.rs), which makes plain messages with
//! their digests, and the reader of request bodies into read-only containers.
//! Digests of many messages are hashed on a second thread (pipeline.rs), and
//! the seal ledger's keys are in ledger.rs. Every entry point runs under
//! [`errors::guard`], so no panic reaches Python.

mod claude;
mod encode;
mod errors;
mod kit;
mod ledger;
mod load;
mod pipeline;
mod strings;
mod walk;
mod wire;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PySet, PyString, PyTuple};
use thinkseal_core::digest::{self, Digest};
use thinkseal_core::model::{Context, Origin, Tool};

use crate::errors::{guard, validation_error};

pub(crate) fn digest_arg(py: Python<'_>, bytes: &[u8], what: &str) -> PyResult<Digest> {
    Digest::try_from(bytes)
        .map_err(|_| validation_error(py, what, &format!("expected 32 bytes, got {}", bytes.len())))
}

/// `bytes` of what `body` makes, under [`guard`].
pub(crate) fn bytes_of<B: AsRef<[u8]>>(
    py: Python<'_>,
    body: impl FnOnce() -> PyResult<B>,
) -> PyResult<Bound<'_, PyBytes>> {
    guard(py, || body().map(|b| PyBytes::new(py, b.as_ref())))
}

/// The canonical encoding of `message`.
fn encoding(message: &Bound<'_, PyAny>, capacity: usize) -> PyResult<Vec<u8>> {
    let mut out = Vec::with_capacity(capacity);
    encode::encode_message(&mut out, message)?;
    Ok(out)
}

/// A `str` argument as an owned `String`, read without caching UTF-8 in it (strings.rs).
fn owned_str(obj: &Bound<'_, PyAny>, path: &str) -> PyResult<String> {
    encode::py_str(obj, path).map(std::borrow::Cow::into_owned)
}

/// RFC 8785 bytes of a JSON value nested at most `max_depth` levels (at most
/// 256) whose strings have at most `max_string` characters; `ValidationError`
/// naming the path under `root` otherwise.
#[pyfunction]
#[pyo3(signature = (value, root = "$", max_depth = 256, max_string = usize::MAX))]
fn canonical_json<'py>(
    py: Python<'py>,
    value: &Bound<'py, PyAny>,
    root: &str,
    max_depth: usize,
    max_string: usize,
) -> PyResult<Bound<'py, PyBytes>> {
    bytes_of(py, || {
        encode::canonical_json(value, root, max_depth, max_string)
    })
}

/// The compact wire JSON of a value: the bytes of `json.dumps(value,
/// ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()`.
#[pyfunction]
#[pyo3(signature = (value, root = "$"))]
fn wire_json<'py>(
    py: Python<'py>,
    value: &Bound<'py, PyAny>,
    root: &str,
) -> PyResult<Bound<'py, PyBytes>> {
    bytes_of(py, || wire::wire_json(value, root))
}

/// The canonical encoding of one message (what its digest is taken over).
#[pyfunction]
fn encode_message<'py>(
    py: Python<'py>,
    message: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    bytes_of(py, || encoding(message, 0))
}

#[pyfunction]
fn message_digest<'py>(
    py: Python<'py>,
    message: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    bytes_of(py, || {
        encoding(message, 256).map(|out| digest::digest_encoding(&out))
    })
}

/// Digests of a list of messages. The messages are encoded under the GIL
/// (one copy of their strings) and hashed without it; with `threads` > 1,
/// hashed on other threads while the rest are encoded (pipeline.rs).
#[pyfunction]
#[pyo3(signature = (messages, threads = 1))]
fn message_digests<'py>(
    py: Python<'py>,
    messages: &Bound<'py, PyList>,
    threads: usize,
) -> PyResult<Bound<'py, PyList>> {
    guard(py, || {
        let digests = pipeline::message_digests(messages, threads)?;
        PyList::new(py, digests.iter().map(|d| PyBytes::new(py, d)))
    })
}

/// Chain values after each digest in `digests` (32-byte digests, packed),
/// starting from `start`; returned packed the same way.
#[pyfunction]
fn chain<'py>(py: Python<'py>, start: &[u8], digests: &[u8]) -> PyResult<Bound<'py, PyBytes>> {
    bytes_of(py, || {
        let start = digest_arg(py, start, "chain start")?;
        if !digests.len().is_multiple_of(32) {
            return Err(validation_error(
                py,
                "digests",
                "length is not a multiple of 32",
            ));
        }
        let mut value = start;
        let mut out = Vec::with_capacity(digests.len());
        for d in digests.chunks_exact(32) {
            let d = digest_arg(py, d, "digests")?;
            value = digest::chain_step(&value, &d);
            out.extend_from_slice(&value);
        }
        Ok(out)
    })
}

/// The digest of a request's context: system texts, tools as
/// `(name, description, parameters_jcs)` and the response format's RFC 8785 bytes.
#[pyfunction]
fn context_digest<'py>(
    py: Python<'py>,
    system: &Bound<'py, PyAny>,
    tools: Vec<(Bound<'py, PyAny>, Bound<'py, PyAny>, Vec<u8>)>,
    response_format_jcs: Option<Vec<u8>>,
) -> PyResult<Bound<'py, PyBytes>> {
    bytes_of(py, || {
        let context = Context {
            system: system
                .try_iter()?
                .map(|s| owned_str(&s?, "system"))
                .collect::<PyResult<_>>()?,
            tools: tools
                .into_iter()
                .map(|(name, description, parameters_jcs)| {
                    Ok(Tool {
                        name: owned_str(&name, "Tool.name")?,
                        description: owned_str(&description, "Tool.description")?,
                        parameters_jcs,
                    })
                })
                .collect::<PyResult<_>>()?,
            response_format_jcs,
        };
        Ok(digest::context_digest(&context))
    })
}

/// The prefix half of a binding.
#[pyfunction]
#[pyo3(signature = (version, provider, model, account, context, chain_before))]
fn prefix_digest<'py>(
    py: Python<'py>,
    version: u32,
    provider: &Bound<'py, PyAny>,
    model: &Bound<'py, PyAny>,
    account: Option<&Bound<'py, PyAny>>,
    context: &[u8],
    chain_before: &[u8],
) -> PyResult<Bound<'py, PyBytes>> {
    bytes_of(py, || {
        let origin = Origin {
            provider: owned_str(provider, "Origin.provider")?,
            model: owned_str(model, "Origin.model")?,
            account: account
                .map(|a| owned_str(a, "Origin.account"))
                .transpose()?,
        };
        let context = digest_arg(py, context, "context")?;
        let chain_before = digest_arg(py, chain_before, "chain_before")?;
        Ok(digest::prefix_digest(
            version,
            &origin,
            &context,
            &chain_before,
        ))
    })
}

/// The Anthropic Messages wire bytes of one plain turn (claude.rs), or
/// `None` when the Python path builds it.
#[pyfunction]
fn claude_turn<'py>(
    py: Python<'py>,
    role: &str,
    group: &Bound<'py, PyList>,
    kit: &Bound<'py, PyTuple>,
) -> PyResult<Option<Bound<'py, PyBytes>>> {
    guard(py, || {
        let kit = claude::Kit::of(kit, "claude_turn")?;
        Ok(claude::turn(role, group, &kit).map(|b| PyBytes::new(py, &b)))
    })
}

/// `Wire.turns` of a run of as-sent messages for Anthropic's Messages API
/// (claude.rs): the turns' bytes and tallies, or `None` when a message is
/// not a plain case. `keys` are the memo keys of an assistant turn and of a
/// one-message user turn.
#[pyfunction]
fn claude_turns<'py>(
    py: Python<'py>,
    sent: &Bound<'py, PyList>,
    keys: (Bound<'py, PyString>, Bound<'py, PyString>),
    kit: &Bound<'py, PyTuple>,
) -> PyResult<Option<claude::Turns<'py>>> {
    guard(py, || {
        let kit = claude::Kit::of(kit, "claude_turns")?;
        let keys = claude::Keys {
            assistant: keys.0,
            user: keys.1,
        };
        Ok(claude::turns(sent, &keys, &kit))
    })
}

/// `walk_run`'s result: where the run stopped, the chain values, the codes, the turns.
type WalkRun<'py> = (usize, Bound<'py, PyBytes>, Bound<'py, PyBytes>, Vec<usize>);

/// The replay walk's plain run (walk.rs): from `start`, the messages of
/// `items[:total]` before `end` that go out as themselves, decided from the
/// chain value `chain`; `(stop, their chain values, their codes, the indices
/// of the assistant turns among them)`, with `open_calls` (the pairing's
/// open call ids) moved past them.
#[pyfunction]
#[allow(clippy::too_many_arguments)] // the walk's state, as _walk.py holds it
fn walk_run<'py>(
    py: Python<'py>,
    items: &Bound<'py, PyList>,
    start: usize,
    end: usize,
    total: usize,
    open_calls: &Bound<'py, PySet>,
    chain: &[u8],
    target: &Bound<'py, PyAny>,
    context: &[u8],
    kit: &Bound<'py, PyTuple>,
) -> PyResult<WalkRun<'py>> {
    guard(py, || {
        let kit = walk::Kit::of(kit, "walk_run")?;
        let chain = digest_arg(py, chain, "chain")?;
        let target = walk::Target {
            origin: target,
            context: digest_arg(py, context, "context")?,
        };
        let run = walk::run(items, (start, end, total), open_calls, chain, &target, &kit);
        Ok((
            run.stop,
            PyBytes::new(py, &run.chain),
            PyBytes::new(py, &run.codes),
            run.turns,
        ))
    })
}

/// `Replay.sent_messages`'s plain run (walk.rs): from `start`, the messages
/// of `items[:total]` before `end` (`bounds`) that go out as themselves
/// given their decided `codes` (`codes[k]` for message `first + k`); the
/// index of the first that does not, with `open_calls` moved past the others.
#[pyfunction]
fn sent_run(
    py: Python<'_>,
    items: &Bound<'_, PyList>,
    bounds: (usize, usize, usize),
    open_calls: &Bound<'_, PySet>,
    codes: &[u8],
    first: usize,
    kit: &Bound<'_, PyTuple>,
) -> PyResult<usize> {
    guard(py, || {
        let kit = walk::Kit::of(kit, "sent_run")?;
        Ok(walk::sent_run(
            items,
            bounds,
            open_calls,
            (codes, first),
            &kit,
        ))
    })
}

/// `Conversation.from_json`'s fast path (load.rs): the decoded document with
/// its plain messages already built, or `None` when the text is left to `json`.
#[pyfunction]
fn load_document<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyAny>,
    kit: &Bound<'py, PyTuple>,
    max_depth: usize,
    max_string: usize,
    max_parts: usize,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    guard(py, || {
        load::load_document(text, kit, max_depth, max_string, max_parts)
    })
}

/// A JSON text as read-only values (`_json.FrozenDict` / `FrozenList`
/// containers), or `None` when the text is left to `json` (load.rs).
#[pyfunction]
fn frozen_json<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyAny>,
    frozen_dict: &Bound<'py, PyAny>,
    frozen_list: &Bound<'py, PyAny>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    guard(py, || load::frozen_json(text, frozen_dict, frozen_list))
}

/// The byte spans of the elements of the top-level array member `key` of the
/// JSON object `text` (the gateway's request bodies), or `None`.
#[pyfunction]
fn member_spans(py: Python<'_>, text: &[u8], key: &str) -> PyResult<Option<Vec<(usize, usize)>>> {
    guard(py, || {
        Ok(thinkseal_core::spans::member_array_spans(text, key))
    })
}

/// The byte span of the top-level array member `key` of the JSON object
/// `text`, its elements' spans and a 16-byte BLAKE3 digest of each element's
/// bytes (hashed without the GIL), or `None`.
#[pyfunction]
fn member_elements<'py>(
    py: Python<'py>,
    text: &[u8],
    key: &str,
) -> PyResult<Option<ElementsOf<'py>>> {
    guard(py, || {
        let Some((array, spans)) = thinkseal_core::spans::member_array(text, key) else {
            return Ok(None);
        };
        let digests = py.detach(|| thinkseal_core::spans::span_digests(text, &spans));
        let digests = digests.iter().map(|d| PyBytes::new(py, d)).collect();
        Ok(Some((array, spans, digests)))
    })
}

type ElementsOf<'py> = (
    (usize, usize),
    Vec<(usize, usize)>,
    Vec<Bound<'py, PyBytes>>,
);

/// The byte span of the value of the top-level member `key` of the JSON
/// object `text`, or `None`.
#[pyfunction]
fn member_span(py: Python<'_>, text: &[u8], key: &str) -> PyResult<Option<(usize, usize)>> {
    guard(py, || {
        Ok(thinkseal_core::spans::member_value_span(text, key))
    })
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("FINGERPRINT_VERSION", digest::VERSION)?;
    m.add("CHAIN_START", PyBytes::new(m.py(), &digest::CHAIN_START))?;
    m.add("MESSAGE_DOMAIN", digest::MESSAGE_DOMAIN)?;
    m.add("CHAIN_DOMAIN", digest::CHAIN_DOMAIN)?;
    m.add("REQUEST_DOMAIN", digest::REQUEST_DOMAIN)?;
    m.add("PREFIX_DOMAIN", digest::PREFIX_DOMAIN)?;
    m.add_function(wrap_pyfunction!(canonical_json, m)?)?;
    m.add_function(wrap_pyfunction!(encode_message, m)?)?;
    m.add_function(wrap_pyfunction!(wire_json, m)?)?;
    m.add_function(wrap_pyfunction!(message_digest, m)?)?;
    m.add_function(wrap_pyfunction!(message_digests, m)?)?;
    m.add_function(wrap_pyfunction!(chain, m)?)?;
    m.add_function(wrap_pyfunction!(context_digest, m)?)?;
    m.add_function(wrap_pyfunction!(prefix_digest, m)?)?;
    m.add_function(wrap_pyfunction!(claude_turn, m)?)?;
    m.add_function(wrap_pyfunction!(claude_turns, m)?)?;
    m.add_function(wrap_pyfunction!(walk_run, m)?)?;
    m.add_function(wrap_pyfunction!(sent_run, m)?)?;
    m.add_function(wrap_pyfunction!(load_document, m)?)?;
    m.add_function(wrap_pyfunction!(frozen_json, m)?)?;
    m.add_function(wrap_pyfunction!(ledger::ledger_keys, m)?)?;
    m.add_function(wrap_pyfunction!(ledger::ledger_entry_key, m)?)?;
    m.add_function(wrap_pyfunction!(ledger::ledger_check, m)?)?;
    m.add_function(wrap_pyfunction!(ledger::fragment_key, m)?)?;
    m.add_function(wrap_pyfunction!(ledger::fragment_check, m)?)?;
    m.add_function(wrap_pyfunction!(member_spans, m)?)?;
    m.add_function(wrap_pyfunction!(member_span, m)?)?;
    m.add_function(wrap_pyfunction!(member_elements, m)?)?;
    Ok(())
}
