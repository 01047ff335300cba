//! `forestimp._core.Forest`: an immutable fitted forest shared behind an `Arc`.
//!
//! Every method follows the same steps: convert and check the inputs while holding the
//! GIL, run the work through the doorway (`doorway.rs`), convert the outputs.

use std::sync::Arc;

use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use super::arrays::{ensure_result_fits, to_rows, vector, with_matrix, XArray, YArray};
use super::doorway::{run, run_watched};
use crate::data::{Feature, Matrix, Shadows};
use crate::error::ForestError;
use crate::forest::{FitSession, Forest};
use crate::params::{CriterionKind, FeatureCount, ForestParams, SampleCount, SplitterKind};

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
    /// The column selection and shadows the forest was grown with, while this object lives
    /// (not saved): out-of-bag measures on the training X read them again.
    pub(crate) view: Option<Arc<FitView>>,
}

/// The view of X a forest was grown on: stored columns `columns`, then `shadows`.
pub(crate) struct FitView {
    columns: Option<Vec<u32>>,
    shadows: Option<Shadows>,
}

impl FitView {
    /// `m` seen as the forest saw it at fit.
    pub(crate) fn apply<'a, T: Feature>(
        &'a self,
        m: Matrix<'a, T>,
    ) -> Result<Matrix<'a, T>, ForestError> {
        let m = match &self.columns {
            Some(c) => m.with_columns(c)?,
            None => m,
        };
        match &self.shadows {
            Some(s) => m.with_shadows(s),
            None => Ok(m),
        }
    }
}

/// Stored column indices from Python, each in `0..p`.
fn column_indices(
    a: &PyReadonlyArray1<'_, i64>,
    what: &str,
    p: usize,
) -> Result<Vec<u32>, ForestError> {
    a.as_array()
        .iter()
        .map(|&j| u32::try_from(j).ok().filter(|&j| (j as usize) < p))
        .collect::<Option<Vec<u32>>>()
        .ok_or_else(|| ForestError::Shape(format!("{what} must be columns 0..{p} of X")))
}

/// `shadows` of `Forest.fit`: `None` or `False`, `True` (a shared-permutation shadow of every
/// column) or the source columns of independent shadows.
#[derive(FromPyObject)]
pub(crate) enum ShadowArg<'py> {
    All(bool),
    Sources(PyReadonlyArray1<'py, i64>),
}

impl ShadowArg<'_> {
    /// The shadows of an `n × p` X: shared ones shadow the columns the forest sees.
    fn build(
        &self,
        n: usize,
        p: usize,
        seen: Option<&[u32]>,
        seed: u64,
    ) -> Result<Option<Shadows>, ForestError> {
        match self {
            ShadowArg::All(false) => Ok(None),
            ShadowArg::All(true) => {
                let seen = seen.map_or_else(|| (0..p as u32).collect(), <[u32]>::to_vec);
                Ok(Some(Shadows::shared(n, seen, seed)))
            }
            ShadowArg::Sources(a) => {
                let sources = column_indices(a, "shadow sources", p)?;
                Ok(Some(Shadows::independent(n, sources, seed)))
            }
        }
    }
}

fn criterion_of(name: &str) -> Result<CriterionKind, ForestError> {
    match name {
        "gini" => Ok(CriterionKind::Gini),
        "entropy" | "log_loss" => Ok(CriterionKind::Entropy),
        "squared_error" => Ok(CriterionKind::SquaredError),
        "poisson" => Ok(CriterionKind::Poisson),
        "absolute_error" => Ok(CriterionKind::AbsoluteError),
        other => Err(crate::error::invalid(
            "criterion",
            format!("expected 'gini', 'entropy', 'log_loss', 'squared_error', 'absolute_error' or 'poisson', got {other:?}"),
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

#[pymethods]
impl PyForest {
    /// Fit a forest; see the stub file for the meaning of every argument.
    #[staticmethod]
    #[pyo3(signature = (
        x, y, sample_weight, *, n_classes, criterion, splitter, n_estimators, max_features,
        max_depth, min_samples_split, min_samples_leaf, min_weight_fraction_leaf,
        min_impurity_decrease, max_leaf_nodes, bootstrap, max_samples, tree_features,
        balanced_subsample, random_state, n_jobs, progress = None, shadows = None, columns = None, max_bins = 255,
        previous = None, bins = None, trees = None, ccp_alpha = 0.0, output_classes = None,
        monotonic_cst = None, categorical = None, category_guards = None
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
        shadows: Option<ShadowArg<'_>>,
        columns: Option<PyReadonlyArray1<'_, i64>>,
        max_bins: usize,
        previous: Option<PyRef<'_, PyForest>>,
        bins: Option<PyRef<'_, super::bins::PyBins>>,
        trees: Option<(usize, usize)>,
        ccp_alpha: f64,
        output_classes: Option<Vec<usize>>,
        monotonic_cst: Option<Vec<i8>>,
        categorical: Option<Vec<bool>>,
        category_guards: Option<super::Guards>,
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
            ccp_alpha,
            monotonic_cst,
            categorical,
            category_guards: super::guards_of(category_guards),
        };
        let x = XArray::extract(x)?;
        let y = YArray::extract(y)?;
        let labels = y.fit_labels()?;
        let sw = match &sample_weight {
            Some(w) => Some(vector(w, "sample_weight")?),
            None => None,
        };
        let total = params.n_estimators;
        // Warm start: the trees of `previous` are kept and only the next indices are grown.
        let previous = previous.map(|f| Arc::clone(&f.inner));
        let bins = bins.map(|b| (Arc::clone(&b.inner), b.max_bins));
        let first = previous.as_ref().map_or(0, |f| f.trees().len().min(total));
        // A part: only the trees `start..stop` of the forest of `total` trees.
        let (first, total) = match trees {
            Some((start, stop)) if previous.is_some() || start >= stop || stop > total => {
                return Err(crate::error::invalid(
                    "trees",
                    format!("a part is a range of the {total} trees without warm start, got {start}..{stop}"),
                )
                .into())
            }
            Some(range) => range,
            None => (first, total),
        };
        let progress = progress.as_ref().map(|cb| (cb, total - first));
        let (n, p) = with_matrix!(x, |m| (m.n_rows(), m.n_cols()));
        let columns = match &columns {
            Some(c) => Some(column_indices(c, "columns", p)?),
            None => None,
        };
        let shadows = match &shadows {
            Some(s) => s.build(n, p, columns.as_deref(), random_state)?,
            None => None,
        };
        let view = match shadows {
            None if columns.is_none() => None,
            shadows => Some(FitView { columns, shadows }),
        };
        let forest = with_matrix!(x, |m| run_watched(py, n_jobs, progress, |watch| {
            let mut codes = Vec::new();
            let targets = labels.targets(n_classes, output_classes.as_deref(), &mut codes)?;
            let m = match &view {
                Some(v) => v.apply(m)?,
                None => m,
            };
            // In the pool: the histogram splitter bins the features in parallel here.
            let cached = bins.as_ref().map(|(b, max_bins)| (&**b, *max_bins));
            let session = FitSession::with_bins(&params, m, targets, sw, cached)?;
            let (stop, grown) = (watch.stop_flag(), watch.done_counter());
            match (
                session.fit_range_watched(first..total, stop, grown),
                &previous,
            ) {
                (Some(grown), None) if trees.is_some() => session.finish_part(first, grown),
                (Some(trees), None) => session.finish(trees),
                (Some(trees), Some(previous)) => session.finish_after(previous, trees),
                // Stopped: the doorway raises the interrupt (or the callback's error).
                (None, _) => Err(ForestError::Stopped),
            }
        })?);
        Ok(PyForest {
            inner: Arc::new(forest),
            view: view.map(Arc::new),
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
        let x = XArray::extract(x)?;
        let f = &self.inner;
        let (v, n) = with_matrix!(x, |m| (run(py, n_jobs, || f.predict(m))?, m.n_rows()));
        to_rows(py, v, n, f.width())
    }

    /// Leaf index of every sample in every tree, shape (n_samples, n_estimators).
    #[pyo3(signature = (x, n_jobs = None))]
    fn apply<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
        n_jobs: Option<i64>,
    ) -> PyResult<Bound<'py, PyArray2<i64>>> {
        let x = XArray::extract(x)?;
        let f = &self.inner;
        let (v, n) = with_matrix!(x, |m| (
            run(py, n_jobs, || Ok(f
                .apply(m)?
                .into_iter()
                .map(i64::from)
                .collect::<Vec<_>>()))?,
            m.n_rows()
        ));
        to_rows(py, v, n, f.trees().len())
    }

    /// CSR (indptr, indices, n_nodes_ptr) of the nodes each sample traverses, trees stacked.
    #[pyo3(signature = (x, n_jobs = None))]
    fn decision_path<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
        n_jobs: Option<i64>,
    ) -> PyResult<Csr<'py>> {
        let x = XArray::extract(x)?;
        let f = &self.inner;
        let (indptr, indices, offsets) =
            with_matrix!(x, |m| run(py, n_jobs, || f.decision_paths(m))?);
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
        let x = XArray::extract(x)?;
        let f = &self.inner;
        let ((v, c), n) = with_matrix!(x, |m| (run(py, n_jobs, || f.oob_predict(m))?, m.n_rows()));
        let c: Vec<f64> = c.into_iter().map(f64::from).collect();
        Ok((to_rows(py, v, n, f.width())?, c.into_pyarray(py)))
    }

    /// Mean decrease of impurity, raw (bits for entropy) or normalized like scikit-learn.
    #[pyo3(signature = (normalize, n_jobs = None))]
    fn importances<'py>(
        &self,
        py: Python<'py>,
        normalize: bool,
        n_jobs: Option<i64>,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let f = &self.inner;
        ensure_result_fits(&[f.trees().len(), f.n_features()], "the importances")?;
        Ok(run(py, n_jobs, || Ok(f.importances(normalize)))?.into_pyarray(py))
    }

    /// Raw MDI of every tree, shape (n_estimators, n_features).
    #[pyo3(signature = (n_jobs = None))]
    fn tree_importances<'py>(
        &self,
        py: Python<'py>,
        n_jobs: Option<i64>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let f = &self.inner;
        ensure_result_fits(&[f.trees().len(), f.n_features()], "the importances")?;
        let rows = run(py, n_jobs, || Ok(f.tree_importances().concat()))?;
        to_rows(py, rows, f.trees().len(), f.n_features())
    }

    /// Node arrays of tree `index`, with scikit-learn's conventions for leaves (and its
    /// `missing_go_to_left`). A categorical split's threshold is a NaN (its set is not in
    /// these arrays).
    fn tree_arrays<'py>(&self, py: Python<'py>, index: usize) -> PyResult<Bound<'py, PyDict>> {
        let t = self.inner.trees().get(index).ok_or_else(|| {
            pyo3::exceptions::PyIndexError::new_err(format!("tree index {index} out of range"))
        })?;
        let a = run(py, None, || Ok(SklearnArrays::of(t)))?;
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
        d.set_item("value", to_rows(py, s.value, t.len(), t.width())?)?;
        Ok(d)
    }

    /// Versioned binary model (magic, format version, checksum, payload).
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let f = &self.inner;
        let bytes = run(py, None, || f.to_bytes())?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// Inverse of `to_bytes`; raises ModelFormatError on bad bytes.
    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: &[u8]) -> PyResult<Self> {
        let forest = run(py, None, || Forest::from_bytes(data))?;
        Ok(PyForest {
            inner: Arc::new(forest),
            view: None,
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
    /// Index of the first tree in the seed's sequence: 0, except for a part of a forest.
    #[getter]
    fn first_tree(&self) -> usize {
        self.inner.first_tree()
    }

    /// The part made of the trees at positions `start..stop`.
    fn part(&self, start: usize, stop: usize) -> PyResult<Self> {
        Ok(PyForest {
            inner: Arc::new(self.inner.part(start..stop)?),
            view: self.view.clone(),
        })
    }

    /// The forest of `parts` grown on the `columns` of a matrix of `n_features` columns
    /// (`Forest::assemble`).
    #[staticmethod]
    fn assemble(
        py: Python<'_>,
        parts: Vec<PyRef<'_, PyForest>>,
        columns: Vec<Vec<u32>>,
        n_features: usize,
    ) -> PyResult<Self> {
        if parts.len() != columns.len() || parts.iter().any(|p| p.view.is_some()) {
            return Err(crate::error::invalid(
                "parts",
                "one column list per forest, forests not grown on a view of X",
            )
            .into());
        }
        let parts: Vec<(Forest, Vec<u32>)> = parts
            .iter()
            .map(|p| (*p.inner).clone())
            .zip(columns)
            .collect();
        let forest = run(py, None, || Forest::assemble(parts, n_features))?;
        Ok(PyForest {
            inner: Arc::new(forest),
            view: None,
        })
    }

    /// Whether the forest was assembled from patches (`Forest::assemble`).
    #[getter]
    fn assembled(&self) -> bool {
        self.inner.params().assembled
    }

    /// The forest of consecutive parts of one forest, in order (`Forest::concat`).
    #[staticmethod]
    fn concat(py: Python<'_>, parts: Vec<PyRef<'_, PyForest>>) -> PyResult<Self> {
        if parts.iter().any(|p| p.view.is_some()) {
            return Err(crate::error::invalid("parts", "forests grown on a view of X").into());
        }
        let parts: Vec<Forest> = parts.iter().map(|p| (*p.inner).clone()).collect();
        let forest = run(py, None, || Forest::concat(parts))?;
        Ok(PyForest {
            inner: Arc::new(forest),
            view: None,
        })
    }
    #[getter]
    fn n_features(&self) -> usize {
        self.inner.n_features()
    }
    /// Number of classes, 0 for regression (several outputs: the sum of their classes).
    #[getter]
    fn n_classes(&self) -> usize {
        self.inner.n_classes()
    }
    /// Number of outputs (1 unless fitted on a 2-D y).
    #[getter]
    fn n_outputs(&self) -> usize {
        self.inner.n_outputs()
    }
    /// Values of each output in a prediction row (class counts, or 1 per regression
    /// output); empty for a single-output forest.
    #[getter]
    fn outputs(&self) -> Vec<usize> {
        self.inner.outputs().to_vec()
    }
    #[getter]
    fn criterion(&self) -> &'static str {
        match self.inner.params().criterion {
            CriterionKind::Gini => "gini",
            CriterionKind::Entropy => "entropy",
            CriterionKind::SquaredError => "squared_error",
            CriterionKind::Poisson => "poisson",
            CriterionKind::AbsoluteError => "absolute_error",
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
    /// Depth of every tree (a walk of every node: through the doorway).
    fn depths<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<i64>>> {
        let trees = self.inner.trees();
        let v = run(py, None, || {
            Ok(trees
                .iter()
                .map(|t| t.max_depth() as i64)
                .collect::<Vec<_>>())
        })?;
        Ok(v.into_pyarray(py))
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

/// One tree's nodes in scikit-learn's `Tree` layout: children `-1` and feature and
/// threshold `-2` at leaves; every node's statistics.
pub(crate) struct SklearnArrays {
    pub(crate) left: Vec<i64>,
    pub(crate) right: Vec<i64>,
    pub(crate) feature: Vec<i64>,
    pub(crate) threshold: Vec<f64>,
    /// Whether NaN goes left (false at leaves).
    pub(crate) missing_left: Vec<bool>,
    pub(crate) stats: crate::tree::NodeStats,
}

impl SklearnArrays {
    pub(crate) fn of(t: &crate::Tree) -> Self {
        let kids: Vec<Option<(usize, usize)>> = (0..t.len()).map(|i| t.children(i)).collect();
        let split = |i: usize| kids[i].is_some();
        SklearnArrays {
            left: kids
                .iter()
                .map(|c| c.map_or(-1, |(l, _)| l as i64))
                .collect(),
            right: kids
                .iter()
                .map(|c| c.map_or(-1, |(_, r)| r as i64))
                .collect(),
            feature: (0..t.len())
                .map(|i| {
                    if split(i) {
                        i64::from(t.feature(i))
                    } else {
                        -2
                    }
                })
                .collect(),
            threshold: (0..t.len())
                .map(|i| if split(i) { t.threshold(i) } else { -2.0 })
                .collect(),
            missing_left: (0..t.len())
                .map(|i| split(i) && t.missing_left(i))
                .collect(),
            stats: t.node_stats(),
        }
    }
}
