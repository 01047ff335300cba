//! Path-dependent TreeSHAP (Lundberg et al. 2018, 2020) and SHAP interaction values of a
//! forest's output: class probabilities (one value per class) or the regression mean.
//!
//! **What is computed.** For a tree, a row `x` and a leaf `ℓ` whose path meets the `d`
//! distinct features `U_ℓ`, let `z_j` be the product of the cover fractions
//! `w(child) / w(parent)` of feature `j`'s edges on the path (training weights, bootstrap
//! counts included) and `o_j = 1` when `x` takes all of them, else 0. Path-dependent
//! TreeSHAP credits feature `i ∈ U_ℓ` with
//!
//! ```text
//! φ_i += v_ℓ (o_i − z_i) Σ_{S ⊆ U_ℓ∖i} |S|! (d−|S|−1)! / d! · Π_{j∈S} o_j · Π_{j∈U_ℓ∖S∖i} z_j
//!      = v_ℓ (o_i − z_i) ∫₀¹ Π_{j∈U_ℓ∖i} (o_j u + (1 − u) z_j) du,
//! ```
//!
//! since `s! (d−1−s)! / d! = ∫₀¹ u^s (1−u)^(d−1−s) du`. The integrand is a polynomial of
//! degree `d − 1`, which the `⌈d/2⌉`-point Gauss–Legendre rule integrates exactly
//! (`quadrature`). So instead of Algorithm 2's EXTEND/UNWIND of the unique path, which costs
//! `O(D²)` per leaf, one walk per row and tree carries the product at the rule's points and
//! visits each node once (`walk`): `O(nodes · ⌈D/2⌉)`. This is the idea of Linear TreeShap
//! (Yu, Bifet, Read & Weiss, 2022). The values are the same as shap's up to rounding; the
//! tests compare them with `shap.TreeExplainer`.
//!
//! **Interactions** follow shap (Lundberg et al. 2020, §"SHAP interaction values"): for a
//! feature `i` the tree splits on, `φ_ij = (φ_j(x | i known) − φ_j(x | i unknown)) / 2` for
//! `j ≠ i`, where `i` is no player and its edges weigh `o` (known) or `z` (unknown); and
//! `φ_ii = φ_i − Σ_{j≠i} φ_ij`, so each row of the matrix sums to the SHAP value. Both
//! games run as one walk of their difference, which skips every subtree without a split on
//! `i` above which the games agree.
//!
//! **Forest.** Values, interactions and the expected value (each tree's root value, the
//! cover-weighted mean of its leaves) are means over trees, like the prediction, so
//! `Σ_i φ_i + expected value = prediction` for every row. Multiway trees are stored as
//! binary chains on one feature (`crate::tree::multiway`); a feature met again on a path
//! multiplies its cover fractions, which gives each child of a multiway node its own
//! cover fraction, so they need nothing special.
//!
//! **Determinism.** Rows are split into chunks for the threads; each row sums its trees in
//! tree order, so the values are the same, bit for bit, for any number of threads.
//!
//! **Stopping.** [`Forest::tree_shap_until`] checks a stop flag before each tree of each
//! chunk, so a Ctrl-C seen by the Python binding ends even a long interaction call within
//! about one tree's walk of a chunk.

mod boosted;
mod prepared;
mod quadrature;
mod walk;

use prepared::ShapTree;
use walk::{walk, Game, Scratch, BLOCK};

use crate::data::{Feature, Matrix};
use crate::error::{ForestError, Result};
use crate::forest::Forest;
use crate::parallel::{map_each_mut, map_ordered};
use std::sync::atomic::{AtomicBool, Ordering};

/// TreeSHAP values of the rows of `X`, from [`Forest::tree_shap`].
#[derive(Clone, Debug, PartialEq)]
pub struct TreeShap {
    /// `n_rows × n_features × width`, row-major: the SHAP value of each feature for each
    /// output (class probability, or the regression value).
    pub values: Vec<f64>,
    /// `n_rows × n_features × n_features × width`, row-major, when asked for: SHAP
    /// interaction values, symmetric in the two feature axes up to rounding; the sum over
    /// the second axis is `values`.
    pub interactions: Option<Vec<f64>>,
    /// The expected output (`width` values): what the values of every row add to, with
    /// the prediction, `Σ_i φ_i = prediction − expected_value`.
    pub expected_value: Vec<f64>,
}

impl Forest {
    /// Path-dependent TreeSHAP values of every row of `x` (and with `interactions`, the
    /// SHAP interaction values), for the forest's output: class probabilities or the
    /// regression mean; for a multi-output forest, every output's side by side (the values
    /// are linear in the leaf values, so each column is that output's TreeSHAP). See the
    /// module docs for the definitions.
    pub fn tree_shap<T: Feature>(&self, x: Matrix<'_, T>, interactions: bool) -> Result<TreeShap> {
        self.tree_shap_until(x, interactions, &AtomicBool::new(false))
    }

    /// [`Forest::tree_shap`] that another thread can stop: once `stop` is set no tree
    /// starts on any chunk of rows, and the result is [`ForestError::Stopped`].
    pub fn tree_shap_until<T: Feature>(
        &self,
        x: Matrix<'_, T>,
        interactions: bool,
        stop: &AtomicBool,
    ) -> Result<TreeShap> {
        self.check_input(&x)?;
        let (p, width) = (self.n_features(), self.width());
        let trees = map_ordered(self.trees.len(), |k| ShapTree::new(&self.trees[k], p))
            .into_iter()
            .collect::<Result<Vec<_>>>()?;
        let expected_value = mean_of_trees(trees.iter().map(|t| &t.expected[..]), width);
        let (mut values, mut pairs) = explain(&trees, &x, Shape { p, width }, interactions, stop)?;
        let scale = 1.0 / self.trees.len() as f64;
        values.iter_mut().for_each(|v| *v *= scale);
        if let Some(pairs) = &mut pairs {
            pairs.iter_mut().for_each(|v| *v *= scale);
        }
        Ok(TreeShap {
            values,
            interactions: pairs,
            expected_value,
        })
    }
}

/// The values (and interactions) of every row of `x`, each tree's added to its output
/// columns and summed over the trees in tree order (unscaled), in parallel over row
/// chunks; [`ForestError::Stopped`] once `stop` is set.
fn explain<T: Feature>(
    trees: &[ShapTree<'_>],
    x: &Matrix<'_, T>,
    shape: Shape,
    interactions: bool,
    stop: &AtomicBool,
) -> Result<(Vec<f64>, Option<Vec<f64>>)> {
    let (n, Shape { p, width }) = (x.n_rows(), shape);
    let mut values = zeros(&[n, p, width])?;
    let mut pairs = if interactions {
        Some(zeros(&[n, p, p, width])?)
    } else {
        None
    };
    let rows = rows_per_task(n);
    let mut tasks: Vec<(&mut [f64], Option<&mut [f64]>)> = match &mut pairs {
        Some(pairs) => values
            .chunks_mut(rows * p * width)
            .zip(pairs.chunks_mut(rows * p * p * width))
            .map(|(v, i)| (v, Some(i)))
            .collect(),
        None => values
            .chunks_mut(rows * p * width)
            .map(|v| (v, None))
            .collect(),
    };
    map_each_mut(&mut tasks, |k, (values, pairs)| {
        let first = k * rows;
        explain_rows(trees, x, first, shape, stop, values, pairs.as_deref_mut());
    });
    drop(tasks);
    if stop.load(Ordering::Relaxed) {
        return Err(ForestError::Stopped);
    }
    Ok((values, pairs))
}

/// Features and outputs per row.
#[derive(Clone, Copy)]
struct Shape {
    p: usize,
    width: usize,
}

/// Rows per parallel task: a row costs a walk of every tree, so a few blocks already make
/// a task worth scheduling, and small tasks balance the threads.
fn rows_per_task(n_rows: usize) -> usize {
    let threads = crate::parallel::current_threads().max(1);
    let blocks = n_rows.div_ceil(BLOCK).div_ceil(8 * threads).clamp(1, 16);
    blocks * BLOCK
}

/// The values (and interactions) of the rows `first..` of `x` that `values` holds, summed
/// over the trees in tree order (unscaled).
fn explain_rows<T: Feature>(
    trees: &[ShapTree<'_>],
    x: &Matrix<'_, T>,
    first: usize,
    shape: Shape,
    stop: &AtomicBool,
    values: &mut [f64],
    mut pairs: Option<&mut [f64]>,
) {
    let Shape { p, width } = shape;
    let row_len = p * width;
    let n_rows = values.len() / row_len.max(1);
    let mut scratch = Scratch::default();
    let mut tree_phi = Vec::new();
    let mut known_minus_unknown = Vec::new();
    for tree in trees {
        if stop.load(Ordering::Relaxed) {
            return;
        }
        // The tree's own outputs (`tw` of them) add to columns `col..col + tw`.
        let (tw, col) = (tree.width, tree.column);
        let tree_len = p * tw;
        tree_phi.resize(BLOCK * tree_len, 0.0);
        known_minus_unknown.resize(BLOCK * tree_len, 0.0);
        for start in (0..n_rows).step_by(BLOCK) {
            let live = BLOCK.min(n_rows - start);
            // A block past the last row repeats that row in its spare lanes, whose values
            // are dropped.
            let row = |r: usize| first + start + r.min(live - 1);
            let value = |r: usize, f: usize| x.get(row(r), f).to_f64();
            tree_phi.fill(0.0);
            walk(tree, value, Game::Shapley, tw, &mut scratch, &mut tree_phi);
            for r in 0..live {
                let out = &mut values[(start + r) * row_len..(start + r + 1) * row_len];
                let phi = &tree_phi[r * tree_len..(r + 1) * tree_len];
                for (f, v) in phi.chunks(tw.max(1)).enumerate() {
                    let at = f * width + col;
                    out[at..at + tw]
                        .iter_mut()
                        .zip(v)
                        .for_each(|(a, v)| *a += v);
                }
            }
            let Some(pairs) = pairs.as_deref_mut() else {
                continue;
            };
            for &c in &tree.used_features {
                known_minus_unknown.fill(0.0);
                let game = Game::PresentMinusAbsent(c);
                walk(
                    tree,
                    value,
                    game,
                    tw,
                    &mut scratch,
                    &mut known_minus_unknown,
                );
                for r in 0..live {
                    let matrix = &mut pairs[(start + r) * p * row_len..][..p * row_len];
                    let lane = r * tree_len..(r + 1) * tree_len;
                    let (phi, delta) = (&tree_phi[lane.clone()], &known_minus_unknown[lane]);
                    let columns = Columns { tw, width, col };
                    add_interaction_row(c as usize, phi, delta, columns, matrix);
                }
            }
        }
    }
}

/// A tree's `tw` outputs inside the explained output's `width` columns, from `col`.
#[derive(Clone, Copy)]
struct Columns {
    tw: usize,
    width: usize,
    col: usize,
}

/// Adds feature `c`'s row of the interaction matrix (`p × p × width`): `φ_cj = Δ_j / 2`
/// off the diagonal and `φ_cc = φ_c − Σ_{j≠c} φ_cj`, for the tree's outputs `phi` and
/// `delta` (`p × tw`) placed at the columns `cols` says.
fn add_interaction_row(c: usize, phi: &[f64], delta: &[f64], cols: Columns, matrix: &mut [f64]) {
    let Columns { tw, width, col } = cols;
    let p = phi.len() / tw.max(1);
    let row = &mut matrix[c * p * width..(c + 1) * p * width];
    for k in 0..tw {
        let mut off_diagonal = 0.0;
        for j in (0..p).filter(|&j| j != c) {
            let half = 0.5 * delta[j * tw + k];
            row[j * width + col + k] += half;
            off_diagonal += half;
        }
        row[c * width + col + k] += phi[c * tw + k] - off_diagonal;
    }
}

/// Element-wise mean of the trees' `width` values, summed in tree order.
fn mean_of_trees<'a>(per_tree: impl ExactSizeIterator<Item = &'a [f64]>, width: usize) -> Vec<f64> {
    let n = per_tree.len().max(1) as f64;
    let mut sum = vec![0.0; width];
    for v in per_tree {
        sum.iter_mut().zip(v).for_each(|(s, v)| *s += v);
    }
    sum.iter_mut().for_each(|s| *s /= n);
    sum
}

/// A zeroed buffer of `dims` (their product) values, or an error when it cannot be
/// allocated: an interaction array grows as `p²` and must fail as an error, not an abort.
fn zeros(dims: &[usize]) -> Result<Vec<f64>> {
    let too_big = || {
        ForestError::Shape(format!(
            "an array of shape {dims:?} of float64 does not fit in memory"
        ))
    };
    let len = dims
        .iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d))
        .filter(|&l| l.checked_mul(8).is_some())
        .ok_or_else(too_big)?;
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| too_big())?;
    v.resize(len, 0.0);
    Ok(v)
}

#[cfg(test)]
mod tests;
