//! The Python extension module `forestimp._core`: the only code that names pyo3 or numpy.
//!
//! Map: `doorway` (the one way into the engine: GIL released, `n_jobs` pool, Ctrl-C,
//! progress), `bins` (histogram codes kept between fits), `arrays` (zero-copy NumPy views, the one target conversion), `errors`
//! (typed exceptions), `model` (the `Forest` class: fit, predict, importances, pickling), `boosting` (the
//! `Booster` class),
//! `importance` (path-based importances), `mdi` (MDI by depth), `permutation`, `context`, `shap`
//! (TreeSHAP values), `quantiles` (leaf values and quantiles of regression forests).
//! The module's allocator is `crate::alloc`.

mod arrays;
mod bins;
mod boosting;
mod context;
mod doorway;
mod errors;
mod importance;
mod mdi;
mod model;
mod permutation;
mod quantiles;
mod shap;

use pyo3::prelude::*;

#[pymodule(gil_used = false)]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("FORMAT_VERSION", crate::persist::FORMAT_VERSION)?;
    m.add(
        "SINGLE_OUTPUT_FORMAT_VERSION",
        crate::persist::SINGLE_OUTPUT_VERSION,
    )?;
    m.add_class::<model::PyForest>()?;
    m.add_class::<bins::PyBins>()?;
    m.add_class::<boosting::PyBooster>()?;
    m.add_function(wrap_pyfunction!(context::context_importances_py, m)?)?;
    m.add_function(wrap_pyfunction!(arrays::rows_crc32, m)?)?;
    m.add_function(wrap_pyfunction!(doorway::_install_counts, m)?)?;
    m.add_function(wrap_pyfunction!(importance::local_mdi, m)?)?;
    m.add_function(wrap_pyfunction!(importance::mdi_oob, m)?)?;
    m.add_function(wrap_pyfunction!(shap::tree_shap, m)?)?;
    mdi::register(m)?;
    permutation::register(m)?;
    quantiles::register(m)?;
    m.add(
        "InvalidParameterError",
        py.get_type::<errors::InvalidParameterError>(),
    )?;
    m.add("DataError", py.get_type::<errors::DataError>())?;
    m.add(
        "ModelFormatError",
        py.get_type::<errors::ModelFormatError>(),
    )?;
    Ok(())
}

/// The guards of the categorical searches from the fits' `category_guards`
/// `(smoothing, min_samples, min_share, max_side, penalty)`; None: the defaults.
pub(crate) fn guards_of(guards: Option<Guards>) -> crate::params::CategoryGuards {
    match guards {
        Some((smoothing, min_samples, min_share, max_side, penalty)) => {
            crate::params::CategoryGuards {
                smoothing,
                min_samples,
                min_share,
                max_side,
                penalty,
            }
        }
        None => crate::params::CategoryGuards::DEFAULT,
    }
}

/// [`guards_of`]'s tuple, as the fits take it from Python.
pub(crate) type Guards = (f64, usize, f64, usize, f64);
