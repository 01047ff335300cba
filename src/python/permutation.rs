//! Bindings of the permutation importances (`src/importance/permutation.rs`) and the
//! helpers that let Python rebuild their permutations and OOB sets.

use numpy::{IntoPyArray, PyArray1, PyArrayDyn, PyReadonlyArray1};
use pyo3::prelude::*;

use super::arrays::{ensure_result_fits, to_rows, to_shape, with_matrix, XArray, YArray};
use super::boosting::PyBooster;
use super::doorway::{run, run_watched};
use super::model::PyForest;
use crate::error::invalid;
use crate::importance::permutation::{oob_rows, permutation_indices as perm_indices};

type OobArrays<'py> = (
    Bound<'py, PyArrayDyn<f64>>,
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<i64>>,
);

/// Breiman's OOB permutation importance: (per_tree (R, M, p), oob_error (M,), n_oob (M,));
/// of output `output` of a multi-output forest (`y` its column) when given.
#[pyfunction]
#[pyo3(signature = (forest, x, y, *, n_repeats, seed, n_jobs = None, output = None))]
#[allow(clippy::too_many_arguments)]
pub fn oob_permutation_importance<'py>(
    py: Python<'py>,
    forest: PyRef<'_, PyForest>,
    x: &Bound<'py, PyAny>,
    y: &Bound<'py, PyAny>,
    n_repeats: usize,
    seed: u64,
    n_jobs: Option<i64>,
    output: Option<usize>,
) -> PyResult<OobArrays<'py>> {
    let f = &forest.inner;
    let x = XArray::extract(x)?;
    let y = YArray::extract(y)?;
    let labels = y.labels()?;
    let view = forest.view.as_deref();
    // Output k's class count: its targets are one column of codes.
    let n_classes = match output {
        Some(k) if k >= f.outputs().len() => {
            let msg = format!(
                "{k} is not an output of this forest (it has {})",
                f.outputs().len()
            );
            return Err(crate::error::invalid("output", msg).into());
        }
        Some(k) if f.n_classes() > 0 => f.outputs()[k],
        _ => f.n_classes(),
    };
    let dims = [n_repeats, f.trees().len(), f.n_features()];
    ensure_result_fits(&dims, "the per-tree importances (n_repeats)")?;
    let res = with_matrix!(x, |m| run_watched(py, n_jobs, None, |watch| {
        let mut codes = Vec::new();
        let m = match view {
            Some(v) => v.apply(m)?,
            None => m,
        };
        let (stop, targets) = (watch.stop_flag(), labels.targets(n_classes, &mut codes)?);
        match output {
            Some(k) => f.oob_permutation_importance_of_output(m, targets, k, n_repeats, seed, stop),
            None => f.oob_permutation_importance_until(m, targets, n_repeats, seed, stop),
        }
    })?);
    let (trees, p) = (res.n_oob.len(), f.n_features());
    let per_tree = to_shape(py, res.per_tree, &[n_repeats, trees, p])?;
    let n_oob: Vec<i64> = res.n_oob.iter().map(|&n| n as i64).collect();
    Ok((
        per_tree,
        res.oob_error.into_pyarray(py),
        n_oob.into_pyarray(py),
    ))
}

/// Out-of-bag permutation importance of a subsampled booster (`crate::importance::
/// boosted_oob`): (per_round (R, n_rounds, p), oob_loss (n_rounds,), n_oob (n_rounds,)).
/// `y` holds values or class codes as float64; `offset` (n, K) row-major is the initial
/// estimator's raw predictions when the model has one.
#[pyfunction]
#[pyo3(signature = (booster, x, y, sample_weight = None, offset = None, *, n_repeats, seed, n_jobs = None))]
#[allow(clippy::too_many_arguments)]
pub fn booster_oob_permutation_importance<'py>(
    py: Python<'py>,
    booster: PyRef<'_, PyBooster>,
    x: &Bound<'py, PyAny>,
    y: PyReadonlyArray1<'py, f64>,
    sample_weight: Option<PyReadonlyArray1<'py, f64>>,
    offset: Option<PyReadonlyArray1<'py, f64>>,
    n_repeats: usize,
    seed: u64,
    n_jobs: Option<i64>,
) -> PyResult<OobArrays<'py>> {
    let b = &booster.inner;
    let x = XArray::extract(x)?;
    let y = super::arrays::vector(&y, "y")?;
    let sw = match &sample_weight {
        Some(w) => Some(super::arrays::vector(w, "sample_weight")?),
        None => None,
    };
    let offset = match &offset {
        Some(o) => Some(super::arrays::vector(o, "offset")?),
        None => None,
    };
    let dims = [n_repeats, b.n_rounds(), b.n_features()];
    ensure_result_fits(&dims, "the per-round importances (n_repeats)")?;
    let res = with_matrix!(x, |m| run_watched(py, n_jobs, None, |watch| {
        b.oob_permutation_importance_until(m, y, sw, offset, n_repeats, seed, watch.stop_flag())
    })?);
    let (rounds, p) = (res.n_oob.len(), b.n_features());
    let per_round = to_shape(py, res.per_round, &[n_repeats, rounds, p])?;
    let n_oob: Vec<i64> = res.n_oob.iter().map(|&n| n as i64).collect();
    Ok((
        per_round,
        res.oob_loss.into_pyarray(py),
        n_oob.into_pyarray(py),
    ))
}

/// Out-of-bag rows of round `round` of a booster fitted on `n_samples` rows, increasing
/// (empty without subsampling), as its fit drew them. A fit's rows are indexed by `u32`,
/// and the draw needs a few bytes a row: larger counts are errors, not aborts.
#[pyfunction]
pub fn booster_oob_indices<'py>(
    py: Python<'py>,
    booster: PyRef<'_, PyBooster>,
    n_samples: usize,
    round: usize,
) -> PyResult<Bound<'py, PyArray1<i64>>> {
    if u32::try_from(n_samples).is_err() {
        let reason = format!("{n_samples} rows: a fit has at most 2^32 - 1");
        return Err(invalid("n_samples", reason).into());
    }
    crate::error::ensure_allocatable(n_samples, 13, "booster out-of-bag rows")?;
    let p = booster.inner.params();
    let rows: Vec<i64> = crate::boosting::round_mask(n_samples, p.subsample, p.tree.seed, round)
        .map(|m| (0..n_samples as i64).filter(|&i| !m[i as usize]).collect())
        .unwrap_or_default();
    Ok(rows.into_pyarray(py))
}

/// Forest predictions with column `feature` permuted, for the repeats `first_repeat..
/// first_repeat + n_repeats`: shape (n_repeats, n_samples, width).
#[pyfunction]
#[pyo3(signature = (forest, x, feature, *, n_repeats, seed, n_jobs = None, first_repeat = 0))]
pub fn permuted_predictions<'py>(
    py: Python<'py>,
    forest: PyRef<'_, PyForest>,
    x: &Bound<'py, PyAny>,
    feature: usize,
    n_repeats: usize,
    seed: u64,
    n_jobs: Option<i64>,
    first_repeat: usize,
) -> PyResult<Bound<'py, PyArrayDyn<f64>>> {
    let f = &forest.inner;
    let x = XArray::extract(x)?;
    let repeats = first_repeat..first_repeat.saturating_add(n_repeats);
    let (v, n) = with_matrix!(x, |m| (
        run(py, n_jobs, || f.permuted_predictions_of(
            m,
            feature,
            repeats.clone(),
            seed
        ))?,
        m.n_rows()
    ));
    to_shape(py, v, &[n_repeats, n, f.width()])
}

/// Casewise permutation importance, shape (n_samples, n_features).
#[pyfunction]
#[pyo3(signature = (forest, x, y, *, oob, seed, n_jobs = None))]
pub fn local_permutation_importance<'py>(
    py: Python<'py>,
    forest: PyRef<'_, PyForest>,
    x: &Bound<'py, PyAny>,
    y: &Bound<'py, PyAny>,
    oob: bool,
    seed: u64,
    n_jobs: Option<i64>,
) -> PyResult<Bound<'py, numpy::PyArray2<f64>>> {
    let f = &forest.inner;
    let x = XArray::extract(x)?;
    let y = YArray::extract(y)?;
    let labels = y.labels()?;
    let (v, n) = with_matrix!(x, |m| (
        run(py, n_jobs, || {
            let mut codes = Vec::new();
            let targets = labels.targets(f.n_classes(), &mut codes)?;
            f.local_permutation_importance(m, targets, oob, seed)
        })?,
        m.n_rows()
    ));
    to_rows(py, v, n, f.n_features())
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
    let v = run(py, None, || {
        let v = perm_indices(seed, n, feature, repeat, tree);
        Ok(v.into_iter().map(i64::from).collect::<Vec<_>>())
    })?;
    Ok(v.into_pyarray(py))
}

/// Out-of-bag rows of tree `tree`, increasing.
#[pyfunction]
pub fn oob_indices<'py>(
    py: Python<'py>,
    forest: PyRef<'_, PyForest>,
    tree: usize,
) -> PyResult<Bound<'py, PyArray1<i64>>> {
    let f = &forest.inner;
    check_tree(f, tree)?;
    let v = run(py, None, || {
        Ok(oob_rows(f, tree)
            .into_iter()
            .map(i64::from)
            .collect::<Vec<_>>())
    })?;
    Ok(v.into_pyarray(py))
}

/// How many times each training row was drawn for tree `tree` (0: out of bag).
#[pyfunction]
pub fn in_bag_counts<'py>(
    py: Python<'py>,
    forest: PyRef<'_, PyForest>,
    tree: usize,
) -> PyResult<Bound<'py, PyArray1<u32>>> {
    let f = &forest.inner;
    check_tree(f, tree)?;
    if f.params().assembled {
        return Err(crate::error::invalid(
            "tree",
            "the rows of a forest assembled from patches are not known",
        )
        .into());
    }
    let counts = run(py, None, || {
        Ok(crate::forest::sampling::in_bag_counts(f.params(), tree))
    })?;
    Ok(counts.into_pyarray(py))
}

/// An `IndexError` unless `tree` is one of the forest's trees.
fn check_tree(f: &crate::Forest, tree: usize) -> PyResult<()> {
    if tree >= f.trees().len() {
        return Err(pyo3::exceptions::PyIndexError::new_err(format!(
            "tree index {tree} out of range"
        )));
    }
    Ok(())
}

/// Adds this module's functions to `forestimp._core`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(oob_permutation_importance, m)?)?;
    m.add_function(wrap_pyfunction!(permuted_predictions, m)?)?;
    m.add_function(wrap_pyfunction!(local_permutation_importance, m)?)?;
    m.add_function(wrap_pyfunction!(permutation_indices, m)?)?;
    m.add_function(wrap_pyfunction!(in_bag_counts, m)?)?;
    m.add_function(wrap_pyfunction!(oob_indices, m)?)?;
    m.add_function(wrap_pyfunction!(booster_oob_permutation_importance, m)?)?;
    m.add_function(wrap_pyfunction!(booster_oob_indices, m)?)?;
    Ok(())
}
