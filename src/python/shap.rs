//! TreeSHAP values and interaction values, for `forestimp.importance.shap_values`.

use numpy::{IntoPyArray, PyArray1, PyArrayDyn};
use pyo3::prelude::*;

use super::arrays::{to_shape, with_matrix, XArray};
use super::doorway::run_watched;
use super::model::PyForest;

type ShapArrays<'py> = (
    Bound<'py, PyArrayDyn<f64>>,
    Bound<'py, PyArray1<f64>>,
    Option<Bound<'py, PyArrayDyn<f64>>>,
);

/// Path-dependent TreeSHAP values of every row of `x`, shape (n, n_features, width), the
/// expected value (width,), and with `interactions` the interaction values, shape
/// (n, n_features, n_features, width); width is the number of classes, or 1.
#[pyfunction]
#[pyo3(signature = (forest, x, interactions = false, n_jobs = None))]
pub fn tree_shap<'py>(
    py: Python<'py>,
    forest: PyRef<'py, PyForest>,
    x: &Bound<'py, PyAny>,
    interactions: bool,
    n_jobs: Option<i64>,
) -> PyResult<ShapArrays<'py>> {
    let x = XArray::extract(x)?;
    let f = &forest.inner;
    let (shap, n) = with_matrix!(x, |m| (
        run_watched(py, n_jobs, None, |watch| f.tree_shap_until(
            m,
            interactions,
            watch.stop_flag()
        ))?,
        m.n_rows()
    ));
    let (p, w) = (f.n_features(), f.width());
    let values = to_shape(py, shap.values, &[n, p, w])?;
    let pairs = match shap.interactions {
        Some(v) => Some(to_shape(py, v, &[n, p, p, w])?),
        None => None,
    };
    Ok((values, shap.expected_value.into_pyarray(py), pairs))
}
