//! Importances read along the decision path of each sample.
//!
//! * **Local MDI** (Sutera et al. 2021): for a sample `x`, every node `t` of `x`'s path that
//!   splits on `X_m` adds `i(t) − i(t_x)`, the impurity of `t` minus that of the child `x`
//!   goes to; averaged over trees. Over the (weighted) training samples of a tree its mean is
//!   `Σ_t p(t) Δi(t)`, the tree's MDI: global MDI is the mean of local MDI. A booster's
//!   trees, grown on negative gradients, are read the same way ([`Booster::local_mdi`]).
//! * **MDI-oob** (Li et al. 2019): along the path of each *out-of-bag* sample, the change of
//!   the node value `v(t_x) − v(t)` times the sample's centred target `y − v(root)`
//!   (one-hot codes for classes). On the in-bag samples this is exactly the Gini (or
//!   variance) MDI; on out-of-bag samples a split that only fitted noise earns nothing on
//!   average, which removes MDI's bias towards high-cardinality features.

use crate::boosting::Booster;
use crate::data::{Feature, Matrix};
use crate::error::{ForestError, Result};
use crate::forest::sampling::in_bag_counts;
use crate::forest::{class_codes, Forest};
use crate::parallel::{chunks_mut, map_ordered};
use crate::tree::Tree;

/// Calls `visit(node, child, feature)` for every split node on the path of row `i`.
#[inline]
fn on_path<T: Feature>(
    tree: &Tree,
    x: &Matrix<'_, T>,
    i: usize,
    mut visit: impl FnMut(usize, usize, usize),
) {
    let mut t = 0;
    while !tree.is_leaf(t) {
        let f = tree.feature(t) as usize;
        let child = tree.next(t, x.get(i, f).to_f64());
        visit(t, child, f);
        t = child;
    }
}

impl Forest {
    /// Local MDI of every row of `x`: `n_rows × n_features`, row-major,
    /// `Imp(X_m; x) = (1/M) Σ_trees Σ_{t ∈ path(x), v(t) = m} [i(t) − i(t_x)]`. For a
    /// multi-output forest `i` is the mean impurity over outputs, as in its MDI.
    pub fn local_mdi<T: Feature>(&self, x: Matrix<'_, T>) -> Result<Vec<f64>> {
        self.check_input(&x)?;
        let scale = 1.0 / self.trees.len() as f64;
        Ok(path_impurity_decreases(
            &self.trees,
            &x,
            self.n_features(),
            scale,
        ))
    }

    /// MDI-oob of every tree (`n_trees` rows of `n_features`) from the training data
    /// `(x, y)` (class codes as `f64` for classification): for tree `T` with out-of-bag rows
    /// `O_T`, `(1/|O_T|) Σ_{i ∈ O_T} Σ_{t ∈ path(x_i), v(t) = m} ⟨v(t_{x_i}) − v(t), y_i − v(root)⟩`.
    /// The row of a tree without out-of-bag samples is NaN; see [`Forest::mdi_oob`].
    pub fn tree_mdi_oob<T: Feature>(&self, x: Matrix<'_, T>, y: &[f64]) -> Result<Vec<Vec<f64>>> {
        self.check_single_output("MDI-oob")?;
        self.check_training(&x, Some(y.len()), "MDI-oob")?;
        let targets = self.target_rows(y)?;
        Ok(map_ordered(self.trees.len(), |k| {
            let counts = in_bag_counts(&self.params, k);
            let oob = counts.iter().enumerate().filter(|(_, &c)| c == 0);
            let rows: Vec<(usize, f64)> = oob.map(|(i, _)| (i, 1.0)).collect();
            if rows.is_empty() {
                return vec![f64::NAN; self.n_features()];
            }
            path_gain(
                &self.trees[k],
                &x,
                &targets,
                self.width(),
                &rows,
                self.n_features(),
            )
        }))
    }

    /// MDI-oob (Li et al. 2019) averaged over the trees that have out-of-bag rows, with the
    /// per-tree values of [`Forest::tree_mdi_oob`].
    pub fn mdi_oob<T: Feature>(
        &self,
        x: Matrix<'_, T>,
        y: &[f64],
    ) -> Result<(Vec<f64>, Vec<Vec<f64>>)> {
        let per_tree = self.tree_mdi_oob(x, y)?;
        let mut acc = vec![0.0; self.n_features()];
        let mut used = 0usize;
        for imp in per_tree
            .iter()
            .filter(|imp| !imp.iter().any(|v| v.is_nan()))
        {
            used += 1;
            acc.iter_mut().zip(imp).for_each(|(a, v)| *a += v);
        }
        if used == 0 {
            return Err(ForestError::Unsupported(
                "no tree has out-of-bag samples: MDI-oob needs bootstrap=True or max_samples < n"
                    .into(),
            ));
        }
        acc.iter_mut().for_each(|a| *a /= used as f64);
        Ok((acc, per_tree))
    }

    /// Targets as rows of `width` values: one-hot class codes, or the regression value.
    fn target_rows(&self, y: &[f64]) -> Result<Vec<f64>> {
        if self.n_classes == 0 {
            if let Some(i) = y.iter().position(|v| !v.is_finite()) {
                return Err(ForestError::InvalidTarget(format!("y[{i}] is not finite")));
            }
            return Ok(y.to_vec());
        }
        let w = self.n_classes;
        let mut rows = vec![0.0; y.len() * w];
        for (i, c) in class_codes(y, w)?.into_iter().enumerate() {
            rows[i * w + c as usize] = 1.0;
        }
        Ok(rows)
    }
}

impl Booster {
    /// Local MDI of every row of `x` for a gradient-boosting model: `n_rows × n_features`,
    /// row-major, `Imp(X_m; x) = (1/M') Σ_trees Σ_{t ∈ path(x), v(t) = m} [i(t) − i(t_x)]`,
    /// `i` the weighted variance of the negative gradients each tree was grown on and `M'`
    /// the number of trees with a split (every class's tree of a round counts), as
    /// [`Booster::feature_importances`] averages before it normalizes. Over a tree's
    /// (weighted) in-bag rows the mean is the tree's MDI, so without subsampling the
    /// weighted mean over the training rows is the unnormalized boosting MDI.
    pub fn local_mdi<T: Feature>(&self, x: Matrix<'_, T>) -> Result<Vec<f64>> {
        if x.n_cols() != self.n_features() {
            return Err(ForestError::Shape(format!(
                "X has {} features, the model was fitted with {}",
                x.n_cols(),
                self.n_features()
            )));
        }
        let split = self.trees().iter().filter(|t| t.len() > 1).count().max(1);
        let scale = 1.0 / split as f64;
        Ok(path_impurity_decreases(
            self.trees(),
            &x,
            self.n_features(),
            scale,
        ))
    }
}

/// `scale · Σ_trees Σ_{t ∈ path(x_i), v(t) = m} [i(t) − i(t_x)]` of every row, `n_rows × p`
/// row-major, in parallel over row chunks; each row sums its trees in order.
fn path_impurity_decreases<T: Feature>(
    trees: &[Tree],
    x: &Matrix<'_, T>,
    p: usize,
    scale: f64,
) -> Vec<f64> {
    let mut out = vec![0.0; x.n_rows() * p];
    if p == 0 {
        return out;
    }
    let rows = crate::forest::row_chunk(x.n_rows());
    // Derived once per tree (not per row chunk): the trees keep leaf statistics only.
    let impurities = map_ordered(trees.len(), |k| trees[k].node_stats().impurity);
    chunks_mut(&mut out, rows * p, |k, chunk| {
        for (tree, imp) in trees.iter().zip(&impurities) {
            for (r, acc) in chunk.chunks_mut(p).enumerate() {
                on_path(tree, x, k * rows + r, |t, c, f| acc[f] += imp[t] - imp[c]);
            }
        }
        chunk.iter_mut().for_each(|a| *a *= scale);
    });
    out
}

/// `Σ_{(i, w_i)} w_i Σ_{t ∈ path(x_i)} ⟨v(t_{x_i}) − v(t), y_i − v(root)⟩ / Σ w_i`, credited to
/// the split feature of `t`. With the in-bag rows weighted by their bootstrap counts (times
/// sample weights) this equals the tree's Gini or variance MDI exactly.
fn path_gain<T: Feature>(
    tree: &Tree,
    x: &Matrix<'_, T>,
    targets: &[f64],
    w: usize,
    rows: &[(usize, f64)],
    p: usize,
) -> Vec<f64> {
    let mut imp = vec![0.0; p];
    let total: f64 = rows.iter().map(|r| r.1).sum();
    if total <= 0.0 {
        return imp;
    }
    let stats = tree.node_stats();
    let root = stats.value(0);
    let mut centred = vec![0.0; w];
    for &(i, wi) in rows {
        for k in 0..w {
            centred[k] = targets[i * w + k] - root[k];
        }
        on_path(tree, x, i, |t, c, f| {
            let (vt, vc) = (stats.value(t), stats.value(c));
            let gain: f64 = (0..w).map(|k| (vc[k] - vt[k]) * centred[k]).sum();
            imp[f] += wi * gain;
        });
    }
    imp.iter_mut().for_each(|v| *v /= total);
    imp
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{Layout, Targets};
    use crate::params::{CriterionKind, ForestParams};
    use crate::rng::TreeRng;

    fn data(n: usize) -> (Vec<f64>, Vec<u32>, Vec<f64>) {
        let mut rng = TreeRng::new(11);
        let x: Vec<f64> = (0..n * 3).map(|_| rng.below(7) as f64).collect();
        let y: Vec<u32> = (0..n)
            .map(|i| u32::from(x[i * 3] + x[i * 3 + 1] > 6.0) + u32::from(x[i * 3] > 4.0))
            .collect();
        let yr: Vec<f64> = (0..n).map(|i| x[i * 3] * 2.0 - x[i * 3 + 2]).collect();
        (x, y, yr)
    }

    #[test]
    fn in_bag_path_gain_is_gini_and_variance_mdi() {
        let (x, y, yr) = data(300);
        let m = Matrix::new(&x, 300, 3, Layout::RowMajor).unwrap();
        for (crit, targets) in [
            (CriterionKind::Gini, Targets::classes(&y, 3).unwrap()),
            (CriterionKind::SquaredError, Targets::Regression(&yr)),
        ] {
            let mut params = ForestParams::random_forest(crit);
            params.n_estimators = 5;
            params.max_features = crate::FeatureCount::Count(2);
            let f = Forest::fit(&params, m, targets, None).unwrap();
            let ys: Vec<f64> = match targets {
                Targets::Regression(v) => v.to_vec(),
                _ => y.iter().map(|&c| f64::from(c)).collect(),
            };
            let rows_y = f.target_rows(&ys).unwrap();
            for (k, tree) in f.trees().iter().enumerate() {
                let counts = in_bag_counts(f.params(), k);
                let rows: Vec<(usize, f64)> = (0..300)
                    .filter(|&i| counts[i] > 0)
                    .map(|i| (i, f64::from(counts[i])))
                    .collect();
                let gain = path_gain(tree, &m, &rows_y, f.width(), &rows, 3);
                for (a, b) in gain.iter().zip(crate::importance::mdi::tree_mdi(tree, 3)) {
                    assert!(
                        (a - b).abs() < 1e-10,
                        "{gain:?} vs {:?}",
                        crate::importance::mdi::tree_mdi(tree, 3)
                    );
                }
            }
        }
    }

    #[test]
    fn mean_local_mdi_over_training_rows_is_mdi() {
        let (x, y, _) = data(200);
        let m = Matrix::new(&x, 200, 3, Layout::ColumnMajor).unwrap();
        let mut params = ForestParams::extra_trees(CriterionKind::Entropy);
        params.n_estimators = 20;
        let f = Forest::fit(&params, m, Targets::classes(&y, 3).unwrap(), None).unwrap();
        let local = f.local_mdi(m).unwrap();
        let global = f.importances(false);
        for j in 0..3 {
            let mean: f64 = (0..200).map(|i| local[i * 3 + j]).sum::<f64>() / 200.0;
            assert!((mean - global[j]).abs() < 1e-12, "{mean} vs {}", global[j]);
        }
    }
}
