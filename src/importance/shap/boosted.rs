//! Path-dependent TreeSHAP of a gradient-boosting model's raw prediction (the decision
//! function), with the forests' walk.
//!
//! The raw prediction of column `k` is `init_k + ν Σ_{t ∈ class k} v_t(x)` (`ν` the
//! learning rate, `v_t` tree `t`'s line-searched leaf values). TreeSHAP is linear in the
//! leaf values, so each tree is explained with its leaves replaced by `ν · v_t` and its
//! values added to its class column; the expected value of column `k` is
//! `init_k + Σ_{t ∈ class k} E_t`, `E_t` the cover-weighted mean of `ν · v_t` over the
//! tree's in-bag training weights. Per row, `Σ_i φ_ik + expected_k = raw_k`.
//!
//! The trees of a round keep their order (`t = round · K + k`), and each row sums them in
//! that order, so the values are the same, bit for bit, for any number of threads.

use std::sync::atomic::AtomicBool;

use super::prepared::ShapTree;
use super::{explain, Shape, TreeShap};
use crate::boosting::Booster;
use crate::data::{Feature, Matrix};
use crate::error::{ForestError, Result};
use crate::parallel::map_ordered;

impl Booster {
    /// Path-dependent TreeSHAP values of the raw prediction of every row of `x`, one
    /// output per raw column (`K` for the multinomial log loss, else 1), and with
    /// `interactions` the SHAP interaction values; see the module docs. `stop` ends the
    /// walks as in [`crate::Forest::tree_shap_until`].
    pub fn tree_shap_until<T: Feature>(
        &self,
        x: Matrix<'_, T>,
        interactions: bool,
        stop: &AtomicBool,
    ) -> Result<TreeShap> {
        if x.n_cols() != self.n_features {
            return Err(ForestError::Shape(format!(
                "X has {} features, the model was fitted with {}",
                x.n_cols(),
                self.n_features
            )));
        }
        let (p, k) = (self.n_features, self.k.max(1));
        let lr = self.params.learning_rate;
        let trees = map_ordered(self.trees.len(), |t| {
            ShapTree::with_leaf_values(&self.trees[t], p, &self.leaf_values[t], lr, t % k)
        })
        .into_iter()
        .collect::<Result<Vec<_>>>()?;
        let mut expected_value = self.init.clone();
        for tree in &trees {
            expected_value[tree.column] += tree.expected[0];
        }
        let shape = Shape { p, width: k };
        let (values, pairs) = explain(&trees, &x, shape, interactions, stop)?;
        Ok(TreeShap {
            values,
            interactions: pairs,
            expected_value,
        })
    }

    /// [`Booster::tree_shap_until`] that runs to the end.
    pub fn tree_shap<T: Feature>(&self, x: Matrix<'_, T>, interactions: bool) -> Result<TreeShap> {
        self.tree_shap_until(x, interactions, &AtomicBool::new(false))
    }
}

#[cfg(test)]
mod tests {
    use crate::boosting::{BoostParams, Booster, Loss};
    use crate::data::{Layout, Matrix};
    use crate::params::{CriterionKind, ForestParams};
    use crate::rng::TreeRng;
    use std::sync::atomic::{AtomicBool, AtomicUsize};

    fn fit(loss: Loss, n_classes: usize, y: &[f64], m: Matrix<'_, f64>) -> Booster {
        let mut tree = ForestParams::random_forest(CriterionKind::SquaredError);
        tree.max_depth = Some(3);
        tree.max_features = crate::FeatureCount::Count(4);
        let params = BoostParams {
            loss,
            learning_rate: 0.3,
            n_estimators: 8,
            subsample: 0.7,
            init_zero: false,
            n_iter_no_change: None,
            tol: 1e-4,
            tree,
        };
        let (stop, done) = (AtomicBool::new(false), AtomicUsize::new(0));
        Booster::fit(
            &params, m, y, n_classes, None, None, None, None, &stop, &done,
        )
        .unwrap()
    }

    /// `Σ_i φ_i + expected = raw` for every row and column (additivity), with and without
    /// interactions, whose rows sum to the values.
    #[test]
    fn values_add_up_to_the_raw_prediction() {
        let n = 150;
        let mut rng = TreeRng::new(3);
        let x: Vec<f64> = (0..n * 4).map(|_| rng.below(1000) as f64 / 100.0).collect();
        let m = Matrix::new(&x, n, 4, Layout::RowMajor).unwrap();
        let yr: Vec<f64> = (0..n)
            .map(|i| x[i * 4] * x[i * 4 + 1] - x[i * 4 + 2])
            .collect();
        let yc: Vec<f64> = (0..n)
            .map(|i| ((x[i * 4] + x[i * 4 + 3]) / 7.0).floor())
            .collect();
        for (loss, c, y) in [(Loss::SquaredError, 0, &yr), (Loss::LogLoss, 3, &yc)] {
            let b = fit(loss, c, y, m);
            let k = b.trees_per_round();
            let raw = b.raw_predict(m, None).unwrap();
            let shap = b.tree_shap(m, true).unwrap();
            let pairs = shap.interactions.unwrap();
            for i in 0..n {
                for col in 0..k {
                    let phi: Vec<f64> =
                        (0..4).map(|f| shap.values[(i * 4 + f) * k + col]).collect();
                    let total = phi.iter().sum::<f64>() + shap.expected_value[col];
                    assert!((total - raw[i * k + col]).abs() < 1e-10, "{total} vs raw");
                    for (f, v) in phi.iter().enumerate() {
                        let row: f64 = (0..4).map(|g| pairs[((i * 4 + f) * 4 + g) * k + col]).sum();
                        assert!((row - v).abs() < 1e-10);
                    }
                }
            }
        }
    }
}
