//! TreeSHAP values and interaction values, for `forestimp.importance.shap_values`: of a
//! forest's output, or of a booster's raw prediction.

use numpy::{IntoPyArray, PyArray1, PyArrayDyn};
use pyo3::prelude::*;

use super::arrays::{to_shape, with_matrix, XArray};
use super::boosting::PyBooster;
use super::doorway::run_watched;
use super::model::PyForest;

type ShapArrays<'py> = (
    Bound<'py, PyArrayDyn<f64>>,
    Bound<'py, PyArray1<f64>>,
    Option<Bound<'py, PyArrayDyn<f64>>>,
);

/// Path-dependent TreeSHAP values of every row of `x`, shape (n, n_features, width), the
/// expected value (width,), and with `interactions` the interaction values, shape
/// (n, n_features, n_features, width). For a forest, width is the number of classes (or
/// the outputs side by side), or 1; for a booster (`model` a `Booster`), its raw columns.
#[pyfunction]
#[pyo3(signature = (model, x, interactions = false, n_jobs = None))]
pub fn tree_shap<'py>(
    py: Python<'py>,
    model: &Bound<'py, PyAny>,
    x: &Bound<'py, PyAny>,
    interactions: bool,
    n_jobs: Option<i64>,
) -> PyResult<ShapArrays<'py>> {
    let x = XArray::extract(x)?;
    let (shap, n, p, w) = if let Ok(b) = model.cast::<PyBooster>() {
        let b = &b.get().inner;
        let (shap, n) = with_matrix!(x, |m| (
            run_watched(py, n_jobs, None, |watch| b.tree_shap_until(
                m,
                interactions,
                watch.stop_flag()
            ))?,
            m.n_rows()
        ));
        (shap, n, b.n_features(), b.trees_per_round())
    } else {
        let forest: PyRef<'py, PyForest> = model.extract()?;
        let f = &forest.inner;
        let (shap, n) = with_matrix!(x, |m| (
            run_watched(py, n_jobs, None, |watch| f.tree_shap_until(
                m,
                interactions,
                watch.stop_flag()
            ))?,
            m.n_rows()
        ));
        (shap, n, f.n_features(), f.width())
    };
    let values = to_shape(py, shap.values, &[n, p, w])?;
    let pairs = match shap.interactions {
        Some(v) => Some(to_shape(py, v, &[n, p, p, w])?),
        None => None,
    };
    Ok((values, shap.expected_value.into_pyarray(py), pairs))
}
