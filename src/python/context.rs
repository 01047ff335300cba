//! `forestimp._core.context_importances`: context-dependent importances of a fitted forest
//! (Sutera, PhD ch. 6). Converts and validates the arrays, then runs the core with the GIL
//! released on the requested number of threads.

use numpy::{IntoPyArray, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use super::arrays::{ensure_result_fits, to_shape, vector, with_matrix, XArray, YArray};
use super::doorway::run;
use super::model::PyForest;
use crate::error::{invalid, ForestError};
use crate::importance::context::{ContextOptions, EmptyContext};

fn empty_of(name: &str) -> Result<EmptyContext, ForestError> {
    match name {
        "zero" => Ok(EmptyContext::Zero),
        "skip" => Ok(EmptyContext::Skip),
        other => Err(invalid(
            "empty",
            format!("expected 'zero' or 'skip', got {other:?}"),
        )),
    }
}

fn context_codes(c: &[i64]) -> Result<Vec<u32>, ForestError> {
    c.iter()
        .enumerate()
        .map(|(i, &v)| {
            u32::try_from(v)
                .map_err(|_| invalid("context", format!("context[{i}] = {v} is not a code")))
        })
        .collect()
}

/// Context-dependent importances; see the stub file for every key of the returned dict.
#[pyfunction]
#[pyo3(name = "context_importances")]
#[pyo3(signature = (
    forest, x, y, context, n_contexts, sample_weight = None, *, empty = "zero",
    n_permutations = 0, random_state = 0, n_jobs = None
))]
#[allow(clippy::too_many_arguments)]
pub fn context_importances_py<'py>(
    py: Python<'py>,
    forest: PyRef<'_, PyForest>,
    x: &Bound<'py, PyAny>,
    y: &Bound<'py, PyAny>,
    context: PyReadonlyArray1<'_, i64>,
    n_contexts: usize,
    sample_weight: Option<PyReadonlyArray1<'_, f64>>,
    empty: &str,
    n_permutations: usize,
    random_state: u64,
    n_jobs: Option<i64>,
) -> PyResult<Bound<'py, PyDict>> {
    let options = ContextOptions {
        empty: empty_of(empty)?,
        n_permutations,
        seed: random_state,
    };
    let f = &forest.inner;
    // The null distributions hold n_permutations x features x contexts values, twice.
    let dims = [2, n_permutations, f.n_features(), n_contexts.max(1)];
    ensure_result_fits(&dims, "the null distributions (n_permutations)")?;
    let x = XArray::extract(x)?;
    let y = YArray::extract(y)?;
    let labels = y.labels()?;
    let ctx = vector(&context, "context")?;
    let sw = match &sample_weight {
        Some(w) => Some(vector(w, "sample_weight")?),
        None => None,
    };
    let s = with_matrix!(x, |m| run(py, n_jobs, || {
        let ctx = context_codes(ctx)?;
        let mut codes = Vec::new();
        let targets = labels.targets(f.n_classes(), &mut codes)?;
        f.context_importances(m, targets, &ctx, n_contexts, sw, &options)
    })?);
    let (p, k, q) = (s.n_features, s.n_contexts, n_permutations);
    let d = PyDict::new(py);
    let shaped = |v: Vec<f64>, dims: &[usize]| to_shape(py, v, dims);
    d.set_item("importances", s.importances.into_pyarray(py))?;
    d.set_item("absolute", shaped(s.absolute, &[p, k])?)?;
    d.set_item("signed", shaped(s.signed, &[p, k])?)?;
    d.set_item("global_signed", s.global_signed.into_pyarray(py))?;
    let opt = |v: Option<Vec<f64>>| v.map(|v| shaped(v, &[p, k])).transpose();
    d.set_item("pvalues_absolute", opt(s.pvalues_absolute)?)?;
    d.set_item("pvalues_signed", opt(s.pvalues_signed)?)?;
    d.set_item("null_absolute", shaped(s.null_absolute, &[q, p, k])?)?;
    d.set_item("null_signed", shaped(s.null_signed, &[q, p, k])?)?;
    Ok(d)
}
