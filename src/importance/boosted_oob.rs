//! Out-of-bag permutation importance of a gradient-boosting model fitted with
//! `subsample < 1`: how much of each round's out-of-bag improvement needs each feature.
//!
//! **Definition.** Round `t` draws its in-bag rows (regenerated from the seed by
//! [`crate::boosting::round_mask`], as the fit drew them); `O_t` are the others. With
//! `F_{t−1}` the raw prediction before the round (initial model included), `ν` the
//! learning rate and `v_t` the round's trees (K for the multinomial loss),
//!
//! ```text
//! L_t        = L(y_O, F_{t−1}(x_O) + ν v_t(x_O))                 (= oob_scores_[t])
//! L_t^π(m)   = L(y_O, F_{t−1}(x_O) + ν v_t(x_O with column m permuted by π among O_t))
//! VI_t(m)    = L_t^π(m) − L_t
//! ```
//!
//! `L` is the fit's loss as `oob_scores_` reports it: the `sample_weight`-weighted mean
//! over `O_t` (scikit-learn's factor of 2 for the squared error and binomial deviance,
//! Huber's δ of the round). Only round `t`'s trees read the permuted column; the earlier
//! rounds' prediction is left as fitted, so `VI_t(m)` is the part of the round's
//! out-of-bag improvement `oob_improvement_[t] = L_{t−1}^{oob} − L_t` lost without feature
//! `m`, measured on rows the round's trees never saw. A round whose trees do not split on
//! `m` gives exactly 0.
//!
//! **Check.** `L_t` must equal the `oob_scores_[t]` recorded at fit (up to rounding):
//! otherwise `X`, `y` or the weights are not the training data, and the result is an error.
//!
//! **Determinism.** Permutation `π_{t,m,r}` is the forests' out-of-bag permutation of
//! `(seed, t, m, r)` ([`super::permutation::permutation_indices`]); rounds run in order,
//! features in parallel, each sum in row order: the same numbers for any thread count.

use std::sync::atomic::{AtomicBool, Ordering};

use super::permutation::permutation_indices;
use super::walk::{leaf_with, used_features};
use crate::boosting::{round_mask, weighted_percentile, Booster, Loss, RoundLoss};
use crate::data::{Feature, Matrix};
use crate::error::{invalid, ForestError, Result};
use crate::parallel::{chunks_mut, map_ordered};

/// Relative tolerance of the check of the recomputed out-of-bag losses against the fit's.
const SAME_LOSS: f64 = 1e-9;

/// Out-of-bag permutation importance of a booster, per round.
#[derive(Clone, Debug, PartialEq)]
pub struct BoostedOob {
    /// `n_repeats × n_rounds × n_features`, row-major: `VI_{r,t}(m)`.
    pub per_round: Vec<f64>,
    /// `L_t`, each round's out-of-bag loss (the fit's `oob_scores_`).
    pub oob_loss: Vec<f64>,
    /// `|O_t|`, each round's number of out-of-bag rows.
    pub n_oob: Vec<usize>,
}

impl Booster {
    /// The out-of-bag permutation importance of every round (see the module docs) from the
    /// training data: `y` values or class codes, the fit's `sample_weight`, and `offset`
    /// (`(n, K)` row-major) the initial estimator's raw predictions when the model has one.
    /// Refused ([`ForestError::Unsupported`]) without subsampling. `stop` ends it between
    /// rounds with [`ForestError::Stopped`].
    #[allow(clippy::too_many_arguments)]
    pub fn oob_permutation_importance_until<T: Feature>(
        &self,
        x: Matrix<'_, T>,
        y: &[f64],
        sample_weight: Option<&[f64]>,
        offset: Option<&[f64]>,
        n_repeats: usize,
        seed: u64,
        stop: &AtomicBool,
    ) -> Result<BoostedOob> {
        let (n, p, k) = (x.n_rows(), self.n_features, self.k.max(1));
        self.check_oob_input(&x, y, sample_weight, offset, n_repeats)?;
        let w = sample_weight.map_or_else(|| vec![1.0; n], <[f64]>::to_vec);
        let mut raw: Vec<f64> = (0..n * k).map(|j| self.init[j % k]).collect();
        if let Some(o) = offset {
            raw.iter_mut().zip(o).for_each(|(r, o)| *r += o);
        }
        let rounds = self.n_rounds();
        let mut out = BoostedOob {
            per_round: vec![0.0; n_repeats * rounds * p],
            oob_loss: Vec::with_capacity(rounds),
            n_oob: Vec::with_capacity(rounds),
        };
        let lr = self.params.learning_rate;
        let mut round = RoundLoss {
            loss: self.params.loss,
            k,
            delta: 0.0,
        };
        let mut step = vec![0.0; n * k];
        for t in 0..rounds {
            if stop.load(Ordering::Relaxed) {
                return Err(ForestError::Stopped);
            }
            let Some(mask) = round_mask(n, self.round_subsample[t], self.params.tree.seed, t)
            else {
                return Err(ForestError::Internal(
                    "a subsampled round drew no mask".into(),
                ));
            };
            let oob: Vec<u32> = (0..n as u32).filter(|&i| !mask[i as usize]).collect();
            if let Loss::Huber { alpha } = round.loss {
                let abs: Vec<f64> = y.iter().zip(&raw).map(|(y, r)| (y - r).abs()).collect();
                round.delta = weighted_percentile(&abs, &w, 100.0 * alpha);
            }
            // `ν v_t(x_i)` of every row: the round's step, as the fit adds it.
            let trees = t * k..(t + 1) * k;
            let chunk = crate::forest::row_chunk(n);
            chunks_mut(&mut step, chunk * k, |c, block| {
                for (r, row) in block.chunks_mut(k).enumerate() {
                    for (v, tree) in row.iter_mut().zip(trees.clone()) {
                        *v = lr * self.leaf_output(tree, &x, c * chunk + r);
                    }
                }
            });
            let factor = round.score_factor();
            let loss_of = |rows: &mut dyn FnMut(usize, &mut [f64])| {
                let (mut s, mut sw, mut buf, mut probs) = (0.0, 0.0, vec![0.0; k], vec![0.0; k]);
                for (q, &i) in oob.iter().enumerate() {
                    let i = i as usize;
                    rows(q, &mut buf);
                    buf.iter_mut()
                        .zip(&raw[i * k..(i + 1) * k])
                        .for_each(|(b, r)| *b += r);
                    s += w[i] * round.loss(y[i], &buf, &mut probs);
                    sw += w[i];
                }
                factor * s / sw
            };
            let base = loss_of(&mut |q, buf| {
                let i = oob[q] as usize;
                buf.copy_from_slice(&step[i * k..(i + 1) * k]);
            });
            let recorded = self.oob_scores.get(t).copied().unwrap_or(f64::NAN);
            // False for a NaN on either side, which is no match either.
            let same = (base - recorded).abs() <= SAME_LOSS * recorded.abs().max(1.0);
            if !same {
                return Err(ForestError::InvalidTarget(format!(
                    "round {t}'s out-of-bag loss is {base} on these rows but {recorded} at \
                     fit: X, y and sample_weight must be the training data (and init's \
                     predictions of it)"
                )));
            }
            let used: Vec<bool> = trees.clone().fold(vec![false; p], |mut u, tree| {
                let v = used_features(&self.trees[tree], p);
                u.iter_mut().zip(v).for_each(|(a, b)| *a |= b);
                u
            });
            let per_feature = map_ordered(p * n_repeats, |job| {
                let (m, rep) = (job / n_repeats, job % n_repeats);
                if !used[m] || oob.is_empty() {
                    return 0.0;
                }
                let pi = permutation_indices(seed, oob.len(), m, rep, Some(t));
                loss_of(&mut |q, buf| {
                    let (i, j) = (oob[q] as usize, oob[pi[q] as usize] as usize);
                    for (v, tree) in buf.iter_mut().zip(trees.clone()) {
                        let node = leaf_with(&self.trees[tree], &x, i, m, j);
                        let slot = self.trees[tree].leaf_slot(node);
                        *v = lr * self.leaf_values[tree][slot];
                    }
                }) - base
            });
            for (job, vi) in per_feature.into_iter().enumerate() {
                let (m, rep) = (job / n_repeats, job % n_repeats);
                out.per_round[(rep * rounds + t) * p + m] = vi;
            }
            out.oob_loss.push(base);
            out.n_oob.push(oob.len());
            raw.iter_mut().zip(&step).for_each(|(r, s)| *r += s);
        }
        Ok(out)
    }

    /// The line-searched value that tree `t` gives row `i` (before the learning rate).
    fn leaf_output<T: Feature>(&self, t: usize, x: &Matrix<'_, T>, i: usize) -> f64 {
        let tree = &self.trees[t];
        self.leaf_values[t][tree.leaf_slot(tree.leaf(x, i))]
    }

    fn check_oob_input<T: Feature>(
        &self,
        x: &Matrix<'_, T>,
        y: &[f64],
        sample_weight: Option<&[f64]>,
        offset: Option<&[f64]>,
        n_repeats: usize,
    ) -> Result<()> {
        if self.round_subsample.iter().any(|&s| s >= 1.0) {
            return Err(ForestError::Unsupported(
                "out-of-bag permutation importance needs subsample < 1: every round of this \
                 model read every row"
                    .into(),
            ));
        }
        if n_repeats == 0 {
            return Err(invalid("n_repeats", "must be at least 1, got 0"));
        }
        let (n, k) = (x.n_rows(), self.k.max(1));
        if x.n_cols() != self.n_features
            || y.len() != n
            || sample_weight.is_some_and(|w| w.len() != n)
            || offset.is_some_and(|o| o.len() != n * k)
        {
            return Err(ForestError::Shape(format!(
                "X must have {} features and y, sample_weight and the initial predictions \
                 one entry per row of X",
                self.n_features
            )));
        }
        let bad_class = |c: f64| !(c >= 0.0 && c.fract() == 0.0 && (c as usize) < self.n_classes);
        let bad = match self.n_classes {
            0 => y.iter().position(|v| !v.is_finite()),
            _ => y.iter().position(|&c| bad_class(c)),
        };
        if let Some(i) = bad {
            return Err(ForestError::InvalidTarget(format!(
                "y[{i}] = {} is not a target of the model",
                y[i]
            )));
        }
        let finite = |v: &[f64]| v.iter().all(|v| v.is_finite());
        if !sample_weight.is_none_or(finite) || !offset.is_none_or(finite) {
            return Err(ForestError::InvalidTarget(
                "sample_weight and the initial predictions must be finite".into(),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::boosting::{BoostParams, Booster, Loss};
    use crate::data::{Layout, Matrix};
    use crate::error::ForestError;
    use crate::params::{CriterionKind, ForestParams};
    use crate::rng::TreeRng;
    use std::sync::atomic::{AtomicBool, AtomicUsize};

    fn fit(x: Matrix<'_, f64>, y: &[f64], subsample: f64) -> Booster {
        let mut tree = ForestParams::random_forest(CriterionKind::SquaredError);
        tree.max_depth = Some(3);
        tree.max_features = crate::FeatureCount::Count(3);
        let params = BoostParams {
            loss: Loss::Huber { alpha: 0.8 },
            learning_rate: 0.2,
            n_estimators: 6,
            subsample,
            init_zero: false,
            n_iter_no_change: None,
            tol: 1e-4,
            tree,
        };
        let (stop, done) = (AtomicBool::new(false), AtomicUsize::new(0));
        Booster::fit(&params, x, y, 0, None, None, None, None, &stop, &done).unwrap()
    }

    /// The recomputed out-of-bag losses are the fit's, a constant feature earns exactly 0,
    /// and the refusals are typed.
    #[test]
    fn reproduces_the_fit_and_refuses_what_it_cannot_measure() {
        let n = 120;
        let mut rng = TreeRng::new(5);
        let mut x: Vec<f64> = (0..n * 3).map(|_| rng.below(1000) as f64 / 100.0).collect();
        (0..n).for_each(|i| x[i * 3 + 2] = 1.0);
        let m = Matrix::new(&x, n, 3, Layout::RowMajor).unwrap();
        let y: Vec<f64> = (0..n).map(|i| x[i * 3] * x[i * 3] - x[i * 3 + 1]).collect();
        let never = AtomicBool::new(false);
        let b = fit(m, &y, 0.6);
        let res = b
            .oob_permutation_importance_until(m, &y, None, None, 2, 9, &never)
            .unwrap();
        assert_eq!(res.oob_loss, b.oob_scores());
        assert!(res.n_oob.iter().all(|&k| k == n - 72));
        assert!(res.per_round.chunks(3).all(|vi| vi[2] == 0.0));
        let mean0: f64 = res.per_round.chunks(3).map(|vi| vi[0]).sum::<f64>();
        assert!(mean0 > 0.0, "the strongest feature matters out of bag");
        let shifted: Vec<f64> = y.iter().map(|v| v + 1.0).collect();
        let other = b.oob_permutation_importance_until(m, &shifted, None, None, 1, 9, &never);
        assert!(matches!(other, Err(ForestError::InvalidTarget(_))));
        let full = fit(m, &y, 1.0);
        let refused = full.oob_permutation_importance_until(m, &y, None, None, 1, 9, &never);
        assert!(matches!(refused, Err(ForestError::Unsupported(_))));
    }
}
