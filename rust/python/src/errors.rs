//! The one mapping from core failures to the exceptions defined in Python
//! (`thinkseal._errors`), plus the guard that keeps Rust panics out of Python.

use std::panic::{catch_unwind, AssertUnwindSafe};

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;

static VALIDATION_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static THINKSEAL_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();

fn error_type<'py>(
    py: Python<'py>,
    cell: &'static PyOnceLock<Py<PyType>>,
    name: &str,
) -> PyResult<&'py Bound<'py, PyType>> {
    cell.import(py, "thinkseal._errors", name)
}

/// `thinkseal.ValidationError(message, path=path)`.
pub fn validation_error(py: Python<'_>, path: &str, reason: &str) -> PyErr {
    match error_type(py, &VALIDATION_ERROR, "ValidationError") {
        Ok(cls) => {
            let kwargs = [("path", path)];
            match pyo3::types::IntoPyDict::into_py_dict(kwargs, py)
                .and_then(|kw| cls.call((format!("{path}: {reason}"),), Some(&kw)))
            {
                Ok(instance) => PyErr::from_value(instance),
                Err(err) => err,
            }
        }
        Err(err) => err,
    }
}

/// Runs `body`, turning a Rust panic into `thinkseal.ThinksealError` so that
/// no panic (pyo3's `PanicException`, a `BaseException`) reaches the caller.
pub fn guard<T>(py: Python<'_>, body: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(result) => result,
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_owned());
            let msg = format!("internal error in thinkseal._core: {what}");
            Err(match error_type(py, &THINKSEAL_ERROR, "ThinksealError") {
                Ok(cls) => match cls.call1((msg,)) {
                    Ok(instance) => PyErr::from_value(instance),
                    Err(err) => err,
                },
                Err(err) => err,
            })
        }
    }
}
