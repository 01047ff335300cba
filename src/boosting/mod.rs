//! Gradient boosting (Friedman 2001) on the forests' tree engine, with scikit-learn's
//! `GradientBoostingRegressor` / `GradientBoostingClassifier` semantics.
//!
//! Module map: `loss` (initial constants, negative gradients, terminal-region updates and
//! loss values), `fit` (the boosting loop: each round's rows, trees grown by
//! [`crate::forest::FitSession`] on the negative gradients, leaf updates, early stopping),
//! `bytes` (the versioned model format of a booster: `FIMB` bytes around the forest format of
//! its trees).
//!
//! A [`Booster`] keeps each tree exactly as it was grown (leaf values = mean negative
//! gradient, leaf impurities), so that its MDI is scikit-learn's, and the line-searched leaf
//! values apart, in `leaf_values`: the raw prediction of a row is
//! `init + learning_rate · Σ_t leaf_values[t][leaf_t(row)]`, summed in tree order.

#[cfg(feature = "serde")]
mod bytes;
mod fit;
mod loss;
mod params;
#[cfg(test)]
mod tests;

pub use fit::{Control, Monitor, Validation};
pub use loss::Loss;
pub(crate) use loss::{weighted_percentile, RoundLoss};
pub use params::BoostParams;

use crate::data::{Feature, Matrix};
use crate::error::{ForestError, Result};
use crate::parallel::chunks_mut;
use crate::params::Resolved;
use crate::rng::{stream, tree_seed, TreeRng};
use crate::tree::Tree;

/// Round `r`'s in-bag rows of `n`: `max(1, ⌊subsample · n⌋)` rows drawn without
/// replacement from `(seed, r)` (stream `BOOSTING_ROWS`), or `None` (every row) when
/// `subsample == 1`. The fit draws them here, and the out-of-bag importance regenerates
/// them here, so both read the same rows.
pub(crate) fn round_mask(n: usize, subsample: f64, seed: u64, r: usize) -> Option<Vec<bool>> {
    if subsample >= 1.0 {
        return None;
    }
    let m = ((subsample * n as f64) as usize).max(1);
    let mut rows: Vec<u32> = (0..n as u32).collect();
    TreeRng::new(tree_seed(seed, r as u64, stream::BOOSTING_ROWS)).partial_shuffle(&mut rows, m);
    let mut mask = vec![false; n];
    for &i in &rows[..m.min(n)] {
        mask[i as usize] = true;
    }
    Some(mask)
}

/// A fitted gradient-boosting model: `k` trees per round, in round-major order.
#[derive(Clone, Debug, PartialEq)]
pub struct Booster {
    pub(crate) params: BoostParams,
    /// The trees' resolved parameters (shape of the training data included).
    pub(crate) resolved: Resolved,
    pub(crate) n_features: usize,
    /// Number of classes; 0 for regression.
    pub(crate) n_classes: usize,
    /// Trees per round (K for multinomial log loss, else 1).
    pub(crate) k: usize,
    /// The initial raw prediction of each of the `k` columns.
    pub(crate) init: Vec<f64>,
    pub(crate) trees: Vec<Tree>,
    /// Per tree, the line-searched value of each leaf slot.
    pub(crate) leaf_values: Vec<Vec<f64>>,
    /// Loss after each round on the round's rows (all rows without subsampling).
    pub(crate) train_score: Vec<f64>,
    /// Loss after each round on the round's out-of-bag rows (`subsample < 1`).
    pub(crate) oob_scores: Vec<f64>,
    /// Decrease of the out-of-bag loss at each round.
    pub(crate) oob_improvement: Vec<f64>,
    /// The `subsample` each round drew its rows with (a warm start may change it), so that
    /// the out-of-bag importance draws every round's rows again as the fit drew them.
    pub(crate) round_subsample: Vec<f64>,
}

impl Booster {
    /// The parameters the model was fitted with.
    pub fn params(&self) -> &BoostParams {
        &self.params
    }

    /// Number of rounds fitted.
    pub fn n_rounds(&self) -> usize {
        self.trees.len() / self.k.max(1)
    }

    /// Trees per round.
    pub fn trees_per_round(&self) -> usize {
        self.k
    }

    /// Number of input features.
    pub fn n_features(&self) -> usize {
        self.n_features
    }

    /// Number of classes (0 for regression).
    pub fn n_classes(&self) -> usize {
        self.n_classes
    }

    /// The trees, round-major (`k` per round), with the values they were grown with.
    pub fn trees(&self) -> &[Tree] {
        &self.trees
    }

    /// The line-searched leaf values of tree `t`, by leaf slot.
    pub fn leaf_values(&self, t: usize) -> &[f64] {
        &self.leaf_values[t]
    }

    /// The initial raw prediction of each column.
    pub fn init(&self) -> &[f64] {
        &self.init
    }

    /// Training loss after each round.
    pub fn train_score(&self) -> &[f64] {
        &self.train_score
    }

    /// Out-of-bag loss after each round (empty without subsampling).
    pub fn oob_scores(&self) -> &[f64] {
        &self.oob_scores
    }

    /// Out-of-bag improvement of each round (empty without subsampling).
    pub fn oob_improvement(&self) -> &[f64] {
        &self.oob_improvement
    }

    fn check_x<T: Feature>(&self, x: &Matrix<'_, T>) -> Result<()> {
        if x.n_cols() != self.n_features {
            return Err(ForestError::Shape(format!(
                "X has {} features, the model was fitted with {}",
                x.n_cols(),
                self.n_features
            )));
        }
        Ok(())
    }

    /// The value tree `t` adds (before the learning rate) for row `i`.
    #[inline]
    fn tree_value<T: Feature>(&self, t: usize, x: &Matrix<'_, T>, i: usize) -> f64 {
        let tree = &self.trees[t];
        self.leaf_values[t][tree.leaf_slot(tree.leaf(x, i))]
    }

    /// Raw predictions `(n_rows, k)`, row-major, of the first `rounds` rounds (all of them
    /// when `None`), in parallel over row chunks; each row sums its trees in order.
    pub fn raw_predict<T: Feature>(
        &self,
        x: Matrix<'_, T>,
        rounds: Option<usize>,
    ) -> Result<Vec<f64>> {
        self.check_x(&x)?;
        let k = self.k;
        let rounds = rounds.unwrap_or(self.n_rounds()).min(self.n_rounds());
        let n = x.n_rows();
        let mut raw = vec![0.0; n * k];
        let chunk = crate::forest::row_chunk(n);
        let lr = self.params.learning_rate;
        chunks_mut(&mut raw, chunk * k, |c, out| {
            for (r, row) in out.chunks_mut(k).enumerate() {
                let i = c * chunk + r;
                row.copy_from_slice(&self.init);
                for round in 0..rounds {
                    for (j, v) in row.iter_mut().enumerate() {
                        *v += lr * self.tree_value(round * k + j, &x, i);
                    }
                }
            }
        });
        Ok(raw)
    }

    /// What rounds `start..stop` add, `(stop − start, n_rows, k)` row-major, learning rate
    /// included: the staged predictions are the running sums of these on top of `init`.
    pub fn round_contributions<T: Feature>(
        &self,
        x: Matrix<'_, T>,
        start: usize,
        stop: usize,
    ) -> Result<Vec<f64>> {
        self.check_x(&x)?;
        let (k, n) = (self.k, x.n_rows());
        let stop = stop.min(self.n_rounds());
        let start = start.min(stop);
        let lr = self.params.learning_rate;
        let mut out = vec![0.0; (stop - start) * n * k];
        chunks_mut(&mut out, (n * k).max(1), |s, block| {
            let round = start + s;
            for (i, row) in block.chunks_mut(k).enumerate() {
                for (j, v) in row.iter_mut().enumerate() {
                    *v = lr * self.tree_value(round * k + j, &x, i);
                }
            }
        });
        Ok(out)
    }

    /// The leaf (node id) each row reaches in each tree, `(n_rows, n_trees)` row-major.
    pub fn apply<T: Feature>(&self, x: Matrix<'_, T>) -> Result<Vec<u32>> {
        self.check_x(&x)?;
        let t = self.trees.len();
        let n = x.n_rows();
        let mut out = vec![0u32; n * t];
        let chunk = crate::forest::row_chunk(n);
        chunks_mut(&mut out, (chunk * t).max(1), |c, block| {
            for (r, row) in block.chunks_mut(t.max(1)).enumerate() {
                for (leaf, tree) in row.iter_mut().zip(&self.trees) {
                    *leaf = tree.leaf(&x, c * chunk + r) as u32;
                }
            }
        });
        Ok(out)
    }

    /// The unnormalized MDI of each tree, `(n_trees, n_features)`:
    /// `Σ_t (w_t i(t) − w_l i(l) − w_r i(r)) / w_root` over the split nodes of the tree,
    /// the squared-error impurity of the negative gradients it was grown on
    /// (scikit-learn's `compute_feature_importances(normalize=False)`).
    pub fn tree_importances(&self) -> Vec<f64> {
        let p = self.n_features;
        let mut out = vec![0.0; self.trees.len() * p];
        for (tree, imp) in self.trees.iter().zip(out.chunks_mut(p.max(1))) {
            let s = tree.node_stats();
            let root = s.weight.first().copied().unwrap_or(0.0);
            for t in 0..tree.len() {
                if let Some((l, r)) = tree.children(t) {
                    imp[tree.feature(t) as usize] += s.weight[t] * s.impurity[t]
                        - s.weight[l] * s.impurity[l]
                        - s.weight[r] * s.impurity[r];
                }
            }
            if root > 0.0 {
                imp.iter_mut().for_each(|v| *v /= root);
            }
        }
        out
    }

    /// Per tree and feature, `(n_trees, 3, n_features)` row-major: the total gain
    /// `Σ (w_t i(t) − w_l i(l) − w_r i(r))` of the nodes split on the feature (unnormalized
    /// MDI, in units of weight × squared gradient), their number, and the sum of their
    /// weights `Σ w_t` (cover). Each of the three sums over a tree's nodes.
    pub fn split_stats(&self) -> Vec<f64> {
        let p = self.n_features;
        let mut out = vec![0.0; self.trees.len() * 3 * p];
        for (tree, rows) in self.trees.iter().zip(out.chunks_mut((3 * p).max(1))) {
            let s = tree.node_stats();
            let (gain, rest) = rows.split_at_mut(p);
            let (count, cover) = rest.split_at_mut(p);
            for t in 0..tree.len() {
                if let Some((l, r)) = tree.children(t) {
                    let j = tree.feature(t) as usize;
                    gain[j] += s.weight[t] * s.impurity[t]
                        - s.weight[l] * s.impurity[l]
                        - s.weight[r] * s.impurity[r];
                    count[j] += 1.0;
                    cover[j] += s.weight[t];
                }
            }
        }
        out
    }

    /// scikit-learn's `feature_importances_` for boosting: the mean of the trees' MDI
    /// ([`Booster::tree_importances`]) over the trees with a split, normalized to sum to 1
    /// (all zeros when no tree splits). Every tree counts once, whatever its round, class
    /// or the learning rate, which scales leaf values but not the splits' gains.
    pub fn feature_importances(&self) -> Vec<f64> {
        let p = self.n_features;
        let per_tree = self.tree_importances();
        let mut sum = vec![0.0; p];
        let mut relevant = 0usize;
        for (tree, imp) in self.trees.iter().zip(per_tree.chunks(p.max(1))) {
            if tree.len() > 1 {
                relevant += 1;
                sum.iter_mut().zip(imp).for_each(|(s, v)| *s += v);
            }
        }
        if relevant == 0 {
            return sum;
        }
        sum.iter_mut().for_each(|s| *s /= relevant as f64);
        let total: f64 = sum.iter().sum();
        if total > 0.0 {
            sum.iter_mut().for_each(|s| *s /= total);
        }
        sum
    }
}
