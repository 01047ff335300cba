//! `forestimp._core.Bins`: the histogram codes of one X, made once and read by every fit on
//! a view of that X (feature selection grows many forests on views of one matrix).

use std::sync::Arc;

use pyo3::prelude::*;

use super::arrays::{with_matrix, XArray};
use super::doorway::run;
use crate::data::Binned;
use crate::error::invalid;

/// Bins of every column of an X, for `Forest.fit(bins=)`.
#[pyclass(frozen, module = "forestimp._core", name = "Bins")]
pub struct PyBins {
    pub(crate) inner: Arc<Binned>,
    pub(crate) max_bins: usize,
}

#[pymethods]
impl PyBins {
    /// Bin every column of `x` into at most `max_bins` codes (the fit's own binning).
    #[new]
    #[pyo3(signature = (x, max_bins = 255, n_jobs = None))]
    fn new(
        py: Python<'_>,
        x: &Bound<'_, PyAny>,
        max_bins: usize,
        n_jobs: Option<i64>,
    ) -> PyResult<Self> {
        let x = XArray::extract(x)?;
        let binned = with_matrix!(x, |m| run(py, n_jobs, || {
            if !(2..=256).contains(&max_bins) {
                return Err(invalid(
                    "max_bins",
                    format!("must be in [2, 256], got {max_bins}"),
                ));
            }
            Ok(Binned::new(&m, max_bins, 0))
        })?);
        Ok(PyBins {
            inner: Arc::new(binned),
            max_bins,
        })
    }
}
