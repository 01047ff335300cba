//! Importances read along decision paths, for `forestimp.importance`.

use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1};
use pyo3::prelude::*;

use super::arrays::{vector, with_matrix, XArray};
use super::model::PyForest;
use crate::parallel::{install, resolve_n_jobs};

type MeanAndTrees<'py> = (Bound<'py, PyArray1<f64>>, Bound<'py, PyArray2<f64>>);

fn matrix_of(v: Vec<f64>, n: usize, p: usize) -> PyResult<Array2<f64>> {
    Array2::from_shape_vec((n, p), v)
        .map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))
}

/// Local MDI of every row of `x`, shape (n_samples, n_features).
#[pyfunction]
#[pyo3(signature = (forest, x, n_jobs = None))]
pub fn local_mdi<'py>(
    py: Python<'py>,
    forest: PyRef<'py, PyForest>,
    x: &Bound<'py, PyAny>,
    n_jobs: Option<i64>,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let threads = resolve_n_jobs(n_jobs)?;
    let x = XArray::extract(x)?;
    let f = &forest.inner;
    let (v, n) = with_matrix!(x, |m| (
        py.detach(|| install(threads, || f.local_mdi(m)))?,
        m.n_rows()
    ));
    Ok(matrix_of(v, n, f.n_features())?.into_pyarray(py))
}

/// MDI-oob: the mean over trees with out-of-bag rows (p,) and every tree's row (NaN when a
/// tree has none), shape (n_estimators, p).
#[pyfunction]
#[pyo3(signature = (forest, x, y, n_jobs = None))]
pub fn mdi_oob<'py>(
    py: Python<'py>,
    forest: PyRef<'py, PyForest>,
    x: &Bound<'py, PyAny>,
    y: PyReadonlyArray1<'py, f64>,
    n_jobs: Option<i64>,
) -> PyResult<MeanAndTrees<'py>> {
    let threads = resolve_n_jobs(n_jobs)?;
    let x = XArray::extract(x)?;
    let y = vector(&y, "y")?;
    let f = &forest.inner;
    let (mean, per_tree) =
        with_matrix!(x, |m| py.detach(|| install(threads, || f.mdi_oob(m, y)))?);
    let (t, p) = (per_tree.len(), f.n_features());
    Ok((
        mean.into_pyarray(py),
        matrix_of(per_tree.concat(), t, p)?.into_pyarray(py),
    ))
}
