//! The boosting loop, as scikit-learn's `BaseGradientBoosting._fit_stages` runs it:
//! each round draws its rows (without replacement when `subsample < 1`), computes the
//! negative gradients, grows one regression tree per raw column on them through the
//! forests' engine ([`FitSession::grow_on`]), line-searches every leaf for the loss
//! ([`RoundLoss::leaf_value`]) and adds `learning_rate ×` the leaf values to the raw
//! predictions of every row, in-bag or not.
//!
//! Determinism: round `r` draws its rows from `(seed, r)` (stream `BOOSTING_ROWS`) and its
//! tree for column `j` is tree `r·k + j` of the session (features and split randomness);
//! the work inside a round is elementwise over rows or one task per tree, and every sum
//! runs in row order, so the bytes do not depend on the thread count. A warm start
//! continues the same sequence, so 10 rounds then 15 more are the 25 rounds of one fit.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use super::loss::{initial_raw, weighted_percentile, LeafRows, Loss, NewtonSums, RoundLoss};
use super::params::{adopt_size_rules, tree_params};
use super::{BoostParams, Booster};
use crate::data::{check_weights, Feature, Matrix, Targets};
use crate::error::{invalid, ForestError, Result};
use crate::forest::FitSession;
use crate::parallel::{chunks_mut, keep_awake, map_ordered};
use crate::params::CriterionKind;
use crate::tree::split::SpareBins;
use crate::tree::Tree;

/// Rows held out for early stopping, and their sample weights.
#[derive(Clone, Copy, Debug)]
pub struct Validation<'a, T> {
    /// Features.
    pub x: Matrix<'a, T>,
    /// Targets (class codes for classification).
    pub y: &'a [f64],
    /// Weights.
    pub w: &'a [f64],
    /// Raw predictions of an initial model on these rows, `(n, k)` row-major, added to
    /// the booster's (see [`Booster::fit`]'s `offset`).
    pub offset: Option<&'a [f64]>,
}

/// Checks class codes against `n_classes` (regression targets are checked by the session).
fn check_targets(y: &[f64], n_classes: usize) -> Result<()> {
    if n_classes == 0 {
        return Ok(());
    }
    match y
        .iter()
        .position(|&c| !(c >= 0.0 && c.fract() == 0.0 && (c as usize) < n_classes))
    {
        Some(i) => Err(ForestError::InvalidTarget(format!(
            "y[{i}] = {} is not a class code below {n_classes}",
            y[i]
        ))),
        None => Ok(()),
    }
}

/// The state of a fit between rounds.
struct Run<'s, 'a, T> {
    session: &'s FitSession<'a, T>,
    x: Matrix<'a, T>,
    y: &'a [f64],
    w: Vec<f64>,
    round: RoundLoss,
    /// `(n, k)` row-major raw predictions of the training rows.
    raw: Vec<f64>,
    lr: f64,
    /// The negative gradients' buffer, and the rows (with their weights) of rounds that
    /// take every row, kept from round to round: made afresh, these buffers were faulted
    /// in page by page every round (a fixed cost of small fits, BENCHMARKS.md).
    neg_g: Vec<f64>,
    every_row: Option<(Vec<u32>, Vec<f64>)>,
    /// The trees' node bins buffers, kept from tree to tree for the same reason.
    spare_bins: SpareBins,
}

/// A callback run after round `i` (0-based) with the model of its first `i + 1` rounds;
/// returning true ends the fit there (scikit-learn's `monitor`).
pub type Monitor<'a> = dyn Fn(usize, &Booster) -> bool + Sync + 'a;

/// How a running fit is controlled from outside: `stop` ends it, within the round under
/// way, with [`ForestError::Stopped`] (Ctrl-C), `done` counts the rounds fitted (progress), and
/// `monitor`, when given, may end it after any round with the model so far.
#[derive(Clone, Copy)]
pub struct Control<'a> {
    /// Set from outside to end the fit before its next round.
    pub stop: &'a AtomicBool,
    /// Rounds fitted so far, read from outside.
    pub done: &'a AtomicUsize,
    /// Asked after every round whether to end the fit there.
    pub monitor: Option<&'a Monitor<'a>>,
}

impl Booster {
    /// Fits a booster (or, with `previous`, fits its remaining rounds) on the current pool.
    /// `y` holds values, or class codes when `n_classes > 0`. `offset`, `(n, k)` row-major,
    /// is the raw prediction of an initial model that the rounds start from (scikit-learn's
    /// `init` estimator; `init_zero` must then be set, and predictions add the same
    /// model's raw predictions). `stop` ends the fit within the round under way with
    /// [`ForestError::Stopped`]; `done` counts the rounds fitted.
    #[allow(clippy::too_many_arguments)]
    pub fn fit<T: Feature>(
        params: &BoostParams,
        x: Matrix<'_, T>,
        y: &[f64],
        n_classes: usize,
        sample_weight: Option<&[f64]>,
        offset: Option<&[f64]>,
        validation: Option<Validation<'_, T>>,
        previous: Option<&Booster>,
        stop: &AtomicBool,
        done: &AtomicUsize,
    ) -> Result<Booster> {
        let control = Control {
            stop,
            done,
            monitor: None,
        };
        Self::fit_controlled(
            params,
            x,
            y,
            n_classes,
            sample_weight,
            offset,
            validation,
            previous,
            control,
        )
    }

    /// [`Booster::fit`] with a [`Monitor`] called after every round (scikit-learn's
    /// `monitor`), when `control` has one.
    #[allow(clippy::too_many_arguments)]
    pub fn fit_controlled<T: Feature>(
        params: &BoostParams,
        x: Matrix<'_, T>,
        y: &[f64],
        n_classes: usize,
        sample_weight: Option<&[f64]>,
        offset: Option<&[f64]>,
        validation: Option<Validation<'_, T>>,
        previous: Option<&Booster>,
        control: Control<'_>,
    ) -> Result<Booster> {
        let Control {
            stop,
            done,
            monitor,
        } = control;
        params.check(n_classes)?;
        check_targets(y, n_classes)?;
        let mut tree = params.tree.clone();
        tree.criterion = CriterionKind::SquaredError;
        // A class target's gradients are as discrete as its classes: the chance gain of a
        // categorical set keeps the classes' ordered share (1), not the squared error's
        // 2/π (`Criterion::ORDERED_SHARE`). The trees' parameters keep the penalty as grown
        // (their model bytes hold it with the categorical flags, and only then).
        let categorical = tree.categorical.as_ref().is_some_and(|c| c.contains(&true));
        if params.loss.is_classification() && categorical {
            tree.category_guards.penalty *= std::f64::consts::FRAC_PI_2;
        }
        tree.bootstrap = false;
        tree.max_samples = None;
        tree.balanced_subsample = false;
        tree.n_estimators = 1;
        let session = FitSession::for_booster(&tree, x, y, sample_weight)?;
        // Parameters as the model keeps them: the trees' in canonical form, so that a
        // warm start from a loaded model compares equal values.
        let params = &BoostParams {
            tree: tree_params(session.params(), tree.ccp_alpha),
            ..params.clone()
        };
        let n = x.n_rows();
        let k = match (params.loss, n_classes) {
            (Loss::LogLoss, c) if c > 2 => c,
            _ => 1,
        };
        let w = sample_weight.map_or_else(|| vec![1.0; n], <[f64]>::to_vec);
        if let Some(v) = &validation {
            check_targets(v.y, n_classes)?;
            if v.x.n_cols() != x.n_cols() || v.y.len() != v.x.n_rows() || v.w.len() != v.y.len() {
                return Err(ForestError::Shape("validation rows do not match X".into()));
            }
            check_weights(v.w, "validation sample_weight")?;
            if n_classes == 0 {
                Targets::regression(v.y)?;
            }
        }
        let mut model = match previous {
            Some(prev) => {
                // The number of rounds and the stopping rule of this call may change, and
                // so may the size rules of the new trees (scikit-learn grows its new stages
                // with the new values): nothing of a kept round is read from them again.
                // So may `subsample` while it stays below 1 (each round keeps its own), or at
                // 1; the loss, learning rate, splitter and seed may not.
                let mut same = prev.params.clone();
                same.n_estimators = params.n_estimators;
                same.n_iter_no_change = params.n_iter_no_change;
                same.tol = params.tol;
                if (same.subsample < 1.0) == (params.subsample < 1.0) {
                    same.subsample = params.subsample;
                }
                let mut resolved = prev.resolved.clone();
                adopt_size_rules(
                    &mut same.tree,
                    &mut resolved,
                    &params.tree,
                    session.params(),
                );
                // The rows may be other rows (scikit-learn's warm start): the rounds kept
                // are replayed on this X below, and the new ones fit its residuals.
                resolved.n_samples = session.params().n_samples;
                resolved.n_draws = session.params().n_draws;
                if same != *params
                    || resolved != *session.params()
                    || prev.n_classes != n_classes
                    || prev.n_features != x.n_cols()
                    || prev.n_rounds() > params.n_estimators
                {
                    return Err(invalid(
                        "warm_start",
                        "more rounds need the loss, learning_rate, splitter, seed, classes and \
                         features of the first fit, and a subsample on the same side of 1 \
                         (n_estimators, early stopping and the trees' size rules may change)",
                    ));
                }
                let mut m = prev.clone();
                m.params = params.clone();
                m.resolved = session.params().clone();
                m
            }
            None => Booster {
                params: params.clone(),
                resolved: session.params().clone(),
                n_features: x.n_cols(),
                n_classes,
                k,
                init: match params.init_zero {
                    true => vec![0.0; k],
                    false => initial_raw(params.loss, y, &w, sample_weight.is_some(), n_classes),
                },
                trees: Vec::new(),
                leaf_values: Vec::new(),
                train_score: Vec::new(),
                oob_scores: Vec::new(),
                oob_improvement: Vec::new(),
                round_subsample: Vec::new(),
            },
        };
        let with_offset = |mut raw: Vec<f64>, offset: Option<&[f64]>| match offset {
            None => Ok(raw),
            Some(o) if o.len() == raw.len() && o.iter().all(|v| v.is_finite()) => {
                raw.iter_mut().zip(o).for_each(|(r, v)| *r += v);
                Ok(raw)
            }
            Some(_) => Err(invalid(
                "init",
                "the initial raw predictions must be finite, one per row and tree of a round",
            )),
        };
        if offset.is_some() && !params.init_zero {
            return Err(invalid(
                "init",
                "an offset needs init_zero (no constant on top)",
            ));
        }
        let raw = with_offset(model.raw_predict(x, None)?, offset)?;
        let mut val_raw = match &validation {
            Some(v) => with_offset(model.raw_predict(v.x, None)?, v.offset)?,
            None => Vec::new(),
        };
        let mut run = Run {
            session: &session,
            x,
            y,
            w,
            round: RoundLoss {
                loss: params.loss,
                k,
                delta: 0.0,
            },
            raw,
            lr: params.learning_rate,
            neg_g: Vec::new(),
            every_row: None,
            spare_bins: SpareBins::default(),
        };
        // At n_estimators slots or more the rule can never stop a fit: as many slots give the
        // same rounds, and a huge n_iter_no_change no huge allocation.
        let slots = params
            .n_iter_no_change
            .unwrap_or(0)
            .min(params.n_estimators);
        let mut history = vec![f64::INFINITY; slots];
        for r in model.n_rounds()..params.n_estimators {
            let mask = run.mask(params.subsample, params.tree.seed, r);
            if let Loss::Huber { alpha } = params.loss {
                run.round.delta = run.huber_delta(alpha);
            }
            let factor = run.round.score_factor();
            let initial_oob = match (&mask, r) {
                (Some(m), 0) => {
                    Some(factor * run.round.mean_loss(&run.raw, run.y, &run.w, |i| !m[i]))
                }
                _ => None,
            };
            // A round is short sequential steps between small parallel loops (a node's
            // bins, its children's scans): the pool's other threads wait for them awake.
            let grown = keep_awake(|| run.round_trees(mask.as_deref(), r, stop));
            if stop.load(Ordering::Relaxed) {
                // Set before or during the round: its trees were cut short (every node
                // left a leaf) and are thrown away, as a stopped fit is.
                return Err(ForestError::Stopped);
            }
            for (tree, values) in grown {
                model.trees.push(tree);
                model.leaf_values.push(values);
            }
            model.round_subsample.push(params.subsample);
            if let Some(m) = &mask {
                let train = run.round.mean_loss(&run.raw, run.y, &run.w, |i| m[i]);
                let oob = factor * run.round.mean_loss(&run.raw, run.y, &run.w, |i| !m[i]);
                let before = initial_oob
                    .or(model.oob_scores.last().copied())
                    .unwrap_or(oob);
                model.train_score.push(factor * train);
                model.oob_scores.push(oob);
                model.oob_improvement.push(before - oob);
            } else {
                let train = run.round.mean_loss(&run.raw, run.y, &run.w, |_| true);
                model.train_score.push(factor * train);
            }
            done.fetch_add(1, Ordering::Relaxed);
            // scikit-learn asks the monitor before its early-stopping test.
            if monitor.is_some_and(|m| m(r, &model)) {
                break;
            }
            if let (Some(v), false) = (&validation, history.is_empty()) {
                model.add_round(v.x, r, &mut val_raw);
                let loss = factor * run.round.mean_loss(&val_raw, v.y, v.w, |_| true);
                // scikit-learn's rule: go on while the loss beats one of the last
                // n_iter_no_change losses by more than tol.
                if history.iter().any(|&h| loss + params.tol < h) {
                    let len = history.len();
                    history[r % len] = loss;
                } else {
                    break;
                }
            }
        }
        Ok(model)
    }

    /// Adds round `r`'s trees to the raw predictions `raw` of `x`.
    fn add_round<T: Feature>(&self, x: Matrix<'_, T>, r: usize, raw: &mut [f64]) {
        let (k, lr) = (self.k, self.params.learning_rate);
        let chunk = crate::forest::row_chunk(x.n_rows());
        chunks_mut(raw, chunk * k, |c, out| {
            for (j, row) in out.chunks_mut(k).enumerate() {
                for (col, v) in row.iter_mut().enumerate() {
                    *v += lr * self.tree_value(r * k + col, &x, c * chunk + j);
                }
            }
        });
    }
}

impl<T: Feature> Run<'_, '_, T> {
    /// Round `r`'s in-bag rows: `max(1, ⌊subsample · n⌋)` rows without replacement, or
    /// `None` (every row) when `subsample == 1`.
    fn mask(&self, subsample: f64, seed: u64, r: usize) -> Option<Vec<bool>> {
        super::round_mask(self.y.len(), subsample, seed, r)
    }

    /// Huber's δ of the round: the `alpha` weighted percentile of `|y − F|` over all rows.
    fn huber_delta(&self, alpha: f64) -> f64 {
        let abs: Vec<f64> = self
            .y
            .iter()
            .zip(&self.raw)
            .map(|(y, r)| (y - r).abs())
            .collect();
        weighted_percentile(&abs, &self.w, 100.0 * alpha)
    }

    /// Grows round `r`'s `k` trees (in parallel), line-searches their leaves and updates
    /// the raw predictions of every row. Once `stop` is set the trees end early (every
    /// node left becomes a leaf): the caller then drops the round.
    fn round_trees(
        &mut self,
        mask: Option<&[bool]>,
        r: usize,
        stop: &AtomicBool,
    ) -> Vec<(Tree, Vec<f64>)> {
        let (k, n) = (self.round.k, self.y.len());
        // Negative gradients, column-major (one contiguous column per tree).
        let mut neg_g = std::mem::take(&mut self.neg_g);
        neg_g.resize(n * k, 0.0);
        let chunk = crate::forest::row_chunk(n);
        for j in 0..k {
            let (y, raw, round) = (self.y, &self.raw, self.round);
            chunks_mut(&mut neg_g[j * n..(j + 1) * n], chunk, |c, out| {
                let mut p = vec![0.0; k];
                for (d, g) in out.iter_mut().enumerate() {
                    let i = c * chunk + d;
                    *g = round.neg_gradient(y[i], &raw[i * k..(i + 1) * k], j, &mut p);
                }
            });
        }
        let in_bag = |i: usize| mask.is_none_or(|m| m[i]);
        let w = &self.w;
        let rows = || -> (Vec<u32>, Vec<f64>) {
            (0..n)
                .filter(|&i| in_bag(i) && w[i] > 0.0)
                .map(|i| (i as u32, w[i]))
                .unzip()
        };
        if mask.is_none() && self.every_row.is_none() {
            self.every_row = Some(rows());
        }
        let sampled;
        let (samples, ws) = match (mask, &self.every_row) {
            (None, Some(every)) => (&every.0, &every.1),
            _ => {
                sampled = rows();
                (&sampled.0, &sampled.1)
            }
        };
        let this = &*self;
        let grown = map_ordered(k, |j| {
            let g = &neg_g[j * n..(j + 1) * n];
            let (tree, by_leaf) = this.session.grow_on(
                g,
                samples.clone(),
                ws.clone(),
                r * k + j,
                (&this.spare_bins, stop),
            );
            let slots = this.leaf_slots(&tree, &by_leaf);
            let values = this.leaf_updates(&tree, &slots, g, j, &in_bag);
            (tree, values, slots)
        });
        self.neg_g = neg_g;
        let lr = self.lr;
        let mut out = Vec::with_capacity(k);
        for (j, (tree, values, slots)) in grown.into_iter().enumerate() {
            chunks_mut(&mut self.raw, chunk * k, |c, rows| {
                for (d, row) in rows.chunks_mut(k).enumerate() {
                    row[j] += lr * values[slots[c * chunk + d] as usize];
                }
            });
            out.push((tree, values));
        }
        out
    }

    /// The leaf slot each training row reaches: read from `by_leaf`, the rows the tree
    /// was grown on in its leaves' order ([`Tree::leaves_in_order`]); the other rows (out
    /// of the round's sample, or of weight 0) walk the tree.
    fn leaf_slots(&self, tree: &Tree, by_leaf: &[u32]) -> Vec<u32> {
        let n = self.y.len();
        let mut slots = vec![u32::MAX; n];
        // (Leaf counts that did not cover the rows exactly would leave every row to walk.)
        let counted: usize = tree.leaves_in_order().map(|(_, count)| count).sum();
        debug_assert_eq!(counted, by_leaf.len());
        if counted == by_leaf.len() {
            let mut rest = by_leaf;
            for (slot, count) in tree.leaves_in_order() {
                let (rows, tail) = rest.split_at(count);
                for &i in rows {
                    slots[i as usize] = slot as u32;
                }
                rest = tail;
            }
            if by_leaf.len() == n {
                return slots;
            }
        }
        let chunk = crate::forest::row_chunk(n);
        chunks_mut(&mut slots, chunk, |c, out| {
            for (d, s) in out.iter_mut().enumerate().filter(|(_, s)| **s == u32::MAX) {
                *s = tree.leaf_slot(tree.leaf(&self.x, c * chunk + d)) as u32;
            }
        });
        slots
    }

    /// The line-searched value of every leaf of `tree` (column `j`), from its in-bag rows
    /// in row order: one pass of sums for a Newton step, else the rows grouped by leaf.
    fn leaf_updates(
        &self,
        tree: &Tree,
        slots: &[u32],
        g: &[f64],
        j: usize,
        in_bag: &(impl Fn(usize) -> bool + Sync),
    ) -> Vec<f64> {
        let (k, n_leaves) = (self.round.k, tree.n_leaves());
        if self.round.loss == Loss::SquaredError {
            return (0..n_leaves).map(|s| tree.slot_value(s)[0]).collect();
        }
        if self.round.is_newton() {
            let mut sums = vec![NewtonSums::default(); n_leaves];
            for (i, &s) in slots.iter().enumerate().filter(|&(i, _)| in_bag(i)) {
                let sums = &mut sums[s as usize];
                self.round.add_newton(sums, self.y[i], g[i], self.w[i], j);
            }
            return sums.iter().map(|s| self.round.newton_value(s)).collect();
        }
        // Rows grouped by leaf, in row order within a leaf (a counting sort).
        let mut start = vec![0usize; n_leaves + 1];
        for (i, &s) in slots.iter().enumerate() {
            if in_bag(i) {
                start[s as usize + 1] += 1;
            }
        }
        for s in 0..n_leaves {
            start[s + 1] += start[s];
        }
        let mut next = start.clone();
        let m = start[n_leaves];
        let (mut y, mut ng, mut raw, mut w) =
            (vec![0.0; m], vec![0.0; m], vec![0.0; m], vec![0.0; m]);
        for (i, &s) in slots.iter().enumerate().filter(|&(i, _)| in_bag(i)) {
            let at = next[s as usize];
            next[s as usize] += 1;
            (y[at], ng[at], raw[at], w[at]) = (self.y[i], g[i], self.raw[i * k + j], self.w[i]);
        }
        map_ordered(n_leaves, |s| {
            let r = start[s]..start[s + 1];
            if r.is_empty() {
                return 0.0;
            }
            let rows = LeafRows {
                y: &y[r.clone()],
                neg_g: &ng[r.clone()],
                raw: &raw[r.clone()],
                w: &w[r],
            };
            self.round.leaf_value(&rows, j, tree.slot_value(s)[0])
        })
    }
}
