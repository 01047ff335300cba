//! Bindings of the permutation importances (`src/importance/permutation.rs`) and the
//! helpers that let Python rebuild their permutations and OOB sets.

use numpy::ndarray::{Array2, Array3};
use numpy::{IntoPyArray, PyArray1, PyArray2, PyArray3, PyReadonlyArray1};
use pyo3::prelude::*;

use super::arrays::{vector, with_matrix, XArray};
use super::model::PyForest;
use crate::error::ForestError;
use crate::forest::{class_codes, Forest};
use crate::importance::permutation::{oob_rows, permutation_indices as perm_indices};
use crate::parallel::{install, resolve_n_jobs};
use crate::Targets;

type OobArrays<'py> = (
    Bound<'py, PyArray3<f64>>,
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<i64>>,
);

fn shape_err(e: impl ToString) -> PyErr {
    pyo3::exceptions::PyRuntimeError::new_err(e.to_string())
}

/// Class codes (classifier) checked against the forest; empty for a regressor.
fn codes_of(forest: &Forest, y: &[f64]) -> Result<Vec<u32>, ForestError> {
    if forest.n_classes() > 0 {
        class_codes(y, forest.n_classes())
    } else {
        Ok(Vec::new())
    }
}

fn targets_of<'a>(
    forest: &Forest,
    y: &'a [f64],
    codes: &'a [u32],
) -> Result<Targets<'a>, ForestError> {
    if forest.n_classes() > 0 {
        Targets::classes(codes, forest.n_classes())
    } else {
        Targets::regression(y)
    }
}

/// Breiman's OOB permutation importance: (per_tree (R, M, p), oob_error (M,), n_oob (M,)).
#[pyfunction]
#[pyo3(signature = (forest, x, y, *, n_repeats, seed, n_jobs = None))]
pub fn oob_permutation_importance<'py>(
    py: Python<'py>,
    forest: PyRef<'_, PyForest>,
    x: &Bound<'py, PyAny>,
    y: PyReadonlyArray1<'_, f64>,
    n_repeats: usize,
    seed: u64,
    n_jobs: Option<i64>,
) -> PyResult<OobArrays<'py>> {
    let threads = resolve_n_jobs(n_jobs)?;
    let f = forest.inner.clone();
    let x = XArray::extract(x)?;
    let y = vector(&y, "y")?;
    let codes = py.detach(|| codes_of(&f, y))?;
    let targets = targets_of(&f, y, &codes)?;
    let res = with_matrix!(x, |m| py.detach(|| install(threads, || f
        .oob_permutation_importance(m, targets, n_repeats, seed)))?);
    let (trees, p) = (res.n_oob.len(), f.n_features());
    let per_tree =
        Array3::from_shape_vec((n_repeats, trees, p), res.per_tree).map_err(shape_err)?;
    let n_oob: Vec<i64> = res.n_oob.iter().map(|&n| n as i64).collect();
    Ok((
        per_tree.into_pyarray(py),
        res.oob_error.into_pyarray(py),
        n_oob.into_pyarray(py),
    ))
}

/// Forest predictions with column `feature` permuted: shape (n_repeats, n_samples, width).
#[pyfunction]
#[pyo3(signature = (forest, x, feature, *, n_repeats, seed, n_jobs = None))]
pub fn permuted_predictions<'py>(
    py: Python<'py>,
    forest: PyRef<'_, PyForest>,
    x: &Bound<'py, PyAny>,
    feature: usize,
    n_repeats: usize,
    seed: u64,
    n_jobs: Option<i64>,
) -> PyResult<Bound<'py, PyArray3<f64>>> {
    let threads = resolve_n_jobs(n_jobs)?;
    let f = forest.inner.clone();
    let x = XArray::extract(x)?;
    let (v, n) = with_matrix!(x, |m| (
        py.detach(|| install(threads, || f
            .permuted_predictions(m, feature, n_repeats, seed)))?,
        m.n_rows()
    ));
    let a = Array3::from_shape_vec((n_repeats, n, f.width()), v).map_err(shape_err)?;
    Ok(a.into_pyarray(py))
}

/// Casewise permutation importance, shape (n_samples, n_features).
#[pyfunction]
#[pyo3(signature = (forest, x, y, *, oob, seed, n_jobs = None))]
pub fn local_permutation_importance<'py>(
    py: Python<'py>,
    forest: PyRef<'_, PyForest>,
    x: &Bound<'py, PyAny>,
    y: PyReadonlyArray1<'_, f64>,
    oob: bool,
    seed: u64,
    n_jobs: Option<i64>,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let threads = resolve_n_jobs(n_jobs)?;
    let f = forest.inner.clone();
    let x = XArray::extract(x)?;
    let y = vector(&y, "y")?;
    let codes = py.detach(|| codes_of(&f, y))?;
    let targets = targets_of(&f, y, &codes)?;
    let (v, n) = with_matrix!(x, |m| (
        py.detach(|| install(threads, || f
            .local_permutation_importance(m, targets, oob, seed)))?,
        m.n_rows()
    ));
    let a = Array2::from_shape_vec((n, f.n_features()), v).map_err(shape_err)?;
    Ok(a.into_pyarray(py))
}

/// The permutation of 0..n used for (feature, repeat), of tree `tree`'s OOB rows or of a
/// held-out set (tree = None).
#[pyfunction]
#[pyo3(signature = (seed, n, feature, repeat, tree = None))]
pub fn permutation_indices<'py>(
    py: Python<'py>,
    seed: u64,
    n: usize,
    feature: usize,
    repeat: usize,
    tree: Option<usize>,
) -> PyResult<Bound<'py, PyArray1<i64>>> {
    if n > u32::MAX as usize {
        return Err(crate::error::invalid("n", format!("must be at most {}", u32::MAX)).into());
    }
    let v: Vec<i64> = py
        .detach(|| perm_indices(seed, n, feature, repeat, tree))
        .into_iter()
        .map(i64::from)
        .collect();
    Ok(v.into_pyarray(py))
}

/// Out-of-bag rows of tree `tree`, increasing.
#[pyfunction]
pub fn oob_indices<'py>(
    py: Python<'py>,
    forest: PyRef<'_, PyForest>,
    tree: usize,
) -> PyResult<Bound<'py, PyArray1<i64>>> {
    let f = forest.inner.clone();
    if tree >= f.trees().len() {
        return Err(pyo3::exceptions::PyIndexError::new_err(format!(
            "tree index {tree} out of range"
        )));
    }
    let v: Vec<i64> = py
        .detach(|| oob_rows(&f, tree))
        .into_iter()
        .map(i64::from)
        .collect();
    Ok(v.into_pyarray(py))
}

/// Adds this module's functions to `forestimp._core`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(oob_permutation_importance, m)?)?;
    m.add_function(wrap_pyfunction!(permuted_predictions, m)?)?;
    m.add_function(wrap_pyfunction!(local_permutation_importance, m)?)?;
    m.add_function(wrap_pyfunction!(permutation_indices, m)?)?;
    m.add_function(wrap_pyfunction!(oob_indices, m)?)?;
    Ok(())
}
