//! Ensembles of randomized trees: one engine for Random Forests, Extra-Trees, totally
//! randomized trees, Bagging, Pasting, Random Subspace and Random Patches.
//!
//! Module map: `sampling` (rows and features of each tree), `fit` (growing), `parts` (the
//! trees `a..b` of a forest grown apart, and put together), `oob` (out-of-bag estimates),
//! `tree_sums` (every row down every tree). Prediction averages
//! the trees' leaf values (soft voting), every row summing its trees in one fixed order,
//! so results do not depend on the thread count.

mod class_weight;
pub mod fit;
pub mod leaf_values;
pub mod oob;
pub mod parts;
pub mod sampling;
mod target_checks;
mod tree_sums;
pub(crate) use tree_sums::sum_by_halves;

use crate::data::{Feature, Matrix, Targets};
use crate::error::{ForestError, Result};
use crate::parallel::chunks_mut;
use crate::params::{ForestParams, Resolved};
use crate::tree::Tree;

pub use fit::FitSession;

/// Rows per parallel task of a row-by-row walk, large enough that each tree is walked by
/// many rows while its nodes are in cache, small enough to give every thread a few tasks.
pub(crate) fn row_chunk(n_rows: usize) -> usize {
    (n_rows / (4 * crate::parallel::current_threads())).clamp(64, 4096)
}

/// A fitted ensemble of binary trees.
#[derive(Clone, Debug, PartialEq)]
pub struct Forest {
    pub(crate) params: Resolved,
    /// Number of classes; 0 for regression. Multi-output classification: the total
    /// `Σ_k C_k` (still 0 for regression, so that it tells the task).
    pub(crate) n_classes: usize,
    /// Multi-output forests: the values of each output in a prediction row (class counts,
    /// or 1 per regression output); empty for one output.
    pub(crate) outputs: Vec<usize>,
    pub(crate) trees: Vec<Tree>,
}

impl Forest {
    /// Fits a forest on the current thread pool (see [`crate::parallel::install`]).
    ///
    /// ```
    /// use forestimp::{CriterionKind, Forest, ForestParams, Layout, Matrix, Targets};
    /// let x = [0.0f32, 1.0, 2.0, 3.0, 4.0, 5.0];
    /// let y = [0u32, 0, 0, 1, 1, 1];
    /// let mut params = ForestParams::random_forest(CriterionKind::Gini);
    /// params.n_estimators = 10;
    /// let x = Matrix::new(&x, 6, 1, Layout::ColumnMajor).unwrap();
    /// let forest = Forest::fit(&params, x, Targets::classes(&y, 2).unwrap(), None).unwrap();
    /// let proba = forest.predict(x).unwrap();
    /// assert!(proba[0] > 0.5 && proba[11] > 0.5);
    /// ```
    pub fn fit<T: Feature>(
        params: &ForestParams,
        x: Matrix<'_, T>,
        targets: Targets<'_>,
        sample_weight: Option<&[f64]>,
    ) -> Result<Forest> {
        let session = FitSession::new(params, x, targets, sample_weight)?;
        let trees = session.fit_range(0..session.params().n_estimators);
        session.finish(trees)
    }

    /// The trees, in index order.
    pub fn trees(&self) -> &[Tree] {
        &self.trees
    }

    /// The parameters the forest was grown with.
    pub fn params(&self) -> &Resolved {
        &self.params
    }

    /// Number of input features.
    pub fn n_features(&self) -> usize {
        self.params.n_features
    }

    /// Number of classes (0 for regression).
    pub fn n_classes(&self) -> usize {
        self.n_classes
    }

    /// Values per prediction row: the number of classes, or 1; for several outputs, the
    /// sum of their widths (`Σ_k C_k`, or the number of outputs).
    pub fn width(&self) -> usize {
        match self.outputs.is_empty() {
            true => self.n_classes.max(1),
            false => self.outputs.iter().sum(),
        }
    }

    /// Number of outputs (1 unless the forest was fitted on several).
    pub fn n_outputs(&self) -> usize {
        self.outputs.len().max(1)
    }

    /// The values of each output in a prediction row (class counts, or 1 per regression
    /// output), in order; empty for a single-output forest.
    pub fn outputs(&self) -> &[usize] {
        &self.outputs
    }

    /// The single-output forest of output `k` of a multi-output forest, for the measures
    /// that read leaf values only (out-of-bag permutation importance, MDI-oob): the same
    /// trees, each
    /// leaf value cut to output `k`'s ([`Tree::output_values`]; regression impurities are
    /// not output `k`'s, so impurity measures must not read it).
    pub(crate) fn output_values(&self, k: usize) -> Result<Forest> {
        let Some(&width) = self.outputs.get(k) else {
            return Err(crate::error::invalid(
                "output",
                format!("{k} is not below n_outputs = {}", self.n_outputs()),
            ));
        };
        let start: usize = self.outputs[..k].iter().sum();
        Ok(Forest {
            params: self.params.clone(),
            n_classes: if self.n_classes > 0 { width } else { 0 },
            outputs: Vec::new(),
            trees: (self.trees.iter())
                .map(|t| t.output_values(start, width))
                .collect(),
        })
    }

    /// Fails with [`ForestError::Unsupported`] on a multi-output forest: for the measures
    /// that read one target column (`what` names the measure).
    pub fn check_single_output(&self, what: &str) -> Result<()> {
        if self.outputs.is_empty() {
            return Ok(());
        }
        Err(ForestError::Unsupported(format!(
            "{what} does not support multi-output forests yet ({} outputs); fit one forest \
             per output (docs/multi-output.md lists the measures that take several)",
            self.outputs.len()
        )))
    }

    /// Checks the shape of `x` and refuses infinities; returns whether it holds NaN.
    pub(crate) fn check_input<T: Feature>(&self, x: &Matrix<'_, T>) -> Result<bool> {
        if x.n_cols() != self.n_features() {
            return Err(ForestError::Shape(format!(
                "X has {} features, but the forest was fitted with {}",
                x.n_cols(),
                self.n_features()
            )));
        }
        // NaN is a missing value, routed by each node; infinities are refused.
        x.missing_columns().map(|m| m.is_some())
    }

    /// Mean of the trees' leaf values for every row: `n_rows × width`, row-major.
    /// Class probabilities for classification (soft voting), the mean for regression.
    pub fn predict<T: Feature>(&self, x: Matrix<'_, T>) -> Result<Vec<f64>> {
        let nan = self.check_input(&x)?;
        let w = self.width();
        let mut out = vec![0.0; x.n_rows() * w];
        let add = |acc: &mut [f64], t: usize, slot| {
            let value = self.trees[t].slot_value(slot);
            acc.iter_mut().zip(value).for_each(|(a, v)| *a += v);
        };
        self.sum_over_trees(&x, nan, &mut out, w, &|_, _| true, &add);
        let scale = 1.0 / self.trees.len() as f64;
        out.iter_mut().for_each(|a| *a *= scale);
        Ok(out)
    }

    /// Leaf reached in every tree: `n_rows × n_trees`, row-major.
    pub fn apply<T: Feature>(&self, x: Matrix<'_, T>) -> Result<Vec<u32>> {
        self.check_input(&x)?;
        let m = self.trees.len();
        let mut out = vec![0u32; x.n_rows() * m];
        let mut leaves = vec![0u32; m * x.n_rows()]; // tree-major, then transposed
        chunks_mut(&mut leaves, x.n_rows(), |t, col| {
            self.trees[t].leaves(&x, 0, col)
        });
        for (t, col) in leaves.chunks(x.n_rows()).enumerate() {
            for (i, &leaf) in col.iter().enumerate() {
                out[i * m + t] = leaf;
            }
        }
        Ok(out)
    }

    /// Each tree's prediction of every row: `n_rows × n_trees × width`, row-major (the
    /// per-tree values that jackknife and infinitesimal-jackknife estimates read).
    pub fn tree_predictions<T: Feature>(&self, x: Matrix<'_, T>) -> Result<Vec<f64>> {
        let leaves = self.apply(x)?;
        let m = self.trees.len().max(1);
        let mut out = Vec::with_capacity(leaves.len() * self.width());
        for row in leaves.chunks(m) {
            for (tree, &leaf) in self.trees.iter().zip(row) {
                out.extend(tree.slot_value(tree.leaf_slot(leaf as usize)));
            }
        }
        Ok(out)
    }

    /// The nodes each row of `x` traverses, as CSR over rows with the trees' nodes stacked
    /// (scikit-learn's `decision_path`): `(indptr, indices, node offsets of the trees)`.
    pub fn decision_paths<T: Feature>(
        &self,
        x: Matrix<'_, T>,
    ) -> Result<(Vec<i64>, Vec<i64>, Vec<i64>)> {
        self.check_input(&x)?;
        let mut offsets = vec![0i64];
        for t in &self.trees {
            offsets.push(offsets[offsets.len() - 1] + t.len() as i64);
        }
        let rows = row_chunk(x.n_rows());
        let chunks = crate::parallel::map_ordered(x.n_rows().div_ceil(rows), |k| {
            let (mut ends, mut nodes, mut path) = (Vec::new(), Vec::new(), Vec::new());
            for i in k * rows..((k + 1) * rows).min(x.n_rows()) {
                for (tree, offset) in self.trees.iter().zip(&offsets) {
                    path.clear();
                    tree.path(&x, i, &mut path);
                    nodes.extend(path.iter().map(|&node| offset + node as i64));
                }
                ends.push(nodes.len() as i64);
            }
            (ends, nodes)
        });
        let mut indptr = vec![0i64];
        let mut indices = Vec::new();
        for (ends, nodes) in chunks {
            let base = indices.len() as i64;
            indptr.extend(ends.iter().map(|e| base + e));
            indices.extend(nodes);
        }
        Ok((indptr, indices, offsets))
    }
}

/// Checked classification targets from `f64` class codes (the form arrays arrive in from
/// dynamic languages): each value must be an integer in `0..n_classes`.
pub fn class_codes(y: &[f64], n_classes: usize) -> Result<Vec<u32>> {
    y.iter()
        .enumerate()
        .map(|(i, &v)| {
            if v.fract() == 0.0 && v >= 0.0 && v < n_classes as f64 {
                Ok(v as u32)
            } else {
                Err(ForestError::InvalidTarget(format!(
                    "y[{i}] = {v} is not a class code in 0..{n_classes}"
                )))
            }
        })
        .collect()
}
