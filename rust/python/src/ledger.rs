//! The seal ledger's keys and entry checks for Python (`thinkseal.ledger`);
//! the rules are in `thinkseal_core::ledger`.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};
use thinkseal_core::fragment;
use thinkseal_core::ledger::{self, Kind};

use crate::errors::{guard, validation_error};
use crate::{bytes_of, digest_arg};

/// The ledger keys of sealed data under `account`: one per `(kind, provider,
/// datum)`, kind one of "signature", "redacted", "opaque", "native".
#[pyfunction]
#[pyo3(signature = (account, data))]
pub fn ledger_keys<'py>(
    py: Python<'py>,
    account: Option<&str>,
    data: Vec<(String, Option<String>, String)>,
) -> PyResult<Bound<'py, PyList>> {
    guard(py, || {
        let keys = data
            .into_iter()
            .map(|(name, provider, datum)| {
                let kind = Kind::from_name(&name).ok_or_else(|| {
                    validation_error(py, "kind", &format!("unknown datum kind {name:?}"))
                })?;
                Ok(ledger::datum_key(
                    account,
                    kind,
                    provider.as_deref(),
                    &datum,
                ))
            })
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, keys.iter().map(|k| PyBytes::new(py, k)))
    })
}

/// The key of a ledger's entry checks, from its secret (empty for none).
#[pyfunction]
pub fn ledger_entry_key<'py>(py: Python<'py>, secret: &[u8]) -> PyResult<Bound<'py, PyBytes>> {
    bytes_of(py, || Ok(ledger::entry_key(secret)))
}

/// The check of the entry `key` -> `binding` under `entry_key`.
#[pyfunction]
pub fn ledger_check<'py>(
    py: Python<'py>,
    entry_key: &[u8],
    key: &[u8],
    binding: &str,
) -> PyResult<Bound<'py, PyBytes>> {
    guard(py, || {
        let entry_key = digest_arg(py, entry_key, "entry_key")?;
        let key = digest_arg(py, key, "key")?;
        Ok(PyBytes::new(
            py,
            &ledger::entry_check(&entry_key, &key, binding),
        ))
    })
}

/// The key of a store's fragment checks, from its secret (empty for none).
#[pyfunction]
pub fn fragment_key<'py>(py: Python<'py>, secret: &[u8]) -> PyResult<Bound<'py, PyBytes>> {
    bytes_of(py, || Ok(fragment::key(secret)))
}

/// The check of a store's fragment row under `key`
/// (`thinkseal_core::fragment::check`) over the data that `parts` make
/// joined, without joining them; hashed without the GIL: the data of a long
/// session's row runs to megabytes.
#[pyfunction]
pub fn fragment_check<'py>(
    py: Python<'py>,
    key: &[u8],
    header: &[u8],
    parts: &Bound<'py, PyList>,
) -> PyResult<Bound<'py, PyBytes>> {
    guard(py, || {
        let key = digest_arg(py, key, "key")?;
        let parts = parts
            .iter()
            .map(|part| part.cast_into::<PyBytes>().map_err(PyErr::from))
            .collect::<PyResult<Vec<_>>>()?;
        let slices: Vec<&[u8]> = parts.iter().map(PyBytesMethods::as_bytes).collect();
        let digest = py.detach(|| fragment::check(&key, header, &slices));
        Ok(PyBytes::new(py, &digest))
    })
}
