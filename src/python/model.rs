//! `forestimp._core.Forest`: an immutable fitted forest shared behind an `Arc`.
//!
//! Every method follows the same four steps: convert inputs, validate, release the GIL for
//! the work, convert outputs.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use super::arrays::{vector, with_matrix, XArray, YArray};
use crate::error::ForestError;
use crate::forest::{class_codes, FitSession, Forest};
use crate::importance::corrected::shadow_permutation;
use crate::parallel::{install, resolve_n_jobs};
use crate::params::{CriterionKind, FeatureCount, ForestParams, SampleCount, SplitterKind};
use crate::Targets;

/// How often a fit's watcher checks for Ctrl-C and reports progress.
const WATCH_EVERY: Duration = Duration::from_millis(100);

type Csr<'py> = (
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyArray1<i64>>,
);
type OobArrays<'py> = (Bound<'py, PyArray2<f64>>, Bound<'py, PyArray1<f64>>);

/// An immutable fitted ensemble of binary decision trees.
#[pyclass(frozen, module = "forestimp._core", name = "Forest")]
pub struct PyForest {
    pub(crate) inner: Arc<Forest>,
}

fn criterion_of(name: &str) -> Result<CriterionKind, ForestError> {
    match name {
        "gini" => Ok(CriterionKind::Gini),
        "entropy" | "log_loss" => Ok(CriterionKind::Entropy),
        "squared_error" => Ok(CriterionKind::SquaredError),
        other => Err(crate::error::invalid(
            "criterion",
            format!("expected 'gini', 'entropy', 'log_loss' or 'squared_error', got {other:?}"),
        )),
    }
}

fn splitter_of(name: &str, max_bins: usize) -> Result<SplitterKind, ForestError> {
    match name {
        "best" => Ok(SplitterKind::Best),
        "random" => Ok(SplitterKind::Random),
        "multiway" => Ok(SplitterKind::Multiway),
        // Out-of-range values become 0 here and are refused by ForestParams::resolve.
        "hist" => Ok(SplitterKind::Histogram {
            max_bins: u16::try_from(max_bins).unwrap_or(0),
        }),
        other => Err(crate::error::invalid(
            "splitter",
            format!("expected 'best', 'random', 'hist' or 'multiway', got {other:?}"),
        )),
    }
}

fn rows_to_array<T: numpy::Element>(
    py: Python<'_>,
    v: Vec<T>,
    n: usize,
    w: usize,
) -> PyResult<Bound<'_, PyArray2<T>>> {
    let a = Array2::from_shape_vec((n, w), v)
        .map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))?;
    Ok(a.into_pyarray(py))
}

#[pymethods]
impl PyForest {
    /// Fit a forest; see the stub file for the meaning of every argument.
    #[staticmethod]
    #[pyo3(signature = (
        x, y, sample_weight, *, n_classes, criterion, splitter, n_estimators, max_features,
        max_depth, min_samples_split, min_samples_leaf, min_weight_fraction_leaf,
        min_impurity_decrease, max_leaf_nodes, bootstrap, max_samples, tree_features,
        balanced_subsample, random_state, n_jobs, progress = None, shadows = false, max_bins = 255
    ))]
    fn fit(
        py: Python<'_>,
        x: &Bound<'_, PyAny>,
        y: &Bound<'_, PyAny>,
        sample_weight: Option<PyReadonlyArray1<'_, f64>>,
        n_classes: usize,
        criterion: &str,
        splitter: &str,
        n_estimators: usize,
        max_features: usize,
        max_depth: Option<usize>,
        min_samples_split: usize,
        min_samples_leaf: usize,
        min_weight_fraction_leaf: f64,
        min_impurity_decrease: f64,
        max_leaf_nodes: Option<usize>,
        bootstrap: bool,
        max_samples: Option<usize>,
        tree_features: Option<usize>,
        balanced_subsample: bool,
        random_state: u64,
        n_jobs: Option<i64>,
        progress: Option<Bound<'_, PyAny>>,
        shadows: bool,
        max_bins: usize,
    ) -> PyResult<Self> {
        let params = ForestParams {
            criterion: criterion_of(criterion)?,
            splitter: splitter_of(splitter, max_bins)?,
            n_estimators,
            max_features: FeatureCount::Count(max_features),
            max_depth,
            min_samples_split,
            min_samples_leaf,
            min_weight_fraction_leaf,
            min_impurity_decrease,
            max_leaf_nodes,
            bootstrap,
            max_samples: max_samples.map(SampleCount::Count),
            tree_features: tree_features.map(FeatureCount::Count),
            balanced_subsample,
            seed: random_state,
        };
        let threads = resolve_n_jobs(n_jobs)?;
        let x = XArray::extract(x)?;
        let y = YArray::extract(y)?;
        let sw = match &sample_weight {
            Some(w) => Some(vector(w, "sample_weight")?),
            None => None,
        };
        let converted: Vec<u32>;
        let targets = match (&y, n_classes) {
            (YArray::Values(v), 0) => Targets::Regression(vector(v, "y")?),
            (YArray::Codes(_), 0) => {
                return Err(PyTypeError::new_err(
                    "regression targets (n_classes = 0) must be float64",
                ))
            }
            (YArray::Codes(c), k) => Targets::classes(vector(c, "y")?, k)?,
            (YArray::Values(v), k) => {
                let v = vector(v, "y")?;
                converted = py.detach(|| class_codes(v, k))?;
                Targets::classes(&converted, k)?
            }
        };
        let forest = with_matrix!(x, |m| {
            // Shadow features (importance::corrected): p virtual permuted columns.
            let perm = shadows.then(|| shadow_permutation(m.n_rows(), random_state));
            let m = match &perm {
                Some(perm) => m.with_shadows(perm)?,
                None => m,
            };
            // Under the pool: the histogram splitter bins the features in parallel here.
            let session =
                py.detach(|| install(threads, || FitSession::new(&params, m, targets, sw)))?;
            fit_watched(py, &session, threads, progress.as_ref())?
        });
        Ok(PyForest {
            inner: Arc::new(forest),
        })
    }

    /// Average of the trees' leaf values, shape (n_samples, width).
    #[pyo3(signature = (x, n_jobs = None))]
    fn predict<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
        n_jobs: Option<i64>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let threads = resolve_n_jobs(n_jobs)?;
        let x = XArray::extract(x)?;
        let f = &self.inner;
        let (v, n) = with_matrix!(x, |m| (
            py.detach(|| install(threads, || f.predict(m)))?,
            m.n_rows()
        ));
        rows_to_array(py, v, n, f.width())
    }

    /// Leaf index of every sample in every tree, shape (n_samples, n_estimators).
    #[pyo3(signature = (x, n_jobs = None))]
    fn apply<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
        n_jobs: Option<i64>,
    ) -> PyResult<Bound<'py, PyArray2<i64>>> {
        let threads = resolve_n_jobs(n_jobs)?;
        let x = XArray::extract(x)?;
        let f = &self.inner;
        let (v, n) = with_matrix!(x, |m| (
            py.detach(|| install(threads, || f.apply(m)))?,
            m.n_rows()
        ));
        let v: Vec<i64> = v.into_iter().map(i64::from).collect();
        rows_to_array(py, v, n, f.trees().len())
    }

    /// CSR (indptr, indices, n_nodes_ptr) of the nodes each sample traverses, trees stacked.
    fn decision_path<'py>(&self, py: Python<'py>, x: &Bound<'py, PyAny>) -> PyResult<Csr<'py>> {
        let x = XArray::extract(x)?;
        let f = &self.inner;
        let mut offsets = vec![0i64];
        for t in f.trees() {
            offsets.push(offsets[offsets.len() - 1] + t.len() as i64);
        }
        let (indptr, indices) = with_matrix!(x, |m| {
            f.check_input(&m)?;
            py.detach(|| {
                let mut indptr = vec![0i64];
                let mut indices = Vec::new();
                let mut path = Vec::new();
                for i in 0..m.n_rows() {
                    for (t, tree) in f.trees().iter().enumerate() {
                        path.clear();
                        tree.path(&m, i, &mut path);
                        indices.extend(path.iter().map(|&node| offsets[t] + node as i64));
                    }
                    indptr.push(indices.len() as i64);
                }
                (indptr, indices)
            })
        });
        Ok((
            indptr.into_pyarray(py),
            indices.into_pyarray(py),
            offsets.into_pyarray(py),
        ))
    }

    /// Out-of-bag mean values (n, width), NaN where never OOB, and OOB tree counts (n,).
    #[pyo3(signature = (x, n_jobs = None))]
    fn oob_predict<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
        n_jobs: Option<i64>,
    ) -> PyResult<OobArrays<'py>> {
        let threads = resolve_n_jobs(n_jobs)?;
        let x = XArray::extract(x)?;
        let f = &self.inner;
        let ((v, c), n) = with_matrix!(x, |m| (
            py.detach(|| install(threads, || f.oob_predict(m)))?,
            m.n_rows()
        ));
        let c: Vec<f64> = c.into_iter().map(f64::from).collect();
        Ok((rows_to_array(py, v, n, f.width())?, c.into_pyarray(py)))
    }

    /// Mean decrease of impurity, raw (bits for entropy) or normalized like scikit-learn.
    fn importances<'py>(&self, py: Python<'py>, normalize: bool) -> Bound<'py, PyArray1<f64>> {
        let f = &self.inner;
        py.detach(|| f.importances(normalize)).into_pyarray(py)
    }

    /// Raw MDI of every tree, shape (n_estimators, n_features).
    fn tree_importances<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let f = &self.inner;
        let rows = py.detach(|| f.tree_importances());
        let (m, p) = (rows.len(), f.n_features());
        rows_to_array(py, rows.concat(), m, p)
    }

    /// Node arrays of tree `index`, with scikit-learn's conventions for leaves.
    fn tree_arrays<'py>(&self, py: Python<'py>, index: usize) -> PyResult<Bound<'py, PyDict>> {
        let t = self.inner.trees().get(index).ok_or_else(|| {
            pyo3::exceptions::PyIndexError::new_err(format!("tree index {index} out of range"))
        })?;
        let kids: Vec<Option<(usize, usize)>> = (0..t.len()).map(|i| t.children(i)).collect();
        let d = PyDict::new(py);
        let left: Vec<i64> = kids
            .iter()
            .map(|c| c.map_or(-1, |(l, _)| l as i64))
            .collect();
        let right: Vec<i64> = kids
            .iter()
            .map(|c| c.map_or(-1, |(_, r)| r as i64))
            .collect();
        d.set_item("children_left", left.into_pyarray(py))?;
        d.set_item("children_right", right.into_pyarray(py))?;
        let feature: Vec<i64> = (0..t.len())
            .map(|i| {
                if t.is_leaf(i) {
                    -2
                } else {
                    i64::from(t.feature(i))
                }
            })
            .collect();
        d.set_item("feature", feature.into_pyarray(py))?;
        let thr: Vec<f64> = (0..t.len())
            .map(|i| if t.is_leaf(i) { -2.0 } else { t.threshold(i) })
            .collect();
        d.set_item("threshold", thr.into_pyarray(py))?;
        let s = t.node_stats();
        let counts: Vec<i64> = s.n_samples.iter().map(|&c| i64::from(c)).collect();
        d.set_item("n_node_samples", counts.into_pyarray(py))?;
        d.set_item("impurity", s.impurity.into_pyarray(py))?;
        d.set_item("weighted_n_node_samples", s.weight.into_pyarray(py))?;
        d.set_item("value", rows_to_array(py, s.value, t.len(), t.width())?)?;
        Ok(d)
    }

    /// Versioned binary model (magic, format version, checksum, payload).
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let f = &self.inner;
        let bytes = py.detach(|| f.to_bytes())?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// Inverse of `to_bytes`; raises ModelFormatError on bad bytes.
    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: &[u8]) -> PyResult<Self> {
        let forest = py.detach(|| Forest::from_bytes(data))?;
        Ok(PyForest {
            inner: Arc::new(forest),
        })
    }

    fn __reduce__<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyBytes>,))> {
        let ctor = py.get_type::<PyForest>().getattr("from_bytes")?;
        Ok((ctor, (self.to_bytes(py)?,)))
    }

    #[getter]
    fn n_estimators(&self) -> usize {
        self.inner.trees().len()
    }
    #[getter]
    fn n_features(&self) -> usize {
        self.inner.n_features()
    }
    /// Number of classes, 0 for regression.
    #[getter]
    fn n_classes(&self) -> usize {
        self.inner.n_classes()
    }
    #[getter]
    fn criterion(&self) -> &'static str {
        match self.inner.params().criterion {
            CriterionKind::Gini => "gini",
            CriterionKind::Entropy => "entropy",
            CriterionKind::SquaredError => "squared_error",
        }
    }
    #[getter]
    fn random_state(&self) -> u64 {
        self.inner.params().seed
    }
    fn node_counts<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<i64>> {
        let v: Vec<i64> = self.inner.trees().iter().map(|t| t.len() as i64).collect();
        v.into_pyarray(py)
    }
    fn depths<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<i64>> {
        let v: Vec<i64> = self
            .inner
            .trees()
            .iter()
            .map(|t| t.max_depth() as i64)
            .collect();
        v.into_pyarray(py)
    }
    fn __repr__(&self) -> String {
        let f = &self.inner;
        format!(
            "Forest(n_estimators={}, n_features={}, n_classes={}, criterion='{}')",
            f.trees().len(),
            f.n_features(),
            f.n_classes(),
            self.criterion()
        )
    }
}

/// Grows the forest on a worker thread while this one, holding the GIL only briefly every
/// [`WATCH_EVERY`], checks for Ctrl-C and reports progress. On Ctrl-C (or an error raised
/// by the progress callback) no new tree starts and the trees in progress are awaited.
/// The trees never wait for each other, and the result never depends on the watching.
fn fit_watched<T: crate::data::Feature>(
    py: Python<'_>,
    session: &FitSession<'_, T>,
    threads: usize,
    progress: Option<&Bound<'_, PyAny>>,
) -> PyResult<Forest> {
    let total = session.params().n_estimators;
    let (stop, grown) = (AtomicBool::new(false), AtomicUsize::new(0));
    let done = (Mutex::new(false), Condvar::new());
    std::thread::scope(|scope| {
        let worker = scope.spawn(|| {
            let trees = install(threads, || {
                session.fit_range_watched(0..total, &stop, &grown)
            });
            *done.0.lock().unwrap_or_else(|e| e.into_inner()) = true;
            done.1.notify_all();
            trees
        });
        let mut reported = 0;
        let watched: PyResult<()> = loop {
            let finished = py.detach(|| {
                let flag = done.0.lock().unwrap_or_else(|e| e.into_inner());
                let waited = done.1.wait_timeout_while(flag, WATCH_EVERY, |d| !*d);
                waited.map_or(true, |(d, _)| *d)
            }) || worker.is_finished(); // also when the worker ended without setting `done`
            if let Err(e) = py.check_signals() {
                break Err(e);
            }
            let done = grown.load(Ordering::Relaxed);
            if let Some(cb) = progress.filter(|_| done > reported || finished) {
                if let Err(e) = cb.call1((done, total)) {
                    break Err(e);
                }
                reported = done;
            }
            if finished {
                break Ok(());
            }
        };
        if watched.is_err() {
            stop.store(true, Ordering::Relaxed);
        }
        let trees = py.detach(|| worker.join());
        watched?;
        let trees = trees.ok().flatten().ok_or_else(|| {
            pyo3::exceptions::PyRuntimeError::new_err("internal error: the fit stopped early")
        })?;
        Ok(session.finish(trees)?)
    })
}
