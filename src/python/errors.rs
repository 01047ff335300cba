//! Typed Python exceptions and the one mapping from core errors to them (exhaustive:
//! a new variant of [`ForestError`] does not compile until it is mapped here).

use pyo3::create_exception;
use pyo3::exceptions::{
    PyKeyboardInterrupt, PyMemoryError, PyRuntimeError, PyTypeError, PyValueError,
};
use pyo3::PyErr;

use crate::error::ForestError;

create_exception!(
    forestimp.exceptions,
    InvalidParameterError,
    PyValueError,
    "A hyper-parameter is out of its documented range."
);
create_exception!(
    forestimp.exceptions,
    DataError,
    PyValueError,
    "X, y or sample_weight is malformed (shape, non-finite values, bad labels)."
);
create_exception!(
    forestimp.exceptions,
    ModelFormatError,
    PyValueError,
    "Model bytes are truncated, corrupted, or from a newer format version."
);

impl From<ForestError> for PyErr {
    fn from(e: ForestError) -> PyErr {
        let msg = e.to_string();
        match e {
            ForestError::InvalidParameter { .. } | ForestError::Unsupported(_) => {
                InvalidParameterError::new_err(msg)
            }
            ForestError::Shape(_)
            | ForestError::NonFinite { .. }
            | ForestError::Missing { .. }
            | ForestError::NonInteger { .. }
            | ForestError::CategoryCode { .. }
            | ForestError::InvalidTarget(_) => DataError::new_err(msg),
            ForestError::Decode(_) | ForestError::Version { .. } => ModelFormatError::new_err(msg),
            ForestError::Binding(_) => PyTypeError::new_err(msg),
            // Only the doorway sets a stop flag, and it raises the reason (the interrupt or
            // the callback's error) before this.
            ForestError::Stopped => PyKeyboardInterrupt::new_err(msg),
            ForestError::OutOfMemory { .. } => PyMemoryError::new_err(msg),
            ForestError::Encode(_) | ForestError::Internal(_) => PyRuntimeError::new_err(msg),
        }
    }
}
