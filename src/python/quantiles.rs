//! Bindings of the leaf statistics and quantiles of regression forests
//! (`src/forest/leaf_values.rs`).

use numpy::{IntoPyArray, PyArray1, PyArray2, PyArrayDyn, PyReadonlyArray1};
use pyo3::prelude::*;

use super::arrays::{to_rows, to_shape, with_matrix, XArray};
use super::doorway::run;
use super::model::PyForest;
use crate::error::invalid;
use crate::forest::leaf_values::{Interpolation, LeafParts, LeafValues};

/// The in-bag training rows of every leaf of a regression forest, with their weights.
#[pyclass(name = "LeafValues", module = "forestimp._core", frozen)]
pub struct PyLeafValues {
    inner: LeafValues,
}

fn interpolation_of(name: &str) -> PyResult<Interpolation> {
    Ok(match name {
        "linear" => Interpolation::Linear,
        "lower" => Interpolation::Lower,
        "higher" => Interpolation::Higher,
        "nearest" => Interpolation::Nearest,
        "midpoint" => Interpolation::Midpoint,
        _ => {
            let why = "must be one of 'linear', 'lower', 'higher', 'nearest', 'midpoint'";
            return Err(invalid("interpolation", why).into());
        }
    })
}

/// The leaf values of `forest` from its training data `x`, `y` and `sample_weight`.
#[pyfunction]
#[pyo3(signature = (forest, x, y, sample_weight = None, n_jobs = None))]
fn leaf_values(
    py: Python<'_>,
    forest: PyRef<'_, PyForest>,
    x: &Bound<'_, PyAny>,
    y: PyReadonlyArray1<'_, f64>,
    sample_weight: Option<PyReadonlyArray1<'_, f64>>,
    n_jobs: Option<i64>,
) -> PyResult<PyLeafValues> {
    let x = XArray::extract(x)?;
    let f = &forest.inner;
    let (y, sw) = (
        y.as_slice()?,
        sample_weight.as_ref().map(|w| w.as_slice()).transpose()?,
    );
    let inner = with_matrix!(x, |m| run(py, n_jobs, || f.leaf_values(m, y, sw))?);
    Ok(PyLeafValues { inner })
}

type Parts<'py> = (
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<u32>>,
    Bound<'py, PyArray1<u32>>,
    Bound<'py, PyArray1<u32>>,
    Bound<'py, PyArray1<u32>>,
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<f64>>,
);

#[pymethods]
impl PyLeafValues {
    /// The quantiles of every row of `x`: shape (n_rows, n_outputs, n_quantiles); with
    /// `oob`, of the training rows from the trees they were out of bag for (NaN where none).
    #[pyo3(signature = (forest, x, quantiles, interpolation = "linear", oob = false, n_jobs = None))]
    #[allow(clippy::too_many_arguments)]
    fn quantiles<'py>(
        &self,
        py: Python<'py>,
        forest: PyRef<'py, PyForest>,
        x: &Bound<'py, PyAny>,
        quantiles: Vec<f64>,
        interpolation: &str,
        oob: bool,
        n_jobs: Option<i64>,
    ) -> PyResult<Bound<'py, PyArrayDyn<f64>>> {
        let how = interpolation_of(interpolation)?;
        let x = XArray::extract(x)?;
        let (f, leaves, q) = (&forest.inner, &self.inner, &quantiles[..]);
        let (v, n) = with_matrix!(x, |m| (
            run(py, n_jobs, || leaves.quantiles(f, m, q, how, oob))?,
            m.n_rows()
        ));
        to_shape(py, v, &[n, leaves.n_outputs(), quantiles.len()])
    }

    /// Bytes it holds in memory (its arrays and what the quantiles read).
    #[getter]
    fn nbytes(&self) -> usize {
        self.inner.heap_bytes()
    }

    /// The training targets: shape (n_samples, n_outputs).
    fn y<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let k = self.inner.n_outputs();
        let y = self.inner.y().to_vec();
        to_rows(py, y, self.inner.y().len() / k, k)
    }

    /// The out-of-bag prediction of every training row: shape (n_samples, n_outputs), NaN
    /// where no tree left the row out.
    fn oob_prediction<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let k = self.inner.n_outputs();
        let v = self.inner.oob_prediction().to_vec();
        to_rows(py, v, self.inner.y().len() / k, k)
    }

    /// The arrays that make it, for a model file: `(y, tree_starts, starts, rows, counts,
    /// weights, oob)` (`LeafValues::parts`).
    fn parts<'py>(&self, py: Python<'py>) -> Parts<'py> {
        let p = self.inner.parts();
        (
            p.y.into_pyarray(py),
            p.tree_starts.into_pyarray(py),
            p.starts.into_pyarray(py),
            p.rows.into_pyarray(py),
            p.counts.into_pyarray(py),
            p.weights.into_pyarray(py),
            p.oob.into_pyarray(py),
        )
    }

    /// The leaf values of `forest` from [`PyLeafValues::parts`]'s arrays, checked.
    #[staticmethod]
    #[allow(clippy::too_many_arguments)]
    fn from_parts(
        forest: PyRef<'_, PyForest>,
        y: PyReadonlyArray1<'_, f64>,
        tree_starts: PyReadonlyArray1<'_, u32>,
        starts: PyReadonlyArray1<'_, u32>,
        rows: PyReadonlyArray1<'_, u32>,
        counts: PyReadonlyArray1<'_, u32>,
        weights: PyReadonlyArray1<'_, f64>,
        oob: PyReadonlyArray1<'_, f64>,
    ) -> PyResult<Self> {
        let parts = LeafParts {
            y: y.as_array().to_vec(),
            tree_starts: tree_starts.as_array().to_vec(),
            starts: starts.as_array().to_vec(),
            rows: rows.as_array().to_vec(),
            counts: counts.as_array().to_vec(),
            weights: weights.as_array().to_vec(),
            oob: oob.as_array().to_vec(),
        };
        let inner = LeafValues::from_parts(&forest.inner, parts)?;
        Ok(PyLeafValues { inner })
    }
}

/// Each tree's prediction of every row of `x`: shape (n_rows, n_trees, width).
#[pyfunction]
#[pyo3(signature = (forest, x, n_jobs = None))]
fn tree_predictions<'py>(
    py: Python<'py>,
    forest: PyRef<'py, PyForest>,
    x: &Bound<'py, PyAny>,
    n_jobs: Option<i64>,
) -> PyResult<Bound<'py, PyArrayDyn<f64>>> {
    let x = XArray::extract(x)?;
    let f = &forest.inner;
    let (v, n) = with_matrix!(x, |m| (
        run(py, n_jobs, || f.tree_predictions(m))?,
        m.n_rows()
    ));
    to_shape(py, v, &[n, f.trees().len(), f.width()])
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyLeafValues>()?;
    m.add_function(wrap_pyfunction!(leaf_values, m)?)?;
    m.add_function(wrap_pyfunction!(tree_predictions, m)?)
}
