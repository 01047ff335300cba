//! MDI by depth (`crate::importance::mdi`) for Python: `(n_features, n_depths)` for the
//! forest, `(n_trees, n_features, n_depths)` per tree; and MDI by output,
//! `(n_trees, n_outputs, n_features)`.

use numpy::{PyArray2, PyArrayDyn};
use pyo3::prelude::*;

use super::arrays::{ensure_result_fits, to_rows, to_shape};
use super::doorway::run;
use super::model::PyForest;

/// Raw MDI by depth averaged over trees, shape (n_features, n_depths).
#[pyfunction]
#[pyo3(signature = (forest, n_jobs = None))]
fn mdi_by_depth<'py>(
    py: Python<'py>,
    forest: PyRef<'py, PyForest>,
    n_jobs: Option<i64>,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let f = &forest.inner;
    // The depth count is computed in the pool (never rayon's global one, see the doorway).
    let (values, d) = run(py, n_jobs, || {
        let d = f.mdi_depth_count();
        ensure_result_fits(
            &[f.trees().len(), f.n_features(), d],
            "the importances by depth",
        )?;
        Ok((f.mdi_by_depth(), d))
    })?;
    to_rows(py, values, f.n_features(), d)
}

/// Raw MDI by depth of every tree, shape (n_trees, n_features, n_depths).
#[pyfunction]
#[pyo3(signature = (forest, n_jobs = None))]
fn tree_mdi_by_depth<'py>(
    py: Python<'py>,
    forest: PyRef<'py, PyForest>,
    n_jobs: Option<i64>,
) -> PyResult<Bound<'py, PyArrayDyn<f64>>> {
    let f = &forest.inner;
    let (rows, d) = run(py, n_jobs, || {
        let d = f.mdi_depth_count();
        ensure_result_fits(
            &[f.trees().len(), f.n_features(), d],
            "the importances by depth",
        )?;
        Ok((f.tree_mdi_by_depth().concat(), d))
    })?;
    let shape = [f.trees().len(), f.n_features(), d];
    to_shape(py, rows, &shape)
}

/// Raw MDI of every tree split by output, shape (n_trees, n_outputs, n_features): the
/// outputs' shares, summing over outputs to `tree_importances`.
#[pyfunction]
#[pyo3(signature = (forest, n_jobs = None))]
fn tree_mdi_by_output<'py>(
    py: Python<'py>,
    forest: PyRef<'py, PyForest>,
    n_jobs: Option<i64>,
) -> PyResult<Bound<'py, PyArrayDyn<f64>>> {
    let f = &forest.inner;
    let absolute = f.params().criterion == crate::CriterionKind::AbsoluteError;
    if absolute && f.n_outputs() > 1 {
        // The shares need each output's impurity; these trees keep the mean of them only.
        return Err(PyErr::from(crate::ForestError::Unsupported(
            "MDI by output is not available for a multi-output forest grown with \
             criterion='absolute_error' (its nodes keep the mean of the outputs' deviations, \
             not each output's)"
                .into(),
        )));
    }
    let dims = [f.trees().len(), f.n_outputs(), f.n_features()];
    ensure_result_fits(&dims, "the importances by output")?;
    let rows = run(py, n_jobs, || Ok(f.tree_importances_by_output().concat()))?;
    let shape = [f.trees().len(), f.n_outputs(), f.n_features()];
    to_shape(py, rows, &shape)
}

/// Adds this module's functions to `forestimp._core`.
pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(mdi_by_depth, m)?)?;
    m.add_function(wrap_pyfunction!(tree_mdi_by_depth, m)?)?;
    m.add_function(wrap_pyfunction!(tree_mdi_by_output, m)?)?;
    Ok(())
}
