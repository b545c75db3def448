//! `thinkseal._core`: the native module behind the `thinkseal` package.
//!
//! Thin by design: each function walks its Python arguments into
//! `thinkseal-core` types (walk.rs), calls the core, and hands bytes back.
//! Every entry point runs under [`errors::guard`], so no panic reaches Python.

mod errors;
mod ledger;
mod load;
mod pipeline;
mod strings;
mod walk;
mod wire;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyTuple};
use thinkseal_core::digest::{self, Digest};
use thinkseal_core::model::{Context, Origin, Tool};

use crate::errors::{guard, validation_error};

fn digest_arg(py: Python<'_>, bytes: &[u8], what: &str) -> PyResult<Digest> {
    Digest::try_from(bytes)
        .map_err(|_| validation_error(py, what, &format!("expected 32 bytes, got {}", bytes.len())))
}

/// A `str` argument as an owned `String`, read without caching UTF-8 in it (strings.rs).
fn owned_str(obj: &Bound<'_, PyAny>, path: &str) -> PyResult<String> {
    walk::py_str(obj, path).map(std::borrow::Cow::into_owned)
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
    guard(py, || {
        Ok(PyBytes::new(
            py,
            &walk::canonical_json(value, root, max_depth, max_string)?,
        ))
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
    guard(py, || Ok(PyBytes::new(py, &wire::wire_json(value, root)?)))
}

/// The canonical encoding of one message (what its digest is taken over).
#[pyfunction]
fn encode_message<'py>(
    py: Python<'py>,
    message: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    guard(py, || {
        let mut out = Vec::new();
        walk::encode_message(&mut out, message)?;
        Ok(PyBytes::new(py, &out))
    })
}

#[pyfunction]
fn message_digest<'py>(
    py: Python<'py>,
    message: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    guard(py, || {
        let mut out = Vec::with_capacity(256);
        walk::encode_message(&mut out, message)?;
        Ok(PyBytes::new(py, &digest::digest_encoding(&out)))
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
    guard(py, || {
        let start = digest_arg(py, start, "chain start")?;
        if digests.len() % 32 != 0 {
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
        Ok(PyBytes::new(py, &out))
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
    guard(py, || {
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
        Ok(PyBytes::new(py, &digest::context_digest(&context)))
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
    guard(py, || {
        let origin = Origin {
            provider: owned_str(provider, "Origin.provider")?,
            model: owned_str(model, "Origin.model")?,
            account: account
                .map(|a| owned_str(a, "Origin.account"))
                .transpose()?,
        };
        let context = digest_arg(py, context, "context")?;
        let chain_before = digest_arg(py, chain_before, "chain_before")?;
        Ok(PyBytes::new(
            py,
            &digest::prefix_digest(version, &origin, &context, &chain_before),
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

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("FINGERPRINT_VERSION", digest::VERSION)?;
    m.add("CHAIN_START", PyBytes::new(m.py(), &digest::CHAIN_START))?;
    m.add("MESSAGE_CONTEXT", digest::MESSAGE_CONTEXT)?;
    m.add("CHAIN_CONTEXT", digest::CHAIN_CONTEXT)?;
    m.add("CONTEXT_CONTEXT", digest::CONTEXT_CONTEXT)?;
    m.add("PREFIX_CONTEXT", digest::PREFIX_CONTEXT)?;
    m.add_function(wrap_pyfunction!(canonical_json, m)?)?;
    m.add_function(wrap_pyfunction!(encode_message, m)?)?;
    m.add_function(wrap_pyfunction!(wire_json, m)?)?;
    m.add_function(wrap_pyfunction!(message_digest, m)?)?;
    m.add_function(wrap_pyfunction!(message_digests, m)?)?;
    m.add_function(wrap_pyfunction!(chain, m)?)?;
    m.add_function(wrap_pyfunction!(context_digest, m)?)?;
    m.add_function(wrap_pyfunction!(prefix_digest, m)?)?;
    m.add_function(wrap_pyfunction!(load_document, m)?)?;
    m.add_function(wrap_pyfunction!(frozen_json, m)?)?;
    m.add_function(wrap_pyfunction!(ledger::ledger_keys, m)?)?;
    m.add_function(wrap_pyfunction!(ledger::ledger_entry_key, m)?)?;
    m.add_function(wrap_pyfunction!(ledger::ledger_check, m)?)?;
    Ok(())
}
