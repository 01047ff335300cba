//! Training targets: class codes for classification, real values for regression.

use crate::error::{ForestError, Result};

/// The target column of a learning set.
///
/// Built only through [`Targets::classes`] and [`Targets::regression`] (the variants are
/// `non_exhaustive`, so no other crate can write one directly): every class code is then
/// below `n_classes`, which the engine relies on when it indexes by class.
///
/// ```compile_fail
/// // Out-of-range codes cannot be smuggled past the check.
/// let t = forestimp::Targets::Classes { y: &[5], n_classes: 2 };
/// ```
#[derive(Clone, Copy, Debug)]
pub enum Targets<'a> {
    /// Class codes in `0..n_classes`.
    #[non_exhaustive]
    Classes {
        /// One code per sample.
        y: &'a [u32],
        /// Number of classes (codes never reach it).
        n_classes: usize,
    },
    /// Real-valued outputs.
    #[non_exhaustive]
    Regression(&'a [f64]),
}

impl<'a> Targets<'a> {
    /// Checked classification targets.
    pub fn classes(y: &'a [u32], n_classes: usize) -> Result<Self> {
        if n_classes == 0 {
            return Err(ForestError::InvalidTarget(
                "n_classes must be at least 1".into(),
            ));
        }
        if let Some(&bad) = y.iter().find(|&&c| c as usize >= n_classes) {
            return Err(ForestError::InvalidTarget(format!(
                "class code {bad} is not below n_classes = {n_classes}"
            )));
        }
        Ok(Targets::Classes { y, n_classes })
    }

    /// Checked regression targets (finite values only).
    pub fn regression(y: &'a [f64]) -> Result<Self> {
        if let Some(row) = y.iter().position(|v| !v.is_finite()) {
            return Err(ForestError::NonFinite {
                what: "y",
                row,
                col: 0,
            });
        }
        Ok(Targets::Regression(y))
    }

    /// Number of samples.
    pub fn len(&self) -> usize {
        match self {
            Targets::Classes { y, .. } => y.len(),
            Targets::Regression(y) => y.len(),
        }
    }

    /// Whether there are no samples.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of values a node stores: the class count, or 1 for regression.
    pub fn width(&self) -> usize {
        match self {
            Targets::Classes { n_classes, .. } => *n_classes,
            Targets::Regression(_) => 1,
        }
    }
}
