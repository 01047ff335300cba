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
    /// A value of a categorical feature that is no category code.
    #[error("X[{row}, {col}] = {value} is not a category code: a categorical feature holds whole numbers from 0 to 2^24 - 1 (or NaN, a missing value)")]
    CategoryCode {
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
    /// Memory for the work could not be reserved ([`ensure_allocatable`]): the work was
    /// refused before it started, rather than aborting the process halfway.
    #[error("not enough memory for {what}: {bytes} bytes could not be reserved")]
    OutOfMemory {
        /// What the memory was for.
        what: &'static str,
        /// How much was asked for (saturated at `u128::MAX`).
        bytes: u128,
    },
}

/// Shorthand for results of this crate.
pub type Result<T, E = ForestError> = std::result::Result<T, E>;

pub(crate) fn invalid(name: &'static str, reason: impl Into<String>) -> ForestError {
    ForestError::InvalidParameter {
        name,
        reason: reason.into(),
    }
}

/// Refuses work whose memory cannot be had, before it starts: `count` values of `size`
/// bytes must fit in the memory the system has available (on Linux, `MemAvailable` and free
/// swap; checked from 64 MiB on), and a reservation of them (given back at once) must
/// succeed; otherwise [`ForestError::OutOfMemory`].
///
/// Why: Rust aborts the process when an allocation fails, and the kernel kills it when
/// memory it lent runs out; sizes that come from parameters or model files (trees,
/// features, rows) can ask for more than the machine has. An untouched reservation costs
/// no memory (large blocks are fresh mappings).
pub fn ensure_allocatable(count: usize, size: usize, what: &'static str) -> Result<()> {
    let refuse = || ForestError::OutOfMemory {
        what,
        bytes: count as u128 * size as u128,
    };
    let bytes = count
        .checked_mul(size)
        .filter(|&b| b <= isize::MAX as usize)
        .ok_or_else(refuse)?;
    if bytes >= 1 << 26 && available_memory().is_some_and(|a| bytes as u64 > a) {
        return Err(refuse());
    }
    let mut probe: Vec<u8> = Vec::new();
    probe.try_reserve_exact(bytes).map_err(|_| refuse())
}

/// Bytes of memory the system can give without killing anything: available memory and
/// free swap (Linux's `/proc/meminfo`); None where it cannot be read.
fn available_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let kib = |key: &str| -> Option<u64> {
        let line = info.lines().find(|l| l.starts_with(key))?;
        line[key.len()..]
            .trim()
            .trim_end_matches("kB")
            .trim()
            .parse()
            .ok()
    };
    Some((kib("MemAvailable:")? + kib("SwapFree:").unwrap_or(0)) * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reservations_beyond_memory_are_refused_not_aborted() {
        assert!(ensure_allocatable(1 << 20, 8, "a test").is_ok());
        let e = ensure_allocatable(usize::MAX / 2, 8, "a test").unwrap_err();
        assert!(matches!(e, ForestError::OutOfMemory { .. }));
        // 2**60 bytes: no machine has that much, nor maps it.
        let e = ensure_allocatable(1 << 57, 8, "a test").unwrap_err();
        assert!(e.to_string().contains("not enough memory for a test"));
        if let Some(free) = available_memory() {
            let more = usize::try_from(free).unwrap_or(usize::MAX) / 2 + 1;
            assert!(ensure_allocatable(more, 2, "a test").is_err());
        }
    }
}
