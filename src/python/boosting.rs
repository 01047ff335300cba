//! `forestimp._core.Booster`: an immutable fitted gradient-boosting model (see
//! `crate::boosting`), fitted and read through the doorway like `Forest`.

use std::sync::{Arc, Mutex};

use numpy::{IntoPyArray, PyArray1, PyArray2, PyArrayDyn, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use super::arrays::{ensure_result_fits, to_rows, to_shape, vector, with_matrix, XArray};
use super::doorway::{run, run_watched};
use super::model::SklearnArrays;
use crate::boosting::{BoostParams, Booster, Control, Loss, Monitor, Validation};
use crate::error::{invalid, ForestError};
use crate::params::{CriterionKind, FeatureCount, ForestParams, SplitterKind};

/// `validation` of `Booster.fit`: X, y, weights and the initial model's raw predictions.
type ValidationArg<'py> = (
    Bound<'py, PyAny>,
    PyReadonlyArray1<'py, f64>,
    PyReadonlyArray1<'py, f64>,
    Option<PyReadonlyArray1<'py, f64>>,
);

/// A fitted gradient-boosting model.
#[pyclass(frozen, module = "forestimp._core", name = "Booster")]
pub struct PyBooster {
    pub(crate) inner: Arc<Booster>,
}

fn loss_of(name: &str, alpha: f64) -> Result<Loss, ForestError> {
    match name {
        "squared_error" => Ok(Loss::SquaredError),
        "absolute_error" => Ok(Loss::AbsoluteError),
        "huber" => Ok(Loss::Huber { alpha }),
        "quantile" => Ok(Loss::Quantile { alpha }),
        "log_loss" => Ok(Loss::LogLoss),
        "exponential" => Ok(Loss::Exponential),
        other => Err(invalid("loss", format!("unknown loss {other:?}"))),
    }
}

fn splitter_of(name: &str, max_bins: usize) -> Result<SplitterKind, ForestError> {
    match name {
        "best" => Ok(SplitterKind::Best),
        "random" => Ok(SplitterKind::Random),
        "hist" => Ok(SplitterKind::Histogram {
            max_bins: u16::try_from(max_bins).unwrap_or(0),
        }),
        other => Err(invalid(
            "splitter",
            format!("expected 'best', 'random' or 'hist', got {other:?}"),
        )),
    }
}

/// Calls the Python monitor `hook(i, booster)` after round `i` with the model so far, from
/// the fitting thread: the doorway's watcher releases the GIL between its checks, so the
/// call waits at most one of them for it, and the rounds themselves run without it. The
/// fit ends when the hook returns something true or raises; its exception is kept in
/// `raised`, for `fit` to raise once the work is over.
fn call_hook(
    hook: Option<&Py<PyAny>>,
    raised: &Mutex<Option<PyErr>>,
    i: usize,
    model: &Booster,
) -> bool {
    let Some(hook) = hook else {
        return false;
    };
    Python::attach(|py| {
        let booster = PyBooster {
            inner: Arc::new(model.clone()),
        };
        let answer = hook
            .call1(py, (i, booster))
            .and_then(|r| r.bind(py).is_truthy());
        answer.unwrap_or_else(|e| {
            *raised.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
            true
        })
    })
}

#[pymethods]
impl PyBooster {
    /// Fit a booster; see the stub file for the meaning of every argument.
    #[staticmethod]
    #[pyo3(signature = (
        x, y, sample_weight, *, n_classes, loss, alpha, learning_rate, n_estimators, subsample,
        init_zero, splitter, max_bins, max_features, tree_features, max_depth,
        min_samples_split, min_samples_leaf, min_weight_fraction_leaf, min_impurity_decrease,
        max_leaf_nodes, ccp_alpha, random_state, n_iter_no_change, tol, validation = None,
        previous = None, n_jobs = None, progress = None, offset = None, monitor = None,
        categorical = None, category_guards = None
    ))]
    #[allow(clippy::too_many_arguments)]
    fn fit(
        py: Python<'_>,
        x: &Bound<'_, PyAny>,
        y: PyReadonlyArray1<'_, f64>,
        sample_weight: Option<PyReadonlyArray1<'_, f64>>,
        n_classes: usize,
        loss: &str,
        alpha: f64,
        learning_rate: f64,
        n_estimators: usize,
        subsample: f64,
        init_zero: bool,
        splitter: &str,
        max_bins: usize,
        max_features: usize,
        tree_features: Option<usize>,
        max_depth: Option<usize>,
        min_samples_split: usize,
        min_samples_leaf: usize,
        min_weight_fraction_leaf: f64,
        min_impurity_decrease: f64,
        max_leaf_nodes: Option<usize>,
        ccp_alpha: f64,
        random_state: u64,
        n_iter_no_change: Option<usize>,
        tol: f64,
        validation: Option<ValidationArg<'_>>,
        previous: Option<PyRef<'_, PyBooster>>,
        n_jobs: Option<i64>,
        progress: Option<Bound<'_, PyAny>>,
        offset: Option<PyReadonlyArray1<'_, f64>>,
        monitor: Option<Bound<'_, PyAny>>,
        categorical: Option<Vec<bool>>,
        category_guards: Option<super::Guards>,
    ) -> PyResult<Self> {
        let mut tree = ForestParams::random_forest(CriterionKind::SquaredError);
        tree.categorical = categorical;
        tree.category_guards = super::guards_of(category_guards);
        tree.splitter = splitter_of(splitter, max_bins)?;
        tree.max_features = FeatureCount::Count(max_features);
        tree.tree_features = tree_features.map(FeatureCount::Count);
        tree.max_depth = max_depth;
        tree.min_samples_split = min_samples_split;
        tree.min_samples_leaf = min_samples_leaf;
        tree.min_weight_fraction_leaf = min_weight_fraction_leaf;
        tree.min_impurity_decrease = min_impurity_decrease;
        tree.max_leaf_nodes = max_leaf_nodes;
        tree.ccp_alpha = ccp_alpha;
        tree.seed = random_state;
        let params = BoostParams {
            loss: loss_of(loss, alpha)?,
            learning_rate,
            n_estimators,
            subsample,
            init_zero,
            n_iter_no_change,
            tol,
            tree,
        };
        let x = XArray::extract(x)?;
        if matches!(x, XArray::SparseF32(_) | XArray::SparseF64(_)) {
            return Err(ForestError::Binding("boosting reads a dense X".into()).into());
        }
        let y = vector(&y, "y")?;
        let sw = match &sample_weight {
            Some(w) => Some(vector(w, "sample_weight")?),
            None => None,
        };
        let offset = match &offset {
            Some(o) => Some(vector(o, "offset")?),
            None => None,
        };
        let val = match &validation {
            Some((vx, vy, vw, vo)) => Some((
                XArray::extract(vx)?,
                vector(vy, "y_val")?,
                vector(vw, "w_val")?,
                match vo {
                    Some(o) => Some(vector(o, "offset_val")?),
                    None => None,
                },
            )),
            None => None,
        };
        let previous = previous.map(|b| Arc::clone(&b.inner));
        let first = previous
            .as_ref()
            .map_or(0, |b| b.n_rounds().min(n_estimators));
        let progress = progress.as_ref().map(|cb| (cb, n_estimators - first));
        let hook = monitor.map(Bound::unbind);
        let raised: Mutex<Option<PyErr>> = Mutex::new(None);
        let call_monitor = |i: usize, model: &Booster| call_hook(hook.as_ref(), &raised, i, model);
        let with_monitor: Option<&Monitor<'_>> = match hook {
            Some(_) => Some(&call_monitor),
            None => None,
        };
        macro_rules! fit_with {
            ($m:ident, $v:expr) => {
                run_watched(py, n_jobs, progress, |watch| {
                    let control = Control {
                        stop: watch.stop_flag(),
                        done: watch.done_counter(),
                        monitor: with_monitor,
                    };
                    Booster::fit_controlled(
                        &params,
                        $m,
                        y,
                        n_classes,
                        sw,
                        offset,
                        $v,
                        previous.as_deref(),
                        control,
                    )
                })?
            };
        }
        let booster = match (&x, &val) {
            (XArray::F32(a), Some((XArray::F32(b), vy, vw, vo))) => {
                let (m, vm) = (super::arrays::matrix(a)?, super::arrays::matrix(b)?);
                let v = Validation {
                    x: vm,
                    y: vy,
                    w: vw,
                    offset: *vo,
                };
                fit_with!(m, Some(v))
            }
            (XArray::F64(a), Some((XArray::F64(b), vy, vw, vo))) => {
                let (m, vm) = (super::arrays::matrix(a)?, super::arrays::matrix(b)?);
                let v = Validation {
                    x: vm,
                    y: vy,
                    w: vw,
                    offset: *vo,
                };
                fit_with!(m, Some(v))
            }
            (_, Some(_)) => {
                return Err(ForestError::Binding(
                    "the validation X must be dense with the dtype of X".into(),
                )
                .into())
            }
            (x, None) => with_matrix!(x, |m| fit_with!(m, None)),
        };
        if let Some(e) = raised.into_inner().unwrap_or_else(|e| e.into_inner()) {
            return Err(e);
        }
        Ok(PyBooster {
            inner: Arc::new(booster),
        })
    }

    /// Raw predictions after the first `rounds` rounds (all by default), shape (n, k).
    #[pyo3(signature = (x, rounds = None, n_jobs = None))]
    fn raw_predict<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
        rounds: Option<usize>,
        n_jobs: Option<i64>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let x = XArray::extract(x)?;
        let b = &self.inner;
        let (v, n) = with_matrix!(x, |m| (
            run(py, n_jobs, || b.raw_predict(m, rounds))?,
            m.n_rows()
        ));
        to_rows(py, v, n, b.trees_per_round())
    }

    /// What rounds `start..stop` add to the raw predictions, shape (stop − start, n, k).
    #[pyo3(signature = (x, start, stop, n_jobs = None))]
    fn round_contributions<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
        start: usize,
        stop: usize,
        n_jobs: Option<i64>,
    ) -> PyResult<Bound<'py, PyArrayDyn<f64>>> {
        let x = XArray::extract(x)?;
        let b = &self.inner;
        let stop = stop.min(b.n_rounds());
        let start = start.min(stop);
        let (v, n) = with_matrix!(x, |m| (
            run(py, n_jobs, || b.round_contributions(m, start, stop))?,
            m.n_rows()
        ));
        to_shape(py, v, &[stop - start, n, b.trees_per_round()])
    }

    /// Leaf node id of every row in every tree, shape (n, n_rounds, k).
    #[pyo3(signature = (x, n_jobs = None))]
    fn apply<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
        n_jobs: Option<i64>,
    ) -> PyResult<Bound<'py, PyArrayDyn<i64>>> {
        let x = XArray::extract(x)?;
        let b = &self.inner;
        let (v, n) = with_matrix!(x, |m| (
            run(py, n_jobs, || Ok(b
                .apply(m)?
                .into_iter()
                .map(i64::from)
                .collect::<Vec<_>>()))?,
            m.n_rows()
        ));
        to_shape(py, v, &[n, b.n_rounds(), b.trees_per_round()])
    }

    /// scikit-learn's normalized `feature_importances_`.
    fn feature_importances<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let b = &self.inner;
        ensure_result_fits(&[b.trees().len(), b.n_features()], "the importances")?;
        Ok(b.feature_importances().into_pyarray(py))
    }

    /// Unnormalized MDI of every tree, shape (n_trees, n_features), round-major.
    fn tree_importances<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let b = &self.inner;
        ensure_result_fits(&[b.trees().len(), b.n_features()], "the importances")?;
        to_rows(py, b.tree_importances(), b.trees().len(), b.n_features())
    }

    /// Per tree: total gain, split count and cover of every feature, (n_trees, 3, p).
    fn split_stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArrayDyn<f64>>> {
        let b = &self.inner;
        let dims = [b.trees().len(), 3, b.n_features()];
        ensure_result_fits(&dims, "the split statistics")?;
        to_shape(py, b.split_stats(), &dims)
    }

    #[getter]
    fn train_score<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        self.inner.train_score().to_vec().into_pyarray(py)
    }

    #[getter]
    fn oob_scores<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        self.inner.oob_scores().to_vec().into_pyarray(py)
    }

    #[getter]
    fn oob_improvement<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        self.inner.oob_improvement().to_vec().into_pyarray(py)
    }

    #[getter]
    fn init<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        self.inner.init().to_vec().into_pyarray(py)
    }

    #[getter]
    fn n_rounds(&self) -> usize {
        self.inner.n_rounds()
    }

    #[getter]
    fn trees_per_round(&self) -> usize {
        self.inner.trees_per_round()
    }

    #[getter]
    fn n_features(&self) -> usize {
        self.inner.n_features()
    }

    #[getter]
    fn n_classes(&self) -> usize {
        self.inner.n_classes()
    }

    #[getter]
    fn loss(&self) -> &'static str {
        self.inner.params().loss.name()
    }

    #[getter]
    fn learning_rate(&self) -> f64 {
        self.inner.params().learning_rate
    }

    /// Tree `index` (round-major) in scikit-learn's node layout, as `Forest.tree_arrays`,
    /// with the line-searched values at the leaves (scikit-learn's boosting trees too).
    fn tree_arrays<'py>(&self, py: Python<'py>, index: usize) -> PyResult<Bound<'py, PyDict>> {
        let b = &self.inner;
        let t = b.trees().get(index).ok_or_else(|| {
            pyo3::exceptions::PyIndexError::new_err(format!("tree index {index} out of range"))
        })?;
        let mut a = SklearnArrays::of(t);
        for (node, v) in a.stats.value.iter_mut().enumerate() {
            if t.is_leaf(node) {
                *v = b.leaf_values(index)[t.leaf_slot(node)];
            }
        }
        let d = PyDict::new(py);
        d.set_item("children_left", a.left.into_pyarray(py))?;
        d.set_item("children_right", a.right.into_pyarray(py))?;
        d.set_item("feature", a.feature.into_pyarray(py))?;
        d.set_item("threshold", a.threshold.into_pyarray(py))?;
        d.set_item("missing_go_to_left", a.missing_left.into_pyarray(py))?;
        let s = a.stats;
        let counts: Vec<i64> = s.n_samples.iter().map(|&c| i64::from(c)).collect();
        d.set_item("n_node_samples", counts.into_pyarray(py))?;
        d.set_item("impurity", s.impurity.into_pyarray(py))?;
        d.set_item("weighted_n_node_samples", s.weight.into_pyarray(py))?;
        d.set_item("value", to_rows(py, s.value, t.len(), 1)?)?;
        Ok(d)
    }

    /// Node counts of the trees, round-major.
    fn node_counts<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<i64>> {
        let v: Vec<i64> = self.inner.trees().iter().map(|t| t.len() as i64).collect();
        v.into_pyarray(py)
    }

    /// Versioned binary model (magic `FIMB`, format version, checksum, payload).
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let b = &self.inner;
        let bytes = run(py, None, || b.to_bytes())?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// Inverse of `to_bytes`; raises ModelFormatError on bad bytes.
    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: &[u8]) -> PyResult<Self> {
        let booster = run(py, None, || Booster::from_bytes(data))?;
        Ok(PyBooster {
            inner: Arc::new(booster),
        })
    }

    fn __reduce__<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyBytes>,))> {
        let ctor = py.get_type::<PyBooster>().getattr("from_bytes")?;
        Ok((ctor, (self.to_bytes(py)?,)))
    }

    fn __repr__(&self) -> String {
        let b = &self.inner;
        format!(
            "Booster(loss={:?}, n_rounds={}, trees_per_round={}, n_features={})",
            b.params().loss.name(),
            b.n_rounds(),
            b.trees_per_round(),
            b.n_features()
        )
    }
}
