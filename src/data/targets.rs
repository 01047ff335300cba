//! Training targets: class codes for classification, real values for regression, one
//! column of them or several (multi-output, Louppe 2014 §3.7: one tree for all outputs).

use crate::error::{ForestError, Result};

/// Checks sample weights (`what` names them in the error): finite, non-negative, not all
/// zero.
pub fn check_weights(w: &[f64], what: &str) -> Result<()> {
    if let Some(i) = w.iter().position(|v| !(v.is_finite() && *v >= 0.0)) {
        return Err(ForestError::InvalidTarget(format!(
            "{what}[{i}] = {} is not a finite non-negative number",
            w[i]
        )));
    }
    if !w.iter().any(|&v| v > 0.0) {
        return Err(ForestError::InvalidTarget(format!(
            "{what}: the weights are all zero"
        )));
    }
    Ok(())
}

/// Checks that the sums the criteria form over the learning set stay finite, for targets
/// and weights (`None`: unit weights) each checked already: the total weight and its
/// square (class proportions are squared and divided), and for real targets `Σ w|y|`, its
/// square and `Σ w y²` (the variance proxies). Values each finite but whose sums overflow
/// made every split or prediction wrong, silently; dividing `y` or the weights by a
/// constant keeps their meaning.
pub fn check_sums(targets: &Targets<'_>, w: Option<&[f64]>) -> Result<()> {
    let weight = |i: usize| w.map_or(1.0, |w| w[i]);
    let total: f64 = (0..targets.len()).map(weight).sum();
    if !(total * total).is_finite() {
        return Err(ForestError::InvalidTarget(
            "sample_weight sums past the largest float64 (once squared): divide the weights \
             by a constant"
                .into(),
        ));
    }
    let values = match *targets {
        Targets::Regression(y) => Some((y, 1)),
        Targets::MultiRegression { y, n_outputs } => Some((y, n_outputs)),
        _ => None,
    };
    if let Some((y, m)) = values {
        let (mut abs, mut squares) = (0.0, 0.0);
        for (k, v) in y.iter().enumerate() {
            let wi = weight(k / m);
            abs += wi * v.abs();
            squares += wi * v * v;
        }
        if !(abs * abs).is_finite() || !squares.is_finite() {
            return Err(ForestError::InvalidTarget(
                "the weighted sums of y and of its squares pass the largest float64: divide \
                 y (or sample_weight) by a constant"
                    .into(),
            ));
        }
    }
    Ok(())
}

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
    /// Several class-coded outputs: `y` is `n × m` row-major, output `k` of row `i` at
    /// `y[i·m + k]`, a code in `0..n_classes[k]` (`m = n_classes.len() ≥ 1`).
    #[non_exhaustive]
    MultiClasses {
        /// `n × m` class codes, row-major.
        y: &'a [u32],
        /// Number of classes of every output.
        n_classes: &'a [usize],
    },
    /// Several real-valued outputs: `y` is `n × n_outputs` row-major.
    #[non_exhaustive]
    MultiRegression {
        /// `n × n_outputs` values, row-major.
        y: &'a [f64],
        /// Number of outputs (at least 1).
        n_outputs: usize,
    },
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

    /// Checked multi-output classification targets: `y` is `n × n_classes.len()`
    /// row-major, every code of output `k` below `n_classes[k]`.
    pub fn multi_classes(y: &'a [u32], n_classes: &'a [usize]) -> Result<Self> {
        let m = n_classes.len();
        if m == 0 || n_classes.contains(&0) {
            return Err(ForestError::InvalidTarget(
                "every output needs at least 1 class (and there must be an output)".into(),
            ));
        }
        if y.len() % m != 0 {
            return Err(ForestError::Shape(format!(
                "{} class codes are not rows of {m} outputs",
                y.len()
            )));
        }
        for (j, &c) in y.iter().enumerate() {
            if c as usize >= n_classes[j % m] {
                return Err(ForestError::InvalidTarget(format!(
                    "class code {c} of output {} is not below n_classes = {}",
                    j % m,
                    n_classes[j % m]
                )));
            }
        }
        Ok(Targets::MultiClasses { y, n_classes })
    }

    /// Checked multi-output regression targets: `y` is `n × n_outputs` row-major, finite.
    pub fn multi_regression(y: &'a [f64], n_outputs: usize) -> Result<Self> {
        if n_outputs == 0 || y.len() % n_outputs != 0 {
            return Err(ForestError::Shape(format!(
                "{} values are not rows of {n_outputs} outputs",
                y.len()
            )));
        }
        if let Some(j) = y.iter().position(|v| !v.is_finite()) {
            return Err(ForestError::NonFinite {
                what: "y",
                row: j / n_outputs,
                col: j % n_outputs,
            });
        }
        Ok(Targets::MultiRegression { y, n_outputs })
    }

    /// Number of samples.
    pub fn len(&self) -> usize {
        match self {
            Targets::Classes { y, .. } => y.len(),
            Targets::Regression(y) => y.len(),
            Targets::MultiClasses { y, n_classes } => y.len() / n_classes.len().max(1),
            Targets::MultiRegression { y, n_outputs } => y.len() / (*n_outputs).max(1),
        }
    }

    /// Whether the targets are class codes (one output or several).
    pub fn is_classification(&self) -> bool {
        matches!(self, Targets::Classes { .. } | Targets::MultiClasses { .. })
    }

    /// The values each output takes in a node's value, for the multi-output variants (the
    /// class counts, or 1 per regression output); empty for a single output, whose trees
    /// and model bytes are those of a forest that knows no outputs.
    pub fn outputs(&self) -> Vec<usize> {
        match self {
            Targets::Classes { .. } | Targets::Regression(_) => Vec::new(),
            Targets::MultiClasses { n_classes, .. } => n_classes.to_vec(),
            Targets::MultiRegression { n_outputs, .. } => vec![1; *n_outputs],
        }
    }

    /// Whether there are no samples.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of values a node stores: the class count, or 1 for regression; for several
    /// outputs, the sum over outputs (`Σ_k C_k`, or the number of outputs).
    pub fn width(&self) -> usize {
        match self {
            Targets::Classes { n_classes, .. } => *n_classes,
            Targets::Regression(_) => 1,
            Targets::MultiClasses { n_classes, .. } => n_classes.iter().sum(),
            Targets::MultiRegression { n_outputs, .. } => *n_outputs,
        }
    }
}
