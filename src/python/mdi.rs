//! MDI by depth (`crate::importance::mdi`) for Python: `(n_features, n_depths)` for the
//! forest, `(n_trees, n_features, n_depths)` per tree.

use numpy::ndarray::{Array2, Array3};
use numpy::{IntoPyArray, PyArray2, PyArray3};
use pyo3::prelude::*;

use super::model::PyForest;

fn shape_error(e: impl std::fmt::Display) -> PyErr {
    pyo3::exceptions::PyRuntimeError::new_err(e.to_string())
}

/// Raw MDI by depth averaged over trees, shape (n_features, n_depths).
#[pyfunction]
fn mdi_by_depth<'py>(
    py: Python<'py>,
    forest: PyRef<'py, PyForest>,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let f = forest.inner.clone();
    let (values, d) = py.detach(|| (f.mdi_by_depth(), f.mdi_depth_count()));
    let a = Array2::from_shape_vec((f.n_features(), d), values).map_err(shape_error)?;
    Ok(a.into_pyarray(py))
}

/// Raw MDI by depth of every tree, shape (n_trees, n_features, n_depths).
#[pyfunction]
fn tree_mdi_by_depth<'py>(
    py: Python<'py>,
    forest: PyRef<'py, PyForest>,
) -> PyResult<Bound<'py, PyArray3<f64>>> {
    let f = forest.inner.clone();
    let (rows, d) = py.detach(|| (f.tree_mdi_by_depth(), f.mdi_depth_count()));
    let shape = (rows.len(), f.n_features(), d);
    let a = Array3::from_shape_vec(shape, rows.concat()).map_err(shape_error)?;
    Ok(a.into_pyarray(py))
}

/// Adds this module's functions to `forestimp._core`.
pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(mdi_by_depth, m)?)?;
    m.add_function(wrap_pyfunction!(tree_mdi_by_depth, m)?)?;
    Ok(())
}
