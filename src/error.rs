//! The one error type of the core. Every fallible public function returns [`Result`]; the
//! Python binding maps each variant to a typed exception (`src/python/errors.rs`).

use thiserror::Error;

/// Everything that can go wrong when fitting, predicting or loading a forest.
#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum ForestError {
    /// A hyper-parameter is outside its documented range.
    #[error("invalid parameter `{name}`: {reason}")]
    InvalidParameter {
        /// Parameter name, as spelled in the Python API.
        name: &'static str,
        /// What was expected, with the value received.
        reason: String,
    },
    /// Array shapes do not agree, or an array is empty.
    #[error("shape error: {0}")]
    Shape(String),
    /// A value that must be finite is not: an infinity in X (NaN in X is a missing value,
    /// accepted where [`ForestError::Missing`] is not raised), NaN or ±inf in y.
    #[error("non-finite value in {what} at row {row}, column {col}; X may hold NaN (a missing value) but not ±inf, y must be finite")]
    NonFinite {
        /// Which array.
        what: &'static str,
        /// Row of the first offending value.
        row: usize,
        /// Column of the first offending value.
        col: usize,
    },
    /// A missing value (NaN) in X where it is not supported.
    #[error("missing value (NaN) in X at row {row}, column {col}: {reason}; impute or drop missing values first")]
    Missing {
        /// Row of the first NaN.
        row: usize,
        /// Column of the first NaN.
        col: usize,
        /// What does not support it.
        reason: &'static str,
    },
    /// A non-integer input where integer codes are required (multiway splits).
    #[error("X[{row}, {col}] = {value} is not an integer; multiway splits need integer-coded categorical inputs")]
    NonInteger {
        /// Row of the first offending value.
        row: usize,
        /// Column of the first offending value.
        col: usize,
        /// The value found.
        value: f64,
    },
    /// Targets or sample weights are unusable (labels out of range, negative weights...).
    #[error("invalid target or weight: {0}")]
    InvalidTarget(String),
    /// Model bytes that are not a forestimp model, truncated or corrupted.
    #[error("corrupt or foreign model bytes: {0}")]
    Decode(String),
    /// A model could not be written (its encoder failed): never the caller's bytes.
    #[error("could not encode the model: {0}")]
    Encode(String),
    /// Model bytes written by a newer format than this build reads.
    #[error("model format version {found} is newer than this build supports ({supported}); upgrade forestimp")]
    Version {
        /// Version found in the header.
        found: u16,
        /// Newest version this build reads.
        supported: u16,
    },
    /// The operation needs something this model does not have (e.g. OOB without subsampling).
    #[error("{0}")]
    Unsupported(String),
    /// An argument from a foreign-language binding could not be read (dtype, memory
    /// layout): the binding's own failure, not a bad hyper-parameter or bad data.
    #[error("{0}")]
    Binding(String),
    /// Long work was stopped through its stop flag before it finished (in Python: Ctrl-C,
    /// or a progress callback that raised).
    #[error("stopped before it finished")]
    Stopped,
    /// An invariant of the engine does not hold: a bug in forestimp, never the input.
    #[error("internal error (please report it): {0}")]
    Internal(String),
}

/// Shorthand for results of this crate.
pub type Result<T, E = ForestError> = std::result::Result<T, E>;

pub(crate) fn invalid(name: &'static str, reason: impl Into<String>) -> ForestError {
    ForestError::InvalidParameter {
        name,
        reason: reason.into(),
    }
}
