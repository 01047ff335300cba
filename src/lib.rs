//! # forestimp
//!
//! Randomized tree ensembles — Random Forests, Extra-Trees, totally randomized trees,
//! Bagging, Pasting, Random Subspace and Random Patches — and the variable importances
//! derived from them (Louppe 2014; Louppe, Wehenkel, Sutera & Geurts 2013).
//!
//! The crate has no Python dependency unless the `python` feature is enabled (it builds the
//! `forestimp._core` extension module). Inputs are borrowed, never copied.
//!
//! ```
//! use forestimp::{CriterionKind, Forest, ForestParams, Layout, Matrix, Targets};
//!
//! // Two features; y = x0 > 2, so the first feature carries all the information.
//! let n = 150; // every (x0, x1) pair equally often: x1 is exactly irrelevant
//! let x: Vec<f64> = (0..n).flat_map(|i| [(i % 5) as f64, ((i * 7) % 3) as f64]).collect();
//! let y: Vec<u32> = (0..n).map(|i| u32::from(i % 5 > 2)).collect();
//! let x = Matrix::new(&x, n, 2, Layout::RowMajor).unwrap();
//!
//! let mut params = ForestParams::totally_randomized(CriterionKind::Entropy);
//! params.n_estimators = 50;
//! params.seed = 42;
//! let forest = Forest::fit(&params, x, Targets::classes(&y, 2).unwrap(), None).unwrap();
//!
//! // Raw MDI is in bits and sums to the mutual information I(X; Y) = H(Y) here.
//! let imp = forest.importances(false);
//! assert!(imp[0] > 0.9 && imp[1].abs() < 1e-12);
//! ```
//!
//! Module map: [`data`] (input views), [`params`], [`tree`] (node arrays and the one routing
//! rule, criteria, the one candidate-draw loop and its candidate sources in `tree::split`,
//! builder), [`forest`] (sampling, fitting, OOB), [`importance`] (every importance, as
//! methods of [`Forest`]), [`boosting`] (gradient boosting on the same trees: losses, the
//! boosting loop, [`Booster`]), [`rng`] (the generator and its streams), [`parallel`],
//! `persist` (model bytes), `alloc` (the Python module's allocator).

pub mod boosting;
pub mod data;
pub mod error;
pub mod forest;
pub mod importance;
pub mod parallel;
pub mod params;
#[cfg(feature = "serde")]
pub mod persist;
pub mod rng;
pub mod tree;

#[cfg(feature = "python")]
mod python;
// The extension module's allocator; the unit tests install it too.
#[cfg(all(target_os = "linux", any(test, feature = "python")))]
mod alloc;

pub use boosting::{BoostParams, Booster, Loss};
pub use data::{Feature, Layout, Matrix, Shadows, Targets};
pub use error::{ForestError, Result};
pub use forest::{class_codes, FitSession, Forest};
pub use params::{
    CategoryGuards, CriterionKind, FeatureCount, ForestParams, Resolved, SampleCount, SplitterKind,
};
pub use tree::Tree;
