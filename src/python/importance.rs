//! Importances read along decision paths, for `forestimp.importance`.

use numpy::{IntoPyArray, PyArray1, PyArray2};
use pyo3::prelude::*;

use super::arrays::{to_rows, with_matrix, XArray, YArray};
use super::boosting::PyBooster;
use super::doorway::run;
use super::model::PyForest;

type MeanAndTrees<'py> = (Bound<'py, PyArray1<f64>>, Bound<'py, PyArray2<f64>>);

/// Local MDI of every row of `x`, shape (n_samples, n_features), of a forest or (`model`
/// a `Booster`) of a gradient-boosting model.
#[pyfunction]
#[pyo3(signature = (model, x, n_jobs = None))]
pub fn local_mdi<'py>(
    py: Python<'py>,
    model: &Bound<'py, PyAny>,
    x: &Bound<'py, PyAny>,
    n_jobs: Option<i64>,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let x = XArray::extract(x)?;
    if let Ok(b) = model.cast::<PyBooster>() {
        let b = &b.get().inner;
        let (v, n) = with_matrix!(x, |m| (run(py, n_jobs, || b.local_mdi(m))?, m.n_rows()));
        return to_rows(py, v, n, b.n_features());
    }
    let forest: PyRef<'py, PyForest> = model.extract()?;
    let f = &forest.inner;
    let (v, n) = with_matrix!(x, |m| (run(py, n_jobs, || f.local_mdi(m))?, m.n_rows()));
    to_rows(py, v, n, f.n_features())
}

/// MDI-oob: the mean over trees with out-of-bag rows (p,) and every tree's row (NaN when a
/// tree has none), shape (n_estimators, p); of output `output` of a multi-output forest
/// (`y` its column) when given.
#[pyfunction]
#[pyo3(signature = (forest, x, y, n_jobs = None, output = None))]
pub fn mdi_oob<'py>(
    py: Python<'py>,
    forest: PyRef<'py, PyForest>,
    x: &Bound<'py, PyAny>,
    y: &Bound<'py, PyAny>,
    n_jobs: Option<i64>,
    output: Option<usize>,
) -> PyResult<MeanAndTrees<'py>> {
    let x = XArray::extract(x)?;
    let y = YArray::extract(y)?;
    let labels = y.labels()?;
    let f = &forest.inner;
    let (mean, per_tree) = with_matrix!(x, |m| run(py, n_jobs, || {
        let mut buf = Vec::new();
        match output {
            // MDI-oob reads node values only, which the trees cut to one output keep.
            Some(k) => f.output_values(k)?.mdi_oob(m, labels.values(&mut buf)),
            None => f.mdi_oob(m, labels.values(&mut buf)),
        }
    })?);
    let (t, p) = (per_tree.len(), f.n_features());
    Ok((mean.into_pyarray(py), to_rows(py, per_tree.concat(), t, p)?))
}
