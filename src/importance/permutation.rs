//! Permutation importance (mean decrease of accuracy, MDA): Breiman's out-of-bag version,
//! the forest's predictions on held-out data with one column permuted, and casewise
//! (per-sample) importances.
//!
//! No copy of X is ever made: a permuted column is a permuted *row index* read at the
//! nodes that split on the feature ([`super::walk`]), and trees that never split on a
//! feature are skipped (their loss is unchanged). Every permutation comes from its own RNG
//! stream, a function of `(seed, tree, feature, repeat)` only ([`permutation_indices`]),
//! and per-tree results are combined in tree order, so results are identical for any
//! number of threads.

use super::walk::{leaves_with_values, path_deltas, used_features, NodeLoss};
use crate::data::{Feature, Matrix, Targets};
use crate::error::{invalid, ForestError, Result};
use crate::forest::sampling::in_bag_counts;
use crate::forest::{row_chunk, sum_by_halves, Forest};
use crate::parallel::{chunks_mut, map_ordered};
use crate::rng::{stream, tree_seed, TreeRng};
use std::sync::atomic::{AtomicBool, Ordering};

/// Trees whose sparse casewise deltas are held at once (bounds memory, not the result).
const TREE_WAVE: usize = 32;

/// Permutation `π` of `0..n` number `repeat` of feature `feature`: of tree `tree`'s OOB
/// rows when `tree` is `Some` (`π[k]` indexes the OOB rows in increasing order; `tree` is
/// the index in the seed's sequence, `first_tree` + position, so that a part of a forest
/// permutes as the whole forest does), of all rows
/// of a held-out set otherwise. A uniform Fisher–Yates shuffle from a generator seeded by
/// `(seed, tree, feature, repeat)` alone.
pub fn permutation_indices(
    seed: u64,
    n: usize,
    feature: usize,
    repeat: usize,
    tree: Option<usize>,
) -> Vec<u32> {
    shuffled((0..n as u32).collect(), seed, feature, repeat, tree)
}

/// `items` shuffled by the permutation of [`permutation_indices`]: the result is
/// `items[π[k]]` (Fisher–Yates swaps positions whatever they hold).
fn shuffled(
    mut items: Vec<u32>,
    seed: u64,
    feature: usize,
    repeat: usize,
    tree: Option<usize>,
) -> Vec<u32> {
    let key = (feature as u64) << 32 | repeat as u64;
    let s = match tree {
        Some(t) => {
            const OOB: u64 = stream::OOB_PERMUTATIONS;
            tree_seed(tree_seed(seed, t as u64, OOB), key, OOB)
        }
        None => tree_seed(seed, key, stream::HELD_OUT_PERMUTATIONS),
    };
    let n = items.len();
    TreeRng::new(s).partial_shuffle(&mut items, n);
    items
}

/// Out-of-bag rows of tree `tree`, in increasing order.
pub fn oob_rows(forest: &Forest, tree: usize) -> Vec<u32> {
    let counts = in_bag_counts(&forest.params, tree);
    (0..counts.len() as u32)
        .filter(|&i| counts[i as usize] == 0)
        .collect()
}

/// Breiman's OOB permutation importance, per tree.
#[derive(Clone, Debug, PartialEq)]
pub struct OobPermutation {
    /// `n_repeats × n_trees × n_features`, row-major: `err_t(π_{t,m,r}) − err_t` (see
    /// [`Forest::oob_permutation_importance`]).
    pub per_tree: Vec<f64>,
    /// `err_t`: each tree's loss on its own OOB rows (NaN without OOB rows).
    pub oob_error: Vec<f64>,
    /// Number of OOB rows of each tree.
    pub n_oob: Vec<usize>,
}

fn check_targets<T: Feature>(
    forest: &Forest,
    x: &Matrix<'_, T>,
    targets: &Targets<'_>,
) -> Result<()> {
    forest.check_input(x)?;
    if targets.len() != x.n_rows() {
        return Err(ForestError::Shape(format!(
            "X has {} rows but y has {}",
            x.n_rows(),
            targets.len()
        )));
    }
    forest.check_single_output("the engine's permutation importance")?;
    let ok = match targets {
        Targets::Classes { n_classes, .. } => *n_classes == forest.n_classes(),
        Targets::Regression(_) => forest.n_classes() == 0,
        // One target column per walk (NodeLoss): multi-output targets are refused here.
        Targets::MultiClasses { .. } | Targets::MultiRegression { .. } => {
            return Err(ForestError::Unsupported(
                "the engine's permutation importance reads one target column; score each \
                 output apart"
                    .into(),
            ))
        }
    };
    if !ok {
        return Err(ForestError::InvalidTarget(
            "y must be class codes of the forest's classes for a classifier, real values for a regressor".into(),
        ));
    }
    Ok(())
}

/// Substitute rows of `rows` for every feature `tree` splits on, for repeat `repeat`:
/// `subst[f][k] = rows[π[k]]`; features the tree never uses get no permutation.
fn substitutes(
    used: &[bool],
    rows: &[u32],
    seed: u64,
    tree: Option<usize>,
    repeat: usize,
) -> Vec<Vec<u32>> {
    used.iter()
        .enumerate()
        .map(|(f, &u)| {
            if !u {
                return Vec::new();
            }
            shuffled(rows.to_vec(), seed, f, repeat, tree)
        })
        .collect()
}

impl Forest {
    /// Breiman's (2001) out-of-bag permutation importance, per tree. For tree `t` with OOB
    /// rows `O_t` and feature `m`:
    /// `VI_{r,t}(m) = err_t(x_m permuted by π_{t,m,r} among O_t) − err_t`, where
    /// `err_t` is the mean over `O_t` of the tree's 0/1 loss (majority class of its leaf) or
    /// squared error (unweighted). `VI_{r,t}(m) = 0` exactly when the tree never splits on `m`
    /// or has no OOB row. `x` and `targets` must be the training set.
    pub fn oob_permutation_importance<T: Feature>(
        &self,
        x: Matrix<'_, T>,
        targets: Targets<'_>,
        n_repeats: usize,
        seed: u64,
    ) -> Result<OobPermutation> {
        let never = AtomicBool::new(false);
        self.oob_permutation_importance_until(x, targets, n_repeats, seed, &never)
    }

    /// [`Forest::oob_permutation_importance`] of output `output` of a multi-output forest:
    /// each tree's loss on that output alone (its leaf values and `targets`, that output's
    /// column), as for the single-output forest of the same trees.
    pub fn oob_permutation_importance_of_output<T: Feature>(
        &self,
        x: Matrix<'_, T>,
        targets: Targets<'_>,
        output: usize,
        n_repeats: usize,
        seed: u64,
        stop: &AtomicBool,
    ) -> Result<OobPermutation> {
        let one = self.output_values(output)?;
        one.oob_permutation_importance_until(x, targets, n_repeats, seed, stop)
    }

    /// [`Forest::oob_permutation_importance`] that another thread can stop: once `stop` is
    /// set no tree starts, and the result is [`ForestError::Stopped`].
    pub fn oob_permutation_importance_until<T: Feature>(
        &self,
        x: Matrix<'_, T>,
        targets: Targets<'_>,
        n_repeats: usize,
        seed: u64,
        stop: &AtomicBool,
    ) -> Result<OobPermutation> {
        self.check_training(&x, Some(targets.len()), "out-of-bag permutation importance")?;
        check_targets(self, &x, &targets)?;
        if n_repeats == 0 {
            return Err(invalid("n_repeats", "must be at least 1, got 0"));
        }
        let p = self.n_features();
        let results = map_ordered(self.trees.len(), |t| {
            let tree = &self.trees[t];
            let mut imp = vec![0.0; n_repeats * p];
            if stop.load(Ordering::Relaxed) {
                return (imp, f64::NAN, 0);
            }
            let rows = oob_rows(self, t);
            if rows.is_empty() {
                return (imp, f64::NAN, 0);
            }
            let loss = NodeLoss::new(tree, targets);
            let used = used_features(tree, p);
            let n = rows.len() as f64;
            let mut base = 0.0;
            for (r, sums) in imp.chunks_mut(p).enumerate() {
                let subst = substitutes(&used, &rows, seed, Some(self.params.first_tree + t), r);
                base = path_deltas(tree, &x, &rows, &subst, &loss, |f, _, d| sums[f] += d);
                sums.iter_mut().for_each(|s| *s /= n);
            }
            (imp, base / n, rows.len())
        });
        if stop.load(Ordering::Relaxed) {
            return Err(ForestError::Stopped);
        }
        let m = self.trees.len();
        let mut out = OobPermutation {
            per_tree: vec![0.0; n_repeats * m * p],
            oob_error: Vec::with_capacity(m),
            n_oob: Vec::with_capacity(m),
        };
        for (t, (imp, err, n)) in results.into_iter().enumerate() {
            for (r, sums) in imp.chunks(p).enumerate() {
                let at = (r * m + t) * p;
                out.per_tree[at..at + p].copy_from_slice(sums);
            }
            out.oob_error.push(err);
            out.n_oob.push(n);
        }
        Ok(out)
    }

    /// The forest's predictions on `x` with column `feature` permuted, for each repeat
    /// `r < n_repeats` (permutation `permutation_indices(seed, n, feature, r, None)`):
    /// `n_repeats × n_rows × width`, row-major. Equal bit for bit to [`Forest::predict`] on
    /// a permuted copy of `x`: each row sums its trees in the order of [`Forest::predict`], and
    /// a tree that never splits on `feature` is walked without substitution.
    pub fn permuted_predictions<T: Feature>(
        &self,
        x: Matrix<'_, T>,
        feature: usize,
        n_repeats: usize,
        seed: u64,
    ) -> Result<Vec<f64>> {
        self.permuted_predictions_of(x, feature, 0..n_repeats, seed)
    }

    /// [`Forest::permuted_predictions`] for the repeats `repeats` only (the same values as
    /// those rows of the whole): a caller that must stay interruptible asks for a few
    /// repeats at a time.
    pub fn permuted_predictions_of<T: Feature>(
        &self,
        x: Matrix<'_, T>,
        feature: usize,
        repeats: std::ops::Range<usize>,
        seed: u64,
    ) -> Result<Vec<f64>> {
        self.check_input(&x)?;
        let n_repeats = repeats.len();
        if n_repeats == 0 {
            return Err(invalid("n_repeats", "must be at least 1, got 0"));
        }
        if feature >= self.n_features() {
            return Err(invalid(
                "feature",
                format!("{feature} is not below n_features = {}", self.n_features()),
            ));
        }
        let (n, w) = (x.n_rows(), self.width());
        let uses: Vec<bool> = self
            .trees
            .iter()
            .map(|t| used_features(t, self.n_features())[feature])
            .collect();
        let scale = 1.0 / self.trees.len() as f64;
        let mut out = vec![0.0; n_repeats * n * w];
        if n == 0 {
            return Ok(out);
        }
        let perms: Vec<Vec<u32>> = repeats
            .map(|r| permutation_indices(seed, n, feature, r, None))
            .collect();
        // Row-major over (row, repeat) so each parallel task owns whole rows; transposed
        // to repeat-major at the end.
        let rw = n_repeats * w;
        let mut by_row = vec![0.0; n * rw];
        let rows = row_chunk(n);
        chunks_mut(&mut by_row, rows * rw, |k, chunk| {
            let first = k * rows;
            let add_tree = |t: usize, chunk: &mut [f64]| {
                let tree = &self.trees[t];
                let mut values = vec![0.0; n_repeats];
                let mut leaves = vec![0usize; n_repeats];
                let mut chain = Vec::new();
                for (q, acc) in chunk.chunks_mut(rw).enumerate() {
                    let i = first + q;
                    if uses[t] {
                        for (v, perm) in values.iter_mut().zip(&perms) {
                            *v = x.get(perm[i] as usize, feature).to_f64();
                        }
                        leaves_with_values(tree, &x, i, feature, &values, &mut leaves, &mut chain);
                    } else {
                        leaves.fill(tree.leaf(&x, i));
                    }
                    for (a, &leaf) in acc.chunks_mut(w).zip(&leaves) {
                        for (a, v) in a.iter_mut().zip(tree.value(leaf)) {
                            *a += v;
                        }
                    }
                }
            };
            // The trees in the order of `Forest::predict`, so that the sums match its bits.
            sum_by_halves(0..self.trees.len(), chunk, &|_| false, &add_tree);
            chunk.iter_mut().for_each(|a| *a *= scale);
        });
        for (i, row) in by_row.chunks(rw).enumerate() {
            for (r, vals) in row.chunks(w).enumerate() {
                out[(r * n + i) * w..(r * n + i + 1) * w].copy_from_slice(vals);
            }
        }
        Ok(out)
    }

    /// Casewise permutation importance (ranger's `local.importance`), `n_rows × n_features`
    /// row-major: `C[i, m] = (1/|T_i|) Σ_{t ∈ T_i} [L_t(i, x_m permuted) − L_t(i)]`, with
    /// `L_t` the tree's 0/1 loss or squared error. OOB mode (`oob`, `x` the training set):
    /// `T_i` = the trees for which `i` is out of bag, permutations those of
    /// [`Forest::oob_permutation_importance`] (repeat 0), NaN for a row in every bag.
    /// Held-out mode: `T_i` = all trees, one permutation of all rows per feature (repeat 0
    /// of [`Forest::permuted_predictions`]).
    pub fn local_permutation_importance<T: Feature>(
        &self,
        x: Matrix<'_, T>,
        targets: Targets<'_>,
        oob: bool,
        seed: u64,
    ) -> Result<Vec<f64>> {
        if oob {
            let what = "out-of-bag local permutation importance";
            self.check_training(&x, Some(targets.len()), what)?;
        }
        check_targets(self, &x, &targets)?;
        let (n, p) = (x.n_rows(), self.n_features());
        let all: Vec<u32> = (0..n as u32).collect();
        let shared: Vec<Vec<u32>> = if oob {
            Vec::new()
        } else {
            (0..p)
                .map(|f| permutation_indices(seed, n, f, 0, None))
                .collect()
        };
        let mut acc = vec![0.0; n * p];
        let mut n_trees = vec![0u32; n];
        let mut start = 0;
        while start < self.trees.len() {
            let end = (start + TREE_WAVE).min(self.trees.len());
            let wave = map_ordered(end - start, |q| {
                let t = start + q;
                let tree = &self.trees[t];
                let rows = if oob { oob_rows(self, t) } else { all.clone() };
                let loss = NodeLoss::new(tree, targets);
                let mut deltas: Vec<(u32, u32, f64)> = Vec::new();
                let mut emit = |f: usize, k: usize, d: f64| {
                    if d != 0.0 {
                        deltas.push((rows[k], f as u32, d));
                    }
                };
                if oob {
                    let used = used_features(tree, p);
                    let subst =
                        substitutes(&used, &rows, seed, Some(self.params.first_tree + t), 0);
                    path_deltas(tree, &x, &rows, &subst, &loss, &mut emit);
                } else {
                    path_deltas(tree, &x, &rows, &shared, &loss, &mut emit);
                }
                (rows, deltas)
            });
            for (rows, deltas) in wave {
                for &i in &rows {
                    n_trees[i as usize] += 1;
                }
                for (i, f, d) in deltas {
                    acc[i as usize * p + f as usize] += d;
                }
            }
            start = end;
        }
        for (row, &c) in acc.chunks_mut(p.max(1)).zip(&n_trees) {
            row.iter_mut().for_each(|a| {
                *a = if c > 0 { *a / f64::from(c) } else { f64::NAN };
            });
        }
        Ok(acc)
    }
}
